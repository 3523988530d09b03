"""Objects only acpio creates: calling their classes is a TypeError that says what to do.

Sessions, tool calls, terminals and message streams are handed out by the
library (an agent receives its sessions; the session makes the handles). The
library creates them through a typed internal path; these tests call the
classes directly, the way a person might try, and check the message names
the way to get one. Also here: the report-only name of a tool call's
``cancelled`` status, and ``request_cancel`` giving the same type on tool
calls and terminals.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

import acpio
from acpio.testing import MockClient

Body = Callable[[acpio.Session], Awaitable[str | None]]


class Scripted(acpio.Agent):
    """An agent whose prompt handler is the test's coroutine."""

    def __init__(self, body: Body) -> None:
        self.body = body

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str | None:
        return await self.body(session)


@pytest.mark.parametrize(
    ("cls", "hint"),
    [
        (acpio.Session, "Agent.prompt"),
        (acpio.ToolCallHandle, "session.tool_call("),
        (acpio.TerminalHandle, "session.terminal("),
        (acpio.MessageStream, "session.message_stream()"),
    ],
)
@pytest.mark.parametrize(
    "call",
    [
        lambda cls: cls(),
        lambda cls: cls("sess_1", "/tmp"),
        lambda cls: cls("sess_1", "/tmp", connection=None, task_group=None),
    ],
    ids=["no-arguments", "positional", "keywords"],
)
def test_calling_a_library_created_class_says_how_to_get_one(
    cls: type[object], hint: str, call: Callable[[type[object]], object]
) -> None:
    with pytest.raises(TypeError) as raised:
        call(cls)
    message = str(raised.value)
    assert f"{cls.__name__} objects are created by acpio" in message
    assert hint in message
    assert "acpio.testing" in message


def test_session_config_is_created_by_the_session_too() -> None:
    with pytest.raises(TypeError, match=r"session\.config"):
        acpio.SessionConfig(None)  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_the_objects_the_library_hands_out_are_instances_of_the_public_classes() -> None:
    seen: list[object] = []

    async def body(session: acpio.Session) -> None:
        call = await session.tool_call("t", tool_call_id="c")
        terminal = await call.terminal(terminal_id="t1")
        stream = session.message_stream()
        await stream.write("hi")
        seen.extend((session, call, terminal, stream, session.config))
        await terminal.exit(0)
        await call.complete()

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        await session.prompt("go")
    assert [type(x) for x in seen] == [
        acpio.Session,
        acpio.ToolCallHandle,
        acpio.TerminalHandle,
        acpio.MessageStream,
        acpio.SessionConfig,
    ]


@pytest.mark.anyio
async def test_mark_cancelled_only_reports_and_cancel_is_its_old_name() -> None:
    statuses: list[str] = []

    async def body(session: acpio.Session) -> None:
        first = await session.tool_call("a", tool_call_id="a")
        await first.mark_cancelled()
        statuses.append(first.status)
        second = await session.tool_call("b", tool_call_id="b")
        await second.cancel()  # the compatibility alias of mark_cancelled
        statuses.append(second.status)
        # Reporting a call cancelled does not stop the turn: it goes on to its end.
        await session.message("still running")

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        result = await session.prompt("go")
    assert statuses == ["cancelled", "cancelled"]
    assert result.stop_reason == "end_turn"
    assert acpio.ToolCallHandle.cancel is acpio.ToolCallHandle.mark_cancelled
    assert session.view.tool_calls["a"].status == "cancelled"
    assert session.view.tool_calls["b"].status == "cancelled"


@pytest.mark.anyio
async def test_request_cancel_says_whether_running_work_was_stopped() -> None:
    answers: list[bool] = []

    async def body(session: acpio.Session) -> None:
        idle_call = await session.tool_call("idle", tool_call_id="idle", cancellable=True)
        answers.append(idle_call.request_cancel())  # nothing runs: reported cancelled
        async with session.tool_call("busy", tool_call_id="busy", cancellable=True) as busy:
            answers.append(busy.request_cancel())  # its block runs: stopped
        terminal = await session.terminal(terminal_id="t", cancellable=True)
        answers.append(terminal.request_cancel())  # no process runs
        await terminal.exit(0)

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        await session.prompt("go")
    assert answers == [False, True, False]
    # The idle call's report comes from a task of its own and may lose the race with
    # the turn's end (then it is dropped, as any update after idle): not asserted here.
    assert session.view.tool_calls["busy"].status == "cancelled"
