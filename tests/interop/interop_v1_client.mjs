// Drives acpio's example agents with the official TypeScript SDK's protocol v1 client.
//
// Usage: node interop_v1_client.mjs --python <interpreter> --examples <dir> --result <file>
//                                   [--only <scenario>[,<scenario>...]]
//
// Each scenario launches `<interpreter> <examples>/<agent>.py` over stdio and talks to it
// only through `client()` from `@agentclientprotocol/sdk` (the v1 entry point that Zed-style
// clients use), with real handlers for the v1 client services: `terminal/*` runs the command
// in a child process as an editor does, `fs/*` reads and writes the real file system. Every
// line the agent writes is recorded raw, so the Python side can validate each one against the
// official v1 schema. The result file lists, per scenario, its failures (empty when it passed),
// the raw agent lines and a summary of what the client showed.
//
// Exit status: 0 when every scenario passed, 1 otherwise, 2 on a usage error.

import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable, Writable } from "node:stream";

import { client, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";

const TURN_LIMIT_MS = 20_000;
const CANCEL_LIMIT_MS = 3_000;
const EXIT_LIMIT_MS = 3_000;

function parseArgs(argv) {
  const options = { only: null };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`missing value for ${flag}`);
    if (flag === "--python") options.python = value;
    else if (flag === "--examples") options.examples = value;
    else if (flag === "--result") options.result = value;
    else if (flag === "--only") options.only = new Set(value.split(","));
    else throw new Error(`unknown flag ${flag}`);
  }
  for (const key of ["python", "examples", "result"]) {
    if (!options[key]) throw new Error(`--${key} is required`);
  }
  return options;
}

function within(ms, what, promise) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// A terminal the client runs for the agent, as an editor's terminal panel does.
class ClientTerminal {
  constructor(id, params) {
    this.id = id;
    this.limit = params.outputByteLimit ?? null;
    this.chunks = [];
    this.bytes = 0;
    this.truncated = false;
    this.exitStatus = null;
    this.killed = false;
    this.released = false;
    const env = { ...process.env };
    for (const variable of params.env ?? []) env[variable.name] = variable.value;
    this.child = spawn(params.command, params.args ?? [], {
      cwd: params.cwd ?? process.cwd(),
      env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.pid = this.child.pid;
    const take = (data) => this.append(data);
    this.child.stdout.on("data", take);
    this.child.stderr.on("data", take);
    this.exited = new Promise((resolve) => {
      this.child.on("error", (error) => {
        this.append(Buffer.from(String(error)));
        this.exitStatus = { exitCode: 127, signal: null };
        resolve(this.exitStatus);
      });
      this.child.on("close", (code, signal) => {
        this.exitStatus = { exitCode: code, signal: signal ?? null };
        resolve(this.exitStatus);
      });
    });
  }

  append(data) {
    this.chunks.push(data);
    this.bytes += data.length;
    if (this.limit !== null) {
      // Keep the newest bytes within the limit, as the v1 terminals page asks.
      let all = Buffer.concat(this.chunks);
      if (all.length > this.limit) {
        all = all.subarray(all.length - this.limit);
        this.truncated = true;
      }
      this.chunks = [all];
    }
  }

  output() {
    return Buffer.concat(this.chunks).toString("utf8");
  }

  kill() {
    this.killed = true;
    if (this.exitStatus === null && this.pid) {
      try {
        process.kill(-this.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
  }
}

class Harness {
  constructor(scenario, options) {
    this.scenario = scenario;
    this.options = options;
    this.failures = [];
    this.lines = [];
    this.updates = [];
    this.permissions = [];
    this.terminals = new Map();
    this.terminalCalls = [];
    this.fsCalls = [];
    this.nextTerminal = 1;
    this.onPermission = null;
    this.onTerminalCreated = null;
    this.stderr = "";
  }

  fail(message) {
    this.failures.push(message);
  }

  expect(condition, message) {
    if (!condition) this.fail(message);
  }

  // The tool calls as the client rebuilds them from v1 updates (the v1 tool-calls page's rules).
  toolCalls() {
    const calls = new Map();
    for (const update of this.updates) {
      if (update.sessionUpdate === "tool_call") {
        calls.set(update.toolCallId, { ...update });
      } else if (update.sessionUpdate === "tool_call_update") {
        const call = calls.get(update.toolCallId);
        if (!call) {
          this.fail(`tool_call_update for unknown tool call ${update.toolCallId}`);
          continue;
        }
        for (const [key, value] of Object.entries(update)) {
          if (key !== "sessionUpdate" && value !== undefined) call[key] = value;
        }
      }
    }
    return [...calls.values()];
  }

  messageText() {
    return this.updates
      .filter((u) => u.sessionUpdate === "agent_message_chunk" && u.content?.type === "text")
      .map((u) => u.content.text)
      .join("");
  }

  app() {
    return client()
      .onNotification("session/update", ({ params }) => {
        this.updates.push(params.update);
      })
      .onRequest("session/request_permission", async ({ params, signal }) => {
        this.permissions.push(params);
        if (!this.onPermission) return { outcome: { outcome: "cancelled" } };
        return await this.onPermission(params, signal);
      })
      .onRequest("terminal/create", ({ params }) => {
        const id = `term-${this.nextTerminal++}`;
        const terminal = new ClientTerminal(id, params);
        this.terminals.set(id, terminal);
        this.terminalCalls.push({ method: "terminal/create", terminalId: id, params });
        if (this.onTerminalCreated) this.onTerminalCreated(terminal);
        return { terminalId: id };
      })
      .onRequest("terminal/output", ({ params }) => {
        const terminal = this.terminal(params.terminalId, "terminal/output");
        const answer = { output: terminal.output(), truncated: terminal.truncated };
        if (terminal.exitStatus) answer.exitStatus = terminal.exitStatus;
        return answer;
      })
      .onRequest("terminal/wait_for_exit", async ({ params }) => {
        const terminal = this.terminal(params.terminalId, "terminal/wait_for_exit");
        return await terminal.exited;
      })
      .onRequest("terminal/kill", ({ params }) => {
        this.terminal(params.terminalId, "terminal/kill").kill();
        return {};
      })
      .onRequest("terminal/release", ({ params }) => {
        const terminal = this.terminal(params.terminalId, "terminal/release");
        terminal.kill();
        terminal.released = true;
        return {};
      })
      .onRequest("fs/read_text_file", ({ params }) => {
        this.fsCalls.push({ method: "fs/read_text_file", path: params.path });
        let content = fs.readFileSync(params.path, "utf8");
        if (params.line || params.limit) {
          const lines = content.split("\n");
          const start = Math.max((params.line ?? 1) - 1, 0);
          content = lines.slice(start, params.limit ? start + params.limit : undefined).join("\n");
        }
        return { content };
      })
      .onRequest("fs/write_text_file", ({ params }) => {
        this.fsCalls.push({ method: "fs/write_text_file", path: params.path });
        fs.writeFileSync(params.path, params.content);
        return {};
      });
  }

  terminal(id, method) {
    const terminal = this.terminals.get(id);
    this.terminalCalls.push({ method, terminalId: id });
    if (!terminal) throw new Error(`${method}: unknown terminal ${id}`);
    if (terminal.released) this.fail(`${method} on released terminal ${id}`);
    return terminal;
  }

  async run() {
    const script = path.join(this.options.examples, `${this.scenario.agent}.py`);
    this.workdir = fs.mkdtempSync(path.join(os.tmpdir(), "acpio-v1-interop-"));
    const agent = spawn(this.options.python, [script], {
      cwd: this.workdir,
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.agent = agent;
    agent.stderr.on("data", (data) => {
      this.stderr += data.toString();
    });
    const exited = new Promise((resolve) => agent.on("close", (code, signal) => resolve({ code, signal })));
    // Record every raw line the agent writes before the SDK parses it.
    let pending = "";
    agent.stdout.on("data", (data) => {
      pending += data.toString("utf8");
      let newline;
      while ((newline = pending.indexOf("\n")) >= 0) {
        this.lines.push(pending.slice(0, newline));
        pending = pending.slice(newline + 1);
      }
    });
    const stream = ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));
    try {
      await this.app().connectWith(stream, async (ctx) => {
        this.ctx = ctx;
        const init = await within(TURN_LIMIT_MS, "initialize", ctx.request("initialize", {
          protocolVersion: PROTOCOL_VERSION,
          clientCapabilities: {
            fs: { readTextFile: true, writeTextFile: true },
            terminal: this.scenario.clientTerminal !== false,
          },
          clientInfo: { name: "acpio-v1-interop", version: "1.0.0" },
        }));
        this.expect(init.protocolVersion === 1, `initialize answered protocolVersion ${init.protocolVersion}`);
        this.expect(init.agentInfo?.name, "initialize answer has no agentInfo.name");
        const session = await within(TURN_LIMIT_MS, "session/new", ctx.request("session/new", {
          cwd: this.workdir,
          mcpServers: [],
        }));
        this.sessionId = session.sessionId;
        await this.scenario.run(this);
        // Nothing of a finished turn may follow its answer.
        const seen = this.updates.length;
        await new Promise((resolve) => setTimeout(resolve, 200));
        this.expect(this.updates.length === seen, `${this.updates.length - seen} update(s) after the last turn ended`);
      });
    } catch (error) {
      this.fail(`scenario aborted: ${error?.stack ?? error}`);
    }
    agent.stdin.end();
    const exit = await within(EXIT_LIMIT_MS, "agent exit after end of input", exited).catch((error) => {
      this.fail(String(error.message));
      agent.kill("SIGKILL");
      return null;
    });
    if (exit) this.expect(exit.code === 0, `agent exited with ${exit.code ?? exit.signal}`);
    for (const terminal of this.terminals.values()) {
      this.expect(terminal.released, `terminal ${terminal.id} was never released`);
      this.expect(!alive(terminal.pid), `terminal ${terminal.id} process ${terminal.pid} is still running`);
      terminal.kill();
    }
    return {
      name: this.scenario.name,
      agent: this.scenario.agent,
      failures: this.failures,
      lines: this.lines,
      stderr: this.stderr.slice(-4000),
      summary: {
        message: this.messageText(),
        toolCalls: this.toolCalls(),
        terminalCalls: this.terminalCalls.map((c) => c.method),
        fsCalls: this.fsCalls,
        permissions: this.permissions.length,
      },
    };
  }

  async prompt(text, limit = TURN_LIMIT_MS) {
    return await within(limit, `session/prompt ${JSON.stringify(text)}`, this.ctx.request("session/prompt", {
      sessionId: this.sessionId,
      prompt: [{ type: "text", text }],
    }));
  }
}

function choose(kind) {
  return async (params) => {
    const option = params.options.find((o) => o.kind === kind);
    if (!option) throw new Error(`no ${kind} option offered`);
    return { outcome: { outcome: "selected", optionId: option.optionId } };
  };
}

function contentOf(call) {
  return call.content ?? [];
}

function textOf(call) {
  return contentOf(call)
    .filter((c) => c.type === "content" && c.content?.type === "text")
    .map((c) => c.content.text)
    .join("\n");
}

function onlyCall(h) {
  const calls = h.toolCalls();
  h.expect(calls.length === 1, `expected one tool call, saw ${calls.length}`);
  return calls[0] ?? { content: [] };
}

const SCENARIOS = [
  {
    name: "echo_reply",
    agent: "echo_agent",
    async run(h) {
      const answer = await h.prompt("hello from a v1 client");
      h.expect(answer.stopReason === "end_turn", `stopReason ${answer.stopReason}`);
      h.expect(h.messageText().includes("hello from a v1 client"), `message was ${JSON.stringify(h.messageText())}`);
    },
  },
  {
    name: "shell_allowed_client_terminal",
    agent: "shell_agent",
    async run(h) {
      h.onPermission = choose("allow_once");
      const answer = await h.prompt("run printf 'v1 says hi\\n'; exit 3");
      h.expect(answer.stopReason === "end_turn", `stopReason ${answer.stopReason}`);
      const call = onlyCall(h);
      h.expect(h.terminalCalls.some((c) => c.method === "terminal/create"), "the agent did not use the client's terminal");
      const ids = contentOf(call).filter((c) => c.type === "terminal").map((c) => c.terminalId);
      h.expect(ids.length === 1 && h.terminals.has(ids[0]), `terminal content ${JSON.stringify(ids)}`);
      const terminal = h.terminals.get(ids[0]);
      h.expect(terminal?.output().includes("v1 says hi"), `terminal output ${JSON.stringify(terminal?.output())}`);
      h.expect(terminal?.exitStatus?.exitCode === 3, `exit ${JSON.stringify(terminal?.exitStatus)}`);
      h.expect(call.status === "failed", `status ${call.status} for a command that exited 3`);
    },
  },
  {
    name: "shell_allowed_no_client_terminal",
    agent: "shell_agent",
    clientTerminal: false,
    async run(h) {
      h.onPermission = choose("allow_once");
      const answer = await h.prompt("run echo output-as-content");
      h.expect(answer.stopReason === "end_turn", `stopReason ${answer.stopReason}`);
      const call = onlyCall(h);
      h.expect(h.terminalCalls.length === 0, "the agent asked for a terminal the client did not offer");
      h.expect(textOf(call).includes("output-as-content"), `content text ${JSON.stringify(textOf(call))}`);
      h.expect(call.status === "completed", `status ${call.status}`);
    },
  },
  {
    name: "shell_rejected",
    agent: "shell_agent",
    async run(h) {
      h.onPermission = choose("reject_once");
      const marker = path.join(h.workdir, "must-not-exist");
      const answer = await h.prompt(`run touch ${marker}`);
      h.expect(answer.stopReason === "end_turn", `stopReason ${answer.stopReason}`);
      const call = onlyCall(h);
      h.expect(call.status === "failed", `status ${call.status}`);
      h.expect(h.terminalCalls.length === 0, "a terminal was created for a rejected command");
      h.expect(!fs.existsSync(marker), "the rejected command ran");
      h.expect(h.permissions.length === 1, `${h.permissions.length} permission requests`);
    },
  },
  {
    name: "shell_cancel_while_running",
    agent: "shell_agent",
    async run(h) {
      h.onPermission = choose("allow_once");
      const created = new Promise((resolve) => {
        h.onTerminalCreated = resolve;
      });
      const turn = h.prompt("run sleep 37");
      const terminal = await within(TURN_LIMIT_MS, "terminal/create", created);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const started = Date.now();
      await h.ctx.notify("session/cancel", { sessionId: h.sessionId });
      const answer = await within(CANCEL_LIMIT_MS, "the cancelled turn's answer", turn);
      h.expect(answer.stopReason === "cancelled", `stopReason ${answer.stopReason}`);
      h.expect(Date.now() - started < CANCEL_LIMIT_MS, "cancel took too long");
      await within(CANCEL_LIMIT_MS, "the cancelled command's exit", terminal.exited);
      h.expect(terminal.killed, "the agent did not kill the client terminal on cancel");
      const call = onlyCall(h);
      h.expect(call.status !== "completed", `status ${call.status} after cancel`);
    },
  },
  {
    name: "shell_cancel_no_client_terminal",
    agent: "shell_agent",
    clientTerminal: false,
    async run(h) {
      h.onPermission = choose("allow_once");
      const turn = h.prompt("run sleep 38");
      const deadline = Date.now() + TURN_LIMIT_MS;
      while (!h.toolCalls().some((c) => c.status === "in_progress") && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      await h.ctx.notify("session/cancel", { sessionId: h.sessionId });
      const answer = await within(CANCEL_LIMIT_MS, "the cancelled turn's answer", turn);
      h.expect(answer.stopReason === "cancelled", `stopReason ${answer.stopReason}`);
    },
  },
  {
    name: "edit_write_with_diff",
    agent: "edit_agent",
    async run(h) {
      const file = path.join(h.workdir, "notes.txt");
      fs.writeFileSync(file, "old line\n");
      let diffBeforeAsk = null;
      h.onPermission = async (params) => {
        diffBeforeAsk = h.toolCalls().flatMap(contentOf).find((c) => c.type === "diff") ?? null;
        return await choose("allow_once")(params);
      };
      const answer = await h.prompt(`write ${file}\nnew line\n`);
      h.expect(answer.stopReason === "end_turn", `stopReason ${answer.stopReason}`);
      h.expect(diffBeforeAsk !== null, "no diff was shown before the permission request");
      if (diffBeforeAsk) {
        h.expect(diffBeforeAsk.path === fs.realpathSync(file), `diff path ${diffBeforeAsk.path}`);
        h.expect(diffBeforeAsk.oldText === "old line\n", `diff oldText ${JSON.stringify(diffBeforeAsk.oldText)}`);
        h.expect(diffBeforeAsk.newText === "new line\n", `diff newText ${JSON.stringify(diffBeforeAsk.newText)}`);
      }
      h.expect(fs.readFileSync(file, "utf8") === "new line\n", "the file was not written");
      h.expect(onlyCall(h).status === "completed", `status ${onlyCall(h).status}`);
    },
  },
  {
    name: "edit_rejected",
    agent: "edit_agent",
    async run(h) {
      const file = path.join(h.workdir, "keep.txt");
      fs.writeFileSync(file, "keep me\n");
      h.onPermission = choose("reject_once");
      await h.prompt(`write ${file}\nreplaced\n`);
      h.expect(fs.readFileSync(file, "utf8") === "keep me\n", "a rejected edit was written");
      h.expect(onlyCall(h).status === "failed", `status ${onlyCall(h).status}`);
    },
  },
];

async function main() {
  let options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (error) {
    console.error(String(error.message));
    process.exit(2);
  }
  const results = [];
  for (const scenario of SCENARIOS) {
    if (options.only && !options.only.has(scenario.name)) continue;
    results.push(await new Harness(scenario, options).run());
  }
  fs.writeFileSync(options.result, JSON.stringify({ scenarios: results }, null, 1));
  const failed = results.filter((r) => r.failures.length > 0);
  for (const result of failed) console.error(`${result.name}: ${result.failures.join("; ")}`);
  process.exit(failed.length ? 1 : 0);
}

await main();
