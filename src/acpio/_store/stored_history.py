"""The history half of the durable session stores: what the event loop queues, and the rows.

How this works: :class:`StoredHistory` is an :class:`~acpio.store.InMemoryHistory`
(the same folding, the same bounds) that also queues what it records for the
store's writer thread (see :mod:`acpio._store.sqlite_store` and
:mod:`acpio._store.postgres_store`): the update object, a text chunk (after
``[id]`` when the tool call changed, ``[id, kind]`` when the streamed message
changed), or for terminal output a mark naming the terminal. Text that starts
streaming (a target queued: after any other update, text names its target
again) tells the writer (:class:`StreamPace`), which then flushes every
:data:`STREAM_POLL` seconds while batches stay large, so the queue holds a
fraction of a second of a fast stream, not a flush interval's, at no cost per
chunk. :meth:`StoredHistory.row` turns a batch into the bytes of one row (the
marks become the terminal's newest bytes, a message's text chunks one
``[messageId, kind, text, sizes]``); :meth:`StoredHistory.fold_blob` folds a
stored row or snapshot back into a history when a session is loaded. The
writer's side of the queues (:func:`drain`, :func:`write_batches`,
:func:`put_back`, :func:`mark_written`, :class:`StreamPace`) is shared by both
stores: only the SQL differs.
"""

from __future__ import annotations

import logging
import threading
import time
import zlib
from array import array
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import groupby
from typing import Final, cast

import msgspec

from .. import schema
from .._limits import HistoryLimits
from ..schema._base import enc_hook
from .history import (
    NOT_RECORDED,
    SEAL_AT,
    InMemoryHistory,
    MessageRecord,
    SessionRecord,
    TerminalRecord,
    TextRun,
    ToolCallRecord,
    encode_sizes,
    replay_record,
    run_sizes,
)

__all__: list[str] = []

json_encode = msgspec.json.Encoder(enc_hook=enc_hook).encode
# Rows and snapshots: a msgpack array of what was recorded, in order: an update (a
# map, as on the wire, or an ext of code JSON_ITEM holding it as JSON when msgpack
# cannot hold one of its values), [id] (the tool call the text chunks after it
# belong to), [messageId, kind] (kind "agent_message_chunk" or "agent_thought_chunk":
# the message the text chunks after it belong to), a str (a text chunk of that tool
# call or message), [messageId, kind, text, sizes] (text chunks of that message:
# ``text`` split by ``sizes``, little-endian uint32 lengths in code points), or
# [terminalId, bytes]: that terminal's output (what replay shows of it) as it was
# when the row was written.
_pack = msgspec.msgpack.Encoder(enc_hook=enc_hook).encode  # the writer thread's own
_unpack = msgspec.msgpack.Decoder(list[object]).decode
_json_decode = msgspec.json.Decoder().decode
dirs_decode = msgspec.json.Decoder(list[str]).decode
config_decode = msgspec.json.Decoder(dict[str, str | bool]).decode
_NOT_WRITTEN: Final = frozenset(NOT_RECORDED)
JSON_ITEM: Final = 1
"""The msgpack ext code of an item stored as JSON (see :func:`pack`)."""
_UNPACKABLE: Final = (msgspec.EncodeError, OverflowError, TypeError, ValueError)
COMPACT_BYTES: Final = 4 * 1024 * 1024
"""A session's rows are folded into a snapshot once they exceed this and twice the
snapshot (amortized: each byte recorded is snapshotted a bounded number of times)."""
STREAM_POLL: Final = 0.02
"""Seconds between two flushes while text streams fast (a batch of STREAM_ITEMS or more)."""
STREAM_ITEMS: Final = 256
STREAM_WATCH: Final = 1.0
_MESSAGE_KIND: Final = "agent_message_chunk"
_THOUGHT_KIND: Final = "agent_thought_chunk"
# The message a chunk kind belongs to, and the chunk class of each message class.
_RUN_MESSAGES: Final[
    dict[object, type[schema.AgentMessage | schema.AgentThought | schema.UserMessage]]
] = {
    _MESSAGE_KIND: schema.AgentMessage,
    _THOUGHT_KIND: schema.AgentThought,
    "user_message_chunk": schema.UserMessage,
}
_CHUNKS: Final[
    dict[type, type[schema.AgentMessageChunk | schema.AgentThoughtChunk | schema.UserMessageChunk]]
] = {
    schema.AgentMessage: schema.AgentMessageChunk,
    schema.AgentThought: schema.AgentThoughtChunk,
    schema.UserMessage: schema.UserMessageChunk,
}


def _run_item(target: list[object] | None, texts: list[str]) -> list[object]:
    assert target is not None
    return [target[0], target[1], "".join(texts), encode_sizes(array("I", map(len, texts)))]


def _message_items(message: MessageRecord) -> list[object]:
    """A message with text runs as stored items: the message up to its first run, then
    each run as ``[messageId, kind, text, sizes]`` and each other block as a chunk."""
    content = message.content
    first = next(i for i, item in enumerate(content) if type(item) is TextRun)
    chunk = _CHUNKS[message.cls]
    kind = next(k for k, cls in _RUN_MESSAGES.items() if cls is message.cls)
    head: list[schema.ContentBlock] = content[:first]  # type: ignore[assignment]
    items: list[object] = [
        message.cls(message_id=message.message_id, content=head, meta=message.meta)
    ]
    for item in content[first:]:
        if type(item) is TextRun:
            items.extend(
                [message.message_id, kind, text, encode_sizes(sizes)]
                for text, sizes in item.groups()
            )
        else:
            items.append(chunk(message_id=message.message_id, content=item))  # type: ignore[arg-type]
    return items


logger = logging.getLogger("acpio._store.sqlite_store")


def pack(items: Sequence[object]) -> bytes:
    """A row or snapshot: ``items`` as a msgpack array, losing nothing that JSON can hold.

    msgpack holds integers of 64 bits only, JSON (and so the wire) any: an item
    msgpack refuses (say ``_meta: {"n": 10**30}`` in a prompt) is stored as an
    ext of code :data:`JSON_ITEM` holding its JSON. An item neither can encode
    (never sent on the wire either) is left out and logged; the rest is stored.
    """
    try:
        return _pack(items)
    except _UNPACKABLE:
        pass
    kept: list[object] = []
    for item in items:
        try:
            kept.append(msgspec.Raw(_pack(item)))
        except _UNPACKABLE:
            try:
                kept.append(msgspec.msgpack.Ext(JSON_ITEM, json_encode(item)))
            except _UNPACKABLE:
                logger.exception("a recorded %s cannot be stored", type(item).__name__)
    return _pack(kept)


def _discard(item: object) -> None:
    pass


def _nothing() -> None:
    pass


class Unloaded:
    """The history of a listed session that this process does not serve (never read)."""

    def record(self, update: schema.SessionUpdate) -> None:
        raise RuntimeError("this session's history is not loaded; resume it first")

    def record_text_chunk(self, tool_call_id: str, text: str) -> None:
        raise RuntimeError("this session's history is not loaded; resume it first")

    def record_message_text(self, message_id: str, text: str, thought: bool) -> None:
        raise RuntimeError("this session's history is not loaded; resume it first")

    def record_terminal_output(self, terminal_id: str, data: bytes) -> None:
        raise RuntimeError("this session's history is not loaded; resume it first")

    def replay(self) -> Iterator[schema.SessionUpdate]:
        raise RuntimeError("this session's history is not loaded; resume it first")


class StoredHistory(InMemoryHistory):
    """An :class:`InMemoryHistory` whose records are also queued for the store's writer.

    ``pending`` holds, in order, what was recorded (the update object; a
    text chunk's str, after ``[id]`` when the tool call changed; for terminal
    output only the terminal's :class:`_OutputMark`) and the writer
    operations of this session; the loop only appends, the writer only pops.
    No tuple per chunk (objects tracked by the garbage collector that stay
    queued until the flush cost more than the append), and no terminal bytes:
    holding a fast stream until the flush costs page faults and memory; the
    writer takes what replay shows of the terminal (its newest bytes) when it
    writes the row.
    """

    def __init__(
        self,
        limits: HistoryLimits,
        record: StoredRecord,
        *,
        histories: set[StoredHistory],
        wake: threading.Event,
        stream_started: Callable[[], None] = _nothing,
    ) -> None:
        super().__init__(limits)
        self.session_id = record.session_id
        # The store's histories with items for its writer, and the writer's wake-up.
        self._histories = histories
        self._wake = wake
        self._stream_started = stream_started
        self._owner = record
        self.pending: deque[object] = deque()
        self._key: str | None = None  # the id the chunks queued last belong to
        self._key_kind = ""  # ... "" for a tool call, else the message chunks' kind
        self._put: Callable[[object], None] = _discard  # attached once loaded
        self.ops = 0  # operations queued in pending (the writer skips the scan without)
        self.ops_done = 0  # ... of which the writer has seen (writer thread)
        self.seq = 0  # the last row written (writer thread)
        self.log_bytes = 0  # bytes in rows since the snapshot (writer thread)
        self.snapshot_bytes = 0
        self.compact_due = False  # set by the writer; acted on at the next record
        self.marks = 0  # output marks queued in pending (the writer skips the scan without)
        self.marks_done = 0  # ... of which the writer has seen (writer thread)
        self.scan_marks = False  # the batch being written may hold marks (writer thread)
        self.marks_seen = 0  # the count when that batch was taken (writer thread)
        self.targets = 0  # message targets ([id, kind]) queued in pending
        self.targets_done = 0  # ... of which the writer has seen (writer thread)
        self.targets_seen = 0  # the count when the batch was taken (writer thread)
        self.scan_runs = False  # the batch may hold message text (writer thread)
        # The message the first text chunks of the next batch belong to, and after the
        # batch being written (writer thread; taken over once it is written).
        self.run_target: list[object] | None = None
        self.next_run_target: list[object] | None = None
        self._marks: dict[str, _OutputMark] = {}
        self.dropped = False
        self._fold[schema.IdleStateUpdate] = self._turn_ended

    def attach(self) -> None:
        self._put = self.pending.append
        self._histories.add(self)

    def detach(self) -> None:
        self._put = _discard

    def put_op(self, op: object) -> None:
        if self._put is not _discard:
            self.ops += 1  # before the append: the writer reads the length first
            self.pending.append(op)

    def record(self, update: schema.SessionUpdate) -> None:
        """Fold one update (see :class:`InMemoryHistory`) and queue it for the writer.

        Live state and notices (:data:`~acpio._store.history.NOT_RECORDED`) are
        never part of the history, so they are not written either; the end of a
        turn (``idle``) still queues the session's metadata and wakes the writer.
        """
        self._open = None
        self._key = None  # text after this names its target again (and wakes the writer)
        kind = type(update)
        if kind not in _NOT_WRITTEN:
            self._put(update)
        fold = self._fold.get(kind)
        if fold is None:
            InMemoryHistory.record(self, update)
        else:
            fold(update)
        if self.compact_due:
            self.snapshot()

    def record_text_chunk(self, tool_call_id: str, text: str) -> None:
        """:meth:`InMemoryHistory.record_text_chunk`, queued for the writer."""
        if tool_call_id is not self._key or self._key_kind:
            self._key = tool_call_id
            self._key_kind = ""
            self._put([tool_call_id])
            self._stream_started()
        self._put(text)
        # InMemoryHistory.record_text_chunk written out: this runs for every text chunk.
        call = self._records.get(("call", tool_call_id))
        if isinstance(call, ToolCallRecord):
            call.content.append(text)
            call.has_content = True

    def record_message_text(self, message_id: str, text: str, thought: bool) -> None:
        """:meth:`InMemoryHistory.record_message_text`, queued for the writer."""
        kind = _THOUGHT_KIND if thought else _MESSAGE_KIND
        if message_id is not self._key or self._key_kind is not kind:
            self._key = message_id
            self._key_kind = kind
            self.targets += 1  # before the append: the writer reads the length first
            self._put([message_id, kind])
            self._stream_started()
        self._put(text)
        run = self._open
        if run is not None and message_id is self._open_id and thought is self._open_thought:
            # InMemoryHistory.record_message_text written out: this runs for every chunk.
            tail = run.tail
            tail.append(text)
            run.sizes.append(len(text))
            if len(tail) >= SEAL_AT:
                run.seal()
        else:
            self.add_message_text(message_id, text, thought)

    def record_terminal_output(self, terminal_id: str, data: bytes) -> None:
        """:meth:`InMemoryHistory.record_terminal_output`; the writer is told which
        terminal changed (it writes the terminal's newest bytes, not this chunk)."""
        self._terminal(terminal_id).output.append(data)
        mark = self._marks.get(terminal_id)
        if mark is None:
            mark = self._marks[terminal_id] = _OutputMark(terminal_id)
        self.marks += 1  # before the append: the writer reads the length first
        self._put(mark)
        if self.compact_due:
            self.snapshot()

    def _turn_ended(self, update: schema.SessionUpdate) -> None:
        if self._put is _discard:
            return
        self.put_op(self._owner.meta())
        self._wake.set()

    def snapshot(self) -> None:
        """Queue the folded history as this session's snapshot (it replaces the rows)."""
        self.compact_due = False
        self.log_bytes = 0
        self._key = None  # the rows after the snapshot name their ids again
        self.put_op(Snapshot(self.session_id, self, self.stored_items()))

    def stored_items(self) -> list[object]:
        """The folded history as stored items: what :meth:`replay` gives, but each message's
        runs of text chunks as one ``[messageId, kind, text, sizes]`` (not a block per chunk)."""
        items: list[object] = []
        for value in list(self._records.values()):
            if isinstance(value, MessageRecord) and any(
                type(item) is TextRun for item in value.content
            ):
                items.extend(_message_items(value))
            else:
                items.append(replay_record(value))
        return items

    def message_runs(self, events: list[object]) -> list[object]:
        """``events`` with each message's text chunks as one ``[messageId, kind, text, sizes]``
        and no ``[messageId, kind]`` target (rows hold no bare message text: an older acpio
        reading them takes a bare str for a tool call's text, and skips these).

        Chunks at the start belong to :attr:`next_run_target` (set to :attr:`run_target`,
        where the batch before ended, when the batch is taken), which is left holding
        the target at the end (the batch is written in parts, in order).
        """
        target = self.next_run_target
        out: list[object] = []
        # Grouped by type in C: a fast stream is long runs of str between a few others.
        for kind, group in groupby(events, type):
            if kind is str:
                texts: list[str] = list(group)  # type: ignore[arg-type]
                if target is None:
                    out.extend(texts)  # a tool call's text
                else:
                    out.append(_run_item(target, texts))
                continue
            for item in group:
                if kind is list:
                    pair: list[object] = item  # type: ignore[assignment]
                    if len(pair) == 2 and type(pair[1]) is str:
                        target = pair
                        continue
                    if len(pair) == 1:
                        target = None
                out.append(item)
        self.next_run_target = target
        return out

    def terminal_output_events(self, events: list[object]) -> list[object]:
        """``events`` with each terminal's output marks replaced by one ``[id, bytes]`` at the
        place of its last mark: the terminal's newest bytes now (what replay would show).

        Read from the loop's records on this thread: the chunks are immutable and taking
        them is one C call. They may already include bytes recorded after this row, which
        the next row carries again; folding the rows in order ends with the same output.
        """
        last: dict[str, int] = {}
        for index, item in enumerate(events):
            if type(item) is _OutputMark:
                last[item.terminal_id] = index
        if not last:
            return events
        out: list[object] = []
        for index, item in enumerate(events):
            if type(item) is not _OutputMark:
                out.append(item)
            elif last[item.terminal_id] == index:
                terminal = self._records.get(("terminal", item.terminal_id))
                if isinstance(terminal, TerminalRecord):
                    out.append([item.terminal_id, terminal.output.newest()])
        return out

    def row(self, events: list[object]) -> bytes:
        """The next row of this session: ``events`` packed (output marks replaced by the
        terminals' newest bytes, a message's text chunks by one ``[messageId, kind, text,
        sizes]``); counts it towards the next snapshot (writer thread).

        A batch's parts are passed in order (see :meth:`message_runs`).
        """
        if self.scan_marks:
            events = self.terminal_output_events(events)
        if self.scan_runs:
            events = self.message_runs(events)
        blob = pack(events)
        self.seq += 1
        self.log_bytes += len(blob)
        if self.log_bytes > max(COMPACT_BYTES, 2 * self.snapshot_bytes):
            self.compact_due = True
        return blob

    def fold_blob(self, data: bytes, key: list[str]) -> int:
        """Fold one stored row (or snapshot) into a history being loaded; its size.

        ``key`` holds the id the row's first text items belong to and their kind
        (``""`` for a tool call), and is left holding those of its last ones (rows are
        folded in order).
        """
        # A zlib stream starts with 0x78, a msgpack array never does.
        raw = zlib.decompress(data) if data[:1] == b"\x78" else data
        for stored in _unpack(raw):
            item = (
                _json_decode(stored.data)
                if isinstance(stored, msgspec.msgpack.Ext) and stored.code == JSON_ITEM
                else stored
            )
            if isinstance(item, str):
                if key[1]:
                    InMemoryHistory.record_message_text(self, key[0], item, key[1] == _THOUGHT_KIND)
                else:
                    InMemoryHistory.record_text_chunk(self, key[0], item)
            elif isinstance(item, dict):
                fields = cast("dict[str, object]", item)
                InMemoryHistory.record(self, schema.convert(fields, schema.SessionUpdate))
            elif isinstance(item, list):
                pair = cast("list[object]", item)
                if not pair or not isinstance(pair[0], str):
                    continue
                if len(pair) == 1:
                    key[0], key[1] = pair[0], ""
                elif isinstance(pair[1], bytes):
                    self._terminal(pair[0]).output.replace(pair[1])
                elif isinstance(pair[1], str) and pair[1] in _RUN_MESSAGES:
                    if len(pair) == 2 and pair[1] != "user_message_chunk":
                        key[0], key[1] = pair[0], pair[1]
                    elif len(pair) == 4 and isinstance(pair[2], str) and isinstance(pair[3], bytes):
                        self.fold_run(pair[0], _RUN_MESSAGES[pair[1]], pair[2], pair[3])
        return len(raw)

    def fold_run(
        self,
        message_id: str,
        cls: type[schema.AgentMessage | schema.AgentThought | schema.UserMessage],
        text: str,
        sizes: bytes,
    ) -> None:
        """Fold the text chunks of a stored ``[messageId, kind, text, sizes]``.

        :raises ValueError: when the sizes do not split the text.
        """
        lengths = run_sizes(sizes)
        if sum(lengths) != len(text):
            raise ValueError("a stored message text does not match its chunk sizes")
        self._open = None
        key = (cls.__name__, message_id)
        message = self._records.get(key)
        if not isinstance(message, MessageRecord):
            message = MessageRecord(cls, message_id)
            self._add(key, message)
        content = message.content
        last = content[-1] if content else None
        if isinstance(last, TextRun):
            last.extend(text, lengths)
        else:
            run = TextRun()
            run.extend(text, lengths)
            content.append(run)


class StoredRecord(SessionRecord):
    """A session record whose changes reach the file at the next flush."""

    # The durable state to write (agent state, its version, config values as JSON), replaced
    # whole on the loop; True while a SaveState op for it is queued (cleared by the writer
    # before it reads the row, so a newer row is never left unwritten).
    state_row: tuple[bytes | None, int, str] | None = None
    state_queued: bool = False

    def touch(self) -> None:
        """Mark the session as updated now (written at the next flush)."""
        super().touch()
        if isinstance(self.history, StoredHistory):
            self.history.put_op(self.meta())

    def meta(self) -> Meta:
        return Meta(
            self.session_id,
            json_encode(self.additional_directories).decode(),
            self.title,
            self.updated_at,
        )


# Writer operations besides recorded items. Plain classes: dataclasses cost import time.
class Create:
    __slots__ = ("cwd", "directories", "owner", "session_id", "updated_at")

    def __init__(
        self, session_id: str, cwd: str, directories: str, updated_at: str, owner: tuple[int, str]
    ) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.directories = directories
        self.updated_at = updated_at
        self.owner = owner


class Meta:
    __slots__ = ("directories", "session_id", "title", "updated_at")

    def __init__(
        self, session_id: str, directories: str, title: str | None, updated_at: str
    ) -> None:
        self.session_id = session_id
        self.directories = directories
        self.title = title
        self.updated_at = updated_at


class Snapshot:
    __slots__ = ("history", "session_id", "updates")

    def __init__(self, session_id: str, history: StoredHistory, updates: list[object]) -> None:
        self.session_id = session_id
        self.history = history
        self.updates = updates


class SaveState:
    """Write the record's newest ``state_row`` (one op however many saves it covers)."""

    __slots__ = ("record",)

    def __init__(self, record: StoredRecord) -> None:
        self.record = record


class Release:
    __slots__ = ("session_id",)

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id


class Barrier:
    __slots__ = ("done",)

    def __init__(self, done: threading.Event) -> None:
        self.done = done


OPS: Final = frozenset({Snapshot, Meta, Release, SaveState})


class _OutputMark:
    """Queued for terminal output: the terminal whose newest bytes the row must hold."""

    __slots__ = ("terminal_id",)

    def __init__(self, terminal_id: str) -> None:
        self.terminal_id = terminal_id


# ------------------------------------------------- the writer's side of the queues

Drained = list[tuple[StoredHistory, list[object], int]]
"""Per history with items: the items taken from its queue and its op count then."""


class StreamPace:
    """How long a store's writer waits for its next flush: every :data:`STREAM_POLL`
    seconds while text streams fast, else the store's flush interval.

    A text stream that starts tells it (:meth:`started`, on the loop: it also wakes
    the writer), and so does a large batch (:func:`drain`); either keeps the writer
    looking again soon for :data:`STREAM_WATCH` seconds (a stream pauses now and
    then), so its queue holds about :data:`STREAM_POLL` seconds of the stream.
    """

    __slots__ = ("_started", "_until", "_wake")

    def __init__(self, wake: threading.Event) -> None:
        self._wake = wake
        self._started = False
        self._until = 0.0

    def started(self) -> None:
        """A text stream starts (on the loop): the writer flushes soon and watches its pace."""
        self._started = True
        self._wake.set()

    def interval(self, flush_interval: float) -> float:
        """Seconds until the writer's next flush (writer thread)."""
        return STREAM_POLL if time.monotonic() < self._until else flush_interval

    def drained(self, largest: int) -> None:
        """A flush took its batches, the largest of ``largest`` items (writer thread)."""
        started, self._started = self._started, False
        if started or largest >= STREAM_ITEMS:
            self._until = time.monotonic() + STREAM_WATCH


def drain(
    queue: deque[object], histories: Iterable[StoredHistory], pace: StreamPace
) -> tuple[list[object], Drained]:
    """Take everything queued: the store's own items and each history's (writer thread).

    The store's queue is taken first: a :class:`Barrier` covers what was recorded
    before it. ``pace`` learns how large the batches were.
    """
    items = [queue.popleft() for _ in range(len(queue))]
    drained: Drained = []
    largest = 0
    for history in list(histories):
        pending = history.pending
        count = len(pending)  # before the counts: an op or mark counted there is in these
        ops = history.ops
        marks = history.marks
        targets = history.targets
        history.scan_marks = marks != history.marks_done
        history.scan_runs = targets != history.targets_done or history.run_target is not None
        largest = max(largest, count)
        if count:
            drained.append((history, [pending.popleft() for _ in range(count)], ops))
            history.marks_seen = marks
            history.targets_seen = targets
            history.next_run_target = history.run_target
    pace.drained(largest)
    return items, drained


def put_back(queue: deque[object], items: list[object], drained: Drained) -> None:
    """Queue again, in front and in order, what a failed flush took."""
    queue.extendleft(reversed(items))
    for history, batch, _ in drained:
        history.pending.extendleft(reversed(batch))


def mark_written(drained: Drained) -> None:
    """The histories' batches are written: their ops, marks and message targets need no
    scan any more, and the next batch's first text belongs to where this one ended.

    Only once written: a batch put back is scanned again.
    """
    for history, _, ops in drained:
        history.ops_done = ops
        history.marks_done = history.marks_seen
        history.targets_done = history.targets_seen
        history.run_target = history.next_run_target


def release_barriers(queue: deque[object]) -> None:
    """Wake every flush waiting on the writer (what is queued besides stays queued)."""
    for _ in range(len(queue)):
        item = queue.popleft()
        if isinstance(item, Barrier):
            item.done.set()
        else:
            queue.append(item)


def write_batches(
    drained: Drained,
    histories: set[StoredHistory],
    *,
    events: Callable[[StoredHistory, list[object]], None],
    snapshot: Callable[[Snapshot], None],
    op: Callable[[StoredHistory, object], None],
) -> None:
    """Write each history's batch in order through the store's three writes.

    Recorded items between two operations make one row (``events``, never called
    empty); a :class:`Snapshot` replaces every row before it (the items recorded
    before it are not written); the other operations (:class:`Meta`,
    :class:`SaveState`, :class:`Release`) go to ``op``. A dropped history (its
    session deleted) is skipped and forgotten.
    """
    for history, batch, ops in drained:
        if history.dropped:
            histories.discard(history)
            continue
        if ops == history.ops_done:
            events(history, batch)  # nothing but recorded items
            continue
        run: list[object] = []
        for item in batch:
            kind = type(item)
            if kind not in OPS:
                run.append(item)
            elif kind is Snapshot:
                run = []  # the snapshot covers everything recorded before it
                snapshot(item)  # type: ignore[arg-type]
            else:
                if run:
                    events(history, run)
                run = []
                op(history, item)
        if run:
            events(history, run)
