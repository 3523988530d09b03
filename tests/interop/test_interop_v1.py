"""Interoperability over ACP v1: the example agents driven by the official TypeScript SDK's
default client (``client()`` from ``@agentclientprotocol/sdk``, which speaks protocol v1).

``interop_v1_client.mjs`` runs each scenario against a fresh agent process with this
interpreter and writes what the client saw; these tests check it: a reply, an allowed
command with its output and exit code shown, a rejected command that never ran, an edit
with its v1 diff, and a cancel that ends ``cancelled`` within 3 s with no process left.
Node and ``node_modules`` are prerequisites (``npm ci --prefix tests/interop``); when
either is missing the tests fail with that explanation instead of skipping.
"""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
PROGRAM = HERE / "interop_v1_client.mjs"


@functools.cache
def _results() -> dict[str, Any]:
    node = shutil.which("node")
    if node is None:
        pytest.fail("Node.js (`node`) is not on PATH; the v1 interop test needs it", pytrace=False)
    if not (HERE / "node_modules" / "@agentclientprotocol" / "sdk" / "package.json").is_file():
        pytest.fail("run `npm ci --prefix tests/interop` first", pytrace=False)
    with tempfile.TemporaryDirectory() as tmp:
        result = Path(tmp) / "result.json"
        done = subprocess.run(
            [
                node,
                str(PROGRAM),
                "--python",
                sys.executable,
                "--examples",
                str(REPO / "examples"),
                "--result",
                str(result),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if done.returncode != 0 or not result.is_file():
            pytest.fail(f"the v1 interop program failed:\n{done.stdout}\n{done.stderr}")
        data: dict[str, Any] = json.loads(result.read_text())
    assert data["sdk"] == "2.4.0"
    return data["results"]  # type: ignore[no-any-return]


def _scenario(name: str) -> dict[str, Any]:
    record: dict[str, Any] = _results()[name]
    assert record["failures"] == [], record["failures"]
    assert record["sdkErrors"] == [], record["sdkErrors"]
    assert record["protocolVersion"] == 1
    return record


def _only_call(record: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
    ((call_id, call),) = record["toolCalls"].items()
    return call, record["texts"][call_id]


def test_echo_replies() -> None:
    record = _scenario("echo_reply")
    assert record["answer"] == {"stopReason": "end_turn"}
    assert record["agentText"] == "hello over v1"


def test_allowed_command_shows_its_output_and_exit_code() -> None:
    record = _scenario("shell_allowed")
    call, texts = _only_call(record)
    assert call["status"] == "failed" and call["kind"] == "execute"
    assert "interop-v1-output\n" in texts[0] and texts[0].endswith("exit code 4")
    assert texts[1] == "The command failed (exit code 4)."
    assert len(record["permissions"]) == 1


def test_rejected_command_never_runs() -> None:
    record = _scenario("shell_rejected")
    call, texts = _only_call(record)
    assert call["status"] == "failed"
    assert texts == ["Permission denied: the command was not run."]
    assert record["ran"] is False and record["ranFile"] is False


def test_edit_shows_its_diff() -> None:
    record = _scenario("edit_diff")
    call, texts = _only_call(record)
    assert call["status"] == "completed"
    assert texts == [
        {"type": "diff", "path": record["file"], "oldText": "before\n", "newText": "after\n"}
    ]
    assert record["contentAfter"] == "after\n"
    assert record["permissions"][0]["toolCall"]["toolCallId"] == call["toolCallId"]


def test_cancel_ends_cancelled_quickly_with_no_process_left() -> None:
    record = _scenario("shell_cancel")
    assert record["answer"] == {"stopReason": "cancelled"}
    assert record["cancelMs"] < 3000
    assert record["processLeft"] is False
    call, texts = _only_call(record)
    assert call["status"] == "failed"
    assert call["_meta"]["acpio"]["status"] == "cancelled"
    assert texts[0].endswith("terminated by signal SIGTERM")
