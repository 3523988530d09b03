// Interoperability of config options, slash commands and elicitation: an acpio
// agent (tests/cli/features_agent.py) driven by the official ACP TypeScript
// SDK's draft v2 client (@agentclientprotocol/sdk/experimental/v2).
//
// Usage: node features_client.mjs --python <interpreter> --agent <agent.py>
//
// The SDK's connection validates everything it receives; on top of that every
// answer and update of these features is parsed again with the SDK's generated
// zod validators and must survive the parse unchanged. Prints one JSON object
// {ok, failures, notes} and exits 0 when every check passed, 1 otherwise.

import { spawn } from "node:child_process";
import process from "node:process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/experimental/v2";

const ENTRY_URL = import.meta.resolve("@agentclientprotocol/sdk/experimental/v2");
const validators = await import(new URL("../schema/zod.gen.js", ENTRY_URL).href);
const TIMEOUT_MS = 20_000;

const args = process.argv.slice(2);
const option = (name) => args[args.indexOf(name) + 1];
const failures = [];
const notes = {};

const show = (value) => JSON.stringify(value);
const sorted = (value) =>
  JSON.stringify(value, (_k, v) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, v[k]]))
      : v,
  );

function check(condition, message) {
  if (!condition) failures.push(message);
}

function eq(actual, expected, what) {
  check(sorted(actual) === sorted(expected), `${what}: expected ${show(expected)}, got ${show(actual)}`);
}

// What the SDK's own validator keeps of `value` must be `value` itself.
function lossless(validator, value, what) {
  const parsed = validators[validator].safeParse(value);
  if (!parsed.success) {
    failures.push(`${what}: rejected by ${validator}: ${show(parsed.error.issues)}`);
  } else {
    eq(parsed.data, value, `${what} after ${validator}`);
  }
}

function within(ms, what, promise) {
  let timer;
  const limit = new Promise((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

const child = spawn(option("--python"), [option("--agent")], { stdio: ["pipe", "pipe", "inherit"] });
const updates = [];
const elicitations = [];
const completed = [];
let waiter = null;
const changed = () => {
  if (waiter) waiter();
};
async function until(predicate, what) {
  while (!predicate()) {
    await within(TIMEOUT_MS, what, new Promise((resolve) => (waiter = resolve)));
  }
}

const connection = acp
  .client({ name: "acpio-features-interop" })
  .onRequest("elicitation/create", async (ctx) => {
    lossless("zCreateElicitationRequest", ctx.params, "elicitation/create params");
    elicitations.push(ctx.params);
    changed();
    if (ctx.params.mode === "url") return { action: "accept" };
    return { action: "accept", content: { name: "Ada", color: "red" } };
  })
  .onNotification("elicitation/complete", (ctx) => {
    completed.push(ctx.params.elicitationId);
    changed();
  })
  .onNotification("session/update", (ctx) => {
    const update = ctx.params.update;
    lossless("zSessionUpdate", update, `${update.sessionUpdate} update`);
    updates.push(update);
    changed();
  })
  .connect(acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)));
const agent = connection.agent;

async function turn(sessionId, text) {
  const before = updates.length;
  await agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
  await until(
    () => updates.slice(before).some((u) => u.sessionUpdate === "state_update" && u.state === "idle"),
    `the idle of ${show(text)}`,
  );
  const turnUpdates = updates.slice(before);
  return turnUpdates
    .filter((u) => u.sessionUpdate === "agent_message")
    .map((u) => u.content.map((c) => c.text).join(""))
    .join("\n");
}

try {
  const init = await within(
    TIMEOUT_MS,
    "initialize",
    agent.request("initialize", {
      protocolVersion: acp.PROTOCOL_VERSION,
      capabilities: { elicitation: { form: {}, url: {} } },
      info: { name: "acpio-features-interop", version: "1.0.0" },
    }),
  );
  eq(init.protocolVersion, 2, "protocolVersion");
  const created = await agent.request("session/new", { cwd: process.cwd(), mcpServers: [] });
  lossless("zNewSessionResponse", created, "session/new answer");
  const sessionId = created.sessionId;
  eq(
    created.configOptions.map((o) => [o.configId, o.type, o.currentValue]),
    [
      ["model", "select", "fast"],
      ["thinking", "boolean", false],
    ],
    "configOptions of session/new",
  );
  eq(created.availableCommands.map((c) => c.name), ["compact"], "availableCommands of session/new");

  const set = await agent.request("session/set_config_option", {
    sessionId,
    configId: "model",
    type: "id",
    value: "smart",
  });
  lossless("zSetSessionConfigOptionResponse", set, "session/set_config_option answer");
  eq(set.configOptions[0].currentValue, "smart", "model after set_config_option");
  try {
    await agent.request("session/set_config_option", {
      sessionId,
      configId: "model",
      type: "id",
      value: "gpt-9",
    });
    failures.push("an invalid value was accepted");
  } catch (error) {
    check(error instanceof acp.RequestError && error.code === -32602, `invalid value: ${error}`);
    notes.invalidValueMessage = error.message;
  }
  eq(await turn(sessionId, "hello"), "model is smart", "prompt reads the current model");
  eq(await turn(sessionId, "/compact tests"), "compacting (focus 'tests')", "slash command");
  check(
    updates.some((u) => u.sessionUpdate === "config_option_update" && u.configOptions[1].currentValue === true),
    "the command's config_option_update",
  );
  eq(await turn(sessionId, "ask"), "answer: accept {'name': 'Ada', 'color': 'red'}", "form elicitation");
  eq(elicitations[0].mode, "form", "elicitation mode");
  eq(elicitations[0].sessionId, sessionId, "elicitation scope");
  eq(await turn(sessionId, "url"), "url: accept", "URL elicitation");
  await until(() => completed.length === 1, "elicitation/complete");
  eq(completed, [elicitations[1].elicitationId], "completed elicitation id");
  notes.updates = updates.length;
} catch (error) {
  failures.push(`aborted: ${error instanceof Error ? `${error.name}: ${error.message}` : error}`);
}
child.stdin.end();
await new Promise((resolve) => child.on("exit", resolve));
console.log(JSON.stringify({ ok: failures.length === 0, failures, notes }));
process.exit(failures.length === 0 ? 0 : 1);
