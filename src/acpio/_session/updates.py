"""The update path of a session: the one way its updates reach the client, in order.

How this works: every update of a session goes through :meth:`UpdatePath.send`,
which (1) flushes terminal bytes still buffered, so nothing overtakes them,
(2) drops updates from foreground work that was already reported idle, so a
cancelled turn never speaks after its ``cancelled`` idle, (3) holds updates
back while a replay (``session/resume``) or the lines of session setup are
being sent, (4) records the update in the session's history for replay (the
mid-turn states ``running`` and ``requires_action`` excepted: live state), and
(5) queues the lines the session's encoding makes of it on the connection's
single ordered writer. Sending is the one place where an update becomes wire
bytes, and it asks the session's :class:`~acpio._session.encoding.SessionEncoding`
(one object per protocol version, chosen at ``initialize``) for them: the lines
of an update (possibly none), the one-line splices of the hot paths (prefix,
encoded value, suffix), whether state updates are shown, and, when the encoding
has lines that fall due later (a rate-limited refresh), when to ask again: one
timer, :meth:`UpdatePath._flush_later`. Nothing here depends on the version;
agent code never sees it either.

Setup order: editors drop updates for a session they do not know yet, so
everything a session sends while ``session/new`` or ``session/resume`` is
being answered is held: :meth:`UpdatePath.hold_setup` swaps the two line
senders for ones that append to a list (nothing waits, so a hook that sends
cannot deadlock against its own answer), and :meth:`UpdatePath.release_setup`,
called right after the answer was queued, restores them and queues the held
lines in order. If the writer has no room for them all, the rest is sent by a
task while later updates wait behind it (the replay gate), so the order is
kept either way.

The try-variants (:meth:`UpdatePath.try_send_state`, :meth:`UpdatePath.try_send_text_chunk`,
:meth:`UpdatePath.try_send_message_text`) send without an ``await`` when nothing
has to be waited for; they are the hot paths of state updates, streamed tool-call
text and streamed replies, and admit with the same :meth:`UpdatePath._admit_now`
as every other update.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Final, Protocol, TypeVar

import anyio
import anyio.abc
import msgspec

from .. import schema
from .._errors import ConnectionClosed
from .._store.history import (
    History,
    record_message_text_as_update,
    record_text_chunk_as_update,
)
from .encoding import SessionEncoding
from .framing import encode_json
from .work import current_work

T = TypeVar("T")

__all__ = ["ClientConnection", "Flushable", "UpdatePath"]

logger = logging.getLogger(__name__)

_encode: Final = encode_json


class ClientConnection(Protocol):
    """What a session needs of its connection: ordered lines, requests, notifications."""

    @property
    def closed(self) -> bool: ...

    @property
    def line_sender(self) -> Callable[[bytes], Awaitable[None]]: ...

    @property
    def line_try_sender(self) -> Callable[[bytes], bool]: ...

    async def request(self, method: str, params: object, decode: Callable[[msgspec.Raw], T]) -> T:
        """Send a request to the client; its result is decoded once, with ``decode``."""
        ...

    def prepare_request(self, method: str, params: object) -> bytes:
        """A request encoded once, sent (each time with a fresh id) by ``request_prepared``."""
        ...

    async def request_prepared(
        self, method: str, tail: bytes, decode: Callable[[msgspec.Raw], T]
    ) -> T:
        """``request`` of a request encoded by ``prepare_request``."""
        ...

    async def notify(self, method: str, params: object) -> None:
        """Send a notification to the client, in order with every other line."""
        ...

    async def write_queued(self) -> bool:
        """Have what is queued for the client written now, in the caller's task, where the
        transport can; True when it wrote (the caller may have waited)."""
        ...


class Flushable(Protocol):
    """A terminal with buffered bytes: :meth:`flush` sends them."""

    async def flush(self) -> None:
        """Send the buffered bytes now, before whatever is sent next."""
        ...


def _text_chunk_recorder(history: History) -> Callable[[str, str], None]:
    """The history's :meth:`~acpio.History.record_text_chunk`; for a history written
    before that method joined the protocol, the chunk goes to ``record`` as an update."""
    method: Callable[[str, str], None] | None = getattr(history, "record_text_chunk", None)
    if method is not None:
        return method
    return functools.partial(record_text_chunk_as_update, history)


def _message_text_recorder(history: History) -> Callable[[str, str, bool], None]:
    """The history's :meth:`~acpio.History.record_message_text`; for a history written
    before that method joined the protocol, the chunk goes to ``record`` as an update."""
    method: Callable[[str, str, bool], None] | None = getattr(history, "record_message_text", None)
    if method is not None:
        return method
    return functools.partial(record_message_text_as_update, history)


class UpdatePath:
    """Admission, holding, terminal-first flushing, history and sending of one session's updates.

    The invariant it keeps: the client receives a session's updates in the
    order they were sent, each after every terminal byte written before it,
    none of foreground work already reported idle, none before the answer
    that makes the session known, and none once the session was closed.
    """

    __slots__ = (
        "_flush_timer",
        "_held",
        "_history",
        "_message_chunk_end",
        "_record",
        "_record_message_text",
        "_record_text_chunk",
        "_released",
        "_replay_gate",
        "_setup_lines",
        "_task_group",
        "_text_chunk_end",
        "_try_send_line",
        "_update_lines",
        "connection",
        "dirty_terminals",
        "encoding",
        "send_line",
        "session_id",
    )

    def __init__(
        self,
        session_id: str,
        *,
        encoding: SessionEncoding,
        connection: ClientConnection,
        history: History,
        task_group: anyio.abc.TaskGroup,
    ) -> None:
        self.session_id: Final = session_id
        self.encoding: Final = encoding
        self.connection: Final = connection
        self._task_group: Final = task_group
        self._update_lines: Final = encoding.update_lines
        self._text_chunk_end: Final = encoding.text_chunk_end
        self._message_chunk_end: Final = encoding.message_chunk_end
        self.send_line: Callable[[bytes], Awaitable[None]] = connection.line_sender
        self._try_send_line: Callable[[bytes], bool] = connection.line_try_sender
        self._record: Callable[[schema.SessionUpdate], None] = history.record
        self._record_text_chunk: Callable[[str, str], None] = _text_chunk_recorder(history)
        self._record_message_text: Callable[[str, str, bool], None] = _message_text_recorder(
            history
        )
        self._history: Final = history
        #: Terminals with buffered bytes; replaced by a fresh list on each flush.
        self.dirty_terminals: list[Flushable] = []
        #: True once the session was closed: nothing more goes out.
        self._released: bool = False
        self._replay_gate: anyio.Event | None = None
        # One flag on the hot path for the two rare reasons to hold an update back.
        self._held: bool = False
        self._setup_lines: list[bytes] | None = None
        # True while a task waits to send what the encoding has due later (flush_later).
        self._flush_timer: bool = False

    # ------------------------------------------------------------- updates

    async def send(self, update: schema.SessionUpdate) -> None:
        """Send an update (already checked, or built by acpio): admitted, recorded, encoded."""
        admitted = self._admit_now()
        if admitted is None:
            admitted = await self._admit()
        if admitted:
            self._record(update)
            for line in self._update_lines(update):
                await self.send_line(line)
            if not self._flush_timer and self.encoding.due() is not None:
                self._arm_flush()

    async def send_ending(
        self, chunk: schema.ToolCallContentChunk, patch: schema.ToolCallUpdate
    ) -> None:
        """:meth:`send` of a tool call's last content item and the patch that ends it.

        Recorded as the two updates they are; the encoding shows them as one
        update where its version can (v1: the final status with the whole content).
        """
        admitted = self._admit_now()
        if admitted is None:
            admitted = await self._admit()
        if admitted:
            self._record(chunk)
            self._record(patch)
            await self._send_lines(self.encoding.ending_lines(chunk, patch))

    async def _send_lines(self, lines: Sequence[bytes]) -> None:
        """Send lines the encoding made, in order; then arm its flush if it has one due.

        (:meth:`send` and :meth:`send_terminal_bytes` do the same inline: one
        coroutine less on their hot paths.)
        """
        for line in lines:
            await self.send_line(line)
        if not self._flush_timer and self.encoding.due() is not None:
            self._arm_flush()

    async def send_state(self, line: bytes) -> None:
        """Send a mid-turn state update (``running``, ``requires_action``), encoded as ``line``.

        Admitted as :meth:`send` admits, but not recorded: live state is never
        history (a resume reports the current state itself). The encoding's
        :meth:`~acpio._session.encoding.SessionEncoding.state_lines` go out (none
        where its version shows no states).
        """
        admitted = self._admit_now()
        if admitted is None:
            admitted = await self._admit()
        if admitted:
            for shown in self.encoding.state_lines(line):
                await self.send_line(shown)

    def try_send_state(self, line: bytes) -> bool:
        """:meth:`send_state` for the caller's own foreground work, when it needs no waiting.

        The hot path of the two state updates around every permission request:
        the caller has checked that its work is not finished, so only what
        holds updates back is checked here. False when nothing was sent and
        :meth:`send_state` is needed.
        """
        if self.dirty_terminals or self._held:
            return False
        return all(map(self._try_send_line, self.encoding.state_lines(line)))  # one line, or none

    def try_send_text_chunk(self, tool_call_id: str, line_prefix: bytes, text: str) -> bool:
        """:meth:`send_text_chunk` when it would not wait; False when nothing was done."""
        end = self._text_chunk_end
        if end is None:
            return False  # no one-line form: the encoding makes its lines (send_text_chunk)
        admitted = self._admit_now()
        if admitted is None:
            return False
        if admitted:
            if not self._try_send_line(line_prefix + _encode(text) + end):
                return False
            self._record_text_chunk(tool_call_id, text)
        return True  # sent, or dropped as send() drops it

    async def send_text_chunk(self, tool_call_id: str, line_prefix: bytes, text: str) -> None:
        """:meth:`send` of a one-text-item ``tool_call_content_chunk`` (the streaming path).

        ``line_prefix`` is the encoded line up to the text (the encoding's
        :meth:`~acpio._session.encoding.SessionEncoding.text_chunk_prefix`); the same
        checks and history record as :meth:`send`, without building the update.
        """
        admitted = self._admit_now()
        if admitted is None:
            admitted = await self._admit()
        if admitted:
            self._record_text_chunk(tool_call_id, text)
            end = self._text_chunk_end
            if end is not None:
                await self.send_line(line_prefix + _encode(text) + end)
            else:
                # (Text makes no refresh due later: nothing to arm.)
                for line in self.encoding.text_chunk_lines(tool_call_id, line_prefix, text):
                    await self.send_line(line)

    def try_send_message_text(
        self, line_prefix: bytes, message_id: str, text: str, thought: bool
    ) -> bool:
        """:meth:`send_message_text` when it would not wait; False when nothing was done."""
        admitted = self._admit_now()
        if admitted is None:
            return False
        if admitted:
            if not self._try_send_line(line_prefix + _encode(text) + self._message_chunk_end):
                return False
            self._record_message_text(message_id, text, thought)
        return True  # sent, or dropped as send() drops it

    async def send_message_text(
        self, line_prefix: bytes, message_id: str, text: str, thought: bool
    ) -> None:
        """:meth:`send` of an ``agent_message_chunk`` (``agent_thought_chunk`` when
        ``thought``) of one text block (the streaming path of a reply).

        ``line_prefix`` is the encoding's
        :meth:`~acpio._session.encoding.SessionEncoding.message_chunk_prefix`; the line is
        that prefix, the encoded text and :attr:`_message_chunk_end`, on every version.
        The same checks and history record as :meth:`send`, without building the update.
        """
        admitted = self._admit_now()
        if admitted is None:
            admitted = await self._admit()
        if admitted:
            self._record_message_text(message_id, text, thought)
            await self.send_line(line_prefix + _encode(text) + self._message_chunk_end)

    def _admit_now(self) -> bool | None:
        """Whether an update may be sent, if that is known without waiting.

        None while terminal bytes are buffered or a replay holds updates back
        (then :meth:`_admit` decides); False for an update of foreground work
        already reported idle, which is dropped; True otherwise.
        """
        if self.dirty_terminals or self._held:
            return None
        work = current_work.get()
        return work is None or not work.finished or self._drop_finished()

    async def _admit(self) -> bool:
        """Flush buffered terminal bytes and wait out a replay; then as :meth:`_admit_now`."""
        if self.dirty_terminals:
            await self.flush_terminals()
        if self._held and not await self._wait_held():
            return False
        work = current_work.get()
        return work is None or not work.finished or self._drop_finished()

    def _drop_finished(self) -> bool:
        """Drop an update of work already reported idle (logged); always False."""
        logger.debug("dropping an update of finished work in session %s", self.session_id)
        return False

    async def send_terminal_bytes(self, terminal_id: str, line_prefix: bytes, data: bytes) -> None:
        """Record bytes of an agent-side terminal in the history and send them, as the
        encoding shows them.

        ``line_prefix`` is the encoding's
        :meth:`~acpio._session.encoding.SessionEncoding.terminal_chunk_prefix`.
        No terminal flush: these are the bytes a flush sends.
        """
        self._history.record_terminal_output(terminal_id, data)
        if self._held and not await self._wait_held():
            return
        for line in self.encoding.terminal_lines(terminal_id, line_prefix, data):
            await self.send_line(line)
        if not self._flush_timer and self.encoding.due() is not None:
            self._arm_flush()

    async def _emit(self, update: schema.SessionUpdate) -> None:
        """Send an update as is: not recorded, not held back (replay and state snapshots)."""
        await self._send_lines(self._update_lines(update, replay=True))

    # ------------------------------------------------------------- terminals

    def mark_terminal_pending(
        self, terminal: Flushable, listed: list[Flushable] | None
    ) -> list[Flushable]:
        """``terminal`` has buffered bytes: they are flushed before the next update.

        ``listed`` is what this returned to the terminal last time: while it is
        still the current list, the terminal is on it already. Returns the
        current list.
        """
        dirty = self.dirty_terminals
        if listed is not dirty:
            dirty.append(terminal)
        return dirty

    async def flush_terminals(self) -> None:
        """Send every terminal's buffered bytes (before a request or an update)."""
        # A fresh list: a terminal written to during the flush marks itself dirty again.
        dirty, self.dirty_terminals = self.dirty_terminals, []
        for terminal in dirty:
            await terminal.flush()

    # ---------------------------------------------------------------- holding

    async def _wait_held(self) -> bool:
        """Wait while a replay is being sent; False when the update must be dropped."""
        while not self._released:
            gate = self._replay_gate
            if gate is None:
                return True
            await gate.wait()
        return False

    def _update_held(self) -> None:
        """Recompute :attr:`_held` after a change of the gate or of :attr:`_released`."""
        self._held = self._released or self._replay_gate is not None

    def release(self) -> None:
        """The session closed: nothing more goes out."""
        self._released = True
        self._update_held()

    async def replay(
        self,
        updates: Iterable[schema.SessionUpdate] | None,
        snapshot: Callable[[], schema.SessionUpdate],
    ) -> None:
        """Send ``updates`` (a history replay, if any), then ``snapshot()``, holding live ones.

        Live updates wait while the replay is sent, so the client never sees
        one of them overtaken by the older snapshot of the same thing.
        """
        while self._replay_gate is not None:
            await self._replay_gate.wait()
        gate = self._replay_gate = anyio.Event()
        self._update_held()
        try:
            if updates is not None:
                # The client rebuilds its view from the replay.
                self.encoding.reset()
                for update in list(updates):
                    await self._emit(update)
            await self._emit(snapshot())
        finally:
            self._replay_gate = None
            self._update_held()
            gate.set()

    @property
    def in_setup(self) -> bool:
        """True while ``session/new`` or ``session/resume`` is being answered."""
        return self._setup_lines is not None

    def hold_setup(self) -> None:
        """Hold every line of this session until :meth:`release_setup` (see the module doc)."""
        if self._setup_lines is not None:
            return
        lines: list[bytes] = []
        self._setup_lines = lines

        async def hold(line: bytes) -> None:
            lines.append(line)

        def try_hold(line: bytes) -> bool:
            lines.append(line)
            return True

        self.send_line = hold
        self._try_send_line = try_hold

    def release_setup(self) -> None:
        """The answer was queued: send what was held, in order, before anything newer."""
        lines = self._setup_lines
        if lines is None:
            return
        self._setup_lines = None
        self.send_line = self.connection.line_sender
        self._try_send_line = self.connection.line_try_sender
        for index, line in enumerate(lines):
            if not self._try_send_line(line):
                gate = anyio.Event()
                previous = self._replay_gate
                self._replay_gate = gate
                self._update_held()
                self._task_group.start_soon(self._send_held, lines[index:], gate, previous)
                return

    async def release_setup_now(self) -> None:
        """Send what was held, in order, before the answer (a v1 ``session/load``, whose
        client knows the session already and reads everything of it before the answer)."""
        lines = self._setup_lines
        if lines is None:
            return
        self._setup_lines = None
        self.send_line = self.connection.line_sender
        self._try_send_line = self.connection.line_try_sender
        for line in lines:
            await self.send_line(line)

    async def _send_held(
        self, lines: list[bytes], gate: anyio.Event, previous: anyio.Event | None
    ) -> None:
        """Send held setup lines that did not fit, then open the gate for later updates."""
        try:
            for line in lines:
                await self.send_line(line)
        except ConnectionClosed:
            pass  # the client went away: nobody is left to tell
        finally:
            if self._replay_gate is gate:
                self._replay_gate = previous
                self._update_held()
            gate.set()

    # ------------------------------------------------------------- timed flushes

    def _arm_flush(self) -> None:
        """Start the task that sends what the encoding has due later, if it has any."""
        if self._flush_timer or self._released:
            return
        due = self.encoding.due()
        if due is not None:
            self._flush_timer = True
            self._task_group.start_soon(self._flush_later, due)

    async def _flush_later(self, due: float) -> None:
        """Send the encoding's lines due at ``due`` (a rate-limited refresh), then re-arm."""
        try:
            await anyio.sleep(max(0.0, due - anyio.current_time()))
            self._flush_timer = False
            if self._held and not await self._wait_held():
                return
            for line in self.encoding.flush_due(anyio.current_time()):
                await self.send_line(line)
        except Exception:
            logger.debug("timed flush of session %s failed", self.session_id, exc_info=True)
        finally:
            self._flush_timer = False
        self._arm_flush()
