"""What lives as long as a session: ``Session.start_soon`` and ``Session.add_close_callback``.

A background task outlives the turn that started it (a cancelled turn leaves it
running) and is cancelled when the session closes, after the close callbacks
ran; a failing task or callback is logged and harms nothing else; a closed
session takes neither.
"""

from __future__ import annotations

import logging

import anyio
import pytest

import acpio
from acpio.testing import MockClient

pytestmark = pytest.mark.anyio


class Lifetime(acpio.Agent):
    """Starts a background task and registers close callbacks on its first prompt."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.running = anyio.Event()
        self.session: acpio.Session | None = None

    async def background(self, name: str) -> None:
        self.events.append(f"{name} started")
        self.running.set()
        try:
            await anyio.sleep_forever()
        finally:
            self.events.append(f"{name} cancelled")

    async def fail(self) -> None:
        raise RuntimeError("the task broke")

    def broken_callback(self) -> None:
        raise RuntimeError("the callback broke")

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str | None:
        self.session = session
        if acpio.text_of(prompt) == "start":
            session.start_soon(self.background, "watcher")
            session.start_soon(self.fail)
            session.add_close_callback(lambda: self.events.append("first callback"))
            session.add_close_callback(self.broken_callback)
            session.add_close_callback(lambda: self.events.append("last callback"))
            await self.running.wait()
            await anyio.sleep_forever()  # the turn is cancelled; the task goes on
        return None


async def test_background_work_outlives_its_turn_and_ends_with_the_session(
    caplog: pytest.LogCaptureFixture,
) -> None:
    agent = Lifetime()
    caplog.set_level(logging.ERROR, logger="acpio")
    async with MockClient(agent) as client:
        session = await client.new_session()
        turn = await session.start_prompt("start")
        await agent.running.wait()
        await session.cancel()
        await client.wait_for(lambda: turn.result, what="the cancelled turn")
        assert turn.result is not None and turn.result.stop_reason == "cancelled"
        # The turn is over; the session's task still runs, and a second turn works.
        assert agent.events == ["watcher started"]
        assert (await session.prompt("again")).stop_reason == "end_turn"

        await session.close()
        assert agent.events == [
            "watcher started",
            "first callback",
            "last callback",
            "watcher cancelled",
        ]
        assert client.violations == []
    logged = [record.getMessage() for record in caplog.records]
    assert any("background task" in line and session.id in line for line in logged), logged
    assert any("close callback" in line and session.id in line for line in logged), logged


async def test_a_closed_session_takes_no_background_task_and_no_callback() -> None:
    agent = Lifetime()
    async with MockClient(agent) as client:
        session = await client.new_session()
        await session.prompt("hello")
        await session.close()
    closed = agent.session
    assert closed is not None and closed.closed

    async def nothing() -> None:
        raise AssertionError("never started")

    with pytest.raises(acpio.LocalProtocolError, match="is closed; cannot start a background"):
        closed.start_soon(nothing)
    with pytest.raises(acpio.LocalProtocolError, match="is closed; cannot add a close callback"):
        closed.add_close_callback(lambda: None)
