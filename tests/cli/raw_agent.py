"""A hand-written ACP agent (no acpio) for the CLI tests, correct by default, broken on demand.

Run it as ``python raw_agent.py [MODE]``. It speaks JSON-RPC over stdio with
threads, like an agent in any language would. A prompt whose text is ``slow``
works for a second (cancellable); any other prompt is answered at once.

Modes, each breaking one rule:

* ``good``: no defect;
* ``garbage-stdout``: prints a greeting to stdout before anything else;
* ``never-idle``: never reports idle at the end of a turn;
* ``ignore-cancel``: finishes its slow turn with ``end_turn`` despite ``session/cancel``;
* ``answer-notifications``: answers every notification with an error;
* ``crash``: fails at start with a traceback on stderr;
* ``linger``: does not exit when its stdin closes;
* ``number-ids``: answers a request whose id is a string of digits with that number;
* ``answer-notification-batch``: answers a batch of only notifications with ``[]``;
* ``refuse-batches``: answers any JSON array with one -32600 with id null (no defect: the
  official TypeScript SDK's documented behaviour, since ACP does not use batches);
* ``answer-batch-items``: answers each entry of any JSON array with its own -32600;
* ``delete-unknown-fails``: offers session/delete, and answers it -32002 for a session
  that never existed.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

MODE = sys.argv[1] if len(sys.argv) > 1 else "good"
SLOW_SECONDS = 1.0
_write_lock = threading.Lock()
_sessions: dict[str, dict[str, Any]] = {}
_counter = [0]


def send(message: object) -> None:
    with _write_lock:
        sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
        sys.stdout.flush()


def reply(request_id: object, result: object) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error(request_id: object, code: int, message: str, data: object = None) -> dict[str, object]:
    body: dict[str, object] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": body}


def update(session_id: str, body: dict[str, object]) -> None:
    send(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": session_id, "update": body},
        }
    )


def next_id(prefix: str) -> str:
    _counter[0] += 1
    return f"{prefix}_{_counter[0]}"


def finish(session_id: str, turn: dict[str, Any], stop_reason: str) -> None:
    with _write_lock:
        if turn["done"]:
            return
        turn["done"] = True
    if MODE == "never-idle":
        return
    update(
        session_id, {"sessionUpdate": "state_update", "state": "idle", "stopReason": stop_reason}
    )


def run_turn(session_id: str, turn: dict[str, Any], text: str) -> None:
    update(
        session_id,
        {
            "sessionUpdate": "user_message",
            "messageId": turn["message_id"],
            "content": [{"type": "text", "text": text}],
        },
    )
    update(session_id, {"sessionUpdate": "state_update", "state": "running"})
    if text == "slow":
        deadline = time.monotonic() + SLOW_SECONDS
        while time.monotonic() < deadline:
            if turn["cancelled"].wait(0.01) and MODE != "ignore-cancel":
                finish(session_id, turn, "cancelled")
                return
    if turn["cancelled"].is_set() and MODE != "ignore-cancel":
        finish(session_id, turn, "cancelled")
        return
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
        requested = params.get("protocolVersion") if isinstance(params, dict) else None
        if not isinstance(requested, int) or requested < 2:
            return error(
                request_id,
                -32022,
                "Unsupported protocol version",
                {"requested": requested, "supported": [2]},
            )
        return reply(
            request_id,
            {
                "protocolVersion": 2,
                "info": {"name": f"raw-agent-{MODE}", "version": "0.0.1"},
                "capabilities": {
                    "session": {"delete": {}} if MODE == "delete-unknown-fails" else {}
                },
            },
        )
    if method == "session/new":
        session_id = next_id("sess")
        _sessions[session_id] = {"turn": None}
        return reply(request_id, {"sessionId": session_id})
    if method == "session/prompt":
        session_id = params["sessionId"]
        text = "".join(block.get("text", "") for block in params.get("prompt", []))
        turn = {"message_id": next_id("user"), "cancelled": threading.Event(), "done": False}
        _sessions[session_id]["turn"] = turn
        send(reply(request_id, {"messageId": turn["message_id"]}))
        threading.Thread(target=run_turn, args=(session_id, turn, text), daemon=True).start()
        return None
    if method == "session/close":
        session = _sessions.pop(params["sessionId"], None)
        if session is not None and session["turn"] is not None and not session["turn"]["done"]:
            session["turn"]["cancelled"].set()
            finish(params["sessionId"], session["turn"], "cancelled")
        return reply(request_id, {})
    if method == "session/delete" and MODE == "delete-unknown-fails":
        if params["sessionId"] not in _sessions:
            return error(
                request_id, -32002, "Resource not found", {"sessionId": params["sessionId"]}
            )
        _sessions.pop(params["sessionId"])
        return reply(request_id, {})
    return error(request_id, -32601, f"Method not found: {method}")


def handle_notification(method: str, params: Any) -> None:
    if MODE == "answer-notifications":
        send(error(None, -32601, f"Method not found: {method}"))
    if method == "session/cancel":
        session = _sessions.get(params.get("sessionId")) if isinstance(params, dict) else None
        if session is not None and session["turn"] is not None:
            session["turn"]["cancelled"].set()


def handle(message: Any) -> dict[str, object] | None:
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return error(None, -32600, "Invalid request")
    if "id" in message:
        request_id = message["id"]
        if MODE == "number-ids" and isinstance(request_id, str) and request_id.isdigit():
            request_id = int(request_id)
        return handle_request(request_id, message["method"], message.get("params"))
    handle_notification(message["method"], message.get("params"))
    return None


def main() -> None:
    if MODE == "crash":
        sys.stderr.write("Traceback (most recent call last):\nRuntimeError: no API key set\n")
        raise SystemExit(3)
    if MODE == "garbage-stdout":
        print("Hello! Raw agent starting up...", flush=True)
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            send(error(None, -32700, "Parse error"))
            continue
        if isinstance(message, list):
            if MODE == "refuse-batches":
                send(error(None, -32600, "Invalid request: JSON-RPC batches are not supported"))
                continue
            if MODE == "answer-batch-items":
                for _entry in message:
                    send(error(None, -32600, "Invalid request: batch entry refused"))
                continue
            if not message:
                send(error(None, -32600, "Empty batch"))
                continue
            answers = [answer for entry in message if (answer := handle(entry)) is not None]
            if answers or MODE == "answer-notification-batch":
                send(answers)
            continue
        answer = handle(message)
        if answer is not None:
            send(answer)
    if MODE == "linger":
        time.sleep(30)


if __name__ == "__main__":
    main()
