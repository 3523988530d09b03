// A client of the official TypeScript SDK (@agentclientprotocol/sdk, its experimental
// http-client and ws-client) talking to two `acpio serve` replicas through HAProxy, for
// tests/remote/test_balancer.py. It is what a real client does when its replica dies: it
// keeps its cookies in one cookie store of its own across connections (the affinity
// cookie), and when its connection is lost it connects again to the same address (the
// balancer) and reopens its session (`session/load` on v1, `session/resume` from the
// start on v2).
//
// Usage:
//   node balancer_client.mjs --url <balancer>/acp --transport http|ws --protocol 1|2
//        --token T --workdir DIR --chunks N --seen K --result FILE
//
// Steps: a session, a first prompt ("first words", a whole turn), then the prompt
// `long reply N` (the agent, tests/remote/long_reply_agent.py, streams N chunks and never
// ends the turn). Once K chunks have arrived the client prints `MID-REPLY <sessionId> <pid>`
// (the pid the chunks name)
// and waits for a line on stdin (the test kills the replica meanwhile); then it drops its
// connection, connects again through the balancer with the same cookie store, reopens the
// session, prompts "after the failover" and writes what it saw (every update's kind and
// text, per connection, in order) to FILE as JSON. It checks nothing itself: the test does.
//
// Exit status: 0 when it got through every step, 1 otherwise (the error in FILE), 2 on a
// usage error.

import fs from "node:fs";
import process from "node:process";
import readline from "node:readline";
import * as v1 from "@agentclientprotocol/sdk";
import * as v2 from "@agentclientprotocol/sdk/experimental/v2";
import { createHttpStream, MemoryAcpCookieStore } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { NodeWebSocket, within } from "./remote_support.mjs";

const STEP_TIMEOUT_MS = 30_000;

function parseArgs(argv) {
  const options = {};
  const known = ["--url", "--transport", "--protocol", "--token", "--workdir", "--chunks", "--seen", "--result"];
  for (let i = 0; i < argv.length; i += 2) {
    if (!known.includes(argv[i]) || argv[i + 1] === undefined) {
      console.error(`unknown or incomplete argument ${argv[i]}`);
      process.exit(2);
    }
    options[argv[i].slice(2)] = argv[i + 1];
  }
  for (const name of known) {
    if (options[name.slice(2)] === undefined) {
      console.error(`${name} is required`);
      process.exit(2);
    }
  }
  options.protocol = Number(options.protocol);
  options.chunks = Number(options.chunks);
  options.seen = Number(options.seen);
  return options;
}

const options = parseArgs(process.argv.slice(2));
const acp = options.protocol === 1 ? v1 : v2;

function openStream(cookieStore) {
  const headers = { Authorization: `Bearer ${options.token}` };
  if (options.transport === "ws") {
    return createWebSocketStream(options.url.replace(/^http/, "ws"), { WebSocket: NodeWebSocket, headers, cookieStore });
  }
  return createHttpStream(options.url, { headers, cookieStore });
}

function textOf(content) {
  if (!content) return "";
  if (Array.isArray(content)) return content.map(textOf).join("");
  return content.type === "text" ? content.text : "";
}

// One connection through the balancer and every update it received, in order.
class Connection {
  constructor(cookieStore) {
    this.cookieStore = cookieStore;
    this.updates = [];
    this.parts = 0; // chunks of the long reply received, counted as they come
    this.replies = []; // [index, text] of every agent text starting "heard "
    this.idles = []; // [index, stopReason] of every idle state
    this.waiters = [];
  }

  async open() {
    const app = acp.client({ name: "acpio-balancer-test" }).onNotification("session/update", (ctx) => {
      const update = ctx.params.update;
      this.updates.push(update);
      const index = this.updates.length - 1;
      if (update.sessionUpdate === "agent_message_chunk" || update.sessionUpdate === "agent_message") {
        const text = textOf(update.content);
        this.parts += (text.match(/part \d+ of pid \d+; /g) ?? []).length;
        if (text.startsWith("heard ")) this.replies.push([index, text]);
      } else if (update.sessionUpdate === "state_update" && update.state === "idle") {
        this.idles.push([index, update.stopReason]);
      }
      for (const waiter of this.waiters.splice(0)) waiter();
    });
    this.connection = app.connect(openStream(this.cookieStore));
    this.agent = this.connection.agent;
    const params =
      options.protocol === 1
        ? { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: "balancer-test", version: "1" } }
        : { protocolVersion: 2, capabilities: {}, info: { name: "balancer-test", version: "1" } };
    await within(STEP_TIMEOUT_MS, "initialize", this.agent.request("initialize", params));
  }

  async until(what, predicate) {
    const deadline = Date.now() + STEP_TIMEOUT_MS;
    while (!predicate()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${what}: not within ${STEP_TIMEOUT_MS} ms`);
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  agentText(from = 0) {
    return this.updates
      .slice(from)
      .filter((u) => u.sessionUpdate === "agent_message_chunk" || u.sessionUpdate === "agent_message")
      .map((u) => textOf(u.content))
      .join("");
  }

  // Sends a prompt and waits for its turn's end: its reply ("heard <text>"), then (v1) the
  // answer or (v2) the idle state after that reply. Over HTTP the answer, a replay still
  // arriving and the turn's updates can travel on different streams: an idle state of a
  // replayed turn, or the answer, may come before this turn's reply.
  async prompt(sessionId, text) {
    const answer = await within(STEP_TIMEOUT_MS, `prompt ${text}`, this.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] }));
    const reply = () => this.replies.find(([, said]) => said.startsWith(`heard ${text};`));
    await this.until(`the reply to ${text}`, () => reply() !== undefined);
    if (options.protocol === 1) return answer.stopReason;
    const idle = () => this.idles.find(([index]) => index > reply()[0]);
    await this.until(`the end of the turn of ${text}`, () => idle() !== undefined);
    return idle()[1];
  }

  seen() {
    return this.updates.map((u) => [u.sessionUpdate, textOf(u.content)]);
  }
}

// Reopens the session on a new connection: the way every client can today. (A client
// that resumes its stream from a cursor would try that first here, and fall back to this
// when the replica it lands on refuses the cursor.)
function reattach(connection, sessionId) {
  return options.protocol === 1
    ? connection.agent.request("session/load", { sessionId, cwd: options.workdir, mcpServers: [] })
    : connection.agent.request("session/resume", { sessionId, cwd: options.workdir, replayFrom: { type: "start" } });
}

let stdinLines;
function nextStdinLine() {
  stdinLines ??= readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  return stdinLines.next();
}

const result = { steps: [] };
const cookies = new MemoryAcpCookieStore();
const first = new Connection(cookies);
const second = new Connection(cookies);
let status = 0;
try {
  await first.open();
  result.cookieOnFirst = cookies.cookieHeader() ?? null;
  const sessionParams = options.protocol === 1 ? { cwd: options.workdir, mcpServers: [] } : { cwd: options.workdir };
  const { sessionId } = await within(STEP_TIMEOUT_MS, "session/new", first.agent.request("session/new", sessionParams));
  result.sessionId = sessionId;
  result.firstStopReason = await first.prompt(sessionId, "first words");
  result.steps.push("first turn");

  const from = first.updates.length;
  // Never answered: the replica dies in the middle of this turn.
  first.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: `long reply ${options.chunks}` }] }).catch(() => {});
  await first.until(`${options.seen} chunks of the long reply`, () => first.parts >= options.seen);
  const pid = /of pid (\d+); /.exec(first.agentText(from))[1];
  console.log(`MID-REPLY ${sessionId} ${pid}`);
  result.steps.push("mid-reply");
  await nextStdinLine();

  // The replica is gone. What the old connection gets now (the test checks it):
  result.oldConnection = await within(
    STEP_TIMEOUT_MS,
    "a prompt on the old connection",
    first.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "still there?" }] }),
  ).then(
    (answer) => ({ answer }),
    (error) => ({ error: String(error?.message ?? error), code: error?.code ?? null }),
  );
  // Drop the connection and connect again through the balancer.
  first.connection.close();
  await second.open();
  result.cookieOnSecond = cookies.cookieHeader() ?? null;
  await within(STEP_TIMEOUT_MS, "reopening the session", reattach(second, sessionId));
  result.steps.push("reopened");
  result.nextStopReason = await second.prompt(sessionId, "after the failover");
  result.steps.push("prompted again");
  second.connection.close();
} catch (error) {
  result.error = String(error?.stack ?? error);
  status = 1;
}
// Everything each connection ever received, read at the end: nothing it got is left out.
result.first = first.seen();
result.second = second.seen();
fs.writeFileSync(options.result, JSON.stringify(result, null, 2));
process.exit(status);
