"""Session history for ``session/resume`` replay, and the store that keeps sessions.

How this works: every update a session sends passes through
:meth:`InMemoryHistory.record`, which folds it into one record per thing an
editor displays (a message, a tool call, a terminal, a plan, the latest
usage and session info) using the protocol's patch rules (``_meta`` included),
in the order each thing first appeared. A streamed message's plain text
chunks are kept as one joined text and the length of each chunk (a
:class:`TextRun`), not as one object per chunk. Replay emits one complete
update per record: whole messages instead of chunks (each chunk's text block
as it was sent), each tool call with its merged final state, each terminal
as a snapshot of its bytes with its exit status.
State updates and notices are live events, not history: a resume reports
the current state itself. Terminal scrollback and streamed tool-call content
are bounded (see :class:`HistoryLimits`), so a long-running session does not
keep every byte it ever streamed. Folding runs for every update sent, so it
dispatches on the exact class and patches records in place.

A persistent store implements :class:`SessionStore` (and a :class:`History`
per session) and is passed to the agent; nothing else changes. The store's
methods are coroutines (a server-side store does network round trips there);
a history's methods are plain calls on the hot path and must not block:
a durable history keeps folding in memory and hands writes to a worker (see
:mod:`acpio._store.sqlite_store` and ``docs/session-store.md``).
"""

from __future__ import annotations

import base64
import datetime
import sys
from array import array
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Protocol

import msgspec

from .. import schema
from .._limits import HistoryLimits
from .._protocol.diff_texts import forget_texts, texts_size

__all__ = [
    "History",
    "InMemoryHistory",
    "InMemorySessionStore",
    "SessionRecord",
    "SessionStore",
    "end_open_tool_calls",
    "visible",
    "record_message_text_as_update",
    "record_text_chunk_as_update",
]


class History(Protocol):
    """What a session records of itself so that ``session/resume`` can replay it.

    Implement it (with a :class:`SessionStore`) to keep sessions elsewhere than
    in memory: ``record`` is called for every update the session sends (keep it
    cheap) except the mid-turn state reports ``running`` and ``requires_action``
    (live state, never replayed; ``idle`` is recorded: it ends a turn),
    ``record_terminal_output`` for every terminal chunk's raw bytes, and
    ``replay`` must give updates that rebuild what an editor displayed.
    """

    def record(self, update: schema.SessionUpdate) -> None:
        """Fold one sent update into the history."""

    def record_text_chunk(self, tool_call_id: str, text: str) -> None:
        """Fold a ``tool_call_content_chunk`` of one text item, given just its text.

        The streaming path (:meth:`acpio.ToolCallHandle.append_text`) calls it
        instead of :meth:`record`, so it must record the same as ``record`` of
        that chunk would (``record_text_chunk_as_update`` does exactly that).
        """

    def record_message_text(self, message_id: str, text: str, thought: bool) -> None:
        """Fold an ``agent_message_chunk`` (``agent_thought_chunk`` when ``thought``) of one
        text block, given just its text.

        The streaming path (:meth:`acpio.MessageStream.write` of a str) calls it
        instead of :meth:`record`, so it must record the same as ``record`` of
        that chunk would (``record_message_text_as_update`` does exactly that).
        """

    def record_terminal_output(self, terminal_id: str, data: bytes) -> None:
        """Append raw terminal bytes (sent as ``terminal_output_chunk``)."""

    def replay(self) -> Iterator[schema.SessionUpdate]:
        """The updates that rebuild what an editor showed, oldest first."""
        ...


def record_text_chunk_as_update(history: History, tool_call_id: str, text: str) -> None:
    """:meth:`History.record_text_chunk` through :meth:`History.record` of the whole chunk."""
    history.record(
        schema.ToolCallContentChunk(
            tool_call_id=tool_call_id,
            content=schema.Content(content=schema.TextContent(text=text)),
        )
    )


def record_message_text_as_update(
    history: History, message_id: str, text: str, thought: bool
) -> None:
    """:meth:`History.record_message_text` through :meth:`History.record` of the whole chunk."""
    cls = schema.AgentThoughtChunk if thought else schema.AgentMessageChunk
    history.record(cls(message_id=message_id, content=schema.TextContent(text=text)))


_OPEN_STATUSES: Final = frozenset({"pending", "in_progress", "paused"})
STOPPED_NOTE: Final = "The agent stopped before this tool call ended."


def end_open_tool_calls(history: History, note: str = STOPPED_NOTE) -> list[str]:
    """End, in ``history``, every tool call still open (no status, ``pending``,
    ``in_progress`` or ``paused``): a text item ``note`` is appended and the status
    becomes ``failed``. Returns their ids.

    Used when a session is taken up from its store: the process that ran those
    calls is gone (killed in the middle of a turn), so they can never end, and a
    reopened session must not show them running forever. Recorded through
    :meth:`History.record`, so a durable history keeps the ending too.
    """
    ended = [
        update.tool_call_id
        for update in history.replay()
        if isinstance(update, schema.ToolCallUpdate)
        and (update.status in (msgspec.UNSET, None) or update.status in _OPEN_STATUSES)
    ]
    for tool_call_id in ended:
        history.record(
            schema.ToolCallContentChunk(
                tool_call_id=tool_call_id,
                content=schema.Content(content=schema.TextContent(text=note)),
            )
        )
        history.record(schema.ToolCallUpdate(tool_call_id=tool_call_id, status="failed"))
    return ended


_UNSET: Final = msgspec.UNSET
_Meta = dict[str, object] | None | msgspec.UnsetType
_MessageUpdate = schema.UserMessage | schema.AgentMessage | schema.AgentThought


def _patch_meta(stored: _Meta, patch: _Meta) -> _Meta:
    """ACP's ``_meta`` patch: omitted keeps, ``null`` clears, an object patches by top-level key."""
    if patch is _UNSET:
        return stored
    if patch is None:
        return _UNSET
    merged = dict(stored) if isinstance(stored, dict) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged or _UNSET


SEAL_AT: Final = 256
_LITTLE: Final = sys.byteorder == "little"


class TextRun:
    """Consecutive plain text chunks of a message or a tool call: their joined text and
    each one's length.

    What replay gives back is exactly the chunks (one text block or text item each),
    but they are held as a few long strings and 4 bytes per chunk, not as an object
    per chunk. Appending is O(1) amortized: every :data:`SEAL_AT` chunks are joined.
    A tool call's run drops its oldest chunks (:meth:`drop`), freeing whole joined
    groups, so it holds at most its bound plus :data:`SEAL_AT` chunks.

    A store's writer thread reads a run while the event loop appends to it
    (:func:`read_chunks`): appending touches only ``tail`` and ``sizes``; the
    changes that move chunks (joining the tail, freeing a group) replace lists
    rather than change them and are bracketed by ``version`` (odd while they run),
    so the writer retries a read that overlapped one.
    """

    __slots__ = ("counts", "dropped", "parts", "sizes", "start", "tail", "version")

    def __init__(self) -> None:
        self.parts: list[str] = []  # the joined text of sealed groups of chunks
        self.counts: list[int] = []  # how many chunks each part holds
        self.tail: list[str] = []  # the newest chunks, not yet joined
        self.sizes: array[int] = array("I")  # the length of every chunk held, in code points
        self.dropped: int = 0  # chunks freed from the front (the first held is chunk `dropped`)
        self.start: int = 0  # held chunks before the first one shown (dropped, not yet freed)
        self.version: int = 0  # odd while chunks move (see the class docstring)

    def __len__(self) -> int:
        """How many chunks the run shows."""
        return len(self.sizes) - self.start

    def end(self) -> int:
        """The index of the next chunk appended, counting from the run's first ever."""
        return self.dropped + len(self.sizes)

    def append(self, text: str) -> None:
        """Add one chunk."""
        tail = self.tail
        tail.append(text)
        self.sizes.append(len(text))
        if len(tail) >= SEAL_AT:
            self.seal()

    def seal(self) -> None:
        """Join the newest chunks into a part."""
        tail = self.tail
        if tail:
            self.version += 1
            self.parts.append("".join(tail))
            self.counts.append(len(tail))
            self.tail = []  # a new list: the writer may hold the old one
            self.version += 1

    def extend(self, text: str, sizes: array[int]) -> None:
        """Add the chunks ``text`` splits into by ``sizes`` (``len(text) == sum(sizes)``)."""
        self.seal()
        self.version += 1
        self.parts.append(text)
        self.counts.append(len(sizes))
        self.sizes.extend(sizes)
        self.version += 1

    def drop(self, count: int) -> None:
        """Stop showing the oldest ``count`` chunks (at most :func:`len` of them); whole
        parts no longer shown are freed."""
        self.start += count
        counts = self.counts
        freed = 0
        first = 0
        while first < len(counts) and self.start - freed >= counts[first]:
            freed += counts[first]
            first += 1
        if first:
            self.version += 1
            self.parts = self.parts[first:]
            self.counts = counts[first:]
            self.sizes = self.sizes[freed:]
            self.dropped += freed
            self.start -= freed
            self.version += 1

    def text(self) -> str:
        """The shown chunks' text, joined."""
        text = "".join(self.parts) + "".join(self.tail)
        if self.start:
            return text[sum(self.sizes[: self.start]) :]
        return text

    def groups(self) -> Iterator[tuple[str, array[int]]]:
        """The shown chunks as ``(joined text, lengths)`` groups, in order, as they are
        kept (no copy of the text but for the newest chunks and the first shown part)."""
        sizes = self.sizes
        skip = self.start
        start = 0
        for part, count in zip(self.parts, self.counts, strict=True):
            if skip >= count:
                skip -= count
            elif skip:
                yield part[sum(sizes[start : start + skip]) :], sizes[start + skip : start + count]
                skip = 0
            else:
                yield part, sizes[start : start + count]
            start += count
        if self.tail:
            tail = self.tail[skip:]
            if tail:
                yield "".join(tail), sizes[start + skip :]

    def chunks(self) -> list[str]:
        """Each shown chunk's text, in order."""
        text = self.text()
        out: list[str] = []
        start = 0
        for size in self.sizes[self.start :]:
            end = start + size
            out.append(text[start:end])
            start = end
        return out


def encode_sizes(sizes: array[int]) -> bytes:
    """Chunk lengths as little-endian 32-bit integers (see :func:`run_sizes`)."""
    if _LITTLE:
        return sizes.tobytes()
    swapped = array("I", sizes)  # pragma: no cover
    swapped.byteswap()  # pragma: no cover
    return swapped.tobytes()  # pragma: no cover


def run_sizes(data: bytes) -> array[int]:
    """The chunk lengths of :func:`encode_sizes`.

    :raises ValueError: when ``data`` is not a whole number of 32-bit integers.
    """
    sizes = array("I")
    if sizes.itemsize != 4:  # pragma: no cover - every platform acpio runs on
        raise ValueError("32-bit unsigned integers are needed")
    sizes.frombytes(data)
    if not _LITTLE:  # pragma: no cover
        sizes.byteswap()
    return sizes


def _plain_text(block: object) -> str | None:
    """The text of a text block with nothing else (no annotations, no ``_meta``), else None."""
    if type(block) is schema.TextContent and block.annotations is _UNSET and block.meta is _UNSET:
        return block.text
    return None


def _plain_item_text(item: object) -> str | None:
    """The text of a tool call content item that is a plain text block, else None."""
    if type(item) is schema.Content and item.meta is _UNSET:
        return _plain_text(item.content)
    return None


@dataclass(eq=False)
class MessageRecord:
    cls: type[schema.UserMessage | schema.AgentMessage | schema.AgentThought]
    message_id: str
    # Blocks as sent; runs of plain text chunks as a TextRun each.
    content: list[schema.ContentBlock | TextRun] = field(default_factory=lambda: [])
    meta: _Meta = _UNSET

    def add_text(self, text: str) -> None:
        content = self.content
        if content:
            last = content[-1]
            if type(last) is TextRun:
                last.append(text)
                return
        run = TextRun()
        run.append(text)
        content.append(run)

    def blocks(self) -> list[schema.ContentBlock]:
        """The content as sent: every chunk its own block."""
        out: list[schema.ContentBlock] = []
        for item in self.content:
            if type(item) is TextRun:
                out.extend(schema.TextContent(text=text) for text in item.chunks())
            else:
                out.append(item)  # type: ignore[arg-type]
        return out


class ToolCallRecord:
    """A tool call as an editor shows it: its merged state and its newest content items.

    ``content`` holds the items as sent, but each run of plain text items as one
    :class:`TextRun` (a text item per chunk on replay), at most ``limit``
    (``HistoryLimits.tool_call_items``) items shown, a run counting each chunk it
    shows: :meth:`trim` drops the oldest. Streamed text is trimmed each time its run
    joins :data:`SEAL_AT` chunks, so up to that many more wait; :meth:`items` trims
    first.
    """

    __slots__ = ("content", "has_content", "limit", "state")

    def __init__(self, state: schema.ToolCallUpdate, limit: int) -> None:
        self.state = state
        self.limit = limit
        self.content: deque[schema.ToolCallContent | TextRun] = deque()
        self.has_content = False

    def _run(self) -> TextRun:
        """The run at the end of the content (a new one unless the last item is one)."""
        content = self.content
        run = content[-1] if content else None
        if type(run) is not TextRun:
            run = TextRun()
            content.append(run)
        return run

    def add_text(self, text: str) -> TextRun:
        """Append a plain text item; the run that holds it."""
        run = self._run()
        run.append(text)
        self.has_content = True
        self.trim()
        return run

    def add_run(self, text: str, sizes: array[int]) -> None:
        """Append the plain text items ``text`` splits into by ``sizes``."""
        self._run().extend(text, sizes)
        self.has_content = True
        self.trim()

    def add(self, item: schema.ToolCallContent) -> None:
        """Append one item as sent (a plain text item joins the text run)."""
        text = _plain_item_text(item)
        if text is not None:
            self.add_text(text)
            return
        self.content.append(item)
        self.has_content = True
        self.trim()

    def replace(self, items: list[schema.ToolCallContent] | None) -> None:
        """Replace the content with ``items`` as sent (the newest ``limit`` of them)."""
        self.content.clear()
        self.content.extend(items or ())
        self.has_content = True
        self.trim()

    def trim(self) -> None:
        """Drop the oldest items beyond ``limit``."""
        content = self.content
        excess = sum(len(item) if type(item) is TextRun else 1 for item in content) - self.limit
        while excess > 0:
            first = content[0]
            if type(first) is TextRun:
                dropped = min(excess, len(first))
                first.drop(dropped)
                excess -= dropped
                if not len(first):
                    content.popleft()
            else:
                content.popleft()
                excess -= 1

    def items(self) -> list[schema.ToolCallContent]:
        """The content as sent: a text item per chunk of a run."""
        self.trim()
        out: list[schema.ToolCallContent] = []
        for entry in self.content:
            if type(entry) is TextRun:
                out.extend(
                    schema.Content(content=schema.TextContent(text=text)) for text in entry.chunks()
                )
            else:
                out.append(entry)  # type: ignore[arg-type]
        return out


class _Output:
    """A terminal's newest recorded bytes, kept as the chunks they came in (never copied).

    Whole chunks older than the newest ``limit`` bytes are dropped, so at most
    ``limit`` bytes plus one chunk are held.
    """

    __slots__ = ("chunks", "limit", "size")

    def __init__(self, limit: int) -> None:
        self.chunks: deque[bytes] = deque()
        self.size = 0
        self.limit = limit

    def append(self, data: bytes) -> None:
        chunks = self.chunks
        chunks.append(data)
        self.size += len(data)
        while len(chunks) > 1 and self.size - len(chunks[0]) >= self.limit:
            self.size -= len(chunks.popleft())

    def replace(self, data: bytes) -> None:
        self.clear()
        if data:
            self.append(data)

    def clear(self) -> None:
        self.chunks.clear()
        self.size = 0

    def newest(self) -> bytes:
        """The newest ``limit`` bytes (copied once: a store's writer takes them often)."""
        chunks = list(self.chunks)  # one C call: the writer thread may read while the loop appends
        excess = sum(map(len, chunks)) - self.limit
        if excess <= 0:
            return b"".join(chunks)
        first = 0
        while excess >= len(chunks[first]):
            excess -= len(chunks[first])
            first += 1
        return b"".join([memoryview(chunks[first])[excess:], *chunks[first + 1 :]])


@dataclass(eq=False)
class TerminalRecord:
    state: schema.TerminalUpdate
    output: _Output


# Patch fields copied as they come (content, output and _meta have rules of their own).
_TOOL_CALL_FIELDS: Final = tuple(
    name
    for name in schema.ToolCallUpdate.__struct_fields__
    if name not in ("session_update", "tool_call_id", "content", "meta")
)
_TERMINAL_FIELDS: Final = tuple(
    name
    for name in schema.TerminalUpdate.__struct_fields__
    if name not in ("session_update", "terminal_id", "output", "meta")
)
_MESSAGE_CLASSES: Final[
    dict[type, type[schema.UserMessage | schema.AgentMessage | schema.AgentThought]]
] = {
    schema.UserMessage: schema.UserMessage,
    schema.AgentMessage: schema.AgentMessage,
    schema.AgentThought: schema.AgentThought,
    schema.UserMessageChunk: schema.UserMessage,
    schema.AgentMessageChunk: schema.AgentMessage,
    schema.AgentThoughtChunk: schema.AgentThought,
}
# Live state, never history: a resume reports the current state itself, and
# notices are fire-and-forget events, not part of the conversation.
NOT_RECORDED: Final = (
    schema.RunningStateUpdate,
    schema.IdleStateUpdate,
    schema.RequiresActionStateUpdate,
    schema.UnknownStateUpdate,
    schema.Notice,
)


_DEFAULT_LIMITS: Final = HistoryLimits()


class InMemoryHistory:
    """The default :class:`History`: compact records kept in memory.

    Each record is what an editor displays: a message (chunks merged), a
    tool call (patches merged, content replaced or appended), a terminal
    (its bytes and final state), a plan (the latest one per ``planId``), the
    latest usage, session info, commands and config options, and any other
    update as sent. Replaying the records rebuilds the same display. At most
    ``limits.records`` records are kept; beyond that the oldest is dropped.
    """

    #: Which method folds each kind of update, by exact class (dispatch on the class:
    #: this runs for every update a session sends). A subclass may add kinds.
    FOLDS: ClassVar[dict[type, str]] = {
        schema.ToolCallContentChunk: "_fold_content_chunk",
        schema.ToolCallUpdate: "_merge_tool_call",
        schema.TerminalUpdate: "_merge_terminal",
        schema.TerminalOutputChunk: "_fold_terminal_chunk",
        schema.PlanUpdate: "_fold_plan",
        schema.UserMessageChunk: "_fold_chunk",
        schema.AgentMessageChunk: "_fold_chunk",
        schema.AgentThoughtChunk: "_fold_chunk",
        schema.UserMessage: "_fold_message",
        schema.AgentMessage: "_fold_message",
        schema.AgentThought: "_fold_message",
        schema.UsageUpdate: "_fold_usage",
        schema.SessionInfoUpdate: "_fold_session_info",
        schema.AvailableCommandsUpdate: "_fold_latest",
        schema.ConfigOptionUpdate: "_fold_latest",
        **dict.fromkeys(NOT_RECORDED, "_fold_skip"),
    }
    #: :attr:`FOLDS` resolved on the class, once per class (not per history: a history
    #: of an idle session stays small).
    _fold: ClassVar[dict[type, Callable[[Any, Any], None]]]

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls._fold = {kind: getattr(cls, name) for kind, name in cls.FOLDS.items()}
        if cls.record is not InMemoryHistory.record:
            # It changes record() but not a text shortcut: those chunks go through record().
            # (A class that changes a shortcut's slow path, add_*_text, folds text itself.)
            if (
                cls.record_text_chunk is InMemoryHistory.record_text_chunk
                and cls.add_tool_text is InMemoryHistory.add_tool_text
            ):
                cls.record_text_chunk = record_text_chunk_as_update  # type: ignore[method-assign,assignment]
            if (
                cls.record_message_text is InMemoryHistory.record_message_text
                and cls.add_message_text is InMemoryHistory.add_message_text
            ):
                cls.record_message_text = record_message_text_as_update  # type: ignore[method-assign,assignment]

    def __init__(self, limits: HistoryLimits | None = None) -> None:
        self.limits: HistoryLimits = limits or _DEFAULT_LIMITS  # frozen: one for every history
        self._records: dict[tuple[str, str], object] = {}
        self._sequence = 0
        # The text run record_message_text appended to last, while it is that message's
        # last content item (anything else recorded forgets it): the streaming hot path.
        self._open: TextRun | None = None
        self._open_id: str | None = None
        self._open_thought = False
        # The same for record_text_chunk: the tool call it appended to last and its run.
        self._call: ToolCallRecord | None = None
        self._call_id: str | None = None
        self._call_run: TextRun | None = None
        # Kept diffs that carry whole texts, oldest first (by id: each kept alive here),
        # and how many characters they hold: bounded by limits.diff_text_chars (made by the
        # first such diff: most sessions never keep one).
        self._texts: dict[int, tuple[schema.Diff, int]] | None = None
        self._texts_size = 0

    def _add(self, key: tuple[str, str], value: object) -> None:
        """Keep a new record (the key is not in use), dropping the oldest at the limit."""
        self._open = None
        self._call = None
        if len(self._records) >= self.limits.records:
            del self._records[next(iter(self._records))]
        self._records[key] = value

    def record(self, update: schema.SessionUpdate) -> None:
        """Fold one update into the records (see the class docstring)."""
        self._open = None
        self._call = None
        fold = self._fold.get(type(update))
        if fold is None:
            if isinstance(update, NOT_RECORDED):
                return
            self._other(update)
            return
        fold(self, update)

    def _other(self, update: object) -> None:
        self._sequence += 1
        self._add(("other", str(self._sequence)), update)

    def _fold_skip(self, update: object) -> None:
        pass

    def _fold_content_chunk(self, update: schema.ToolCallContentChunk) -> None:
        call = self._records.get(("call", update.tool_call_id))
        if isinstance(call, ToolCallRecord):
            call.add(update.content)
            if type(update.content) is not schema.Content:
                self._keep_texts((update.content,))

    def record_text_chunk(self, tool_call_id: str, text: str) -> None:
        """Record a ``tool_call_content_chunk`` of one text item, given just its text.

        The same as :meth:`record` of that chunk, without building it: the
        streaming path of :meth:`acpio.ToolCallHandle.append_text`.
        """
        call = self._call
        if call is not None and tool_call_id is self._call_id:
            # TextRun.append written out (as in record_message_text): it saves about 410
            # of the 11,600 instructions an append_text chunk costs the agent (callgrind).
            run: TextRun = self._call_run  # type: ignore[assignment]
            tail = run.tail
            tail.append(text)
            run.sizes.append(len(text))
            if len(tail) >= SEAL_AT:
                run.seal()
                call.trim()
            return
        self.add_tool_text(tool_call_id, text)

    def add_tool_text(self, tool_call_id: str, text: str) -> TextRun | None:
        """:meth:`record_text_chunk` of a chunk that does not continue the open run; the
        run it went to (``None``: no such tool call)."""
        call = self._records.get(("call", tool_call_id))
        if not isinstance(call, ToolCallRecord):
            return None
        if call.limit <= 0:
            call.has_content = True  # an empty list of items, as a call that keeps none
            return None
        run = call.add_text(text)
        self._call = call
        self._call_id = tool_call_id
        self._call_run = run
        return run

    def _message(self, update: schema.ContentChunk | _MessageUpdate) -> MessageRecord:
        cls = _MESSAGE_CLASSES[type(update)]
        key = (cls.__name__, update.message_id)
        message = self._records.get(key)
        if message is None:
            message = MessageRecord(cls, update.message_id)
            self._add(key, message)
        return message  # type: ignore[return-value]

    def _fold_chunk(self, update: schema.ContentChunk) -> None:
        text = _plain_text(update.content)
        if text is None:
            self._message(update).content.append(update.content)
        else:
            self._message(update).add_text(text)

    def record_message_text(self, message_id: str, text: str, thought: bool) -> None:
        """Record an ``agent_message_chunk`` (``agent_thought_chunk`` when ``thought``) of
        one text block, given just its text.

        The same as :meth:`record` of that chunk, without building it: the
        streaming path of :meth:`acpio.MessageStream.write`.
        """
        run = self._open
        if run is not None and message_id is self._open_id and thought is self._open_thought:
            # TextRun.append written out: it saves about 400 of the 11,400 instructions
            # a streamed reply chunk costs the agent (callgrind).
            tail = run.tail
            tail.append(text)
            run.sizes.append(len(text))
            if len(tail) >= SEAL_AT:
                run.seal()
            return
        self.add_message_text(message_id, text, thought)

    def add_message_text(self, message_id: str, text: str, thought: bool) -> TextRun:
        """:meth:`record_message_text` of a chunk that does not continue the open run."""
        cls = schema.AgentThought if thought else schema.AgentMessage
        key = (cls.__name__, message_id)
        message = self._records.get(key)
        if not isinstance(message, MessageRecord):
            message = MessageRecord(cls, message_id)
            self._add(key, message)
        message.add_text(text)
        run: TextRun = message.content[-1]  # type: ignore[assignment]
        self._open = run
        self._open_id = message_id
        self._open_thought = thought
        return run

    def _fold_message(self, update: _MessageUpdate) -> None:
        message = self._message(update)
        content = update.content
        if content is not _UNSET:
            message.content = list(content) if content is not None else []
        if update.meta is not _UNSET:
            message.meta = _patch_meta(message.meta, update.meta)

    def _fold_plan(self, update: schema.PlanUpdate) -> None:
        plan = update.plan
        plan_id = (
            plan.plan_id
            if isinstance(plan, schema.PlanItems)
            else plan.raw.get("planId")
            # What the type says; a hand-built update may hold anything.
            if isinstance(plan, schema.UnknownPlanUpdateContent)  # pyright: ignore[reportUnnecessaryIsInstance]
            else None
        )
        if not isinstance(plan_id, str):
            self._other(update)
            return
        key = ("plan", plan_id)
        if key in self._records:
            self._records[key] = update  # a plan replaces the last one, in its place
        else:
            self._add(key, update)

    def _fold_usage(self, update: schema.UsageUpdate) -> None:
        current = self._records.get(("usage", ""))
        if not isinstance(current, schema.UsageUpdate):
            self._add(("usage", ""), msgspec.structs.replace(update))
            return
        current.used = update.used
        current.size = update.size
        if update.cost is not _UNSET:
            current.cost = update.cost
        current.meta = _patch_meta(current.meta, update.meta)

    def _fold_session_info(self, update: schema.SessionInfoUpdate) -> None:
        current = self._records.get(("info", ""))
        if not isinstance(current, schema.SessionInfoUpdate):
            current = schema.SessionInfoUpdate()
            self._add(("info", ""), current)
        if update.title is not _UNSET:
            current.title = update.title
        if update.updated_at is not _UNSET:
            current.updated_at = update.updated_at
        current.meta = _patch_meta(current.meta, update.meta)

    def _fold_latest(self, update: schema.SessionUpdate) -> None:
        # Commands and config options: each update replaces the whole list.
        key = ("latest", type(update).__name__)
        if key in self._records:
            self._records[key] = update
        else:
            self._add(key, update)

    def _merge_tool_call(self, patch: schema.ToolCallUpdate) -> None:
        key = ("call", patch.tool_call_id)
        call = self._records.get(key)
        if call is None:
            call = ToolCallRecord(
                schema.ToolCallUpdate(tool_call_id=patch.tool_call_id),
                self.limits.tool_call_items,
            )
            self._add(key, call)
        assert isinstance(call, ToolCallRecord)
        state = call.state
        for name in _TOOL_CALL_FIELDS:
            value = getattr(patch, name)
            if value is not _UNSET:
                setattr(state, name, value)
        if patch.content is not _UNSET:
            call.replace(patch.content)
            if patch.content:
                self._keep_texts(patch.content)
        if patch.meta is not _UNSET:
            state.meta = _patch_meta(state.meta, patch.meta)

    def _keep_texts(self, items: Iterable[schema.ToolCallContent]) -> None:
        """Count the whole texts of the diffs among ``items``; beyond
        ``limits.diff_text_chars`` the oldest diffs let go of theirs (never the newest)."""
        kept = self._texts
        if kept is None:
            kept = self._texts = {}
        for item in items:
            if not isinstance(item, schema.Diff) or id(item) in kept:
                continue
            size = texts_size(item)
            if not size:
                continue
            kept[id(item)] = (item, size)
            self._texts_size += size
        limit = self.limits.diff_text_chars
        while self._texts_size > limit and len(kept) > 1:
            oldest, size = kept.pop(next(iter(kept)))
            forget_texts(oldest)
            self._texts_size -= size

    def _merge_terminal(self, patch: schema.TerminalUpdate) -> None:
        current = self._terminal(patch.terminal_id)
        state = current.state
        for name in _TERMINAL_FIELDS:
            value = getattr(patch, name)
            if value is not _UNSET:
                setattr(state, name, value)
        if isinstance(patch.output, schema.TerminalOutput):
            try:
                current.output.replace(base64.b64decode(patch.output.data, validate=True))
            except ValueError:
                current.output.clear()  # what a client keeps of an invalid snapshot
        elif patch.output is None:
            current.output.clear()
        if patch.meta is not _UNSET:
            state.meta = _patch_meta(state.meta, patch.meta)

    def _terminal(self, terminal_id: str) -> TerminalRecord:
        key = ("terminal", terminal_id)
        current = self._records.get(key)
        if current is None:
            current = TerminalRecord(
                schema.TerminalUpdate(terminal_id=terminal_id), _Output(self.limits.terminal_bytes)
            )
            self._add(key, current)
        assert isinstance(current, TerminalRecord)
        return current

    def _fold_terminal_chunk(self, update: schema.TerminalOutputChunk) -> None:
        # Terminal handles record their bytes directly; this is a chunk sent by hand.
        try:
            data = base64.b64decode(update.data, validate=True)
        except ValueError:
            return  # a client drops a chunk it cannot decode
        self.record_terminal_output(update.terminal_id, data)

    def record_terminal_output(self, terminal_id: str, data: bytes) -> None:
        """Append streamed terminal bytes, keeping the newest ``terminal_bytes``.

        ``data`` is kept as given, not copied: it must not change afterwards.
        """
        self._terminal(terminal_id).output.append(data)

    def replay(self) -> Iterator[schema.SessionUpdate]:
        """One complete update per record, in first-seen order (copies: records keep changing)."""
        for value in list(self._records.values()):
            yield replay_record(value)


InMemoryHistory._fold = {  # pyright: ignore[reportPrivateUsage]
    kind: getattr(InMemoryHistory, name) for kind, name in InMemoryHistory.FOLDS.items()
}


def replay_record(value: object) -> schema.SessionUpdate:
    """The one complete update that shows a record (a copy: records keep changing)."""
    replace = msgspec.structs.replace
    if isinstance(value, MessageRecord):
        return value.cls(message_id=value.message_id, content=value.blocks(), meta=value.meta)
    if isinstance(value, TerminalRecord):
        return replace(
            value.state,
            output=schema.TerminalOutput(data=base64.b64encode(value.output.newest()).decode()),
        )
    if isinstance(value, ToolCallRecord):
        if value.has_content:
            return replace(value.state, content=value.items())
        return replace(value.state)
    if isinstance(value, schema.UsageUpdate | schema.SessionInfoUpdate):
        return replace(value)
    return value  # type: ignore[return-value]


@dataclass
class SessionRecord:
    """What a store keeps of one session besides its history.

    ``agent_state`` (the agent's durable state, encoded JSON, ``None`` when
    the agent saved none), ``agent_state_version`` (the
    :attr:`acpio.Agent.agent_state_version` it was saved with) and
    ``config_values`` (each config option's current value) are the session's
    durable state: a store keeps them with the history when
    :meth:`SessionStore.save_state` is called and gives them back with the
    record in :meth:`SessionStore.get`, so a session reopened in a new process
    continues where it was.
    """

    session_id: str
    cwd: str
    additional_directories: list[str]
    history: History
    title: str | None = None
    active: bool = False
    """True while a connection serves the session (stores never evict active ones)."""
    connections: int = field(default=0, compare=False)
    """How many connections of this process serve the session (one that reopens it from a
    new connection shares the record); the last one to let it go releases it."""
    updated_at: str = field(
        default_factory=lambda: datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    )
    agent_state: bytes | None = None
    """The agent's durable state as encoded JSON (``Session.save_agent_state``); ``None``: none."""
    agent_state_version: int = 1
    """The ``Agent.agent_state_version`` that :attr:`agent_state` was saved with."""
    config_values: dict[str, str | bool] = field(default_factory=lambda: {})
    """Each config option's current value (``configId`` to a select's value id or a bool)."""
    principal: str | None = None
    """Who the session belongs to: the principal that created it (``None``: nobody in
    particular, a session of a local user or of a server without principals)."""

    def touch(self) -> None:
        """Mark the session as updated now."""
        self.updated_at = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


class SessionStore(Protocol):
    """Where sessions live between ``session/new`` and ``session/resume``.

    Every method is awaited on the event loop: a store that does I/O does it
    off the loop (a thread, an async driver). The agent calls :meth:`create`
    for ``session/new``, :meth:`get` for ``session/resume`` (and ``session/load``),
    :meth:`list` for ``session/list``, :meth:`delete` for ``session/delete``,
    :meth:`save_state` when the session's durable state (the agent's state,
    config values) changed, and :meth:`release` once a connection stops
    serving a session (closed, deleted, or the agent shutting down). A store shared by several agent
    processes refuses, in :meth:`get`, a session another live process serves.

    Principals: a session belongs to the principal that created it
    (:attr:`SessionRecord.principal`). Given a ``principal``, :meth:`get`,
    :meth:`list` and :meth:`delete` act only on that principal's sessions, and
    another principal's session is exactly an unknown one (``None``, not
    listed, ``False``), decided before anything else (no lease taken, no
    "served elsewhere" refusal). ``principal=None`` (stdio, a server without
    principals) means every session.
    """

    async def create(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str],
        *,
        principal: str | None = None,
    ) -> SessionRecord:
        """Create and keep a new session record, served by this process, owned by ``principal``."""
        ...

    async def get(self, session_id: str, *, principal: str | None = None) -> SessionRecord | None:
        """The record of a session with its history, to be served here; ``None`` if unknown
        (or, given a ``principal``, another principal's).

        :raises RequestError: when the session cannot be served here (for
            example another live process serves it).
        """
        ...

    async def list(self, *, principal: str | None = None) -> list[SessionRecord]:
        """Every session (given a ``principal``, every one of that principal's), most
        recently updated first (their histories need not be loaded)."""
        ...

    async def delete(self, session_id: str, *, principal: str | None = None) -> bool:
        """Forget a session and its history; False if it was unknown (or, given a
        ``principal``, another principal's: then it is kept)."""
        ...

    async def release(self, record: SessionRecord) -> None:
        """The session is no longer served here: keep what it recorded; others may serve it."""
        ...

    async def save_state(self, record: SessionRecord) -> None:
        """Keep the record's durable state: ``agent_state``, ``agent_state_version`` and
        ``config_values`` (replacing what was kept), to be given back by :meth:`get`.

        Called on the event loop each time the agent saves its state or a
        config option changes: do not wait for I/O here (queue the write). What
        was saved must be durable by the end of the turn in which it was saved
        (and by :meth:`release`).
        """
        ...


def visible(record: SessionRecord, principal: str | None) -> bool:
    """Whether ``principal`` may see ``record`` (``None``: no principal, sees every session)."""
    return principal is None or record.principal == principal


class InMemorySessionStore:
    """The default :class:`SessionStore` of :func:`acpio.serve`: sessions live as long
    as the agent process.

    At most ``max_records`` sessions are kept: beyond that, the sessions that
    no connection serves (closed ones) are forgotten, the longest unused first
    (created or released longest ago), so an agent that opens and closes
    sessions all day keeps bounded memory. Each eviction costs O(1) amortized:
    no scan of the records.
    """

    def __init__(self, limits: HistoryLimits | None = None, *, max_records: int = 1000) -> None:
        self._records: dict[str, SessionRecord] = {}
        # Candidates for eviction, the longest unused first: each record enters at
        # create and again at release; one found active is dropped from here (its
        # release puts it back).
        self._idle: dict[str, SessionRecord] = {}
        self._limits = limits
        self.max_records = max_records

    async def create(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str],
        *,
        principal: str | None = None,
    ) -> SessionRecord:
        """Create and keep a new session record with an in-memory history."""
        record = SessionRecord(
            session_id, cwd, list(additional_directories), InMemoryHistory(self._limits)
        )
        if principal is not None:
            record.principal = principal
        self._records[session_id] = record
        if len(self._records) > self.max_records:
            self._evict()  # before the new record joins the candidates: it is about to be served
        self._idle[session_id] = record
        return record

    def _evict(self) -> None:
        idle = self._idle
        records = self._records
        while len(records) > self.max_records and idle:
            session_id = next(iter(idle))
            record = idle.pop(session_id)
            if not record.active and records.get(session_id) is record:
                del records[session_id]

    async def get(self, session_id: str, *, principal: str | None = None) -> SessionRecord | None:
        """The record of a session, or ``None`` (unknown, or another principal's)."""
        record = self._records.get(session_id)
        if record is None or not visible(record, principal):
            return None
        return record

    async def list(self, *, principal: str | None = None) -> list[SessionRecord]:
        """Every session (of ``principal``, when given), most recently updated first."""
        records: Iterable[SessionRecord] = self._records.values()
        if principal is not None:
            records = [r for r in records if r.principal == principal]
        return sorted(records, key=lambda r: r.updated_at, reverse=True)

    async def delete(self, session_id: str, *, principal: str | None = None) -> bool:
        """Forget a session; False if it was unknown (or another principal's, kept)."""
        record = self._records.get(session_id)
        if record is None or not visible(record, principal):
            return False
        del self._records[session_id]
        self._idle.pop(session_id, None)
        return True

    async def release(self, record: SessionRecord) -> None:
        """The session is no longer served: it may be evicted beyond ``max_records``."""
        record.active = False
        session_id = record.session_id
        if self._records.get(session_id) is record:
            self._idle.pop(session_id, None)
            self._idle[session_id] = record  # the most recently unused

    async def save_state(self, record: SessionRecord) -> None:
        """Nothing to do: the record itself, kept here, holds its durable state."""
