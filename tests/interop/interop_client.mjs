// Interoperability check: acpio's example agents driven by the official ACP
// TypeScript SDK's draft v2 client (@agentclientprotocol/sdk/experimental/v2).
//
// Usage:
//   node interop_client.mjs --python <interpreter> --examples <dir> [--result <file.json>]
//                           [--only <scenario>[,<scenario>...]]
//
// Every scenario launches `<interpreter> <examples>/<agent>.py` over stdio, talks
// to it only through the SDK's client API, rebuilds tool calls and terminals
// from the session updates with the client-side rules of the Tool Calls page,
// and compares them with what the scenario expects. Besides the SDK's own
// handling (any message it rejects, any error it answers, anything it logs is
// a failure), every message the agent sends is parsed again with the SDK's own
// generated zod validators and must survive that parse unchanged: the
// validators are lenient and silently drop malformed optional fields, so a
// lossy parse is how a malformed field shows up.
//
// Exit status: 0 when every scenario passed, 1 otherwise, 2 on a usage error.

import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { Readable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/experimental/v2";

const SDK_NAME = "@agentclientprotocol/sdk";
const SDK_ENTRY = "@agentclientprotocol/sdk/experimental/v2";
const SDK_ENTRY_URL = import.meta.resolve(SDK_ENTRY);
// The package's exports map hides its package.json and generated validators, so
// both are located relative to the resolved entry point (dist/v2/stable/acp.js).
const SDK_PACKAGE = JSON.parse(
  fs.readFileSync(new URL("../../../package.json", SDK_ENTRY_URL), "utf8"),
);
if (SDK_PACKAGE.name !== SDK_NAME) {
  throw new Error(`resolved ${SDK_ENTRY} to an unexpected package: ${SDK_PACKAGE.name}`);
}
// The very validators the connection applies to what it receives.
const validators = await import(new URL("../schema/zod.gen.js", SDK_ENTRY_URL).href);
const ZOD_VERSION = readZodVersion();

const TURN_TIMEOUT_MS = 20_000;
const CANCEL_DEADLINE_MS = 5_000;
const EXIT_TIMEOUT_MS = 5_000;

// ---------------------------------------------------------------------------
// Small helpers

function readZodVersion() {
  try {
    const zodUrl = import.meta.resolve("zod", SDK_ENTRY_URL);
    let dir = path.dirname(new URL(zodUrl).pathname);
    while (dir !== path.dirname(dir)) {
      const file = path.join(dir, "package.json");
      if (fs.existsSync(file)) {
        const pkg = JSON.parse(fs.readFileSync(file, "utf8"));
        if (pkg.name === "zod") return pkg.version;
      }
      dir = path.dirname(dir);
    }
  } catch {
    // Reported as unknown: the version is informative only.
  }
  return "unknown";
}

function show(value) {
  return JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? v.toString() : v));
}

// Stable text of a JSON value: object keys sorted, undefined members left out.
function canonical(value) {
  return JSON.stringify(value, (_k, v) => {
    if (typeof v === "bigint") return v.toString();
    if (isPlainObject(v)) {
      return Object.fromEntries(Object.keys(v).sort().map((key) => [key, v[key]]));
    }
    return v;
  });
}

function clone(value) {
  return value === undefined ? undefined : structuredClone(value);
}

function isPlainObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function decodeBase64(data, where, issues) {
  if (typeof data !== "string" || !BASE64.test(data)) {
    issues.push(`${where}: not RFC 4648 base64: ${show(data)}`);
    return Buffer.alloc(0);
  }
  return Buffer.from(data, "base64");
}

function bytesText(buffer) {
  return buffer.toString("utf8");
}

function deadline(ms, what) {
  let timer;
  const promise = new Promise((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return { promise, cancel: () => clearTimeout(timer) };
}

async function within(ms, what, promise) {
  const limit = deadline(ms, what);
  try {
    return await Promise.race([promise, limit.promise]);
  } finally {
    limit.cancel();
  }
}

function describeError(error) {
  if (error instanceof acp.RequestError) {
    return `JSON-RPC error ${error.code} ${error.message} ${show(error.data ?? null)}`;
  }
  if (error && error.name === "ZodError") {
    return `rejected by the SDK's validation: ${show(error.issues)}`;
  }
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

// Every key the agent sent must come back unchanged from the SDK's parse. Keys
// the parse adds (defaults) are fine; keys it drops or values it changes mean
// the SDK did not accept that part of the message.
function losslessIssues(raw, parsed, where, out) {
  if (raw === null || typeof raw !== "object") {
    if (!Object.is(raw, parsed)) {
      out.push(`${where}: sent ${show(raw)}, the SDK parsed it as ${show(parsed)}`);
    }
    return out;
  }
  if (Array.isArray(raw)) {
    if (!Array.isArray(parsed) || parsed.length !== raw.length) {
      out.push(`${where}: sent ${show(raw)}, the SDK parsed it as ${show(parsed)}`);
      return out;
    }
    raw.forEach((item, i) => losslessIssues(item, parsed[i], `${where}[${i}]`, out));
    return out;
  }
  if (!isPlainObject(parsed)) {
    out.push(`${where}: sent ${show(raw)}, the SDK parsed it as ${show(parsed)}`);
    return out;
  }
  for (const key of Object.keys(raw)) {
    if (!Object.hasOwn(parsed, key)) {
      out.push(`${where}.${key}: ${show(raw[key])} was dropped by the SDK's parse (malformed or not in the schema)`);
    } else {
      losslessIssues(raw[key], parsed[key], `${where}.${key}`, out);
    }
  }
  return out;
}

function validateWith(validator, value, where) {
  const result = validator.safeParse(value);
  if (!result.success) {
    return [`${where}: rejected by the SDK's validator: ${show(result.error.issues)}`];
  }
  return losslessIssues(value, result.data, where, []);
}

// ---------------------------------------------------------------------------
// Client-side state, rebuilt from session updates (rules of tool-calls.md)

function newModel() {
  return {
    toolCalls: new Map(), // toolCallId -> {fields, statusHistory, first, seq}
    terminals: new Map(), // terminalId -> {fields, bytes, chunks}
    states: [], // {state, stopReason, error}
    userMessageIds: new Set(),
    agentText: new Map(), // messageId -> text
    others: [], // sessionUpdate kinds this suite does not model
    issues: [], // protocol violations found while applying updates
    count: 0,
  };
}

function patchMeta(target, meta) {
  if (meta === undefined) return;
  if (meta === null) {
    delete target._meta;
    return;
  }
  const merged = { ...(target._meta ?? {}) };
  for (const [key, value] of Object.entries(meta)) {
    if (value === null) delete merged[key];
    else merged[key] = clone(value);
  }
  target._meta = merged;
}

// Upsert: omitted = unchanged, null = clear, value = replace (arrays whole).
function patchFields(target, update, skip) {
  for (const [key, value] of Object.entries(update)) {
    if (skip.includes(key) || value === undefined) continue;
    if (key === "_meta") patchMeta(target, value);
    else if (value === null) delete target[key];
    else target[key] = clone(value);
  }
}

function toolCallOf(model, id) {
  let call = model.toolCalls.get(id);
  if (!call) {
    call = { toolCallId: id, fields: {}, statusHistory: [], first: null, seq: model.toolCalls.size };
    model.toolCalls.set(id, call);
  }
  return call;
}

function terminalOf(model, id) {
  let terminal = model.terminals.get(id);
  if (!terminal) {
    terminal = { terminalId: id, fields: {}, bytes: Buffer.alloc(0), chunks: 0 };
    model.terminals.set(id, terminal);
  }
  return terminal;
}

function contentText(blocks) {
  return (blocks ?? [])
    .filter((block) => block && block.type === "text")
    .map((block) => block.text)
    .join("");
}

function applyUpdate(model, update) {
  model.count += 1;
  switch (update.sessionUpdate) {
    case "tool_call_update": {
      const call = toolCallOf(model, update.toolCallId);
      if (call.first === null) call.first = clone(update);
      patchFields(call.fields, update, ["sessionUpdate", "toolCallId"]);
      if (typeof update.status === "string") call.statusHistory.push(update.status);
      break;
    }
    case "tool_call_content_chunk": {
      const call = toolCallOf(model, update.toolCallId);
      if (call.first === null) call.first = clone(update);
      call.fields.content = [...(call.fields.content ?? []), clone(update.content)];
      break;
    }
    case "terminal_update": {
      const terminal = terminalOf(model, update.terminalId);
      patchFields(terminal.fields, update, ["sessionUpdate", "terminalId", "output"]);
      if (update.output === null) {
        terminal.bytes = Buffer.alloc(0);
      } else if (update.output !== undefined) {
        // A snapshot replaces every stored byte; nothing is merged.
        terminal.bytes = decodeBase64(
          update.output.data,
          `terminal_update ${update.terminalId} output.data`,
          model.issues,
        );
      }
      break;
    }
    case "terminal_output_chunk": {
      const terminal = terminalOf(model, update.terminalId);
      // Each chunk is decoded on its own, then the bytes are appended.
      const bytes = decodeBase64(
        update.data,
        `terminal_output_chunk ${update.terminalId} data`,
        model.issues,
      );
      terminal.bytes = Buffer.concat([terminal.bytes, bytes]);
      terminal.chunks += 1;
      break;
    }
    case "state_update":
      model.states.push({
        state: update.state,
        stopReason: update.stopReason,
        error: update.error,
      });
      break;
    case "user_message":
    case "user_message_chunk":
      model.userMessageIds.add(update.messageId);
      break;
    case "agent_message":
      model.agentText.set(update.messageId, contentText(update.content));
      break;
    case "agent_message_chunk":
      model.agentText.set(
        update.messageId,
        (model.agentText.get(update.messageId) ?? "") + contentText([update.content]),
      );
      break;
    default:
      model.others.push(update.sessionUpdate);
  }
}

function summarizeModel(model) {
  return {
    toolCalls: [...model.toolCalls.values()].map((call) => ({
      toolCallId: call.toolCallId,
      ...call.fields,
      statusHistory: call.statusHistory,
    })),
    terminals: [...model.terminals.values()].map((terminal) => ({
      terminalId: terminal.terminalId,
      ...terminal.fields,
      outputText: bytesText(terminal.bytes),
      chunks: terminal.chunks,
    })),
    states: model.states,
    agentText: [...model.agentText.values()],
    others: model.others,
  };
}

// ---------------------------------------------------------------------------
// Wire tap: sees every byte in both directions, in wire order, before the SDK

const AGENT_REQUEST_VALIDATORS = {
  "session/request_permission": validators.zRequestPermissionRequest,
};
const AGENT_NOTIFICATION_VALIDATORS = {
  "session/update": validators.zUpdateSessionNotification,
  "$/cancel_request": validators.zCancelRequestNotification,
};
const RESPONSE_VALIDATORS = {
  initialize: validators.zInitializeResponse,
  "session/new": validators.zNewSessionResponse,
  "session/prompt": validators.zPromptResponse,
  "session/close": validators.zCloseSessionResponse,
};

class LineSplitter {
  constructor(onLine) {
    this.onLine = onLine;
    this.pending = Buffer.alloc(0);
  }

  push(chunk) {
    let data = Buffer.concat([this.pending, Buffer.from(chunk)]);
    let newline = data.indexOf(0x0a);
    while (newline !== -1) {
      this.onLine(data.subarray(0, newline));
      data = data.subarray(newline + 1);
      newline = data.indexOf(0x0a);
    }
    this.pending = data;
  }

  end() {
    if (this.pending.length > 0) this.onLine(this.pending, true);
    this.pending = Buffer.alloc(0);
  }
}

class Wire {
  constructor(failures) {
    this.fail = (message) => failures.push(message);
    this.incoming = []; // {seq, message}
    this.outgoing = [];
    this.outgoingRequests = new Map(); // id -> method
    this.rawModels = new Map(); // sessionId -> model from raw wire order
    this.permissionSnapshots = new Map(); // request id -> raw model before it
    this.sessionUpdateCounts = new Map();
    this.permissionRequestCount = 0;
    this.inputEnded = false;
    this.seq = 0;
    this.inSplitter = new LineSplitter((line, unterminated) => this.onIncomingLine(line, unterminated));
    this.outSplitter = new LineSplitter((line) => this.onOutgoingLine(line));
  }

  rawModel(sessionId) {
    let model = this.rawModels.get(sessionId);
    if (!model) {
      model = newModel();
      this.rawModels.set(sessionId, model);
    }
    return model;
  }

  onIncomingLine(line, unterminated) {
    const text = line.toString("utf8");
    if (unterminated) this.fail(`agent stdout ended inside a line: ${show(text)}`);
    if (text.trim() === "") {
      this.fail("agent wrote an empty line to stdout");
      return;
    }
    let message;
    try {
      message = JSON.parse(text);
    } catch {
      this.fail(`agent wrote a line that is not JSON: ${show(text)}`);
      return;
    }
    const seq = ++this.seq;
    this.incoming.push({ seq, message });
    if (!isPlainObject(message) || message.jsonrpc !== "2.0") {
      this.fail(`agent wrote a message that is not a JSON-RPC 2.0 object: ${text}`);
      return;
    }
    const hasId = Object.hasOwn(message, "id");
    if (typeof message.method === "string") {
      const table = hasId ? AGENT_REQUEST_VALIDATORS : AGENT_NOTIFICATION_VALIDATORS;
      const validator = table[message.method];
      if (!validator) {
        this.fail(`agent sent an unexpected ${hasId ? "request" : "notification"} ${message.method}: ${text}`);
        return;
      }
      for (const issue of validateWith(validator, message.params, `${message.method} params`)) {
        this.fail(`${issue} (message ${text})`);
      }
      const params = message.params ?? {};
      if (message.method === "session/update" && isPlainObject(params.update)) {
        const counts = this.sessionUpdateCounts;
        counts.set(params.sessionId, (counts.get(params.sessionId) ?? 0) + 1);
        applyUpdate(this.rawModel(params.sessionId), params.update);
      } else if (message.method === "session/request_permission") {
        this.permissionRequestCount += 1;
        this.permissionSnapshots.set(show(message.id), summarizeModel(this.rawModel(params.sessionId)));
      }
      return;
    }
    if (!hasId) {
      this.fail(`agent sent a message with neither method nor id: ${text}`);
      return;
    }
    const method = this.outgoingRequests.get(show(message.id));
    if (!method) {
      this.fail(`agent answered an unknown request id: ${text}`);
      return;
    }
    if (Object.hasOwn(message, "error")) {
      this.fail(`agent answered ${method} with an error: ${text}`);
      return;
    }
    const validator = RESPONSE_VALIDATORS[method];
    if (validator) {
      for (const issue of validateWith(validator, message.result, `${method} result`)) {
        this.fail(`${issue} (message ${text})`);
      }
    }
  }

  onOutgoingLine(line) {
    const text = line.toString("utf8");
    let message;
    try {
      message = JSON.parse(text);
    } catch {
      this.fail(`the SDK wrote a line that is not JSON: ${show(text)}`);
      return;
    }
    this.outgoing.push({ seq: this.seq, message });
    if (typeof message.method === "string" && Object.hasOwn(message, "id")) {
      this.outgoingRequests.set(show(message.id), message.method);
    } else if (Object.hasOwn(message, "error")) {
      // The SDK answers with an error only when it rejected what the agent sent
      // (parse error, invalid request, invalid params) or our handler failed.
      this.fail(`the SDK answered the agent with an error: ${text}`);
    }
  }

  tapInput(readable) {
    return readable.pipeThrough(
      new TransformStream({
        transform: (chunk, controller) => {
          this.inSplitter.push(chunk);
          controller.enqueue(chunk);
        },
        flush: () => {
          this.inputEnded = true;
          this.inSplitter.end();
        },
      }),
    );
  }

  tapOutput(stdin) {
    return new WritableStream({
      write: (chunk) => {
        this.outSplitter.push(chunk);
        return new Promise((resolve, reject) => {
          stdin.write(chunk, (error) => (error ? reject(error) : resolve()));
        });
      },
      close: () => {
        stdin.end();
      },
    });
  }
}

// ---------------------------------------------------------------------------
// Scenario harness

// Session updates in arrival order, as the SDK delivered them to the client's
// session/update handler.
class UpdateQueue {
  constructor() {
    this.items = [];
    this.waiters = [];
  }

  push(item) {
    const waiter = this.waiters.shift();
    if (waiter) waiter.resolve(item);
    else this.items.push(item);
  }

  next(signal) {
    if (this.items.length > 0) return Promise.resolve(this.items.shift());
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const waiter = {
        resolve: (item) => {
          signal.removeEventListener("abort", onAbort);
          resolve(item);
        },
      };
      const onAbort = () => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  drain() {
    return this.items.splice(0);
  }
}

// The SDK reports what it drops (invalid notifications, stray responses) on
// console.error; during a scenario that is a failure of the scenario.
let consoleSink = null;
const originalConsoleError = console.error.bind(console);
console.error = (...args) => {
  if (consoleSink) consoleSink(args.map((arg) => (typeof arg === "string" ? arg : show(arg))).join(" "));
  else originalConsoleError(...args);
};

class Harness {
  constructor(scenario, options) {
    this.scenario = scenario;
    this.options = options;
    this.failures = [];
    this.notes = {};
    this.root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "acpio-interop-")));
    // The agent runs in one directory and the session in another, so a command
    // run in the wrong directory shows.
    this.procDir = path.join(this.root, "proc");
    this.workDir = path.join(this.root, "work");
    fs.mkdirSync(this.procDir);
    fs.mkdirSync(this.workDir);
    this.wire = new Wire(this.failures);
    this.permissionPolicy = null;
    this.permissions = []; // {id, params, snapshot, answer}
    this.sdkSessionUpdates = new Map(); // sessionId -> count accepted by the SDK
    this.updateQueues = new Map(); // sessionId -> UpdateQueue
    this.sessions = [];
    this.sdkPermissionRequests = 0;
    this.stderr = "";
  }

  check(condition, message) {
    if (!condition) this.failures.push(message);
    return Boolean(condition);
  }

  eq(actual, expected, what) {
    return this.check(
      canonical(actual) === canonical(expected),
      `${what}: expected ${show(expected)}, got ${show(actual)}`,
    );
  }

  startAgent() {
    const script = path.join(this.options.examples, `${this.scenario.agent}.py`);
    this.child = spawn(this.options.python, [script], {
      cwd: this.procDir,
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, PYTHONUNBUFFERED: "1" },
    });
    this.exitStatus = null;
    this.exited = new Promise((resolve) => {
      this.exitResolve = resolve;
      this.child.on("exit", (code, signal) => {
        this.exitStatus = { code, signal };
        resolve(this.exitStatus);
      });
    });
    this.spawnError = new Promise((_resolve, reject) => {
      this.child.on("error", (error) => {
        // A process that could not start never emits "exit".
        if (this.child.pid === undefined) {
          this.exitStatus = { code: null, signal: null };
          this.exitResolve?.(this.exitStatus);
        }
        reject(error);
      });
    });
    this.spawnError.catch(() => {});
    this.child.stdin.on("error", () => {});
    this.child.stderr.on("data", (chunk) => {
      this.stderr += chunk.toString("utf8");
    });
    return acp.ndJsonStream(
      this.wire.tapOutput(this.child.stdin),
      this.wire.tapInput(Readable.toWeb(this.child.stdout)),
    );
  }

  buildClient() {
    return acp
      .client({ name: "acpio-interop" })
      .onRequest("session/request_permission", async (ctx) => {
        this.sdkPermissionRequests += 1;
        const entry = {
          id: ctx.requestId,
          params: ctx.params,
          snapshot: this.wire.permissionSnapshots.get(show(ctx.requestId)),
          answer: null,
        };
        this.permissions.push(entry);
        const policy = this.permissionPolicy;
        if (!policy) {
          this.failures.push(`unexpected permission request: ${show(ctx.params)}`);
          entry.answer = { outcome: { outcome: "cancelled" } };
        } else {
          entry.answer = await policy(ctx, entry);
        }
        return entry.answer;
      })
      .onNotification("session/update", (ctx) => {
        const counts = this.sdkSessionUpdates;
        counts.set(ctx.params.sessionId, (counts.get(ctx.params.sessionId) ?? 0) + 1);
        this.queueOf(ctx.params.sessionId).push(ctx.params.update);
      });
  }

  async run() {
    const started = performance.now();
    consoleSink = (text) => this.failures.push(`the SDK logged an error: ${text}`);
    let connection = null;
    try {
      const stream = this.startAgent();
      connection = this.buildClient().connect(stream);
      this.cx = connection.agent;
      const init = await within(
        TURN_TIMEOUT_MS,
        "initialize",
        Promise.race([
          this.spawnError,
          this.cx.request("initialize", {
            protocolVersion: acp.PROTOCOL_VERSION,
            capabilities: {},
            info: { name: "acpio-interop", version: SDK_PACKAGE.version },
          }),
        ]),
      );
      this.eq(init.protocolVersion, 2, "initialize protocolVersion");
      this.notes.agentInfo = init.info;
      await this.scenario.run(this);
    } catch (error) {
      this.failures.push(`scenario aborted: ${describeError(error)}`);
    }
    await this.shutdown(connection);
    consoleSink = null;
    this.postChecks();
    fs.rmSync(this.root, { recursive: true, force: true });
    return {
      name: this.scenario.name,
      agent: this.scenario.agent,
      description: this.scenario.description,
      ok: this.failures.length === 0,
      failures: this.failures,
      durationMs: Math.round(performance.now() - started),
      notes: this.notes,
      agentStderr: this.failures.length === 0 ? undefined : this.stderr.slice(-4000),
    };
  }

  async shutdown(connection) {
    if (!this.child) return;
    if (this.exitStatus !== null || this.wire.inputEnded) {
      this.failures.push("the agent closed its stdout or exited before the client closed its stdin");
    }
    // Closing stdin is how a client ends an stdio agent; it must then exit.
    this.child.stdin.end();
    try {
      const { code, signal } = await within(EXIT_TIMEOUT_MS, "agent exit after stdin closed", this.exited);
      this.check(code === 0, `agent exited with code ${code}, signal ${signal}`);
    } catch (error) {
      this.failures.push(`${describeError(error)}; killing it`);
      this.child.kill("SIGKILL");
      await this.exited;
    }
    if (connection) {
      try {
        await within(EXIT_TIMEOUT_MS, "SDK connection close", connection.closed);
      } catch (error) {
        this.failures.push(describeError(error));
        connection.close();
      }
    }
  }

  postChecks() {
    const wire = this.wire;
    for (const [sessionId, count] of wire.sessionUpdateCounts) {
      const accepted = this.sdkSessionUpdates.get(sessionId) ?? 0;
      this.check(
        accepted === count,
        `session ${sessionId}: agent sent ${count} session/update notifications, the SDK delivered ${accepted}`,
      );
    }
    this.check(
      this.sdkPermissionRequests === wire.permissionRequestCount,
      `agent sent ${wire.permissionRequestCount} permission requests, the SDK delivered ${this.sdkPermissionRequests}`,
    );
    for (const model of wire.rawModels.values()) {
      for (const issue of model.issues) this.failures.push(issue);
    }
    this.checkQuietAfterIdle();
    if (this.scenario.agent === "shell_agent") this.checkNoProcessLeft();
  }

  // Linux only: any process still running in the session directory after the
  // agent exited was started by a command and never stopped.
  checkNoProcessLeft() {
    let entries;
    try {
      entries = fs.readdirSync("/proc");
    } catch {
      return;
    }
    for (const entry of entries) {
      if (!/^\d+$/.test(entry)) continue;
      let cwd;
      try {
        cwd = fs.readlinkSync(`/proc/${entry}/cwd`);
      } catch {
        continue;
      }
      if (cwd === this.workDir || cwd.startsWith(`${this.workDir}/`)) {
        let cmdline = "";
        try {
          cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ");
        } catch {
          // The process may have gone in between.
        }
        this.failures.push(`process ${entry} (${cmdline.trim()}) still runs in the session cwd`);
        try {
          process.kill(Number(entry), "SIGKILL");
        } catch {
          // Already gone.
        }
      }
    }
  }

  queueOf(sessionId) {
    let queue = this.updateQueues.get(sessionId);
    if (!queue) {
      queue = new UpdateQueue();
      this.updateQueues.set(sessionId, queue);
    }
    return queue;
  }

  // Uses the SDK's session helper for session/new and prompts; updates are
  // read from the client's own session/update handler, which also sees the
  // ones sent before the helper is attached (e.g. during session/new).
  async startSession() {
    const active = await within(
      TURN_TIMEOUT_MS,
      "session/new",
      this.cx.buildSession(this.workDir).start(),
    );
    const session = {
      active,
      sessionId: active.sessionId,
      model: newModel(),
      turns: [],
      updates: this.queueOf(active.sessionId),
    };
    this.sessions.push(session);
    return session;
  }

  // Once a turn ended idle the agent must not touch its work any more: after
  // the last turn's idle only repeated idle snapshots may follow.
  checkQuietAfterIdle() {
    for (const session of this.sessions) {
      session.active.dispose();
      if (session.turns.length === 0) continue;
      const late = session.updates
        .drain()
        .filter((update) => !(acp.SessionUpdate.isStateUpdate(update) && acp.StateUpdate.isIdle(update)));
      this.check(
        late.length === 0,
        `session updates after the turn ended idle: ${show(late)}`,
      );
    }
  }

  // Sends one prompt and consumes the session's updates until the turn ends
  // idle. `permission(ctx, entry)` answers permission requests during the turn;
  // `onUpdate(turn)` sees the model after every update.
  async turn(session, text, { permission = null, onUpdate = null } = {}) {
    const model = session.model;
    const turn = {
      text,
      messageId: null,
      stopReason: undefined,
      states: [],
      newToolCalls: [],
      startedAt: performance.now(),
      permissionsBefore: this.permissions.length,
    };
    const knownCalls = new Set(model.toolCalls.keys());
    this.currentTurn = turn;
    this.permissionPolicy = permission;
    const abort = AbortSignal.timeout(TURN_TIMEOUT_MS);
    // After session/cancel the idle must come quickly: armDeadline() shortens
    // the wait so a missing idle fails fast with a precise message.
    const armed = new AbortController();
    let armedReason = null;
    turn.armDeadline = (ms, reason) => {
      if (armedReason !== null) return;
      armedReason = `no idle state_update within ${ms} ms ${reason}`;
      const timer = setTimeout(() => armed.abort(new Error(armedReason)), ms);
      armed.signal.addEventListener("abort", () => clearTimeout(timer));
      abort.addEventListener("abort", () => clearTimeout(timer));
    };
    // A rejected prompt never starts a turn: stop waiting for its idle.
    const refused = new AbortController();
    const reading = AbortSignal.any([abort, armed.signal, refused.signal]);
    const accepted = session.active.prompt(text, { cancellationSignal: abort }).then((response) => {
      turn.messageId = response.messageId;
      return response;
    });
    accepted.catch((error) => refused.abort(error));
    let running = false;
    try {
      for (;;) {
        let message;
        try {
          message = await session.updates.next(reading);
        } catch (error) {
          if (refused.signal.aborted) {
            throw new Error(`session/prompt failed: ${describeError(refused.signal.reason)}`);
          }
          if (armed.signal.aborted) {
            throw new Error(`${armedReason}; states so far ${show(turn.states)}`);
          }
          throw new Error(
            `no idle state_update within ${TURN_TIMEOUT_MS} ms for prompt ${show(text)} (${describeError(error)}); states so far ${show(turn.states)}`,
          );
        }
        applyUpdate(model, message);
        const isState = acp.SessionUpdate.isStateUpdate(message);
        const isIdle = isState && acp.StateUpdate.isIdle(message);
        if (isState && (running || !isIdle)) {
          turn.states.push(message.state);
          if (message.state === "running") running = true;
        }
        if (isIdle) {
          if (running) {
            turn.stopReason = message.stopReason;
            turn.stopError = message.error;
            break;
          }
          // An idle snapshot before this turn started running is a repeat of
          // the previous state, not this turn's end.
          continue;
        }
        if (onUpdate) await onUpdate(turn, model);
      }
      await within(TURN_TIMEOUT_MS, "session/prompt response", accepted);
    } finally {
      this.permissionPolicy = null;
      this.currentTurn = null;
      armed.abort();
    }
    turn.endedAt = performance.now();
    turn.permissions = this.permissions.slice(turn.permissionsBefore);
    for (const id of model.toolCalls.keys()) {
      if (!knownCalls.has(id)) turn.newToolCalls.push(model.toolCalls.get(id));
    }
    turn.snapshot = summarizeModel(model);
    session.turns.push(turn);
    this.notes.turns = [...(this.notes.turns ?? []), summarizeTurn(turn)];
    this.checkTurnBasics(turn, model);
    return turn;
  }

  checkTurnBasics(turn, model) {
    const label = `turn ${show(turn.text)}`;
    this.check(
      model.userMessageIds.has(turn.messageId),
      `${label}: no user_message/user_message_chunk with the prompt's messageId ${show(turn.messageId)}`,
    );
    this.eq(turn.states[0], "running", `${label}: first state_update`);
    this.eq(turn.states.at(-1), "idle", `${label}: last state_update`);
  }
}

function summarizeTurn(turn) {
  return {
    prompt: turn.text,
    messageId: turn.messageId,
    stopReason: turn.stopReason,
    states: turn.states,
    durationMs: Math.round(turn.endedAt - turn.startedAt),
    permissions: turn.permissions.map((p) => ({ params: p.params, answer: p.answer })),
    sessionAtIdle: turn.snapshot,
  };
}

// ---------------------------------------------------------------------------
// Shared expectations

function optionOfKind(params, kind) {
  return (params.options ?? []).find((option) => option.kind === kind);
}

function answerWith(kind) {
  return (ctx) => {
    const option = optionOfKind(ctx.params, kind);
    if (!option) return { outcome: { outcome: "cancelled" } };
    return { outcome: { outcome: "selected", optionId: option.optionId } };
  };
}

// Cancels the turn from inside the permission prompt, the way a client does
// when the user cancels while asked: session/cancel, then the `cancelled`
// outcome for the pending request.
function cancelTurnWhileAsked(h, session) {
  return async (ctx) => {
    await ctx.agent.notify("session/cancel", { sessionId: session.sessionId });
    h.currentTurn?.armDeadline(CANCEL_DEADLINE_MS, "after session/cancel with a pending permission request");
    h.notes.cancelledWhileAsked = true;
    return { outcome: { outcome: "cancelled" } };
  };
}

function singleNewCall(h, turn) {
  h.eq(turn.newToolCalls.length, 1, `turn ${show(turn.text)}: number of new tool calls`);
  return turn.newToolCalls[0];
}

function checkOptions(h, params) {
  const kinds = (params.options ?? []).map((option) => option.kind);
  h.check(kinds.includes("allow_once"), `permission options lack kind allow_once: ${show(params.options)}`);
  h.check(kinds.includes("reject_once"), `permission options lack kind reject_once: ${show(params.options)}`);
  h.check(typeof params.title === "string" && params.title.length > 0, "permission request has no title");
}

function finalStatus(call) {
  return call.fields.status;
}

function terminalIdsOf(call) {
  return (call.fields.content ?? [])
    .filter((item) => item.type === "terminal")
    .map((item) => item.terminalId);
}

function diffsOf(call) {
  return (call.fields.content ?? []).filter((item) => item.type === "diff");
}

function checkStateFlow(h, turn, { resumed }) {
  const label = `turn ${show(turn.text)}`;
  const asked = turn.states.indexOf("requires_action");
  if (!h.check(asked > 0, `${label}: no state_update requires_action while the permission was pending (states ${show(turn.states)})`)) {
    return;
  }
  if (resumed) {
    h.check(
      turn.states.indexOf("running", asked) > asked,
      `${label}: no state_update running after the permission was answered (states ${show(turn.states)})`,
    );
  }
}

// A new shell tool call: reported before the permission request with title,
// kind execute, status pending and the command in rawInput.
function checkShellCall(h, turn, command) {
  const call = singleNewCall(h, turn);
  if (!call) return null;
  const first = call.first;
  h.eq(first.sessionUpdate, "tool_call_update", "first update of the tool call");
  h.check(
    typeof first.title === "string" && first.title.includes(command),
    `first tool_call_update title should contain the command ${show(command)}: ${show(first.title)}`,
  );
  h.eq(first.kind, "execute", "first tool_call_update kind");
  h.eq(first.status, "pending", "first tool_call_update status");
  h.check(
    isPlainObject(first.rawInput) && Object.values(first.rawInput).includes(command),
    `first tool_call_update rawInput should hold the command: ${show(first.rawInput)}`,
  );
  h.eq(turn.permissions.length, 1, `turn ${show(turn.text)}: number of permission requests`);
  const permission = turn.permissions[0];
  if (permission) {
    const { params, snapshot } = permission;
    checkOptions(h, params);
    h.eq(
      pick(params.subject, ["type", "command", "cwd", "toolCallId"]),
      { type: "command", command, cwd: h.workDir, toolCallId: call.toolCallId },
      "permission subject",
    );
    h.check(
      snapshot && snapshot.toolCalls.some((c) => c.toolCallId === call.toolCallId && c.status === "pending"),
      `the tool call was not reported (pending) before its permission request: ${show(snapshot?.toolCalls)}`,
    );
  }
  return call;
}

function checkNothingRan(h, call, marker) {
  h.eq(terminalIdsOf(call), [], "terminal content items of a command that must not run");
  for (const id of terminalIdsOf(call)) {
    const terminal = h.currentModel.terminals.get(id);
    h.eq(bytesText(terminal?.bytes ?? Buffer.alloc(0)), "", `output of terminal ${id}`);
  }
  h.check(!fs.existsSync(path.join(h.workDir, marker)), `the command ran: ${marker} exists`);
}

function checkTerminal(h, call, { command, output, exitCode }) {
  const ids = terminalIdsOf(call);
  if (!h.eq(ids.length, 1, "terminal content items in the tool call")) return null;
  const terminal = h.currentModel.terminals.get(ids[0]);
  if (!h.check(terminal, `terminal ${ids[0]} has no terminal_update/terminal_output_chunk`)) return null;
  h.eq(terminal.fields.command, command, "terminal command");
  h.eq(terminal.fields.cwd, h.workDir, "terminal cwd");
  if (output !== undefined) h.eq(bytesText(terminal.bytes), output, "terminal output bytes");
  if (exitCode !== undefined) h.eq(terminal.fields.exitStatus?.exitCode, exitCode, "terminal exitStatus.exitCode");
  return terminal;
}

async function shellAllowedTurn(h, session, command, expected) {
  const turn = await h.turn(session, `run ${command}`, { permission: answerWith("allow_once") });
  h.currentModel = session.model;
  const call = checkShellCall(h, turn, command);
  if (call) {
    h.eq(call.statusHistory.includes("in_progress"), true, `status history ${show(call.statusHistory)} has in_progress`);
    h.eq(finalStatus(call), expected.status, "final tool call status");
    checkTerminal(h, call, { command, output: expected.output, exitCode: expected.exitCode });
  }
  checkStateFlow(h, turn, { resumed: true });
  h.eq(turn.stopReason, "end_turn", "stopReason");
  return { turn, call };
}

// ---------------------------------------------------------------------------
// Edit expectations

function checkEditCall(h, turn, { file, operation, added = [], removed = [], kinds = ["edit"] }) {
  const call = singleNewCall(h, turn);
  if (!call) return null;
  const first = call.first;
  h.check(kinds.includes(first.kind), `first tool_call_update kind should be one of ${show(kinds)}: ${show(first.kind)}`);
  h.eq(first.status, "pending", "first tool_call_update status");
  h.check(typeof first.title === "string" && first.title.length > 0, "first tool_call_update has no title");
  h.check(
    (call.fields.locations ?? []).some((location) => location.path === file),
    `tool call locations should include ${file}: ${show(call.fields.locations)}`,
  );
  const diffs = diffsOf(call);
  if (h.eq(diffs.length, 1, "diff content items")) {
    const diff = diffs[0];
    h.eq(diff.changes, [{ operation, path: file, ...pick(diff.changes?.[0], ["fileType", "mimeType", "_meta"]) }], "diff changes");
    h.eq(diff.patch?.format, "git_patch", "diff patch format");
    checkPatch(h, diff.patch?.text ?? "", { file, operation, added, removed });
  }
  h.eq(turn.permissions.length, 1, `turn ${show(turn.text)}: number of permission requests`);
  const permission = turn.permissions[0];
  if (permission) {
    const { params, snapshot } = permission;
    checkOptions(h, params);
    h.eq(params.subject?.type, "tool_call", "permission subject type");
    h.eq(params.subject?.toolCall?.toolCallId, call.toolCallId, "permission subject toolCall.toolCallId");
    const shown = snapshot?.toolCalls.find((c) => c.toolCallId === call.toolCallId);
    h.check(
      shown && (shown.content ?? []).some((item) => item.type === "diff"),
      `the diff was not shown before the permission request: ${show(shown)}`,
    );
  }
  return call;
}

function pick(object, keys) {
  const out = {};
  for (const key of keys) {
    if (object && Object.hasOwn(object, key)) out[key] = object[key];
  }
  return out;
}

function checkPatch(h, text, { file, operation, added, removed }) {
  const lines = text.split("\n");
  h.check(lines[0].startsWith("diff --git ") && lines[0].includes(file), `patch should start with a diff --git header for ${file}: ${show(text)}`);
  const minus = lines.find((line) => line.startsWith("--- "));
  const plus = lines.find((line) => line.startsWith("+++ "));
  h.eq(minus, operation === "add" ? "--- /dev/null" : `--- ${file}`, "patch --- line");
  h.eq(plus, operation === "delete" ? "+++ /dev/null" : `+++ ${file}`, "patch +++ line");
  h.check(lines.some((line) => line.startsWith("@@ ")), `patch has no hunk: ${show(text)}`);
  for (const line of added) h.check(lines.includes(`+${line}`), `patch should add ${show(line)}: ${show(text)}`);
  for (const line of removed) h.check(lines.includes(`-${line}`), `patch should remove ${show(line)}: ${show(text)}`);
}

function readOrNull(file) {
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8") : null;
}

// ---------------------------------------------------------------------------
// Scenarios

const SCENARIOS = [
  {
    name: "shell_allowed_output",
    agent: "shell_agent",
    description: "allowed command: terminal bytes, exit code 0, call completed, end_turn",
    async run(h) {
      const session = await h.startSession();
      await shellAllowedTurn(h, session, "printf 'hello\\nworld\\n'", {
        status: "completed",
        output: "hello\nworld\n",
        exitCode: 0,
      });
    },
  },
  {
    name: "shell_large_binary_output",
    agent: "shell_agent",
    description: "~170 KB of output ending in bytes that are not UTF-8: every byte arrives, in order",
    async run(h) {
      const session = await h.startSession();
      const command = "seq 1 30000; printf '\\303\\251%.0s' $(seq 1 2000); printf '\\377\\376\\303'";
      const { call } = await shellAllowedTurn(h, session, command, { status: "completed", exitCode: 0 });
      if (!call) return;
      const lines = Array.from({ length: 30000 }, (_v, i) => `${i + 1}\n`).join("");
      const expected = Buffer.concat([
        Buffer.from(lines + "\u00e9".repeat(2000), "utf8"),
        Buffer.from([0xff, 0xfe, 0xc3]),
      ]);
      const terminal = session.model.terminals.get(terminalIdsOf(call)[0]);
      if (!terminal) return;
      h.notes.outputBytes = terminal.bytes.length;
      h.notes.outputChunks = terminal.chunks;
      if (!terminal.bytes.equals(expected)) {
        let offset = 0;
        while (offset < expected.length && terminal.bytes[offset] === expected[offset]) offset += 1;
        h.failures.push(
          `terminal bytes differ: got ${terminal.bytes.length} bytes, expected ${expected.length}; first difference at byte ${offset}`,
        );
      }
    },
  },
  {
    name: "shell_nonzero_exit",
    agent: "shell_agent",
    description: "allowed command exiting 3 after writing to stderr: call failed, end_turn",
    async run(h) {
      const session = await h.startSession();
      await shellAllowedTurn(h, session, "printf 'oops\\n' >&2; exit 3", {
        status: "failed",
        output: "oops\n",
        exitCode: 3,
      });
    },
  },
  {
    name: "shell_rejected",
    agent: "shell_agent",
    description: "rejected command: nothing runs, call failed, end_turn",
    async run(h) {
      const session = await h.startSession();
      const command = "echo nope > rejected.txt";
      const turn = await h.turn(session, `run ${command}`, { permission: answerWith("reject_once") });
      h.currentModel = session.model;
      const call = checkShellCall(h, turn, command);
      if (call) {
        h.eq(finalStatus(call), "failed", "final tool call status");
        h.check(!call.statusHistory.includes("in_progress"), `a rejected call went in_progress: ${show(call.statusHistory)}`);
        checkNothingRan(h, call, "rejected.txt");
      }
      checkStateFlow(h, turn, { resumed: false });
      h.eq(turn.stopReason, "end_turn", "stopReason");
    },
  },
  {
    name: "shell_cancel_while_running",
    agent: "shell_agent",
    description: "session/cancel once the terminal shows `start`: process killed, call cancelled, stop cancelled",
    async run(h) {
      const session = await h.startSession();
      const command = "echo $$ > shell.pid; echo start; sleep 30";
      let cancelSentAt = null;
      const turn = await h.turn(session, `run ${command}`, {
        permission: answerWith("allow_once"),
        onUpdate: async (_turn, model) => {
          if (cancelSentAt !== null) return;
          const started = [...model.terminals.values()].some((t) => bytesText(t.bytes).includes("start\n"));
          if (started) {
            cancelSentAt = performance.now();
            await h.cx.notify("session/cancel", { sessionId: session.sessionId });
            _turn.armDeadline(CANCEL_DEADLINE_MS, "after session/cancel while the command ran");
          }
        },
      });
      h.currentModel = session.model;
      if (!h.check(cancelSentAt !== null, "the terminal never showed `start`; session/cancel was not sent")) return;
      const cancelToIdleMs = Math.round(turn.endedAt - cancelSentAt);
      h.notes.cancelToIdleMs = cancelToIdleMs;
      h.check(cancelToIdleMs <= CANCEL_DEADLINE_MS, `the turn ended ${cancelToIdleMs} ms after session/cancel (limit ${CANCEL_DEADLINE_MS} ms)`);
      h.eq(turn.stopReason, "cancelled", "stopReason");
      const call = checkShellCall(h, turn, command);
      if (call) {
        h.eq(finalStatus(call), "cancelled", "final tool call status");
        const terminal = checkTerminal(h, call, { command });
        if (terminal) {
          h.eq(bytesText(terminal.bytes), "start\n", "terminal output bytes");
          const exit = terminal.fields.exitStatus;
          h.check(
            isPlainObject(exit) && (exit.exitCode != null || exit.signal != null),
            `terminal exitStatus should report an exit code or signal: ${show(exit)}`,
          );
          h.notes.exitStatus = exit;
        }
      }
      const pidFile = path.join(h.workDir, "shell.pid");
      if (h.check(fs.existsSync(pidFile), "the command did not run (shell.pid missing)")) {
        const pid = Number(fs.readFileSync(pidFile, "utf8").trim());
        let alive = true;
        try {
          process.kill(pid, 0);
        } catch {
          alive = false;
        }
        h.check(!alive, `the command's shell (pid ${pid}) still runs after the turn ended cancelled`);
      }
    },
  },
  {
    name: "shell_permission_cancelled",
    agent: "shell_agent",
    description: "cancel while asked (session/cancel + cancelled outcome): nothing runs, call cancelled, stop cancelled",
    async run(h) {
      const session = await h.startSession();
      const command = "echo nope > cancelled.txt";
      const turn = await h.turn(session, `run ${command}`, { permission: cancelTurnWhileAsked(h, session) });
      h.currentModel = session.model;
      const call = checkShellCall(h, turn, command);
      if (call) {
        h.eq(finalStatus(call), "cancelled", "final tool call status");
        checkNothingRan(h, call, "cancelled.txt");
      }
      checkStateFlow(h, turn, { resumed: false });
      h.eq(turn.stopReason, "cancelled", "stopReason");
    },
  },
  {
    name: "shell_two_turns_cwd",
    agent: "shell_agent",
    description: "two turns in one session: commands run in the session cwd, fresh tool call and terminal ids",
    async run(h) {
      const session = await h.startSession();
      const first = await shellAllowedTurn(h, session, "pwd", {
        status: "completed",
        output: `${h.workDir}\n`,
        exitCode: 0,
      });
      const second = await shellAllowedTurn(h, session, "printf second", {
        status: "completed",
        output: "second",
        exitCode: 0,
      });
      if (first.call && second.call) {
        h.check(first.call.toolCallId !== second.call.toolCallId, "the second turn reused the tool call id");
        const a = terminalIdsOf(first.call);
        const b = terminalIdsOf(second.call);
        h.check(!b.some((id) => a.includes(id)), `the second turn reused a terminal id: ${show(a)} ${show(b)}`);
        h.eq(finalStatus(first.call), "completed", "first call status after the second turn");
      }
    },
  },
  {
    name: "shell_usage",
    agent: "shell_agent",
    description: "a prompt that is not `run ...` gets a usage message and no tool call",
    async run(h) {
      const session = await h.startSession();
      const turn = await h.turn(session, "hello there");
      h.eq(turn.newToolCalls.length, 0, "tool calls for a usage prompt");
      h.eq(turn.permissions.length, 0, "permission requests for a usage prompt");
      h.check(turn.snapshot.agentText.some((text) => text.trim().length > 0), "no agent message text for a usage prompt");
      h.eq(turn.stopReason, "end_turn", "stopReason");
    },
  },
  {
    name: "edit_write_new_file",
    agent: "edit_agent",
    description: "write a new file, allowed: exact content, diff add, location",
    async run(h) {
      const session = await h.startSession();
      const file = path.join(h.workDir, "new.txt");
      const turn = await h.turn(session, `write ${file}\nalpha\nbeta\n`, { permission: answerWith("allow_once") });
      const call = checkEditCall(h, turn, { file, operation: "add", added: ["alpha", "beta"] });
      if (call) h.eq(finalStatus(call), "completed", "final tool call status");
      h.eq(readOrNull(file), "alpha\nbeta\n", "file content");
      checkStateFlow(h, turn, { resumed: true });
      h.eq(turn.stopReason, "end_turn", "stopReason");
    },
  },
  {
    name: "edit_modify_file",
    agent: "edit_agent",
    description: "overwrite an existing file, allowed: exact content, diff modify",
    async run(h) {
      const session = await h.startSession();
      const file = path.join(h.workDir, "existing.txt");
      fs.writeFileSync(file, "old line\nkeep\n");
      const turn = await h.turn(session, `write ${file}\nnew line\nkeep\n`, { permission: answerWith("allow_once") });
      const call = checkEditCall(h, turn, { file, operation: "modify", added: ["new line"], removed: ["old line"] });
      if (call) h.eq(finalStatus(call), "completed", "final tool call status");
      h.eq(readOrNull(file), "new line\nkeep\n", "file content");
      h.eq(turn.stopReason, "end_turn", "stopReason");
    },
  },
  {
    name: "edit_rejected",
    agent: "edit_agent",
    description: "overwrite rejected: file untouched, call failed, end_turn",
    async run(h) {
      const session = await h.startSession();
      const file = path.join(h.workDir, "keep.txt");
      fs.writeFileSync(file, "original\n");
      const turn = await h.turn(session, `write ${file}\nchanged\n`, { permission: answerWith("reject_once") });
      const call = checkEditCall(h, turn, { file, operation: "modify", added: ["changed"], removed: ["original"] });
      if (call) h.eq(finalStatus(call), "failed", "final tool call status");
      h.eq(readOrNull(file), "original\n", "file content");
      checkStateFlow(h, turn, { resumed: false });
      h.eq(turn.stopReason, "end_turn", "stopReason");
    },
  },
  {
    name: "edit_delete_file",
    agent: "edit_agent",
    description: "delete a file, allowed: file gone, diff delete",
    async run(h) {
      const session = await h.startSession();
      const file = path.join(h.workDir, "doomed.txt");
      fs.writeFileSync(file, "bye\n");
      const turn = await h.turn(session, `delete ${file}`, { permission: answerWith("allow_once") });
      const call = checkEditCall(h, turn, { file, operation: "delete", removed: ["bye"], kinds: ["edit", "delete"] });
      if (call) h.eq(finalStatus(call), "completed", "final tool call status");
      h.check(!fs.existsSync(file), `${file} still exists after an allowed delete`);
      h.eq(turn.stopReason, "end_turn", "stopReason");
    },
  },
  {
    name: "edit_permission_cancelled",
    agent: "edit_agent",
    description: "cancel while asked (session/cancel + cancelled outcome): no file, call cancelled, stop cancelled",
    async run(h) {
      const session = await h.startSession();
      const file = path.join(h.workDir, "never.txt");
      const turn = await h.turn(session, `write ${file}\nnever\n`, { permission: cancelTurnWhileAsked(h, session) });
      const call = checkEditCall(h, turn, { file, operation: "add", added: ["never"] });
      if (call) h.eq(finalStatus(call), "cancelled", "final tool call status");
      h.check(!fs.existsSync(file), `${file} was written although the turn was cancelled`);
      checkStateFlow(h, turn, { resumed: false });
      h.eq(turn.stopReason, "cancelled", "stopReason");
    },
  },
  {
    name: "edit_usage",
    agent: "edit_agent",
    description: "a prompt that is not write/delete gets a usage message and no tool call",
    async run(h) {
      const session = await h.startSession();
      const turn = await h.turn(session, "hello there");
      h.eq(turn.newToolCalls.length, 0, "tool calls for a usage prompt");
      h.eq(turn.permissions.length, 0, "permission requests for a usage prompt");
      h.check(turn.snapshot.agentText.some((text) => text.trim().length > 0), "no agent message text for a usage prompt");
      h.eq(turn.stopReason, "end_turn", "stopReason");
    },
  },
];

// ---------------------------------------------------------------------------
// Main

function parseArgs(argv) {
  const options = {
    python: process.env.ACPIO_INTEROP_PYTHON ?? null,
    examples: process.env.ACPIO_INTEROP_EXAMPLES ?? null,
    result: null,
    only: null,
  };
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (!["--python", "--examples", "--result", "--only"].includes(flag) || value === undefined) {
      throw new Error(`unknown or incomplete argument ${flag}`);
    }
    options[flag.slice(2)] = value;
    i += 1;
  }
  if (!options.python) throw new Error("--python (or ACPIO_INTEROP_PYTHON) is required");
  if (!options.examples) throw new Error("--examples (or ACPIO_INTEROP_EXAMPLES) is required");
  options.examples = path.resolve(options.examples);
  return options;
}

async function main() {
  let options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (error) {
    originalConsoleError(`usage error: ${error.message}`);
    return 2;
  }
  const wanted = options.only ? new Set(options.only.split(",")) : null;
  const scenarios = SCENARIOS.filter((scenario) => !wanted || wanted.has(scenario.name));
  const result = {
    sdk: { name: SDK_NAME, version: SDK_PACKAGE.version, entry: SDK_ENTRY, zod: ZOD_VERSION },
    node: process.version,
    python: options.python,
    examples: options.examples,
    scenarios: [],
    ok: false,
  };
  console.log(`interop: ${SDK_NAME} ${SDK_PACKAGE.version} (${SDK_ENTRY}, zod ${ZOD_VERSION}), node ${process.version}`);
  console.log(`interop: agents ${options.python} ${options.examples}/{shell_agent,edit_agent}.py`);
  const missing = [...new Set(scenarios.map((s) => s.agent))]
    .map((agent) => path.join(options.examples, `${agent}.py`))
    .filter((file) => !fs.existsSync(file));
  if (missing.length > 0) {
    result.error = `missing agent scripts: ${missing.join(", ")}`;
    console.log(`interop: FAIL ${result.error}`);
  } else {
    for (const scenario of scenarios) {
      const outcome = await new Harness(scenario, options).run();
      result.scenarios.push(outcome);
      console.log(`interop: ${outcome.ok ? "PASS" : "FAIL"} ${outcome.name} (${outcome.durationMs} ms)`);
      for (const failure of outcome.failures) console.log(`    - ${failure}`);
      if (!outcome.ok && outcome.agentStderr) {
        const tail = outcome.agentStderr.trimEnd().split("\n").slice(-6);
        console.log(`    agent stderr (tail):\n${tail.map((line) => `      ${line}`).join("\n")}`);
      }
    }
    result.ok = result.scenarios.length > 0 && result.scenarios.every((s) => s.ok);
  }
  if (options.result) fs.writeFileSync(options.result, `${show(result)}\n`);
  console.log(`interop: ${result.ok ? "all scenarios passed" : "FAILED"}`);
  return result.ok ? 0 : 1;
}

process.exitCode = await main();
