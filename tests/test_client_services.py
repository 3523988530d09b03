"""v1 client services: commands in the client's terminals, and the client's file system.

The client is a fake v1 editor written here, on a real :class:`acpio.rpc.Connection`
over an in-memory stream pair: it answers ``terminal/create`` by really
running the process (in its own process group, output kept up to
``outputByteLimit`` bytes from the end, as the v1 terminals page says), and
``fs/*`` by reading and writing real files. The agent side is a real
:class:`acpio.Session` whose peer says v1 and what the client advertised (the
server fills it at ``initialize``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.abc
import anyio.lowlevel
import msgspec
import pytest
from support import gone, load_example

import acpio
from acpio import schema
from acpio._agent.session import create_session
from acpio._handles.process import KILL_GRACE
from acpio._protocol.peer import Peer
from acpio._wire.v1 import V1_WIRE
from acpio._wire.v2 import V2_WIRE
from acpio.testing import MockClient, PermissionPolicy

pytestmark = pytest.mark.anyio

JsonObject = dict[str, object]
V1_ALL = Peer(protocol_version=1, terminal=True, read_text_file=True, write_text_file=True)


@dataclass
class EditorTerminal:
    """One terminal of the fake editor: a real process and its retained output."""

    process: anyio.abc.Process
    limit: int | None
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    exit_status: JsonObject | None = None
    exited: anyio.Event = field(default_factory=anyio.Event)
    released: bool = False

    async def pump(self) -> None:
        assert self.process.stdout is not None
        async for data in self.process.stdout:
            self.output += data
            if self.limit is not None and len(self.output) > self.limit:
                cut = len(self.output) - self.limit
                while cut < len(self.output) and self.output[cut] & 0xC0 == 0x80:
                    cut += 1  # truncate at a character boundary
                del self.output[:cut]
                self.truncated = True
        code = await self.process.wait()
        self.exit_status = (
            {"exitCode": None, "signal": signal.Signals(-code).name}
            if code < 0
            else {"exitCode": code, "signal": None}
        )
        self.exited.set()


class FakeEditor:
    """A v1 client that runs terminals and serves files, recording every request."""

    def __init__(self, group: anyio.abc.TaskGroup) -> None:
        self.group = group
        self.requests: list[tuple[str, JsonObject]] = []
        self.updates: list[JsonObject] = []
        self.terminals: dict[str, EditorTerminal] = {}
        self.fail_reads = False
        self.exit_in_output = True  # some editors never put exitStatus in terminal/output
        self.never_answer: set[str] = set()  # methods left unanswered (until withdrawn)
        self.output_padding = 0  # bytes added to each terminal/output answer
        self.withdrawn: list[object] = []  # ids of requests the agent withdrew ($/cancel_request)
        self.withdrawal = anyio.Event()  # set at the first
        self.open: set[str] = set()  # methods of the requests being answered now
        self.request_ids: list[object] = []  # the id of each of ``requests``

    def methods(self) -> list[str]:
        return [method for method, _ in self.requests]

    async def on_request(
        self, method: str, params: msgspec.Raw | None, context: acpio.rpc.RequestContext
    ) -> object:
        request = json.loads(bytes(params)) if params is not None else {}
        self.requests.append((method, request))
        self.request_ids.append(context.id)
        self.open.add(method)
        try:
            return await self._answer(method, request)
        finally:
            self.open.discard(method)
            if context.cancel_scope.cancel_called:
                self.withdrawn.append(context.id)
                self.withdrawal.set()

    async def _answer(self, method: str, request: JsonObject) -> object:
        if method in self.never_answer:
            await anyio.sleep_forever()
        if method == "terminal/create":
            env = dict(os.environ)
            env.update({item["name"]: item["value"] for item in request.get("env", [])})
            process = await anyio.open_process(
                [request["command"], *request.get("args", [])],
                cwd=request.get("cwd"),
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            terminal_id = f"editor-term-{len(self.terminals) + 1}"
            terminal = self.terminals[terminal_id] = EditorTerminal(
                process, request.get("outputByteLimit")
            )
            self.group.start_soon(terminal.pump)
            return {"terminalId": terminal_id}
        if method.startswith("terminal/"):
            terminal = self.terminals[request["terminalId"]]
            if terminal.released:
                raise acpio.RequestError.invalid_params("terminal already released")
            if method == "terminal/output":
                answer: JsonObject = {
                    "output": terminal.output.decode("utf-8", "replace"),
                    "truncated": terminal.truncated,
                }
                if terminal.exit_status is not None and self.exit_in_output:
                    answer["exitStatus"] = terminal.exit_status
                if self.output_padding:
                    answer["_meta"] = {"padding": "x" * self.output_padding}
                return answer
            if method == "terminal/wait_for_exit":
                await terminal.exited.wait()
                return terminal.exit_status
            if method in ("terminal/kill", "terminal/release"):
                if terminal.process.returncode is None:
                    with suppress(ProcessLookupError):
                        os.killpg(terminal.process.pid, signal.SIGKILL)
                if method == "terminal/release":
                    terminal.released = True
                return {}
        if method == "fs/read_text_file":
            if self.fail_reads:
                raise acpio.RequestError(schema.RESOURCE_NOT_FOUND, f"no file {request['path']}")
            lines = Path(request["path"]).read_text().splitlines(keepends=True)
            start = request.get("line", 1) - 1
            limit = request.get("limit")
            return {"content": "".join(lines[start : None if limit is None else start + limit])}
        if method == "fs/write_text_file":
            Path(request["path"]).write_text(request["content"])
            return {}
        raise acpio.RequestError.method_not_found(method)

    async def on_notification(self, method: str, params: msgspec.Raw | None) -> None:
        if method == "session/update" and params is not None:
            self.updates.append(json.loads(bytes(params))["update"])


class NoRequests:
    """The agent side's handler: these tests send it nothing."""

    async def on_request(
        self, method: str, params: msgspec.Raw | None, context: acpio.rpc.RequestContext
    ) -> object:
        raise acpio.RequestError.method_not_found(method)

    async def on_notification(self, method: str, params: msgspec.Raw | None) -> None:
        return None


Handler = Callable[[acpio.Session, list[acpio.ContentBlock]], Awaitable[object]]


async def _no_prompt(session: acpio.Session, prompt: list[acpio.ContentBlock]) -> None:
    raise AssertionError("no prompt expected")


@asynccontextmanager
async def connected(
    cwd: Path,
    peer: Peer = V1_ALL,
    handler: Handler = _no_prompt,
    *,
    limits: acpio.SessionLimits | None = None,
    max_message_size: int = acpio.AgentLimits().max_message_size,
    pending: list[dict[int, object]] | None = None,
) -> AsyncIterator[tuple[acpio.Session, FakeEditor]]:
    """A session on a connection to the fake editor.

    ``pending`` receives the agent side's table of requests awaiting an answer.
    """
    agent_side, client_side = acpio.rpc.memory_stream_pair()
    async with anyio.create_task_group() as group:
        editor = FakeEditor(group)
        async with (
            acpio.rpc.Connection(client_side, editor, encode=schema.encode),
            acpio.rpc.Connection(
                agent_side, NoRequests(), encode=schema.encode, max_message_size=max_message_size
            ) as connection,
        ):
            # The wire object initialize would pick (v1 clients take no $/cancel_request).
            wire = V1_WIRE if peer.protocol_version == 1 else V2_WIRE
            connection.withdraws_requests = wire.withdraws_requests
            if pending is not None:
                pending.append(connection._pending)  # type: ignore[arg-type]
            yield (
                create_session(
                    "sess_v1",
                    str(cwd),
                    connection=connection,
                    task_group=group,
                    history=acpio.store.InMemoryHistory(),
                    prompt_handler=handler,
                    peer=peer,
                    wire=wire,
                    limits=limits,
                ).session,
                editor,
            )
            for terminal in editor.terminals.values():
                if terminal.process.returncode is None:
                    os.killpg(terminal.process.pid, signal.SIGKILL)
        group.cancel_scope.cancel()


async def run_turn(session: acpio.Session) -> None:
    """Run one prompt through the session's lifecycle, to its idle."""
    work = session._turns.accept_prompt([schema.TextContent(text="go")])
    session._turns.prompt_responded(work)
    with anyio.fail_after(10):
        await session.wait_idle()


# --------------------------------------------------------------------------- terminals


async def test_a_command_runs_in_the_clients_terminal_and_the_call_shows_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "marker").write_text("here")
    async with connected(tmp_path) as (session, editor):
        async with session.tool_call("Run", kind="execute", tool_call_id="c") as call:
            terminal = await call.terminal(terminal_id="agent-term")
            result = await terminal.run_shell(
                "ls; echo $GREETING; echo oops >&2; exit 3", env={"GREETING": "hi"}
            )
        updates = editor.updates
        requests = editor.requests

    assert isinstance(result, acpio.CommandResult)
    assert result.output == b"marker\nhi\noops\n" and result.text == "marker\nhi\noops\n"
    assert (result.exit_code, result.signal, result.success) == (3, None, False)
    assert terminal.exit_status == acpio.ExitStatus(exit_code=3)
    assert terminal.client_terminal_id == "editor-term-1"
    methods = [method for method, _ in requests]
    # The exit is awaited (once) while the output is polled; release comes last.
    assert methods[0] == "terminal/create" and methods[-1] == "terminal/release"
    assert methods.count("terminal/wait_for_exit") == 1
    assert set(methods[1:-1]) == {"terminal/output", "terminal/wait_for_exit"}
    create = requests[0][1]
    assert create == {
        "sessionId": "sess_v1",
        "command": "/bin/sh",
        "args": ["-c", "ls; echo $GREETING; echo oops >&2; exit 3"],
        "env": [{"name": "GREETING", "value": "hi"}],
        "cwd": str(tmp_path),
        "outputByteLimit": create["outputByteLimit"],
    }
    assert isinstance(create["outputByteLimit"], int) and create["outputByteLimit"] >= 1 << 20
    assert all(
        r == {"sessionId": "sess_v1", "terminalId": "editor-term-1"} for _, r in requests[1:]
    )
    # The call shows the editor's own terminal, by the editor's id, and only that.
    # (v1: the whole content array in tool_call_update; the last one is the final view.)
    contents = [
        u["content"]
        for u in updates
        if u["sessionUpdate"] in ("tool_call", "tool_call_update") and "content" in u
    ]
    assert contents and contents[-1] == [{"type": "terminal", "terminalId": "editor-term-1"}]
    # The bytes are the editor's to show: the agent never sends them as text or chunks.
    assert all(item["type"] == "terminal" for content in contents for item in content)
    assert not [u for u in updates if u["sessionUpdate"] == "terminal_output_chunk"]


async def test_the_clients_terminal_gets_the_env_the_command_was_made_with(
    tmp_path: Path,
) -> None:
    async with connected(tmp_path) as (session, editor):
        async with session.tool_call("Run", kind="execute", tool_call_id="c") as call:
            terminal = await call.terminal(terminal_id="agent-term")
            env = {"GREETING": "hi"}
            running = terminal.start(["/bin/sh", "-c", "echo $GREETING"], env=env)
            env["GREETING"] = "changed"  # after the command was made: it runs as made
            async with running:
                result = await running.wait()
        create = editor.requests[0][1]

    assert result.output == b"hi\n"
    assert create["env"] == [{"name": "GREETING", "value": "hi"}]


async def test_the_output_streams_from_the_clients_terminal(tmp_path: Path) -> None:
    script = "i=0; while [ $i -lt 300 ]; do echo line$i; i=$((i+1)); done"
    chunks: list[bytes] = []
    async with connected(tmp_path) as (session, _):
        terminal = await session.terminal(terminal_id="t")
        async with terminal.start_shell(script, output_limit=64) as command:
            assert command.pid is None
            async for chunk in command.output:
                chunks.append(chunk)
            result = await command.wait()

    expected = b"".join(b"line%d\n" % i for i in range(300))
    assert b"".join(chunks) == expected
    assert result.output == expected[:32] + expected[-32:]
    assert result.truncated_bytes == len(expected) - 64


async def test_output_the_client_truncated_still_streams_what_follows(tmp_path: Path) -> None:
    # Output far beyond the client's limit: the agent follows the retained tail.
    # The flood starts once the agent has seen the first line (the gate file).
    chunks: list[bytes] = []
    gate = tmp_path / "gate"
    script = (
        f"echo start; until [ -e {gate} ]; do sleep 0.01; done; "
        "head -c 9000000 /dev/zero | tr '\\0' x; echo; echo end"
    )
    async with connected(tmp_path) as (session, editor):
        terminal = await session.terminal(terminal_id="t")
        async with terminal.start_shell(script) as cmd:
            async for chunk in cmd.output:
                chunks.append(chunk)
                gate.touch()
            result = await cmd.wait()
        (editor_terminal,) = editor.terminals.values()

    assert editor_terminal.truncated
    assert result.exit_code == 0
    assert result.output.startswith(b"start\nxxx") and result.output.endswith(b"xxx\nend\n")
    assert b"".join(chunks).endswith(b"\nend\n")


async def test_a_cancelled_turn_kills_and_releases_the_clients_terminal(tmp_path: Path) -> None:
    pids: list[int] = []
    statuses: list[acpio.ExitStatus | None] = []

    async def handler(session: acpio.Session, prompt: list[acpio.ContentBlock]) -> None:
        async with session.tool_call("Serve", kind="execute", tool_call_id="c") as call:
            terminal = await call.terminal(terminal_id="t")
            try:
                async with terminal.start_shell("echo $$; exec sleep 1000") as server:
                    async for chunk in server.output:
                        pids.append(int(chunk))
                        await session.cancel()
                        await anyio.sleep_forever()
            finally:
                statuses.append(terminal.exit_status)

    async with connected(tmp_path, handler=handler) as (session, editor):
        await run_turn(session)
        methods = editor.methods()
        updates = editor.updates

    assert all([await gone(pid) for pid in pids]) and len(pids) == 1
    # Killed, its status learnt from the wait for its exit (asked once, at the start),
    # the last output collected, and released.
    after_kill = methods[methods.index("terminal/kill") + 1 :]
    assert after_kill[-1] == "terminal/release"
    assert after_kill[:-1] and set(after_kill[:-1]) <= {"terminal/output"}
    assert methods.count("terminal/wait_for_exit") == 1
    assert statuses == [acpio.ExitStatus(signal="SIGKILL")]
    # v1 has no state updates (the prompt answer ends a turn) and no `cancelled` status:
    # the call ends `failed`, with the real status kept in `_meta`.
    assert not [u for u in updates if u["sessionUpdate"] == "state_update"]
    assert updates[-1] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c",
        "status": "failed",
        "_meta": {"acpio": {"status": "cancelled"}},
    }


async def test_a_cancel_at_every_step_releases_every_client_terminal(tmp_path: Path) -> None:
    entered: list[bool] = []

    async def handler(session: acpio.Session, prompt: list[acpio.ContentBlock]) -> None:
        steps = int(acpio.text_of(prompt))

        async def cancel_later() -> None:
            for _ in range(steps):
                await anyio.lowlevel.checkpoint()
            await session.cancel()

        async with anyio.create_task_group() as group:
            group.start_soon(cancel_later)
            terminal = await session.terminal(terminal_id=f"t{steps}")
            entered.append(True)
            await terminal.run_shell("sleep 1000 & wait")

    for steps in range(0, 30, 3):
        entered.clear()
        async with connected(tmp_path, handler=handler) as (session, editor):
            work = session._turns.accept_prompt([schema.TextContent(text=str(steps))])
            session._turns.prompt_responded(work)
            with anyio.fail_after(10):
                await session.wait_idle()
            created = editor.methods().count("terminal/create")
            released = editor.methods().count("terminal/release")
            terminals = list(editor.terminals.values())
            exited = session.terminal_handle(f"t{steps}")
        assert created == released, f"after {steps} steps"
        for terminal in terminals:
            assert terminal.exited.is_set() or await gone(terminal.process.pid)
        if entered:
            assert exited is not None and exited.exit_status is not None, f"after {steps} steps"


async def test_the_exit_comes_from_wait_for_exit_when_output_never_reports_it(
    tmp_path: Path,
) -> None:
    # Issue 21: some clients never put exitStatus in terminal/output answers.
    pending: list[dict[int, object]] = []
    async with connected(tmp_path, pending=pending) as (session, editor):
        editor.exit_in_output = False
        async with session.tool_call("Run", kind="execute", tool_call_id="c") as call:
            terminal = await call.terminal(terminal_id="t")
            with anyio.fail_after(10):
                result = await terminal.run_shell("echo one; sleep 0.2; echo two; exit 4")
        methods = editor.methods()
        left = dict(pending[0])
        withdrawn = list(editor.withdrawn)
        answering = set(editor.open)

    assert (result.exit_code, result.output) == (4, b"one\ntwo\n")
    assert terminal.exit_status == acpio.ExitStatus(exit_code=4)
    assert methods.count("terminal/wait_for_exit") == 1 and methods[-1] == "terminal/release"
    # Nothing is left waiting on either side, and nothing had to be withdrawn.
    assert left == {} and withdrawn == [] and answering == set()


async def test_the_shell_agent_ends_its_turn_with_a_kit_client_that_never_reports_exits(
    tmp_path: Path,
) -> None:
    # Issue 21 end to end: the testing kit's v1 terminals, behaving like such a client.
    shell_agent = load_example("shell_agent")
    client = MockClient(
        shell_agent.ShellAgent(),
        protocol_version=1,
        client_terminal=True,
        policy=PermissionPolicy.allow(),
        cwd=tmp_path,
    )
    async with client:
        assert client.v1 is not None
        client.v1.terminals.exit_in_output = False
        session = await client.new_session()
        with anyio.fail_after(10):
            result = await session.prompt("run echo hello; exit 5")
            again = await session.prompt("run echo again")
        (terminal_id, _) = client.v1.terminals.terminals
        terminal = client.v1.terminals.terminals[terminal_id]
    assert result.stop_reason == "end_turn" and again.stop_reason == "end_turn"
    (call, _) = session.view.tool_calls.values()
    assert call.raw_output == {"exitCode": 5, "signal": None}
    assert terminal.released


async def test_a_cancel_abandons_the_wait_for_exit_when_output_never_reports_it(
    tmp_path: Path,
) -> None:
    pending: list[dict[int, object]] = []
    statuses: list[acpio.ExitStatus | None] = []

    async def handler(session: acpio.Session, prompt: list[acpio.ContentBlock]) -> None:
        terminal = await session.terminal(terminal_id="t")
        try:
            async with terminal.start_shell("echo started; exec sleep 1000") as command:
                async for _ in command.output:
                    await session.cancel()
                    await anyio.sleep_forever()
        finally:
            statuses.append(terminal.exit_status)

    limits = acpio.SessionLimits(cancel_grace=60)
    async with connected(tmp_path, handler=handler, pending=pending, limits=limits) as (
        session,
        editor,
    ):
        editor.exit_in_output = False
        editor.never_answer.add("terminal/wait_for_exit")  # never learns the exit either
        started = anyio.current_time()
        await run_turn(session)
        took = anyio.current_time() - started
        methods = editor.methods()
        left = dict(pending[0])
        withdrawn = list(editor.withdrawn)
        terminals = list(editor.terminals.values())

    # Killed, then polled for the exit (which the client never tells), then released.
    after_kill = methods[methods.index("terminal/kill") + 1 :]
    assert after_kill[-1] == "terminal/release"
    assert after_kill[:-1] and set(after_kill[:-1]) == {"terminal/output"}
    assert statuses == [acpio.ExitStatus()]  # killed; the client never said how it ended
    # The wait for the exit was abandoned, not withdrawn: v1 has no $/cancel_request.
    assert methods.count("terminal/wait_for_exit") == 1 and withdrawn == []
    assert left == {}
    # Within the bound: the kill and the exit in kill_grace, the release in kill_grace
    # (the cancel watchdog is set far beyond it, so the bound is the command's own).
    assert took < 2 * KILL_GRACE + 1.5, took
    assert all([await gone(t.process.pid) for t in terminals])


@pytest.mark.parametrize("exit_in_output", [True, False])
@pytest.mark.parametrize("answers_kill", [True, False])
async def test_an_unanswered_wait_for_exit_never_holds_a_cancel(
    tmp_path: Path, exit_in_output: bool, answers_kill: bool
) -> None:
    # Issue 31: whatever terminal/output says, a client that never answers
    # terminal/wait_for_exit (nor, here, terminal/kill) cannot hold the cancelled turn:
    # the command is killed and released, and the turn ends, within 2 x kill_grace.
    async def handler(session: acpio.Session, prompt: list[acpio.ContentBlock]) -> None:
        async with session.tool_call("Run", kind="execute", tool_call_id="c") as call:
            terminal = await call.terminal(terminal_id="t")
            async with terminal.start_shell("echo started; exec sleep 1000") as command:
                async for _ in command.output:
                    await session.cancel()
                    await anyio.sleep_forever()

    limits = acpio.SessionLimits(cancel_grace=60)
    async with connected(tmp_path, handler=handler, limits=limits) as (session, editor):
        editor.exit_in_output = exit_in_output
        editor.never_answer.add("terminal/wait_for_exit")
        if not answers_kill:
            editor.never_answer.add("terminal/kill")
        started = anyio.current_time()
        await run_turn(session)
        took = anyio.current_time() - started
        methods = editor.methods()
        withdrawn = list(editor.withdrawn)
        terminals = list(editor.terminals.values())
        for terminal in terminals:  # the fake editor kills at release: it was asked
            assert terminal.released
            with anyio.fail_after(10):
                await terminal.exited.wait()

    assert took < 2 * KILL_GRACE + 1.5, took
    assert methods[-1] == "terminal/release" and "terminal/kill" in methods
    assert withdrawn == []
    assert all([await gone(t.process.pid) for t in terminals])


async def test_a_client_that_never_answers_output_ends_the_command_with_a_timeout(
    tmp_path: Path,
) -> None:
    pending: list[dict[int, object]] = []
    limits = acpio.SessionLimits(client_request_timeout=0.5)
    async with connected(tmp_path, limits=limits, pending=pending) as (session, editor):
        editor.never_answer.add("terminal/output")
        async with session.tool_call("Run", kind="execute", tool_call_id="c") as call:
            terminal = await call.terminal(terminal_id="t")
            with anyio.fail_after(20), pytest.raises(acpio.RequestTimeout) as raised:
                await terminal.run_shell("exec sleep 1000")
        methods = editor.methods()
        left = dict(pending[0])
        terminals = list(editor.terminals.values())

    message = str(raised.value)
    assert "terminal/output" in message and "0.5 s" in message
    assert "SessionLimits.client_request_timeout" in message
    assert isinstance(raised.value, TimeoutError) and isinstance(raised.value, acpio.AcpError)
    # The command was stopped and released, and its terminal shows the end.
    assert methods[-1] == "terminal/release" and "terminal/kill" in methods
    assert terminal.exit_status is not None
    assert left == {}
    assert all([await gone(t.process.pid) for t in terminals])


@pytest.mark.parametrize("method", ["fs/read_text_file", "fs/write_text_file"])
async def test_file_requests_the_client_never_answers_time_out(tmp_path: Path, method: str) -> None:
    pending: list[dict[int, object]] = []
    limits = acpio.SessionLimits(client_request_timeout=0.2)
    path = str(tmp_path / "f.txt")
    async with connected(tmp_path, limits=limits, pending=pending) as (session, editor):
        editor.never_answer.add(method)
        with anyio.fail_after(10), pytest.raises(acpio.RequestTimeout, match=method):
            if method == "fs/read_text_file":
                await session.read_text_file(path)
            else:
                await session.write_text_file(path, "x")
        left = dict(pending[0])
        withdrawn = list(editor.withdrawn)
    # Given up, not withdrawn: a v1 client takes no $/cancel_request.
    assert left == {} and withdrawn == []


async def test_an_oversized_output_answer_fails_the_poll_and_ends_the_command(
    tmp_path: Path,
) -> None:
    # Issue 24: the answer is refused by size; the request it answers fails at once.
    pending: list[dict[int, object]] = []
    size = 64 * 1024
    async with connected(tmp_path, max_message_size=size, pending=pending) as (session, editor):
        editor.output_padding = 2 * size
        async with session.tool_call("Run", kind="execute", tool_call_id="c") as call:
            terminal = await call.terminal(terminal_id="t")
            with anyio.fail_after(10), pytest.raises(acpio.RequestError) as raised:
                await terminal.run_shell("exec sleep 1000")
        methods = editor.methods()
        left = dict(pending[0])
        terminals = list(editor.terminals.values())

    error = raised.value
    assert error.code == -32603
    assert "terminal/output" in error.message
    assert f"larger than the limit of {size}" in error.message
    assert methods[-1] == "terminal/release" and "terminal/kill" in methods
    assert left == {}
    assert all([await gone(t.process.pid) for t in terminals])


async def test_without_the_terminal_capability_commands_run_in_the_agent(tmp_path: Path) -> None:
    peer = Peer(protocol_version=1, terminal=False)
    async with connected(tmp_path, peer=peer) as (session, editor):
        async with session.tool_call("Run", kind="execute", tool_call_id="c") as call:
            terminal = await call.terminal(terminal_id="t")
            result = await terminal.run_shell("echo local")
        updates = editor.updates

    assert result.output == b"local\n" and editor.requests == []
    # v1 shows an agent-run terminal as text in the call (the client runs no terminal).
    contents = [u["content"] for u in updates if "content" in u]
    assert contents and all(item["type"] == "content" for item in contents[-1])
    assert "local" in contents[-1][0]["content"]["text"]


async def test_bytes_the_agent_writes_itself_show_the_agents_terminal_on_v1(tmp_path: Path) -> None:
    async with connected(tmp_path) as (session, editor):
        async with session.tool_call("Log", tool_call_id="c") as call:
            terminal = await call.terminal(terminal_id="mine")
            await terminal.write(b"written by the agent\n")
            await terminal.exit(0)
        updates = editor.updates

    # Not a client terminal: v1 shows the bytes as text in the call, asks the client nothing.
    contents = [u["content"] for u in updates if "content" in u]
    assert contents and "written by the agent" in contents[-1][0]["content"]["text"]
    assert not [i for c in contents for i in c if i["type"] == "terminal"]
    assert editor.requests == []


# --------------------------------------------------------------------------- file system


async def test_text_files_are_read_and_written_through_the_client(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("one\ntwo\nthree\nfour\n")
    async with connected(tmp_path) as (session, editor):
        whole = await session.read_text_file(str(path))
        part = await session.read_text_file(str(path), line=2, limit=2)
        await session.write_text_file(str(tmp_path / "new.txt"), "fresh\n")
        editor.fail_reads = True
        with pytest.raises(acpio.RequestError) as raised:
            await session.read_text_file(str(path))
        requests = editor.requests

    assert whole == "one\ntwo\nthree\nfour\n" and part == "two\nthree\n"
    assert (tmp_path / "new.txt").read_text() == "fresh\n"
    assert raised.value.code == schema.RESOURCE_NOT_FOUND
    assert requests[:3] == [
        ("fs/read_text_file", {"sessionId": "sess_v1", "path": str(path)}),
        ("fs/read_text_file", {"sessionId": "sess_v1", "path": str(path), "line": 2, "limit": 2}),
        (
            "fs/write_text_file",
            {"sessionId": "sess_v1", "path": str(tmp_path / "new.txt"), "content": "fresh\n"},
        ),
    ]


@pytest.mark.parametrize(
    ("peer", "what"),
    [
        (Peer(protocol_version=1), "did not advertise"),
        (Peer(protocol_version=2), "v1 client service"),
    ],
)
async def test_file_access_is_refused_clearly_when_the_client_cannot(
    tmp_path: Path, peer: Peer, what: str
) -> None:
    async with connected(tmp_path, peer=peer) as (session, editor):
        with pytest.raises(acpio.ClientCapabilityError, match=what) as reading:
            await session.read_text_file(str(tmp_path / "f"))
        with pytest.raises(acpio.ClientCapabilityError, match=what):
            await session.write_text_file(str(tmp_path / "f"), "x")
        assert editor.requests == []
    assert isinstance(reading.value, acpio.AcpError)
    assert "fs.readTextFile" in str(reading.value)


async def test_file_paths_must_be_absolute(tmp_path: Path) -> None:
    async with connected(tmp_path) as (session, editor):
        with pytest.raises(acpio.LocalProtocolError, match="absolute"):
            await session.read_text_file("relative.txt")
        with pytest.raises(acpio.LocalProtocolError, match="absolute"):
            await session.write_text_file("relative.txt", "x")
        with pytest.raises(ValueError, match="1-based"):
            await session.read_text_file(str(tmp_path / "f"), line=0)
        assert editor.requests == []


async def test_read_file_goes_through_the_editor_that_offers_it(tmp_path: Path) -> None:
    # Issue 31: the same containment as from disk, the editor's text (its unsaved buffers),
    # and the editor's refusal as a sentence, never a bare JSON-RPC error text.
    (tmp_path / "notes.txt").write_text("one\n")
    (tmp_path.parent / "elsewhere.txt").write_text("no\n")
    async with connected(tmp_path) as (session, editor):
        text = await session.read_file("notes.txt")
        with pytest.raises(acpio.ReadRefused, match="outside the session's directories"):
            await session.read_file("../elsewhere.txt")
        editor.fail_reads = True
        with pytest.raises(acpio.ReadRefused) as raised:
            await session.read_file("notes.txt")
        requests = editor.requests
    assert text == "one\n"
    # Asked by its real path; the refused path was never asked.
    assert [r for m, r in requests if m == "fs/read_text_file"] == [
        {"sessionId": "sess_v1", "path": str(tmp_path / "notes.txt")},
        {"sessionId": "sess_v1", "path": str(tmp_path / "notes.txt")},
    ]
    message = str(raised.value)
    assert message == (
        f"The editor could not read {tmp_path / 'notes.txt'}: "
        f"no file {tmp_path / 'notes.txt'} (error {schema.RESOURCE_NOT_FOUND})."
    )


async def test_read_file_without_the_editors_fs_reads_the_disk(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("from disk\n")
    async with connected(tmp_path, peer=Peer(protocol_version=1)) as (session, editor):
        assert await session.read_file("notes.txt") == "from disk\n"
        assert editor.requests == []
