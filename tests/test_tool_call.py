"""ToolCallHandle: what goes on the wire, what the client rebuilds, and how a call ends.

Every test drives a real agent through the testing kit's MockClient (in
process, strict conformance checking), so each message is also checked
against the schema and the protocol's rules. Wire-level questions ("omitted
or null?") are answered from the raw JSON lines in the client's transcript,
never from decoded objects, where the difference could be lost.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import msgspec
import pytest

import acpio
from acpio import schema
from acpio.testing import MockClient, PermissionPolicy

pytestmark = pytest.mark.anyio

Body = Callable[[acpio.Session], Awaitable[str | None]]
JsonObject = dict[str, object]


class Scripted(acpio.Agent):
    """An agent whose prompt handler is the test's coroutine."""

    def __init__(self, body: Body) -> None:
        self.body = body

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str | None:
        return await self.body(session)


def wire_updates(client: MockClient, tool_call_id: str | None = None) -> list[JsonObject]:
    """The raw ``update`` objects the agent sent, in order (of one tool call, if given)."""
    found: list[JsonObject] = []
    for message in client.transcript.messages("agent->client", method="session/update"):
        assert isinstance(message, dict)
        params = message["params"]
        assert isinstance(params, dict)
        update = params["update"]
        assert isinstance(update, dict)
        if tool_call_id is None or update.get("toolCallId") == tool_call_id:
            found.append(update)
    return found


def kinds(updates: list[JsonObject]) -> list[object]:
    return [u["sessionUpdate"] for u in updates]


def text_item(text: str) -> schema.Content:
    return schema.Content(content=schema.TextContent(text=text))


# --------------------------------------------------------------------------- first update


async def test_first_update_has_title_pending_status_and_a_fresh_id() -> None:
    ids: list[str] = []

    async def body(session: acpio.Session) -> None:
        for _ in range(2):
            call = await session.tool_call("Read config", kind="read", name="read_file")
            ids.append(call.id)
            await call.complete()

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        await session.prompt("go")
        first = wire_updates(client, ids[0])[0]

    assert first == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": ids[0],
        "title": "Read config",
        "name": "read_file",
        "kind": "read",
        "status": "pending",
    }
    assert len(set(ids)) == 2
    assert all(isinstance(i, str) and i for i in ids)


async def test_first_update_carries_every_given_field(tmp_path: Path) -> None:
    target = str(tmp_path / "a.py")

    async def body(session: acpio.Session) -> None:
        call = session.tool_call(
            "Edit a.py",
            kind="edit",
            status="in_progress",
            tool_call_id="toolu_01",
            name="edit_file",
            raw_input={"path": target, "n": [1, None]},
            locations=[target, schema.ToolCallLocation(path=target, line=3)],
            content=[text_item("planning")],
            meta={"vendor": {"x": 1}},
        )
        # Nothing is sent until the call is awaited or entered.
        assert call.status == "in_progress"
        await call
        await call.complete()

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        await session.prompt("go")
        first = wire_updates(client, "toolu_01")[0]
        view = session.view.tool_calls["toolu_01"]

    assert first == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "toolu_01",
        "title": "Edit a.py",
        "name": "edit_file",
        "kind": "edit",
        "status": "in_progress",
        "content": [{"type": "content", "content": {"type": "text", "text": "planning"}}],
        "locations": [{"path": target}, {"path": target, "line": 3}],
        "rawInput": {"path": target, "n": [1, None]},
        "_meta": {"vendor": {"x": 1}},
    }
    assert view.raw_input == {"path": target, "n": [1, None]}
    assert [(loc.path, loc.line) for loc in view.locations] == [
        (target, msgspec.UNSET),
        (target, 3),
    ]


async def test_an_author_id_in_use_by_a_running_call_is_refused() -> None:
    errors: list[Exception] = []

    async def body(session: acpio.Session) -> None:
        first = await session.tool_call("one", tool_call_id="same")
        try:
            await session.tool_call("two", tool_call_id="same")
        except acpio.LocalProtocolError as exc:
            errors.append(exc)
        await first.complete()

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        await session.prompt("go")
        titles = [u.get("title") for u in wire_updates(client, "same")]

    assert len(errors) == 1
    assert "same" in str(errors[0])
    assert titles == ["one", None]


# --------------------------------------------------------------------------- patches


async def test_update_sends_exactly_the_given_fields_null_and_values() -> None:
    async def body(session: acpio.Session) -> None:
        call = await session.tool_call(
            "t", kind="read", tool_call_id="c", raw_input={"a": 1}, name="n", meta={"k": 1}
        )
        await call.update(title="renamed")
        await call.update(kind=None, name=None, raw_input=None, meta=None)
        await call.update(raw_output={"lines": 3}, meta={"k": 2})
        await call.update(title=None, raw_output=None, content=None, locations=None)
        await call.update(status=None)
        await call.complete()

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        await session.prompt("go")
        updates = wire_updates(client, "c")
        view = session.view.tool_calls["c"]

    base = {"sessionUpdate": "tool_call_update", "toolCallId": "c"}
    assert updates[1:6] == [
        {**base, "title": "renamed"},
        {**base, "name": None, "kind": None, "rawInput": None, "_meta": None},
        {**base, "rawOutput": {"lines": 3}, "_meta": {"k": 2}},
        {**base, "title": None, "content": None, "locations": None, "rawOutput": None},
        {**base, "status": None},
    ]
    # What an editor shows after the patches: cleared values are gone, defaults restored.
    assert view.title is None
    assert view.kind == "other"
    assert view.name is None
    assert view.raw_input is None
    assert view.raw_output is None
    assert view.meta == {"k": 2}
    assert view.status == "completed"


async def test_status_null_resets_to_pending_on_both_sides() -> None:
    statuses: list[str] = []

    async def body(session: acpio.Session) -> None:
        call = await session.tool_call("t", tool_call_id="c", status="in_progress")
        await call.update(status=None)
        statuses.append(call.status)
        await call.complete()

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        await session.prompt("go")

    assert statuses == ["pending"]


async def test_content_and_locations_are_replaced_as_whole_arrays(tmp_path: Path) -> None:
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    seen: list[tuple[str, list[str]]] = []
    step = anyio.Event()
    stepped = anyio.Event()

    async def body(session: acpio.Session) -> None:
        call = await session.tool_call("t", tool_call_id="c", locations=[a])
        await call.update(content=[text_item("one"), text_item("two")], locations=[a, b])
        stepped.set()
        await step.wait()
        await call.update(content=[text_item("three")], locations=[Path(b)])
        await call.update(content=[], locations=[])
        await call.complete()

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        await stepped.wait()
        view = await session.wait_for(lambda: session.view.tool_calls.get("c"))
        assert view is not None
        await session.wait_for(lambda: len(view.locations) == 2)
        seen.append((view.text, [x.path for x in view.locations]))
        step.set()
        await turn.wait()
        seen.append((view.text, [x.path for x in view.locations]))
        updates = wire_updates(client, "c")

    assert updates[2]["content"] == [
        {"type": "content", "content": {"type": "text", "text": "three"}}
    ]
    assert updates[2]["locations"] == [{"path": b}]
    assert updates[3]["content"] == [] and updates[3]["locations"] == []
    assert seen == [("onetwo", [a, b]), ("", [])]


async def test_chunks_append_and_a_later_content_update_replaces_them() -> None:
    views: list[list[str]] = []
    ready = anyio.Event()
    step = anyio.Event()

    async def body(session: acpio.Session) -> None:
        call = await session.tool_call("t", tool_call_id="c")
        await call.append_text("a")
        await call.append(text_item("b"), meta={"chunk": 1})
        ready.set()
        await step.wait()
        await call.update(content=[text_item("replaced")])
        await call.append_text("c")
        await call.complete()

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        await ready.wait()
        await session.wait_for_tool_call("c")
        await session.wait_for(lambda: session.view.tool_calls["c"].text == "ab")
        step.set()
        await turn.wait()
        views.append([i.content.text for i in session.view.tool_calls["c"].content])  # type: ignore[union-attr]
        updates = wire_updates(client, "c")

    assert kinds(updates) == [
        "tool_call_update",
        "tool_call_content_chunk",
        "tool_call_content_chunk",
        "tool_call_update",
        "tool_call_content_chunk",
        "tool_call_update",
    ]
    assert updates[1] == {
        "sessionUpdate": "tool_call_content_chunk",
        "toolCallId": "c",
        "content": {"type": "content", "content": {"type": "text", "text": "a"}},
    }
    # Chunk metadata is chunk-scoped: on the chunk, never on the call.
    assert updates[2]["_meta"] == {"chunk": 1}
    assert views == [["replaced", "c"]]
    assert session.view.tool_calls["c"].meta == {}


TRICKY_TEXTS = [
    "plain",
    "",
    'quote " backslash \\ slash /',
    "line\nbreak\ttab\r\x00\x1f",
    "\u00e9\u4e2d\U0001f600",
    "\u2028\u2029",
]


async def test_append_text_sends_the_same_bytes_as_append_of_a_text_item() -> None:
    # append_text pre-encodes its line; it must match the general encoder byte for byte.
    async def body(session: acpio.Session) -> None:
        call = await session.tool_call("t", tool_call_id='odd "id" \u00e9')
        for text in TRICKY_TEXTS:
            await call.append_text(text)
            await call.append(text_item(text))
        await call.complete()

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        await session.prompt("go")
        lines = [
            entry.data
            for entry in client.transcript
            if entry.direction == "agent->client" and b"tool_call_content_chunk" in entry.data
        ]
        texts = [item.content.text for item in session.view.tool_calls['odd "id" \u00e9'].content]  # type: ignore[union-attr]

    assert len(lines) == 2 * len(TRICKY_TEXTS)
    for fast, general in zip(lines[::2], lines[1::2], strict=True):
        assert fast == general
    assert texts == [t for text in TRICKY_TEXTS for t in (text, text)]


async def test_append_text_is_recorded_for_replay_by_any_history() -> None:
    recorded: list[schema.SessionUpdate] = []

    class RecordingHistory(acpio.store.InMemoryHistory):
        # A subclass: the session must not take the default history's shortcut.
        def record(self, update: schema.SessionUpdate) -> None:
            recorded.append(update)
            super().record(update)

    class Store(acpio.store.InMemorySessionStore):
        def __init__(self, history_class: type[acpio.store.InMemoryHistory]) -> None:
            super().__init__()
            self.history_class = history_class

        async def create(
            self, session_id: str, cwd: str, additional_directories: list[str]
        ) -> acpio.store.SessionRecord:
            record = await super().create(session_id, cwd, additional_directories)
            record.history = self.history_class()
            return record

    async def body(session: acpio.Session) -> None:
        call = await session.tool_call("t", tool_call_id="c")
        await call.append_text("one")
        await call.append(text_item("two"))
        await call.append_text("three")
        await call.complete()

    expected = [text_item("one"), text_item("two"), text_item("three")]
    for history_class in (acpio.store.InMemoryHistory, RecordingHistory):
        store = Store(history_class)
        async with MockClient(Scripted(body), store=store) as client:
            session = await client.new_session()
            await session.prompt("go")
            record = await store.get(session.id)
        assert record is not None and type(record.history) is history_class
        (call,) = [u for u in record.history.replay() if isinstance(u, schema.ToolCallUpdate)]
        assert call.content == expected
    chunks = [u for u in recorded if isinstance(u, schema.ToolCallContentChunk)]
    assert [c.content for c in chunks] == expected


async def test_custom_values_pass_and_unknown_ones_are_refused_before_sending(
    tmp_path: Path,
) -> None:
    errors: list[str] = []
    relative_diff = schema.Diff(changes=[schema.ModifyChange(path="src/a.py")])
    relative_move = schema.Diff(changes=[schema.MoveChange(path=str(tmp_path / "b"), old_path="a")])

    async def body(session: acpio.Session) -> None:
        makers: list[Callable[[], object]] = [
            lambda: session.tool_call("t", kind="bogus"),
            lambda: session.tool_call("t", status="done"),
            lambda: session.tool_call("t", locations=["relative/path.py"]),
            lambda: session.tool_call("t", content=[relative_diff]),
        ]
        for make in makers:
            try:
                make()
            except acpio.LocalProtocolError as exc:
                errors.append(str(exc))
        call = await session.tool_call("t", kind="_vendor_kind", tool_call_id="c")
        attempts: list[Callable[[], Awaitable[None]]] = [
            lambda: call.update(kind="search_web"),
            lambda: call.update(status="finished"),
            lambda: call.update(status=""),
            lambda: call.update(locations=["a.py"]),
            lambda: call.update(locations=[schema.ToolCallLocation(path=str(tmp_path), line=0)]),
            lambda: call.update(content=[relative_diff]),
            lambda: call.update(content=[relative_move]),
            lambda: call.append(relative_diff),
        ]
        for attempt in attempts:
            try:
                await attempt()
            except acpio.LocalProtocolError as exc:
                errors.append(str(exc))
        await call.update(status="_waiting_for_gpu")
        await call.update(status="paused", kind="switch_mode")
        await call.complete()

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        await session.prompt("go")
        updates = wire_updates(client)
        sent = [u for u in updates if str(u["sessionUpdate"]).startswith("tool_call")]

    assert len(errors) == 12
    assert "'bogus'" in errors[0] and "_" in errors[0]
    assert "'done'" in errors[1]
    assert "absolute" in errors[2] and "relative/path.py" in errors[2]
    assert "absolute" in errors[3]
    assert "'search_web'" in errors[4]
    assert "1-based" in errors[8]
    # Only the valid updates went out: the first, the two custom ones and completed.
    assert [u.get("status") for u in sent] == ["pending", "_waiting_for_gpu", "paused", "completed"]
    assert sent[0]["kind"] == "_vendor_kind"
    assert client.violations == []


# --------------------------------------------------------------------------- statuses


async def test_status_helpers(tmp_path: Path) -> None:
    async def body(session: acpio.Session) -> None:
        done = await session.tool_call("a", tool_call_id="done")
        await done.start()
        await done.complete([text_item("result")], raw_output={"ok": True})
        failed = await session.tool_call("b", tool_call_id="failed")
        await failed.fail("disk full", raw_output={"errno": 28})
        cancelled = await session.tool_call("c", tool_call_id="cancelled", cancellable=True)
        await cancelled.mark_cancelled()

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        await session.prompt("go")
        done, failed, cancelled = (wire_updates(client, i) for i in ("done", "failed", "cancelled"))
        views = session.view.tool_calls

    base = {"sessionUpdate": "tool_call_update"}
    assert done[1:] == [
        {**base, "toolCallId": "done", "status": "in_progress"},
        {
            **base,
            "toolCallId": "done",
            "status": "completed",
            "content": [{"type": "content", "content": {"type": "text", "text": "result"}}],
            "rawOutput": {"ok": True},
        },
    ]
    assert kinds(failed) == ["tool_call_update", "tool_call_content_chunk", "tool_call_update"]
    assert failed[2] == {
        **base,
        "toolCallId": "failed",
        "status": "failed",
        "rawOutput": {"errno": 28},
    }
    assert views["failed"].text == "disk full"
    # A cancellable call stops advertising cancellation with its final status.
    assert cancelled[0]["capabilities"] == {"cancel": {}}
    assert cancelled[1] == {
        **base,
        "toolCallId": "cancelled",
        "status": "cancelled",
        "capabilities": None,
    }
    assert views["cancelled"].capabilities is None


async def test_a_final_status_is_final() -> None:
    errors: list[str] = []

    async def body(session: acpio.Session) -> None:
        call = await session.tool_call("t", tool_call_id="c")
        await call.complete()
        assert call.final
        attempts: list[Callable[[], Awaitable[None]]] = [
            lambda: call.update(status="in_progress"),
            lambda: call.update(status=None),
            lambda: call.update(status="_custom"),
            call.start,
            lambda: call.fail("late"),
            call.cancel,
        ]
        for attempt in attempts:
            try:
                await attempt()
            except acpio.LocalProtocolError as exc:
                errors.append(str(exc))
        # Not a change: the same final status again, and fields other than the status.
        await call.complete()
        await call.update(raw_output={"after": "output"})
        await call.append_text("note")

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        await session.prompt("go")
        updates = wire_updates(client, "c")

    assert len(errors) == 6
    assert all("already ended with status 'completed'" in e for e in errors)
    # fail() checked before sending its message: no "late" chunk went out.
    assert [u.get("status") for u in updates] == ["pending", "completed", "completed", None, None]
    assert "late" not in str(updates)
    assert session.view.tool_calls["c"].status == "completed"


# --------------------------------------------------------------------------- context manager


async def test_context_manager_completes_on_normal_exit_and_keeps_a_final_status() -> None:
    async def body(session: acpio.Session) -> None:
        async with session.tool_call("a", tool_call_id="a") as call:
            await call.append_text("working")
        async with session.tool_call("b", tool_call_id="b") as call:
            await call.fail("nope")

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        result = await session.prompt("go")
        a, b = wire_updates(client, "a"), wire_updates(client, "b")

    assert result.stop_reason == "end_turn"
    assert [u.get("status") for u in a] == ["pending", None, "completed"]
    assert [u.get("status") for u in b] == ["pending", None, "failed"]


async def test_context_manager_fails_on_an_exception_and_reraises_it() -> None:
    caught: list[BaseException] = []

    def open_missing() -> None:
        raise ValueError("no such file")

    def crash() -> None:
        raise RuntimeError("crash")

    async def body(session: acpio.Session) -> None:
        try:
            async with session.tool_call("a", tool_call_id="a"):
                open_missing()
        except ValueError as exc:
            caught.append(exc)
        async with session.tool_call("b", tool_call_id="b"):
            crash()

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        result = await session.prompt("go")
        views = session.view.tool_calls

    assert [type(e) for e in caught] == [ValueError]
    assert views["a"].status == "failed"
    assert views["a"].text == "ValueError: no such file"
    # The error escaped the block, so it ended the turn, after the call was failed.
    assert views["b"].status == "failed"
    assert views["b"].text == "RuntimeError: crash"
    assert result.stop_reason == "error"


async def test_session_cancel_marks_the_call_cancelled_before_idle() -> None:
    started = anyio.Event()

    async def body(session: acpio.Session) -> None:
        async with session.tool_call("long", tool_call_id="c", kind="execute"):
            started.set()
            await anyio.sleep_forever()

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        await started.wait()
        await session.wait_for_tool_call("c")
        await session.cancel()
        result = await turn.wait()
        updates = wire_updates(client)

    assert result.stop_reason == "cancelled"
    assert kinds(updates)[-2:] == ["tool_call_update", "state_update"]
    assert updates[-2] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c",
        "status": "cancelled",
    }
    assert updates[-1]["stopReason"] == "cancelled"
    assert client.violations == []


async def test_an_error_raised_by_an_aborted_operation_after_cancel_is_reported_cancelled() -> None:
    started = anyio.Event()

    async def body(session: acpio.Session) -> None:
        async with session.tool_call("t", tool_call_id="c"):
            started.set()
            try:
                await anyio.sleep_forever()
            finally:
                # Cleanup code that fails because the operation was aborted.
                raise OSError("broken pipe")

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        await started.wait()
        await session.wait_for_tool_call("c")
        await session.cancel()
        result = await turn.wait()

    assert result.stop_reason == "cancelled"
    assert session.view.tool_calls["c"].status == "cancelled"
    assert session.view.tool_calls["c"].text == ""


# --------------------------------------------------------------------------- tool_call/cancel


async def test_tool_call_cancel_stops_only_that_call() -> None:
    started = anyio.Event()
    release = anyio.Event()
    after: list[str] = []

    async def slow(session: acpio.Session) -> None:
        async with session.tool_call("slow", tool_call_id="slow", cancellable=True):
            started.set()
            await anyio.sleep_forever()
        after.append(session.tool_call_handle("slow").status)  # type: ignore[union-attr]

    async def other(session: acpio.Session) -> None:
        async with session.tool_call("other", tool_call_id="other", cancellable=True):
            await release.wait()

    async def body(session: acpio.Session) -> str:
        async with anyio.create_task_group() as group:
            group.start_soon(slow, session)
            group.start_soon(other, session)
        await session.message("both done")
        return "end_turn"

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        await started.wait()
        call = await session.wait_for_tool_call("slow")
        assert call.capabilities is not None and call.capabilities.cancel is not None
        await session.cancel_tool_call("slow")
        await session.wait_for_tool_call("slow", status="cancelled")
        assert session.view.tool_calls["other"].status == "pending"
        release.set()
        result = await turn.wait()
        slow_updates = wire_updates(client, "slow")

    assert result.stop_reason == "end_turn"
    assert result.text == "both done"
    assert after == ["cancelled"]
    assert session.view.tool_calls["other"].status == "completed"
    assert slow_updates[-1] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "slow",
        "status": "cancelled",
        "capabilities": None,
    }


async def test_tool_call_cancel_of_a_call_run_without_a_block_reports_it_cancelled() -> None:
    created = anyio.Event()
    finish = anyio.Event()
    states: list[tuple[str, bool]] = []

    async def body(session: acpio.Session) -> None:
        call = await session.tool_call("manual", tool_call_id="m", cancellable=True)
        created.set()
        await finish.wait()
        states.append((call.status, call.cancel_requested))
        # The client's cancellation won the race; finishing afterwards changes nothing.
        await call.complete()

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        await created.wait()
        await session.wait_for_tool_call("m")
        await session.cancel_tool_call("m")
        await session.wait_for_tool_call("m", status="cancelled")
        finish.set()
        result = await turn.wait()
        updates = wire_updates(client, "m")

    assert result.stop_reason == "end_turn"
    assert states == [("cancelled", True)]
    assert [u.get("status") for u in updates] == ["pending", "cancelled"]


@pytest.mark.parametrize("case", ["unknown", "final", "not-cancellable"])
async def test_tool_call_cancel_is_refused_with_invalid_params(case: str) -> None:
    ready = anyio.Event()
    finish = anyio.Event()

    async def body(session: acpio.Session) -> None:
        finished = await session.tool_call("done", tool_call_id="final", cancellable=True)
        await finished.complete()
        async with session.tool_call("plain", tool_call_id="not-cancellable"):
            ready.set()
            await finish.wait()

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        await ready.wait()
        with pytest.raises(acpio.RequestError) as raised:
            await session.cancel_tool_call(case)
        finish.set()
        result = await turn.wait()

    assert raised.value.code == schema.INVALID_PARAMS
    assert result.stop_reason == "end_turn"
    assert session.view.tool_calls["not-cancellable"].status == "completed"


# --------------------------------------------------------------------------- diffs


async def test_a_diff_shown_through_a_call_is_what_the_client_rebuilds(tmp_path: Path) -> None:
    path = str(tmp_path / "config.json")
    diff = acpio.file_diff(path, '{\n  "debug": false\n}\n', '{\n  "debug": true\n}\n')
    added = acpio.file_diff(str(tmp_path / "new.txt"), None, "hello\n")

    async def body(session: acpio.Session) -> None:
        async with session.tool_call(
            "Edit config", kind="edit", tool_call_id="c", locations=[path], content=[diff]
        ) as call:
            await call.append(added)

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        await session.prompt("go")
        view = session.view.tool_calls["c"]

    assert [schema.to_builtins(d) for d in view.diffs] == [
        schema.to_builtins(diff),
        schema.to_builtins(added),
    ]
    assert diff.patch is not msgspec.UNSET
    assert client.violations == []


async def test_relative_paths_are_refused_with_a_clear_error() -> None:
    with pytest.raises(acpio.RelativePathError):
        acpio.file_diff("src/a.py", "a\n", "b\n")
    errors: list[str] = []

    async def body(session: acpio.Session) -> None:
        try:
            await session.tool_call("t", locations=[os.path.join("src", "a.py")])
        except acpio.LocalProtocolError as exc:
            errors.append(str(exc))

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        await session.prompt("go")
        assert not session.view.tool_calls

    assert errors == [
        "location path must be an absolute path, got 'src/a.py'; ACP never resolves paths "
        "against the agent's own working directory"
    ]


# --------------------------------------------------------------------------- permission


async def test_permission_through_a_call_uses_the_call_as_subject() -> None:
    outcomes: list[acpio.Outcome] = []

    async def body(session: acpio.Session) -> None:
        async with session.tool_call("Delete /tmp/x", kind="delete", tool_call_id="c") as call:
            outcomes.append(await call.request_permission())

    async with MockClient(Scripted(body), policy=PermissionPolicy.allow()) as client:
        session = await client.new_session()
        await session.prompt("go")
        request = client.permission_requests[0]

    assert request.params["subject"] == {"type": "tool_call", "toolCall": {"toolCallId": "c"}}
    assert request.title == "Delete /tmp/x"
    assert outcomes[0].allowed
