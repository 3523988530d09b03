"""A hand-written ACP agent (no acpio) that breaks one conformance rule on purpose.

Run it as ``python wrong_agent.py MODE``; MODE names the `acpio.testing.RULES` ID it breaks
(``good`` breaks none). It speaks newline-delimited JSON-RPC over stdio with threads, like an
agent in any language would, and is written without acpio's agent framework so that it can be
wrong. A prompt is echoed, answered with one message chunk and ended with ``end_turn``; a prompt
whose text is ``wait`` works until ``session/cancel`` or ``session/close`` ends it.
"""

from __future__ import annotations

import json
import sys
import threading
from typing import Any

MODE = sys.argv[1] if len(sys.argv) > 1 else "good"
WAIT_LIMIT = 10.0  # a "wait" turn never outlives a test that forgot to cancel it
_write_lock = threading.Lock()
_sessions: dict[str, dict[str, Any]] = {}
_pending: dict[int, tuple[threading.Event, list[object]]] = {}
_counter = [0]
_status_answered = threading.Event()

DIFF_PATCH = (
    "diff --git /p/a.py /p/a.py\nindex 1..2 100644\n--- /p/a.py\n+++ /p/a.py\n@@ -1 +1 @@\n-a\n+b\n"
)

# Extra session updates sent while a turn runs, one list per mode; each breaks its rule only.
EXTRAS: dict[str, list[dict[str, object]]] = {
    "schema": [{"sessionUpdate": "session_info_update", "title": 42}],
    "custom-values": [
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c1",
            "title": "t",
            "kind": "compile",
            "status": "completed",
        }
    ],
    "absolute-paths": [
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c1",
            "title": "Read",
            "status": "completed",
            "locations": [{"path": "src/main.py"}],
        }
    ],
    "tool-call-ended": [
        # Opened and never ended: the client shows it running forever.
        {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": "Read"},
    ],
    "base64": [
        {"sessionUpdate": "terminal_update", "terminalId": "t1", "command": "ls", "cwd": "/"},
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": "not base64!"},
        {"sessionUpdate": "terminal_update", "terminalId": "t1", "exitStatus": {"exitCode": 0}},
    ],
    "patch-consistency": [
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c1",
            "title": "Edit",
            "status": "completed",
            "content": [
                {
                    "type": "diff",
                    "changes": [{"operation": "modify", "path": "/p/other.py"}],
                    "patch": {"format": "git_patch", "text": DIFF_PATCH},
                }
            ],
        }
    ],
    "tool-call-title": [
        {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "in_progress"},
        {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed"},
    ],
    "config-and-commands": [
        {
            "sessionUpdate": "config_option_update",
            "configOptions": [
                {
                    "type": "select",
                    "configId": "model",
                    "name": "Model",
                    "currentValue": "gpt-9",
                    "options": [{"value": "fast", "name": "Fast"}],
                }
            ],
        },
        {
            "sessionUpdate": "available_commands_update",
            "availableCommands": [{"type": "command", "name": "two words", "description": "bad"}],
        },
    ],
    "terminal-id-reuse": [
        {
            "sessionUpdate": "terminal_update",
            "terminalId": "t1",
            "command": "make",
            "cwd": "/",
            "exitStatus": {"exitCode": 0},
        },
        {"sessionUpdate": "terminal_update", "terminalId": "t1", "command": "make test"},
        {"sessionUpdate": "terminal_update", "terminalId": "t1", "exitStatus": {"exitCode": 0}},
    ],
}


def send(message: object) -> None:
    with _write_lock:
        sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
        sys.stdout.flush()


def send_lines(*messages: object) -> None:
    text = "".join(json.dumps(message, separators=(",", ":")) + "\n" for message in messages)
    with _write_lock:
        sys.stdout.write(text)
        sys.stdout.flush()


def reply(request_id: object, result: object) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error(request_id: object, code: int, message: str) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def update(session_id: str, body: dict[str, object]) -> None:
    send(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": session_id, "update": body},
        }
    )


def state(session_id: str, name: str, **fields: object) -> None:
    update(session_id, {"sessionUpdate": "state_update", "state": name, **fields})


def next_id(prefix: str) -> str:
    _counter[0] += 1
    return f"{prefix}_{_counter[0]}"


def ask(method: str, params: object, session_id: str) -> object:
    """Send a request to the user, report requires_action, block until the main loop reads
    the answer."""
    _counter[0] += 1
    request_id = _counter[0]
    answered = threading.Event()
    _pending[request_id] = (answered, [])
    blocked = {"sessionUpdate": "state_update", "state": "requires_action"}
    # One write for both lines, so the client sees requires_action before it can answer.
    send_lines(
        {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params},
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": session_id, "update": blocked},
        },
    )
    answered.wait(WAIT_LIMIT)
    return _pending.pop(request_id)[1]


def finish(session_id: str, turn: dict[str, Any], stop_reason: str) -> None:
    with _write_lock:
        if turn["done"]:
            return
        turn["done"] = True
    state(session_id, "idle", stopReason=stop_reason)


def run_turn(session_id: str, turn: dict[str, Any], text: str) -> None:
    echoed_id = "not-the-prompt" if MODE == "prompt-message-id" else turn["message_id"]
    update(
        session_id,
        {
            "sessionUpdate": "user_message",
            "messageId": echoed_id,
            "content": [{"type": "text", "text": text}],
        },
    )
    state(session_id, "running")
    if MODE == "turn-lifecycle":
        # Claims to wait for the user without asking anything.
        state(session_id, "requires_action")
        state(session_id, "running")
    if text == "wait":
        if MODE == "cancel-silence":
            # Ignores session/cancel: it works on until a later request (_x/status) is
            # answered, which proves on the wire that the cancel was read, then ends normally.
            _status_answered.wait(WAIT_LIMIT)
            update(
                session_id,
                {
                    "sessionUpdate": "agent_message_chunk",
                    "messageId": next_id("msg"),
                    "content": {"type": "text", "text": "done anyway"},
                },
            )
            finish(session_id, turn, "end_turn")
        else:
            turn["cancelled"].wait(WAIT_LIMIT)
            finish(session_id, turn, "cancelled")
        return
    for extra in EXTRAS.get(MODE, []):
        update(session_id, extra)
    if MODE == "methods":
        send({"jsonrpc": "2.0", "method": "editor/flash", "params": {"sessionId": session_id}})
    if MODE == "permission-options":
        options = [
            {"optionId": "same", "name": "Allow", "kind": "allow_once"},
            {"optionId": "same", "name": "Reject", "kind": "reject_once"},
        ]
        params = {"sessionId": session_id, "title": "Allow?", "options": options}
        ask("session/request_permission", params, session_id)  # whatever the answer
        state(session_id, "running")
    if MODE == "background-work":
        state(session_id, "running", background=[{"type": "terminal", "terminalId": "ghost"}])
    update(
        session_id,
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": next_id("msg"),
            "content": {"type": "text", "text": f"you said: {text}"},
        },
    )
    finish(session_id, turn, "end_turn")


def handle_request(request_id: object, method: str, params: Any) -> dict[str, object] | None:
    if method == "initialize":
        return reply(
            request_id,
            {
                "protocolVersion": 2,
                "info": {"name": f"wrong-agent-{MODE}", "version": "0.0.1"},
                "capabilities": {"session": {}},
            },
        )
    if method == "session/new":
        session_id = next_id("sess")
        _sessions[session_id] = {"turn": None}
        answer = reply(request_id, {"sessionId": session_id})
        if MODE == "jsonrpc":
            send(answer)  # answered twice
        return answer
    if method == "session/prompt":
        session_id = params["sessionId"]
        text = "".join(block.get("text", "") for block in params.get("prompt", []))
        turn: dict[str, Any] = {
            "message_id": next_id("user"),
            "cancelled": threading.Event(),
            "done": False,
        }
        _sessions[session_id]["turn"] = turn
        send(reply(request_id, {"messageId": turn["message_id"]}))
        threading.Thread(target=run_turn, args=(session_id, turn, text), daemon=True).start()
        return None
    if method == "session/close":
        session = _sessions.pop(params["sessionId"], None)
        active = session["turn"] if session is not None else None
        if active is not None and not active["done"]:
            active["cancelled"].set()
            finish(params["sessionId"], active, "cancelled")
        if MODE == "session-close":
            send(reply(request_id, {}))
            # Still talks about the session it was just told to forget.
            update(params["sessionId"], {"sessionUpdate": "session_info_update", "title": "late"})
            return None
        return reply(request_id, {})
    if method == "_x/id":
        # Loses the id's type: the number 5 comes back as the string "5".
        send(reply(str(request_id) if MODE == "id-fidelity" else request_id, {}))
        update(params["sessionId"], {"sessionUpdate": "session_info_update", "title": "answered"})
        return None
    if method == "_x/status":
        send(reply(request_id, {}))
        _status_answered.set()
        return None
    return error(request_id, -32601, f"Method not found: {method}")


def handle_notification(method: str, params: Any) -> None:
    if MODE == "no-reply-to-notification":
        send(error(None, -32601, f"Method not found: {method}"))
    if method == "session/cancel":
        session = _sessions.get(str(params.get("sessionId"))) if isinstance(params, dict) else None
        if session is not None and session["turn"] is not None:
            session["turn"]["cancelled"].set()


def handle(message: Any) -> dict[str, object] | None:
    if "method" not in message:
        entry = _pending.get(message.get("id"))
        if entry is not None:
            entry[1].append(message)
            entry[0].set()
        return None
    if "id" in message:
        return handle_request(message["id"], message["method"], message.get("params"))
    handle_notification(message["method"], message.get("params"))
    return None


def main() -> None:
    if MODE == "stdout":
        print("Hello! Wrong agent starting up...", flush=True)
    for line in sys.stdin:
        answer = handle(json.loads(line))
        if answer is not None:
            send(answer)


if __name__ == "__main__":
    main()
