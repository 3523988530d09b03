"""One remote ACP connection: an agent served over routes, its output put on streams.

How this works: each ACP connection (an ``Acp-Connection-Id``) runs
:func:`acpio.serve` over a routed JSON-RPC connection (see
:mod:`acpio._rpc.routes`), so the agent and the JSON-RPC layer know nothing of
HTTP, and nothing the agent writes is read back. What the client sends is
handed to the agent's connection one message at a time, with the route its
answer goes on:

- the session's stream for a request carrying a session id, the
  connection's stream otherwise, and ``session/load`` answers on the
  connection's stream, as the TypeScript SDK expects;
- a session's own messages (updates, requests to the client) go on its
  stream, anything else on the connection's stream;
- over WebSocket every route is the one socket.

Each stream (:class:`Outbox`) is bounded: once a stream holds
``max_buffered_bytes`` its reader has not taken, whoever sends on a route of
that stream waits (over HTTP a session's stream holds back that session only;
its other sessions and the connection go on). A sender held back for
``stall_timeout`` seconds closes the connection. The connection also keeps
which sessions it attached (created, loaded, resumed or forked), so a message
for a session it never attached is refused (HTTP 409) until the client
reattaches it; the answers that change that are seen on their way out, on a
route of their own (:class:`_Tracked`).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import re
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable, Collection
from typing import Any, Final, Literal, cast

import anyio
import msgspec

from .._agent.agent import Agent
from .._agent.serve import _serve  # pyright: ignore[reportPrivateUsage]
from .._errors import INVALID_REQUEST, PARSE_ERROR
from .._limits import AgentLimits, RemoteLimits
from .._rpc.fd import running_loop_future_factory
from .._rpc.routes import Inbound, RouteOut
from .._rpc.scan import decode_scalar, too_deep, top_level_members
from .._store.history import SessionStore
from .._store.principal_store import PrincipalStore

__all__ = [
    "CONNECTION_ROUTE",
    "ClientMessage",
    "MessageRefused",
    "Outbox",
    "RemoteConnection",
    "ResumeRefused",
    "Route",
    "decode_client_message",
    "read_client_message",
]

logger = logging.getLogger("acpio.remote")

#: Where an outgoing message goes: the connection's stream, or a session's.
Route = str | None
CONNECTION_ROUTE: Final[Route] = None

#: Methods that attach a session to the connection when they succeed.
_ATTACHING: Final = frozenset({"session/new", "session/load", "session/resume", "session/fork"})
#: Methods that act on a session the connection must have attached.
NEEDS_ATTACHED: Final = frozenset(
    {
        "session/prompt",
        "session/cancel",
        "session/set_config_option",
        "session/set_mode",
        "session/set_model",
        "session/close",
    }
)
#: Methods whose POST must name its session in ``Acp-Session-Id`` (as the TypeScript SDK sends).
SESSION_SCOPED: Final = NEEDS_ATTACHED | {
    "session/load",
    "session/resume",
    "session/fork",
    "session/delete",
}

Id = int | str | float | None

_UNASKED: Final = object()
#: How long the connection's stream waits, at the end, for the session streams to end first.
_STREAMS_OUT_WAIT: Final = 2.0
#: Then how long the client has to read what the session streams brought.
_READ_MOMENT: Final = 0.25


class _SessionRef(msgspec.Struct):
    sessionId: object = None


class ClientMessage(msgspec.Struct):
    """The envelope fields of one JSON-RPC message: all the routing needs to read."""

    jsonrpc: object = None
    id: Id | msgspec.UnsetType = msgspec.UNSET
    method: str | None = None
    params: _SessionRef | None = None
    result: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)
    error: object = None

    @property
    def session_id(self) -> str | None:
        """``params.sessionId`` when it is a string."""
        ref = self.params
        return ref.sessionId if ref is not None and isinstance(ref.sessionId, str) else None

    @property
    def is_request(self) -> bool:
        """A method call that expects an answer."""
        return self.method is not None and self.id is not msgspec.UNSET

    @property
    def is_response(self) -> bool:
        """An answer (``result`` or ``error``) to a request."""
        return self.method is None and self.id is not msgspec.UNSET


_ENVELOPE: Final = msgspec.json.Decoder(ClientMessage)
_STATE_UPDATE: Final = b'"sessionUpdate":"state_update"'
#: Where a message carries its cursor over WebSocket: ``_meta["acp/cursor"]``.
CURSOR_KEY: Final = "acp/cursor"


#: The start of a message as this process's encoders lay it out, up to the opening brace
#: of its ``params`` or ``result`` object, which they always write last
#: (:func:`acpio._rpc.wire.notification_prefix`, ``request_tail``, and an answer's
#: ``{"jsonrpc":"2.0","id":N,"result":``).
_PARAMS_LAST: Final = re.compile(
    rb'\{"jsonrpc":"2\.0",(?:"id":-?[0-9]+,)?(?:"method":"[^"\\]*","params"|"result"):\{'
)


def with_cursor(line: bytes, cursor: str) -> bytes:
    """``line`` with ``cursor`` in its ``_meta["acp/cursor"]``: in ``params`` (made when
    absent) for a request or notification, in ``result`` for an answer, in ``error.data``
    for an error answer. A message of another shape is returned as it is.

    A message laid out as this process's encoders write it, ``params`` or ``result``
    an object and last, with no ``_meta`` anywhere, gets the member spliced in
    before its closing braces (no decoding: this is on the path of every message
    over a resumable WebSocket); any other is decoded and encoded again.
    """
    if line[-2:] == b"}}" and b'"_meta"' not in line and _PARAMS_LAST.match(line):
        member = b'"_meta":{"acp/cursor":' + _ENCODE.encode(cursor) + b"}}}"
        return line[:-2] + (member if line[-3:-2] == b"{" else b"," + member)
    try:
        message = msgspec.json.decode(line)
    except msgspec.DecodeError:
        return line
    if not isinstance(message, dict):
        return line
    fields = cast("dict[str, object]", message)
    holder: object
    if "method" in fields:
        holder = fields.setdefault("params", {})
    elif "result" in fields:
        holder = fields["result"]
    elif isinstance(fields.get("error"), dict):
        holder = cast("dict[str, object]", fields["error"]).setdefault("data", {})
    else:
        return line
    if not isinstance(holder, dict):
        return line
    target = cast("dict[str, object]", holder)
    meta = target.get("_meta")
    if isinstance(meta, dict):
        cast("dict[str, object]", meta)[CURSOR_KEY] = cursor
    else:
        target["_meta"] = {CURSOR_KEY: cursor}
    return _ENCODE.encode(fields)


_REF: Final = msgspec.json.Decoder(_SessionRef)
_ENCODE: Final = msgspec.json.Encoder()


def decode_client_message(body: bytes) -> ClientMessage | None:
    """The envelope of ``body``, or ``None`` when it is valid JSON of another shape.

    Raises :class:`msgspec.DecodeError` (not its ``ValidationError`` subclass)
    for text that is not JSON at all. Checks neither nesting nor ids: what
    comes from a client goes through :func:`read_client_message`.
    """
    try:
        return _ENVELOPE.decode(body)
    except msgspec.ValidationError:
        msgspec.json.decode(body)  # raises DecodeError when it is not JSON at all
        return None


class MessageRefused(Exception):
    """A client message refused before it reaches the agent, and how to answer it.

    ``code`` and ``text`` make the JSON-RPC error; ``request_id`` is the id
    it is answered with (the request's own when it could be read, else
    ``None``); ``answered`` is ``False`` for a message JSON-RPC does not
    answer (a notification, or a response). ``agent_error`` is, for a
    response to one of the agent's requests, the error response the agent
    is given in its place, so that request fails now instead of waiting.
    """

    def __init__(
        self,
        code: int,
        text: str,
        *,
        request_id: int | str | None = None,
        answered: bool = True,
        agent_error: bytes | None = None,
    ) -> None:
        super().__init__(text)
        self.code = code
        self.text = text
        self.request_id = request_id
        self.answered = answered
        self.agent_error = agent_error

    @property
    def line(self) -> bytes:
        """The JSON-RPC error response."""
        return error_line(self.request_id, self.code, self.text)


_BAD_ID: Final = "Invalid request: the id must be an integer or a string"


def read_client_message(body: bytes, max_depth: int) -> ClientMessage:
    """The envelope of one message from a client, checked before the agent sees it.

    Arrays and objects nested more than ``max_depth`` levels anywhere in it
    (a prompt, an answer's ``result``) are found by a byte scan before any
    decoding (the decoder recurses once per level); an ``id`` that is neither
    an integer nor a string (``1.0``, an object; ``null`` outside an error
    answer) is refused.

    :raises MessageRefused: with the answer (``-32700`` for text that is not
        JSON, ``-32600`` otherwise).
    """
    # Fewer bytes than twice the limit cannot open more levels than the limit.
    if len(body) > 2 * max_depth and too_deep(body, max_depth):
        raise _too_deep(body, max_depth)
    try:
        message = _ENVELOPE.decode(body)
    except msgspec.ValidationError:
        raise _wrong_shape(body) from None
    except msgspec.DecodeError:
        raise MessageRefused(PARSE_ERROR, "Parse error: the message is not valid JSON") from None
    except RecursionError:  # only when max_depth is beyond what the decoder can take
        raise _too_deep(body, max_depth) from None
    request_id = message.id
    if (
        request_id is not msgspec.UNSET
        and type(request_id) is not int
        and type(request_id) is not str
        and not (request_id is None and message.error is not None)
    ):
        raise MessageRefused(INVALID_REQUEST, _BAD_ID)
    return message


def _too_deep(body: bytes, max_depth: int) -> MessageRefused:
    text = f"Invalid request: the message is nested deeper than the limit of {max_depth} levels"
    scanned = top_level_members(body)
    members = scanned[0] if scanned is not None else {}
    request_id = decode_scalar(members.get("id"))
    valid_id = request_id if type(request_id) is int or type(request_id) is str else None
    if "method" in members:
        return MessageRefused(INVALID_REQUEST, text, request_id=valid_id, answered="id" in members)
    if valid_id is not None and ("result" in members or "error" in members):
        answer = f"the client's answer was refused: nested deeper than {max_depth} levels"
        return MessageRefused(
            INVALID_REQUEST,
            text,
            answered=False,
            agent_error=error_line(valid_id, INVALID_REQUEST, answer),
        )
    return MessageRefused(INVALID_REQUEST, text)


def _wrong_shape(body: bytes) -> MessageRefused:
    try:
        value: object = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return MessageRefused(PARSE_ERROR, "Parse error: the message is not valid JSON")
    if isinstance(value, list):
        return MessageRefused(INVALID_REQUEST, "JSON-RPC batches are not supported")
    if isinstance(value, dict):
        request_id = cast("dict[str, object]", value).get("id", 0)
        if type(request_id) is not int and type(request_id) is not str:
            return MessageRefused(INVALID_REQUEST, _BAD_ID)
    return MessageRefused(INVALID_REQUEST, "Invalid request: expected a JSON-RPC message object")


def error_line(request_id: Id, code: int, message: str) -> bytes:
    """A JSON-RPC error response, encoded."""
    return _ENCODE.encode(
        {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    )


class ResumeRefused(Exception):
    """A cursor a stream cannot resume from; ``reason`` names why (see ``docs/remote.md``).

    ``reason`` is one of ``unknown_connection`` (the connection is gone, or is
    another principal's), ``unknown_cursor`` (not a cursor of this stream:
    malformed, or another stream's), ``expired`` (older than the retention),
    ``busy`` (the stream still has a reader).
    """

    def __init__(self, reason: str, text: str) -> None:
        super().__init__(f"{reason}: {text}")
        self.reason = reason
        self.text = text


class _Wakeup:
    """One task's wait for :meth:`set`: a bare future on asyncio (an anyio event costs
    several times more to make), an anyio event elsewhere. Setting it twice is harmless.

    ``futures`` makes futures of the running asyncio loop (``None``: not on asyncio).
    """

    __slots__ = ("_event", "_future")

    def __init__(self, futures: Callable[[], Any] | None) -> None:
        self._future: Any = futures() if futures is not None else None
        self._event = anyio.Event() if futures is None else None

    def set(self) -> None:
        """Let the waiter go on (now or when it waits)."""
        future = self._future
        if future is None:
            assert self._event is not None
            self._event.set()
        elif not future.done():
            future.set_result(None)

    async def wait(self) -> None:
        """Wait until :meth:`set` was called."""
        if self._future is None:
            assert self._event is not None
            await self._event.wait()
        else:
            await self._future


_NOT_YET: Final = object()


class Outbox:
    """The messages of one stream: those waiting for its reader, and those kept to resume.

    Every message pushed gets the next sequence number of the stream; its
    cursor (:meth:`cursor`) is the stream's tag and that number, opaque to
    clients, increasing within the stream and the same when replayed. At
    most one receiver holds the stream at a time (:meth:`acquire`); a second
    gets ``False``, which the HTTP layer answers 409. Messages pushed while
    no receiver holds it wait for the next one (``buffered`` counts their
    bytes). A message a receiver took is kept while it is among the last
    ``retention_messages`` taken and younger than ``retention_seconds``, so
    :meth:`rewind` can hand it out again after a cursor: every message after
    the cursor, in order, once. Closing it ends the receiver's stream after
    what is queued.
    """

    def __init__(
        self,
        on_release: Callable[[Outbox], None] | None = None,
        *,
        retention_messages: int = 0,
        retention_seconds: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._queue: list[bytes] = []
        self.buffered: int = 0
        self.has_receiver: bool = False
        self.closed: bool = False
        # Made by whoever waits (an idle stream holds none: each costs about 1 KiB).
        self._ready: _Wakeup | None = None
        self._futures: object = _NOT_YET  # what makes a waiter (known once the reader waits)
        self._room: anyio.Event | None = None
        self._released: anyio.Event | None = None
        self._let_go: anyio.Event | None = None
        self.waiting: int = 0
        self._on_release = on_release
        #: The scope of the receiver's sending, cancelled when a client resuming takes over.
        self.reader_scope: anyio.CancelScope | None = None
        #: Writes a batch to the receiver from any task (set while a WebSocket holds the
        #: stream), so that :meth:`write_queued` can write without a hand-off.
        self.writer: Callable[[list[bytes]], Awaitable[None]] | None = None
        #: True while a batch is being written: no second writer starts meanwhile.
        self.writing: bool = False
        self._write_scope: anyio.CancelScope | None = None
        #: The stream's part of every cursor: a cursor of another stream never matches.
        self.tag: str = secrets.token_urlsafe(6)
        self._keep = retention_messages
        self._keep_for = retention_seconds
        self._clock = clock
        # Taken messages kept to resume from, with the time each was taken; the first
        # has sequence number ``_kept_first``, the first of ``_queue`` ``_sent``.
        self._kept: deque[tuple[float, bytes]] = deque()
        self._kept_first: int = 1
        self._sent: int = 1

    @property
    def next_sequence(self) -> int:
        """The sequence number the next message pushed gets."""
        return self._sent + len(self._queue)

    def cursor(self, sequence: int) -> str:
        """The cursor of the message with this sequence number."""
        return f"{self.tag}.{sequence}"

    def push(self, line: bytes) -> None:
        """Queue one message (its JSON text, no newline)."""
        if self.closed:
            return
        self._queue.append(line)
        self.buffered += len(line)
        if self._ready is not None and not self.writing:
            self._ready.set()

    def acquire(self) -> bool:
        """Become this stream's receiver; ``False`` when it already has one."""
        if self.has_receiver:
            return False
        self.has_receiver = True
        return True

    async def acquire_within(self, seconds: float) -> bool:
        """:meth:`acquire`, waiting up to ``seconds`` for a receiver that is leaving.

        A client that reopens a stream may do so before the server saw the
        previous request's disconnect.
        """
        self.waiting += 1
        try:
            with anyio.move_on_after(seconds):
                while not self.acquire():
                    released = self._released = anyio.Event()
                    await released.wait()
                return True
            return False
        finally:
            self.waiting -= 1

    def drop_reader(self) -> None:
        """Make the receiver stop (a client resuming says the one it left is gone; a
        half-open connection is never seen closing); it releases the stream as it ends."""
        if self.has_receiver and self.reader_scope is not None:
            self.reader_scope.cancel()
        self._stop_writer()

    def release(self) -> None:
        """Stop being the receiver; what is queued waits for the next one."""
        self.has_receiver = False
        self.reader_scope = None
        self._stop_writer()
        if self._released is not None:
            self._released.set()
        if self._let_go is not None:
            self._let_go.set()
        if self._on_release is not None:
            self._on_release(self)

    async def wait_let_go(self) -> None:
        """Return once no receiver holds the stream (after :meth:`close`: it took the end)."""
        while self.has_receiver:
            if self._let_go is None or self._let_go.is_set():
                self._let_go = anyio.Event()
            await self._let_go.wait()

    def take_now(self) -> tuple[int, list[bytes]]:
        """Everything queued (maybe nothing), with the sequence number of the first."""
        batch = self._queue
        first = self._sent
        if not batch:
            return first, batch
        self._queue = []
        self.buffered = 0
        self._sent = first + len(batch)
        if self._keep:
            now = self._clock()
            self._kept.extend([(now, line) for line in batch])
            self._trim(now)
        else:
            self._kept_first = self._sent
        if self._room is not None:
            self._room.set()
            self._room = None
        return first, batch

    async def take_numbered(self) -> tuple[int, list[bytes]] | None:
        """:meth:`take_now`, waiting for at least one message and for no batch to be being
        written; ``None`` once closed and empty."""
        while not self._queue or self.writing:
            if self.closed and not self._queue:
                return None
            futures = self._futures
            if futures is _NOT_YET:
                futures = self._futures = running_loop_future_factory()
            ready = self._ready = _Wakeup(cast("Callable[[], Any] | None", futures))
            await ready.wait()
        return self.take_now()

    async def take(self) -> list[bytes] | None:
        """Everything queued, waiting for at least one message; ``None`` once closed and empty."""
        taken = await self.take_numbered()
        return None if taken is None else taken[1]

    async def take_to_write(self) -> list[bytes] | None:
        """:meth:`take`, and the right to write the batch: no other batch is written until
        the caller's :meth:`done_writing`, so the receiver gets every message in order."""
        batch = await self.take()
        if batch is not None:
            self.writing = True
        return batch

    def done_writing(self) -> None:
        """The batch of :meth:`take_to_write` or :meth:`write_queued` was written (or given
        up): whatever was queued meanwhile goes to the next writer."""
        self.writing = False
        if self._ready is not None:
            self._ready.set()

    async def write_queued(self) -> bool:
        """Write what is queued now with :attr:`writer`, in the caller's task; False (nothing
        done) when no writer is attached, a batch is being written or nothing is queued.

        A task that has just queued the end of something (a turn's idle) calls it, so
        that the end goes out before the other tasks ready to run take their turn,
        without waking the receiver's task. What it took counts as sent (it is kept to
        resume from, as the receiver's batches are); the write stops when the receiver
        is dropped or released (the socket is gone or taken over).
        """
        writer = self.writer
        if writer is None or self.writing or not self._queue:
            return False
        self.writing = True
        try:
            batch = self.take_now()[1]
            with anyio.CancelScope() as scope:
                self._write_scope = scope
                await writer(batch)
        finally:
            self._write_scope = None
            self.done_writing()
        return True

    def _stop_writer(self) -> None:
        if self._write_scope is not None:
            self._write_scope.cancel()

    def _trim(self, now: float) -> None:
        kept = self._kept
        oldest = now - self._keep_for
        while kept and (len(kept) > self._keep or kept[0][0] < oldest):
            kept.popleft()
            self._kept_first += 1

    def rewind(self, cursor: str) -> None:
        """Hand out again every message after ``cursor`` (the last one the client processed;
        empty: none).

        :raises ResumeRefused: ``unknown_cursor`` for a cursor that is not this
            stream's (or names a message not sent yet), ``expired`` when the
            messages after it are no longer all kept.
        """
        if not cursor:  # the client processed none of this stream's messages
            cursor = self.cursor(0)
        tag, _, number = cursor.rpartition(".")
        if tag != self.tag or not number.isdigit() or len(number) > 18:
            raise ResumeRefused("unknown_cursor", f"{cursor!r} is not a cursor of this stream")
        after = int(number) + 1
        if after > self._sent:
            raise ResumeRefused(
                "unknown_cursor", f"{cursor!r} names a message this stream has not sent"
            )
        self._trim(self._clock())
        if after < self._kept_first:
            raise ResumeRefused(
                "expired",
                f"the messages after {cursor!r} are no longer kept (this stream keeps the last "
                f"{self._keep} messages for {self._keep_for:g}s); reattach the session "
                "with session/resume (v2) or session/load (v1)",
            )
        if after == self._sent:
            return
        skip = after - self._kept_first
        again = [line for _, line in itertools.islice(self._kept, skip, None)]
        for _ in again:
            self._kept.pop()
        self._queue[:0] = again
        self.buffered += sum(len(line) for line in again)
        self._sent = after
        if self._ready is not None:
            self._ready.set()

    async def wait_for_room(self, limit: int) -> None:
        """Return once at most ``limit`` bytes are queued (or the outbox is closed).

        Any number of senders may wait (over WebSocket every route is one stream).
        """
        while self.buffered > limit and not self.closed:
            await self.wait_taken()

    async def wait_taken(self) -> None:
        """Return at the next take, :meth:`close` or :meth:`wake_senders`."""
        room = self._room
        if room is None:
            room = self._room = anyio.Event()
        await room.wait()

    def wake_senders(self) -> None:
        """Wake whoever waits in :meth:`wait_taken` (to look again at why it waits)."""
        if self._room is not None:
            self._room.set()
            self._room = None

    def close(self) -> None:
        """No more messages; the receiver gets what is queued, then the end."""
        self.closed = True
        for event in (self._ready, self._room):
            if event is not None:
                event.set()
        self._room = None

    def discard(self) -> None:
        """Close and drop what is queued and kept (the connection is gone)."""
        self._queue.clear()
        self._kept.clear()
        self.buffered = 0
        self._stop_writer()
        self.close()


class _StreamRoute:
    """A route of the connection (``None``, or a session's id) as the agent sends on it.

    Lines go on the route's stream in the order sent: a sender that must wait
    for room holds back every later sender of the route (first come, first
    served), and waits at most ``stall_timeout`` seconds before the connection
    is closed as stalled. Once the connection is closing nothing waits.
    """

    __slots__ = ("_connection", "_lock", "_route", "_waiting")

    def __init__(self, connection: RemoteConnection, route: str | None) -> None:
        self._connection = connection
        self._route = route
        self._waiting = 0
        self._lock: anyio.Lock | None = None

    def try_put(self, line: bytes) -> bool:
        """Queue ``line`` (one or more messages, each ending in ``\n``) if there is room."""
        connection = self._connection
        if connection.closed:
            return True  # the client is gone: nothing more is kept for it
        if self._waiting or (
            connection.stream_of(self._route).buffered > connection.stream_limit
            and not connection.closing
        ):
            return False
        connection.deliver_lines(self._route, line)
        return True

    def put_nowait(self, line: bytes) -> bool:
        """Queue ``line`` whatever the room (a ``$/cancel_request``)."""
        self._connection.deliver_lines(self._route, line)
        return True

    async def write_queued(self) -> bool:
        """Write the connection's queued messages in the caller's task when a WebSocket
        carries them (:meth:`Outbox.write_queued`); True when it wrote. (An SSE stream's
        receiver frames its batches itself.)"""
        connection = self._connection
        if connection.closed or connection.transport != "websocket":
            return False
        return await connection.connection_stream.write_queued()

    async def put(self, line: bytes) -> None:
        """Queue ``line``, first waiting (in turn) for room on the route's stream."""
        if self.try_put(line):
            return
        self._waiting += 1
        try:
            lock = self._lock
            if lock is None:
                lock = self._lock = anyio.Lock()
            async with lock:
                await self._connection.wait_for_room(self._route)
                self._connection.deliver_lines(self._route, line)
        finally:
            self._waiting -= 1


class _Tracked:
    """The route of a client request whose answer changes what the connection holds.

    ``initialize`` (its answer advertises the transport's capabilities; over
    HTTP it is the POST's answer, kept in ``answer``), ``session/new``,
    ``load``, ``resume`` and ``fork`` (a success attaches the session),
    ``session/close`` (a success detaches it), and any request that holds
    one of the registry's session slots until answered (``reserved``). Its
    answer is seen once, on its way to ``route``.
    """

    __slots__ = ("_connection", "answer", "answered", "method", "reserved", "route", "session_id")

    def __init__(
        self,
        connection: RemoteConnection,
        route: str | None,
        method: str,
        session_id: str | None,
        *,
        reserved: bool,
        answered: anyio.Event | None = None,
    ) -> None:
        self._connection = connection
        self.route: str | None = route
        self.method: str = method
        self.session_id: str | None = session_id
        self.reserved: bool = reserved
        #: Set when the answer is kept (``answer``) rather than put on a stream.
        self.answered: anyio.Event | None = answered
        self.answer: bytes | None = None

    def try_put(self, line: bytes) -> bool:
        """Note the answer, then queue it on its stream (never waits)."""
        self.put_nowait(line)
        return True

    def put_nowait(self, line: bytes) -> bool:
        """Note the answer, then queue it on its stream."""
        kept = self._connection.note_answer(self, line)
        if kept is not None:
            self._connection.deliver_lines(self.route, kept)
        return True

    async def put(self, line: bytes) -> None:
        """Note the answer, then queue it on its stream once there is room."""
        kept = self._connection.note_answer(self, line)
        if kept is not None:
            await self._connection.out(self.route).put(kept)


Transport = Literal["http", "websocket"]


class RemoteConnection:
    """One ACP connection of the remote server: its agent, its streams and its routes.

    Invariant: every message the agent sends reaches exactly one stream (or
    is dropped after the client closed the connection), in the order sent on
    its route; every message the client sends reaches the agent in the order
    the transport delivered it. It is the agent connection's
    :class:`acpio.rpc.Routes`.
    """

    __slots__ = (
        "_agent",
        "_agent_limits",
        "_agent_stop",
        "_finished",
        "_input_closed",
        "_limits",
        "_registry",
        "_routes",
        "_rpc",
        "_rpc_ready",
        "_send_lock",
        "_socket_changed",
        "_stop",
        "_store",
        "_tracked",
        "active_requests",
        "attached",
        "close_reason",
        "closed",
        "closing",
        "connection_stream",
        "finished",
        "id",
        "last_activity",
        "principal",
        "reports_states",
        "reserved",
        "session_streams",
        "socket_generation",
        "states",
        "stream_limit",
        "transport",
    )

    def __init__(
        self,
        agent: Agent,
        transport: Transport,
        *,
        store: SessionStore | None,
        agent_limits: AgentLimits,
        limits: RemoteLimits,
        registry: ConnectionRegistry,
        principal: str | None = None,
        connection_id: str | None = None,
    ) -> None:
        self.id: str = connection_id or secrets.token_urlsafe(24)
        self.transport: Transport = transport
        #: Who opened the connection (``None``: no principal, every session); its
        #: agent sees only this principal's sessions.
        self.principal: str | None = principal
        self._agent = agent
        self._store = (
            PrincipalStore(store, principal)
            if store is not None and principal is not None
            else store
        )
        self._agent_limits = agent_limits
        self._limits = limits
        self._registry = registry
        #: The agent's JSON-RPC connection, once it was entered (``attach``).
        self._rpc: Inbound | None = None
        self._rpc_ready: anyio.Event | None = None
        self.connection_stream: Outbox = self._new_outbox()
        #: How many bytes a stream holds for its reader before senders on it wait.
        self.stream_limit: int = limits.max_buffered_bytes
        self._routes: dict[str | None, _StreamRoute] = {}
        self.session_streams: dict[str, Outbox] = {}
        #: The last ``state_update`` each session sent (v2), re-sent after a resume.
        self.states: dict[str, bytes] = {}
        #: Whether the agent's sessions report ``state_update`` (told by the shape of its
        #: ``initialize`` answer: ``capabilities``, where v1's has ``agentCapabilities``).
        self.reports_states: bool = False
        #: Bumped each time a WebSocket attaches to the connection (first, or resuming).
        self.socket_generation: int = 0
        self._socket_changed: anyio.Event | None = None
        self.attached: set[str] = set()
        #: Session slots of the registry held by requests not answered yet.
        self.reserved: int = 0
        #: Requests whose answers change what the connection holds, not answered yet.
        self._tracked: dict[_Tracked, None] = {}
        # Over WebSocket one task sends (the socket's reader): no lock needed.
        self._send_lock = anyio.Lock() if transport == "http" else None
        #: No more client input reaches the agent (it saw the end of its input).
        self._input_closed: bool = False
        self.closing: bool = False
        self.closed: bool = False
        #: True once the connection ended (:meth:`wait_finished`).
        self.finished: bool = False
        self._finished: anyio.Event | None = None
        # Stops the idle watch (HTTP only: a socket's connection ends with its socket).
        self._stop = anyio.CancelScope() if transport == "http" else None
        self._agent_stop = anyio.CancelScope()
        self.last_activity: float = anyio.current_time()
        self.active_requests: int = 0
        self.close_reason: str | None = None

    # -- running ---------------------------------------------------------------

    async def run(self) -> None:
        """Serve the agent until it has ended."""
        try:
            if self.transport == "http":
                async with anyio.create_task_group() as group:
                    group.start_soon(self._watch_idle)
                    await self._serve_agent()
            else:  # (a socket's connection ends with its socket: nothing to watch)
                await self._serve_agent()
        finally:
            self.closing = self.closed = True
            self._input_closed = True
            self._wake_senders()
            for outbox in self.session_streams.values():
                outbox.close()
            # The SDK's HTTP client takes the end of the connection's stream for the end of
            # everything, dropping what it has not yet read of the session streams: that
            # stream ends once they went out, and their client had a moment to read them.
            read = [o for o in self.session_streams.values() if o.has_receiver]
            if read and not self.connection_stream.closed:
                with anyio.CancelScope(shield=True), anyio.move_on_after(_STREAMS_OUT_WAIT):
                    for outbox in read:
                        await outbox.wait_let_go()
                    await anyio.sleep(_READ_MOMENT)
            self.connection_stream.close()
            self._registry.forget(self)
            self.finished = True
            if self._finished is not None:
                self._finished.set()

    async def _serve_agent(self) -> None:
        try:
            await _serve(
                self._agent,
                self,
                store=self._store,
                limits=self._agent_limits,
                stop=self._agent_stop,
            )
        except Exception:
            logger.exception("the agent of connection %s failed", self.id)
        finally:
            self._input_closed = True
            self._wake_senders()
            if self._stop is not None:
                self._stop.cancel()

    async def wait_finished(self) -> None:
        """Return once the connection ended (its agent stopped, its streams closed)."""
        if not self.finished:
            if self._finished is None:
                self._finished = anyio.Event()
            await self._finished.wait()

    def _wake_senders(self) -> None:
        if self._rpc_ready is not None:
            self._rpc_ready.set()
            self._rpc_ready = None

    async def _watch_idle(self) -> None:
        assert self._stop is not None
        with self._stop:
            while True:
                limits = self._limits
                await anyio.sleep(min(limits.idle_timeout, 30.0) / 2)
                if self.closed:
                    return
                busy = self.active_requests > 0 or self.connection_stream.has_receiver
                busy = busy or any(o.has_receiver for o in self.session_streams.values())
                if busy:
                    self.last_activity = anyio.current_time()
                elif anyio.current_time() - self.last_activity > self._limits.idle_timeout:
                    logger.info("closing idle connection %s", self.id)
                    await self.close("idle timeout", discard=True)
                    return

    # -- routes (the agent connection's side) ------------------------------------

    def attach(self, connection: Inbound) -> None:
        """Take the agent's JSON-RPC connection (called once, as it is entered)."""
        self._rpc = connection
        if self._input_closed:
            connection.end_input("the client closed the connection")
        self._wake_senders()

    def out(self, route: object) -> RouteOut:
        """Where the agent's messages on ``route`` go: a stream's route (``None``, a
        session's id), or a :class:`_Tracked` request's answer route."""
        if type(route) is _Tracked:
            return route
        key = cast("str | None", route)
        routed = self._routes.get(key)
        if routed is None:
            routed = self._routes[key] = _StreamRoute(self, key)
        return routed

    def stream_of(self, route: Route) -> Outbox:
        """The stream that carries ``route`` (over WebSocket, always the connection's)."""
        if route is None or self.transport == "websocket":
            return self.connection_stream
        return self.session_stream(route)

    async def wait_for_room(self, route: Route) -> None:
        """Return once the stream of ``route`` has room; past ``stall_timeout`` seconds,
        close the connection as stalled (and return)."""
        if self.closing:
            return
        outbox = self.stream_of(route)
        with anyio.move_on_after(self._limits.stall_timeout):
            while outbox.buffered > self.stream_limit and not (self.closing or outbox.closed):
                await outbox.wait_taken()
            return
        logger.warning(
            "closing connection %s: its client read no output for %.0fs",
            self.id,
            self._limits.stall_timeout,
        )
        await self.close("output stalled")

    def deliver_lines(self, route: Route, lines: bytes) -> None:
        """:meth:`deliver` each message of ``lines`` (each ends in a newline)."""
        end = lines.find(b"\n")
        if end == len(lines) - 1:
            self.deliver(route, lines[:end])
            return
        for line in lines.split(b"\n"):
            if line:
                self.deliver(route, line)

    def note_answer(self, tracked: _Tracked, lines: bytes) -> bytes | None:
        """Note what the answer to ``tracked`` changed; the lines to put on its stream
        (``None``: kept as the POST's answer)."""
        self._tracked.pop(tracked, None)
        line = lines.rstrip(b"\n")
        try:
            message: ClientMessage | None = _ENVELOPE.decode(line)
        except msgspec.DecodeError:
            message = None
        if tracked.method == "initialize":
            line = self._advertise(line)
            if tracked.answered is not None:
                tracked.answer = line
                tracked.answered.set()
                return None
            return line + b"\n"
        attached = (
            message is not None and message.error is None and self._note_success(tracked, message)
        )
        if tracked.reserved:
            tracked.reserved = False
            self.reserved -= 1
            if not attached:  # the slot held for it goes back
                self._registry.sessions -= 1
        return lines

    def _note_success(self, tracked: _Tracked, message: ClientMessage) -> bool:
        """Note what a successful answer changed; True when it attached a session."""
        if tracked.method == "session/close" and tracked.session_id is not None:
            if tracked.session_id in self.attached:
                self.attached.discard(tracked.session_id)
                self._registry.sessions -= 1
                self._routes.pop(tracked.session_id, None)
            return False
        if tracked.method not in _ATTACHING:
            return False
        session_id = tracked.session_id
        if session_id is None and message.result:
            try:
                ref = _REF.decode(message.result)
            except msgspec.DecodeError:
                ref = _SessionRef()
            session_id = ref.sessionId if isinstance(ref.sessionId, str) else None
        if session_id is not None and session_id not in self.attached:
            self.attached.add(session_id)
            if not tracked.reserved:  # (always reserved when the app admitted it)
                self._registry.sessions += 1
            return True
        return False

    def deliver(self, route: Route, line: bytes) -> Outbox | None:
        """Queue ``line`` (one message, no newline) on the stream for ``route``; the
        outbox it went to, if any (none once the client closed the connection)."""
        if self.closed:
            return None
        if route is not None and self.reports_states and _STATE_UPDATE in line:
            self.states[route] = line
        if self.transport == "websocket":
            outbox = self.connection_stream
            if self._limits.resumable:
                line = with_cursor(line, outbox.cursor(outbox.next_sequence))
        elif route is None:
            outbox = self.connection_stream
        else:
            outbox = self.session_stream(route)
        outbox.push(line)
        return outbox

    def session_stream(self, session_id: str) -> Outbox:
        """The stream of ``session_id``, made on first use."""
        outbox = self.session_streams.get(session_id)
        if outbox is None:
            outbox = self._new_outbox(self._maybe_forget_stream)
            self.session_streams[session_id] = outbox
        return outbox

    def _new_outbox(self, on_release: Callable[[Outbox], None] | None = None) -> Outbox:
        return Outbox(
            on_release,
            retention_messages=self._limits.retention_messages,
            retention_seconds=self._limits.retention_seconds,
        )

    def socket_attached(self) -> None:
        """Note that a WebSocket attached (the first, or one that resumed)."""
        self.socket_generation += 1
        if self._socket_changed is not None:
            self._socket_changed.set()

    async def wait_socket_attached(self, generation: int) -> None:
        """Return once a socket attached after ``generation``, or the connection is closing."""
        while self.socket_generation == generation and not self.closing:
            changed = self._socket_changed = anyio.Event()
            await changed.wait()

    def state_lines(self, session_ids: Collection[str]) -> list[bytes]:
        """The current ``state_update`` of each session (none where sessions report no state,
        as on v1), to send after a resume.

        The last one the session sent, or ``idle`` for a session that reported none.
        """
        if not self.reports_states:
            return []
        lines: list[bytes] = []
        for session_id in session_ids:
            line = self.states.get(session_id)
            if line is None:
                line = _ENCODE.encode(
                    {
                        "jsonrpc": "2.0",
                        "method": "session/update",
                        "params": {
                            "sessionId": session_id,
                            "update": {"sessionUpdate": "state_update", "state": "idle"},
                        },
                    }
                )
            lines.append(line)
        return lines

    def _advertise(self, line: bytes) -> bytes:
        """The ``initialize`` answer with ``capabilities.transport.resumable`` (v1:
        ``agentCapabilities``), and whether sessions report their state noted."""
        try:
            answer: object = msgspec.json.decode(line)
        except msgspec.DecodeError:
            return line
        if not isinstance(answer, dict):
            return line
        result = cast("dict[str, object]", answer).get("result")
        if not isinstance(result, dict):
            return line
        fields = cast("dict[str, object]", result)
        self.reports_states = "agentCapabilities" not in fields
        if not self._limits.resumable:
            return line
        key = "capabilities" if self.reports_states else "agentCapabilities"
        capabilities = fields.setdefault(key, {})
        if not isinstance(capabilities, dict):
            return line
        transport = cast("dict[str, object]", capabilities).setdefault("transport", {})
        if not isinstance(transport, dict):
            return line
        seconds = self._limits.retention_seconds
        cast("dict[str, object]", transport)["resumable"] = {
            "retentionMessages": self._limits.retention_messages,
            "retentionSeconds": int(seconds) if seconds == int(seconds) else seconds,
        }
        return _ENCODE.encode(answer)

    def _maybe_forget_stream(self, outbox: Outbox) -> None:
        for session_id, existing in list(self.session_streams.items()):
            if (
                existing is outbox
                and not outbox.buffered
                and not outbox.waiting
                and session_id not in self.attached
                and not self._awaiting_attach(session_id)
            ):
                del self.session_streams[session_id]

    def _awaiting_attach(self, session_id: str) -> bool:
        return any(t.session_id == session_id for t in self._tracked)

    # -- input -------------------------------------------------------------------

    async def initialize(self, message: ClientMessage, body: bytes) -> bytes | None:
        """Send the ``initialize`` request and return the agent's answer (``None``: it closed)."""
        done = anyio.Event()
        route = _Tracked(self, None, "initialize", None, reserved=False, answered=done)
        with contextlib.suppress(anyio.ClosedResourceError):
            await self.send_line(body, route)
            async with anyio.create_task_group() as group:

                async def ended() -> None:
                    await self.wait_finished()
                    group.cancel_scope.cancel()

                group.start_soon(ended)
                await done.wait()
                group.cancel_scope.cancel()
        return route.answer

    def admit_session(self, message: ClientMessage) -> bool | None:
        """Count a request that may attach a session (``session/new``, ``load``,
        ``resume``, ``fork``) against the server's session limit now, before it is
        answered: True when counted, ``None`` when there is nothing to count (its
        session is attached here already), False (nothing counted) when the server
        is full. Pass the answer to :meth:`track_request` as ``reserved``.

        The slot is the session's once it attached, and given back when the
        request fails or attached nothing new.
        """
        if message.session_id in self.attached:
            return None
        if not self._registry.reserve():
            return False
        self.reserved += 1
        return True

    def answer_route(
        self, message: ClientMessage, route: Route, *, reserved: bool | None = None
    ) -> object:
        """The route the agent answers ``message`` on (give it to :meth:`send_line`): the
        stream of ``route`` (``session/load``: the connection's), seen on the way when
        the answer changes what the connection holds (and the session slot
        :meth:`admit_session` counted for it, when ``reserved``)."""
        if not message.is_request:
            return route
        method = message.method
        answer_route = CONNECTION_ROUTE if method == "session/load" else route
        if reserved or method in _ATTACHING or method in ("session/close", "initialize"):
            assert method is not None
            tracked = _Tracked(
                self, answer_route, method, message.session_id, reserved=bool(reserved)
            )
            self._tracked[tracked] = None
            return tracked
        return answer_route

    def response_route(self, message: ClientMessage) -> tuple[bool, Route]:
        """Whether the agent asked what ``message`` answers, and on which route it asked."""
        if self._rpc is None:
            return False, CONNECTION_ROUTE
        asked, route = self._rpc.asked(message.id)
        return asked, cast("Route", route)

    async def fail_client_answer(self, line: bytes) -> None:
        """Give the agent ``line``, an error response, in place of a client answer refused.

        Only when the agent asked what it answers; the request then fails now.
        """
        message = _ENVELOPE.decode(line)
        if self.response_route(message)[0]:
            await self.send_line(line)

    def answer_locally(self, message: ClientMessage, route: Route, code: int, text: str) -> None:
        """Answer a client request with an error without the agent (a limit of the server)."""
        if message.is_request:
            self.deliver(route, error_line(message.id, code, text))  # type: ignore[arg-type]

    async def send_line(self, body: bytes, route: object = CONNECTION_ROUTE) -> None:
        """Hand one client message to the agent; a request's answer goes on ``route``
        (from :meth:`answer_route`).

        :raises anyio.ClosedResourceError: once the agent takes no more input.
        """
        if b"\n" in body or b"\r" in body:
            body = body.replace(b"\r", b" ").replace(b"\n", b" ")
        if self._stop is not None:  # (only HTTP connections are watched for idleness)
            self.last_activity = anyio.current_time()
        if self._input_closed:
            raise anyio.ClosedResourceError
        rpc = self._rpc
        if rpc is None:
            rpc = await self._agent_ready()
        if self._send_lock is None:
            await rpc.receive_message(body, route)
            return
        async with self._send_lock:
            if self._input_closed:
                raise anyio.ClosedResourceError
            await rpc.receive_message(body, route)

    async def _agent_ready(self) -> Inbound:
        """The agent's connection, once it was entered."""
        while self._rpc is None and not self._input_closed:
            ready = self._rpc_ready
            if ready is None:
                ready = self._rpc_ready = anyio.Event()
            await ready.wait()
        if self._input_closed or self._rpc is None:
            raise anyio.ClosedResourceError
        return self._rpc

    async def close(self, reason: str, *, discard: bool = False, graceful: bool = False) -> None:
        """End the connection: the agent sees end of input, reports, and stops.

        No new input is taken from then on. Running turns are cancelled and
        reported on their streams, which end after that; with ``discard``
        (the client closed the connection itself) what remains is dropped.
        With ``graceful`` (the server shuts down) the agent's input stays
        open until it has reported, so requests in progress are answered as
        their handlers end them (a v1 prompt ``cancelled``), not as requests
        cut off by the end of input.
        """
        if discard and not self.closed:
            self.closed = True
            self.connection_stream.discard()
            for outbox in self.session_streams.values():
                outbox.discard()
        if self.closing:
            return
        self.closing = True
        self.close_reason = reason
        for outbox in (self.connection_stream, *self.session_streams.values()):
            outbox.wake_senders()
        if graceful and not self.closed:
            self._agent_stop.cancel()
        else:
            self._input_closed = True
            if self._rpc is not None:
                self._rpc.end_input("the client closed the connection")
            self._wake_senders()

    @property
    def session_count(self) -> int:
        """Sessions attached to this connection."""
        return len(self.attached)


class ConnectionRegistry:
    """The connections of one server process, by id, with the process-wide counts.

    ``sessions`` counts, in O(1) per change, every session attached to a
    connection plus every slot held by a request that may attach one and is
    not answered yet (:meth:`RemoteConnection.admit_session`): a session is
    counted when admitted, so concurrent requests never overshoot
    ``max_sessions``.
    """

    def __init__(self, limits: RemoteLimits) -> None:
        self.limits = limits
        self.connections: dict[str, RemoteConnection] = {}
        self.sessions: int = 0

    def add(self, connection: RemoteConnection) -> None:
        """Register a new connection."""
        self.connections[connection.id] = connection

    def get(self, connection_id: str) -> RemoteConnection | None:
        """The open connection with this id."""
        connection = self.connections.get(connection_id)
        return None if connection is None or connection.closing else connection

    def forget(self, connection: RemoteConnection) -> None:
        """Drop a finished connection, with its sessions and the slots it held."""
        if self.connections.get(connection.id) is connection:
            del self.connections[connection.id]
            self.sessions -= len(connection.attached) + connection.reserved
            connection.attached.clear()
            connection.reserved = 0

    def reserve(self) -> bool:
        """Count one more session unless the limit is reached; False then."""
        if self.sessions >= self.limits.max_sessions:
            return False
        self.sessions += 1
        return True

    @property
    def full(self) -> bool:
        """No further connection may open."""
        return len(self.connections) >= self.limits.max_connections

    def sessions_full(self) -> bool:
        """No further session may attach."""
        return self.sessions >= self.limits.max_sessions
