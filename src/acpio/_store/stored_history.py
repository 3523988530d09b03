"""The history half of the durable session stores: what the event loop queues, and the rows.

How this works: :class:`StoredHistory` is an :class:`~acpio.store.InMemoryHistory`
(the same folding, the same bounds) that also queues what it records for the
store's writer thread (see :mod:`acpio._store.sqlite_store` and
:mod:`acpio._store.postgres_store`). It queues the update objects, but never
streamed text or terminal bytes: a text stream queues one :class:`TextMark`
when it starts (naming the message's or tool call's :class:`TextRun` and where
in it the stream starts), terminal output a mark naming the terminal, and the
writer reads the text and bytes from the history itself when it writes the row
(:func:`read_chunks`; the newest terminal bytes). So the queue never holds a
second copy of a stream, and it holds at most :attr:`StoredHistory.queue_items`
items: past that, the history stops queueing and queues one snapshot of itself
instead once the writer has caught up (see :meth:`StoredHistory.catch_up`).
Text that starts streaming tells the writer (:class:`StreamPace`), which then
flushes every :data:`STREAM_POLL` seconds while the stream goes on, so each
row holds a fraction of a second of it. :meth:`StoredHistory.row` turns a batch
into the bytes of one row; :meth:`StoredHistory.fold_blob` folds a stored row
or snapshot back into a history when a session is loaded. The writer's side
of the queues (:func:`drain`, :func:`write_batches`, :func:`put_back`,
:func:`mark_written`, :class:`StreamPace`) is shared by both stores: only the
SQL differs.
"""

from __future__ import annotations

import logging
import threading
import time
import zlib
from array import array
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import ClassVar, Final, cast

import msgspec

from .. import schema
from .._limits import HistoryLimits
from ..schema._base import enc_hook
from .history import (
    NOT_RECORDED,
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
# cannot hold one of its values), [id, kind, text, sizes] (text chunks of a message,
# kind "agent_message_chunk", "agent_thought_chunk" or "user_message_chunk", or of a
# tool call, kind "tool_call_content_chunk": ``text`` split by ``sizes``, little-endian
# uint32 lengths in code points), or [terminalId, bytes]: that terminal's output (what
# replay shows of it) as it was when the row was written. Rows written before text
# runs also hold [id] (the tool call the text chunks after it belong to), [messageId,
# kind] (the message they belong to) and a str (one text chunk): still read.
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
QUEUE_ITEMS: Final = 65536
"""How many items a history queues for the writer at most (see :meth:`StoredHistory.catch_up`)."""
_MESSAGE_KIND: Final = "agent_message_chunk"
_THOUGHT_KIND: Final = "agent_thought_chunk"
_TOOL_KIND: Final = "tool_call_content_chunk"
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


def _tool_call_items(call: ToolCallRecord) -> list[object]:
    """A tool call with text runs as stored items: the call with its content up to its
    first run, then each run as ``[toolCallId, kind, text, sizes]`` and each other item
    as a ``tool_call_content_chunk``."""
    call.trim()
    content = list(call.content)
    first = next(i for i, item in enumerate(content) if type(item) is TextRun)
    tool_call_id = call.state.tool_call_id
    head: list[schema.ToolCallContent] = content[:first]  # type: ignore[assignment]
    items: list[object] = [msgspec.structs.replace(call.state, content=head)]
    for item in content[first:]:
        if type(item) is TextRun:
            items.extend(
                [tool_call_id, _TOOL_KIND, text, encode_sizes(sizes)]
                for text, sizes in item.groups()
            )
        else:
            items.append(schema.ToolCallContentChunk(tool_call_id=tool_call_id, content=item))  # type: ignore[arg-type]
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


class TextMark:
    """Queued when a text stream starts: the run its chunks go to, from chunk ``pos`` on.

    The loop sets ``end`` (the run's end then) once anything else is recorded: the
    chunks after it are not this stream's (a chunk recorded with ``record`` is written
    as its update). The writer reads the chunks from ``pos`` up to ``end`` (while
    ``end`` is None: up to the run's end now); ``taken`` is where the batch being
    written got to, which becomes ``pos`` once it is written (writer thread).
    """

    __slots__ = ("end", "pos", "run", "taken", "target")

    def __init__(self, run: TextRun, target: list[object], pos: int) -> None:
        self.run = run
        self.target = target  # [id, kind] of the row items
        self.pos = pos
        self.taken = pos
        self.end: int | None = None


def read_chunks(run: TextRun, begin: int, end: int | None) -> tuple[int, str, array[int]]:
    """Chunks ``begin`` to ``end`` of ``run`` (``None``: to its end now) that it still
    holds, read on the writer thread while the loop may append: where the chunks read
    end, their joined text and their lengths.

    Follows :class:`TextRun`'s rule: the lists read are taken, and the number of
    parts and tail chunks counted, between two reads of an even, unchanged
    ``version``; parts and lists replaced later are not changed.
    """
    while True:
        version = run.version
        parts = run.parts
        counts = run.counts
        sizes = run.sizes
        tail = run.tail
        dropped = run.dropped
        held_parts = len(counts)
        held_tail = len(tail)
        if not version & 1 and run.version == version:
            break
        time.sleep(0)  # the loop is joining or freeing chunks: let it finish
    in_parts = sum(counts[:held_parts])
    held = dropped + in_parts + held_tail
    last = held if end is None else min(end, held)
    first = max(begin, dropped)
    if first >= last:
        return max(last, begin), "", array("I")
    low, high = first - dropped, last - dropped
    pieces: list[str] = []
    out_sizes = array("I")
    if low < in_parts:
        base = 0
        for index in range(held_parts):
            count = counts[index]
            if base + count > low:
                if base >= high:
                    break
                start = max(low - base, 0)
                stop = min(high - base, count)
                part = parts[index]
                if start == 0 and stop == count:
                    pieces.append(part)
                else:
                    offset = sum(sizes[base : base + start])
                    pieces.append(part[offset : offset + sum(sizes[base + start : base + stop])])
                out_sizes.extend(sizes[base + start : base + stop])
            base += count
    if high > in_parts:
        chunks = tail[max(low - in_parts, 0) : high - in_parts]
        pieces.extend(chunks)
        out_sizes.extend(map(len, chunks))
    return last, "".join(pieces), out_sizes


class StoredHistory(InMemoryHistory):
    """An :class:`InMemoryHistory` whose records are also queued for the store's writer.


    ``pending`` holds, in order, what was recorded (the update object; a
    :class:`TextMark` where a text stream starts; for terminal output the
    terminal's :class:`_OutputMark`) and the writer operations of this session;
    the loop only appends, the writer only pops. No streamed text and no
    terminal bytes: holding a fast stream until the flush costs page faults
    and memory; the writer reads what replay shows (the text runs, the
    terminals' newest bytes) when it writes the row. At most
    :attr:`queue_items` recorded items are queued (see :meth:`catch_up`).
    """

    queue_items: int = QUEUE_ITEMS
    """Recorded items queued at most; past them the history falls behind (:meth:`catch_up`)."""

    FOLDS: ClassVar[dict[type, str]] = {
        **InMemoryHistory.FOLDS,
        schema.IdleStateUpdate: "_turn_ended",  # a turn's end wakes the writer
    }

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
        self._mark: TextMark | None = None  # the text stream queued last, until it ends
        self._put: Callable[[object], None] = _discard  # attached once loaded
        self.behind = False  # recorded items are no longer queued (see catch_up)
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
        self.targets = 0  # text marks queued in pending
        self.targets_done = 0  # ... of which the writer has seen (writer thread)
        self.targets_seen = 0  # the count when the batch was taken (writer thread)
        self.scan_runs = False  # the batch may hold text marks (writer thread)
        # The text stream whose newer chunks the next batch writes first, and after the
        # batch being written; the marks that batch read (writer thread).
        self.carry: TextMark | None = None
        self.next_carry: TextMark | None = None
        self.read_marks: list[TextMark] = []
        self._marks: dict[str, _OutputMark] = {}
        self.dropped = False

    def attach(self) -> None:
        self._put = self.pending.append
        self._histories.add(self)

    def detach(self) -> None:
        self._put = _discard

    def put_op(self, op: object) -> None:
        if self._put is not _discard:
            self.ops += 1  # before the append: the writer reads the length first
            self.pending.append(op)

    def _end_stream(self) -> None:
        """The queued text stream ends here (anything recorded after it is not its text):
        the next text chunk takes the slow path, which queues its stream again."""
        self._open = None
        self._call = None
        mark = self._mark
        if mark is not None:
            mark.end = mark.run.end()
            self._mark = None

    def _full(self) -> bool:
        """Whether recorded items must not be queued now: the history is behind, or falls
        behind as the queue is full; a history behind whose writer caught up catches up."""
        if self.behind:
            if len(self.pending) > self.queue_items // 2:
                return True
            self.catch_up()
            return False
        if len(self.pending) >= self.queue_items:
            self.behind = True
            return True
        return False

    def catch_up(self) -> None:
        """Queue the history as a snapshot if it fell behind.

        A history stops queueing recorded items once :attr:`queue_items` wait for a
        writer that falls behind (a slow disk, a locked database): what it records
        then is kept in memory only, so the queue stays bounded. It catches up with
        one snapshot of itself (which covers every item left out) at the next
        record once the writer has taken half the queue, at the end of a turn, at
        ``flush`` and when the session is given up: nothing recorded is lost.
        """
        if self.behind:
            self.behind = False
            self.snapshot()

    def record(self, update: schema.SessionUpdate) -> None:
        """Fold one update (see :class:`InMemoryHistory`) and queue it for the writer.

        Live state and notices (:data:`~acpio._store.history.NOT_RECORDED`) are
        never part of the history, so they are not written either; the end of a
        turn (``idle``) still queues the session's metadata and wakes the writer.
        """
        self._open = None
        if self._mark is not None:
            self._end_stream()
        kind = type(update)
        if kind not in _NOT_WRITTEN and (
            (not self.behind and len(self.pending) < self.queue_items) or not self._full()
        ):
            self._put(update)
        fold = self._fold.get(kind)
        if fold is None:
            InMemoryHistory.record(self, update)
        else:
            fold(self, update)
        if self.compact_due:
            self.snapshot()

    def _start_stream(self, run: TextRun, target_id: str, kind: str) -> None:
        """Queue a text stream that starts with the chunk just added to ``run`` (the
        chunks after it continue it until :meth:`_end_stream`)."""
        previous = self._mark
        if previous is not None:
            previous.end = previous.run.end() - (previous.run is run)
        # The other kind's shortcut continued the stream that ended: its next chunk
        # takes the slow path again (this kind's was just set to this run).
        if kind is _TOOL_KIND:
            self._open = None
        else:
            self._call = None
        mark = self._mark = TextMark(run, [target_id, kind], run.end() - 1)
        # Catching up, the snapshot holds this chunk and queued the stream after it.
        if not self._full() and self._mark is mark:
            self._queue_mark(mark)
            self._stream_started()

    def _queue_mark(self, mark: TextMark) -> None:
        self._mark = mark
        if self._put is not _discard:
            self.targets += 1  # before the append: the writer reads the length first
            self.pending.append(mark)

    def add_tool_text(self, tool_call_id: str, text: str) -> TextRun | None:
        """:meth:`InMemoryHistory.add_tool_text`; a stream that starts queues a
        :class:`TextMark` (the writer reads the text from the run)."""
        run = InMemoryHistory.add_tool_text(self, tool_call_id, text)
        if run is not None:
            self._start_stream(run, tool_call_id, _TOOL_KIND)
        return run

    def add_message_text(self, message_id: str, text: str, thought: bool) -> TextRun:
        """:meth:`InMemoryHistory.add_message_text`; a stream that starts queues a
        :class:`TextMark` (the writer reads the text from the run)."""
        run = InMemoryHistory.add_message_text(self, message_id, text, thought)
        self._start_stream(run, message_id, _THOUGHT_KIND if thought else _MESSAGE_KIND)
        return run

    def record_terminal_output(self, terminal_id: str, data: bytes) -> None:
        """:meth:`InMemoryHistory.record_terminal_output`; the writer is told which
        terminal changed (it writes the terminal's newest bytes, not this chunk)."""
        self._terminal(terminal_id).output.append(data)
        if (not self.behind and len(self.pending) < self.queue_items) or not self._full():
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
        self.catch_up()
        self.put_op(self._owner.meta())
        self._wake.set()

    def snapshot(self) -> None:
        """Queue the folded history as this session's snapshot (it replaces the rows)."""
        self.compact_due = False
        self.log_bytes = 0
        self.behind = False
        self.put_op(Snapshot(self.session_id, self, self.stored_items()))
        mark = self._mark
        if mark is not None:  # the stream goes on after the snapshot
            mark.end = end = mark.run.end()
            self._queue_mark(TextMark(mark.run, mark.target, end))

    def stored_items(self) -> list[object]:
        """The folded history as stored items: what :meth:`replay` gives, but each run of
        text chunks as ``[id, kind, text, sizes]`` items (not a block or item per chunk)."""
        items: list[object] = []
        for value in list(self._records.values()):
            if type(value) is MessageRecord and any(
                type(item) is TextRun for item in value.content
            ):
                items.extend(_message_items(value))
            elif type(value) is ToolCallRecord and any(
                type(item) is TextRun for item in value.content
            ):
                items.extend(_tool_call_items(value))
            else:
                items.append(replay_record(value))
        return items

    def text_items(self, events: list[object]) -> list[object]:
        """``events`` with each :class:`TextMark` replaced by the chunks it marks as
        ``[id, kind, text, sizes]``, read from the runs now, after the newer chunks of
        the stream :attr:`next_carry` (where the batch before ended) as the first item.

        The batch is written in parts, in order: the last stream read is left in
        :attr:`next_carry`, and each mark's ``taken`` where it got to.
        """
        out: list[object] = []
        carry = self.next_carry
        if carry is not None:
            carry = self._read_mark(carry, out)
        for item in events:
            if type(item) is TextMark:
                carry = self._read_mark(item, out)
            else:
                out.append(item)
        self.next_carry = carry
        return out

    def _read_mark(self, mark: TextMark, out: list[object]) -> TextMark | None:
        end = mark.end
        taken, text, sizes = read_chunks(mark.run, mark.taken, end)
        if sizes:
            out.append([mark.target[0], mark.target[1], text, encode_sizes(sizes)])
        mark.taken = taken
        self.read_marks.append(mark)
        return None if end is not None and taken >= end else mark

    def terminal_output_events(self, events: list[object]) -> list[object]:
        """``events`` with each terminal's output marks replaced by one ``[id, bytes]`` at the
        place of its last mark: the terminal's newest bytes now (what replay would show),
        and ``[id, b""]`` at the place of its first.

        Read from the loop's records on this thread: the chunks are immutable and taking
        them is one C call. They may already include bytes recorded after this row, which
        the next row carries again; folding the rows in order ends with the same output.
        """
        first: dict[str, int] = {}
        last: dict[str, int] = {}
        for index, item in enumerate(events):
            if type(item) is _OutputMark:
                first.setdefault(item.terminal_id, index)
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
            elif first[item.terminal_id] == index:
                # A terminal first seen through its output is created where it was
                # (records replay in first-seen order); its bytes come at the last mark.
                out.append([item.terminal_id, b""])
        return out

    def row(self, events: list[object]) -> bytes | None:
        """The next row of this session: ``events`` packed (output marks replaced by the
        terminals' newest bytes, text marks by the text they mark, see
        :meth:`text_items`); counts it towards the next snapshot (writer thread).
        ``None`` when there is nothing to write (a stream with no new text).

        A batch's parts are passed in order.
        """
        if self.scan_marks:
            events = self.terminal_output_events(events)
        if self.scan_runs:
            events = self.text_items(events)
            if not events:
                return None
        blob = pack(events)
        self.seq += 1
        self.log_bytes += len(blob)
        if self.log_bytes > max(COMPACT_BYTES, 2 * self.snapshot_bytes):
            self.compact_due = True
        return blob

    def fold_blob(self, data: bytes, key: list[str]) -> int:
        """Fold one stored row (or snapshot) into a history being loaded; its size.

        ``key`` holds the id the row's first bare text items belong to and their kind
        (``""`` for a tool call), and is left holding those of its last ones (rows are
        folded in order; only rows written before text runs hold bare text).
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
                elif len(pair) == 4 and isinstance(pair[2], str) and isinstance(pair[3], bytes):
                    if pair[1] == _TOOL_KIND:
                        self.fold_tool_run(pair[0], pair[2], pair[3])
                    elif pair[1] in _RUN_MESSAGES:
                        self.fold_run(pair[0], _RUN_MESSAGES[pair[1]], pair[2], pair[3])
                elif len(pair) == 2 and pair[1] in (_MESSAGE_KIND, _THOUGHT_KIND):
                    key[0], key[1] = pair[0], pair[1]
        self._end_stream()  # bare text of an older row was folded as a stream: not one
        return len(raw)

    def fold_tool_run(self, tool_call_id: str, text: str, sizes: bytes) -> None:
        """Fold the text items of a stored ``[toolCallId, kind, text, sizes]``.

        :raises ValueError: when the sizes do not split the text.
        """
        lengths = run_sizes(sizes)
        if sum(lengths) != len(text):
            raise ValueError("a stored tool call text does not match its chunk sizes")
        call = self._records.get(("call", tool_call_id))
        if isinstance(call, ToolCallRecord):
            call.add_run(text, lengths)

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
    __slots__ = ("cwd", "directories", "owner", "principal", "session_id", "updated_at")

    def __init__(
        self,
        session_id: str,
        cwd: str,
        directories: str,
        updated_at: str,
        owner: tuple[int, str],
        *,
        principal: str | None,
    ) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.directories = directories
        self.updated_at = updated_at
        self.owner = owner
        self.principal = principal


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
"""Per history with items (or a stream going on): the items taken from its queue and its
op count then."""


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
    before it. ``pace`` learns how large the batches were, and that a text stream
    goes on (a stream carried over from the last batch).
    """
    items = [queue.popleft() for _ in range(len(queue))]
    drained: Drained = []
    largest = 0
    streaming = False
    for history in list(histories):
        pending = history.pending
        count = len(pending)  # before the counts: an op or mark counted there is in these
        ops = history.ops
        marks = history.marks
        targets = history.targets
        carry = history.carry
        more = False  # the carried stream has chunks not yet written
        if carry is not None:
            end = carry.end
            more = carry.pos < (carry.run.end() if end is None else end)
            if not more and end is not None:
                history.carry = carry = None
        history.scan_marks = marks != history.marks_done
        history.scan_runs = targets != history.targets_done or more
        largest = max(largest, count)
        if count or more:
            streaming = streaming or more
            drained.append((history, [pending.popleft() for _ in range(count)], ops))
            history.marks_seen = marks
            history.targets_seen = targets
            history.next_carry = carry
            history.read_marks = []
    pace.drained(STREAM_ITEMS if streaming else largest)
    return items, drained


def put_back(queue: deque[object], items: list[object], drained: Drained) -> None:
    """Queue again, in front and in order, what a failed flush took (the text it read
    is read again)."""
    queue.extendleft(reversed(items))
    for history, batch, _ in drained:
        history.pending.extendleft(reversed(batch))
        for mark in history.read_marks:
            mark.taken = mark.pos
        history.read_marks = []


def mark_written(drained: Drained) -> None:
    """The histories' batches are written: their ops, output marks and text marks need
    no scan any more, each text mark read is written up to where it was read, and the
    next batch starts with the newer chunks of the stream this one ended with.

    Only once written: a batch put back is scanned and read again.
    """
    for history, _, ops in drained:
        history.ops_done = ops
        history.marks_done = history.marks_seen
        history.targets_done = history.targets_seen
        history.carry = history.next_carry
        for mark in history.read_marks:
            mark.pos = mark.taken
        history.read_marks = []


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
            if batch or history.scan_runs:
                events(history, batch)  # nothing but recorded items (or a stream's text)
            continue
        run: list[object] = []
        for item in batch:
            kind = type(item)
            if kind not in OPS:
                run.append(item)
            elif kind is Snapshot:
                run = []  # the snapshot covers everything recorded before it
                history.next_carry = None  # ... the text of the streams before it too
                snapshot(item)  # type: ignore[arg-type]
            else:
                if run:
                    events(history, run)
                run = []
                op(history, item)
        if run:
            events(history, run)
