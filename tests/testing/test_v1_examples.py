"""The three example agents, unchanged, through the same scenarios over ACP v2 and v1.

Every test runs once per protocol version (and per anyio backend), strict: every
message is checked against that version's official schema and rules. The v1 cases need
the agent side of v1 (team v1core's branch): until it is merged an acpio agent answers a
v1 ``initialize`` with -32022 and the v1 cases fail at their first line. They are not
skipped, so they start passing the moment v1 lands.

What differs between the versions is only what v1 cannot say: a cancelled tool call is
``failed`` on v1 (its closed status enum has no ``cancelled``), a diff is v1's
``{path, oldText, newText}`` (kept in ``_meta``), and a command's output is in the
editor's terminal (``client_terminal=True``) or in the tool call's content.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support import load_example

import acpio
from acpio.testing import ClientSession, MockClient, PermissionPolicy

pytestmark = pytest.mark.anyio

EchoAgent: type[acpio.Agent] = load_example("echo_agent").EchoAgent
ShellAgent: type[acpio.Agent] = load_example("shell_agent").ShellAgent
EditAgent: type[acpio.Agent] = load_example("edit_agent").EditAgent
SHELL_USAGE: str = load_example("shell_agent").USAGE


@pytest.fixture(params=[2, 1], ids=["v2", "v1"])
def protocol(request: pytest.FixtureRequest) -> int:
    """The ACP version of the connection."""
    return int(request.param)


def client(agent: acpio.Agent, protocol: int, **options: object) -> MockClient:
    if protocol == 1:
        options.setdefault("client_terminal", True)
    return MockClient(agent, protocol_version=protocol, **options)  # type: ignore[arg-type]


def shown_output(session: ClientSession) -> str:
    """Everything a command's output may be shown in: terminals and tool call text."""
    view = session.view
    return "".join(terminal.text for terminal in view.terminals.values()) + "".join(
        call.text for call in view.tool_calls.values()
    )


async def test_echo_streams_the_prompt_back(protocol: int) -> None:
    async with client(EchoAgent(), protocol) as mock:
        session = await mock.new_session()
        result = await session.prompt("hello over both versions")
        assert result.stop_reason == "end_turn"
        assert result.text == "hello over both versions"
        assert [message.role for message in session.view.messages] == ["user", "agent"]
        assert session.view.user_messages[0].text == "hello over both versions"
        assert mock.conformance_report().ok


async def test_echo_turns_queue_and_cancel(protocol: int) -> None:
    async with client(EchoAgent(), protocol) as mock:
        session = await mock.new_session()
        first = await session.start_prompt("one")
        second = await session.start_prompt("two")
        assert (await first.wait()).text == "one"
        assert (await second.wait()).text == "two"
        assert session.view.stop_reasons == ["end_turn", "end_turn"]


async def test_echo_history_replays_into_a_fresh_view(protocol: int) -> None:
    async with client(EchoAgent(), protocol) as mock:
        session = await mock.new_session()
        await session.prompt("first")
        await session.prompt("second")
        before = [(message.role, message.text) for message in session.view.messages]
        assert session.cwd is not None
        await mock.load_session(session.id, session.cwd)
        after = [(message.role, message.text) for message in session.view.messages]
        assert after == before
        assert mock.conformance_report().ok


async def test_shell_usage_without_a_command(protocol: int) -> None:
    async with client(ShellAgent(), protocol) as mock:
        session = await mock.new_session()
        result = await session.prompt("hello")
        assert result.text == SHELL_USAGE
        assert not session.view.tool_calls


@pytest.mark.parametrize("client_terminal", [True, False])
async def test_shell_runs_an_allowed_command(protocol: int, client_terminal: bool) -> None:
    async with client(
        ShellAgent(), protocol, policy=PermissionPolicy.allow(), client_terminal=client_terminal
    ) as mock:
        session = await mock.new_session()
        result = await session.prompt("run echo allowed-output; exit 3")
        assert result.stop_reason == "end_turn"
        [request] = mock.permission_requests
        assert request.selected_option_id is not None
        [call] = session.view.tool_calls.values()
        assert call.kind == "execute"
        assert call.status == "failed"  # exit code 3
        assert "allowed-output" in shown_output(session)
        assert "exit code 3" in call.text
        assert mock.conformance_report().ok


async def test_shell_never_runs_a_rejected_command(protocol: int, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    async with client(ShellAgent(), protocol, policy=PermissionPolicy.reject()) as mock:
        session = await mock.new_session(tmp_path)
        result = await session.prompt(f"run touch {marker}")
        assert result.stop_reason == "end_turn"
        [call] = session.view.tool_calls.values()
        assert call.status == "failed"
        assert "Permission denied" in call.text
        assert not marker.exists()
        assert mock.conformance_report().ok


async def test_shell_cancel_kills_the_command(protocol: int) -> None:
    async with client(ShellAgent(), protocol, policy=PermissionPolicy.allow()) as mock:
        session = await mock.new_session()
        turn = await session.start_prompt("run echo started; sleep 30")
        await session.wait_for(lambda: "started" in shown_output(session))
        await session.cancel()
        result = await turn.wait(timeout=3)
        assert result.stop_reason == "cancelled"
        [call] = session.view.tool_calls.values()
        assert call.status == ("cancelled" if protocol == 2 else "failed")
        assert mock.conformance_report().ok


async def test_edit_shows_its_diff_and_writes_when_allowed(protocol: int, tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("old\n")
    async with client(EditAgent(), protocol, policy=PermissionPolicy.allow()) as mock:
        session = await mock.new_session(tmp_path)
        result = await session.prompt(f"write {target}\nnew\n")
        assert result.stop_reason == "end_turn"
        [call] = session.view.tool_calls.values()
        assert call.kind == "edit" and call.status == "completed"
        [diff] = call.diffs
        assert [change.path for change in diff.changes] == [str(target)]  # type: ignore[union-attr]
        assert target.read_text() == "new\n"
        assert mock.conformance_report().ok


async def test_edit_rejected_leaves_the_file(protocol: int, tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("old\n")
    async with client(EditAgent(), protocol, policy=PermissionPolicy.reject()) as mock:
        session = await mock.new_session(tmp_path)
        await session.prompt(f"write {target}\nnew\n")
        [call] = session.view.tool_calls.values()
        assert call.status == "failed"
        assert target.read_text() == "old\n"
        assert mock.conformance_report().ok
