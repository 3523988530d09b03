// Remote interoperability: acpio's example agents served by `acpio serve`, driven by the
// official TypeScript SDK's remote clients (@agentclientprotocol/sdk/experimental/http-client
// and .../ws-client), over ACP v1 and draft v2.
//
// Usage:
//   node remote_client.mjs --echo <url> --shell <url> --transport http|ws --protocol 1|2
//                          [--token T] [--workdir DIR] [--only a,b] [--result FILE]
//   node remote_client.mjs --replica-a <url> --replica-b <url> [--expect-refusal] ...
//   node remote_client.mjs --shutdown <url> ...
//
// With --replica-a and --replica-b only the `failover` scenario runs: two `acpio serve`
// replicas on one PostgreSQL serving tests/remote/memo_agent.py. The client creates a
// session on A and runs a turn, prints `FAILOVER-READY <sessionId> <pid of A>` and waits
// for a line on stdin (the test kills or stops A meanwhile), then reopens the session on B
// (`session/load` on v1, `session/resume` from the start on v2), checks the replay holds
// the first turn, and prompts on. With --expect-refusal B must first refuse the session
// (A is alive but stopped, its lease running) with `data.retryAfter`; the client retries
// after that many seconds.
//
// With --shutdown only the `shutdown` scenario runs, against examples/shell_agent.py: a
// prompt waits on its permission request, the client prints `SHUTDOWN-READY` and the test
// stops the server with SIGTERM; the turn must end `cancelled` (v1: the prompt's answer; v2:
// the idle state), its tool call `cancelled` (v1: `failed`, v1 having no cancelled status).
//
// Every scenario opens its own SDK stream to the server and talks only through the SDK's
// client API (`client(...).connect(stream)`). The WebSocket client is given Node's built-in
// WebSocket (undici), wrapped so that the SDK's `headers` option (bearer token, cookies)
// reaches the handshake: Node's constructor takes them in its second argument.
//
// Exit status: 0 when every scenario passed, 1 otherwise, 2 on a usage error.

import fs from "node:fs";
import process from "node:process";
import readline from "node:readline";
import * as v1 from "@agentclientprotocol/sdk";
import * as v2 from "@agentclientprotocol/sdk/experimental/v2";
import { createHttpStream, MemoryAcpCookieStore } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { NodeWebSocket, within } from "./remote_support.mjs";

const TURN_TIMEOUT_MS = 20_000;

function parseArgs(argv) {
  const options = { transport: "http", protocol: 2, only: null, token: null, workdir: process.cwd() };
  for (let i = 0; i < argv.length; i += 1) {
    const [name, value] = [argv[i], argv[i + 1]];
    i += 1;
    if (name === "--echo") options.echo = value;
    else if (name === "--shell") options.shell = value;
    else if (name === "--transport") options.transport = value;
    else if (name === "--protocol") options.protocol = Number(value);
    else if (name === "--token") options.token = value;
    else if (name === "--workdir") options.workdir = value;
    else if (name === "--only") options.only = value.split(",");
    else if (name === "--result") options.result = value;
    else if (name === "--replica-a") options.replicaA = value;
    else if (name === "--replica-b") options.replicaB = value;
    else if (name === "--shutdown") options.shutdown = value;
    else if (name === "--expect-refusal") {
      options.expectRefusal = true;
      i -= 1;
    }
    else {
      console.error(`unknown argument ${name}`);
      process.exit(2);
    }
  }
  if (options.replicaA || options.replicaB) {
    if (!options.replicaA || !options.replicaB) {
      console.error("--replica-a and --replica-b go together");
      process.exit(2);
    }
    options.only = ["failover"];
  } else if (options.shutdown) {
    options.only = ["shutdown"];
  } else if (!options.echo || !options.shell) {
    console.error("--echo and --shell are required (or --replica-a and --replica-b)");
    process.exit(2);
  }
  return options;
}

const options = parseArgs(process.argv.slice(2));
const acp = options.protocol === 1 ? v1 : v2;

function openStream(url, cookieStore) {
  const headers = options.token ? { Authorization: `Bearer ${options.token}` } : {};
  if (options.transport === "ws") {
    return createWebSocketStream(url.replace(/^http/, "ws"), {
      WebSocket: NodeWebSocket,
      headers,
      cookieStore,
    });
  }
  return createHttpStream(url, { headers, cookieStore });
}

function textOf(content) {
  if (!content) return "";
  if (Array.isArray(content)) return content.map(textOf).join("");
  return content.type === "text" ? content.text : "";
}

// One SDK client connection and what it received.
class Client {
  constructor(url, { permission } = {}) {
    this.url = url;
    this.updates = new Map(); // sessionId -> [update]
    this.waiters = [];
    this.permissions = [];
    this.permission = permission ?? (() => ({ outcome: { outcome: "cancelled" } }));
    this.cookieStore = new MemoryAcpCookieStore();
  }

  async open(cookieStore) {
    const app = acp
      .client({ name: "acpio-remote-interop" })
      .onRequest("session/request_permission", async (ctx) => {
        this.permissions.push(ctx.params);
        this.notify();
        return await this.permission(ctx.params);
      })
      .onNotification("session/update", (ctx) => {
        const list = this.updates.get(ctx.params.sessionId) ?? [];
        list.push(ctx.params.update);
        this.updates.set(ctx.params.sessionId, list);
        this.notify();
      });
    this.connection = app.connect(openStream(this.url, cookieStore ?? this.cookieStore));
    this.cx = this.connection.agent;
    const init =
      options.protocol === 1
        ? await within(TURN_TIMEOUT_MS, "initialize", this.cx.request("initialize", {
            protocolVersion: 1,
            clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
            clientInfo: { name: "acpio-remote-interop", version: "1.0.0" },
          }))
        : await within(TURN_TIMEOUT_MS, "initialize", this.cx.request("initialize", {
            protocolVersion: 2,
            capabilities: {},
            info: { name: "acpio-remote-interop", version: "1.0.0" },
          }));
    if (init.protocolVersion !== options.protocol) {
      throw new Error(`initialize answered protocolVersion ${init.protocolVersion}`);
    }
    return init;
  }

  notify() {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  async until(what, predicate, ms = TURN_TIMEOUT_MS) {
    const deadline = Date.now() + ms;
    while (!predicate()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${what}: not within ${ms} ms`);
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  async newSession() {
    const params = options.protocol === 1 ? { cwd: options.workdir, mcpServers: [] } : { cwd: options.workdir };
    const answer = await within(TURN_TIMEOUT_MS, "session/new", this.cx.request("session/new", params));
    return answer.sessionId;
  }

  sessionUpdates(sessionId) {
    return this.updates.get(sessionId) ?? [];
  }

  // Sends a prompt and waits for the end of its turn; returns {stopReason, text}.
  async prompt(sessionId, text, { onSent } = {}) {
    const before = this.sessionUpdates(sessionId).length;
    const sent = this.cx.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
    if (onSent) await onSent();
    let stopReason;
    if (options.protocol === 1) {
      const answer = await within(TURN_TIMEOUT_MS, `session/prompt ${text}`, sent);
      stopReason = answer.stopReason;
    } else {
      await within(TURN_TIMEOUT_MS, `session/prompt ${text}`, sent);
      await this.until(`idle after ${text}`, () =>
        this.sessionUpdates(sessionId).slice(before).some((u) => u.sessionUpdate === "state_update" && u.state === "idle"),
      );
      const idle = this.sessionUpdates(sessionId).slice(before).find((u) => u.sessionUpdate === "state_update" && u.state === "idle");
      stopReason = idle.stopReason;
    }
    const turn = this.sessionUpdates(sessionId).slice(before);
    const reply = turn
      .filter((u) => u.sessionUpdate === "agent_message_chunk" || u.sessionUpdate === "agent_message")
      .map((u) => textOf(u.content))
      .join("");
    return { stopReason, text: reply, updates: turn };
  }

  async close() {
    this.connection.close();
    await within(5_000, "connection close", this.connection.closed).catch(() => {});
  }
}

function allow(params) {
  const option = params.options.find((o) => o.kind === "allow_once");
  return { outcome: { outcome: "selected", optionId: option.optionId } };
}

function reject(params) {
  const option = params.options.find((o) => o.kind === "reject_once");
  return { outcome: { outcome: "selected", optionId: option.optionId } };
}

function toolStatuses(updates) {
  return updates.filter((u) => u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update").map((u) => u.status).filter(Boolean);
}

function expect(failures, condition, message) {
  if (!condition) failures.push(message);
  return condition;
}

const scenarios = {
  async echo(failures) {
    const client = new Client(options.echo);
    await client.open();
    const session = await client.newSession();
    const turn = await client.prompt(session, "hello over the remote transport");
    expect(failures, turn.stopReason === "end_turn", `stopReason ${turn.stopReason}`);
    expect(failures, turn.text === "hello over the remote transport", `reply ${JSON.stringify(turn.text)}`);
    await client.close();
  },

  async permission_allow(failures) {
    const client = new Client(options.shell, { permission: allow });
    await client.open();
    const session = await client.newSession();
    const turn = await client.prompt(session, "run echo remote-ok");
    expect(failures, turn.stopReason === "end_turn", `stopReason ${turn.stopReason}`);
    expect(failures, client.permissions.length === 1, `${client.permissions.length} permission requests`);
    const statuses = toolStatuses(turn.updates);
    expect(failures, statuses.at(-1) === "completed", `tool call statuses ${JSON.stringify(statuses)}`);
    const shown = JSON.stringify(turn.updates);
    expect(failures, shown.includes("remote-ok"), "the command's output was not shown");
    await client.close();
  },

  async permission_reject(failures) {
    const client = new Client(options.shell, { permission: reject });
    await client.open();
    const session = await client.newSession();
    const turn = await client.prompt(session, "run echo must-not-run > rejected.txt");
    expect(failures, turn.stopReason === "end_turn", `stopReason ${turn.stopReason}`);
    expect(failures, client.permissions.length === 1, `${client.permissions.length} permission requests`);
    const statuses = toolStatuses(turn.updates);
    expect(failures, statuses.at(-1) === "failed", `tool call statuses ${JSON.stringify(statuses)}`);
    expect(failures, !fs.existsSync(`${options.workdir}/rejected.txt`), "a rejected command ran");
    await client.close();
  },

  async cancel(failures) {
    // The permission request stays unanswered; session/cancel ends the turn.
    let release;
    const held = new Promise((resolve) => { release = resolve; });
    const client = new Client(options.shell, { permission: () => held });
    await client.open();
    const session = await client.newSession();
    const turn = await client.prompt(session, "run echo never", {
      onSent: async () => {
        await client.until("permission request", () => client.permissions.length > 0);
        await client.cx.notify("session/cancel", { sessionId: session });
      },
    });
    release({ outcome: { outcome: "cancelled" } });
    expect(failures, turn.stopReason === "cancelled", `stopReason ${turn.stopReason}`);
    await client.close();
  },

  async two_sessions(failures) {
    const client = new Client(options.echo);
    await client.open();
    const [a, b] = await Promise.all([client.newSession(), client.newSession()]);
    expect(failures, a !== b, "two sessions got one id");
    const [ta, tb] = await Promise.all([
      client.prompt(a, "first session words"),
      client.prompt(b, "second session other words"),
    ]);
    expect(failures, ta.text === "first session words", `session a reply ${JSON.stringify(ta.text)}`);
    expect(failures, tb.text === "second session other words", `session b reply ${JSON.stringify(tb.text)}`);
    expect(failures, ta.stopReason === "end_turn" && tb.stopReason === "end_turn", "stop reasons");
    await client.close();
  },

  async reconnect(failures) {
    const cookies = new MemoryAcpCookieStore();
    const first = new Client(options.echo);
    await first.open(cookies);
    const session = await first.newSession();
    const before = await first.prompt(session, "remember this");
    expect(failures, before.text === "remember this", `first reply ${JSON.stringify(before.text)}`);
    await first.close();

    const second = new Client(options.echo);
    await second.open(cookies);
    if (options.transport === "http") {
      // The session is not attached to the new connection: the server answers 409 and the
      // SDK fails the request until the session is reattached.
      const refused = await second.cx
        .request("session/prompt", { sessionId: session, prompt: [{ type: "text", text: "too early" }] })
        .then(() => null, (error) => error);
      expect(failures, refused !== null && String(refused.message).includes("409"), `prompt before reattaching: ${refused?.message ?? "accepted"}`);
    }
    if (options.protocol === 1) {
      await within(TURN_TIMEOUT_MS, "session/load", second.cx.request("session/load", { sessionId: session, cwd: options.workdir, mcpServers: [] }));
      await second.until("replayed history", () => JSON.stringify(second.sessionUpdates(session)).includes("remember"));
    } else {
      await within(TURN_TIMEOUT_MS, "session/resume", second.cx.request("session/resume", { sessionId: session, cwd: options.workdir }));
    }
    const after = await second.prompt(session, "and this too");
    expect(failures, after.text === "and this too", `reply after reattaching ${JSON.stringify(after.text)}`);
    expect(failures, after.stopReason === "end_turn", `stopReason ${after.stopReason}`);
    await second.close();
  },

  async shutdown(failures) {
    let release;
    const held = new Promise((resolve) => { release = resolve; });
    const client = new Client(options.shutdown, { permission: () => held });
    await client.open();
    const session = await client.newSession();
    const turn = await client.prompt(session, "run echo never", {
      onSent: async () => {
        await client.until("permission request", () => client.permissions.length > 0);
        console.log("SHUTDOWN-READY");
      },
    });
    release({ outcome: { outcome: "cancelled" } });
    expect(failures, turn.stopReason === "cancelled", `stopReason ${turn.stopReason}`);
    const statuses = toolStatuses(turn.updates);
    const ended = options.protocol === 1 ? "failed" : "cancelled";
    expect(failures, statuses.at(-1) === ended, `tool call statuses ${JSON.stringify(statuses)}`);
    client.connection.close();
  },

  async failover(failures) {
    const first = new Client(options.replicaA);
    await first.open();
    const session = await first.newSession();
    const turn = await first.prompt(session, "first words");
    const pidA = /pid (\d+)$/.exec(turn.text)?.[1];
    expect(failures, turn.text.startsWith("heard first words; before: []"), `reply on A ${JSON.stringify(turn.text)}`);
    console.log(`FAILOVER-READY ${session} ${pidA}`);
    await nextStdinLine();
    // A is gone (or stopped): this client gives up its connection there without waiting.
    first.connection.close();

    const second = new Client(options.replicaB);
    await second.open();
    const reopen = () =>
      options.protocol === 1
        ? second.cx.request("session/load", { sessionId: session, cwd: options.workdir, mcpServers: [] })
        : second.cx.request("session/resume", { sessionId: session, cwd: options.workdir, replayFrom: { type: "start" } });
    let refusals = 0;
    for (;;) {
      const refused = await within(TURN_TIMEOUT_MS, "reopen on B", reopen()).then(() => null, (error) => error);
      if (refused === null) break;
      const retryAfter = refused?.data?.retryAfter;
      refusals += 1;
      if (!options.expectRefusal || typeof retryAfter !== "number" || refusals > 5) {
        throw new Error(`B refused the session: ${refused?.message} ${JSON.stringify(refused?.data ?? null)}`);
      }
      expect(failures, refused.code === -32603, `refusal code ${refused.code}`);
      await new Promise((resolve) => setTimeout(resolve, Math.max(retryAfter, 0.2) * 1000));
    }
    if (options.expectRefusal) expect(failures, refusals > 0, "B took a session whose owner was alive and leased");
    else expect(failures, refusals === 0, `B refused ${refusals} times`);

    // The replay: every update of A's turn, as A sent it live (agent text), and the prompt.
    const replayed = () => second.sessionUpdates(session);
    const said = (kind) => replayed().filter((u) => u.sessionUpdate === kind || u.sessionUpdate === kind.replace(/_chunk$/, "")).map((u) => textOf(u.content)).join("");
    await second.until("the replay of A's turn", () => said("agent_message_chunk").includes(turn.text));
    expect(failures, said("agent_message_chunk") === turn.text, `replayed agent text ${JSON.stringify(said("agent_message_chunk"))}`);
    expect(failures, said("user_message_chunk") === "first words", `replayed prompt ${JSON.stringify(said("user_message_chunk"))}`);

    // The conversation goes on on B, with the state A saved.
    const next = await second.prompt(session, "second words");
    const pidB = /pid (\d+)$/.exec(next.text)?.[1];
    expect(failures, next.stopReason === "end_turn", `stopReason on B ${next.stopReason}`);
    expect(failures, next.text.startsWith('heard second words; before: ["first words"]'), `reply on B ${JSON.stringify(next.text)}`);
    expect(failures, pidB && pidB !== pidA, `the reply on B came from pid ${pidB}, A was ${pidA}`);
    await second.close();
  },
};

let stdinLines;
function nextStdinLine() {
  stdinLines ??= readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  return stdinLines.next();
}

const results = [];
let failed = 0;
for (const [name, run] of Object.entries(scenarios)) {
  if (options.only && !options.only.includes(name)) continue;
  if (name === "failover" && !options.replicaA) continue;
  if (name === "shutdown" && !options.shutdown) continue;
  const failures = [];
  const started = Date.now();
  try {
    await within(60_000, name, run(failures));
  } catch (error) {
    failures.push(`scenario aborted: ${error?.stack ?? error}`);
  }
  if (failures.length) failed += 1;
  results.push({ name, ok: failures.length === 0, failures, ms: Date.now() - started });
  console.log(`${failures.length ? "FAIL" : "ok  "} ${options.transport} v${options.protocol} ${name}${failures.length ? `: ${failures.join("; ")}` : ""}`);
}
if (options.result) fs.writeFileSync(options.result, JSON.stringify(results, null, 2));
process.exit(failed ? 1 : 0);
