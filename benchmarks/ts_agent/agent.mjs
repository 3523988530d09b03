#!/usr/bin/env node
// Benchmark agent for acpio's benchmarks: the official TypeScript ACP SDK,
// draft v2 API (`@agentclientprotocol/sdk/experimental/v2`), written the way
// the SDK's own README and examples write an agent: an `agent()` app with
// `onRequest(methods...)` handlers, `connect(ndJsonStream(stdout, stdin))`,
// and every session update sent with `client.notify(methods.client.session.update, ...)`
// (awaited, as in the examples), permission requests with `client.request(...)`.
// The prompt handler answers `{messageId}` at once and runs the turn in the
// background, as the v2 examples do.
//
// Prompts (the bench contract): `notify N`, `reply N`, `terminal BYTES CHUNK`, `permission N`.

import { randomUUID } from "node:crypto";
import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk/experimental/v2";

const sessions = new Set();

/** @param {acp.PromptRequest} params @param {acp.AgentContext} client */
async function runTurn(params, messageId, client) {
  const { sessionId } = params;
  const update = (u) =>
    client.notify(acp.methods.client.session.update, { sessionId, update: u });

  await update({ sessionUpdate: "user_message", messageId, content: params.prompt });
  await update({ sessionUpdate: "state_update", state: "running" });

  const text = params.prompt
    .map((block) => (block.type === "text" ? block.text : ""))
    .join(" ");
  const [kind, ...args] = text.trim().split(/\s+/);
  const nums = args.map(Number);

  if (kind === "notify") {
    await update({ sessionUpdate: "tool_call_update", toolCallId: "bench", title: "bench" });
    for (let i = 0; i < nums[0]; i++) {
      await update({
        sessionUpdate: "tool_call_content_chunk",
        toolCallId: "bench",
        content: { type: "content", content: { type: "text", text: `chunk ${i}` } },
      });
    }
    await update({ sessionUpdate: "tool_call_update", toolCallId: "bench", status: "completed" });
  } else if (kind === "reply") {
    // A streamed reply: one agent_message_chunk per piece of text, sharing one messageId.
    const replyId = randomUUID();
    for (let i = 0; i < nums[0]; i++) {
      await update({
        sessionUpdate: "agent_message_chunk",
        messageId: replyId,
        content: { type: "text", text: `chunk ${i}` },
      });
    }
  } else if (kind === "terminal") {
    const [total, size] = nums;
    const pattern = Buffer.alloc(size + 256);
    for (let i = 0; i < pattern.length; i++) pattern[i] = i & 255;
    await update({ sessionUpdate: "terminal_update", terminalId: "t1", command: "bench" });
    for (let off = 0; off < total; off += size) {
      const start = off & 255;
      const chunk = pattern.subarray(start, start + Math.min(size, total - off));
      await update({
        sessionUpdate: "terminal_output_chunk",
        terminalId: "t1",
        data: chunk.toString("base64"),
      });
    }
    await update({ sessionUpdate: "terminal_update", terminalId: "t1", exitStatus: { exitCode: 0 } });
  } else if (kind === "permission") {
    for (let i = 0; i < nums[0]; i++) {
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
  }

  await update({ sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" });
}

const app = acp
  .agent({ name: "acpio-bench-ts" })
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    info: { name: "acpio-bench-ts", version: "1.0.0" },
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

const output = Writable.toWeb(process.stdout);
const input = Readable.toWeb(process.stdin);
app.connect(acp.ndJsonStream(output, input));
