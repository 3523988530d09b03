"""Faults: the client vanishes, stops reading, or the agent's own code misbehaves.

Whatever happens, the agent cancels its work, reports what it can, kills its
child processes (whole process groups) and exits with status 0 within a few
seconds; a client that stops reading makes the agent wait with bounded
memory and later receives everything, in order; a handler that raises,
hangs or ignores cancellation is reported once and cut off, and other
sessions on the same connection do not notice.

Process tests run the real example agents (``examples/shell_agent.py``) or
``reliability_agents.py`` as subprocesses and talk to them over their pipes.
"""

from __future__ import annotations

import base64
import fcntl
import re
import signal
import struct
import termios
from pathlib import Path

import anyio
import pytest
from reliability_agents import ScriptAgent
from reliability_kit import (
    WAIT,
    Spawned,
    WireClient,
    agent_command,
    allow_answer,
    collect_logs,
    example_command,
    is_idle,
    process_alive,
    served,
    spawned,
)

import acpio

pytestmark = pytest.mark.anyio

F_GETPIPE_SZ = getattr(fcntl, "F_GETPIPE_SZ", 1032)  # Linux

#: How long an agent may take to exit once its client is gone: the promise is
#: AgentLimits.shutdown_grace (2 s) + 3 s when its output cannot be delivered, plus a margin.
EXIT_WITHIN = 7.0
#: A command that reports its shell's pid and a background child's pid, then waits.
PID_COMMAND = "echo pid:$$; sleep 30 & echo child:$!; wait"


def terminal_text(client: WireClient, session_id: str) -> str:
    return b"".join(
        base64.b64decode(u["data"])
        for u in client.updates(session_id)
        if u.get("sessionUpdate") == "terminal_output_chunk"
    ).decode(errors="replace")


async def start_command(
    client: WireClient, cwd: Path, command: str = PID_COMMAND
) -> tuple[str, list[int]]:
    """Run ``command`` in the shell agent (allowed); return the session and the pids it printed."""
    await client.initialize()
    session_id = await client.new_session(cwd)
    await client.prompt(session_id, f"run {command}")
    request = await client.wait_permission_request()
    await client.respond(request["id"], allow_answer(request))
    while not re.search(r"child:\d+", terminal_text(client, session_id)):
        await client.receive()
    pids = [int(p) for p in re.findall(r"(?:pid|child):(\d+)", terminal_text(client, session_id))]
    assert len(pids) == 2 and all(process_alive(pid) for pid in pids)
    return session_id, pids


async def exits_cleanly(agent: Spawned) -> None:
    """The agent exits by itself, with status 0, within EXIT_WITHIN seconds."""
    with anyio.fail_after(EXIT_WITHIN):
        code = await agent.process.wait()
    assert code == 0, agent.stderr.decode(errors="replace")


# ---------------------------------------------------------- the client vanishes


async def test_client_gone_in_the_middle_of_initialize(anyio_backend: str) -> None:
    async with spawned(agent_command("script", anyio_backend)) as agent:
        await agent.client.send(b'{"jsonrpc":"2.0","id":1,"method":"initia')
        await agent.client.close_input()
        await exits_cleanly(agent)


async def test_client_gone_right_after_sending_initialize(anyio_backend: str) -> None:
    async with spawned(agent_command("script", anyio_backend)) as agent:
        await agent.client.send_request(
            "initialize", {"protocolVersion": 2, "info": {"name": "c", "version": "1"}}
        )
        await agent.client.close_input()
        await exits_cleanly(agent)
        # What was asked before the end of input is still answered, exactly once
        # (a result, or -32800 when the shutdown overtook it).
        answer = await agent.client.response("c1")
        assert "result" in answer or answer["error"]["code"] == -32800
        await agent.client.read_to_eof()
        assert [m for m in agent.client.received if m.get("id") == "c1"] == [answer]


async def test_client_gone_while_a_prompt_streams(anyio_backend: str) -> None:
    async with spawned(agent_command("script", anyio_backend)) as agent:
        client = agent.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            session_id = await client.new_session("/tmp")
            await client.prompt(session_id, "forever")
            for _ in range(20):
                await client.receive_until(
                    lambda m: (
                        m.get("params", {}).get("update", {}).get("sessionUpdate")
                        == "agent_message_chunk"
                    )
                )
        await client.close_input()
        await exits_cleanly(agent)
        await client.read_to_eof()
    # The turn was cancelled, reported exactly once, and nothing of it came after.
    idles = [m for m in client.received if is_idle(m, session_id)]
    assert [m["params"]["update"]["stopReason"] for m in idles] == ["cancelled"]
    assert client.updates(session_id)[-1] == idles[0]["params"]["update"]


async def test_client_gone_while_a_permission_request_is_pending(tmp_path: Path) -> None:
    async with spawned(example_command("shell_agent.py")) as agent:
        client = agent.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            session_id = await client.new_session(tmp_path)
            await client.prompt(session_id, f"run touch {tmp_path / 'never'}")
            await client.wait_permission_request()
        await client.close_input()
        await exits_cleanly(agent)
        await client.read_to_eof()
    assert not (tmp_path / "never").exists()
    updates = client.updates(session_id)
    assert updates[-1].get("stopReason") == "cancelled"
    statuses = [u["status"] for u in updates if "status" in u]
    assert statuses[-1] == "cancelled"


async def test_client_gone_while_a_command_runs_kills_its_process_group(tmp_path: Path) -> None:
    async with spawned(example_command("shell_agent.py")) as agent:
        client = agent.client
        with anyio.fail_after(WAIT):
            session_id, pids = await start_command(client, tmp_path)
        await client.close_input()
        await exits_cleanly(agent)
        await client.read_to_eof()
    # The shell and its background child are gone: nothing is orphaned.
    assert [pid for pid in pids if process_alive(pid)] == []
    updates = client.updates(session_id)
    assert updates[-1].get("stopReason") == "cancelled"
    exits = [u["exitStatus"] for u in updates if "exitStatus" in u]
    assert len(exits) == 1 and exits[0].get("signal") in ("SIGTERM", "SIGKILL")


FLOOD = "echo pid:$$; (while :; do echo spam; done) & echo child:$!; wait"


async def test_client_gone_while_a_command_floods_a_broken_pipe(tmp_path: Path) -> None:
    # The editor crashed: stdout is a broken pipe and stdin is at its end.
    async with spawned(example_command("shell_agent.py")) as agent:
        client = agent.client
        with anyio.fail_after(WAIT):
            _, pids = await start_command(client, tmp_path, FLOOD)
        agent.break_stdout()
        await client.close_input()
        await exits_cleanly(agent)
    assert [pid for pid in pids if process_alive(pid)] == []


async def test_client_hangs_while_a_command_floods_its_output(anyio_backend: str) -> None:
    # The editor hangs: stdin is at its end, stdout is never read again, so what
    # the agent still has to say is stuck behind a full pipe. It gives up after
    # shutdown_grace + 3 s, and its children are gone all the same.
    command = agent_command("script", anyio_backend, "--shutdown-grace", "0.2")
    async with spawned(command) as agent:
        client = agent.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            session_id = await client.new_session("/tmp")
            await client.prompt(session_id, f"run {FLOOD}")
            while not re.search(r"child:\d+", terminal_text(client, session_id)):
                await client.receive()
            pids = [
                int(p)
                for p in re.findall(r"(?:pid|child):(\d+)", terminal_text(client, session_id))
            ]
            await pipe_full(agent.stdout_fd)
        await client.close_input()
        await exits_cleanly(agent)
    assert [pid for pid in pids if process_alive(pid)] == []


async def pipe_full(fd: int) -> None:
    """Wait until the pipe we read from holds as much as it can (the writer is stuck)."""
    capacity = fcntl.fcntl(fd, F_GETPIPE_SZ)
    while True:
        pending = struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0" * 4))[0]
        if pending >= capacity - 64 * 1024:
            return
        # A pipe filling up has no event to wait for: look again shortly.
        await anyio.sleep(0.01)


async def test_broken_pipe_alone_ends_the_agent(anyio_backend: str) -> None:
    # Only stdout breaks (stdin stays open): the agent notices on its next write.
    async with spawned(agent_command("script", anyio_backend)) as agent:
        client = agent.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            session_id = await client.new_session("/tmp")
            await client.prompt(session_id, "forever")
        agent.break_stdout()
        await exits_cleanly(agent)


# ----------------------------------------------------------- signals


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_signal_cancels_the_turn_kills_children_and_exits_0(
    signum: signal.Signals, tmp_path: Path
) -> None:
    async with spawned(example_command("shell_agent.py")) as agent:
        client = agent.client
        with anyio.fail_after(WAIT):
            session_id, pids = await start_command(client, tmp_path)
        agent.process.send_signal(signum)
        await exits_cleanly(agent)
        await client.read_to_eof()
    assert [pid for pid in pids if process_alive(pid)] == []
    updates = client.updates(session_id)
    assert updates[-1].get("stopReason") == "cancelled"
    assert [u["status"] for u in updates if "status" in u][-1] == "cancelled"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_signal_while_idle_exits_0(signum: signal.Signals, anyio_backend: str) -> None:
    async with spawned(agent_command("script", anyio_backend)) as agent:
        with anyio.fail_after(WAIT):
            await agent.client.initialize()
        agent.process.send_signal(signum)
        await exits_cleanly(agent)


async def test_work_that_ignores_cancellation_cannot_keep_the_agent_alive(
    anyio_backend: str,
) -> None:
    # "stubborn 600" shields itself from cancellation for 60 s; the agent still exits.
    command = agent_command("script", anyio_backend, "--shutdown-grace", "0.2")
    async with spawned(command) as agent:
        client = agent.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            session_id = await client.new_session("/tmp")
            await client.prompt(session_id, "stubborn 600")
            await client.receive_until(
                lambda m: m.get("params", {}).get("update", {}).get("state") == "running"
            )
        await client.close_input()
        await exits_cleanly(agent)
        await client.read_to_eof()
    assert client.updates(session_id)[-1].get("stopReason") == "cancelled"


# ------------------------------------------------------- the client stops reading


async def test_a_client_that_stops_reading_gets_everything_later_in_order() -> None:
    # 2,000 chunks of 1,000 bytes against a 64 KiB write buffer and a one-write pipe.
    limit = 64 * 1024
    agent = ScriptAgent()
    limits = acpio.AgentLimits(write_buffer_size=limit)
    async with served(agent, limits=limits, max_buffered_chunks=1) as state:
        client = state.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            session_id = await client.new_session("/tmp")
            await client.prompt(session_id, "chunks 2000 1000")
            await agent.started.wait()
            # Not reading: the producer must stall once the buffer and the pipe are full.
            await anyio.wait_all_tasks_blocked()
            stalled_at = agent.progress
            # A chunk update is about 1,180 bytes on the wire; what left the producer is
            # held by the write buffer, the writer's current write and the pipe.
            assert 0 < stalled_at * 1180 <= 3 * limit + 64 * 1024, stalled_at
            await anyio.wait_all_tasks_blocked()
            assert agent.progress == stalled_at
            idle = await client.wait_idle(session_id)
            assert idle["stopReason"] == "end_turn"
    texts = [
        u["content"]["text"]
        for u in state.client.updates(session_id)
        if u.get("sessionUpdate") == "agent_message_chunk"
    ]
    assert [int(t[:8]) for t in texts] == list(range(2000))
    assert all(len(t) == 1000 for t in texts)
    assert agent.sent[session_id].chunks == 2000


# -------------------------------------------------- handlers that misbehave


async def test_a_failing_or_stubborn_turn_leaves_other_sessions_alone() -> None:
    agent = ScriptAgent()
    limits = acpio.AgentLimits(session=acpio.SessionLimits(cancel_grace=0.3))
    with collect_logs() as logs:
        async with served(agent, limits=limits) as state:
            client = state.client
            with anyio.fail_after(WAIT):
                await client.initialize()
                failing, stubborn, healthy = [await client.new_session("/tmp") for _ in range(3)]
                await client.prompt(stubborn, "stubborn 8")  # ignores cancellation for 0.8 s
                await client.prompt(failing, "raise")
                await client.prompt(healthy, "chunks 300 50")
                await client.notify("session/cancel", {"sessionId": stubborn})
                stops = {}
                for session_id in (failing, stubborn, healthy):
                    stops[session_id] = await client.wait_idle(session_id)
                # After the grace the stubborn turn was reported cancelled and abandoned...
                assert stops[stubborn]["stopReason"] == "cancelled"
                # ...and whatever it sends later is dropped.
                await client.prompt(stubborn, "chunks 1 5")
                assert (await client.wait_idle(stubborn))["stopReason"] == "end_turn"
    assert stops[failing]["stopReason"] == "error"
    assert "boom from the prompt handler" in stops[failing]["error"]["message"]
    assert stops[healthy]["stopReason"] == "end_turn"
    received = state.client
    for session_id in (failing, stubborn, healthy):
        idles = [m for m in received.received if is_idle(m, session_id)]
        assert len(idles) == (2 if session_id == stubborn else 1)
    chunks = [
        u for u in received.updates(healthy) if u.get("sessionUpdate") == "agent_message_chunk"
    ]
    assert [int(u["content"]["text"][:8]) for u in chunks] == list(range(300))
    messages = [
        u["content"][0]["text"]
        for u in received.updates(stubborn)
        if u.get("sessionUpdate") == "agent_message"
    ]
    assert "stubborn work went on after its idle" not in messages
    reports = [r for r in logs.tracebacks() if "boom" in str(r.exc_info[1] if r.exc_info else "")]
    assert len(reports) == 1


async def test_request_handlers_that_fail_hang_or_ignore_cancellation() -> None:
    with collect_logs() as logs:
        async with served(ScriptAgent()) as state:
            client = state.client
            with anyio.fail_after(WAIT):
                await client.initialize()
                failing = await client.send_request("_raise", {})
                hanging = await client.send_request("_hang", {})
                stubborn = await client.send_request("_stubborn", {})
                answer = await client.response(failing)
                assert answer["error"]["code"] == -32603
                assert "RuntimeError: boom from an extension method" in answer["error"]["message"]
                await client.notify("$/cancel_request", {"requestId": hanging})
                await client.notify("$/cancel_request", {"requestId": stubborn})
                assert (await client.response(hanging))["error"]["code"] == -32800
                # Ignoring cancellation delays the answer but it still comes, once.
                assert (await client.response(stubborn))["result"] == "finished anyway"
                assert await client.call("_echo", ["still serving"]) == ["still serving"]
    answers = [m for m in state.client.received if m.get("id") in (failing, hanging, stubborn)]
    assert len(answers) == 3
    assert (
        len(
            [
                r
                for r in logs.tracebacks()
                if "extension" in str(r.exc_info[1] if r.exc_info else "")
            ]
        )
        == 1
    )
