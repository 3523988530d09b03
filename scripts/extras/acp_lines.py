"""A client made of plain JSON lines (standard library only) for scripts/extras.sh.

Usage: ``python acp_lines.py [--protocol 1|2] [--prompt TEXT --expect TEXT]...
[--mcp-stdio NAME=COMMAND] -- AGENT COMMAND...``

It starts the agent, sends ``initialize``, ``session/new`` (cwd: a fresh temporary
directory, holding ``notes.txt``), then each prompt in turn, and waits for the turn to end
(v1: the answer to ``session/prompt``; v2: an idle ``state_update``). Permission requests are
answered with the first allow option. The agent's message text of each turn must contain that
turn's ``--expect`` text. Then stdin is closed and the agent must exit by itself. It uses nothing
of acpio, so it can drive an agent from a virtual environment that has only one extra.
Exit status 0 when every turn ended as expected, 1 (with the reason on stderr) otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
from typing import Any

TURN_TIMEOUT = 120.0
EXIT_TIMEOUT = 10.0


class Failure(Exception):
    """The agent did not do what the script expects."""


class Agent:
    """The agent process, its stdout read line by line on a thread."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> int:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        return self.next_id

    def receive(self) -> dict[str, Any]:
        try:
            line = self.lines.get(timeout=TURN_TIMEOUT)
        except queue.Empty:
            raise Failure(f"the agent wrote nothing for {TURN_TIMEOUT:g}s") from None
        if line is None:
            raise Failure(f"the agent closed its stdout (exit code {self.process.wait()})")
        message = json.loads(line)
        if not isinstance(message, dict):
            raise Failure(f"not a JSON-RPC message: {line!r}")
        return message


def answer_request(agent: Agent, message: dict[str, Any]) -> None:
    """Answer a request of the agent: allow permissions, refuse the rest (none is offered)."""
    if message["method"] == "session/request_permission":
        options = message["params"]["options"]
        chosen = next(o for o in options if o["kind"] in ("allow_once", "allow_always"))
        outcome = {"outcome": "selected", "optionId": chosen["optionId"]}
        agent.send({"id": message["id"], "result": {"outcome": outcome}})
    else:
        error = {"code": -32601, "message": f"Method not found: {message['method']}"}
        agent.send({"id": message["id"], "error": error})


def wait_answer(agent: Agent, request_id: int, on_update: list[dict[str, Any]]) -> Any:
    """Read until the answer to ``request_id``; collect session updates on the way."""
    while True:
        message = agent.receive()
        if "method" in message:
            if "id" in message:
                answer_request(agent, message)
            elif message["method"] == "session/update":
                on_update.append(message["params"]["update"])
            continue
        if message.get("id") == request_id:
            if "error" in message:
                raise Failure(f"request {request_id} failed: {message['error']}")
            return message["result"]
        raise Failure(f"an answer nobody asked for: {message}")


def text_of(updates: list[dict[str, Any]]) -> str:
    """The text of the agent's messages and message chunks, in order."""
    text = ""
    for update in updates:
        kind = update.get("sessionUpdate")
        if kind == "agent_message_chunk":
            text += update["content"].get("text", "")
        elif kind == "agent_message":
            text += "".join(block.get("text", "") for block in update.get("content") or [])
    return text


def run(args: argparse.Namespace, cwd: str) -> None:
    agent = Agent(args.command)
    try:
        converse(agent, args, cwd)
    finally:
        if agent.process.poll() is None:
            agent.process.kill()
            agent.process.wait()


def converse(agent: Agent, args: argparse.Namespace, cwd: str) -> None:
    version = args.protocol
    updates: list[dict[str, Any]] = []
    if version == 1:
        init = {"protocolVersion": 1, "clientCapabilities": {}, "clientInfo": CLIENT}
    else:
        init = {"protocolVersion": version, "capabilities": {}, "info": CLIENT}
    result = wait_answer(agent, agent.request("initialize", init), updates)
    if result["protocolVersion"] != version:
        raise Failure(f"asked for protocol {version}, got {result['protocolVersion']}")
    servers = []
    for entry in args.mcp_stdio:
        name, _, command = entry.partition("=")
        argv = command.split()
        server = {"name": name, "command": argv[0], "args": argv[1:], "env": []}
        servers.append(server if version == 1 else {"type": "stdio", **server})
    new = {"cwd": cwd, "mcpServers": servers}
    session = wait_answer(agent, agent.request("session/new", new), updates)["sessionId"]
    if len(args.expect) != len(args.prompt):
        raise Failure("give one --expect per --prompt")
    for prompt, expected in zip(args.prompt, args.expect, strict=True):
        updates.clear()
        params = {"sessionId": session, "prompt": [{"type": "text", "text": prompt}]}
        answer = wait_answer(agent, agent.request("session/prompt", params), updates)
        if version == 1:
            stop_reason = answer["stopReason"]
        else:
            while not any(u.get("state") == "idle" for u in updates):
                message = agent.receive()
                if "id" in message and "method" in message:
                    answer_request(agent, message)
                elif message.get("method") == "session/update":
                    updates.append(message["params"]["update"])
            stop_reason = next(u for u in updates if u.get("state") == "idle")["stopReason"]
        text = text_of(updates)
        kinds = sorted({u.get("sessionUpdate", "?") for u in updates})
        print(f"v{version} {prompt!r}: {stop_reason}, updates {kinds}, text {text[:120]!r}")
        if stop_reason != "end_turn" or expected not in text:
            raise Failure(f"expected end_turn and {expected!r} in the text, got {stop_reason}")
    assert agent.process.stdin is not None
    agent.process.stdin.close()
    try:
        agent.process.wait(EXIT_TIMEOUT)
    except subprocess.TimeoutExpired:
        agent.process.kill()
        raise Failure(f"the agent did not exit within {EXIT_TIMEOUT:g}s of end of input") from None


CLIENT = {"name": "acp-lines", "version": "0.1.0"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--protocol", type=int, default=2)
    parser.add_argument("--prompt", action="append", default=[])
    parser.add_argument("--expect", action="append", default=[])
    parser.add_argument("--mcp-stdio", action="append", default=[])
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="acp-lines-") as directory:
        cwd = os.path.realpath(directory)
        with open(os.path.join(cwd, "notes.txt"), "w") as notes:
            notes.write("The notes of the extras check.\n")
        try:
            run(args, cwd)
        except (Failure, KeyError, StopIteration, json.JSONDecodeError) as exc:
            print(f"FAIL: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
