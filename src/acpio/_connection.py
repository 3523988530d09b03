"""JSON-RPC 2.0 over newline-delimited JSON, in both directions on one connection.

How this works: one reader task turns lines into messages. Requests from the
peer each run in their own task of the connection's task group (so a slow
handler never delays the others) and are answered exactly once: a result, the
handler's :class:`RequestError`, ``-32603`` for a bug, or ``-32800`` when
``$/cancel_request`` or shutdown cancelled them. Notifications are handled
inline, in arrival order. Responses wake the task waiting in :meth:`request`.
A batch is unpacked by the reader (its notifications inline, its invalid
entries answered at once) and its requests run in one task of their own that
sends every answer back as one array.

Every outgoing message goes through one :class:`_OutgoingBuffer`: senders
append encoded lines, a single writer task writes them in order, joining what
accumulated into one write. The buffer holds at most ``write_buffer_size``
bytes, so a peer that stops reading makes senders wait (in arrival order)
rather than growing memory. This layer knows methods as strings and params as
raw JSON; protocol types live above it.

Hostile input is refused before it can hurt: a line longer than
``max_message_size`` never reaches the decoder (see :class:`LineReader`), and
a message nested deeper than ``max_nesting_depth`` arrays and objects is
refused before decoding, since the JSON decoder recurses once per level (a
RecursionError at Python's default limit, a crashed process where a program
raised that limit). Either way a request is still answered once, with its
``id`` when it can be read from the top level of the message.
"""

from __future__ import annotations

import contextvars
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Final, Protocol, Self, TypeVar

import anyio
import anyio.abc
import msgspec

from ._errors import (
    INTERNAL_ERROR,
    ConnectionClosed,
    RemoteProtocolError,
    RequestError,
)
from ._transport import OVERSIZED, LineReader, StreamPair

__all__ = ["Connection", "MessageHandler", "RequestContext", "RequestId"]

logger = logging.getLogger(__name__)

RequestId = int | str
T = TypeVar("T")

DEFAULT_MAX_MESSAGE_SIZE: Final = 32 * 1024 * 1024
DEFAULT_WRITE_BUFFER_SIZE: Final = 1024 * 1024
DEFAULT_MAX_CONCURRENT_REQUESTS: Final = 1024
#: Arrays and objects nested in one message, the top-level object included.
DEFAULT_MAX_NESTING_DEPTH: Final = 256
CANCEL_REQUEST: Final = "$/cancel_request"
_MAX_ERROR_TEXT: Final = 300
_MAX_CACHED_METHODS: Final = 256
_LEADING_WHITESPACE: Final = frozenset(b" \t\r")
_OPEN_BRACE: Final = ord("{")
_OPEN_BRACKET: Final = ord("[")
_NULL_ID_REPLY: Final = b'{"jsonrpc":"2.0","id":null,'


class _Envelope(msgspec.Struct):
    """The fields of a JSON-RPC message; params stay raw until a handler decodes them."""

    jsonrpc: object = msgspec.UNSET
    id: object = msgspec.UNSET
    method: object = msgspec.UNSET
    params: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    result: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    error: object = msgspec.UNSET


class _CancelParams(msgspec.Struct, rename="camel"):
    request_id: object = None


_decode_envelope = msgspec.json.Decoder(_Envelope).decode
_decode_batch = msgspec.json.Decoder(list[msgspec.Raw]).decode
_decode_cancel = msgspec.json.Decoder(_CancelParams).decode
_encode_plain = msgspec.json.Encoder().encode
_DECODE_ERRORS: Final = (msgspec.DecodeError, RecursionError)

# The connection whose request handler the current task is running, if any;
# ``aclose`` called from inside a handler must not wait for that handler.
_serving: contextvars.ContextVar[Connection | None] = contextvars.ContextVar(
    "acpio_serving", default=None
)


@dataclass(slots=True)
class RequestContext:
    """What a request handler knows about the request it serves.

    Cancelling ``cancel_scope`` (or the peer's ``$/cancel_request``) ends
    the handler; the peer is then answered ``-32800``.
    """

    id: RequestId
    method: str
    cancel_scope: anyio.CancelScope
    sequence: int = 0
    """Position of the request among all messages received (see :attr:`Connection.received`)."""
    _after: list[Callable[[], None]] = field(default_factory=list)

    def after_response(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` right after the response was queued for the peer.

        Used to start work whose first messages must follow the response
        (the prompt lifecycle's updates follow the ``session/prompt`` answer).
        """
        self._after.append(callback)

    def _run_after(self) -> None:
        for callback in self._after:
            try:
                callback()
            except Exception:
                logger.exception("after-response callback of %s failed", self.method)


class MessageHandler(Protocol):
    """What a connection dispatches incoming requests and notifications to.

    ``on_request`` returns the result object (anything the connection's
    encoder accepts) or raises :class:`RequestError`; any other exception is
    answered ``-32603`` and logged. An unknown method must raise
    :meth:`RequestError.method_not_found`. ``on_notification`` runs inline in
    arrival order, so it must not block for long; its exceptions are logged
    only, since a notification is never answered.
    """

    async def on_request(
        self, method: str, params: msgspec.Raw | None, context: RequestContext
    ) -> object: ...

    async def on_notification(self, method: str, params: msgspec.Raw | None) -> None: ...


@dataclass(slots=True)
class _Pending:
    event: anyio.Event = field(default_factory=anyio.Event)
    result: msgspec.Raw | None = None
    error: BaseException | None = None


# (request id, method, params, cancel scope) of an accepted incoming request.
_Job = tuple[RequestId, str, msgspec.Raw | None, anyio.CancelScope, int]


class _OutgoingBuffer:
    """Bounded, ordered queue of encoded lines with a single consumer.

    At most ``limit`` bytes are queued (a single line larger than that is
    accepted into an empty buffer). Senders that must wait for space are
    served in arrival order, so a large message is never starved by a stream
    of small ones.
    """

    __slots__ = (
        "_blocked",
        "_chunks",
        "_closed",
        "_data_ready",
        "_limit",
        "_lock",
        "_size",
        "_space",
    )

    def __init__(self, limit: int) -> None:
        self._chunks: list[bytes] = []
        self._size = 0
        self._limit = limit
        self._closed = False
        self._blocked = 0
        self._lock = anyio.Lock()
        self._data_ready: anyio.Event | None = None
        self._space: anyio.Event | None = None

    @property
    def buffered(self) -> int:
        """Bytes accepted but not yet handed to the stream."""
        return self._size

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called; nothing more is accepted."""
        return self._closed

    async def put(self, line: bytes) -> None:
        """Queue ``line`` after everything queued before; wait while the buffer is full."""
        if self._closed:
            raise ConnectionClosed("the connection is closed")
        if self._blocked or (self._size and self._size + len(line) > self._limit):
            await self._put_when_room(line)
            return
        self._chunks.append(line)
        self._size += len(line)
        if self._data_ready is not None:
            self._data_ready.set()
            self._data_ready = None

    def put_nowait(self, line: bytes) -> bool:
        """Queue a small control message even if the buffer is full; False once closed."""
        if self._closed:
            return False
        self._chunks.append(line)
        self._size += len(line)
        if self._data_ready is not None:
            self._data_ready.set()
            self._data_ready = None
        return True

    async def _put_when_room(self, line: bytes) -> None:
        self._blocked += 1
        try:
            # The lock queues waiting senders first come, first served.
            async with self._lock:
                while self._size and self._size + len(line) > self._limit and not self._closed:
                    space = self._space = anyio.Event()
                    await space.wait()
                if self._closed:
                    raise ConnectionClosed("the connection is closed")
                self.put_nowait(line)
        finally:
            self._blocked -= 1

    async def take(self) -> bytes | None:
        """Everything queued so far as one block; ``None`` once closed and drained."""
        while not self._chunks:
            if self._closed:
                return None
            event = self._data_ready = anyio.Event()
            await event.wait()
        chunks = self._chunks
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        chunks.clear()
        self._size = 0
        if self._space is not None:
            self._space.set()
            self._space = None
        return data

    def close(self, *, discard: bool = False) -> None:
        """Accept nothing more; :meth:`take` still drains what was queued unless ``discard``."""
        self._closed = True
        if discard:
            self._chunks.clear()
            self._size = 0
        for event in (self._data_ready, self._space):
            if event is not None:
                event.set()
        self._data_ready = self._space = None


class Connection:
    """A JSON-RPC 2.0 connection over a :class:`StreamPair`, usable from either side.

    Use it as an async context manager: entering starts the reader and the
    writer; :meth:`wait_closed` returns when the peer closed its side (every
    pending outgoing request has then failed with :class:`ConnectionClosed`
    and running handlers were cancelled). Leaving stops reading, fails what
    is still pending, cancels running handlers and lets them answer
    ``-32800``, flushes everything already sent and closes the streams.
    Exceptions raised in the ``async with`` body propagate unchanged.
    """

    def __init__(
        self,
        streams: StreamPair,
        handler: MessageHandler,
        *,
        encode: Callable[[object], bytes] = _encode_plain,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        write_buffer_size: int = DEFAULT_WRITE_BUFFER_SIZE,
        max_concurrent_requests: int = DEFAULT_MAX_CONCURRENT_REQUESTS,
        on_raw_message: Callable[[str, bytes], None] | None = None,
        max_nesting_depth: int = DEFAULT_MAX_NESTING_DEPTH,
    ) -> None:
        """Set up (nothing runs until the connection is entered).

        ``encode`` turns params and results into JSON bytes; messages larger
        than ``max_message_size`` bytes are refused with ``-32600``, messages
        with arrays and objects nested deeper than ``max_nesting_depth``
        levels (the message itself is level 1) with ``-32700``; at most
        ``write_buffer_size`` bytes wait for the peer before senders wait too;
        more than ``max_concurrent_requests`` running incoming requests are
        refused with ``-32603``. ``on_raw_message("in" | "out", message)``
        sees every message as JSON bytes without the newline (for tracing).
        """
        if max_nesting_depth < 1:
            raise ValueError("max_nesting_depth must be at least 1")
        self._streams = streams
        self._handler = handler
        self._encode = encode
        self._max_message_size = max_message_size
        self._max_depth = max_nesting_depth
        # A message nested deeper than the limit has more than that many
        # brackets of each kind: shorter lines need no check at all.
        self._depth_check_above = 2 * max_nesting_depth
        self._max_concurrent = max_concurrent_requests
        self._outgoing = _OutgoingBuffer(write_buffer_size)
        self._on_raw = on_raw_message
        self._next_id = 0
        self._pending: dict[int, _Pending] = {}
        self._incoming: dict[RequestId, anyio.CancelScope] = {}
        self._open = True
        self._closed = anyio.Event()
        self.received = 0
        """How many messages were received so far; requests carry their position in
        :attr:`RequestContext.sequence`, and a notification handler (run inline, in
        arrival order) reads its own position here."""
        self._task_group: anyio.abc.TaskGroup | None = None
        self._reader_scope: anyio.CancelScope | None = None
        self._writer_scope: anyio.CancelScope | None = None
        self._writer_done = anyio.Event()
        self._active = 0
        self._idle: anyio.Event | None = None

    # ----------------------------------------------------------------- lifecycle

    async def __aenter__(self) -> Self:
        if self._task_group is not None:
            raise RuntimeError("a Connection can be entered only once")
        self._reader_scope = anyio.CancelScope()
        self._writer_scope = anyio.CancelScope()
        group = self._task_group = anyio.create_task_group()
        await group.__aenter__()
        group.start_soon(self._write_loop, self._writer_scope)
        group.start_soon(self._read_loop, self._reader_scope)
        return self

    async def aclose(self, flush_timeout: float = 5.0) -> None:
        """Stop reading, fail pending requests, cancel handlers, flush what was sent.

        Cancelled handlers still answer ``-32800`` before the flush; all of this
        waits at most ``flush_timeout`` seconds for handlers that ignore
        cancellation or for a peer that does not read. Safe to call twice.
        """
        if self._reader_scope is not None:
            self._reader_scope.cancel()
        self._mark_closed("the connection was closed")
        if self._task_group is None:
            self._outgoing.close()
            return
        with anyio.move_on_after(flush_timeout, shield=True):
            if _serving.get() is not self:
                while self._active:
                    idle = self._idle = anyio.Event()
                    await idle.wait()
            self._outgoing.close()
            await self._writer_done.wait()
        self._outgoing.close(discard=True)
        if self._writer_scope is not None:
            self._writer_scope.cancel()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        group = self._task_group
        if group is None:
            raise RuntimeError("the Connection was not entered")
        try:
            await self.aclose()
        finally:
            # Everything was asked to stop; whatever ignored that is cancelled
            # now. The body's own exception is not handed to the task group, so
            # it propagates as itself instead of inside an exception group.
            group.cancel_scope.cancel()
            try:
                await group.__aexit__(None, None, None)
            finally:
                with anyio.CancelScope(shield=True):
                    await self._streams.aclose()
                self._closed.set()

    @property
    def closed(self) -> bool:
        """True once the peer closed its side, the peer stopped reading, or we closed."""
        return not self._open

    async def wait_closed(self) -> None:
        """Wait until the connection ended (the peer closed its side, or we did)."""
        await self._closed.wait()

    @property
    def buffered_bytes(self) -> int:
        """Bytes queued for the peer but not yet written (bounded by the write buffer)."""
        return self._outgoing.buffered

    # ------------------------------------------------------------------ sending

    async def notify(self, method: str, params: object) -> None:
        """Send a notification; returns once it is queued in order (may wait for space).

        ``params=None`` omits params (JSON-RPC forbids ``"params": null``).
        Raises :class:`ConnectionClosed` once the connection is closing.
        """
        if params is None:
            line = b'{"jsonrpc":"2.0","method":' + _encode_plain(method) + b"}\n"
        else:
            line = _notification_prefix(method) + self._encode(params) + b"}\n"
        if self._on_raw is not None:
            self._on_raw("out", line[:-1])
        await self._outgoing.put(line)

    @property
    def line_sender(self) -> Callable[[bytes], Awaitable[None]]:
        """The fastest way to call :meth:`send_line` (skips a layer when nothing taps the wire)."""
        return self.send_line if self._on_raw is not None else self._outgoing.put

    async def send_line(self, line: bytes) -> None:
        """Send one complete, already encoded JSON-RPC message ending in ``\n`` (hot paths).

        The caller guarantees it is a single valid JSON object on one line.
        """
        if self._on_raw is not None:
            self._on_raw("out", line[:-1])
        await self._outgoing.put(line)

    async def send_raw_params(self, method: str, encoded_params: bytes) -> None:
        """Send a notification whose params are already encoded JSON (hot paths).

        ``encoded_params`` must be a JSON object or array; it is sent as is.
        """
        line = _notification_prefix(method) + encoded_params + b"}\n"
        if self._on_raw is not None:
            self._on_raw("out", line[:-1])
        await self._outgoing.put(line)

    async def request(
        self,
        method: str,
        params: object,
        decode: Callable[[msgspec.Raw], T],
        *,
        on_sent: Callable[[int], None] | None = None,
    ) -> T:
        """Send a request and wait for its response, decoded by ``decode``.

        If the caller is cancelled while waiting, ``$/cancel_request`` is sent
        for it (without waiting for buffer space) and the eventual response is
        ignored. Raises :class:`RequestError` for an error response (also for a
        malformed one), :class:`RemoteProtocolError` when ``decode`` rejects
        the result, and :class:`ConnectionClosed` when the connection ends
        first. ``on_sent`` is called with the request id once it is queued.
        """
        if not self._open:
            raise ConnectionClosed("the connection is closed")
        request_id = self._next_id = self._next_id + 1
        parts = [b'{"jsonrpc":"2.0","id":', str(request_id).encode(), b',"method":']
        parts.append(_encode_plain(method))
        if params is not None:
            parts += (b',"params":', self._encode(params))
        parts.append(b"}\n")
        line = b"".join(parts)
        pending = _Pending()
        # Registered before queueing, so a close while we wait for space fails it too.
        self._pending[request_id] = pending
        try:
            if self._on_raw is not None:
                self._on_raw("out", line[:-1])
            await self._outgoing.put(line)
        except BaseException:
            self._pending.pop(request_id, None)
            raise
        try:
            if on_sent is not None:
                on_sent(request_id)
            await pending.event.wait()
        except BaseException:
            if self._pending.pop(request_id, None) is not None:
                self._send_cancel(request_id)
            raise
        if pending.error is not None:
            raise pending.error
        assert pending.result is not None
        try:
            return decode(pending.result)
        except _DECODE_ERRORS as exc:
            raise RemoteProtocolError(
                _short(f"the peer's result for {method} is invalid: {exc}")
            ) from exc

    def _send_cancel(self, request_id: int) -> None:
        if not self._open:
            return
        line = b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":%d}}\n' % (
            request_id
        )
        if self._on_raw is not None:
            self._on_raw("out", line[:-1])
        # A cancellation must go out promptly, so it does not queue for space.
        self._outgoing.put_nowait(line)

    async def _write_loop(self, scope: anyio.CancelScope) -> None:
        try:
            with scope:
                await self._write_all()
        finally:
            self._writer_done.set()

    async def _write_all(self) -> None:
        send = self._streams.send
        take = self._outgoing.take
        while True:
            data = await take()
            if data is None:
                break
            try:
                await send.send(data)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                logger.debug("the peer stopped reading; dropping outgoing messages")
                self._outgoing.close(discard=True)
                if self._reader_scope is not None:
                    self._reader_scope.cancel()
                self._mark_closed("the peer stopped reading")
                break

    # ---------------------------------------------------------------- receiving

    async def _read_loop(self, scope: anyio.CancelScope) -> None:
        reader = LineReader(self._streams.receive, self._max_message_size)
        try:
            with scope:
                await self._read_all(reader)
        finally:
            self._mark_closed("the peer closed the connection")

    async def _read_all(self, reader: LineReader) -> None:
        while True:
            lines = await reader.receive_lines()
            if not lines:
                break
            for line in lines:
                if line is OVERSIZED:
                    logger.warning(
                        "rejected an incoming message larger than %d bytes",
                        self._max_message_size,
                    )
                    await self._reply(
                        _error_line(
                            None,
                            RequestError.invalid_request(
                                "Message rejected: larger than the limit of "
                                f"{self._max_message_size} bytes"
                            ),
                        )
                    )
                    continue
                assert isinstance(line, bytes)
                if self._on_raw is not None:
                    self._on_raw("in", line)
                await self._handle_line(line)

    def _mark_closed(self, reason: str) -> None:
        """The connection can no longer be used: fail what waits, cancel what runs."""
        if not self._open:
            return
        self._open = False
        pending, self._pending = self._pending, {}
        for entry in pending.values():
            entry.error = ConnectionClosed(reason)
            entry.event.set()
        for scope in self._incoming.values():
            scope.cancel()
        self._closed.set()

    async def _handle_line(self, line: bytes) -> None:
        # msgspec leaves the inside of raw params unchecked, so check UTF-8 here.
        if not line.isascii():
            try:
                line.decode()
            except UnicodeDecodeError:
                await self._reply(
                    _error_line(
                        None, RequestError.parse_error("Parse error: the message is not UTF-8")
                    )
                )
                return
        first = line[0]
        if first in _LEADING_WHITESPACE:
            first = line.lstrip()[0]
        if len(line) > self._depth_check_above and _too_deep(line, self._max_depth):
            logger.warning(
                "refused an incoming message nested deeper than %d levels", self._max_depth
            )
            if first == _OPEN_BRACKET:
                await self._handle_batch(line, deep=True)
            else:
                await self._refuse_deep(line)
            return
        if first == _OPEN_BRACKET:
            await self._handle_batch(line)
            return
        reply: bytes | None
        try:
            envelope = _decode_envelope(line)
        except msgspec.ValidationError as exc:
            # Valid JSON: either no object at all, or a value the decoder cannot hold.
            if _is_object(line):
                reply = self._unreadable(line, _parse_error(exc), valid_json=True)
            else:
                reply = _error_line(
                    None, RequestError.invalid_request("The message is not a JSON object")
                )
        except RecursionError:
            # Only when the depth limit was set beyond what the decoder can take.
            await self._refuse_deep(line)
            return
        except msgspec.DecodeError as exc:
            reply = self._unreadable(line, _parse_error(exc), valid_json=False)
        else:
            reply = await self._dispatch(envelope, None)
        if reply is not None:
            await self._reply(reply)

    def _deep_error(self) -> RequestError:
        return RequestError.parse_error(
            f"Parse error: the message is nested deeper than the limit of {self._max_depth} levels"
        )

    async def _refuse_deep(self, line: bytes) -> None:
        """Answer a message nested too deeply without decoding it (see the module doc)."""
        reply = self._unreadable(line, self._deep_error(), valid_json=True)
        if reply is not None:
            await self._reply(reply)

    def _unreadable(self, line: bytes, error: RequestError, *, valid_json: bool) -> bytes | None:
        """What to do with a message the decoder refused; returns the reply, if any.

        Its top level is read without decoding: a request is answered with its
        id, a response fails the request it answers (never answered itself),
        a notification that is valid JSON is dropped. What cannot be read (or
        is not valid JSON) is answered with ``id: null``, as JSON-RPC says.
        """
        scanned = _top_level_members(line)
        if scanned is None:
            return _error_line(None, error)
        members, complete = scanned
        if not complete and not valid_json:
            return _error_line(None, error)  # truncated or garbled: nothing in it counts
        request_id = _scalar(members.get("id"))
        if "method" not in members and ("result" in members or "error" in members):
            pending = self._pending.pop(request_id, None) if type(request_id) is int else None
            if pending is not None:
                pending.error = RequestError(
                    INTERNAL_ERROR, _short(f"malformed response from the peer: {error.message}")
                )
                pending.event.set()
            return None
        if valid_json and complete and "method" in members and "id" not in members:
            logger.warning("dropped a notification: %s", error.message)
            return None
        return _error_line(_valid_id_or_none(request_id), error)

    async def _handle_batch(self, line: bytes, *, deep: bool = False) -> None:
        """Unpack a batch; one that is too deep is split without decoding its entries."""
        entries: list[msgspec.Raw] | list[bytes] | None
        try:
            entries = _top_level_items(line) if deep else _decode_batch(line)
        except RecursionError:
            entries = _top_level_items(line)
            deep = True
        except msgspec.DecodeError as exc:
            await self._reply(_error_line(None, _parse_error(exc)))
            return
        if entries is None:
            await self._reply(_error_line(None, self._deep_error()))
            return
        if not entries:
            await self._reply(_error_line(None, RequestError.invalid_request("Empty batch")))
            return
        replies: list[bytes] = []
        jobs: list[_Job] = []
        for raw in entries:
            reply: bytes | None
            if deep and _too_deep(bytes(raw), self._max_depth):
                reply = self._unreadable(bytes(raw), self._deep_error(), valid_json=True)
                if reply is not None:
                    replies.append(reply)
                continue
            try:
                envelope = _decode_envelope(raw)
            except _DECODE_ERRORS as exc:
                entry = bytes(raw)
                reply = (
                    self._unreadable(entry, _parse_error(exc), valid_json=True)
                    if _is_object(entry)
                    else _error_line(
                        None, RequestError.invalid_request("Batch entry is not an object")
                    )
                )
            else:
                reply = await self._dispatch(envelope, jobs)
            if reply is not None:
                replies.append(reply)
        if deep and not jobs and replies and all(r.startswith(_NULL_ID_REPLY) for r in replies):
            # Nothing in it could be read: the batch is refused as a whole.
            replies = [_error_line(None, self._deep_error())]
            await self._reply(replies[0])
            return
        if jobs:
            assert self._task_group is not None
            self._active += 1
            self._task_group.start_soon(self._run_batch, jobs, replies)
        elif replies:
            await self._reply(_batch_line(replies))

    async def _dispatch(self, envelope: _Envelope, jobs: list[_Job] | None) -> bytes | None:
        """Handle one message; return the error line to answer at once, if any.

        A valid request is registered (so duplicates, the concurrency limit
        and ``$/cancel_request`` see it immediately) and either started in its
        own task or, inside a batch, appended to ``jobs``.
        """
        method = envelope.method
        request_id = envelope.id
        self.received += 1
        if method is msgspec.UNSET:
            if envelope.result is not msgspec.UNSET or envelope.error is not msgspec.UNSET:
                self._handle_response(envelope)
                return None
            if type(request_id) is int and request_id in self._pending:
                self._handle_response(envelope)
                return None
            return _error_line(
                _valid_id_or_none(request_id),
                RequestError.invalid_request('"method" is missing'),
            )
        if envelope.jsonrpc != "2.0":
            return _error_line(
                _valid_id_or_none(request_id),
                RequestError.invalid_request('"jsonrpc" must be exactly "2.0"'),
            )
        if not isinstance(method, str):
            return _error_line(
                _valid_id_or_none(request_id),
                RequestError.invalid_request('"method" must be a string'),
            )
        params = envelope.params
        raw_params: msgspec.Raw | None = None
        if params is not msgspec.UNSET:
            if memoryview(params)[0] not in (_OPEN_BRACE, _OPEN_BRACKET):
                return _error_line(
                    _valid_id_or_none(request_id),
                    RequestError.invalid_request('"params" must be an object or an array'),
                )
            raw_params = params
        if request_id is msgspec.UNSET:
            await self._run_notification(method, raw_params)
            return None
        if not _is_valid_id(request_id):
            return _error_line(
                None, RequestError.invalid_request('"id" must be an integer or a string')
            )
        assert isinstance(request_id, int | str)
        if request_id in self._incoming:
            return _error_line(
                request_id,
                RequestError.invalid_request(f"Duplicate request id {request_id!r} still in use"),
            )
        if len(self._incoming) >= self._max_concurrent:
            return _error_line(
                request_id,
                RequestError.internal_error(
                    f"Too many concurrent requests (limit {self._max_concurrent}); retry later"
                ),
            )
        scope = anyio.CancelScope()
        if not self._open:
            # Shutting down: the request is accepted but answered as cancelled.
            scope.cancel()
        self._incoming[request_id] = scope
        job = (request_id, method, raw_params, scope, self.received)
        if jobs is None:
            assert self._task_group is not None
            self._active += 1
            self._task_group.start_soon(self._run_single, job)
        else:
            jobs.append(job)
        return None

    def _task_done(self) -> None:
        self._active -= 1
        if not self._active and self._idle is not None:
            self._idle.set()
            self._idle = None

    async def _run_notification(self, method: str, params: msgspec.Raw | None) -> None:
        if method == CANCEL_REQUEST:
            self._cancel_incoming(params)
            return
        try:
            await self._handler.on_notification(method, params)
        except Exception as exc:
            if _is_decoder_recursion(exc):
                logger.warning("ignoring %s: its params are nested too deeply", method)
            else:
                logger.exception("notification handler for %s failed", method)

    def _cancel_incoming(self, params: msgspec.Raw | None) -> None:
        try:
            request_id = _decode_cancel(params).request_id if params is not None else None
        except _DECODE_ERRORS:
            request_id = None
        if not _is_valid_id(request_id):
            logger.warning("ignoring malformed $/cancel_request: %r", bytes(params or b"")[:200])
            return
        assert isinstance(request_id, int | str)
        scope = self._incoming.get(request_id)
        if scope is not None:
            scope.cancel()
        else:
            logger.debug("ignoring $/cancel_request for unknown request %r", request_id)

    async def _run_single(self, job: _Job) -> None:
        _serving.set(self)
        context = RequestContext(job[0], job[1], job[3], job[4])
        try:
            await self._reply(await self._answer(job, context))
            context._run_after()
        finally:
            self._task_done()

    async def _run_batch(self, jobs: list[_Job], replies: list[bytes]) -> None:
        _serving.set(self)
        try:
            contexts = [RequestContext(job[0], job[1], job[3], job[4]) for job in jobs]
            async with anyio.create_task_group() as group:
                for job, context in zip(jobs, contexts, strict=True):
                    group.start_soon(self._answer_into, job, context, replies)
            await self._reply(_batch_line(replies))
            for context in contexts:
                context._run_after()
        finally:
            self._task_done()

    async def _answer_into(self, job: _Job, context: RequestContext, replies: list[bytes]) -> None:
        replies.append(await self._answer(job, context))

    async def _answer(self, job: _Job, context: RequestContext) -> bytes:
        """Run the handler for one request; return its response line."""
        request_id, method, params, scope, _ = job
        result: object = None
        try:
            with scope:
                result = await self._handler.on_request(method, params, context)
            if scope.cancelled_caught:
                return _error_line(request_id, RequestError.request_cancelled())
        except Exception as exc:
            error = _request_error_in(exc)
            if error is None and _is_decoder_recursion(exc):
                # The params went deeper than the handler's decoder could follow.
                error = RequestError.invalid_params("the params are nested too deeply")
            if error is None:
                logger.exception("request handler for %s failed", method)
                error = RequestError.internal_error(_short(f"Internal error: {_describe(exc)}"))
            return _error_line(request_id, error)
        finally:
            del self._incoming[request_id]
        try:
            encoded = self._encode(result)
        except Exception as exc:
            logger.exception("could not encode the result of %s", method)
            return _error_line(
                request_id,
                RequestError(INTERNAL_ERROR, _short(f"Could not encode result: {_describe(exc)}")),
            )
        return b'{"jsonrpc":"2.0","id":%b,"result":%b}\n' % (_encode_plain(request_id), encoded)

    async def _reply(self, line: bytes) -> None:
        if self._on_raw is not None:
            self._on_raw("out", line[:-1])
        try:
            await self._outgoing.put(line)
        except ConnectionClosed:
            logger.debug("connection closed before a response could be sent")

    def _handle_response(self, envelope: _Envelope) -> None:
        request_id = envelope.id
        # ``type() is int`` so that ``true`` never matches request 1.
        pending = self._pending.pop(request_id, None) if type(request_id) is int else None
        if pending is None:
            if request_id is None and envelope.error is not msgspec.UNSET:
                logger.warning("the peer reported an error: %r", envelope.error)
            else:
                logger.debug("ignoring a response to unknown or abandoned request %r", request_id)
            return
        if envelope.error is not msgspec.UNSET:
            pending.error = _error_from_wire(envelope.error)
        elif envelope.result is not msgspec.UNSET:
            pending.result = envelope.result
        else:
            pending.error = RequestError(
                INTERNAL_ERROR, "malformed response from the peer: neither result nor error"
            )
        pending.event.set()


_prefixes: dict[str, bytes] = {}


def _notification_prefix(method: str) -> bytes:
    """``{"jsonrpc":"2.0","method":<method>,"params":`` (cached: methods are few)."""
    prefix = _prefixes.get(method)
    if prefix is None:
        prefix = b'{"jsonrpc":"2.0","method":' + _encode_plain(method) + b',"params":'
        if len(_prefixes) < _MAX_CACHED_METHODS:
            _prefixes[method] = prefix
    return prefix


def _is_valid_id(value: object) -> bool:
    # bool is an int subclass, and floats are not ids: check the exact type.
    return type(value) is int or type(value) is str


def _valid_id_or_none(value: object) -> RequestId | None:
    return value if type(value) is int or type(value) is str else None


def _request_error_in(exc: Exception) -> RequestError | None:
    """The handler's RequestError, also when a task group wrapped it (alone) in a group."""
    while isinstance(exc, ExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc if isinstance(exc, RequestError) else None


def _describe(exc: BaseException) -> str:
    # Only the type and the first line of the message reach the peer.
    text = str(exc).strip().partition("\n")[0]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _parse_error(exc: BaseException) -> RequestError:
    return RequestError.parse_error(_short(f"Parse error: {exc}"))


def _is_decoder_recursion(exc: BaseException) -> bool:
    """True for msgspec giving up on nesting (also alone inside an exception group)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return isinstance(exc, RecursionError) and "deserializ" in str(exc)


# Strings (escapes included) and every byte that is not a bracket: what the
# depth check skips.
_JSON_STRING: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS: Final = bytes(b for b in range(256) if b not in b"[]{}")
_TO_SQUARE: Final = bytes.maketrans(b"{}", b"[]")


def _too_deep(line: bytes, limit: int) -> bool:
    """True when arrays and objects nest more than ``limit`` levels in ``line``.

    Cheap for ordinary messages: only a line with more than ``limit`` opening
    brackets is looked at closely, with C-speed passes (strings removed, every
    innermost pair removed per round), never a byte-by-byte Python loop.
    """
    if line.count(b"[") + line.count(b"{") <= limit:
        return False
    brackets = _JSON_STRING.sub(b"", line).translate(_TO_SQUARE, _NOT_BRACKETS)
    if b"[" * (limit + 1) in brackets:
        return True
    for _ in range(limit):
        shorter = brackets.replace(b"[]", b"")
        if len(shorter) == len(brackets):
            # Unbalanced: not JSON, which the decoder reports (shallowly) itself.
            return False
        brackets = shorter
        if not brackets:
            return False
    return bool(brackets)


# Top-level tokens of a message that is too deep to decode: strings, runs of
# brackets (one token for any depth), separators, and scalars.
_TOKEN: Final = re.compile(
    rb'\s*(?:("[^"\\]*(?:\\.[^"\\]*)*")|([\[{]+)|([\]}]+)|([:,])|([^\s\[\]{}",:]+))'
)
_TOKEN_BUDGET: Final = 1_000_000


def _top_level_members(line: bytes) -> tuple[dict[str, bytes | None], bool] | None:
    """The members of a JSON object line without decoding its nested values.

    Each key maps to the raw token of a scalar value, or ``None`` for an array
    or object; the flag says whether the whole object was read (the scan
    stops after a bounded number of tokens). ``None`` when the line is not
    an object.
    """
    members: dict[str, bytes | None] = {}
    depth = 0
    key: str | None = None
    expect_value = False
    position = 0
    for _ in range(_TOKEN_BUDGET):
        match = _TOKEN.match(line, position)
        if match is None or match.end() == position:
            return (members, False) if depth else None
        position = match.end()
        string, opening, closing, separator, scalar = match.groups()
        if depth == 0:
            if opening != b"{":
                return None  # an array (a batch) or no object at all
            depth = 1
        elif opening is not None:
            if depth == 1 and expect_value and key is not None:
                members[key] = None
            expect_value = False
            depth += len(opening)
        elif closing is not None:
            depth -= len(closing)
            if depth <= 0:
                # Anything after the object makes it something else than one message.
                return members, depth == 0 and not line[position:].strip()
        elif depth == 1:
            if separator is not None:
                expect_value = separator == b":" and key is not None
            elif expect_value:
                if key is not None:
                    members[key] = string if string is not None else scalar
                key = None
                expect_value = False
            elif string is not None:
                decoded = _scalar(string)
                key = decoded if isinstance(decoded, str) else None
    return members, False


def _top_level_items(line: bytes) -> list[bytes] | None:
    """The entries of a JSON array line, as bytes, without decoding them.

    ``None`` when the line is not one array or cannot be split within a
    bounded number of tokens.
    """
    items: list[bytes] = []
    depth = 0
    start = 0
    position = 0
    for _ in range(_TOKEN_BUDGET):
        match = _TOKEN.match(line, position)
        if match is None or match.end() == position:
            return None
        position = match.end()
        _, opening, closing, separator, _ = match.groups()
        if depth == 0:
            if opening is None or opening[0] != _OPEN_BRACKET:
                return None
            start = match.start(2) + 1
        if opening is not None:
            depth += len(opening)
        elif closing is not None:
            if len(closing) >= depth:
                # The bracket that closes the array ends the last entry.
                end = match.start(3) + depth - 1
                if line[start:end].strip():
                    items.append(line[start:end])
                if len(closing) > depth or line[end + 1 :].strip():
                    return None
                return items
            depth -= len(closing)
        elif separator == b"," and depth == 1:
            items.append(line[start : match.start(4)])
            start = match.end()
    return None


def _is_object(data: bytes) -> bool:
    return data.lstrip()[:1] == b"{"


def _scalar(token: bytes | None) -> object:
    """Decode a scalar token; ``None`` for anything that is not a valid one."""
    if token is None:
        return None
    try:
        return msgspec.json.decode(token)
    except msgspec.DecodeError:
        return None


def _short(text: str) -> str:
    return text if len(text) <= _MAX_ERROR_TEXT else text[: _MAX_ERROR_TEXT - 3] + "..."


def _error_line(request_id: RequestId | None, error: RequestError) -> bytes:
    body: dict[str, object] = {"code": error.code, "message": error.message}
    if error.data is not None:
        body["data"] = error.data
    try:
        encoded = _encode_plain(body)
    except (TypeError, ValueError, msgspec.EncodeError):
        encoded = _encode_plain({"code": error.code, "message": error.message})
    return b'{"jsonrpc":"2.0","id":%b,"error":%b}\n' % (_encode_plain(request_id), encoded)


def _batch_line(replies: list[bytes]) -> bytes:
    return b"[" + b",".join([reply[:-1] for reply in replies]) + b"]\n"


def _error_from_wire(error: object) -> RequestError:
    if isinstance(error, dict):
        code = error.get("code")
        message = error.get("message")
        if type(code) is int and isinstance(message, str):
            return RequestError(code, message, error.get("data"))
    return RequestError(
        INTERNAL_ERROR, _short(f"malformed error object from the peer: {error!r}"), error
    )
