"""Streamed replies: ``MessageStream.write`` of a str is one pre-encoded chunk line.

The fast path must be indistinguishable from ``Session.send`` of the same chunk:
the same updates on v2 and v1, the same order with terminal bytes, nothing after
the turn's idle, and the same history (replayed chunk by chunk, also from the
SQLite store).
"""

from __future__ import annotations

import itertools
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import acpio
from acpio import schema
from acpio._store.history import TextRun
from acpio._store.stored_history import StoredHistory
from acpio.testing import MockClient

sys.path.insert(0, str(Path(__file__).parent))
from v1_client import v1_client

pytestmark = pytest.mark.anyio

PIECES = ["plain", "", ' "quoted"\n', "\u00e9\u4e2d\U0001f600", "\\", "\x00\x1f"]
ANNOTATED = schema.TextContent(text="annotated", annotations=None)


class Replier(acpio.Agent):
    """``reply``: a streamed thought and reply; ``terminal``: terminal bytes, then text;
    ``late``: keeps writing after the turn was cancelled."""

    info = acpio.Implementation(name="replier", version="1.0.0")

    def __init__(self) -> None:
        self.sessions: list[acpio.Session] = []
        self.started = anyio.Event()
        self.late_done = anyio.Event()

    async def on_new_session(self, session: acpio.Session) -> None:
        self.sessions.append(session)

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str | None:
        text = acpio.text_of(prompt)
        if text == "reply":
            thinking = session.thought_stream("th1")
            for piece in PIECES:
                await thinking.write(piece)
            stream = session.message_stream("m1")
            await stream.write(PIECES[0])
            await stream.write(ANNOTATED)
            for piece in PIECES[1:]:
                await stream.write(piece)
        elif text == "terminal":
            terminal = await session.terminal(terminal_id="t", command="c")
            await terminal.write(b"buffered bytes")
            await session.message_stream("m2").write("after the bytes")
        elif text == "late":
            stream = session.message_stream("m3")
            self.started.set()
            with anyio.CancelScope(shield=True):
                await anyio.sleep(0.5)  # past the cancel grace: the idle went out
                await stream.write("too late")
            self.late_done.set()
        return None


def expected_blocks() -> dict[str, list[schema.TextContent]]:
    return {
        "th1": [schema.TextContent(text=p) for p in PIECES],
        "m1": [
            schema.TextContent(text=PIECES[0]),
            ANNOTATED,
            *(schema.TextContent(text=p) for p in PIECES[1:]),
        ],
    }


def chunks_of(updates: list[schema.SessionUpdate]) -> dict[str, list[object]]:
    out: dict[str, list[object]] = {}
    for update in updates:
        if isinstance(update, schema.AgentMessageChunk | schema.AgentThoughtChunk):
            out.setdefault(update.message_id, []).append(update.content)
    return out


async def test_v2_chunks_are_the_updates_send_makes_and_replay_chunk_by_chunk() -> None:
    agent = Replier()
    async with MockClient(agent) as client:
        session = await client.new_session()
        result = await session.prompt("reply")
        assert chunks_of(result.updates) == expected_blocks()
        kinds = [type(u).__name__ for u in result.updates if "Chunk" in type(u).__name__]
        assert kinds == ["AgentThoughtChunk"] * len(PIECES) + ["AgentMessageChunk"] * (
            len(PIECES) + 1
        )
        live = session.view
        thought, message = (live.message("th1"), live.message("m1"))
        assert thought.role == "thought" and message.role == "agent"
        # The history keeps every chunk's block: a resume shows the same.
        (agent_session,) = agent.sessions
        replayed = {
            u.message_id: u.content
            for u in agent_session.history.replay()
            if isinstance(u, schema.AgentMessage | schema.AgentThought)
        }
        assert replayed == expected_blocks()
        await session.resume()
        assert session.view.message("m1").content == message.content
        assert session.view.message("th1").content == thought.content


async def test_v1_chunks_are_one_agent_message_chunk_each_without_message_id() -> None:
    agent = Replier()
    async with v1_client(agent) as client:  # every message checked against the v1 schema
        session_id = await client.new_session(str(Path.cwd()))
        answer = await client.prompt(session_id, "reply")
        assert answer["stopReason"] == "end_turn"
    updates: list[dict[str, Any]] = [
        m["params"]["update"] for m in client.messages if m.get("method") == "session/update"
    ]
    chunks = [u for u in updates if u["sessionUpdate"].endswith("_chunk")]
    expected = [
        {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": p}}
        for p in PIECES
    ]
    expected.append(
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": PIECES[0]}}
    )
    expected.append(
        {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "annotated", "annotations": None},
        }
    )
    expected += [
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": p}}
        for p in PIECES[1:]
    ]
    assert chunks == expected
    (agent_session,) = agent.sessions
    replayed = {
        u.message_id: u.content
        for u in agent_session.history.replay()
        if isinstance(u, schema.AgentMessage | schema.AgentThought)
    }
    assert replayed == expected_blocks()


async def test_a_chunk_goes_out_after_the_terminal_bytes_written_before_it() -> None:
    async with MockClient(Replier()) as client:
        session = await client.new_session()
        result = await session.prompt("terminal")
    kinds = [type(u).__name__ for u in result.updates]
    assert kinds.index("TerminalOutputChunk") < kinds.index("AgentMessageChunk")
    assert result.view.terminals["t"].output == b"buffered bytes"
    assert result.view.message("m2").text == "after the bytes"


async def test_nothing_of_a_cancelled_turn_follows_its_idle() -> None:
    agent = Replier()
    async with MockClient(agent) as client:
        session = await client.new_session()
        (agent_session,) = agent.sessions
        agent_session.limits = acpio.SessionLimits(cancel_grace=0.05)
        async with anyio.create_task_group() as group:
            group.start_soon(session.prompt, "late")
            await agent.started.wait()
            await session.cancel()
        await agent.late_done.wait()
        await anyio.sleep(0.05)
        assert not any(
            isinstance(u, schema.AgentMessageChunk) and u.message_id == "m3"
            for u in session.updates
        )
        assert not any(
            isinstance(u, schema.AgentMessage) and u.message_id == "m3"
            for u in agent_session.history.replay()
        )


class OnlyRecord(acpio.store.InMemoryHistory):
    """A history written before ``record_message_text``: it overrides ``record`` only."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def record(self, update: schema.SessionUpdate) -> None:
        self.seen.append(type(update).__name__)
        super().record(update)


def test_a_history_overriding_record_only_gets_reply_chunks_as_updates() -> None:
    history = OnlyRecord()
    history.record_message_text("m", "a", False)
    history.record_message_text("t", "b", True)
    assert history.seen == ["AgentMessageChunk", "AgentThoughtChunk"]
    assert [type(u).__name__ for u in history.replay()] == ["AgentMessage", "AgentThought"]


# ------------------------------------------------------------------ the history

Op = tuple[str, str, str]  # (how, message id, text)

ops = st.lists(
    st.tuples(
        st.sampled_from(["fast", "fast", "chunk", "annotated", "whole", "thought"]),
        st.sampled_from(["m1", "m2"]),
        st.text(st.characters(blacklist_categories=("Cs",)), max_size=5),
    ),
    max_size=600,
)


def apply(history: acpio.store.History, op: Op) -> None:
    how, message_id, text = op
    if how == "fast":
        history.record_message_text(message_id, text, False)
    elif how == "thought":
        history.record_message_text(message_id, text, True)
    elif how == "chunk":
        history.record(
            schema.AgentMessageChunk(message_id=message_id, content=schema.TextContent(text=text))
        )
    elif how == "annotated":
        block = schema.TextContent(text=text, meta={"k": text})
        history.record(schema.AgentMessageChunk(message_id=message_id, content=block))
    else:
        history.record(
            schema.AgentMessage(message_id=message_id, content=[schema.TextContent(text=text)])
        )


def model(operations: list[Op]) -> list[tuple[str, str, list[object]]]:
    """What replay must give: each message's blocks as sent, in first-seen order."""
    messages: dict[tuple[str, str], list[object]] = {}
    for how, message_id, text in operations:
        kind = "AgentThought" if how == "thought" else "AgentMessage"
        blocks = messages.setdefault((kind, message_id), [])
        if how == "whole":
            blocks[:] = [schema.TextContent(text=text)]
        elif how == "annotated":
            blocks.append(schema.TextContent(text=text, meta={"k": text}))
        else:
            blocks.append(schema.TextContent(text=text))
    return [(kind, message_id, blocks) for (kind, message_id), blocks in messages.items()]


def replayed(history: acpio.store.History) -> list[tuple[str, str, list[object]]]:
    return [
        (type(u).__name__, u.message_id, list(u.content))  # type: ignore[union-attr,arg-type]
        for u in history.replay()
    ]


@given(ops)
def test_streamed_text_replays_chunk_by_chunk(operations: list[Op]) -> None:
    history = acpio.store.InMemoryHistory()
    for op in operations:
        apply(history, op)
    assert replayed(history) == model(operations)


def test_a_long_reply_is_kept_as_a_few_strings() -> None:
    history = acpio.store.InMemoryHistory()
    for i in range(10_000):
        history.record_message_text("m", f"chunk {i}", False)
    (record,) = history._records.values()  # pyright: ignore[reportPrivateUsage]
    (run,) = record.content  # type: ignore[attr-defined]
    assert isinstance(run, TextRun)
    assert len(run.parts) + len(run.tail) < 10_000 // 100  # not a str per chunk
    assert len(run.sizes) == 10_000 and run.sizes.itemsize == 4
    ((_, _, blocks),) = replayed(history)
    assert blocks == [schema.TextContent(text=f"chunk {i}") for i in range(10_000)]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operations=ops, cuts=st.lists(st.integers(0, 600), max_size=4))
def test_the_sqlite_store_keeps_streamed_text_in_rows_and_snapshots(
    tmp_path_factory: pytest.TempPathFactory, operations: list[Op], cuts: list[int]
) -> None:
    path = tmp_path_factory.mktemp("store") / "s.sqlite3"

    def rows() -> list[bytes]:
        with sqlite3.connect(path) as conn:
            return [blob for (blob,) in conn.execute("SELECT data FROM events")]

    anyio.run(
        _store_round_trip, lambda: acpio.store.SqliteSessionStore(path), rows, "s", operations, cuts
    )


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operations=ops, cuts=st.lists(st.integers(0, 600), max_size=4))
def test_the_postgres_store_keeps_streamed_text_in_rows_and_snapshots(
    postgres_url: str, operations: list[Op], cuts: list[int]
) -> None:
    import psycopg  # noqa: PLC0415

    from acpio.store import PostgresSessionStore  # noqa: PLC0415

    session_id = f"s{next(_examples)}"  # one database for every example

    def rows() -> list[bytes]:
        with psycopg.connect(postgres_url) as conn:
            found = conn.execute(
                "SELECT data FROM acpio_events WHERE session_id = %s", (session_id,)
            ).fetchall()
            # The writer's lease runs out (as when it pauses): the reader takes the
            # session over and folds these rows, not a snapshot made at release.
            conn.execute(
                "UPDATE acpio_sessions SET lease_until = now() - interval '1 second' WHERE id = %s",
                (session_id,),
            )
        return [bytes(blob) for (blob,) in found]

    anyio.run(
        _store_round_trip,
        lambda: PostgresSessionStore(postgres_url),
        rows,
        session_id,
        operations,
        cuts,
    )


_examples = itertools.count()


async def _store_round_trip(
    open_store: Callable[[], acpio.store.SessionStore],
    rows: Callable[[], list[bytes]],
    session_id: str,
    operations: list[Op],
    cuts: list[int],
) -> None:
    store: Any = open_store()
    record = await store.create(session_id, "/w", [])
    history = record.history
    assert isinstance(history, StoredHistory)
    for index, op in enumerate(operations):
        apply(history, op)
        if index in cuts:
            await store.flush()  # a row ends here
        if index * 2 in cuts:
            history.snapshot()  # the folded history replaces the rows
    await store.flush()
    expected = replayed(history)
    assert expected == model(operations)
    # Rows hold message text as [id, kind, text, sizes], never a bare str after [id, kind].
    for blob in rows():
        for item in msgspec.msgpack.decode(blob):
            assert not isinstance(item, str)
            assert not (isinstance(item, list) and len(item) == 2 and isinstance(item[1], str))
    reader: Any = open_store()
    loaded = await reader.get(session_id)
    assert loaded is not None
    assert replayed(loaded.history) == expected
    reader.close()
    store.close()  # PostgreSQL: the session was taken from it, it writes nothing more
