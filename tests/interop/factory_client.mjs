// Drives examples/shell_agent.py with acp-factory, a third-party ACP client library, as its
// users drive an agent: AgentFactory.register + spawn, createSession, and session.prompt(),
// whose async iterator is all an acp-factory user sees of the turn.
//
// Usage: node factory_client.mjs --python <interpreter> --examples <dir> --cwd <dir>
//                                --scenario rejected|exit_nonzero
//
// `rejected` prompts `run touch <cwd>/must-not-exist` and rejects the permission request;
// `exit_nonzero` prompts `run exit 3` and allows it. The program folds the updates the
// iterator yielded into each tool call's state (a `tool_call` sets the call, a
// `tool_call_update` overwrites the fields it carries) and prints one JSON object: the
// permission requests acp-factory passed to its callback, the tool calls as its user ends up
// seeing them, the prompt's stop reason, and whether the agent was still running 5 s after
// `agent.close()`. acp-factory inherits the agent's stderr; the caller checks it stays empty.
//
// Exit status: 0 when the turn ran (whatever it showed), 1 on an error, 2 on a usage error.

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { AgentFactory } from "acp-factory";

const TURN_LIMIT_MS = 20_000;
const EXIT_LIMIT_MS = 5_000;
const HERE = path.dirname(fileURLToPath(import.meta.url));

function parseArgs(argv) {
  const options = {};
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`missing value for ${flag}`);
    if (!["--python", "--examples", "--cwd", "--scenario"].includes(flag)) {
      throw new Error(`unknown flag ${flag}`);
    }
    options[flag.slice(2)] = value;
  }
  for (const key of ["python", "examples", "cwd", "scenario"]) {
    if (!options[key]) throw new Error(`--${key} is required`);
  }
  if (!["rejected", "exit_nonzero"].includes(options.scenario)) {
    throw new Error(`unknown scenario ${options.scenario}`);
  }
  return options;
}

function version(pkg) {
  const file = path.join(HERE, "node_modules", ...pkg.split("/"), "package.json");
  return JSON.parse(fs.readFileSync(file, "utf8")).version;
}

function within(ms, what, promise) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not done within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function main() {
  let options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
  const allow = options.scenario === "exit_nonzero";
  const prompt = allow
    ? "run exit 3"
    : `run touch ${path.join(options.cwd, "must-not-exist")}`;

  AgentFactory.register("acpio-shell", {
    command: options.python,
    args: [path.join(options.examples, "shell_agent.py")],
    env: {},
  });
  const permissions = [];
  const agent = await AgentFactory.spawn("acpio-shell", {
    permissionMode: "callback",
    onPermissionRequest: async (request) => {
      permissions.push({
        toolCallId: request.toolCall.toolCallId,
        title: request.toolCall.title ?? null,
        kind: request.toolCall.kind ?? null,
        options: request.options.map((o) => o.kind),
      });
      const wanted = allow ? ["allow_once", "allow_always"] : ["reject_once", "reject_always"];
      const option = request.options.find((o) => wanted.includes(o.kind));
      if (!option) throw new Error(`no ${wanted[0]} option in ${JSON.stringify(request.options)}`);
      return { outcome: { outcome: "selected", optionId: option.optionId } };
    },
  });

  // session.prompt() keeps the answer to itself; the stop reason is read off the promise
  // the connection returns, which is handed on unchanged, so the iterator's race between
  // that answer and the updates runs exactly as in acp-factory alone.
  let stopReason = null;
  const connection = agent.getConnection();
  const sendPrompt = connection.prompt.bind(connection);
  connection.prompt = (params) => {
    const answer = sendPrompt(params);
    answer.then(
      (result) => {
        stopReason = result.stopReason;
      },
      () => {},
    );
    return answer;
  };

  const calls = new Map();
  const updates = [];
  try {
    const session = await within(TURN_LIMIT_MS, "session/new", agent.createSession(options.cwd));
    const turn = (async () => {
      for await (const update of session.prompt(prompt)) {
        updates.push({ sessionUpdate: update.sessionUpdate, status: update.status ?? null });
        if (update.sessionUpdate === "tool_call") {
          calls.set(update.toolCallId, { ...update });
        } else if (update.sessionUpdate === "tool_call_update") {
          const call = calls.get(update.toolCallId) ?? { toolCallId: update.toolCallId };
          for (const [key, value] of Object.entries(update)) {
            if (value !== undefined && value !== null) call[key] = value;
          }
          calls.set(update.toolCallId, call);
        }
      }
    })();
    await within(TURN_LIMIT_MS, "the turn", turn);
  } finally {
    await agent.close();
  }
  const exited = Date.now() + EXIT_LIMIT_MS;
  while (agent.isRunning() && Date.now() < exited) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const result = {
    acpFactory: version("acp-factory"),
    sdk: version("acp-factory/node_modules/@agentclientprotocol/sdk"),
    scenario: options.scenario,
    permissions,
    toolCalls: [...calls.values()].map((c) => ({
      toolCallId: c.toolCallId,
      title: c.title ?? null,
      kind: c.kind ?? null,
      status: c.status ?? null,
      content: c.content ?? [],
    })),
    updates,
    stopReason,
    agentRunning: agent.isRunning(),
  };
  // agent.close() leaves its own 5 s timer running: exit once the result is written.
  process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
}

main().catch((error) => {
  process.stderr.write(`factory_client: ${error.stack ?? error}\n`);
  process.exit(1);
});
