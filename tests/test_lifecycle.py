"""The prompt lifecycle on the wire: acceptance, user message, running, output, one idle.

Every test drives an in-process agent with the testing kit's MockClient (its
conformance checker is strict, so any protocol violation fails the test too)
and asserts on the messages in the order the agent wrote them.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import cast

import anyio
import anyio.abc
import pytest

import acpio
from acpio import schema
from acpio._agent.session import PromptHandler, create_session
from acpio.testing import ClientSession, MockClient

pytestmark = pytest.mark.anyio

Script = Callable[[acpio.Session, list[acpio.ContentBlock]], Awaitable[str | None]]


class Scripted(acpio.Agent):
    """Runs ``script`` for every prompt and counts the calls."""

    info = acpio.Implementation(name="scripted-agent", version="1.0.0")

    def __init__(self, script: Script) -> None:
        self.script = script
        self.calls = 0

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str | None:
        self.calls += 1
        return await self.script(session, prompt)


def say(text: str) -> Script:
    """A script that answers every prompt with one message."""

    async def script(session: acpio.Session, prompt: list[acpio.ContentBlock]) -> None:
        await session.message(text)

    return script


def _limits(cancel_grace: float = 2.0) -> acpio.AgentLimits:
    return acpio.AgentLimits(session=acpio.SessionLimits(cancel_grace=cancel_grace))


def agent_messages(client: MockClient) -> list[dict[str, object]]:
    """Every message the agent wrote, parsed, in wire order."""
    messages = []
    for entry in client.transcript:
        if entry.direction == "agent->client":
            message = entry.message
            assert isinstance(message, dict)
            messages.append(message)
    return messages


def request_ids(client: MockClient, method: str) -> list[object]:
    """The ids of the client's requests of ``method``, in the order sent."""
    ids = []
    for entry in client.transcript:
        message = entry.message
        if (
            entry.direction == "client->agent"
            and isinstance(message, dict)
            and message.get("method") == method
        ):
            ids.append(message["id"])
    return ids


def describe(message: dict[str, object]) -> str:
    """A short label for a wire message: ``response`` or the update kind (and state)."""
    if "method" not in message:
        return "response"
    params = message["params"]
    assert isinstance(params, dict)
    update = params["update"]
    assert isinstance(update, dict)
    kind = str(update["sessionUpdate"])
    if kind == "state_update":
        return f"{update['state']}:{update.get('stopReason', '-')}"
    return kind


def wire_after_response(client: MockClient, request_id: object) -> list[dict[str, object]]:
    """The agent's messages from the response to ``request_id`` on (the response first)."""
    messages = agent_messages(client)
    for index, message in enumerate(messages):
        if "method" not in message and message.get("id") == request_id:
            return messages[index:]
    raise AssertionError(f"no response to request {request_id!r}")


def idle_positions(session: ClientSession) -> list[int]:
    return [i for i, u in enumerate(session.updates) if isinstance(u, schema.IdleStateUpdate)]


async def round_trip(client: MockClient) -> None:
    """A request answered after everything the agent queued before it."""
    await client.list_sessions()


# --------------------------------------------------------------------------- order


async def test_prompt_lifecycle_order_on_the_wire() -> None:
    async def script(session: acpio.Session, prompt: list[acpio.ContentBlock]) -> None:
        await session.message("hello")
        stream = session.thought_stream()
        await stream.write("thinking")
        await stream.write(" more")
        await session.plan([schema.PlanEntry(content="step", priority="high", status="pending")])

    async with MockClient(Scripted(script)) as client:
        session = await client.new_session()
        result = await session.prompt("hi there")
        (prompt_id,) = request_ids(client, "session/prompt")
        wire = wire_after_response(client, prompt_id)

    response = wire[0]
    assert response["result"] == {"messageId": result.message_id}
    assert [describe(m) for m in wire] == [
        "response",
        "user_message",
        "running:-",
        "agent_message",
        "agent_thought_chunk",
        "agent_thought_chunk",
        "plan_update",
        "idle:end_turn",
    ]
    user_message = wire[1]["params"]
    assert isinstance(user_message, dict)
    assert user_message["sessionId"] == session.id
    assert user_message["update"] == {
        "sessionUpdate": "user_message",
        "messageId": result.message_id,
        "content": [{"type": "text", "text": "hi there"}],
    }
    # Streamed chunks share one messageId; the whole message has its own.
    thought_ids = {m["params"]["update"]["messageId"] for m in wire[4:6]}  # type: ignore[index]
    assert len(thought_ids) == 1
    assert wire[3]["params"]["update"]["messageId"] not in thought_ids  # type: ignore[index]
    assert result.stop_reason == "end_turn"
    assert client.violations == []


async def test_nothing_of_a_turn_precedes_its_prompt_response() -> None:
    async with MockClient(Scripted(say("x"))) as client:
        session = await client.new_session()
        await session.prompt("one")
        await session.prompt("two")
        ids = request_ids(client, "session/prompt")
        messages = agent_messages(client)
    responses = [i for i, m in enumerate(messages) if "method" not in m and m.get("id") in ids]
    user_messages = [
        i for i, m in enumerate(messages) if "method" in m and describe(m) == "user_message"
    ]
    assert len(responses) == len(user_messages) == 2
    assert all(r < u for r, u in zip(responses, user_messages, strict=True))


@pytest.mark.parametrize(
    ("returned", "expected"),
    [
        (None, "end_turn"),
        ("end_turn", "end_turn"),
        ("max_tokens", "max_tokens"),
        ("max_turn_requests", "max_turn_requests"),
        ("refusal", "refusal"),
        ("_paused", "_paused"),
    ],
)
async def test_the_handler_return_value_is_the_stop_reason(
    returned: str | None, expected: str
) -> None:
    async def script(session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str | None:
        return returned

    async with MockClient(Scripted(script)) as client:
        session = await client.new_session()
        result = await session.prompt("go")
    assert (result.stop_reason, result.error) == (expected, None)


@pytest.mark.parametrize("returned", ["finished", 42])
async def test_a_stop_reason_that_is_not_acp_ends_the_turn_with_error(returned: object) -> None:
    async def script(session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str | None:
        return returned  # type: ignore[return-value]

    async with MockClient(Scripted(script)) as client:
        session = await client.new_session()
        result = await session.prompt("go")
    assert result.stop_reason == "error"
    assert result.error is not None
    assert "LocalProtocolError" in result.error.message


# --------------------------------------------------------------------------- errors


async def test_handler_exception_ends_the_turn_with_an_error_object() -> None:
    async def script(session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str | None:
        if acpio.text_of(prompt) == "fail":
            call = await session.tool_call("Doomed", kind="read")
            await call.start()
            raise ValueError("boom")
        await session.message("fine")
        return None

    async with MockClient(Scripted(script)) as client:
        session = await client.new_session()
        turn = await session.start_prompt("fail")
        # The prompt itself succeeded: the failure is reported on the idle.
        assert turn.message_id
        result = await turn.wait()
        assert result.stop_reason == "error"
        assert result.error is not None
        assert result.error.code == -32603
        assert result.error.message == "ValueError: boom"
        # The open tool call was finished (failed) before the idle.
        (call,) = result.view.tool_calls.values()
        assert call.status == "failed"
        assert describe_update(result.updates[-2]) == "tool_call_update"
        # The session is still usable.
        again = await session.prompt("ok")
        assert (again.stop_reason, again.text) == ("end_turn", "fine")


def describe_update(update: schema.SessionUpdate) -> str:
    return str(schema.to_builtins(update)["sessionUpdate"])  # type: ignore[index]


# --------------------------------------------------------------------------- cancel


async def test_cancel_sends_pending_updates_then_one_cancelled_idle_then_nothing() -> None:
    started = anyio.Event()

    async def script(session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str | None:
        call = await session.tool_call("Long job", kind="execute")
        await call.start()
        terminal = await call.terminal(command="job")
        await terminal.write(b"partial output")  # buffered: flushed before the idle
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):
                await session.message("cleaning up")
        return "end_turn"

    async with MockClient(Scripted(script)) as client:
        session = await client.new_session()
        turn = await session.start_prompt("work")
        await started.wait()
        await session.wait_for_state("running")
        await session.cancel()
        result = await turn.wait()
        await round_trip(client)

        assert result.stop_reason == "cancelled"
        kinds = [describe_update(u) for u in result.updates]
        idle_at = kinds.index("state_update", kinds.index("agent_message"))
        # Pending updates (the cleanup message, the buffered terminal bytes, the
        # cancelled tool call) all precede the one idle; nothing follows it.
        assert "agent_message" in kinds[:idle_at]
        view = result.view
        (call,) = view.tool_calls.values()
        assert call.status == "cancelled"
        (terminal,) = view.terminals.values()
        assert terminal.output == b"partial output"
        assert len(idle_positions(session)) == 1
        assert isinstance(session.updates[-1], schema.IdleStateUpdate)
        assert client.violations == []


async def test_cancelled_operations_raising_are_reported_cancelled_not_error() -> None:
    started = anyio.Event()

    async def script(session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str | None:
        started.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            # What an HTTP client does when its request is aborted.
            raise RuntimeError("request aborted") from None
        return None

    async with MockClient(Scripted(script)) as client:
        session = await client.new_session()
        turn = await session.start_prompt("work")
        await started.wait()
        await session.cancel()
        result = await turn.wait()
    assert (result.stop_reason, result.error) == ("cancelled", None)


async def test_handler_that_swallows_cancellation_and_returns_is_still_cancelled() -> None:
    started = anyio.Event()

    async def script(session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str | None:
        started.set()
        with anyio.CancelScope() as scope:
            await anyio.sleep_forever()
        assert scope.cancel_called is False  # the turn's own scope was cancelled, not this one
        return "end_turn"

    async with MockClient(Scripted(script)) as client:
        session = await client.new_session()
        turn = await session.start_prompt("work")
        await started.wait()
        await session.cancel()
        assert (await turn.wait()).stop_reason == "cancelled"


async def test_cancel_of_an_idle_session_sends_nothing() -> None:
    async with MockClient(Scripted(say("x"))) as client:
        session = await client.new_session()
        await session.prompt("one")
        before = len(session.updates)
        await session.cancel()
        await round_trip(client)
        assert len(session.updates) == before
        # A later prompt is not affected by the stale cancel.
        assert (await session.prompt("two")).stop_reason == "end_turn"


async def test_hung_handler_is_abandoned_after_the_grace_period() -> None:
    started = anyio.Event()
    release = anyio.Event()
    ended = anyio.Event()
    stuck = True

    async def script(session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str | None:
        nonlocal stuck
        if acpio.text_of(prompt) != "hang":
            await session.message("fresh turn")
            return None
        started.set()
        try:
            with anyio.CancelScope(shield=True):
                await release.wait()  # ignores cancellation
            stuck = False
            # Everything below comes after the turn was reported idle: dropped.
            await session.message("too late")
            call = await session.tool_call("Too late", kind="other")
            await call.complete()
            await session.plan([])
        finally:
            ended.set()
        return "end_turn"

    async with MockClient(Scripted(script), limits=_limits(cancel_grace=0.2)) as client:
        session = await client.new_session()
        turn = await session.start_prompt("hang")
        await started.wait()
        await session.cancel()
        result = await turn.wait()
        assert result.stop_reason == "cancelled"
        assert stuck  # reported before the handler gave up

        # The session runs new prompts while the abandoned handler is still stuck.
        again = await session.prompt("next")
        assert (again.stop_reason, again.text) == ("end_turn", "fresh turn")
        assert stuck
        updates_before_release = len(session.updates)

        release.set()
        await ended.wait()
        await round_trip(client)
        assert not stuck
        # Nothing of the abandoned turn reached the client, before or after its release.
        assert len(session.updates) == updates_before_release
        assert [m.text for m in session.view.agent_messages] == ["fresh turn"]
        assert session.view.tool_calls == {} and session.view.plans == {}
        assert client.violations == []


# --------------------------------------------------------------------------- queue


async def test_a_prompt_sent_while_busy_is_queued_and_runs_after_the_idle() -> None:
    first_started = anyio.Event()
    release = anyio.Event()
    order: list[str] = []

    async def script(session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str | None:
        text = acpio.text_of(prompt)
        order.append(text)
        if text == "first":
            first_started.set()
            await release.wait()
        await session.message(f"answer to {text}")
        return None

    async with MockClient(Scripted(script)) as client:
        session = await client.new_session()
        await session.start_prompt("first")
        await first_started.wait()
        second = await session.start_prompt("second")
        # Accepted at once: its user message is in the conversation while "first" runs.
        await client.wait_for(
            lambda: any(
                isinstance(u, schema.UserMessage) and u.message_id == second.message_id
                for u in session.updates
            ),
            what="the queued prompt's user_message",
        )
        assert session.view.state == "running"
        assert order == ["first"]
        assert [m.text for m in session.view.user_messages] == ["first", "second"]

        release.set()
        await client.wait_for(lambda: len(idle_positions(session)) == 2, what="two idles")
        await round_trip(client)

        kinds = []
        for update in session.updates:
            if isinstance(update, schema.UserMessage):
                kinds.append(f"user:{acpio.text_of(update.content or [])}")
            elif isinstance(update, schema.AgentMessage):
                kinds.append(f"agent:{acpio.text_of(update.content or [])}")
            else:
                kinds.append(describe_update(update) + ":" + str(getattr(update, "state", "")))
        assert kinds == [
            "user:first",
            "state_update:running",
            "user:second",
            "agent:answer to first",
            "state_update:idle",
            "state_update:running",
            "agent:answer to second",
            "state_update:idle",
        ]
        assert order == ["first", "second"]
        assert session.view.stop_reasons == ["end_turn", "end_turn"]
        assert client.violations == []


async def test_cancel_discards_queued_prompts() -> None:
    started = anyio.Event()
    agent_calls: list[str] = []

    async def script(session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str | None:
        text = acpio.text_of(prompt)
        agent_calls.append(text)
        if text == "first":
            started.set()
            await anyio.sleep_forever()
        return None

    async with MockClient(Scripted(script)) as client:
        session = await client.new_session()
        first = await session.start_prompt("first")
        await started.wait()
        second = await session.start_prompt("second")
        third = await session.start_prompt("third")
        assert len({first.message_id, second.message_id, third.message_id}) == 3
        await client.wait_for(
            lambda: len(session.view.user_messages) == 3, what="three user messages"
        )
        await session.cancel()
        await client.wait_for(lambda: idle_positions(session), what="the idle")
        await round_trip(client)

        # One idle (cancelled) for the running turn; the queued prompts never ran.
        assert session.view.stop_reasons == ["cancelled"]
        assert isinstance(session.updates[-1], schema.IdleStateUpdate)
        assert agent_calls == ["first"]

        # The session takes new prompts normally afterwards.
        result = await session.prompt("fourth")
        assert result.stop_reason == "end_turn"
        assert agent_calls == ["first", "fourth"]
        assert client.violations == []


async def test_too_many_queued_prompts_are_refused_without_insertion() -> None:
    started = anyio.Event()

    async def script(session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str | None:
        started.set()
        await anyio.sleep_forever()
        return None

    limits = acpio.AgentLimits(session=acpio.SessionLimits(max_queued_prompts=1))
    async with MockClient(Scripted(script), limits=limits) as client:
        session = await client.new_session()
        await session.start_prompt("running")
        await started.wait()
        await session.start_prompt("queued")
        with pytest.raises(acpio.RequestError) as raised:
            await session.start_prompt("one too many")
        assert raised.value.code == -32603
        assert "limit 1" in raised.value.message
        await session.cancel()
        await client.wait_for(lambda: idle_positions(session), what="the idle")
        assert [m.text for m in session.view.user_messages] == ["running", "queued"]


# --------------------------------------------------------------------------- isolation


async def test_two_sessions_on_one_connection_do_not_affect_each_other() -> None:
    hang_started = anyio.Event()
    release_hang = anyio.Event()
    release_steady = anyio.Event()

    async def script(session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str | None:
        text = acpio.text_of(prompt)
        if text == "crash":
            raise RuntimeError("crashed")
        if text == "hang":
            hang_started.set()
            with anyio.CancelScope(shield=True):
                await release_hang.wait()  # does not react to cancellation
        stream = session.message_stream()
        await stream.write("steady")
        await release_steady.wait()
        await stream.write(" work")
        return None

    async with MockClient(Scripted(script), limits=_limits(cancel_grace=0.2)) as client:
        steady = await client.new_session()
        troubled = await client.new_session()
        steady_turn = await steady.start_prompt("steady")

        crash = await troubled.prompt("crash")
        assert crash.stop_reason == "error"

        hang = await troubled.start_prompt("hang")
        await hang_started.wait()
        await troubled.cancel()
        assert (await hang.wait()).stop_reason == "cancelled"

        # The steady session never saw any of it and finishes normally.
        assert steady.view.state == "running"
        release_steady.set()
        result = await steady_turn.wait()
        assert (result.stop_reason, result.text) == ("end_turn", "steady work")
        assert steady.view.stop_reasons == ["end_turn"]
        assert troubled.view.stop_reasons == ["error", "cancelled"]
        assert all(
            u.stop_reason != "error"
            for u in steady.updates
            if isinstance(u, schema.IdleStateUpdate)
        )
        assert client.violations == []
        release_hang.set()  # in-process, a task that never ends would keep the test alive


# --------------------------------------------------------------------------- races


class WireRecorder:
    """Stands in for the connection below a Session: keeps every line it is given."""

    def __init__(self) -> None:
        self.updates: list[dict[str, object]] = []

    @property
    def line_sender(self) -> Callable[[bytes], Awaitable[None]]:
        return self.send_line

    async def send_line(self, line: bytes) -> None:
        self.updates.append(json.loads(line)["params"]["update"])

    @property
    def line_try_sender(self) -> Callable[[bytes], bool]:
        return self.try_send_line

    def try_send_line(self, line: bytes) -> bool:
        self.updates.append(json.loads(line)["params"]["update"])
        return True

    async def write_queued(self) -> bool:
        return False  # every line was kept as it was sent


async def test_cancel_between_acceptance_and_start_still_closes_the_turn() -> None:
    # Over a real connection this window is too short to hit on purpose: the
    # prompt was answered, its runner is scheduled but has not run, and the
    # cancel arrives. The client must still see the turn start and end.
    calls: list[str] = []

    async def handler(session: acpio.Session, prompt: list[acpio.ContentBlock]) -> None:
        calls.append(acpio.text_of(prompt))

    recorder = WireRecorder()
    async with anyio.create_task_group() as group:
        core = create_session(
            "s1",
            "/tmp",
            connection=cast(acpio.rpc.Connection, recorder),
            task_group=group,
            history=acpio.store.InMemoryHistory(),
            prompt_handler=handler,
        )
        session = core.session
        work = core.turns.accept_prompt([schema.TextContent(text="hi")])
        queued = core.turns.accept_prompt([schema.TextContent(text="queued")])
        core.turns.prompt_responded(work)
        core.turns.prompt_responded(queued)
        await session.cancel()
        with anyio.fail_after(5):
            await session.wait_idle()
    assert [
        (u["sessionUpdate"], u.get("state"), u.get("stopReason")) for u in recorder.updates
    ] == [
        ("user_message", None, None),
        ("user_message", None, None),
        ("state_update", "running", None),
        ("state_update", "idle", "cancelled"),
    ]
    assert calls == []
    assert session.state == "idle" and not session.busy


class WritingRecorder(WireRecorder):
    """A :class:`WireRecorder` whose transport can write what is queued in the caller's task:
    it notes, in ``log``, each time a call wrote this session's idle, and from which task."""

    def __init__(self, name: str, log: list[tuple[str, int | None]]) -> None:
        super().__init__()
        self.name = name
        self.log = log
        self._written = 0

    async def write_queued(self) -> bool:
        idles = sum(1 for u in self.updates if u.get("state") == "idle")
        if idles == self._written:
            return False
        self._written = idles
        self.log.append((f"{self.name} idle written", anyio.get_current_task().id))
        return True


def _session_on(
    recorder: WireRecorder, group: anyio.abc.TaskGroup, handler: PromptHandler
) -> tuple[acpio.Session, object]:
    core = create_session(
        recorder.name if isinstance(recorder, WritingRecorder) else "s",
        "/tmp",
        connection=cast(acpio.rpc.Connection, recorder),
        task_group=group,
        history=acpio.store.InMemoryHistory(),
        prompt_handler=handler,
    )
    return core.session, core.turns


async def test_a_turns_end_is_written_by_the_task_that_ran_its_handler() -> None:
    # No hand-off between the handler's end and its idle going out: the handler's task
    # finishes the turn and has it written itself.
    log: list[tuple[str, int | None]] = []

    async def handler(session: acpio.Session, prompt: list[acpio.ContentBlock]) -> None:
        log.append(("handler", anyio.get_current_task().id))

    recorder = WritingRecorder("a", log)
    async with anyio.create_task_group() as group:
        session, turns = _session_on(recorder, group, handler)
        for text in ("one", "two"):
            work = turns.accept_prompt([schema.TextContent(text=text)])  # type: ignore[attr-defined]
            turns.prompt_responded(work)  # type: ignore[attr-defined]
            with anyio.fail_after(5):
                await session.wait_idle()
    assert [event for event, _ in log] == ["handler", "a idle written"] * 2
    assert log[0][1] == log[1][1] and log[2][1] == log[3][1]
    states = [u.get("state") for u in recorder.updates if u["sessionUpdate"] == "state_update"]
    assert states == ["running", "idle", "running", "idle"]


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_under_load_a_turn_ends_before_the_next_ready_handler_runs(
    anyio_backend: str,
) -> None:
    # asyncio runs ready tasks first come, first served: when the turn's end had to wait
    # for its runner to be woken, every handler ready meanwhile ran first, and under load
    # all turns ended together. (trio picks the order of ready tasks itself.)
    log: list[tuple[str, int | None]] = []

    def handler_of(name: str) -> PromptHandler:
        async def handler(session: acpio.Session, prompt: list[acpio.ContentBlock]) -> None:
            log.append((f"{name} handler", None))

        return handler

    recorders = [WritingRecorder(name, log) for name in "abc"]
    async with anyio.create_task_group() as group:
        started = [_session_on(r, group, handler_of(r.name)) for r in recorders]
        for _, turns in started:
            work = turns.accept_prompt([schema.TextContent(text="go")])  # type: ignore[attr-defined]
            turns.prompt_responded(work)  # type: ignore[attr-defined]
        with anyio.fail_after(5):
            for session, _ in started:
                await session.wait_idle()
    assert [event for event, _ in log] == [
        "a handler",
        "a idle written",
        "b handler",
        "b idle written",
        "c handler",
        "c idle written",
    ]
