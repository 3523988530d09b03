"""The shell and edit example agents, driven like an editor would drive them.

In process (both anyio backends) through the testing kit's MockClient with
strict conformance checking, and as real subprocesses
(``python examples/shell_agent.py``) to check that closing stdin ends the
agent with exit code 0 and no child process left.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

import anyio
import anyio.to_thread
import pytest
from support import EXAMPLES, gone, load_example

import acpio
from acpio import schema
from acpio.testing import (
    ClientSession,
    MockClient,
    PermissionPolicy,
    PermissionRequest,
    TerminalView,
)

pytestmark = pytest.mark.anyio

ShellAgent: type[acpio.Agent] = load_example("shell_agent").ShellAgent
EditAgent: type[acpio.Agent] = load_example("edit_agent").EditAgent
SHELL_USAGE: str = load_example("shell_agent").USAGE
EDIT_USAGE: str = load_example("edit_agent").USAGE


async def wait_for_pids(session: ClientSession, count: int) -> tuple[TerminalView, list[int]]:
    """Wait until a terminal shows ``count`` process ids (one per line); returns them."""

    def ready() -> TerminalView | None:
        for view in session.view.terminals.values():
            if len(view.text.split()) == count:
                return view
        return None

    view = await session.wait_for(ready)
    assert view is not None
    return view, [int(pid) for pid in view.text.split()]


def tool_call_updates(client: MockClient) -> list[dict[str, object]]:
    found: list[dict[str, object]] = []
    for message in client.transcript.messages("agent->client", method="session/update"):
        assert isinstance(message, dict)
        update = message["params"]["update"]
        if update["sessionUpdate"] == "tool_call_update":
            found.append(update)
    return found


# --------------------------------------------------------------------------- shell agent


async def test_shell_usage_for_other_prompts() -> None:
    async with MockClient(ShellAgent()) as client:
        session = await client.new_session()
        for prompt in ("hello", "run", "run   ", "ls -la"):
            result = await session.prompt(prompt)
            assert result.stop_reason == "end_turn"
            assert result.text == SHELL_USAGE
        assert not session.view.tool_calls
        assert client.permission_requests == []


async def test_shell_runs_an_allowed_command_with_live_bytes_and_exit_status() -> None:
    command = "printf 'out\\n'; printf 'err\\n' >&2; printf '\\342\\202'; printf '\\254\\000\\n'"
    async with MockClient(ShellAgent(), policy=PermissionPolicy.allow()) as client:
        session = await client.new_session()
        result = await session.prompt(f"run {command}")
        request = client.permission_requests[0]
        (call,) = session.view.tool_calls.values()
        (terminal,) = session.view.terminals.values()
        first = tool_call_updates(client)[0]

    assert result.stop_reason == "end_turn"
    # The first report: an execute call, pending, with its raw input.
    assert first["kind"] == "execute"
    assert first["status"] == "pending"
    assert first["rawInput"] == {"command": command}
    assert first["title"] == f"Run `{command}`"
    # Permission was asked about the exact command in the session's directory.
    assert request.subject == {
        "type": "command",
        "command": command,
        "cwd": session.cwd,
        "toolCallId": call.id,
    }
    statuses = [u.get("status") for u in tool_call_updates(client) if "status" in u]
    assert statuses == ["pending", "in_progress", "completed"]
    assert call.terminal_ids == [terminal.id]
    assert terminal.output == b"out\nerr\n\xe2\x82\xac\x00\n"
    assert (terminal.command, terminal.cwd, terminal.exit_code) == (command, session.cwd, 0)
    assert call.raw_output == {"exitCode": 0, "signal": None}
    assert client.violations == []


async def test_shell_fails_the_call_when_the_command_fails() -> None:
    async with MockClient(ShellAgent(), policy=PermissionPolicy.allow()) as client:
        session = await client.new_session()
        result = await session.prompt("run echo no; exit 7")
        (call,) = session.view.tool_calls.values()
        (terminal,) = session.view.terminals.values()

    assert result.stop_reason == "end_turn"
    assert call.status == "failed"
    assert "exit code 7" in call.text
    assert (terminal.output, terminal.exit_code) == (b"no\n", 7)


@pytest.mark.parametrize(
    ("policy", "status", "stop_reason"),
    [
        (PermissionPolicy.reject(), "failed", "end_turn"),
        (PermissionPolicy.select("allow"), "failed", "end_turn"),  # never offered
        (PermissionPolicy.raw({"outcome": "_approved"}), "failed", "end_turn"),  # not understood
        (PermissionPolicy.cancelled(), "cancelled", "cancelled"),
    ],
)
async def test_shell_runs_nothing_without_approval(
    policy: PermissionPolicy, status: str, stop_reason: str, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    async with MockClient(ShellAgent(), policy=policy, cwd=tmp_path) as client:
        session = await client.new_session()
        result = await session.prompt(f"run touch {marker}")
        (call,) = session.view.tool_calls.values()

    assert result.stop_reason == stop_reason
    assert not marker.exists()
    assert call.status == status
    assert not session.view.terminals
    assert client.violations == []


async def test_shell_session_cancel_kills_the_command() -> None:
    async with MockClient(ShellAgent(), policy=PermissionPolicy.allow()) as client:
        session = await client.new_session()
        turn = await session.start_prompt("run echo $$; sleep 1000 & echo $!; wait")
        terminal, pids = await wait_for_pids(session, 2)
        await session.cancel()
        result = await turn.wait(timeout=3)
        (call,) = session.view.tool_calls.values()

    assert result.stop_reason == "cancelled"
    assert all([await gone(pid) for pid in pids])
    assert terminal.exited and terminal.signal == "SIGTERM"
    assert call.status == "cancelled"


async def test_shell_command_stopped_with_terminal_cancel_fails_the_call() -> None:
    async with MockClient(ShellAgent(), policy=PermissionPolicy.allow()) as client:
        session = await client.new_session()
        turn = await session.start_prompt("run echo $$; exec sleep 1000")
        terminal = await session.wait_for_terminal_output(contains=b"\n")
        await session.cancel_terminal(terminal.id)
        result = await turn.wait()
        (call,) = session.view.tool_calls.values()

    assert await gone(int(terminal.text))
    assert result.stop_reason == "end_turn"
    assert terminal.signal == "SIGTERM"
    assert call.status == "failed" and "signal SIGTERM" in call.text


async def test_shell_tool_call_cancel_cancels_the_call_and_the_turn_ends_normally() -> None:
    async with MockClient(ShellAgent(), policy=PermissionPolicy.allow()) as client:
        session = await client.new_session()
        turn = await session.start_prompt("run echo $$; exec sleep 1000")
        terminal = await session.wait_for_terminal_output(contains=b"\n")
        (call,) = session.view.tool_calls.values()
        await session.cancel_tool_call(call.id)
        result = await turn.wait()

    assert await gone(int(terminal.text))
    assert result.stop_reason == "end_turn"
    assert terminal.exited
    assert call.status == "cancelled"


async def test_shell_tool_call_cancel_while_asking_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    async with MockClient(ShellAgent(), policy=PermissionPolicy.never(), cwd=tmp_path) as client:
        session = await client.new_session()
        turn = await session.start_prompt(f"run touch {marker}")
        request = await session.wait_for_permission_request(pending=True)
        assert request.tool_call_id is not None
        await session.cancel_tool_call(request.tool_call_id)
        result = await turn.wait()
        (call,) = session.view.tool_calls.values()

    assert result.stop_reason == "end_turn"
    assert request.cancelled_by_agent
    assert call.status == "cancelled"
    assert not marker.exists()


# --------------------------------------------------------------------------- edit agent


async def test_edit_shows_the_diff_before_asking_then_writes(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("one\ntwo\nthree\n")
    original = path.read_bytes()
    seen: list[tuple[str, list[schema.Diff]]] = []

    def decide(request: PermissionRequest) -> Mapping[str, object]:
        # What the user sees while deciding: the call, its location and its diff.
        (call,) = client.sessions[str(request.session_id)].view.tool_calls.values()
        seen.append((call.status, call.diffs))
        return {"outcome": "selected", "optionId": "allow_once"}

    async with MockClient(EditAgent(), policy=decide, cwd=tmp_path) as client:
        session = await client.new_session()
        result = await session.prompt(f"write {path}\none\n2\nthree\n")
        request = client.permission_requests[0]
        (call,) = session.view.tool_calls.values()

    assert result.stop_reason == "end_turn"
    assert path.read_text() == "one\n2\nthree\n"
    assert call.status == "completed"
    assert call.kind == "edit"
    assert [loc.path for loc in call.locations] == [str(path)]
    assert request.subject == {"type": "tool_call", "toolCall": {"toolCallId": call.id}}
    ((status, diffs),) = seen
    assert status == "pending"
    (diff,) = diffs
    (change,) = diff.changes
    assert isinstance(change, schema.ModifyChange) and change.path == str(path)
    # The patch shown is one git accepts: it turns the original into the new file.
    replay = tmp_path / "replay"
    replay.mkdir()
    copy = replay / "notes.txt"
    copy.write_bytes(original)
    assert isinstance(diff.patch, schema.DiffPatch)
    patch = diff.patch.text.replace(str(path), str(copy))
    await anyio.run_process(
        ["git", "apply", "-p0", "--unsafe-paths"],
        input=patch.encode(),
        cwd=replay,
        env={
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "PATH": os.environ["PATH"],
        },
    )
    assert copy.read_bytes() == path.read_bytes()
    assert client.violations == []


async def test_edit_creates_a_new_file(tmp_path: Path) -> None:
    path = tmp_path / "new.txt"
    async with MockClient(EditAgent(), policy=PermissionPolicy.allow(), cwd=tmp_path) as client:
        session = await client.new_session()
        await session.prompt(f"write {path}\nhello\n")
        (call,) = session.view.tool_calls.values()

    assert path.read_text() == "hello\n"
    assert [c.operation for c in call.diffs[0].changes] == ["add"]
    assert call.status == "completed"


@pytest.mark.parametrize(
    ("policy", "status", "stop_reason"),
    [
        (PermissionPolicy.reject(), "failed", "end_turn"),
        (PermissionPolicy.select("allow"), "failed", "end_turn"),
        (PermissionPolicy.raw({"outcome": "_maybe"}), "failed", "end_turn"),
        (PermissionPolicy.cancelled(), "cancelled", "cancelled"),
    ],
)
async def test_edit_without_approval_touches_nothing(
    policy: PermissionPolicy, status: str, stop_reason: str, tmp_path: Path
) -> None:
    path = tmp_path / "keep.txt"
    path.write_text("original\n")
    async with MockClient(EditAgent(), policy=policy, cwd=tmp_path) as client:
        session = await client.new_session()
        write = await session.prompt(f"write {path}\nreplaced\n")
        delete = await session.prompt(f"delete {path}")
        calls = list(session.view.tool_calls.values())

    assert path.read_text() == "original\n"
    assert [c.status for c in calls] == [status, status]
    assert [c.kind for c in calls] == ["edit", "delete"]
    assert write.stop_reason == delete.stop_reason == stop_reason


async def test_edit_delete_after_approval(tmp_path: Path) -> None:
    path = tmp_path / "old.txt"
    path.write_text("bye\n")
    async with MockClient(EditAgent(), policy=PermissionPolicy.allow(), cwd=tmp_path) as client:
        session = await client.new_session()
        await session.prompt(f"delete {path}")
        (call,) = session.view.tool_calls.values()
        missing = await session.prompt(f"delete {path}")

    assert not path.exists()
    assert call.status == "completed" and call.kind == "delete"
    assert [c.operation for c in call.diffs[0].changes] == ["delete"]
    # Deleting it again: nothing to delete, nothing asked.
    assert (
        missing.view.tool_calls and next(iter(missing.view.tool_calls.values())).status == "failed"
    )
    assert len(client.permission_requests) == 1


async def test_edit_takes_paths_relative_to_the_session_and_stays_inside(tmp_path: Path) -> None:
    # Issue 31: a relative path is the session's cwd's; one leading out is refused.
    (tmp_path / "proj").mkdir()
    (tmp_path / "x").write_text("outside\n")
    cwd = tmp_path / "proj"
    async with MockClient(EditAgent(), policy=PermissionPolicy.allow(), cwd=cwd) as client:
        session = await client.new_session()
        write = await session.prompt("write notes.txt\nhello\n")
        delete = await session.prompt("delete ../x")
        usage = await session.prompt("rename a b")

    assert (cwd / "notes.txt").read_text() == "hello\n"
    (call,) = write.view.tool_calls.values()
    assert call.status == "completed" and [loc.path for loc in call.locations] == [
        str(cwd / "notes.txt")
    ]
    (call,) = delete.view.tool_calls.values()
    assert call.status == "failed"
    assert "outside the session's directories" in call.text
    assert call.locations == [] and call.diffs == []
    assert (tmp_path / "x").read_text() == "outside\n"
    assert usage.text == EDIT_USAGE
    assert len(client.permission_requests) == 1


async def test_edit_reports_what_it_cannot_do(tmp_path: Path) -> None:
    directory = tmp_path / "dir"
    directory.mkdir()
    async with MockClient(EditAgent(), policy=PermissionPolicy.allow(), cwd=tmp_path) as client:
        session = await client.new_session()
        unreadable = await session.prompt(f"write {directory}\nx")
        unwritable = await session.prompt(f"write {tmp_path}/missing/dir/file\nx")

    (call,) = unreadable.view.tool_calls.values()
    assert call.status == "failed" and "Cannot read" in call.text
    (call,) = unwritable.view.tool_calls.values()
    assert call.status == "failed" and "Could not write" in call.text
    assert unreadable.stop_reason == unwritable.stop_reason == "end_turn"


# --------------------------------------------------------------------------- as real subprocesses


@pytest.mark.parametrize("name", ["shell_agent", "edit_agent"])
async def test_example_runs_as_a_subprocess_and_exits_0_when_stdin_closes(
    name: str, tmp_path: Path
) -> None:
    command = [sys.executable, str(EXAMPLES / f"{name}.py")]
    async with MockClient(command, policy=PermissionPolicy.allow()) as client:
        session = await client.new_session(tmp_path)
        if name == "shell_agent":
            result = await session.prompt("run printf 'a\\000b'")
            (terminal,) = session.view.terminals.values()
            assert terminal.output == b"a\x00b"
        else:
            result = await session.prompt(f"write {tmp_path / 'f.txt'}\ncontent")
            assert (tmp_path / "f.txt").read_text() == "content"
        assert result.stop_reason == "end_turn"
        assert client.violations == []

    assert client.returncode == 0


async def test_shell_subprocess_leaves_no_child_when_stdin_closes_mid_command() -> None:
    command = [sys.executable, str(EXAMPLES / "shell_agent.py")]
    async with MockClient(command, policy=PermissionPolicy.allow()) as client:
        session = await client.new_session()
        await session.start_prompt("run echo $$; sleep 1000 & echo $!; wait")
        _, pids = await wait_for_pids(session, 2)
    # Leaving the client closed the agent's stdin; it exited on its own, code 0.
    assert client.returncode == 0
    assert all([await gone(pid) for pid in pids])
