"""Sessions: new, list, close, delete, unknown ids, absolute paths, and the output helpers."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import msgspec
import pytest

import acpio
from acpio import schema
from acpio.testing import MockClient

pytestmark = pytest.mark.anyio


class Talker(acpio.Agent):
    """Answers prompts with every kind of output; ``hang`` runs until cancelled."""

    info = acpio.Implementation(name="talker", version="1.0.0")

    def __init__(self) -> None:
        self.started: anyio.Event | None = None
        self.closed: list[str] = []
        self.new: list[acpio.Session] = []

    async def on_new_session(self, session: acpio.Session) -> None:
        self.new.append(session)

    async def on_close_session(self, session: acpio.Session) -> None:
        self.closed.append(session.id)

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str | None:
        text = acpio.text_of(prompt)
        if text == "hang":
            if self.started is not None:
                self.started.set()
            call = await session.tool_call("Waiting", kind="other")
            await call.start()
            await anyio.sleep_forever()
        if text == "all":
            await session.message("whole message")
            await session.message(
                [schema.TextContent(text="two"), schema.TextContent(text=" blocks")]
            )
            stream = session.message_stream()
            await stream.write("streamed")
            await stream.write(schema.TextContent(text=" answer"))
            await session.thought("a whole thought")
            thinking = session.thought_stream()
            await thinking.write("streamed ")
            await thinking.write("thought")
            await session.plan(
                [
                    schema.PlanEntry(content="look", priority="high", status="completed"),
                    schema.PlanEntry(content="fix", priority="medium", status="in_progress"),
                ]
            )
            await session.notice("heads up", severity="warning", description="details")
            await session.usage(1200, 200_000, cost=schema.Cost(amount=0.5, currency="USD"))
        if text == "bad notice":
            await session.notice("nope", severity="catastrophic")
        return None


async def expect_error(code: int, call: object) -> acpio.RequestError:
    with pytest.raises(acpio.RequestError) as raised:
        await call  # type: ignore[misc]
    assert raised.value.code == code, raised.value
    return raised.value


# --------------------------------------------------------------------------- new


async def test_new_sessions_get_unique_ids_and_keep_their_directories(tmp_path: Path) -> None:
    agent = Talker()
    extra = tmp_path / "extra"
    async with MockClient(agent, cwd=tmp_path) as client:
        first = await client.new_session(additional_directories=[os.fspath(extra)])
        second = await client.new_session()
        assert first.id != second.id
        assert [s.id for s in agent.new] == [first.id, second.id]
        assert agent.new[0].cwd == os.fspath(tmp_path)
        assert agent.new[0].additional_directories == [os.fspath(extra)]
        assert agent.new[1].additional_directories == []
        listed = await client.list_sessions()
        info = {s.session_id: s for s in listed.sessions}
        assert info[first.id].additional_directories == [os.fspath(extra)]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"cwd": "relative/dir", "mcpServers": []}, "cwd"),
        ({"cwd": "", "mcpServers": []}, "cwd"),
        (
            {"cwd": "/abs", "additionalDirectories": ["rel"], "mcpServers": []},
            "additionalDirectories",
        ),
        (
            {"cwd": "/abs", "mcpServers": [{"type": "stdio", "name": "m", "command": "bin/mcp"}]},
            "command",
        ),
        ({"mcpServers": []}, "cwd"),
        ({"cwd": 7, "mcpServers": []}, "cwd"),
    ],
    ids=[
        "relative-cwd",
        "empty-cwd",
        "relative-extra-dir",
        "relative-mcp-command",
        "no-cwd",
        "int",
    ],
)
async def test_new_session_rejects_relative_or_missing_paths(
    params: dict[str, object], field: str
) -> None:
    async with MockClient(Talker()) as client:
        error = await expect_error(-32602, client.request("session/new", params))
        assert field in error.message
        assert (await client.list_sessions()).sessions == []


async def test_a_failing_on_new_session_hook_leaves_no_session() -> None:
    class Refuser(Talker):
        async def on_new_session(self, session: acpio.Session) -> None:
            raise acpio.RequestError.auth_required()

    async with MockClient(Refuser()) as client:
        await expect_error(-32000, client.new_session())
        assert (await client.list_sessions()).sessions == []


async def test_active_session_limit() -> None:
    async with MockClient(Talker(), limits=acpio.AgentLimits(max_sessions=2)) as client:
        first = await client.new_session()
        await client.new_session()
        error = await expect_error(-32603, client.new_session())
        assert "limit 2" in error.message
        await first.close()
        await client.new_session()  # closing freed a place
        # The refused session was never stored.
        assert len((await client.list_sessions()).sessions) == 3


# --------------------------------------------------------------------------- list


async def test_list_filters_by_cwd_and_pages(tmp_path: Path) -> None:
    other = tmp_path / "other"
    async with MockClient(Talker(), cwd=tmp_path) as client:
        mine = [await client.new_session() for _ in range(101)]
        theirs = await client.new_session(os.fspath(other))

        everything = await client.list_sessions()
        assert len(everything.sessions) == 100
        assert isinstance(everything.next_cursor, str)
        rest = await client.list_sessions(cursor=everything.next_cursor)
        assert rest.next_cursor is msgspec.UNSET
        listed = {s.session_id for s in everything.sessions} | {s.session_id for s in rest.sessions}
        assert listed == {s.id for s in mine} | {theirs.id}
        assert all(s.updated_at for s in everything.sessions)

        filtered = await client.list_sessions(cwd=os.fspath(other))
        assert [s.session_id for s in filtered.sessions] == [theirs.id]
        # Normalized when comparing: a trailing slash is the same directory.
        filtered = await client.list_sessions(cwd=os.fspath(other) + "/")
        assert [s.session_id for s in filtered.sessions] == [theirs.id]

        await expect_error(-32602, client.list_sessions(cwd="relative"))
        await expect_error(-32602, client.list_sessions(cursor="not-a-cursor"))


async def test_list_shows_the_most_recently_prompted_session_first() -> None:
    async with MockClient(Talker()) as client:
        first = await client.new_session()
        second = await client.new_session()
        await first.prompt("hello")
        listed = await client.list_sessions()
        ids = [s.session_id for s in listed.sessions]
        assert set(ids) == {first.id, second.id}
        by_id = {s.session_id: s for s in listed.sessions}
        assert by_id[first.id].updated_at >= by_id[second.id].updated_at  # type: ignore[operator]


# --------------------------------------------------------------------------- close


async def test_close_cancels_running_work_before_answering_then_goes_silent() -> None:
    agent = Talker()
    agent.started = anyio.Event()
    async with MockClient(agent) as client:
        session = await client.new_session()
        turn = await session.start_prompt("hang")
        await agent.started.wait()
        await session.close()
        # The idle arrived before the close response (the turn is over already).
        result = turn.result
        assert result is not None
        assert result.stop_reason == "cancelled"
        assert [c.status for c in result.view.tool_calls.values()] == ["cancelled"]
        assert agent.closed == [session.id]
        count = len(session.updates)

        # A closed session refuses prompts with resource-not-found.
        error = await expect_error(-32002, session.start_prompt("again"))
        assert error.data == {"sessionId": session.id}
        await session.cancel()  # ignored
        await client.list_sessions()
        assert len(session.updates) == count
        assert client.violations == []


def _wire(client: MockClient) -> list[dict[str, object]]:
    return [
        e.message
        for e in client.transcript
        if e.direction == "agent->client" and isinstance(e.message, dict)
    ]


def _position(wire: list[dict[str, object]], predicate: object) -> int:
    return next(i for i, m in enumerate(wire) if predicate(m))  # type: ignore[operator]


def _is_response(request_id: object) -> object:
    return lambda m: "method" not in m and m.get("id") == request_id


def _stop_reason(message: dict[str, object]) -> object:
    params = message.get("params")
    return params["update"].get("stopReason") if isinstance(params, dict) else None


async def test_a_second_close_is_answered_only_after_the_work_ended() -> None:
    agent = Talker()
    agent.started = anyio.Event()
    agent_limits = acpio.AgentLimits(session=acpio.SessionLimits(cancel_grace=0.3))

    class Stubborn(Talker):
        async def prompt(
            self, session: acpio.Session, prompt: list[acpio.ContentBlock]
        ) -> str | None:
            assert agent.started is not None
            agent.started.set()
            with anyio.CancelScope(shield=True):
                await anyio.sleep(0.2)  # reacts to cancellation only after a while
            return None

    async with MockClient(Stubborn(), limits=agent_limits) as client:
        session = await client.new_session()
        await session.start_prompt("work")
        await agent.started.wait()
        async with anyio.create_task_group() as group:
            group.start_soon(session.close)
            group.start_soon(session.close)
        wire = _wire(client)
        closes = [e.message for e in client.transcript if e.method == "session/close"]
        idle_at = _position(wire, lambda m: _stop_reason(m) == "cancelled")
        for close in closes:
            assert isinstance(close, dict)
            assert idle_at < _position(wire, _is_response(close["id"]))
        assert client.violations == []


async def test_a_resume_sent_during_a_close_waits_for_it() -> None:
    agent = Talker()
    agent.started = anyio.Event()
    # strict=False: the kit's checker does not yet know that a resume reopens a closed session.
    async with MockClient(agent, strict=False) as client:
        session = await client.new_session()
        await session.start_prompt("hang")
        await agent.started.wait()
        async with anyio.create_task_group() as group:
            group.start_soon(session.close)
            await client.wait_for(
                lambda: any(e.method == "session/close" for e in client.transcript),
                what="the close",
            )
            group.start_soon(session.resume)
        (close,) = [e.message for e in client.transcript if e.method == "session/close"]
        (resume,) = [e.message for e in client.transcript if e.method == "session/resume"]
        assert isinstance(close, dict) and isinstance(resume, dict)
        wire = _wire(client)
        idle_at = _position(wire, lambda m: _stop_reason(m) == "cancelled")
        close_at = _position(wire, _is_response(close["id"]))
        resume_at = _position(wire, _is_response(resume["id"]))
        # The close finished (idle, response), then the session came back.
        assert idle_at < close_at < resume_at
        assert "result" in wire[close_at] and "result" in wire[resume_at]
        result = await session.prompt("all")
        assert result.stop_reason == "end_turn"
        assert agent.closed == [session.id]


async def test_close_of_an_idle_unknown_or_closed_session_succeeds() -> None:
    async with MockClient(Talker()) as client:
        session = await client.new_session()
        await session.prompt("hi")
        count = len(session.updates)
        await session.close()
        assert len(session.updates) == count  # closing an idle session needs no idle update
        await session.close()  # already closed: still fine
        await client.request("session/close", {"sessionId": "sess_never_existed"})


async def test_closed_session_can_be_resumed_with_its_history() -> None:
    store = acpio.store.InMemorySessionStore()
    async with MockClient(Talker(), store=store) as client:
        session = await client.new_session()
        await session.prompt("all")
        await session.close()
    assert session.cwd is not None
    async with MockClient(Talker(), store=store) as client:
        resumed = await client.resume_session(session.id, session.cwd)
        assert [m.text for m in resumed.view.user_messages] == ["all"]
        result = await resumed.prompt("all")
        assert result.stop_reason == "end_turn"


# --------------------------------------------------------------------------- delete


async def test_delete_removes_the_session_and_its_history() -> None:
    agent = Talker()
    agent.started = anyio.Event()
    async with MockClient(agent) as client:
        assert client.initialize_response is not None
        capabilities = client.initialize_response.capabilities
        assert isinstance(capabilities, schema.AgentCapabilities)
        assert isinstance(capabilities.session, schema.SessionCapabilities)
        assert capabilities.session.delete == schema.SessionDeleteCapabilities()

        keep = await client.new_session()
        doomed = await client.new_session()
        turn = await doomed.start_prompt("hang")
        await agent.started.wait()
        await doomed.delete()
        assert turn.result is not None and turn.result.stop_reason == "cancelled"
        assert [s.session_id for s in (await client.list_sessions()).sessions] == [keep.id]
        assert doomed.cwd is not None
        error = await expect_error(-32002, client.resume_session(doomed.id, doomed.cwd))
        assert error.data == {"sessionId": doomed.id}
        # Deleting it again, like deleting a session that never existed, succeeds silently.
        await doomed.delete()
        assert await client.request("session/delete", {"sessionId": "sess_never"}) == {}
        assert client.violations == []


# --------------------------------------------------------------------------- unknown ids


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("session/prompt", {"prompt": [{"type": "text", "text": "hi"}]}),
        ("session/resume", {"cwd": "/tmp", "replayFrom": {"type": "start"}}),
        ("tool_call/cancel", {"toolCallId": "call_1"}),
        ("terminal/cancel", {"terminalId": "term_1"}),
    ],
)
async def test_unknown_session_is_resource_not_found_with_its_id(
    method: str, params: dict[str, object]
) -> None:
    async with MockClient(Talker()) as client:
        error = await expect_error(
            -32002, client.request(method, {"sessionId": "sess_unknown", **params})
        )
        assert error.data == {"sessionId": "sess_unknown"}
        # A cancel for an unknown session is a notification: ignored, never answered.
        await client.notify("session/cancel", {"sessionId": "sess_unknown"})
        await client.list_sessions()
        assert client.violations == []


async def test_an_empty_prompt_is_rejected_without_insertion() -> None:
    async with MockClient(Talker()) as client:
        session = await client.new_session()
        await expect_error(
            -32602, client.request("session/prompt", {"sessionId": session.id, "prompt": []})
        )
        await client.list_sessions()
        assert session.updates == []


# --------------------------------------------------------------------------- output


async def test_output_helpers_as_an_editor_shows_them() -> None:
    async with MockClient(Talker()) as client:
        session = await client.new_session()
        result = await session.prompt("all")
        view = result.view

    assert [(m.role, m.text) for m in view.messages] == [
        ("user", "all"),
        ("agent", "whole message"),
        ("agent", "two blocks"),
        ("agent", "streamed answer"),
        ("thought", "a whole thought"),
        ("thought", "streamed thought"),
    ]
    assert len({m.message_id for m in view.messages}) == 6
    (plan,) = view.plans.values()
    assert [(e.content, e.status) for e in plan.entries] == [
        ("look", "completed"),
        ("fix", "in_progress"),
    ]
    (notice,) = view.notices
    assert (notice.severity, notice.title, notice.description) == ("warning", "heads up", "details")
    assert view.usage is not None
    assert (view.usage.used, view.usage.size) == (1200, 200_000)
    assert view.usage.cost == schema.Cost(amount=0.5, currency="USD")
    # Each chunk of a stream is its own update.
    chunks = [u for u in result.updates if isinstance(u, schema.AgentMessageChunk)]
    assert [c.content for c in chunks] == [
        schema.TextContent(text="streamed"),
        schema.TextContent(text=" answer"),
    ]


async def test_a_notice_severity_outside_acp_fails_the_turn() -> None:
    async with MockClient(Talker()) as client:
        session = await client.new_session()
        result = await session.prompt("bad notice")
    assert result.stop_reason == "error"
    assert result.error is not None and "catastrophic" in result.error.message
    assert result.view.notices == []
