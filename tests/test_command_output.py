"""Command output for the agent: CommandResult (bounded head and tail) and streamed chunks.

The agent's copy of the output is bounded; the client's copy is every byte,
exactly as the process wrote it. Both are checked on each test: the client's
through the testing kit's view of the terminal.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import pytest
from support import gone

import acpio
from acpio._handles.process import _OutputCapture
from acpio.testing import MockClient

pytestmark = pytest.mark.anyio

Body = Callable[[acpio.Session], Awaitable[str | None]]


class Scripted(acpio.Agent):
    """An agent whose prompt handler is the test's coroutine."""

    def __init__(self, body: Body) -> None:
        self.body = body

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str | None:
        return await self.body(session)


# --------------------------------------------------------------------------- the result


async def test_run_shell_returns_the_output_with_the_exit_status(tmp_path: Path) -> None:
    results: list[acpio.CommandResult] = []

    async def body(session: acpio.Session) -> None:
        async with session.tool_call("Run", kind="execute") as call:
            ok = await call.terminal(terminal_id="ok")
            results.append(await ok.run_shell("printf 'out\\n'; printf 'err\\377\\n' >&2"))
            failing = await call.terminal(terminal_id="failing")
            results.append(await failing.run(["sh", "-c", "echo bye; exit 3"]))
            killed = await call.terminal(terminal_id="killed")
            results.append(await killed.run_shell("kill -KILL $$"))

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session(tmp_path)
        await session.prompt("go")
        views = session.view.terminals

    ok, failing, killed = results
    assert ok.output == b"out\nerr\xff\n" == views["ok"].output
    assert ok.text == "out\nerr\ufffd\n"
    assert (ok.success, ok.exit_code, ok.signal, ok.truncated_bytes) == (True, 0, None, 0)
    assert failing.output == b"bye\n" and failing.text == "bye\n"
    assert (failing.success, failing.exit_code) == (False, 3)
    assert (killed.output, killed.signal, killed.exit_code) == (b"", "SIGKILL", None)
    # Code written for the exit status keeps working: it is one, and equals it.
    assert isinstance(ok, acpio.ExitStatus)
    assert ok.exit_status == acpio.ExitStatus(exit_code=0) == ok
    assert results == [
        acpio.ExitStatus(exit_code=0),
        acpio.ExitStatus(exit_code=3),
        acpio.ExitStatus(signal="SIGKILL"),
    ]
    assert hash(ok) == hash(acpio.ExitStatus(exit_code=0))
    assert ok != failing and ok != acpio.ExitStatus(exit_code=1)


async def test_a_long_output_keeps_its_head_and_tail_and_the_client_gets_every_byte() -> None:
    results: list[acpio.CommandResult] = []
    script = "i=0; while [ $i -lt 2000 ]; do echo line$i; i=$((i+1)); done"

    async def body(session: acpio.Session) -> None:
        terminal = await session.terminal(terminal_id="t")
        results.append(await terminal.run_shell(script, output_limit=100))
        other = await session.terminal(terminal_id="default")
        other.output_limit = 30
        results.append(await other.run_shell("echo 0123456789; echo abcdefghij; echo ABCDEFGHIJ"))

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        await session.prompt("go")
        full = session.view.terminals["t"].output

    expected = b"".join(b"line%d\n" % i for i in range(2000))
    assert full == expected
    result, small = results
    assert len(result.output) == 100
    assert result.output == expected[:50] + expected[-50:]
    assert result.truncated_bytes == len(expected) - 100
    assert result.truncated_at == 50
    head, marker, tail = result.text.partition(
        f"[... {result.truncated_bytes} bytes of output cut ...]\n"
    )
    assert marker and head == expected[:50].decode() + "\n" and tail == expected[-50:].decode()
    assert small.output == b"0123456789\nabcd" + b"hij\nABCDEFGHIJ\n"
    assert (small.truncated_bytes, small.truncated_at) == (3, 15)


def test_the_capture_keeps_head_and_tail_at_character_boundaries() -> None:
    def captured(chunks: list[bytes], limit: int) -> acpio.CommandResult:
        capture = _OutputCapture(limit)
        for chunk in chunks:
            capture.add(chunk)
        return capture.result(acpio.ExitStatus(exit_code=0))

    data = bytes(range(256)) * 1000
    for limit in (0, 1, 2, 7, 1000, 70_000):
        for size in (1, 13, 4096, 65536, 300_000):
            chunks = [data[i : i + size] for i in range(0, len(data), size)]
            result = captured(chunks, limit)
            if limit >= len(data):
                assert result.output == data and not result.truncated_bytes
                continue
            head = result.output[: result.truncated_at]
            tail = result.output[result.truncated_at :]
            assert data.startswith(head) and data.endswith(tail)
            assert len(result.output) <= limit
            assert result.truncated_bytes == len(data) - len(result.output)

    euro = "€".encode() * 10  # 30 bytes, characters of 3 bytes
    result = captured([euro], 10)  # 5 + 5 would cut characters: 3 + 3 are kept
    assert result.output == "€€".encode() and result.truncated_bytes == 24
    assert result.text == "€\n[... 24 bytes of output cut ...]\n€"
    assert captured([b"short"], 10).text == "short"
    assert captured([b"abc" * 10], 0).text == "[... 30 bytes of output cut ...]\n"
    with pytest.raises(ValueError, match="negative"):
        _OutputCapture(-1)


# --------------------------------------------------------------------------- streaming


async def test_output_chunks_can_be_consumed_as_they_arrive() -> None:
    seen: list[bytes] = []
    results: list[acpio.CommandResult] = []

    async def body(session: acpio.Session) -> None:
        async with session.tool_call("Build", kind="execute") as call:
            terminal = await call.terminal(terminal_id="t")
            async with terminal.start_shell("printf 'one\\n'; printf 'two\\n' >&2; exit 4") as make:
                assert make.pid is not None and make.result is None
                async for chunk in make.output:
                    seen.append(chunk)
                results.append(await make.wait())
                # Waiting again returns the same result.
                assert await make.wait() is results[0]

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        await session.prompt("go")
        view = session.view.terminals["t"]

    (result,) = results
    assert b"".join(seen) == b"one\ntwo\n" == result.output == view.output
    assert result.exit_code == 4 and view.exit_code == 4
    assert view.command == "printf 'one\\n'; printf 'two\\n' >&2; exit 4"


async def test_waiting_reads_what_was_not_iterated() -> None:
    results: list[tuple[bytes, acpio.CommandResult]] = []

    async def body(session: acpio.Session) -> None:
        terminal = await session.terminal(terminal_id="t")
        async with terminal.start(["sh", "-c", "echo first; echo second; echo third"]) as cmd:
            first = await anext(aiter(cmd.output))
            results.append((first, await cmd.wait()))
            assert [chunk async for chunk in cmd.output] == []

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        await session.prompt("go")
        view = session.view.terminals["t"]

    ((first, result),) = results
    assert result.output == b"first\nsecond\nthird\n" == view.output
    assert result.output.startswith(first)


async def test_leaving_the_block_early_stops_the_process_and_reports_its_exit() -> None:
    pids: list[int] = []
    results: list[acpio.CommandResult | None] = []

    async def body(session: acpio.Session) -> None:
        terminal = await session.terminal(terminal_id="t")
        async with terminal.start_shell("echo $$; sleep 1000 & echo $!; wait") as server:
            seen = b""
            async for chunk in server.output:
                seen += chunk
                if seen.count(b"\n") == 2:
                    pids.extend(int(word) for word in seen.split())
                    break
        results.append(server.result)

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        result = await session.prompt("go")
        view = session.view.terminals["t"]

    assert result.stop_reason == "end_turn"
    assert all([await gone(pid) for pid in pids])
    (command_result,) = results
    assert command_result is not None and command_result.signal == "SIGTERM"
    assert view.exited and view.signal == "SIGTERM"


async def test_terminal_cancel_ends_the_stream_and_wait_returns_the_signal() -> None:
    results: list[acpio.CommandResult] = []
    chunks: list[bytes] = []

    async def body(session: acpio.Session) -> None:
        terminal = await session.terminal(terminal_id="t", cancellable=True)
        async with terminal.start_shell("echo up; exec sleep 1000") as server:
            async for chunk in server.output:
                chunks.append(chunk)
            results.append(await server.wait())

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        await session.wait_for_terminal_output("t", contains=b"up")
        await session.cancel_terminal("t")
        result = await turn.wait()
        view = session.view.terminals["t"]

    assert result.stop_reason == "end_turn"
    assert b"".join(chunks) == b"up\n"
    assert [r.signal for r in results] == ["SIGTERM"] and results[0].output == b"up\n"
    assert view.signal == "SIGTERM"


async def test_a_command_is_started_by_entering_it_and_only_once() -> None:
    errors: list[str] = []

    async def body(session: acpio.Session) -> None:
        terminal = await session.terminal(terminal_id="t")
        command = terminal.start(["true"])
        for attempt in (command.wait, lambda: anext(aiter(command.output))):
            try:
                await attempt()
            except RuntimeError as exc:
                errors.append(str(exc))
        async with command:
            await command.wait()
        try:
            async with command:
                pass
        except RuntimeError as exc:
            errors.append(str(exc))
        with pytest.raises(ValueError, match="argv"):
            terminal.start([])

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        result = await session.prompt("go")

    assert result.stop_reason == "end_turn"
    assert len(errors) == 3
    assert "async with" in errors[0] and "async with" in errors[1]
    assert "only once" in errors[2]


async def test_the_environment_and_directory_apply_to_the_streaming_form(tmp_path: Path) -> None:
    results: list[acpio.CommandResult] = []
    (tmp_path / "marker").write_text("here")

    async def body(session: acpio.Session) -> None:
        terminal = await session.terminal(terminal_id="t")
        env = {"GREETING": "hi", "PATH": os.environ["PATH"]}
        async with terminal.start_shell("ls; echo $GREETING", cwd=str(tmp_path), env=env) as cmd:
            results.append(await cmd.wait())

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        await session.prompt("go")

    assert results[0].output == b"marker\nhi\n"


async def test_a_cancelled_turn_while_streaming_kills_the_group_and_reports_the_exit() -> None:
    pids: list[int] = []

    async def body(session: acpio.Session) -> None:
        async with session.tool_call("Serve", kind="execute", tool_call_id="c") as call:
            terminal = await call.terminal(terminal_id="t")
            async with terminal.start_shell("echo $$; sleep 1000 & echo $!; wait") as server:
                seen = b""
                async for chunk in server.output:
                    seen += chunk
                    if seen.count(b"\n") == 2:
                        pids.extend(int(word) for word in seen.split())
                        await anyio.sleep_forever()

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        await session.wait_for(lambda: len(pids) == 2)
        await session.cancel()
        result = await turn.wait(timeout=5)
        view = session.view.terminals["t"]

    assert result.stop_reason == "cancelled"
    assert all([await gone(pid) for pid in pids])
    assert view.exited and view.signal == "SIGTERM"
    assert session.view.tool_calls["c"].status == "cancelled"
