#!/usr/bin/env node
// The TypeScript SDK's remote server for acpio's benchmarks: `AcpServer` (the
// SDK's Streamable HTTP and WebSocket transport) on Node's http server, its
// WebSocket upgrades through the `ws` package, both adapters from the SDK's
// `experimental/node` entry point. One agent app per connection (the same
// bench agent as agent.mjs: `reply N`, `notify N`, `permission N`), on loopback.
//
// `permission N` puts on the wire what acpio's bench_agent.py does over v2 (see
// benchmarks/remote_cpu.py): a tool call `bench` (pending), then per request a
// `requires_action` state, the `session/request_permission` (its subject the tool
// call) awaited and checked, and a `running` state; then the call `completed`.
// With BENCH_PERMISSION=requests-only in the environment it sends only the N
// requests, as agent.mjs does over stdio (no tool call, no state lines).
//
// Usage: node remote_server.mjs [PORT]   (prints the port it listens on, then serves)

import { randomUUID } from "node:crypto";
import http from "node:http";

import { WebSocketServer } from "ws";
import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import {
  createNodeHttpHandler,
  createNodeWebSocketUpgradeHandler,
} from "@agentclientprotocol/sdk/experimental/node";

const requestsOnly = process.env.BENCH_PERMISSION === "requests-only";

async function runTurn(params, messageId, client) {
  const { sessionId } = params;
  const update = (u) =>
    client.notify(acp.methods.client.session.update, { sessionId, update: u });
  await update({ sessionUpdate: "user_message", messageId, content: params.prompt });
  await update({ sessionUpdate: "state_update", state: "running" });
  const text = params.prompt.map((b) => (b.type === "text" ? b.text : "")).join(" ");
  const [kind, count] = text.trim().split(/\s+/);
  const n = Number(count);
  if (kind === "reply") {
    const replyId = randomUUID();
    for (let i = 0; i < n; i++) {
      await update({
        sessionUpdate: "agent_message_chunk",
        messageId: replyId,
        content: { type: "text", text: `chunk ${i}` },
      });
    }
  } else if (kind === "notify") {
    await update({ sessionUpdate: "tool_call_update", toolCallId: "bench", title: "bench" });
    for (let i = 0; i < n; i++) {
      await update({
        sessionUpdate: "tool_call_content_chunk",
        toolCallId: "bench",
        content: { type: "content", content: { type: "text", text: `chunk ${i}` } },
      });
    }
    await update({ sessionUpdate: "tool_call_update", toolCallId: "bench", status: "completed" });
  } else if (kind === "permission" && requestsOnly) {
    for (let i = 0; i < n; i++) {
      const response = await client.request(acp.methods.client.session.requestPermission, {
        sessionId,
        title: "bench",
        options: [{ optionId: "allow", name: "Allow", kind: "allow_once" }],
      });
      const outcome = response.outcome;
      if (outcome.outcome !== "selected" || outcome.optionId !== "allow") {
        throw new Error(`permission ${i} not granted: ${JSON.stringify(outcome)}`);
      }
    }
  } else if (kind === "permission") {
    await update({
      sessionUpdate: "tool_call_update",
      toolCallId: "bench",
      title: "bench",
      status: "pending",
    });
    for (let i = 0; i < n; i++) {
      await update({ sessionUpdate: "state_update", state: "requires_action" });
      const response = await client.request(acp.methods.client.session.requestPermission, {
        sessionId,
        title: "bench",
        subject: { type: "tool_call", toolCall: { toolCallId: "bench" } },
        options: [{ optionId: "allow", name: "Allow", kind: "allow_once" }],
      });
      const outcome = response.outcome;
      if (outcome.outcome !== "selected" || outcome.optionId !== "allow") {
        throw new Error(`permission ${i} not granted: ${JSON.stringify(outcome)}`);
      }
      await update({ sessionUpdate: "state_update", state: "running" });
    }
    await update({ sessionUpdate: "tool_call_update", toolCallId: "bench", status: "completed" });
  }
  await update({ sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" });
}

function makeAgent() {
  const sessions = new Set();
  return acp
    .agent({ name: "acpio-bench-ts-remote" })
    .onRequest(acp.methods.agent.initialize, () => ({
      protocolVersion: acp.PROTOCOL_VERSION,
      info: { name: "acpio-bench-ts-remote", version: "1.0.0" },
      capabilities: { session: {} },
    }))
    .onRequest(acp.methods.agent.session.new, () => {
      const sessionId = randomUUID();
      sessions.add(sessionId);
      return { sessionId };
    })
    .onRequest(acp.methods.agent.session.prompt, ({ params, client }) => {
      if (!sessions.has(params.sessionId)) {
        throw acp.RequestError.sessionNotFound(params.sessionId);
      }
      const messageId = randomUUID();
      void runTurn(params, messageId, client).catch((error) => {
        console.error("bench turn failed", error);
      });
      return { messageId };
    })
    .onNotification(acp.methods.agent.session.cancel, () => {});
}

const server = new AcpServer({ createAgent: makeAgent });
const httpServer = http.createServer(createNodeHttpHandler(server));
const sockets = new WebSocketServer({ noServer: true, perMessageDeflate: false });
httpServer.on("upgrade", createNodeWebSocketUpgradeHandler(server, sockets));
httpServer.listen(Number(process.argv[2] ?? 0), "127.0.0.1", () => {
  process.stdout.write(`${httpServer.address().port}\n`);
});
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    void server.close().finally(() => process.exit(0));
  });
}
