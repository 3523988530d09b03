"""`acpio check`: the example agents pass; each deliberately broken agent fails its rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import Captured, example, py_sdk_v1_agent, raw_agent, run_cli

from acpio._cli._check import SCENARIO, CheckOptions, run_check
from acpio.testing._conformance import RULES

# Short timeouts: the broken agents make the check wait for what never comes.
FAST = {"timeout": 1.5, "exit_timeout": 1.0}


async def _check(command: list[str], **options: object) -> tuple[int, dict[str, object]]:
    captured = Captured()
    code = await run_check(captured.output, command, CheckOptions(json=True, **options))  # type: ignore[arg-type]
    return code, json.loads(captured.text)


def _statuses(report: dict[str, object]) -> dict[str, str]:
    rules = report["rules"]
    assert isinstance(rules, list)
    return {rule["id"]: rule["status"] for rule in rules}


def _rule(report: dict[str, object], rule_id: str) -> dict[str, object]:
    rules = report["rules"]
    assert isinstance(rules, list)
    return next(rule for rule in rules if rule["id"] == rule_id)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("name", "cancel_prompt"),
    [
        ("echo_agent", None),
        # Both example agents ask permission first: the check holds the answer and cancels.
        ("shell_agent", "run sleep 30"),
        # The edit agent only edits inside the session's directories: the check's cwd.
        ("edit_agent", "write {cwd}/never-written.txt\nnever approved"),
    ],
)
async def test_example_agents_pass(name: str, cancel_prompt: str | None, tmp_path: Path) -> None:
    if name == "edit_agent":
        assert cancel_prompt is not None
        code, report = await _check(
            example(name), cancel_prompt=cancel_prompt.format(cwd=tmp_path), cwd=str(tmp_path)
        )
    else:
        code, report = await _check(example(name), cancel_prompt=cancel_prompt)
    statuses = _statuses(report)
    assert code == 0, [r for r in report["rules"] if r["status"] == "fail"]  # type: ignore[union-attr]
    assert report["ok"] is True
    assert "fail" not in statuses.values()
    # One line per rule: every scenario rule and every conformance rule is reported.
    assert set(statuses) == set(SCENARIO) | set(RULES)
    for rule_id in (
        "start",
        "sessions",
        "prompt",
        "close",
        "delete-unknown",
        "version-older",
        "version-newer",
        "parse-error",
        "unknown-method",
        "unknown-extension",
        "unknown-notification",
        "ids",
        "batch-empty",
        "batch-notifications",
        "batch-mixed",
        "shutdown",
    ):
        assert statuses[rule_id] == "pass", (rule_id, _rule(report, rule_id))
    if cancel_prompt is not None:
        assert statuses["cancel"] == "pass"
        assert statuses["cancel-silence"] == "pass"
    info = report["agent_info"]
    assert isinstance(info, dict) and info["name"] == name.replace("_", "-")


@pytest.mark.anyio
async def test_a_correct_agent_in_another_style_passes() -> None:
    code, report = await _check(raw_agent("good"), cancel_prompt="slow", **FAST)
    assert code == 0
    assert _statuses(report)["cancel"] == "pass"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("mode", "failing", "message"),
    [
        ("garbage-stdout", {"stdout"}, "not a JSON-RPC message: 'Hello! Raw agent starting up...'"),
        ("never-idle", {"prompt", "cancel", "turn-lifecycle"}, "waiting for an idle state_update"),
        ("ignore-cancel", {"cancel"}, "read session/cancel"),
        (
            "answer-notifications",
            {"unknown-notification", "batch-notifications", "no-reply-to-notification"},
            "answered a notification",
        ),
        ("linger", {"shutdown"}, "still running"),
        ("number-ids", {"ids", "id-fidelity"}, 'sent id "42", answered with id 42'),
        ("answer-notification-batch", {"batch-notifications"}, "answered a batch of only"),
        # One -32600 per entry is not a refusal of the array: notifications are never answered.
        # (and gives [] no answer at all).
        ("answer-batch-items", {"batch-notifications", "batch-empty"}, "(2 replies)"),
    ],
)
async def test_broken_agents_fail_on_their_rule(mode: str, failing: set[str], message: str) -> None:
    code, report = await _check(raw_agent(mode), cancel_prompt="slow", **FAST)
    statuses = _statuses(report)
    assert code == 1
    assert report["ok"] is False
    assert {rule for rule, status in statuses.items() if status == "fail"} == failing
    details = " ".join(
        str(_rule(report, rule)["detail"])
        + " ".join(v["message"] for v in _rule(report, rule)["violations"])  # type: ignore[union-attr]
        for rule in failing
    )
    assert message in details


@pytest.mark.anyio
async def test_an_agent_that_refuses_every_json_array_passes() -> None:
    # The official TypeScript SDK: "ACP does not use JSON-RPC batches; a connection answers a
    # received JSON array with a single -32600 response with id: null".
    code, report = await _check(raw_agent("refuse-batches"), cancel_prompt="slow", **FAST)
    statuses = _statuses(report)
    assert code == 0, [r for r in report["rules"] if r["status"] != "pass"]  # type: ignore[union-attr]
    for rule_id in ("batch-empty", "batch-notifications", "batch-mixed"):
        assert statuses[rule_id] == "pass", _rule(report, rule_id)
    assert "one -32600" in str(_rule(report, "batch-notifications")["detail"])
    assert statuses["no-reply-to-notification"] == statuses["jsonrpc"] == "pass"


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["latest", "echo", "refuse"])
async def test_a_v1_only_agent_on_the_official_python_sdk_passes_with_a_v2_warning(
    mode: str,
) -> None:
    # "latest" answers protocol 1 to a v2 initialize; "echo" answers 2 in v1's shape;
    # "refuse" answers error -32022.
    code, report = await _check(py_sdk_v1_agent(mode))
    assert code == 0, report
    assert report["ok"] is True
    protocols = report["protocols"]
    assert isinstance(protocols, dict)
    v2, v1 = protocols["2"], protocols["1"]
    assert v2["served"] is False and v1["served"] is True
    start = _rule(v2, "start")
    assert start["status"] == "warn"
    assert "does not serve draft ACP v2" in str(start["detail"])
    assert ("v1's shape" in str(start["detail"])) == (mode == "echo")
    assert set(_statuses(v2).values()) == {"warn", "skip"}
    assert _rule(v2, "prompt")["detail"] == "not checked: the agent does not serve protocol 2"
    v1_statuses = _statuses(v1)
    assert "fail" not in v1_statuses.values()
    for rule_id in ("start", "sessions", "prompt", "cancel", "shutdown", "schema"):
        assert v1_statuses[rule_id] == "pass", _rule(v1, rule_id)


@pytest.mark.anyio
async def test_an_agent_serving_none_of_the_checked_versions_fails() -> None:
    # Asked for v2 only, a v1-only agent serves nothing that was checked: no PASS for that.
    code, report = await _check(py_sdk_v1_agent("latest"), protocols=(2,))
    assert code == 1
    assert report["ok"] is False
    assert _rule(report, "start")["status"] == "warn"


def test_check_text_of_a_v1_only_agent() -> None:
    result = run_cli("check", "--", *py_sdk_v1_agent("latest"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert any(line.startswith("warn start") for line in result.stdout.splitlines())
    assert "Overall: PASS (protocols 2, 1; served: 1)" in result.stdout


@pytest.mark.anyio
async def test_an_agent_that_refuses_to_delete_an_unknown_session_gets_a_warning() -> None:
    code, report = await _check(raw_agent("delete-unknown-fails"), cancel_prompt="slow", **FAST)
    assert code == 0  # a SHOULD: a warning, not a failure
    rule = _rule(report, "delete-unknown")
    assert rule["status"] == "warn"
    assert "-32002" in str(rule["detail"])
    _, good = await _check(raw_agent("good"), **FAST)
    assert _rule(good, "delete-unknown")["status"] == "skip"


@pytest.mark.anyio
async def test_an_agent_that_crashes_at_start_fails_with_its_stderr() -> None:
    code, report = await _check(raw_agent("crash"), **FAST)
    assert code == 1
    start = _rule(report, "start")
    assert start["status"] == "fail"
    assert "exit code 3" in str(start["detail"])
    assert "RuntimeError: no API key set" in str(start["detail"])
    assert "RuntimeError: no API key set" in str(report["stderr_tail"])
    statuses = _statuses(report)
    assert statuses["prompt"] == statuses["batch-empty"] == statuses["shutdown"] == "skip"


def test_check_text_report_and_exit_codes(tmp_path: Path) -> None:
    picture = tmp_path / "check.svg"
    result = run_cli("check", "--svg", str(picture), "--", *example("echo_agent"))
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    # A line per decided rule; the rules not exercised named together on one line.
    words = result.stdout.replace(",", " ").split()
    for rule_id in [*SCENARIO, *RULES]:
        assert any(line.split()[1:2] == [rule_id] for line in lines) or rule_id in words, rule_id
    assert any(line.startswith("pass prompt") for line in lines)
    assert "→ PASS" in result.stdout
    assert picture.read_text().startswith("<svg")

    broken = run_cli(
        "check", "--timeout", "1.5", "--exit-timeout", "1", "--", *raw_agent("garbage-stdout")
    )
    assert broken.returncode == 1
    assert any(line.startswith("FAIL stdout") for line in broken.stdout.splitlines())
    assert "not a JSON-RPC message" in broken.stdout
    assert "→ FAIL" in broken.stdout


def test_check_of_a_missing_agent_is_one_readable_failure() -> None:
    result = run_cli("check", "--", "no-such-agent-acpio-test")
    assert result.returncode == 1
    assert "FAIL start" in result.stdout
    assert "could not start `no-such-agent-acpio-test`" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_check_needs_an_agent_command() -> None:
    result = run_cli("check")
    assert result.returncode == 2
    assert "give the agent's command after `--`" in result.stderr


@pytest.mark.anyio
async def test_a_slow_agent_is_reported_as_a_timeout_not_a_protocol_violation() -> None:
    # Issue 31: the turn takes 1 s; with --timeout 0.5 the report says so and names the
    # option, and no rule of the protocol is blamed for the request the check gave up on.
    code, report = await _check(
        raw_agent("good"), prompt="slow", timeout=0.5, exit_timeout=1.0, protocols=(2,)
    )
    assert code == 1
    prompt = _rule(report, "prompt")
    assert prompt["status"] == "fail"
    assert str(prompt["detail"]).startswith("timed out after 0.5 s")
    assert "raise --timeout" in str(prompt["detail"])
    assert _rule(report, "jsonrpc")["status"] == "pass"


def test_check_text_of_a_v1_only_agent_is_short() -> None:
    # The protocol-2 run of an agent serving only v1: its skipped rules on one line each.
    result = run_cli("check", "--", *py_sdk_v1_agent("latest"))
    assert result.returncode == 0, result.stdout + result.stderr
    v2_part = result.stdout.split("ACP protocol 1")[0]
    skips = [line for line in v2_part.splitlines() if line.startswith("skip")]
    assert len(skips) <= 3, v2_part  # the scenario's, the shutdown's, the protocol rules'
    assert "not checked: the agent does not serve protocol 2" in v2_part
    assert len(v2_part.splitlines()) < 20, v2_part
