"""No orphan on a cancel race: a cancel at any moment around a command's start.

Each iteration runs ``sleep`` under a name no other process has (a unique
fractional duration), cancels the turn at a random offset of 0 to 3 ms after
the tool call went ``in_progress``, and then looks for that name among the
live processes of the machine (``/proc/*/cmdline``; a zombie has an empty
command line, so only a process still running can match). The offsets are
the point of the test, not a wait for something: the cancel must be able to
land before, during and after the spawn.
"""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest
from support import EXAMPLES, gone

import acpio
from acpio.testing import MockClient, PermissionPolicy

pytestmark = pytest.mark.anyio

ITERATIONS = 60


def running_with(marker: bytes) -> Iterator[int]:
    """The ids of live processes whose command line contains ``marker``.

    The arguments of a command line are NUL-separated: match one argument's text.
    """
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker in cmdline:
            yield int(entry.name)


class RaceAgent(acpio.Agent):
    """Starts ``sleep`` in a tool call's terminal right after marking the call in progress."""

    def __init__(self) -> None:
        self.entered: dict[str, bool] = {}

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        marker = acpio.text_of(prompt)
        async with session.tool_call("Run", kind="execute", tool_call_id="c") as call:
            await call.start()
            terminal = await call.terminal(terminal_id="t")
            # No await between noting it and the call: entered means run_shell ran.
            self.entered[marker] = True
            # A shell with two children of its own: the whole group must go.
            await terminal.run_shell(f"sleep 30.{marker}1 & sleep 30.{marker}2 & wait")
        return "end_turn"


async def test_a_cancel_at_any_moment_of_the_start_leaves_no_process_and_reports_the_exit() -> None:
    agent = RaceAgent()
    rng = random.Random(1234)
    started = killed = 0
    async with MockClient(agent) as client:
        for iteration in range(ITERATIONS):
            marker = f"{os.getpid()}{iteration:04d}"
            session = await client.new_session()
            turn = await session.start_prompt(marker)
            await session.wait_for_tool_call("c", status="in_progress")
            await anyio.sleep(rng.uniform(0, 0.003))
            await session.cancel()
            result = await turn.wait(timeout=10)
            assert result.stop_reason == "cancelled"
            survivors = list(running_with(f"30.{marker}".encode()))
            assert all([await gone(pid) for pid in survivors]), f"iteration {iteration}"
            terminal = session.view.terminals.get("t")
            if agent.entered.get(marker):
                started += 1
                assert terminal is not None and terminal.exited, f"iteration {iteration}"
                if terminal.signal is not None:
                    killed += 1
            assert session.view.tool_calls["c"].status == "cancelled"
    assert client.violations == []
    # The offsets did reach the command itself, not only the steps before it.
    assert killed >= 1 and started >= killed


async def test_the_agent_exits_soon_after_end_of_input_while_a_command_runs() -> None:
    marker = f"{os.getpid()}77"
    command = [sys.executable, str(EXAMPLES / "shell_agent.py")]
    # Not exiting within exit_timeout seconds of end of input would get it SIGTERM.
    async with MockClient(command, policy=PermissionPolicy.allow(), exit_timeout=3.0) as client:
        session = await client.new_session()
        await session.start_prompt(f"run sleep 30.{marker} & sleep 30.{marker}1 & echo up; wait")
        (terminal_id,) = (await session.wait_for(lambda: list(session.view.terminals)))[:1]
        await session.wait_for_terminal_output(terminal_id, contains=b"up")
        # The shell and its two children (forked or already sleeping) carry the marker.
        survivors = list(running_with(f"30.{marker}".encode()))
        assert len(survivors) == 3
    assert client.returncode == 0
    assert all([await gone(pid) for pid in survivors])
    assert all([await gone(pid) for pid in running_with(f"30.{marker}".encode())])


class SweepAgent(acpio.Agent):
    """Cancels its own turn after a given number of scheduling steps, while it starts ``sleep``.

    Sweeping the number of steps puts the cancel at every await of the start
    in turn (the terminal's announcement, the spawn, the pipes' setup), on each
    backend, independently of how fast the machine is.
    """

    def __init__(self) -> None:
        self.entered: dict[str, bool] = {}

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        marker, steps = acpio.text_of(prompt).split()

        async def cancel_later() -> None:
            for _ in range(int(steps)):
                await anyio.lowlevel.checkpoint()
            await session.cancel()

        async with anyio.create_task_group() as group:
            group.start_soon(cancel_later)
            async with session.tool_call("Run", kind="execute", tool_call_id="c") as call:
                terminal = await call.terminal(terminal_id="t")
                self.entered[marker] = True
                await terminal.run_shell(f"sleep 30.{marker}1 & sleep 30.{marker}2 & wait")
        return "end_turn"


async def test_a_cancel_at_every_step_of_the_start_leaves_no_process_and_reports_the_exit() -> None:
    agent = SweepAgent()
    async with MockClient(agent) as client:
        for steps in range(40):
            marker = f"{os.getpid()}{steps:04d}9"
            session = await client.new_session()
            result = await session.prompt(f"{marker} {steps}", timeout=10)
            assert result.stop_reason == "cancelled"
            survivors = list(running_with(f"30.{marker}".encode()))
            assert all([await gone(pid) for pid in survivors]), f"after {steps} steps"
            if agent.entered.get(marker):
                terminal = session.view.terminals["t"]
                assert terminal.exited, f"after {steps} steps"
    assert client.violations == []


async def test_work_already_cancelled_starts_nothing_and_ends_its_terminal(tmp_path: Path) -> None:
    made = tmp_path / "made"
    raised: list[bool] = []

    class Agent(acpio.Agent):
        async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> None:
            terminal = await session.terminal(terminal_id="t", command="touch made")
            with anyio.CancelScope() as scope:
                scope.cancel()
                try:
                    await terminal.run_shell(f"touch {made}")
                except anyio.get_cancelled_exc_class():
                    raised.append(True)
                    raise
            assert terminal.exit_status == acpio.ExitStatus()

    async with MockClient(Agent()) as client:
        session = await client.new_session(tmp_path)
        result = await session.prompt("go")
        view = session.view.terminals["t"]

    assert result.stop_reason == "end_turn" and raised == [True]
    assert not made.exists()
    assert view.exited and (view.exit_code, view.signal) == (None, None)
    assert client.violations == []
