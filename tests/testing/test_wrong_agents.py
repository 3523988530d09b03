"""Each conformance rule fails on a deliberately wrong agent; the example agents pass them all.

The wrong agent (wrong_agent.py) is a real subprocess speaking ACP over stdio, written without
acpio's agent framework; its mode names the one rule it breaks. It is driven through the
ordinary MockClient API, so each test shows the checker catching the defect in practice, and
that nothing else was blamed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from support import EXAMPLES

from acpio.testing import RULES, MockClient, PermissionPolicy

pytestmark = pytest.mark.anyio

WRONG_AGENT = str(Path(__file__).with_name("wrong_agent.py"))
TIMEOUT = 5.0

# Rules an ordinary prompt (then session/close) exposes; the others need their own exchange.
BROKEN_BY_A_PROMPT = [
    "stdout",
    "jsonrpc",
    "schema",
    "methods",
    "custom-values",
    "absolute-paths",
    "base64",
    "patch-consistency",
    "tool-call-title",
    "tool-call-ended",
    "permission-options",
    "prompt-message-id",
    "turn-lifecycle",
    "session-close",
    "background-work",
    "terminal-id-reuse",
    "config-and-commands",
]


def wrong(mode: str) -> MockClient:
    """A non-strict client of the wrong agent breaking rule `mode`."""
    return MockClient([sys.executable, WRONG_AGENT, mode], strict=False, timeout=TIMEOUT)


def broken(client: MockClient) -> set[str]:
    """The rules broken over the whole exchange, end-of-stream checks included."""
    return {violation.rule for violation in client.conformance_report().violations}


async def test_the_correct_mode_breaks_nothing() -> None:
    async with wrong("good") as client:
        session = await client.new_session()
        result = await session.prompt("hello")
        assert result.stop_reason == "end_turn"
        await session.close()
    assert broken(client) == set()


@pytest.mark.parametrize("rule", BROKEN_BY_A_PROMPT)
async def test_a_prompt_to_a_wrong_agent_breaks_its_rule(rule: str) -> None:
    async with wrong(rule) as client:
        session = await client.new_session()
        result = await session.prompt("hello")
        assert result.stop_reason == "end_turn"
        await session.close()
        # Some defects come after the close is answered: see them before the client leaves.
        await client.wait_for(lambda: rule in {v.rule for v in client.violations}, what=rule)
    assert broken(client) == {rule}, [str(v) for v in client.violations]


async def test_answering_a_notification() -> None:
    async with wrong("no-reply-to-notification") as client:
        session = await client.new_session()
        await client.notify("_x/ping", {"sessionId": session.id})
        # The agent reads in order: once this prompt is done, the bad reply has been seen.
        await session.prompt("hello")
    assert broken(client) == {"no-reply-to-notification"}


async def test_working_on_after_session_cancel() -> None:
    async with wrong("cancel-silence") as client:
        session = await client.new_session()
        turn = await session.start_prompt("wait")
        await session.wait_for_state("running")
        await session.cancel()
        # Answering a request sent after the cancel proves the agent read the cancel first,
        # so its end_turn cannot be an idle that crossed the cancel in flight.
        await client.request("_x/status", {"sessionId": session.id})
        result = await turn.wait()
        assert result.stop_reason == "end_turn"
    assert broken(client) == {"cancel-silence"}


async def test_echoing_an_id_in_another_type() -> None:
    async with wrong("id-fidelity") as client:
        session = await client.new_session()
        async with anyio.create_task_group() as group:
            # Never answered as sent (its id comes back as a string): given up below.
            group.start_soon(client.request, "_x/id", {"sessionId": session.id})
            # The agent reports this right after its bad answer, so the answer was seen.
            await session.wait_for(lambda: session.view.info.title == "answered")
            group.cancel_scope.cancel()
        await session.prompt("hello")
    assert broken(client) == {"id-fidelity"}, [str(v) for v in client.violations]


def test_every_rule_has_a_wrong_agent() -> None:
    covered = {*BROKEN_BY_A_PROMPT, "no-reply-to-notification", "cancel-silence", "id-fidelity"}
    assert covered == set(RULES)


async def test_example_agents_break_no_rule(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    runs = [
        ("echo_agent.py", "hello"),
        ("shell_agent.py", "run echo hi"),
        ("edit_agent.py", f"write {target}\nhello\n"),
    ]
    for script, prompt in runs:
        command = [sys.executable, str(EXAMPLES / script)]
        async with MockClient(
            command, policy=PermissionPolicy.allow(), cwd=tmp_path, timeout=TIMEOUT
        ) as client:
            session = await client.new_session()
            result = await session.prompt(prompt)
            assert result.stop_reason == "end_turn", script
            await session.close()
        report = client.conformance_report()
        assert report.ok, report.summary()
    assert target.read_text() == "hello\n"
