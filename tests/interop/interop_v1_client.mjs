// Interoperability over ACP v1: acpio's example agents driven by the official
// TypeScript SDK's default (stable, protocol v1) client, `client()` from
// "@agentclientprotocol/sdk" (version pinned in package.json).
//
// Usage: node interop_v1_client.mjs --python <interpreter> --examples <dir> --result <file.json>
//
// Each scenario starts a fresh agent over stdio and talks to it only through the
// SDK: initialize with protocolVersion 1, session/new, session/prompt (answered
// at the end of the turn with its stopReason), permission requests answered by
// a policy, session/cancel. It rebuilds the tool calls with v1's rules (the first
// report is `tool_call`, later `tool_call_update` fields replace the stored ones)
// and records what happened; the pytest side (test_interop_v1.py) checks it.
// Anything the SDK logs as an error is recorded as a failure.

import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

function parseArgs(argv) {
  const args = {};
  for (let i = 0; i < argv.length; i += 2) args[argv[i].replace(/^--/, "")] = argv[i + 1];
  if (!args.python || !args.examples || !args.result) {
    console.log("usage: interop_v1_client.mjs --python PY --examples DIR --result FILE");
    process.exit(2);
  }
  return args;
}

const args = parseArgs(process.argv.slice(2));
let sdkErrors = [];
console.error = (...parts) => sdkErrors.push(parts.map(String).join(" "));

const within = (ms, what, promise) =>
  Promise.race([
    promise,
    new Promise((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms)),
  ]);

const allow = (params) => ({
  outcome: { outcome: "selected", optionId: params.options.find((o) => o.kind.startsWith("allow")).optionId },
});
const reject = (params) => ({
  outcome: { outcome: "selected", optionId: params.options.find((o) => o.kind.startsWith("reject")).optionId },
});

async function session(agentFile, policy, body) {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "acpio-v1-interop-"));
  const child = spawn(args.python, [path.join(args.examples, `${agentFile}.py`)], {
    stdio: ["pipe", "pipe", "pipe"],
    cwd,
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  const record = { updates: [], toolCalls: {}, permissions: [], failures: [], cwd };
  const app = acp
    .client({ name: "acpio-v1-interop" })
    .onRequest("session/request_permission", async (ctx) => {
      record.permissions.push(ctx.params);
      if (record.onPermission) record.onPermission(ctx.params);
      return policy(ctx.params);
    })
    .onNotification("session/update", (ctx) => {
      const update = ctx.params.update;
      record.updates.push(update);
      const id = update.toolCallId;
      if (update.sessionUpdate === "tool_call") {
        if (id in record.toolCalls) record.failures.push(`tool_call ${id} reported twice`);
        record.toolCalls[id] = { ...update };
      } else if (update.sessionUpdate === "tool_call_update") {
        if (!(id in record.toolCalls)) record.failures.push(`tool_call_update before tool_call ${id}`);
        record.toolCalls[id] = { ...record.toolCalls[id], ...update };
      }
    });
  const connection = app.connect(
    acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)),
  );
  const agent = connection.agent;
  try {
    const init = await within(20000, "initialize", agent.request("initialize", {
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: { name: "acpio-v1-interop", version: "1" },
    }));
    record.protocolVersion = init.protocolVersion;
    record.agentInfo = init.agentInfo;
    const created = await within(20000, "session/new", agent.request("session/new", { cwd, mcpServers: [] }));
    const prompt = (text) =>
      within(20000, "session/prompt", agent.request("session/prompt", {
        sessionId: created.sessionId,
        prompt: [{ type: "text", text }],
      }));
    await body({ record, agent, prompt, sessionId: created.sessionId, cwd });
  } catch (error) {
    record.failures.push(`scenario aborted: ${error?.message ?? error}`);
  }
  child.stdin.end();
  const exit = await within(5000, "agent exit", exited).catch((error) => {
    child.kill("SIGKILL");
    return { code: null, signal: String(error.message) };
  });
  record.exit = exit;
  if (exit.code !== 0) record.failures.push(`agent exit ${JSON.stringify(exit)}: ${stderr.slice(-2000)}`);
  record.texts = Object.fromEntries(
    Object.entries(record.toolCalls).map(([id, call]) => [
      id,
      (call.content ?? []).map((item) => (item.type === "content" ? item.content.text : item)),
    ]),
  );
  record.ranFile = fs.existsSync(path.join(cwd, "ran"));
  fs.rmSync(cwd, { recursive: true, force: true });
  return record;
}

const scenarios = {
  echo_reply: () =>
    session("echo_agent", allow, async ({ record, prompt }) => {
      record.answer = await prompt("hello over v1");
      record.agentText = record.updates
        .filter((u) => u.sessionUpdate === "agent_message_chunk")
        .map((u) => u.content.text)
        .join("");
    }),
  shell_allowed: () =>
    session("shell_agent", allow, async ({ record, prompt }) => {
      record.answer = await prompt("run echo interop-v1-output; exit 4");
    }),
  shell_rejected: () =>
    session("shell_agent", reject, async ({ record, prompt, cwd }) => {
      record.answer = await prompt(`run touch ${path.join(cwd, "ran")}`);
      record.ran = fs.existsSync(path.join(cwd, "ran"));
    }),
  edit_diff: () =>
    session("edit_agent", allow, async ({ record, prompt, cwd }) => {
      const file = path.join(cwd, "notes.txt");
      fs.writeFileSync(file, "before\n");
      record.file = file;
      record.answer = await prompt(`write ${file}\nafter\n`);
      record.contentAfter = fs.readFileSync(file, "utf8");
    }),
  shell_cancel: () =>
    session("shell_agent", allow, async ({ record, agent, prompt, sessionId, cwd }) => {
      const pidFile = path.join(cwd, "pid");
      const asked = new Promise((resolve) => (record.onPermission = resolve));
      const answer = prompt(`run echo $$ > ${pidFile}; exec sleep 60`);
      await asked;
      while (!fs.existsSync(pidFile) || !fs.readFileSync(pidFile, "utf8").trim()) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const pid = Number(fs.readFileSync(pidFile, "utf8").trim());
      const started = performance.now();
      await agent.notify("session/cancel", { sessionId });
      record.answer = await answer;
      record.cancelMs = performance.now() - started;
      let alive = true;
      try {
        process.kill(pid, 0);
      } catch {
        alive = false;
      }
      record.processLeft = alive;
    }),
};

const results = {};
for (const [name, run] of Object.entries(scenarios)) {
  sdkErrors = [];
  const record = await run();
  record.sdkErrors = sdkErrors;
  delete record.onPermission;
  results[name] = record;
}
fs.writeFileSync(
  args.result,
  JSON.stringify({ sdk: JSON.parse(fs.readFileSync(new URL("./node_modules/@agentclientprotocol/sdk/package.json", import.meta.url))).version, results }, null, 1),
);
