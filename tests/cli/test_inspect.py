"""`acpio inspect`: driven through its input with a recorded transcript, Ctrl-C, and --replay."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import anyio.abc
import pytest
from cli_helpers import EXAMPLES, RUN_TIMEOUT, Captured, example, raw_agent, run_cli

from acpio._cli._blocks import PROMPT_MARK
from acpio._cli._input import LineInput
from acpio._cli._inspect import parse_answer, run_inspect, run_replay
from acpio.testing import PermissionRequest, Transcript

SCRIPT = "run echo hello-from-inspect\ny\nrun echo never-printed\nn\nhello\n"


def _box_lines(text: str) -> list[str]:
    """The lines inside tool-call boxes, without the frame."""
    return [line.strip("│ ") for line in text.splitlines() if line.startswith("│")]


def _assert_session_shown(text: str) -> None:
    assert "● shell-agent 1.0.0 (Shell agent) · protocol 2" in text
    assert f"{PROMPT_MARK}run echo hello-from-inspect" in text
    assert "? Run `echo hello-from-inspect`?" in text
    assert "✓ allowed: Allow once" in text
    assert "hello-from-inspect" in _box_lines(text)  # the command's output, in its terminal
    assert "execute · completed" in text
    assert "✗ rejected: Reject" in text
    assert "never-printed" not in _box_lines(text)  # rejected: never run
    assert "Permission denied: the command was not run." in text
    assert "Usage: `run <shell command>`" in text or "Usage: run <shell command>" in text
    assert text.count("■ end_turn") == 3


def test_inspect_driven_by_a_script_records_a_transcript_that_replays(tmp_path: Path) -> None:
    record = tmp_path / "session.jsonl"
    result = run_cli(
        "inspect",
        "--record",
        str(record),
        "--cwd",
        str(tmp_path),
        "--",
        *example("shell_agent"),
        stdin=SCRIPT,
    )
    assert result.returncode == 0, result.stderr
    _assert_session_shown(result.stdout)
    assert "(you)" in result.stdout  # the answers came from the input
    assert "[1] Allow once · [2] Reject" in result.stdout
    assert f"transcript written to {record}" in result.stdout
    assert "3 turns" in result.stdout

    transcript = Transcript.read_jsonl(record)
    methods = [entry.method for entry in transcript]
    assert methods.count("session/prompt") == 3
    assert methods.count("session/request_permission") == 2

    replay = run_cli("inspect", "--replay", str(record))
    assert replay.returncode == 0, replay.stderr
    _assert_session_shown(replay.stdout)
    assert f"{len(transcript)} messages, 3 turns" in replay.stdout

    # The replay rebuilds the same tool calls from the recorded updates alone.
    def boxes(text: str) -> list[str]:
        return [line for line in text.splitlines() if line.startswith(("╭", "│", "╰"))]

    assert boxes(replay.stdout) == boxes(result.stdout)


def test_inspect_allow_and_multi_line_prompts(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    script = f"write {target}\\\nfirst line\\\nsecond line\n/quit\nrun echo not-sent\n"
    # The session's cwd (inspect's own directory): the edit agent edits only inside it.
    result = run_cli("inspect", "--allow", "--", *example("edit_agent"), stdin=script, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert target.read_text() == "first line\nsecond line"
    assert "✓ allowed: Allow once  (--allow)" in result.stdout
    assert "+first line" in result.stdout
    assert "edit · completed" in result.stdout
    assert "not-sent" not in result.stdout  # /quit ended the session


@pytest.mark.anyio
async def test_run_inspect_in_process_then_replay(tmp_path: Path) -> None:
    record = tmp_path / "session.jsonl"
    read_end, write_end = os.pipe()
    os.write(write_end, SCRIPT.encode())
    os.close(write_end)
    captured = Captured()
    try:
        code = await run_inspect(
            captured.output,
            example("shell_agent"),
            record=str(record),
            cwd=str(tmp_path),
            reader=LineInput(read_end),
        )
    finally:
        os.close(read_end)
    assert code == 0
    _assert_session_shown(captured.text)

    replayed = Captured()
    assert await run_replay(replayed.output, str(record)) == 0
    _assert_session_shown(replayed.text)


@pytest.mark.anyio
async def test_inspect_shows_protocol_violations_inline(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, b"hi\n")
    os.close(write_end)
    captured = Captured()
    try:
        code = await run_inspect(
            captured.output,
            raw_agent("garbage-stdout"),
            cwd=str(tmp_path),
            reader=LineInput(read_end),
        )
    finally:
        os.close(read_end)
    assert code == 0
    assert "⚠ [stdout] not a JSON-RPC message: 'Hello! Raw agent starting up...'" in captured.text
    assert "you said: hi" in captured.text


async def _read_until(process: anyio.abc.Process, seen: bytearray, marker: bytes) -> None:
    assert process.stdout is not None
    with anyio.fail_after(RUN_TIMEOUT):
        while marker not in seen:
            seen += await process.stdout.receive()


async def _start_inspect(*agent: str) -> anyio.abc.Process:
    return await anyio.open_process(
        [sys.executable, "-m", "acpio._cli", "inspect", "--", *agent],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "COLUMNS": "100"},
    )


@pytest.mark.anyio
async def test_ctrl_c_cancels_the_running_turn_then_quits() -> None:
    process = await _start_inspect(*example("shell_agent"))
    seen = bytearray()
    async with process:
        assert process.stdin is not None
        await process.stdin.send(b"run echo started; sleep 30\ny\n")
        await _read_until(process, seen, "✓ allowed".encode())
        process.send_signal(signal.SIGINT)
        await _read_until(process, seen, "■ cancelled".encode())
        text = seen.decode()
        assert "^C cancelling the turn" in text
        assert "execute · cancelled" in text
        # At the prompt, Ctrl-C quits.
        process.send_signal(signal.SIGINT)
        with anyio.fail_after(RUN_TIMEOUT):
            code = await process.wait()
        assert code == 0
        await _read_until(process, seen, b"quit (Ctrl-C)")


@pytest.mark.anyio
async def test_a_second_ctrl_c_quits_when_the_agent_ignores_the_cancel() -> None:
    process = await _start_inspect(*raw_agent("never-idle"))
    seen = bytearray()
    async with process:
        assert process.stdin is not None
        await process.stdin.send(b"hello\n")
        await _read_until(process, seen, f"{PROMPT_MARK}hello".encode())
        process.send_signal(signal.SIGINT)
        await _read_until(process, seen, b"cancelling the turn")
        process.send_signal(signal.SIGINT)
        with anyio.fail_after(RUN_TIMEOUT):
            assert await process.wait() == 0
        await _read_until(process, seen, b"quit (Ctrl-C)")


def test_inspect_reports_an_agent_that_crashes_at_start() -> None:
    result = run_cli("inspect", "--", *raw_agent("crash"), stdin="")
    assert result.returncode == 1
    assert result.stderr.startswith("acpio: the agent ")
    assert "exited with code 3 while starting up (initialize)" in " ".join(result.stderr.split())
    assert "RuntimeError: no API key set" in result.stderr
    assert "Traceback (most recent call last)" in result.stderr  # the agent's, shown as its stderr
    assert 'File "' not in result.stderr  # but no traceback of acpio's own


def test_inspect_reports_a_missing_agent() -> None:
    result = run_cli("inspect", "--", "no-such-agent-acpio-test", stdin="")
    assert result.returncode == 1
    assert "could not start the agent `no-such-agent-acpio-test`" in result.stderr
    assert "Traceback" not in result.stderr


def test_replay_of_a_file_that_is_not_a_transcript(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.jsonl"
    bogus.write_text("hello\n")
    result = run_cli("inspect", "--replay", str(bogus))
    assert result.returncode == 2
    assert "is not a transcript written by `acpio inspect --record`" in result.stderr
    assert run_cli("inspect", "--replay", str(tmp_path / "missing.jsonl")).returncode == 2


def test_parse_answer() -> None:
    request = PermissionRequest(
        1,
        {
            "sessionId": "s",
            "title": "Run?",
            "options": [
                {"optionId": "once", "name": "Allow once", "kind": "allow_once"},
                {"optionId": "always", "name": "Always", "kind": "allow_always"},
                {"optionId": "no", "name": "Reject", "kind": "reject_once"},
            ],
        },
        0.0,
    )
    assert parse_answer("2", request) == {"outcome": "selected", "optionId": "always"}
    assert parse_answer(" y ", request) == {"outcome": "selected", "optionId": "once"}
    assert parse_answer("always", request) == {"outcome": "selected", "optionId": "always"}
    assert parse_answer("N", request) == {"outcome": "selected", "optionId": "no"}
    assert parse_answer("no", request) == {"outcome": "selected", "optionId": "no"}
    assert parse_answer("c", request) == {"outcome": "cancelled"}
    assert parse_answer("once", request) == {"outcome": "selected", "optionId": "once"}
    assert parse_answer("4", request) is None
    assert parse_answer("maybe", request) is None


def test_examples_directory_exists() -> None:
    assert (EXAMPLES / "shell_agent.py").is_file()
