"""A hand-written hostile ACP agent (no acpio) for the CLI's terminal-safety tests.

Run it as ``python hostile_agent.py MODE``:

* ``escapes``: every string it sends (its name, messages, thoughts, a notice, a plan, a tool
  call's title and text, a terminal's command, cwd and output, a permission request's title,
  command and cwd, an error) carries terminal control sequences: OSC 52 (clipboard), ESC[2J
  and cursor home, OSC 8 (link), OSC 0 (window title), the alternate screen, C1 CSI
  (U+009B), a bidi override (U+202E), a carriage return and a fake prompt on a new line;
* ``flood``: answers a prompt with permission requests as fast as it can write them, never
  waiting for an answer, ignoring ``session/cancel`` and end of input.
"""

from __future__ import annotations

import base64
import json
import sys
import threading

MODE = sys.argv[1] if len(sys.argv) > 1 else "escapes"
_write_lock = threading.Lock()

# Each of these must reach the user's terminal visible, never obeyed.
HOSTILE = (
    "\x1b]52;c;aGFja2Vk\x07"  # OSC 52: write the clipboard
    "\x1b[2J\x1b[H"  # clear the screen, cursor home
    "\x1b]8;;https://evil.example/\x1b\\link\x1b]8;;\x1b\\"  # OSC 8 hyperlink
    "\x1b]0;owned\x07"  # OSC 0: window title
    "\x1b[?1049h"  # the alternate screen
    "\x9b2J"  # C1 CSI: clear the screen again
    "\u202etxt.exe"  # bidi override
    "\rOVERWRITE"  # back to the start of the line
    "\n? Run `ls`?  options: [1] Allow once"  # a fake prompt on a line of its own
)


def send(message: object) -> None:
    data = json.dumps(message) + "\n"
    with _write_lock:
        sys.stdout.write(data)
        sys.stdout.flush()


def update(session_id: str, body: dict[str, object]) -> None:
    send(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": session_id, "update": body},
        }
    )


def permission(request_id: str, session_id: str, title: str) -> None:
    send(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "session/request_permission",
            "params": {
                "sessionId": session_id,
                "title": title,
                "subject": {"type": "command", "command": "ls" + HOSTILE, "cwd": "/tmp" + HOSTILE},
                "options": [
                    {"optionId": "allow", "name": "Allow" + HOSTILE, "kind": "allow_once"},
                    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
                ],
            },
        }
    )


def escapes_turn(session_id: str, message_id: str) -> None:
    text = {"type": "text", "text": "said: " + HOSTILE}
    update(session_id, {"sessionUpdate": "user_message", "messageId": message_id, "content": []})
    update(session_id, {"sessionUpdate": "state_update", "state": "running"})
    update(session_id, {"sessionUpdate": "agent_thought_chunk", "messageId": "t1", "content": text})
    update(session_id, {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": text})
    update(
        session_id,
        {"sessionUpdate": "notice", "severity": "warning", "title": "notice " + HOSTILE},
    )
    update(
        session_id,
        {
            "sessionUpdate": "plan_update",
            "plan": {
                "type": "items",
                "planId": "p1",
                "entries": [
                    {"content": "step " + HOSTILE, "priority": "medium", "status": "pending"}
                ],
            },
        },
    )
    output = ("out \x1b[31mred\x1b[0m " + HOSTILE + "\n").encode()
    update(
        session_id,
        {
            "sessionUpdate": "terminal_update",
            "terminalId": "term1",
            "command": "make " + HOSTILE,
            "cwd": "/elsewhere" + HOSTILE,
        },
    )
    update(
        session_id,
        {
            "sessionUpdate": "terminal_output_chunk",
            "terminalId": "term1",
            "data": base64.b64encode(output).decode(),
        },
    )
    update(
        session_id,
        {"sessionUpdate": "terminal_update", "terminalId": "term1", "exitStatus": {"exitCode": 0}},
    )
    update(
        session_id,
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "call1",
            "title": "tool " + HOSTILE,
            "kind": "execute",
            "status": "completed",
            "content": [
                {"type": "content", "content": {"type": "text", "text": "tool text " + HOSTILE}},
                {"type": "terminal", "terminalId": "term1"},
            ],
        },
    )
    permission("perm1", session_id, "Run `ls`? " + HOSTILE)


def flood_turn(session_id: str, message_id: str) -> None:
    update(session_id, {"sessionUpdate": "user_message", "messageId": message_id, "content": []})
    update(session_id, {"sessionUpdate": "state_update", "state": "requires_action"})
    number = 0
    while True:
        number += 1
        permission(f"flood{number}", session_id, f"Run `ls` ({number})?")


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        request_id = message.get("id")
        if method == "initialize":
            name = "hostile" if MODE == "flood" else "hostile" + HOSTILE
            send(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "result": {
                        "protocolVersion": 2,
                        "info": {"name": name, "version": "6.6.6"},
                        "capabilities": {"session": {}},
                    },
                }
            )
        elif method == "session/new":
            send({"jsonrpc": "2.0", "id": request_id, "result": {"sessionId": "s1"}})
        elif method == "session/prompt":
            send({"jsonrpc": "2.0", "id": request_id, "result": {"messageId": "u1"}})
            if MODE == "flood":
                threading.Thread(target=flood_turn, args=("s1", "u1"), daemon=True).start()
            else:
                escapes_turn("s1", "u1")
        elif method is None and request_id == "perm1":
            # The permission was answered: the turn ends.
            idle: dict[str, object] = {"sessionUpdate": "state_update", "state": "idle"}
            idle["stopReason"] = "end_turn"
            update("s1", idle)
        elif method == "session/close":
            send({"jsonrpc": "2.0", "id": request_id, "result": {}})
        elif request_id is not None and method is not None:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "error": {"code": -32601, "message": "no " + HOSTILE},
                }
            )
    if MODE == "flood":
        threading.Event().wait()  # ignores end of input too


if __name__ == "__main__":
    main()
