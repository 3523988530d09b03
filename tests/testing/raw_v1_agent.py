"""A hand-written ACP v1 agent (no acpio) for the v1 client tests, correct by default.

Run it as ``python raw_v1_agent.py [MODE]``. It speaks the official v1 wire
format over stdio with threads, as an agent in any language would: a turn's
updates, then the answer ``{stopReason}`` to its ``session/prompt``. The prompt
text picks the scenario:

* ``hello``: two agent message chunks and a thought;
* ``tool``: a tool call created, patched (content replaced whole), finished with
  a diff; a plan, usage, commands, session info, a mode change;
* ``ask``: a tool call that asks permission, completed if allowed, failed if
  rejected, the turn cancelled if the permission was cancelled;
* ``slow``: works until cancelled (answer ``cancelled``);
* ``term``: runs ``python -c print(...)`` through the client's terminal;
* ``run COMMAND``: runs ``sh -c COMMAND`` through the client's terminal;
* ``fs PATH``: reads PATH through the client and writes PATH.out;
* anything else: echoes it.

``session/load`` replays the session's history (v1 form) before answering.
Other modes break one v1 rule each (see ``WRONG``).
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
from typing import Any

MODE = sys.argv[1] if len(sys.argv) > 1 else "good"
WRONG = {
    "v2-update": "sends a draft v2 state_update",
    "update-before-create": "patches a tool call never created with tool_call",
    "tool-call-twice": "creates the same toolCallId twice",
    "v2-answer": "answers session/prompt with the draft v2 {messageId}",
    "double-answer": "answers one session/prompt twice",
    "ignore-cancel": "answers end_turn after a cancel it read",
    "after-cancel": "sends a message chunk after the cancelled answer",
}
_lock = threading.Lock()
_ids = itertools.count(1)
_sessions: dict[str, dict[str, Any]] = {}
_pending: dict[int, tuple[threading.Event, list[Any]]] = {}
_client: dict[str, Any] = {}


def send(message: object) -> None:
    with _lock:
        sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
        sys.stdout.flush()


def reply(request_id: object, result: object) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def error(request_id: object, code: int, message: str) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})


def update(session_id: str, body: dict[str, Any], record: bool = True) -> None:
    if record:
        _sessions[session_id]["history"].append(body)
    send(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": session_id, "update": body},
        }
    )


def call(method: str, params: dict[str, Any]) -> Any:
    """Send a request to the client and wait for its answer (result, or the error object)."""
    request_id = next(_ids)
    done = threading.Event()
    box: list[Any] = []
    _pending[request_id] = (done, box)
    send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    done.wait()
    return box[0]


def text_chunk(kind: str, text: str) -> dict[str, Any]:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


def tool_scenario(session_id: str, cwd: str) -> str:
    if MODE == "update-before-create":
        update(session_id, {"sessionUpdate": "tool_call_update", "toolCallId": "t1"})
    update(
        session_id,
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "t1",
            "title": "Edit notes.txt",
            "kind": "edit",
            "status": "pending",
            "locations": [{"path": f"{cwd}/notes.txt"}],
            "rawInput": {"path": "notes.txt"},
        },
    )
    if MODE == "tool-call-twice":
        update(session_id, {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Again"})
    update(
        session_id,
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t1",
            "status": "in_progress",
            "content": [{"type": "content", "content": {"type": "text", "text": "editing"}}],
        },
    )
    update(
        session_id,
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t1",
            "status": "completed",
            "content": [
                {"type": "content", "content": {"type": "text", "text": "edited"}},
                {
                    "type": "diff",
                    "path": f"{cwd}/notes.txt",
                    "oldText": "old\n",
                    "newText": "new\n",
                },
            ],
            "rawOutput": {"ok": True},
        },
    )
    update(
        session_id,
        {
            "sessionUpdate": "plan",
            "entries": [
                {"content": "edit the notes", "priority": "high", "status": "completed"},
                {"content": "review", "priority": "low", "status": "pending"},
            ],
        },
    )
    update(session_id, {"sessionUpdate": "usage_update", "used": 120, "size": 1000})
    update(
        session_id,
        {
            "sessionUpdate": "available_commands_update",
            "availableCommands": [
                {"name": "web", "description": "Search the web", "input": {"hint": "query"}}
            ],
        },
    )
    update(
        session_id,
        {
            "sessionUpdate": "config_option_update",
            "configOptions": [
                {
                    "id": "model",
                    "name": "Model",
                    "type": "select",
                    "currentValue": "fast",
                    "options": [
                        {"value": "fast", "name": "Fast"},
                        {"value": "deep", "name": "Deep"},
                    ],
                }
            ],
        },
    )
    update(session_id, {"sessionUpdate": "session_info_update", "title": "Notes"})
    mode = "fly" if MODE == "unknown-mode" else "code"  # "fly" was never offered
    update(session_id, {"sessionUpdate": "current_mode_update", "currentModeId": mode})
    update(session_id, text_chunk("agent_message_chunk", "done"))
    return "end_turn"


def ask_scenario(session_id: str) -> str:
    update(
        session_id,
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "run1",
            "title": "Run rm -rf build",
            "kind": "execute",
            "status": "pending",
            "rawInput": {"command": "rm -rf build"},
        },
    )
    answer = call(
        "session/request_permission",
        {
            "sessionId": session_id,
            "toolCall": {"toolCallId": "run1"},
            "options": [
                {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
            ],
        },
    )
    outcome = answer.get("outcome", {}) if isinstance(answer, dict) else {}
    if outcome.get("outcome") == "cancelled":
        update(
            session_id,
            {"sessionUpdate": "tool_call_update", "toolCallId": "run1", "status": "failed"},
        )
        return "end_turn" if MODE == "ignore-cancel" else "cancelled"
    allowed = outcome.get("optionId") == "allow"
    update(
        session_id,
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "run1",
            "status": "completed" if allowed else "failed",
            "content": [
                {
                    "type": "content",
                    "content": {"type": "text", "text": "ran" if allowed else "denied"},
                }
            ],
        },
    )
    return "end_turn"


def term_scenario(session_id: str) -> str:
    if not _client.get("terminal"):
        update(session_id, text_chunk("agent_message_chunk", "no terminal"))
        return "end_turn"
    created = call(
        "terminal/create",
        {
            "sessionId": session_id,
            "command": sys.executable,
            "args": ["-c", "print('hi from the terminal'); print('x' * 50)"],
            "outputByteLimit": 40,
        },
    )
    terminal_id = created["terminalId"]
    update(
        session_id,
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "term1",
            "title": "Run python",
            "kind": "execute",
            "status": "in_progress",
            "content": [{"type": "terminal", "terminalId": terminal_id}],
        },
    )
    exit_status = call(
        "terminal/wait_for_exit", {"sessionId": session_id, "terminalId": terminal_id}
    )
    output = call("terminal/output", {"sessionId": session_id, "terminalId": terminal_id})
    call("terminal/release", {"sessionId": session_id, "terminalId": terminal_id})
    update(
        session_id,
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "term1",
            "status": "completed",
            "rawOutput": {"exit": exit_status, "truncated": output["truncated"]},
        },
    )
    update(session_id, text_chunk("agent_message_chunk", output["output"]))
    return "end_turn"


def run_scenario(session_id: str, command: str) -> str:
    created = call(
        "terminal/create", {"sessionId": session_id, "command": "sh", "args": ["-c", command]}
    )
    terminal_id = created["terminalId"]
    update(
        session_id,
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "run2",
            "title": f"Run `{command}`",
            "kind": "execute",
            "status": "in_progress",
            "content": [{"type": "terminal", "terminalId": terminal_id}],
        },
    )
    call("terminal/wait_for_exit", {"sessionId": session_id, "terminalId": terminal_id})
    call("terminal/output", {"sessionId": session_id, "terminalId": terminal_id})
    call("terminal/release", {"sessionId": session_id, "terminalId": terminal_id})
    update(
        session_id,
        {"sessionUpdate": "tool_call_update", "toolCallId": "run2", "status": "completed"},
    )
    return "end_turn"


def fs_scenario(session_id: str, path: str) -> str:
    read = call("fs/read_text_file", {"sessionId": session_id, "path": path})
    content = read.get("content", "") if isinstance(read, dict) else ""
    call(
        "fs/write_text_file",
        {"sessionId": session_id, "path": path + ".out", "content": content.upper()},
    )
    update(session_id, text_chunk("agent_message_chunk", f"read: {content}"))
    return "end_turn"


def run_turn(request_id: object, session_id: str, text: str) -> None:
    # A prompt sent while another runs waits for it: turns are answered in order.
    with _sessions[session_id]["turn_lock"]:
        turn(request_id, session_id, text)


def turn(request_id: object, session_id: str, text: str) -> None:
    session = _sessions[session_id]
    cancelled: threading.Event = session["cancelled"]
    session["history"].append(text_chunk("user_message_chunk", text))
    if MODE == "v2-update":
        update(session_id, {"sessionUpdate": "state_update", "state": "running"}, record=False)
    stop_reason = "end_turn"
    if text == "hello":
        update(session_id, text_chunk("agent_thought_chunk", "greeting"))
        update(session_id, text_chunk("agent_message_chunk", "Hello"))
        update(session_id, text_chunk("agent_message_chunk", " world"))
    elif text == "tool":
        stop_reason = tool_scenario(session_id, session["cwd"])
    elif text == "ask":
        stop_reason = ask_scenario(session_id)
    elif text == "slow":
        update(session_id, text_chunk("agent_message_chunk", "working"))
        cancelled.wait(30)
        stop_reason = "end_turn" if MODE == "ignore-cancel" else "cancelled"
    elif text == "term":
        stop_reason = term_scenario(session_id)
    elif text.startswith("run ") and _client.get("terminal"):
        stop_reason = run_scenario(session_id, text[4:])
    elif text.startswith("fs "):
        stop_reason = fs_scenario(session_id, text[3:])
    else:
        update(session_id, text_chunk("agent_message_chunk", f"you said: {text}"))
    if cancelled.is_set() and MODE != "ignore-cancel":
        stop_reason = "cancelled"
    cancelled.clear()
    if MODE == "v2-answer":
        reply(request_id, {"messageId": "m1"})
        return
    if MODE == "double-answer":
        # Both answers in one write: a reply from the reading thread (the test's next
        # request) must not come between them, or the test could stop reading first.
        answer = json.dumps(
            {"jsonrpc": "2.0", "id": request_id, "result": {"stopReason": stop_reason}}
        )
        with _lock:
            sys.stdout.write(f"{answer}\n{answer}\n")
            sys.stdout.flush()
        return
    reply(request_id, {"stopReason": stop_reason})
    if MODE == "after-cancel" and stop_reason == "cancelled":
        update(session_id, text_chunk("agent_message_chunk", "one more thing"))


def handle_request(request_id: object, method: str, params: Any) -> None:
    if method == "initialize":
        capabilities = params.get("clientCapabilities") or {}
        _client["terminal"] = capabilities.get("terminal") is True
        reply(
            request_id,
            {
                "protocolVersion": 1,
                "agentCapabilities": {"loadSession": True},
                "authMethods": [],
                "agentInfo": {"name": f"raw-v1-agent-{MODE}", "version": "0.0.1"},
            },
        )
    elif method == "session/new":
        session_id = f"sess_{next(_ids)}"
        _sessions[session_id] = {
            "cwd": params["cwd"],
            "history": [],
            "cancelled": threading.Event(),
            "turn_lock": threading.Lock(),
        }
        reply(
            request_id,
            {
                "sessionId": session_id,
                "modes": {
                    "currentModeId": "ask",
                    "availableModes": [
                        {"id": "ask", "name": "Ask"},
                        {"id": "code", "name": "Code"},
                    ],
                },
            },
        )
    elif method == "session/load":
        session = _sessions.get(params["sessionId"])
        if session is None:
            error(request_id, -32002, "Session not found")
            return
        for body in session["history"]:
            update(params["sessionId"], body, record=False)
        reply(request_id, {})
    elif method == "session/prompt":
        text = "".join(block.get("text", "") for block in params.get("prompt", []))
        args = (request_id, params["sessionId"], text)
        threading.Thread(target=run_turn, args=args, daemon=True).start()
    else:
        error(request_id, -32601, f"Method not found: {method}")


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        if "method" not in message:
            waiter = _pending.pop(message.get("id"), None)
            if waiter is not None:
                waiter[1].append(message.get("result", message.get("error")))
                waiter[0].set()
        elif "id" in message:
            handle_request(message["id"], message["method"], message.get("params"))
        elif message["method"] == "session/cancel":
            session = _sessions.get(message["params"]["sessionId"])
            if session is not None:
                session["cancelled"].set()


if __name__ == "__main__":
    main()
