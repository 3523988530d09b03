"""TerminalHandle: exact bytes, coalescing, snapshots, exit status and real processes.

The client side is the testing kit's MockClient (in process, strict
conformance checking): its view decodes every ``terminal_output_chunk`` on
its own and appends the bytes, as an editor must, so "the client has exactly
these bytes" is checked end to end. Process tests start real processes and
check with ``pidfd`` (no sleeping, no polling) that none is left behind.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import anyio.to_thread
import pytest
from support import gone, wait_gone

import acpio
from acpio import schema
from acpio.testing import ClientSession, MockClient, PermissionPolicy, TerminalView

pytestmark = pytest.mark.anyio

Body = Callable[[acpio.Session], Awaitable[str | None]]
JsonObject = dict[str, object]
NEVER = 3600.0  # a flush delay that never fires during a test


class Scripted(acpio.Agent):
    """An agent whose prompt handler is the test's coroutine."""

    def __init__(self, body: Body) -> None:
        self.body = body

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str | None:
        return await self.body(session)


def wire_updates(client: MockClient) -> list[JsonObject]:
    """The raw ``update`` objects the agent sent, in order."""
    found: list[JsonObject] = []
    for message in client.transcript.messages("agent->client", method="session/update"):
        assert isinstance(message, dict)
        params = message["params"]
        assert isinstance(params, dict)
        update = params["update"]
        assert isinstance(update, dict)
        found.append(update)
    return found


def chunks(client: MockClient, terminal_id: str) -> list[bytes]:
    """The bytes of each ``terminal_output_chunk`` of a terminal, each decoded on its own."""
    return [
        base64.b64decode(str(u["data"]), validate=True)
        for u in wire_updates(client)
        if u["sessionUpdate"] == "terminal_output_chunk" and u["terminalId"] == terminal_id
    ]


def short(updates: list[JsonObject]) -> list[str]:
    """A compact trace: the update kind, plus the state or status when there is one."""
    trace: list[str] = []
    for u in updates:
        kind = str(u["sessionUpdate"])
        detail = u.get("state") or u.get("status") or ("exit" if "exitStatus" in u else "")
        trace.append(f"{kind}:{detail}" if detail else kind)
    return trace


def alive(pid: int) -> bool:
    return not wait_gone(pid, 0)


def pids_in(view: TerminalView) -> list[int]:
    return [int(line) for line in view.text.split()]


async def wait_for_pids(
    session: ClientSession, terminal_id: str, count: int
) -> tuple[TerminalView, list[int]]:
    """Wait until a terminal shows ``count`` process ids (one per line); returns them."""

    def ready() -> TerminalView | None:
        view = session.view.terminals.get(terminal_id)
        return view if view is not None and len(view.text.split()) == count else None

    view = await session.wait_for(ready)
    assert view is not None
    return view, pids_in(view)


# --------------------------------------------------------------------------- creation


async def test_a_calls_terminal_is_announced_and_shown_in_the_calls_content() -> None:
    async def body(session: acpio.Session) -> None:
        async with session.tool_call("Build", kind="execute", tool_call_id="c") as call:
            terminal = await call.terminal(command="make all", size=(80, 24), terminal_id="t")
            await terminal.exit(0)

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        await session.prompt("go")
        updates = wire_updates(client)
        view = session.view

    created = [u for u in updates if u.get("terminalId") == "t" or u.get("toolCallId") == "c"]
    assert created[1] == {
        "sessionUpdate": "terminal_update",
        "terminalId": "t",
        "command": "make all",
        "cwd": session.cwd,
        "size": {"cols": 80, "rows": 24},
    }
    assert created[2] == {
        "sessionUpdate": "tool_call_content_chunk",
        "toolCallId": "c",
        "content": {"type": "terminal", "terminalId": "t"},
    }
    assert view.tool_calls["c"].terminal_ids == ["t"]
    terminal = view.terminals["t"]
    assert (terminal.command, terminal.cwd, terminal.exit_code) == ("make all", session.cwd, 0)
    assert terminal.size == schema.TerminalSize(cols=80, rows=24)


async def test_a_terminal_without_a_tool_call_and_the_rules_for_ids_and_cwd(
    tmp_path: Path,
) -> None:
    errors: list[str] = []

    async def body(session: acpio.Session) -> None:
        terminal = session.terminal(command="tail -f log", cwd=str(tmp_path), terminal_id="t")
        await terminal.write(b"first line\n")
        await terminal.update(size=(120, 40), command="tail -F log")
        await terminal.update(size=None)
        for attempt in (
            lambda: session.terminal(cwd="relative/dir"),
            lambda: terminal.update(cwd="relative"),
        ):
            try:
                await attempt()
            except acpio.LocalProtocolError as exc:
                errors.append(str(exc))
        try:
            async with session.tool_call("t") as call:
                await call.terminal(terminal_id="t")
        except acpio.LocalProtocolError as exc:
            errors.append(str(exc))

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        result = await session.prompt("go")
        view = session.view.terminals["t"]

    assert result.stop_reason == "end_turn"
    assert view.output == b"first line\n"
    assert (view.command, view.cwd, view.size) == ("tail -F log", str(tmp_path), None)
    assert len(errors) == 3
    assert "absolute" in errors[0] and "absolute" in errors[1]
    assert "'t'" in errors[2] and "reused" in errors[2]
    assert list(session.view.terminals) == ["t"]


# --------------------------------------------------------------------------- bytes


BINARY = bytes(range(256)) + b"\x1b[31mred\x1b[0m\r\n\x00\xff\xfe" + "héllo €".encode()


async def test_any_bytes_reach_the_client_exactly() -> None:
    async def body(session: acpio.Session) -> None:
        terminal = await session.terminal(terminal_id="t")
        for start in range(0, len(BINARY), 7):
            await terminal.write(BINARY[start : start + 7])
        await terminal.write(bytearray(b"[bytearray]"))
        await terminal.write(memoryview(b"[memoryview]"))
        await terminal.write(b"")
        await terminal.exit(0)

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        await session.prompt("go")
        view = session.view.terminals["t"]

    expected = BINARY + b"[bytearray][memoryview]"
    assert view.output == expected
    assert b"".join(chunks(client, "t")) == expected
    assert view.decode_errors == 0


async def test_each_chunk_is_encoded_on_its_own_and_may_split_a_character() -> None:
    euro = "€".encode()  # three bytes

    async def body(session: acpio.Session) -> None:
        terminal = await session.terminal(terminal_id="t")
        terminal.max_chunk = 2
        await terminal.write(euro + b"\x1b[1m")

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        await session.prompt("go")
        view = session.view.terminals["t"]
        raw = [
            u["data"]
            for u in wire_updates(client)
            if u.get("sessionUpdate") == "terminal_output_chunk"
        ]

    # The character and the escape sequence are cut between chunks; each chunk is
    # its own base64 text (padded), and decoding chunk by chunk restores the bytes.
    assert chunks(client, "t") == [euro[:2], euro[2:] + b"\x1b", b"[1", b"m"]
    assert raw == [base64.b64encode(c).decode() for c in chunks(client, "t")]
    assert view.text == "€\x1b[1m"


async def test_small_writes_are_coalesced_within_the_size_bound() -> None:
    async def body(session: acpio.Session) -> None:
        big = session.terminal(terminal_id="big")
        big.flush_delay = NEVER
        for _ in range(1000):
            await big.write(b"x")
        await big.exit(0)
        bounded = session.terminal(terminal_id="bounded")
        bounded.flush_delay = NEVER
        bounded.max_chunk = 300
        for _ in range(1000):
            await bounded.write(b"y")
        await bounded.write(b"z" * 700)  # a large write is cut at the bound too
        await bounded.exit(0)

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        await session.prompt("go")

    assert chunks(client, "big") == [b"x" * 1000]
    bounded = chunks(client, "bounded")
    assert [len(c) for c in bounded] == [300, 300, 300, 300, 300, 200]
    assert b"".join(bounded) == b"y" * 1000 + b"z" * 700


async def test_buffered_bytes_are_flushed_after_the_delay_without_other_updates() -> None:
    finish = anyio.Event()

    async def body(session: acpio.Session) -> None:
        terminal = await session.terminal(terminal_id="t")
        terminal.flush_delay = 0.001
        await terminal.write(b"tick")
        await terminal.write(b" tock")
        await finish.wait()

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        view = await session.wait_for_terminal_output("t", contains=b"tick tock", exited=False)
        finish.set()
        await turn.wait()

    assert view.output == b"tick tock"
    assert chunks(client, "t") == [b"tick tock"]


async def test_buffered_bytes_go_out_before_any_later_update() -> None:
    async def body(session: acpio.Session) -> None:
        async with session.tool_call("t", tool_call_id="c") as call:
            terminal = await call.terminal(terminal_id="t")
            terminal.flush_delay = NEVER
            await terminal.write(b"1")
            await call.update(title="renamed")
            await terminal.write(b"2")
            await call.append_text("note")
            await terminal.write(b"3")
            await session.message("message")
            await terminal.write(b"4")
            await call.request_permission()
            await terminal.write(b"5")
            await terminal.snapshot(b"snap")
            await terminal.write(b"6")
            await terminal.exit(0)
            await terminal.write(b"7")
        # The final status of the call follows the last bytes too.

    async with MockClient(Scripted(body), policy=PermissionPolicy.allow()) as client:
        session = await client.new_session()
        await session.prompt("go")
        messages = client.transcript.messages("agent->client")

    trace: list[str] = []
    for message in messages:
        assert isinstance(message, dict)
        if message.get("method") == "session/request_permission":
            trace.append("permission")
        elif message.get("method") == "session/update":
            update = message["params"]["update"]
            kind = update["sessionUpdate"]
            if kind == "terminal_output_chunk":
                trace.append(base64.b64decode(update["data"]).decode())
            elif kind in ("tool_call_update", "tool_call_content_chunk", "agent_message"):
                trace.append(kind)
            elif kind == "terminal_update" and "output" in update:
                trace.append("snapshot")
            elif kind == "terminal_update" and "exitStatus" in update:
                trace.append("exit")
    assert trace == [
        "tool_call_update",
        "tool_call_content_chunk",  # the terminal item
        "1",
        "tool_call_update",
        "2",
        "tool_call_content_chunk",
        "3",
        "agent_message",
        "4",
        "permission",
        "5",
        "snapshot",
        "6",
        "exit",
        "7",
        "tool_call_update",
    ]
    assert session.view.terminals["t"].output == b"snap67"


async def test_writes_keep_the_sessions_dirty_list_bounded() -> None:
    sizes: list[int] = []

    async def body(session: acpio.Session) -> None:
        terminal = await session.terminal(terminal_id="t")
        terminal.flush_delay = NEVER
        terminal.max_chunk = 10
        for _ in range(500):
            await terminal.write(b"123456789")  # buffered
            await terminal.write(b"0")  # fills the chunk: sent at once
            sizes.append(len(terminal._channel._updates.dirty_terminals))
        await terminal.exit(0)

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        await session.prompt("go")

    # A terminal is on the list at most once however often it fills a chunk.
    assert max(sizes) <= 1
    assert b"".join(chunks(client, "t")) == b"1234567890" * 500


async def test_snapshot_replaces_the_output_and_exit_reports_codes_and_signals() -> None:
    async def body(session: acpio.Session) -> None:
        first = await session.terminal(terminal_id="first", cancellable=True)
        await first.write(b"old bytes")
        await first.snapshot(b"new screen\r\n")
        await first.write(b"appended")
        await first.exit(exit_code=2)
        second = await session.terminal(terminal_id="second")
        await second.exit(signal="SIGTERM")
        third = await session.terminal(terminal_id="third")
        await third.exit()

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        await session.prompt("go")
        updates = [u for u in wire_updates(client) if u["sessionUpdate"] == "terminal_update"]
        views = session.view.terminals

    assert views["first"].output == b"new screen\r\nappended"
    assert (views["first"].exit_code, views["first"].signal) == (2, None)
    assert views["first"].capabilities is None
    assert (views["second"].exit_code, views["second"].signal) == (None, "SIGTERM")
    assert views["third"].exited and views["third"].exit_code is None
    exits = [u for u in updates if "exitStatus" in u]
    assert exits == [
        {
            "sessionUpdate": "terminal_update",
            "terminalId": "first",
            "exitStatus": {"exitCode": 2},
            "capabilities": None,
        },
        {
            "sessionUpdate": "terminal_update",
            "terminalId": "second",
            "exitStatus": {"signal": "SIGTERM"},
        },
        {"sessionUpdate": "terminal_update", "terminalId": "third", "exitStatus": {}},
    ]
    snapshot = next(u for u in updates if "output" in u)
    assert snapshot["output"] == {"data": base64.b64encode(b"new screen\r\n").decode()}


def test_exit_status_from_a_return_code() -> None:
    assert acpio.ExitStatus.from_returncode(0) == acpio.ExitStatus(exit_code=0)
    assert acpio.ExitStatus.from_returncode(0).success
    assert acpio.ExitStatus.from_returncode(3) == acpio.ExitStatus(exit_code=3)
    assert acpio.ExitStatus.from_returncode(-15) == acpio.ExitStatus(signal="SIGTERM")
    assert acpio.ExitStatus.from_returncode(-9).signal == "SIGKILL"
    assert not acpio.ExitStatus(signal="SIGINT").success


# --------------------------------------------------------------------------- real processes


async def test_run_streams_stdout_and_stderr_and_reports_the_exit_status(tmp_path: Path) -> None:
    statuses: list[acpio.ExitStatus] = []
    (tmp_path / "marker").write_text("here")

    async def body(session: acpio.Session) -> None:
        async with session.tool_call("Run", kind="execute") as call:
            ok = await call.terminal(command="script", terminal_id="ok")
            statuses.append(
                await ok.run_shell(
                    "printf 'out\\n'; printf 'err\\n' >&2; printf '\\377\\000raw'; "
                    "ls; echo $GREETING",
                    cwd=str(tmp_path),
                    env={"GREETING": "hi", "PATH": os.environ["PATH"]},
                )
            )
            failing = await call.terminal(terminal_id="failing")
            statuses.append(await failing.run(["sh", "-c", "echo bye; exit 3"]))
            killed = await call.terminal(terminal_id="killed")
            statuses.append(await killed.run_shell("kill -KILL $$"))

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        result = await session.prompt("go")
        views = session.view.terminals

    assert result.stop_reason == "end_turn"
    assert statuses == [
        acpio.ExitStatus(exit_code=0),
        acpio.ExitStatus(exit_code=3),
        acpio.ExitStatus(signal="SIGKILL"),
    ]
    assert views["ok"].output == b"out\nerr\n\xff\x00rawmarker\nhi\n"
    assert views["ok"].exit_code == 0
    assert views["failing"].output == b"bye\n"
    assert views["failing"].exit_code == 3
    assert views["killed"].signal == "SIGKILL"


async def test_a_command_is_fixed_when_made_and_bad_ones_are_refused(tmp_path: Path) -> None:
    greeting: dict[str, str] = {}

    async def body(session: acpio.Session) -> None:
        async with session.tool_call("Run", kind="execute") as call:
            terminal = await call.terminal(terminal_id="t")
            with pytest.raises(ValueError, match="argv must not be empty"):
                terminal.start([], cwd="relative")  # the first rule broken is named
            with pytest.raises(acpio.RelativePathError, match="process cwd"):
                terminal.start(["true"], cwd="relative", output_limit=-1)
            with pytest.raises(ValueError, match="output_limit must not be negative"):
                terminal.start(["true"], output_limit=-1)
            env = {"GREETING": "hi", "PATH": os.environ["PATH"]}
            running = terminal.start_shell("echo $GREETING", cwd=str(tmp_path), env=env)
            env["GREETING"] = "changed"  # after the command was made: it runs as made
            async with running:
                result = await running.wait()
            greeting["said"] = result.text

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        result = await session.prompt("go")
        view = session.view.terminals["t"]

    assert result.stop_reason == "end_turn"
    assert greeting == {"said": "hi\n"}
    # Nothing was sent for the refused commands: the terminal ran the one good command.
    assert (view.command, view.output, view.exit_code) == ("echo $GREETING", b"hi\n", 0)


async def test_run_shows_its_command_on_a_terminal_created_without_one() -> None:
    async def body(session: acpio.Session) -> None:
        unnamed = await session.terminal(terminal_id="unnamed")
        await unnamed.run(["echo", "two words"])
        lazy = session.terminal(terminal_id="lazy")
        await lazy.run_shell("true")
        named = await session.terminal(command="custom title", terminal_id="named")
        await named.run_shell("true")

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        await session.prompt("go")
        views = session.view.terminals

    assert views["unnamed"].command == "echo 'two words'"
    assert views["unnamed"].output == b"two words\n"
    assert views["lazy"].command == "true"
    assert views["named"].command == "custom title"


async def test_a_terminal_runs_one_process_and_its_id_is_never_reused() -> None:
    errors: list[Exception] = []
    running = anyio.Event()

    async def body(session: acpio.Session) -> None:
        terminal = await session.terminal(terminal_id="t", cancellable=True)

        async def second() -> None:
            await running.wait()
            try:
                await terminal.run(["true"])
            except RuntimeError as exc:
                errors.append(exc)
            terminal.request_cancel()

        async with anyio.create_task_group() as group:
            group.start_soon(second)
            await terminal.run_shell("echo up; exec sleep 1000")
        try:
            # A new process under an exited terminal's id would reuse the id.
            await terminal.run(["true"])
        except acpio.LocalProtocolError as exc:
            errors.append(exc)

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        await session.wait_for_terminal_output("t", contains=b"up")
        running.set()
        result = await turn.wait()
        view = session.view.terminals["t"]

    assert result.stop_reason == "end_turn"
    assert view.signal == "SIGTERM"
    assert [type(e) for e in errors] == [RuntimeError, acpio.LocalProtocolError]
    assert "already running" in str(errors[0])
    assert "already exited" in str(errors[1])


async def test_twenty_megabytes_of_process_output_arrive_exactly(tmp_path: Path) -> None:
    copy = tmp_path / "copy.bin"

    async def body(session: acpio.Session) -> None:
        async with session.tool_call("Generate", kind="execute") as call:
            terminal = await call.terminal(terminal_id="t")
            status = await terminal.run_shell(f"head -c 20000000 /dev/urandom | tee {copy}")
            assert status.success

    async with MockClient(Scripted(body), timeout=60) as client:
        session = await client.new_session()
        result = await session.prompt("go")
        output = session.view.terminals["t"].output
        pieces = chunks(client, "t")

    expected = copy.read_bytes()
    assert len(expected) == 20_000_000
    assert output == expected
    assert result.stop_reason == "end_turn"
    # Coalesced into large chunks, none above the bound.
    assert max(len(p) for p in pieces) <= 64 * 1024
    assert len(pieces) < 20_000_000 // 16_384


async def test_session_cancel_kills_the_process_group_and_reports_the_exit() -> None:
    async def body(session: acpio.Session) -> None:
        async with session.tool_call("Serve", kind="execute", tool_call_id="c") as call:
            terminal = await call.terminal(terminal_id="t")
            # The shell and a child of its own, both in the terminal's process group.
            await terminal.run_shell("echo $$; sleep 1000 & echo $!; wait")

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        view, pids = await wait_for_pids(session, "t", 2)
        assert all(alive(pid) for pid in pids) and not view.exited
        await session.cancel()
        result = await turn.wait(timeout=5)

    assert result.stop_reason == "cancelled"
    assert all([await gone(pid) for pid in pids])
    assert view.exited and view.signal == "SIGTERM"
    assert session.view.tool_calls["c"].status == "cancelled"
    trace = short(wire_updates(client))
    assert trace[-3:] == [
        "terminal_update:exit",
        "tool_call_update:cancelled",
        "state_update:idle",
    ]


async def test_a_process_ignoring_sigterm_is_killed_and_its_exit_reported_in_time() -> None:
    async def body(session: acpio.Session) -> None:
        terminal = await session.terminal(terminal_id="t")
        # Ignored signals stay ignored in children: both ignore SIGTERM.
        await terminal.run_shell("trap '' TERM; echo $$; sleep 1000 & echo $!; wait")

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        view, pids = await wait_for_pids(session, "t", 2)
        await session.cancel()
        result = await turn.wait(timeout=5)
        trace = short(wire_updates(client))

    assert result.stop_reason == "cancelled"
    assert all([await gone(pid) for pid in pids])
    # Killed after the grace, and reported before the turn went idle.
    assert view.signal == "SIGKILL"
    assert trace[-2:] == ["terminal_update:exit", "state_update:idle"]


async def test_closing_the_connection_kills_running_processes() -> None:
    async def body(session: acpio.Session) -> None:
        terminal = await session.terminal(terminal_id="t")
        await terminal.run_shell("echo $$; sleep 1000 & echo $!; wait")

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        await session.start_prompt("go")
        _, pids = await wait_for_pids(session, "t", 2)
        assert all(alive(pid) for pid in pids)
    # Leaving the client closed the connection; serve() returned.
    assert all([await gone(pid) for pid in pids])


async def test_closing_the_session_kills_its_processes() -> None:
    async def body(session: acpio.Session) -> None:
        terminal = await session.terminal(terminal_id="t")
        await terminal.run_shell("echo $$; exec sleep 1000")

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        view = await session.wait_for_terminal_output("t", contains=b"\n")
        (pid,) = pids_in(view)
        await session.close()
        assert await gone(pid)
        result = await turn.wait()

    assert result.stop_reason == "cancelled"
    assert view.exited


# --------------------------------------------------------------------------- terminal/cancel


async def test_terminal_cancel_stops_the_process_and_reports_its_exit() -> None:
    statuses: list[acpio.ExitStatus] = []

    async def body(session: acpio.Session) -> str:
        async with session.tool_call("Serve", kind="execute", tool_call_id="c") as call:
            terminal = await call.terminal(terminal_id="t", cancellable=True)
            statuses.append(await terminal.run_shell("echo $$; exec sleep 1000"))
            # Terminal exit and tool call status are independent: the author decides.
            await call.complete()
        await session.message("the turn went on")
        return "end_turn"

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        view = await session.wait_for_terminal_output("t", contains=b"\n")
        assert view.capabilities is not None and view.capabilities.cancel is not None
        (pid,) = pids_in(view)
        await session.cancel_terminal("t")
        result = await turn.wait()

    assert await gone(pid)
    assert statuses == [acpio.ExitStatus(signal="SIGTERM")]
    assert view.exited and view.signal == "SIGTERM"
    assert view.capabilities is None
    assert session.view.tool_calls["c"].status == "completed"
    assert result.stop_reason == "end_turn" and result.text == "the turn went on"


@pytest.mark.parametrize("case", ["unknown", "plain", "exited"])
async def test_terminal_cancel_is_refused_with_invalid_params(case: str) -> None:
    ready = anyio.Event()
    finish = anyio.Event()

    async def body(session: acpio.Session) -> None:
        plain = await session.terminal(terminal_id="plain")
        exited = await session.terminal(terminal_id="exited", cancellable=True)
        await exited.exit(0)
        ready.set()
        await finish.wait()
        await plain.exit(0)

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        await ready.wait()
        await session.wait_for(lambda: len(session.view.terminals) == 2)
        with pytest.raises(acpio.RequestError) as raised:
            await session.cancel_terminal(case)
        finish.set()
        await turn.wait()

    assert raised.value.code == schema.INVALID_PARAMS
