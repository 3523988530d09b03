"""Asking the user through the session channel (``SessionChannel.ask``) when it must wait.

A question reports ``requires_action`` before it goes out. When that update
cannot be queued at once (the writer is full), the question waits for it; a
cancellation in that wait (``tool_call/cancel``) must still give the question
back, so the next question of the turn reports ``requires_action`` again and
the turn is ``running`` afterwards. The connection below the session is a
stand-in whose writer can be held full, which a real connection cannot be made
to do at a chosen moment.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar, cast

import anyio
import anyio.lowlevel
import msgspec
import pytest
from v1_client import allow, v1_client

import acpio
from acpio import schema
from acpio._agent.session import create_session

pytestmark = pytest.mark.anyio

T = TypeVar("T")

ALLOWED = msgspec.Raw(b'{"outcome":{"outcome":"selected","optionId":"allow_once"}}')


class HeldWriter:
    """A connection whose writer can be held full; every request is allowed at once."""

    def __init__(self) -> None:
        self.states: list[str] = []
        self.full = False
        self.waiting = anyio.Event()
        self.freed = anyio.Event()
        self.asked = 0

    @property
    def closed(self) -> bool:
        return False

    @property
    def line_sender(self) -> Callable[[bytes], Awaitable[None]]:
        return self.send_line

    @property
    def line_try_sender(self) -> Callable[[bytes], bool]:
        return self.try_send_line

    async def write_queued(self) -> bool:
        return False  # every line was kept as it was sent

    def _keep(self, line: bytes) -> None:
        update = json.loads(line)["params"]["update"]
        if update["sessionUpdate"] == "state_update":
            self.states.append(update["state"])

    async def send_line(self, line: bytes) -> None:
        if self.full:
            self.waiting.set()
            await self.freed.wait()
        self._keep(line)

    def try_send_line(self, line: bytes) -> bool:
        if self.full:
            return False
        self._keep(line)
        return True

    def prepare_request(self, method: str, params: object) -> bytes:
        return b""

    async def request_prepared(
        self, method: str, tail: bytes, decode: Callable[[msgspec.Raw], T]
    ) -> T:
        self.asked += 1
        await anyio.lowlevel.checkpoint()
        return decode(ALLOWED)

    async def request(self, method: str, params: object, decode: Callable[[msgspec.Raw], T]) -> T:
        raise AssertionError("no other request is sent")

    async def notify(self, method: str, params: object) -> None:
        raise AssertionError("no notification is sent")


async def test_a_question_cancelled_while_requires_action_waits_is_given_back() -> None:
    writer = HeldWriter()
    outcomes: list[acpio.permission.Outcome] = []

    async def handler(session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        first = await session.tool_call("first", tool_call_id="first", cancellable=True)
        writer.full = True

        async def ask() -> None:
            outcomes.append(await first.request_permission())

        async with anyio.create_task_group() as group:
            group.start_soon(ask)
            await writer.waiting.wait()  # requires_action waits for room
            assert first.request_cancel()  # tool_call/cancel while it waits
            writer.full = False
            writer.freed.set()
        second = await session.tool_call("second", tool_call_id="second")
        outcomes.append(await second.request_permission())
        return "end_turn"

    async with anyio.create_task_group() as group:
        core = create_session(
            "s1",
            "/tmp",
            connection=cast(acpio.rpc.Connection, writer),
            task_group=group,
            history=acpio.store.InMemoryHistory(),
            prompt_handler=handler,
        )
        work = core.turns.accept_prompt([schema.TextContent(text="go")])
        core.turns.prompt_responded(work)
        with anyio.fail_after(5):
            await core.session.wait_idle()

    assert [o.kind for o in outcomes] == ["cancelled", "selected"]
    assert outcomes[1].allowed
    assert writer.asked == 1  # the cancelled question never went out
    # The second question blocks the turn and resumes it, as the first would have.
    assert writer.states[-3:] == ["requires_action", "running", "idle"]
    assert core.session.state == "idle"


class AskFirstAgent(acpio.Agent):
    """Asks about a call it never announced."""

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        call = session.tool_call("Edit notes.txt", tool_call_id="edit", kind="edit")
        outcome = await call.request_permission()
        await call.complete()
        return "end_turn" if outcome.allowed else "refusal"


async def test_a_v1_question_is_encoded_when_asked(tmp_path: Path) -> None:
    """On v1 the request shows the call as the client was shown it, so it is encoded
    when asked: after the call was announced (flushing pending terminal bytes first
    is ``tests/test_terminal.py``'s)."""
    async with v1_client(AskFirstAgent(), policy=allow) as client:
        session_id = await client.new_session(os.fspath(tmp_path))
        assert await client.prompt(session_id, "go") == {"stopReason": "end_turn"}
    (request,) = client.permission_requests
    shown = request["toolCall"]
    assert (shown["toolCallId"], shown["title"], shown["kind"]) == (
        "edit",
        "Edit notes.txt",
        "edit",
    )
