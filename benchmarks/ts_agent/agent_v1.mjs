#!/usr/bin/env node
// Benchmark agent for acpio's benchmarks: the official TypeScript ACP SDK's
// protocol v1 API (the package's default entry point, what shipping agents use),
// written the way the SDK's README writes an agent: an `agent()` app with
// `onRequest(methods...)` handlers, `connect(ndJsonStream(stdout, stdin))`, every
// session update an awaited `client.notify(...)`, permission with `client.request(...)`.
// v1 ends the turn with the `session/prompt` response, so the prompt handler
// does the work and then returns `{stopReason}`.
//
// The work in v1 terms is the same as benchmarks/official_py_agent.py's (see
// benchmarks/README.md, "What differs for the v1 peers"):
// - `notify N`: `tool_call` "bench", N `tool_call_update`s whose content is the one
//   item `chunk <i>`, then `completed`;
// - `terminal BYTES CHUNK`: each write one `tool_call_update` with a text block holding
//   the write's bytes as base64, then `completed`;
// - `reply N`: N `agent_message_chunk`s of one text block `chunk <i>` (as in the SDK's
//   example agent);
// - `permission N`: N `session/request_permission` with `toolCall {toolCallId, title}`.

import { randomUUID } from "node:crypto";
import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk";

const sessions = new Set();

async function runTurn(params, client) {
  const { sessionId } = params;
  const update = (u) => client.notify(acp.methods.client.session.update, { sessionId, update: u });
  const text = params.prompt.map((block) => (block.type === "text" ? block.text : "")).join(" ");
  const [kind, ...args] = text.trim().split(/\s+/);
  const nums = args.map(Number);

  if (kind === "notify") {
    await update({ sessionUpdate: "tool_call", toolCallId: "bench", title: "bench" });
    for (let i = 0; i < nums[0]; i++) {
      await update({
        sessionUpdate: "tool_call_update",
        toolCallId: "bench",
        content: [{ type: "content", content: { type: "text", text: `chunk ${i}` } }],
      });
    }
    await update({ sessionUpdate: "tool_call_update", toolCallId: "bench", status: "completed" });
  } else if (kind === "reply") {
    for (let i = 0; i < nums[0]; i++) {
      await update({
        sessionUpdate: "agent_message_chunk",
        content: { type: "text", text: `chunk ${i}` },
      });
    }
  } else if (kind === "terminal") {
    const [total, size] = nums;
    const pattern = Buffer.alloc(size + 256);
    for (let i = 0; i < pattern.length; i++) pattern[i] = i & 255;
    await update({ sessionUpdate: "tool_call", toolCallId: "bench", title: "bench", kind: "execute" });
    for (let off = 0; off < total; off += size) {
      const start = off & 255;
      const chunk = pattern.subarray(start, start + Math.min(size, total - off));
      await update({
        sessionUpdate: "tool_call_update",
        toolCallId: "bench",
        content: [{ type: "content", content: { type: "text", text: chunk.toString("base64") } }],
      });
    }
    await update({ sessionUpdate: "tool_call_update", toolCallId: "bench", status: "completed" });
  } else if (kind === "permission") {
    for (let i = 0; i < nums[0]; i++) {
      const response = await client.request(acp.methods.client.session.requestPermission, {
        sessionId,
        toolCall: { toolCallId: "bench", title: "bench" },
        options: [{ optionId: "allow", name: "Allow", kind: "allow_once" }],
      });
      const outcome = response.outcome;
      if (outcome.outcome !== "selected" || outcome.optionId !== "allow") {
        throw new Error(`permission ${i} not granted: ${JSON.stringify(outcome)}`);
      }
    }
  }
  return { stopReason: "end_turn" };
}

const app = acp
  .agent({ name: "acpio-bench-ts-v1" })
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentInfo: { name: "acpio-bench-ts-v1", version: "1.0.0" },
    agentCapabilities: {},
  }))
  .onRequest(acp.methods.agent.session.new, () => {
    const sessionId = randomUUID();
    sessions.add(sessionId);
    return { sessionId };
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    if (!sessions.has(params.sessionId)) {
      throw acp.RequestError.resourceNotFound(params.sessionId);
    }
    return await runTurn(params, client);
  })
  .onNotification(acp.methods.agent.session.cancel, () => {});

const output = Writable.toWeb(process.stdout);
const input = Readable.toWeb(process.stdin);
app.connect(acp.ndJsonStream(output, input));
