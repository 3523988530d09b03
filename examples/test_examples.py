"""How to test an ACP agent: drive it with acpio's MockClient, the way an editor would.

Run with ``pytest examples/``. Each test gets a client connected to the agent
named by ``@pytest.mark.acp_agent`` (the ``acp_client`` fixture comes with
acpio's pytest plugin). The client answers permission requests by policy,
rebuilds what an editor would display (``session.view``) and checks every
message against the protocol: a violation fails the test on the spot, and a
failing test's report shows the last messages that went over the wire.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from echo_agent import EchoAgent
from edit_agent import EditAgent
from shell_agent import ShellAgent

from acpio.testing import MockClient, PermissionPolicy

# Async tests run on anyio; this repository's conftest runs each on asyncio and trio.
pytestmark = pytest.mark.anyio


@pytest.mark.acp_agent(agent=EchoAgent)
async def test_echo_answers_with_the_prompt(acp_client: MockClient) -> None:
    session = await acp_client.new_session()  # cwd: the test's tmp_path
    # prompt() returns once the turn is idle again, with its stop reason and updates.
    result = await session.prompt("hello world")
    assert result.stop_reason == "end_turn"
    assert result.text == "hello world"


@pytest.mark.acp_agent(agent=ShellAgent, policy=PermissionPolicy.allow())
async def test_shell_runs_the_command_once_allowed(acp_client: MockClient) -> None:
    session = await acp_client.new_session()
    await session.prompt("run echo hi")

    # The view is what an editor shows: tool calls, terminals, messages, state.
    (call,) = session.view.tool_calls.values()
    assert call.status == "completed"
    terminal = session.view.terminals[call.terminal_ids[0]]
    assert terminal.output == b"hi\n"
    assert terminal.exit_code == 0
    # Every permission request is recorded with the answer the policy gave.
    (request,) = acp_client.permission_requests
    assert request.command == "echo hi"


@pytest.mark.acp_agent(agent=ShellAgent, policy=PermissionPolicy.reject())
async def test_shell_does_nothing_when_rejected(acp_client: MockClient, tmp_path: Path) -> None:
    session = await acp_client.new_session()
    await session.prompt("run touch marker")
    assert [call.status for call in session.view.tool_calls.values()] == ["failed"]
    assert not (tmp_path / "marker").exists()


@pytest.mark.acp_agent(agent=ShellAgent, policy=PermissionPolicy.allow())
async def test_cancel_stops_a_running_command(acp_client: MockClient) -> None:
    session = await acp_client.new_session()
    # start_prompt() returns as soon as the agent accepted the prompt.
    turn = await session.start_prompt("run echo started; sleep 60")
    # Never sleep in a test: wait (with a timeout) for what you expect to see.
    await session.wait_for_terminal_output(contains=b"started")
    await session.cancel()
    result = await turn.wait()
    assert result.stop_reason == "cancelled"
    assert [call.status for call in session.view.tool_calls.values()] == ["cancelled"]


@pytest.mark.acp_agent(agent=EditAgent, policy=PermissionPolicy.raw({"outcome": "_maybe"}))
async def test_an_unknown_answer_is_not_approval(acp_client: MockClient, tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    session = await acp_client.new_session()
    await session.prompt(f"write {target}\nhello\n")
    assert not target.exists()


async def test_any_agent_as_a_subprocess(acp_client_factory: Callable[..., MockClient]) -> None:
    # Any command line works, in any language: the client speaks ACP over its stdio.
    command = [sys.executable, str(Path(__file__).with_name("echo_agent.py"))]
    async with acp_client_factory(command) as client:
        session = await client.new_session()
        result = await session.prompt("over stdio")
        assert result.text == "over stdio"
