"""The v1 conformance rules: one deliberately wrong raw v1 agent per rule, and the checker."""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from acpio.testing import RULES, V1_RULES, ConformanceChecker, MockClient, PermissionPolicy
from acpio.testing._client_session import ClientSession

AGENT = Path(__file__).with_name("raw_v1_agent.py")

Scenario = Callable[[ClientSession], Awaitable[None]]


async def say(text: str, session: ClientSession) -> None:
    await session.prompt(text)


async def cancel_slow(session: ClientSession) -> None:
    turn = await session.start_prompt("slow")
    await session.wait_for(lambda: "working" in session.view.agent_text)
    await session.cancel()
    await turn.wait()


async def cancel_after_asking(session: ClientSession) -> None:
    turn = await session.start_prompt("ask")
    await session.wait_for_permission_request(pending=True)
    await session.cancel()
    await turn.wait()


async def cancel_then_more(session: ClientSession) -> None:
    await cancel_slow(session)
    await session.wait_for(lambda: "one more thing" in session.view.agent_text)


# mode -> (the rule it breaks, the scenario that shows it)
WRONG: dict[str, tuple[str, Scenario]] = {
    "v2-update": ("v1-updates", lambda session: say("hello", session)),
    "update-before-create": ("v1-tool-call-order", lambda session: say("tool", session)),
    "tool-call-twice": ("v1-tool-call-order", lambda session: say("tool", session)),
    "v2-answer": ("v1-prompt-answer", lambda session: say("hello", session)),
    "double-answer": ("v1-prompt-answer", lambda session: say("hello", session)),
    "ignore-cancel": ("v1-cancel", cancel_after_asking),
    "after-cancel": ("v1-cancel", cancel_then_more),
    "unknown-mode": ("v1-modes", lambda session: say("tool", session)),
}


@pytest.mark.anyio
@pytest.mark.parametrize("mode", list(WRONG))
async def test_each_wrong_v1_agent_breaks_its_rule(mode: str) -> None:
    rule, scenario = WRONG[mode]
    async with MockClient(
        [sys.executable, str(AGENT), mode],
        protocol_version=1,
        strict=False,
        policy=PermissionPolicy.never(),
    ) as client:
        session = await client.new_session()
        await scenario(session)
        # A second answer, a late chunk: let the agent's last lines arrive.
        await client.request("session/new", {"cwd": session.cwd, "mcpServers": []})
        report = client.conformance_report()
    assert rule in report.failed_rules, report.summary()


@pytest.mark.anyio
async def test_the_correct_v1_agent_breaks_no_rule() -> None:
    async with MockClient(
        [sys.executable, str(AGENT)], protocol_version=1, policy=PermissionPolicy.allow()
    ) as client:
        session = await client.new_session()
        for text in ("hello", "tool", "ask"):
            await session.prompt(text)
        await cancel_slow(session)
        report = client.conformance_report()
    assert report.ok
    assert set(V1_RULES) <= set(report.exercised_rules)


def test_every_v1_rule_has_a_wrong_agent() -> None:
    assert {rule for rule, _ in WRONG.values()} == set(V1_RULES)
    assert not set(V1_RULES) & set(RULES)


def _feed(checker: ConformanceChecker, *lines: tuple[str, object]) -> None:
    for direction, message in lines:
        checker.observe(direction, json.dumps(message))  # type: ignore[arg-type]


def _update(body: dict[str, object]) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s1", "update": body},
    }


def test_v1_checker_validates_against_the_v1_schema() -> None:
    checker = ConformanceChecker(strict=False, protocol_version=1)
    assert checker.protocol_version == 1
    _feed(
        checker,
        (
            "client->agent",
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        ),
        ("agent->client", {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": 1}}),
        (
            "agent->client",
            _update(
                {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}
            ),
        ),
        ("agent->client", _update({"sessionUpdate": "tool_call", "toolCallId": "t"})),
        (
            "agent->client",
            _update(
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": "t",
                    "locations": [{"path": "relative.txt"}],
                }
            ),
        ),
    )
    rules = [violation.rule for violation in checker.violations]
    assert rules == ["schema", "absolute-paths"]  # tool_call without its title
    assert "v1 schema" in checker.violations[0].hint


def test_a_v2_update_on_v1_is_named_as_such() -> None:
    checker = ConformanceChecker(strict=False, protocol_version=1)
    _feed(checker, ("agent->client", _update({"sessionUpdate": "state_update", "state": "idle"})))
    messages = {violation.rule: violation.message for violation in checker.violations}
    assert "not a v1 update" in messages["v1-updates"]
    assert "schema" in messages


def test_v1_report_lists_the_v1_rules_only() -> None:
    report = ConformanceChecker(strict=False, protocol_version=1).check_report()
    ids = [result.rule.id for result in report.results]
    assert ids[-len(V1_RULES) :] == list(V1_RULES)
    assert "turn-lifecycle" not in ids and "prompt-message-id" not in ids
    v2 = ConformanceChecker(strict=False).check_report()
    assert [result.rule.id for result in v2.results] == list(RULES)


def test_unknown_protocol_version_and_v2_rule_ids_are_refused() -> None:
    with pytest.raises(ValueError, match="protocol_version"):
        ConformanceChecker(protocol_version=3)
    with pytest.raises(ValueError, match="turn-lifecycle"):
        ConformanceChecker(protocol_version=1, rules=["turn-lifecycle"])


def test_a_v2_checker_judges_a_v1_initialize_answer_by_the_v1_schema() -> None:
    checker = ConformanceChecker(strict=False)
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    answer = {"protocolVersion": 1, "agentCapabilities": {"loadSession": True}, "authMethods": []}
    _feed(
        checker,
        ("client->agent", request),
        ("agent->client", {"jsonrpc": "2.0", "id": 1, "result": answer}),
    )
    assert checker.violations == []
    _feed(
        checker,
        ("client->agent", {**request, "id": 2}),
        (
            "agent->client",
            {"jsonrpc": "2.0", "id": 2, "result": {"protocolVersion": 1, "authMethods": 3}},
        ),
    )
    assert [violation.rule for violation in checker.violations] == ["schema"]


def test_a_tool_call_left_open_at_the_prompt_answer_is_flagged() -> None:
    # v1 clients stop following a turn at its answer: a call still pending then is shown
    # running forever (issue 31).
    checker = ConformanceChecker(strict=False, protocol_version=1)
    prompt = {"sessionId": "s1", "prompt": [{"type": "text", "text": "go"}]}
    call = {"sessionUpdate": "tool_call", "title": "Read", "status": "pending"}
    _feed(
        checker,
        (
            "client->agent",
            {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt},
        ),
        ("agent->client", _update({**call, "toolCallId": "open"})),
        ("agent->client", _update({**call, "toolCallId": "ended"})),
        (
            "agent->client",
            _update(
                {"sessionUpdate": "tool_call_update", "toolCallId": "ended", "status": "failed"}
            ),
        ),
        ("agent->client", {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}}),
    )
    (violation,) = checker.violations
    assert violation.rule == "tool-call-ended"
    assert "'open' is still pending when its turn ends" in violation.message
