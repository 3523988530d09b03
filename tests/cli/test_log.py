"""The session log: what an editor shows, printed once each item is final, from the wire alone."""

from __future__ import annotations

import base64
import json
import subprocess
import sys

from cli_helpers import Captured

from acpio._cli._blocks import PROMPT_MARK
from acpio._cli._log import SessionLog
from acpio.testing import ConformanceChecker, Transcript

SESSION = "sess_1"
CWD = "/home/user/project"


def _update(update: dict[str, object]) -> tuple[str, dict[str, object]]:
    return (
        "agent->client",
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": SESSION, "update": update},
        },
    )


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _transcript(*messages: tuple[str, object], into: Transcript | None = None) -> Transcript:
    transcript = into if into is not None else Transcript()
    for direction, message in messages:
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        transcript.record(direction, data)  # type: ignore[arg-type]
    return transcript


OPEN = (
    (
        "client->agent",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "session/new",
            "params": {"cwd": CWD, "mcpServers": []},
        },
    ),
    ("agent->client", {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": SESSION}}),
    _update(
        {
            "sessionUpdate": "user_message",
            "messageId": "u1",
            "content": [{"type": "text", "text": "build it"}],
        }
    ),
    _update({"sessionUpdate": "state_update", "state": "running"}),
)
PATCH = (
    f"diff --git {CWD}/a.py {CWD}/a.py\n--- {CWD}/a.py\n+++ {CWD}/a.py\n"
    "@@ -1 +1 @@\n-old = 1\n+new = 2\n"
)
DIFF = {
    "type": "diff",
    "changes": [{"operation": "modify", "path": f"{CWD}/a.py"}],
    "patch": {"format": "git_patch", "text": PATCH},
}


def test_items_are_printed_once_when_final_in_order_of_appearance() -> None:
    captured = Captured()
    log = SessionLog(captured.output, show_sessions=False)
    transcript = _transcript(
        *OPEN,
        _update(
            {
                "sessionUpdate": "agent_thought_chunk",
                "messageId": "t1",
                "content": {"type": "text", "text": "planning"},
            }
        ),
        _update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "c1",
                "title": "Build",
                "kind": "execute",
                "status": "in_progress",
                "content": [{"type": "terminal", "terminalId": "term1"}],
            }
        ),
        _update(
            {
                "sessionUpdate": "terminal_update",
                "terminalId": "term1",
                "command": "make",
                "cwd": CWD,
            }
        ),
        _update(
            {
                "sessionUpdate": "terminal_output_chunk",
                "terminalId": "term1",
                "data": _b64(b"progress 10%\rprogress 100%\ncaf\xc3"),
            }
        ),
        # A chunk boundary may split a UTF-8 character.
        _update(
            {
                "sessionUpdate": "terminal_output_chunk",
                "terminalId": "term1",
                "data": _b64(b"\xa9 done\n"),
            }
        ),
    )
    log.sync(transcript)
    assert "Build" not in captured.text  # still running: not printed yet
    assert "planning" in captured.text  # the thought is final: a tool call followed it
    _transcript(
        _update(
            {
                "sessionUpdate": "terminal_update",
                "terminalId": "term1",
                "exitStatus": {"exitCode": 2},
            }
        ),
        _update({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "failed"}),
        _update(
            {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "m1",
                "content": {"type": "text", "text": "The **build** failed."},
            }
        ),
        _update({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}),
        into=transcript,
    )
    log.sync(transcript)
    text = captured.text
    assert text.count("Build") == 1
    order = [
        text.index(part)
        for part in (
            f"{PROMPT_MARK}build it",
            "thinking: planning",
            "✗ Build",
            "The build failed.",
            "■ end_turn",
        )
    ]
    assert order == sorted(order)
    assert "progress 100%" in text and "progress 10%" not in text  # \r rewrites the line
    assert "café done" in text
    assert "exit code 2" in text
    assert "$ make" in text
    assert "execute · failed" in text
    assert log.stop_reasons == ["end_turn"]


def test_a_permission_prompt_shows_the_diff_at_once_and_its_answer_when_given() -> None:
    captured = Captured()
    log = SessionLog(captured.output, answered_by="tester", show_sessions=False)
    transcript = _transcript(
        *OPEN,
        _update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "c1",
                "title": "Edit a.py",
                "kind": "edit",
                "status": "pending",
                "content": [DIFF],
                "locations": [{"path": f"{CWD}/a.py", "line": 1}],
            }
        ),
        (
            "agent->client",
            {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "session/request_permission",
                "params": {
                    "sessionId": SESSION,
                    "title": "Edit a.py?",
                    "subject": {"type": "tool_call", "toolCall": {"toolCallId": "c1"}},
                    "options": [
                        {"optionId": "ok", "name": "Allow", "kind": "allow_once"},
                        {"optionId": "no", "name": "Reject", "kind": "reject_once"},
                    ],
                },
            },
        ),
    )
    log.sync(transcript)
    text = captured.text
    assert "? Edit a.py?" in text
    assert "modify a.py" in text  # paths are shown relative to the session's directory
    assert "-old = 1" in text and "+new = 2" in text
    assert "options: Allow · Reject" in text
    assert "rejected" not in text  # not answered yet
    _transcript(
        (
            "client->agent",
            {
                "jsonrpc": "2.0",
                "id": 7,
                "result": {"outcome": {"outcome": "selected", "optionId": "no"}},
            },
        ),
        _update({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "failed"}),
        into=transcript,
    )
    log.sync(transcript)
    text = captured.text
    assert "✗ rejected: Reject  (tester)" in text
    assert text.index("rejected") < text.index("edit · failed")
    assert "at a.py:1" in text


def test_answers_cancellations_errors_and_unknown_updates() -> None:
    captured = Captured()
    log = SessionLog(captured.output, answered_by="tester", show_sessions=False)
    base = [
        *OPEN,
        _update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "c1",
                "title": "Edit a.py",
                "kind": "edit",
                "status": "pending",
                "content": [DIFF],
            }
        ),
        (
            "agent->client",
            {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "session/request_permission",
                "params": {
                    "sessionId": SESSION,
                    "title": "Edit a.py?",
                    "subject": {"type": "tool_call", "toolCall": {"toolCallId": "c1"}},
                    "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}],
                },
            },
        ),
        (
            "client->agent",
            {
                "jsonrpc": "2.0",
                "id": 7,
                "result": {"outcome": {"outcome": "selected", "optionId": "ok"}},
            },
        ),
        _update({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed"}),
        _update({"sessionUpdate": "_vendor_thing", "x": 1}),
        (
            "client->agent",
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/prompt",
                "params": {"sessionId": SESSION, "prompt": []},
            },
        ),
        (
            "agent->client",
            {"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "empty prompt"}},
        ),
        _update(
            {
                "sessionUpdate": "state_update",
                "state": "idle",
                "stopReason": "error",
                "error": {"code": -32603, "message": "model unavailable"},
            }
        ),
    ]
    log.sync(_transcript(*base))
    text = captured.text
    assert "✓ allowed: Allow  (tester)" in text
    assert text.count("+new = 2") == 1  # shown with the prompt, not again in the call
    assert "(content shown with the permission prompt above)" in text
    assert "edit · completed" in text
    assert "unknown type '_vendor_thing'" in text
    assert "✗ session/prompt failed: empty prompt (-32602)" in text
    assert "■ error: model unavailable (-32603)" in text


def test_replayed_violations_are_shown_inline() -> None:
    captured = Captured()
    log = SessionLog(captured.output, checker=ConformanceChecker(strict=False), feed_checker=True)
    log.sync(_transcript(("agent->client", b"Starting up..."), *OPEN))
    assert "⚠ [stdout] not a JSON-RPC message: 'Starting up...'" in captured.text
    assert "hint: stdout carries only protocol messages" in captured.text


def test_importing_acpio_does_not_import_rich() -> None:
    code = (
        "import sys, acpio, acpio.testing, acpio._cli; "
        "assert 'rich' not in sys.modules, 'rich imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_help_lists_the_commands() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "acpio._cli", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    for command in ("demo", "inspect", "check"):
        assert command in result.stdout
