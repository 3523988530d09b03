"""Streamed text kept as runs: a tool call's text items, the stored rows, the writer's queue.

A tool call's plain text items are kept like a message's chunks (one joined
:class:`TextRun` per run, a text item per chunk on replay) within
``HistoryLimits.tool_call_items``; the durable stores write them as
``[id, kind, text, sizes]`` read from the history (the writer's queue holds a
mark, not the text), still read rows written one str per chunk, and bound
their queue when the writer falls behind.
"""

from __future__ import annotations

import itertools
import sqlite3
import threading
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
from acpio._store.stored_history import StoredHistory, TextMark, pack, read_chunks

LIMIT = 7
Op = tuple[str, str, str]  # (how, target, text)

ops = st.lists(
    st.tuples(
        st.sampled_from(["text", "text", "text", "chunk", "item", "replace", "reply", "term"]),
        st.sampled_from(["c1", "c2"]),
        st.text(st.characters(blacklist_categories=("Cs",)), max_size=4),
    ),
    max_size=300,
)


def text_item(text: str, meta: dict[str, object] | None = None) -> schema.ToolCallContent:
    block = (
        schema.TextContent(text=text) if meta is None else schema.TextContent(text=text, meta=meta)
    )
    return schema.Content(content=block)


def start(history: acpio.store.History) -> None:
    for call in ("c1", "c2"):
        history.record(schema.ToolCallUpdate(tool_call_id=call, title=call))


def apply(history: acpio.store.History, op: Op) -> None:
    how, call, text = op
    if how == "text":
        history.record_text_chunk(call, text)
    elif how == "chunk":
        history.record(schema.ToolCallContentChunk(tool_call_id=call, content=text_item(text)))
    elif how == "item":
        item = text_item(text, {"k": text})
        history.record(schema.ToolCallContentChunk(tool_call_id=call, content=item))
    elif how == "replace":
        history.record(schema.ToolCallUpdate(tool_call_id=call, content=[text_item(text)]))
    elif how == "term":  # a new terminal's record, between chunks of a stream
        history.record_terminal_output(f"{call}-{len(text)}", text.encode())
    else:
        history.record_message_text("m", text, False)


def model(operations: list[Op]) -> dict[str, list[schema.ToolCallContent] | None]:
    """Each call's content on replay: the newest LIMIT items as sent (None: none sent)."""
    content: dict[str, list[schema.ToolCallContent] | None] = {"c1": None, "c2": None}
    for how, call, text in operations:
        if how in ("reply", "term"):
            continue
        items = content[call] or []
        if how == "replace":
            items = [text_item(text)]
        else:
            items.append(text_item(text, {"k": text} if how == "item" else None))
        content[call] = items[-LIMIT:]
    return content


def calls(history: acpio.store.History) -> dict[str, list[schema.ToolCallContent] | None]:
    return {
        u.tool_call_id: (None if u.content is msgspec.UNSET else u.content)  # type: ignore[misc]
        for u in history.replay()
        if isinstance(u, schema.ToolCallUpdate)
    }


def lines(history: acpio.store.History) -> list[bytes]:
    return [schema.encode(u) for u in history.replay()]


LIMITS = acpio.HistoryLimits(tool_call_items=LIMIT)


@given(ops)
def test_tool_call_text_replays_item_by_item_within_the_bound(operations: list[Op]) -> None:
    history = acpio.store.InMemoryHistory(LIMITS)
    start(history)
    for op in operations:
        apply(history, op)
    assert calls(history) == model(operations)


def test_a_long_tool_call_stream_is_held_as_a_few_strings_and_bounded() -> None:
    history = acpio.store.InMemoryHistory()  # tool_call_items = 1000
    history.record(schema.ToolCallUpdate(tool_call_id="c", title="c"))
    for i in range(100_000):
        history.record_text_chunk("c", f"chunk {i}")
    (record,) = history._records.values()  # pyright: ignore[reportPrivateUsage]
    (run,) = record.content  # type: ignore[attr-defined]
    assert isinstance(run, TextRun)
    # Trimmed in groups: at most SEAL_AT chunks beyond the bound wait, and each part
    # joins SEAL_AT chunks.
    assert 1000 <= len(run) <= 1000 + 256
    assert len(run.sizes) <= 1000 + 2 * 256 and len(run.parts) <= (1000 + 2 * 256) // 256
    assert len(run.tail) < 256
    assert run.dropped >= 100_000 - 1000 - 2 * 256
    assert calls(history)["c"] == [text_item(f"chunk {i}") for i in range(99_000, 100_000)]
    assert len(run) == 1000  # replay trimmed it to the bound


@pytest.mark.parametrize("bounded", [False, True])
def test_the_writer_reads_a_run_while_the_loop_appends(bounded: bool) -> None:
    """read_chunks from another thread, in pieces, gives every chunk once and in order,
    while the run joins its tail and (bounded) frees its oldest parts."""
    run = TextRun()
    total = 200_000
    done = threading.Event()
    got: list[tuple[str, list[int]]] = []

    def reader() -> None:
        pos = 0
        while True:
            finished = done.is_set()
            pos, text, sizes = read_chunks(run, pos, None)
            got.append((text, list(sizes)))
            if finished:
                return

    thread = threading.Thread(target=reader)
    thread.start()
    for i in range(total):
        run.append(f"<{i}>")
        if bounded and len(run) > 300:
            run.drop(len(run) - 300)
    done.set()
    thread.join()
    text = "".join(t for t, _ in got)
    sizes = [s for _, part in got for s in part]
    assert sum(sizes) == len(text)
    chunks: list[str] = []
    offset = 0
    for size in sizes:
        chunks.append(text[offset : offset + size])
        offset += size
    numbers = [int(c[1:-1]) for c in chunks]
    assert len(got) > 2  # read in pieces while it grew
    if bounded:
        # Chunks freed before the reader got to them are skipped, never repeated.
        assert numbers == sorted(set(numbers))
        assert numbers[-300:] == list(range(total - 300, total))
    else:
        assert numbers == list(range(total))


# ------------------------------------------------------------------ the durable stores

_examples = itertools.count()


async def _round_trip(
    open_store: Callable[[], Any],
    rows: Callable[[], list[bytes]],
    session_id: str,
    operations: list[Op],
    cuts: list[int],
) -> None:
    store: Any = open_store()
    record = await store.create(session_id, "/w", [])
    history = record.history
    assert isinstance(history, StoredHistory)
    start(history)
    for index, op in enumerate(operations):
        apply(history, op)
        assert not any(isinstance(item, str) for item in list(history.pending))  # no text queued
        if index in cuts:
            await store.flush()  # a row ends here
        if index * 2 in cuts:
            history.snapshot()  # the folded history replaces the rows
    await store.flush()
    assert calls(history) == model(operations)
    expected = lines(history)
    for blob in rows():
        for item in msgspec.msgpack.decode(blob):
            assert not isinstance(item, str)  # text only as [id, kind, text, sizes]
            assert not (
                isinstance(item, list) and len(item) in (1, 2) and isinstance(item[-1], str)
            )
    reader: Any = open_store()
    loaded = await reader.get(session_id)
    assert loaded is not None
    assert lines(loaded.history) == expected
    reader.close()
    store.close()


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operations=ops, cuts=st.lists(st.integers(0, 300), max_size=4))
def test_the_sqlite_store_keeps_tool_call_text_in_rows_and_snapshots(
    tmp_path_factory: pytest.TempPathFactory, operations: list[Op], cuts: list[int]
) -> None:
    path = tmp_path_factory.mktemp("store") / "s.sqlite3"

    def rows() -> list[bytes]:
        with sqlite3.connect(path) as conn:
            return [blob for (blob,) in conn.execute("SELECT data FROM events")]

    anyio.run(
        _round_trip,
        lambda: acpio.store.SqliteSessionStore(path, limits=LIMITS),
        rows,
        "s",
        operations,
        cuts,
    )


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operations=ops, cuts=st.lists(st.integers(0, 300), max_size=4))
def test_the_postgres_store_keeps_tool_call_text_in_rows_and_snapshots(
    postgres_url: str, operations: list[Op], cuts: list[int]
) -> None:
    import psycopg  # noqa: PLC0415

    from acpio.store import PostgresSessionStore  # noqa: PLC0415

    session_id = f"t{next(_examples)}"

    def rows() -> list[bytes]:
        with psycopg.connect(postgres_url) as conn:
            found = conn.execute(
                "SELECT data FROM acpio_events WHERE session_id = %s", (session_id,)
            ).fetchall()
            conn.execute(
                "UPDATE acpio_sessions SET lease_until = now() - interval '1 second' WHERE id = %s",
                (session_id,),
            )
        return [bytes(blob) for (blob,) in found]

    anyio.run(
        _round_trip,
        lambda: PostgresSessionStore(postgres_url, limits=LIMITS),
        rows,
        session_id,
        operations,
        cuts,
    )


@pytest.mark.anyio
async def test_rows_written_one_str_per_chunk_still_load(tmp_path: Path) -> None:
    """A file whose rows an earlier acpio wrote ([id] then a str per text item, [messageId,
    kind] then a str per chunk), next to rows written now, replays as recorded."""
    path = tmp_path / "s.sqlite3"
    store = acpio.store.SqliteSessionStore(path, limits=LIMITS)
    record = await store.create("s", "/w", [])
    history = record.history
    assert isinstance(history, StoredHistory)
    history.record(schema.ToolCallUpdate(tool_call_id="c", title="c"))
    history.record_text_chunk("c", "new 0")
    await store.flush()
    old_row = pack(
        [
            ["c"],
            *[f"old {i}" for i in range(10)],
            ["m", "agent_message_chunk"],
            "hello ",
            "world",
            ["t", "agent_thought_chunk"],
            "hmm",
        ]
    )
    store.close()  # the session's snapshot, written the way it is now
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO events VALUES ('s', 1000, ?)", (old_row,))
    reader = acpio.store.SqliteSessionStore(path, limits=LIMITS)
    loaded = await reader.get("s")
    assert loaded is not None
    replay = list(loaded.history.replay())
    reader.close()
    (call,) = [u for u in replay if isinstance(u, schema.ToolCallUpdate)]
    assert call.content == [text_item(f"old {i}") for i in range(3, 10)]  # the newest LIMIT
    (message,) = [u for u in replay if isinstance(u, schema.AgentMessage)]
    assert message.content == [schema.TextContent(text="hello "), schema.TextContent(text="world")]
    (thought,) = [u for u in replay if isinstance(u, schema.AgentThought)]
    assert thought.content == [schema.TextContent(text="hmm")]


@pytest.mark.anyio
async def test_a_stream_queues_one_mark_and_the_rows_hold_its_text(tmp_path: Path) -> None:
    store = acpio.store.SqliteSessionStore(tmp_path / "s.sqlite3", flush_interval=3600)
    record = await store.create("s", "/w", [])
    history = record.history
    assert isinstance(history, StoredHistory)
    await store.flush()
    history.record(schema.ToolCallUpdate(tool_call_id="c", title="c"))
    queued_before = history.targets
    for i in range(100):  # 100 chunks of the reply, 100 of the call, and again
        for j in range(100):
            history.record_message_text("m", f"<{i}.{j}>", False)
            assert not any(isinstance(item, str) for item in list(history.pending))
        for j in range(100):
            history.record_text_chunk("c", f"[{i}.{j}]")
    for i in range(10_000):
        history.record_message_text("m", f"<{i}>", False)
    # One mark per stream (the writer may have taken some already), never the text.
    assert history.targets - queued_before == 201
    assert all(type(item) is TextMark for item in list(history.pending))
    await store.flush()
    expected = lines(history)
    store.close()
    reader = acpio.store.SqliteSessionStore(tmp_path / "s.sqlite3")
    loaded = await reader.get("s")
    assert loaded is not None and lines(loaded.history) == expected
    reader.close()


@pytest.mark.anyio
async def test_a_writer_that_falls_behind_bounds_the_queue_and_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(StoredHistory, "queue_items", 50)
    path = tmp_path / "s.sqlite3"
    store = acpio.store.SqliteSessionStore(path, busy_timeout=0.01, flush_interval=0.01)
    record = await store.create("s", "/w", [])
    history = record.history
    assert isinstance(history, StoredHistory)
    await store.flush()
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # the writer cannot write: it falls behind
    fell_behind = False
    try:
        for i in range(2000):
            history.record(schema.ToolCallUpdate(tool_call_id=f"c{i % 30}", title=f"t{i}"))
            history.record_text_chunk(f"c{i % 30}", f"text {i}")
            history.record_terminal_output("t", b"%d " % i)
            history.record_message_text(f"m{i % 3}", f"<{i}>", False)
            # Bounded: the cap, plus what a failed flush put back in front.
            assert len(history.pending) <= 2 * 50 + 2
            fell_behind = fell_behind or history.behind
        # Whether it is behind at the last record depends on when the writer thread
        # last held a batch (a history catches up while the queue is half empty).
        assert fell_behind
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    await store.flush()  # catches up: one snapshot covers what was left out
    assert not history.behind
    expected = lines(history)
    reader = acpio.store.SqliteSessionStore(path)
    loaded = await reader.get("s")
    assert loaded is not None and lines(loaded.history) == expected
    reader.close()
    store.close()
