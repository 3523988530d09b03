"""`acpio check` and `acpio inspect` over ACP v1 (`--protocol 1|2`; check runs both by default),
against the hand-written raw v1 agent of the testing-kit tests."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from cli_helpers import Captured, raw_agent, run_cli

from acpio._cli._check import CheckOptions, run_check
from acpio.testing import V1_RULES

RAW_V1_AGENT = Path(__file__).resolve().parents[1] / "testing" / "raw_v1_agent.py"
FAST = {"timeout": 3.0, "exit_timeout": 1.0}


def raw_v1_agent(mode: str = "good") -> list[str]:
    return [sys.executable, str(RAW_V1_AGENT), mode]


async def _check(command: list[str], **options: object) -> tuple[int, dict[str, object]]:
    captured = Captured()
    code = await run_check(captured.output, command, CheckOptions(json=True, **options))  # type: ignore[arg-type]
    return code, json.loads(captured.text)


def _statuses(report: object) -> dict[str, str]:
    assert isinstance(report, dict)
    return {rule["id"]: rule["status"] for rule in report["rules"]}


@pytest.mark.anyio
async def test_check_over_v1_passes_a_correct_v1_agent() -> None:
    code, report = await _check(
        raw_v1_agent(), protocols=(1,), prompt="tool", cancel_prompt="slow", **FAST
    )
    statuses = _statuses(report)
    assert code == 0, report
    assert report["protocol"] == 1 and report["served"] is True
    for rule_id in ("start", "sessions", "prompt", "cancel", "shutdown", *V1_RULES, "schema"):
        assert statuses[rule_id] == "pass", rule_id
    assert statuses["close"] == "skip"  # not advertised
    assert "turn-lifecycle" not in statuses  # a draft v2 rule
    assert "version-older" not in statuses  # the raw probes speak draft v2 only
    assert set(report["protocols"]) == {"1"}  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_check_over_v1_fails_a_wrong_v1_agent_on_its_rule() -> None:
    code, report = await _check(raw_v1_agent("v2-update"), protocols=(1,), **FAST)
    assert code == 1
    assert _statuses(report)["v1-updates"] == "fail"


@pytest.mark.anyio
async def test_check_runs_both_versions_by_default_and_reports_each() -> None:
    # A draft-v2-only agent: v1 is a warning (no editor can use it), not a failure.
    code, report = await _check(raw_agent("good"), cancel_prompt="slow", **FAST)
    assert code == 0
    protocols = report["protocols"]
    assert isinstance(protocols, dict) and list(protocols) == ["2", "1"]
    assert report["protocol"] == 2 and report["ok"] is True
    v1 = protocols["1"]
    assert v1["served"] is False and v1["ok"] is True
    start = next(rule for rule in v1["rules"] if rule["id"] == "start")
    assert start["status"] == "warn"
    assert "does not serve ACP v1" in start["detail"]
    assert _statuses(v1)["prompt"] == "skip"

    # A v1-only agent passes v1; draft v2 is a warning, not a failure: the check passes.
    code, report = await _check(raw_v1_agent(), cancel_prompt="slow", **FAST)
    assert code == 0
    protocols = report["protocols"]
    assert isinstance(protocols, dict)
    assert protocols["1"]["ok"] is True and protocols["2"]["ok"] is True
    assert protocols["1"]["served"] is True and protocols["2"]["served"] is False
    start = next(rule for rule in protocols["2"]["rules"] if rule["id"] == "start")
    assert start["status"] == "warn"


def test_check_and_inspect_take_the_protocol(tmp_path: Path) -> None:
    result = run_cli("check", "--protocol", "1", "--cancel-prompt", "slow", "--", *raw_v1_agent())
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ACP v1" in result.stdout and "→ PASS" in result.stdout
    assert "ACP protocol 2" not in result.stdout

    record = tmp_path / "v1.jsonl"
    notes = tmp_path / "notes.txt"
    notes.write_text("from disk")
    shown = run_cli(
        "inspect",
        "--protocol",
        "1",
        "--allow",
        "--record",
        str(record),
        "--cwd",
        str(tmp_path),
        "--",
        *raw_v1_agent(),
        stdin=f"hello\ntool\nask\nfs {notes}\nrun echo inspect-v1-output\n",
    )
    assert shown.returncode == 0, shown.stdout + shown.stderr
    text = shown.stdout
    assert "raw-v1-agent-good 0.0.1 · protocol 1" in text
    assert "Hello world" in text
    assert "Edit notes.txt" in text and "edit · completed" in text
    assert "Run rm -rf build" in text and "execute · completed" in text
    assert "read: from disk" in text
    # The command ran in the client's terminal; its output is shown in the tool call's box.
    assert "inspect-v1-output" in [line.strip("│ ") for line in text.splitlines()]
    assert text.count("■ end_turn") == 5
    assert (tmp_path / "notes.txt.out").read_text() == "FROM DISK"

    replay = run_cli("inspect", "--replay", str(record))
    assert replay.returncode == 0, replay.stderr
    assert "Hello world" in replay.stdout and replay.stdout.count("■ end_turn") == 5
    assert "inspect-v1-output" in replay.stdout


@pytest.mark.anyio
async def test_the_demo_drives_an_agent_that_serves_v1_as_an_editor_would(tmp_path: Path) -> None:
    from acpio._cli._demo import _v1_step  # noqa: PLC0415

    captured = Captured()
    problems, violations = await _v1_step(captured.output, raw_v1_agent(), str(tmp_path), 10.0)
    assert problems == [] and violations == []
    text = captured.text
    assert "raw-v1-agent-good 0.0.1 · protocol 1" in text
    assert "tool call 'Run `echo hello-from-v1`': execute, completed" in text
    assert "the command's output is shown in the editor's own terminal" in text
    assert "session/prompt answered {stopReason: end_turn}" in text


@pytest.mark.anyio
async def test_the_demo_notes_an_agent_that_does_not_serve_v1(tmp_path: Path) -> None:
    from acpio._cli._demo import _v1_step  # noqa: PLC0415

    captured = Captured()
    assert await _v1_step(captured.output, raw_agent("good"), str(tmp_path), 10.0) == ([], [])
    assert "does not serve ACP v1 yet" in " ".join(captured.text.split())
