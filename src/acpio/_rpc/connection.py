"""JSON-RPC 2.0 over newline-delimited JSON, in both directions on one connection.

How this works: one reader task turns lines into messages (the receiving
half lives in :mod:`acpio._rpc.incoming`). Requests from the peer each run in
their own task of the connection's task group (so a slow handler never
delays the others) and are answered exactly once: a result, the handler's
:class:`RequestError`, ``-32603`` for a bug, or ``-32800`` when
``$/cancel_request`` or shutdown cancelled them. Notifications are handled
inline, in arrival order. Responses wake the task waiting in :meth:`request`.
A batch is unpacked by the reader (its notifications inline, its invalid
entries answered at once) and its requests run in one task of their own that
sends every answer back as one array.

Every outgoing message goes through one bounded buffer
(:mod:`acpio._rpc.outgoing`): senders append encoded lines, a single writer task
writes them in order, joining what accumulated into one write. How lines
are read, written and waited for is the line channel's business
(:mod:`acpio._rpc.channel`), chosen when the connection is entered: on asyncio
it saves loop turns (a request is written by the requesting task itself when
the writer holds nothing, since the round trip waits on it), elsewhere it is
plain anyio; this module never tests stream types. The buffer
holds at most ``write_buffer_size`` bytes, so a peer that stops reading makes
senders wait (in arrival order) rather than growing memory. This layer knows
methods as strings and params as raw JSON (:mod:`acpio._rpc.wire`); protocol
types live above it.

Hostile input is refused before it can hurt: a line longer than
``max_message_size`` never reaches the decoder (see :class:`LineReader`), and
a message nested deeper than ``max_nesting_depth`` arrays and objects is
refused before decoding, since the JSON decoder recurses once per level (a
RecursionError at Python's default limit, a crashed process where a program
raised that limit; see :mod:`acpio._rpc.scan`). Either way a request is still
answered once, with its ``id`` when it can be read from the top level of the
message.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Final, Self, TypeVar

import anyio
import anyio.abc
import msgspec

from .._errors import INTERNAL_ERROR, ConnectionClosed, RemoteProtocolError, RequestError
from .._limits import (
    DEFAULT_MAX_CONCURRENT_REQUESTS,
    DEFAULT_MAX_MESSAGE_SIZE,
    DEFAULT_MAX_NESTING_DEPTH,
    DEFAULT_WRITE_BUFFER_SIZE,
)
from .channel import AnyioChannel, LineChannel, Waiter, open_channel, plain_waiter_factory
from .handler import MessageHandler as MessageHandler
from .handler import RequestContext as RequestContext
from .handler import run_after_response
from .incoming import Job, Receiver
from .outgoing import OutgoingBuffer
from .routes import RouteOut, Routes
from .tasks import RequestTasks
from .transport import StreamPair
from .wire import (
    CANCEL_REQUEST,
    DECODE_ERRORS,
    Refused,
    RequestId,
    batch_line,
    describe,
    encode_plain,
    error_line,
    is_decoder_recursion,
    notification_prefix,
    request_error_in,
    request_tail,
    short,
)

__all__ = ["Connection", "MessageHandler", "RequestContext", "RequestId", "RouteView"]

logger = logging.getLogger(__name__)

_CANCEL_LINE: Final = (
    b'{"jsonrpc":"2.0","method":"%s","params":{"requestId":%%d}}\n' % CANCEL_REQUEST.encode()
)

T = TypeVar("T")


# The connection whose request handler the current task is running, if any;
# ``aclose`` called from inside a handler must not wait for that handler.
_serving: contextvars.ContextVar[Connection | None] = contextvars.ContextVar(
    "acpio_serving", default=None
)


class Connection(Receiver):
    """A JSON-RPC 2.0 connection over a :class:`StreamPair`, usable from either side.

    Over :class:`acpio.rpc.Routes` instead of a stream pair, the
    connection is routed (see :class:`acpio.rpc.Routes`): it runs no reader
    and no writer task; what arrives is handed to :meth:`receive_message`,
    and each message it sends goes on the route it belongs to (an answer on
    its request's, a session's messages on :meth:`for_route`'s).

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
        streams: StreamPair | Routes,
        handler: MessageHandler,
        *,
        encode: Callable[[object], bytes] = encode_plain,
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
        self._streams = streams if isinstance(streams, StreamPair) else None
        self._routes = None if isinstance(streams, StreamPair) else streams
        self._handler = handler
        self._encode = encode
        self._max_message_size = max_message_size
        self._max_depth = max_nesting_depth
        # A message nested deeper than the limit has more than that many
        # brackets of each kind: shorter lines need no check at all.
        self._depth_check_above = 2 * max_nesting_depth
        # The longest line the response hook decodes itself (no depth check needed).
        self._response_hook_limit = min(self._depth_check_above, max_message_size)
        self._max_concurrent = max_concurrent_requests
        outgoing = self._outgoing = OutgoingBuffer(write_buffer_size)
        # Where what is not sent on a route of its own goes: the stream, or route None.
        self._out: RouteOut = outgoing if self._routes is None else self._routes.out(None)
        self._asked_routes: dict[int, object] = {}
        self._on_raw = on_raw_message
        self._next_id = 0
        self._pending: dict[int, Waiter] = {}
        self._incoming: dict[RequestId, anyio.CancelScope] = {}
        self._open = True
        # Made by the first who waits (an idle connection holds none it does not need).
        self._closed: anyio.Event | None = None
        self._ended = False
        self.received = 0
        """How many messages were received so far; requests carry their position in
        :attr:`RequestContext.sequence`, and a notification handler (run inline, in
        arrival order) reads its own position here."""
        self.withdraws_requests = True
        """Whether a request this side gives up is withdrawn with ``$/cancel_request``.
        Set it False for a peer that does not take that notification (an ACP v1
        client): a request given up is then abandoned, its answer ignored when it
        comes, and nothing is sent."""
        self._task_group: anyio.abc.TaskGroup | None = None
        self._reader_scope: anyio.CancelScope | None = None
        self._writer_scope: anyio.CancelScope | None = None
        self._writer_done: anyio.Event | None = None
        self._active = 0
        self._idle: anyio.Event | None = None
        if self._streams is None:
            self._new_waiter: Callable[[], Waiter] = plain_waiter_factory()
            self._waiter_set: Callable[[], None] = _nothing
            self._send_request: Callable[[bytes], bool] = self._out.try_put
            return
        # Chosen again when entered, once the running event loop is known; until
        # then (a request made before entering) the plain anyio channel serves.
        self._channel: LineChannel = AnyioChannel(
            self._streams.receive, self._streams.send, outgoing, max_message_size
        )
        self._use_channel(self._channel)

    def _use_channel(self, channel: LineChannel) -> None:
        self._channel = channel
        self._new_waiter = channel.waiter_factory()
        self._waiter_set = channel.waiter_set
        self._send_request = channel.send_request

    # ----------------------------------------------------------------- lifecycle

    async def __aenter__(self) -> Self:
        if self._task_group is not None:
            raise RuntimeError("a Connection can be entered only once")
        streams = self._streams
        if streams is None:
            assert self._routes is not None
            self._new_waiter = plain_waiter_factory()
            group = self._task_group = anyio.create_task_group()
            await group.__aenter__()
            self._requests = RequestTasks(group)
            self._routes.attach(self)
            return self
        self._reader_scope = anyio.CancelScope()
        self._writer_scope = anyio.CancelScope()
        self._writer_done = anyio.Event()
        self._use_channel(
            open_channel(streams.receive, streams.send, self._outgoing, self._max_message_size)
        )
        group = self._task_group = anyio.create_task_group()
        await group.__aenter__()
        self._requests = RequestTasks(group)
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
            # (Routed: what was sent is with the transport already; it has no writer.)
            self._outgoing.close()
            if self._writer_done is not None:
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
                with anyio.CancelScope(shield=True):
                    await self._requests.aclose()
                await group.__aexit__(None, None, None)
            finally:
                if self._streams is not None:
                    with anyio.CancelScope(shield=True):
                        await self._streams.aclose()
                self._set_closed()

    @property
    def closed(self) -> bool:
        """True once the peer closed its side, the peer stopped reading, or we closed."""
        return not self._open

    async def wait_closed(self) -> None:
        """Wait until the connection ended (the peer closed its side, or we did)."""
        if not self._ended:
            if self._closed is None:
                self._closed = anyio.Event()
            await self._closed.wait()

    @property
    def buffered_bytes(self) -> int:
        """Bytes queued for the peer but not yet written (bounded by the write buffer;
        routed: always 0, the transport holds what was sent)."""
        return self._outgoing.buffered

    # ------------------------------------------------------------------- routes

    def for_route(self, route: object) -> Connection | RouteView:
        """What to send ``route``'s messages through (a session's: its id): the
        connection itself unless it is routed, else a :class:`RouteView` of it."""
        if self._routes is None or route is None:
            return self
        return RouteView(self, route, self._routes.out(route))

    async def receive_message(self, line: bytes, route: object = None) -> None:
        """Handle one message that arrived (routed connections; see :class:`acpio.rpc.Routes`).

        The same as a line read from a stream: checked, refused or answered
        at once when invalid, a request started in its own task and answered
        on ``route``, a notification handled before this returns, a response
        given to the request waiting for it. Newlines in ``line`` must be
        JSON whitespace (the transport framed it).
        """
        if len(line) > self._max_message_size:
            reply = self._refuse_oversized(line[:4096])
            if reply is not None:
                await self._reply(reply, route)
            return
        if not line.strip():
            return
        if self._on_raw is not None:
            self._on_raw("in", line)
        await self._handle_line(line, route)

    def end_input(self, reason: str) -> None:
        """Nothing more will arrive (routed connections): as the end of a stream's input."""
        self._mark_closed(reason)

    def asked(self, request_id: object) -> tuple[bool, object]:
        """Whether ``request_id`` names a request this side sent and still waits for,
        and the route it went on (routed connections; ``None`` otherwise)."""
        if type(request_id) is not int or request_id not in self._pending:
            return False, None
        return True, self._asked_routes.get(request_id)

    # ------------------------------------------------------------------ sending

    async def notify(self, method: str, params: object) -> None:
        """Send a notification; returns once it is queued in order (may wait for space).

        ``params=None`` omits params (JSON-RPC forbids ``"params": null``).
        Raises :class:`ConnectionClosed` once the connection is closing.
        """
        await self.send_line(self.notification_line(method, params))

    def notification_line(self, method: str, params: object) -> bytes:
        """The encoded line of a notification (``params=None`` omits params)."""
        if params is None:
            return b'{"jsonrpc":"2.0","method":' + encode_plain(method) + b"}\n"
        return notification_prefix(method) + self._encode(params) + b"}\n"

    @property
    def line_sender(self) -> Callable[[bytes], Awaitable[None]]:
        """The fastest way to call :meth:`send_line` (skips a layer when nothing taps the wire)."""
        return self.send_line if self._on_raw is not None else self._out.put

    @property
    def line_try_sender(self) -> Callable[[bytes], bool]:
        """The fastest way to call :meth:`try_send_line` (no tap on the wire: one layer less)."""
        return self.try_send_line if self._on_raw is not None else self._out.try_put

    def try_send_line(self, line: bytes) -> bool:
        """:meth:`send_line` if that needs no waiting; False (nothing sent) otherwise."""
        if not self._out.try_put(line):
            return False
        if self._on_raw is not None:
            self._on_raw("out", line[:-1])
        return True

    async def write_queued(self) -> bool:
        """Nothing to do: the writer task writes whatever is queued (see
        :meth:`RouteView.write_queued`); always False."""
        return False

    async def send_line(self, line: bytes) -> None:
        """Send one complete, already encoded JSON-RPC message ending in ``\n`` (hot paths).

        The caller guarantees it is a single valid JSON object on one line.
        """
        if self._on_raw is not None:
            self._on_raw("out", line[:-1])
        await self._out.put(line)

    async def send_raw_params(self, method: str, encoded_params: bytes) -> None:
        """Send a notification whose params are already encoded JSON (hot paths).

        ``encoded_params`` must be a JSON object or array; it is sent as is.
        """
        await self.send_line(notification_prefix(method) + encoded_params + b"}\n")

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
        for it (without waiting for buffer space; not when
        :attr:`withdraws_requests` is False) and the eventual response is
        ignored. Raises :class:`RequestError` for an error response, and
        ``-32603`` naming the method and the request id for a response that
        could not be used (malformed, or past ``max_message_size``: the id is
        read from the start of the line); :class:`RemoteProtocolError` when
        ``decode`` rejects the result; and :class:`ConnectionClosed` when the
        connection ends first. A caller that bounds the wait cancels it (for
        example with ``anyio.move_on_after``): the request is then withdrawn.
        ``on_sent`` is called with the request id once it is queued.
        ``params=None`` omits params.
        """
        if not self._open:
            raise ConnectionClosed("the connection is closed")
        return await self.request_prepared(
            method, self.prepare_request(method, params), decode, on_sent=on_sent
        )

    def prepare_request(self, method: str, params: object) -> bytes:
        """The encoded part of a request line after its id, for :meth:`request_prepared`.

        A caller that sends the same request again and again (the same
        permission prompt) encodes it once and sends it with a fresh id each time.
        """
        return request_tail(method, None if params is None else self._encode(params))

    async def request_prepared(
        self,
        method: str,
        tail: bytes,
        decode: Callable[[msgspec.Raw], T],
        *,
        on_sent: Callable[[int], None] | None = None,
    ) -> T:
        """:meth:`request` of a request prepared with :meth:`prepare_request` (for ``method``).

        The same guarantees: withdrawn with ``$/cancel_request`` if the caller
        is cancelled, and the same errors.
        """
        return await self._request_on(
            None,
            self._out,
            self._send_request,
            method=method,
            tail=tail,
            decode=decode,
            on_sent=on_sent,
        )

    async def _request_on(
        self,
        route: object,
        out: RouteOut,
        send_now: Callable[[bytes], bool],
        *,
        method: str,
        tail: bytes,
        decode: Callable[[msgspec.Raw], T],
        on_sent: Callable[[int], None] | None = None,
    ) -> T:
        """Send a request on ``out`` (``send_now`` queues it if it needs no waiting) and
        wait for its answer; see :meth:`request` for the guarantees."""
        if not self._open:
            raise ConnectionClosed("the connection is closed")
        request_id = self._next_id = self._next_id + 1
        line = b'{"jsonrpc":"2.0","id":%d%b' % (request_id, tail)
        pending = self._new_waiter()
        # Registered before queueing, so a close while we wait for space fails it too.
        self._pending[request_id] = pending
        if route is not None:
            self._asked_routes[request_id] = route
        try:
            if self._on_raw is not None or not send_now(line):
                await self._queue_request(request_id, line, out)
            if on_sent is not None:
                on_sent(request_id)
            answer = await pending
        except BaseException:
            if self._pending.pop(request_id, None) is not None:
                self._send_cancel(request_id, out)
            raise
        finally:
            if route is not None:
                del self._asked_routes[request_id]
        if isinstance(answer, BaseException):
            if type(answer) is Refused:
                raise RequestError(
                    INTERNAL_ERROR,
                    short(
                        f"the peer's response to {method} (request {request_id}) "
                        f"was refused: {answer}"
                    ),
                )
            raise answer
        try:
            return decode(answer)
        except DECODE_ERRORS as exc:
            raise RemoteProtocolError(
                short(f"the peer's result for {method} is invalid: {exc}")
            ) from exc

    async def _queue_request(self, request_id: int, line: bytes, out: RouteOut) -> None:
        """Tap and queue a request line when that may wait (a full buffer, a tap on the wire)."""
        try:
            if self._on_raw is not None:
                self._on_raw("out", line[:-1])
                if out is self._out and self._send_request(line):
                    return
            await out.put(line)
        except BaseException:
            self._pending.pop(request_id, None)
            raise

    def _send_cancel(self, request_id: int, out: RouteOut) -> None:
        if not self._open or not self.withdraws_requests:
            return
        line = _CANCEL_LINE % request_id
        if self._on_raw is not None:
            self._on_raw("out", line[:-1])
        # A cancellation must go out promptly, so it does not queue for space.
        out.put_nowait(line)

    async def _write_loop(self, scope: anyio.CancelScope) -> None:
        try:
            with scope:
                try:
                    await self._channel.write_all()
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    logger.debug("the peer stopped reading; dropping outgoing messages")
                    self._outgoing.close(discard=True)
                    if self._reader_scope is not None:
                        self._reader_scope.cancel()
                    self._mark_closed("the peer stopped reading")
        finally:
            assert self._writer_done is not None
            self._writer_done.set()

    # ---------------------------------------------------------------- receiving
    # (what each line becomes: see the Receiver base class)

    async def _read_loop(self, scope: anyio.CancelScope) -> None:
        channel = self._channel
        channel.set_response_hook(self._take_responses)
        try:
            with scope:
                await self._read_all(channel.reader)
        finally:
            channel.set_response_hook(None)
            self._mark_closed("the peer closed the connection")

    def _mark_closed(self, reason: str) -> None:
        """The connection can no longer be used: fail what waits, cancel what runs."""
        if not self._open:
            return
        self._open = False
        pending, self._pending = self._pending, {}
        for entry in pending.values():
            if not entry.done():
                entry.set_result(ConnectionClosed(reason))
                self._waiter_set()
        for scope in self._incoming.values():
            scope.cancel()
        self._set_closed()

    def _set_closed(self) -> None:
        self._ended = True
        if self._closed is not None:
            self._closed.set()

    # ---------------------------------------------------------- answering requests

    def _task_done(self) -> None:
        self._active -= 1
        if not self._active and self._idle is not None:
            self._idle.set()
            self._idle = None

    async def _run_single(self, job: Job) -> None:
        _serving.set(self)
        context = RequestContext(job[0], job[1], job[3], job[4])
        try:
            await self._reply(await self._answer(job, context), job[5])
            run_after_response(context)
        finally:
            self._task_done()

    async def _run_batch(self, jobs: list[Job], replies: list[bytes], route: object) -> None:
        _serving.set(self)
        try:
            contexts = [RequestContext(job[0], job[1], job[3], job[4]) for job in jobs]
            async with anyio.create_task_group() as group:
                for job, context in zip(jobs, contexts, strict=True):
                    group.start_soon(self._answer_into, job, context, replies)
            await self._reply(batch_line(replies), route)
            for context in contexts:
                run_after_response(context)
        finally:
            self._task_done()

    async def _answer_into(self, job: Job, context: RequestContext, replies: list[bytes]) -> None:
        replies.append(await self._answer(job, context))

    async def _answer(self, job: Job, context: RequestContext) -> bytes:
        """Run the handler for one request; return its response line."""
        request_id, method, params, scope, _, _ = job
        result: object = None
        try:
            with scope:
                result = await self._handler.on_request(method, params, context)
            if scope.cancelled_caught:
                return error_line(request_id, RequestError.request_cancelled())
        except Exception as exc:
            error = request_error_in(exc)
            if error is None and is_decoder_recursion(exc):
                # The params went deeper than the handler's decoder could follow.
                error = RequestError.invalid_params("the params are nested too deeply")
            if error is None:
                logger.exception("request handler for %s failed", method)
                error = RequestError.internal_error(short(f"Internal error: {describe(exc)}"))
            return error_line(request_id, error)
        finally:
            del self._incoming[request_id]
        try:
            encoded = self._encode(result)
        except Exception as exc:
            logger.exception("could not encode the result of %s", method)
            return error_line(
                request_id,
                RequestError(INTERNAL_ERROR, short(f"Could not encode result: {describe(exc)}")),
            )
        return b'{"jsonrpc":"2.0","id":%b,"result":%b}\n' % (encode_plain(request_id), encoded)


def _nothing() -> None:
    pass


class RouteView:
    """One route of a routed connection: what a session sends through (see
    :meth:`Connection.for_route`).

    Everything sent through it goes on its route, in the order sent, and waits
    only for its own route's room; requests share the connection's ids and
    answers, so an answer arriving on any route wakes its request.
    """

    __slots__ = ("_connection", "_out", "_route")

    def __init__(self, connection: Connection, route: object, out: RouteOut) -> None:
        self._connection = connection
        self._route = route
        self._out = out

    async def write_queued(self) -> bool:
        """Have the transport write what is queued on the route in the caller's task, if
        its route offers that (``write_queued``, see :class:`acpio.rpc.RouteOut`); True
        when it wrote."""
        write_queued: Callable[[], Awaitable[bool]] | None = getattr(
            self._out, "write_queued", None
        )
        return False if write_queued is None else await write_queued()

    @property
    def line_sender(self) -> Callable[[bytes], Awaitable[None]]:
        """Send one encoded line (ending in a newline) on the route, waiting for its room."""
        if self._connection._on_raw is not None:  # pyright: ignore[reportPrivateUsage]
            return self._send_tapped
        return self._out.put

    @property
    def line_try_sender(self) -> Callable[[bytes], bool]:
        """Send one encoded line now if the route has room; False (nothing sent) otherwise."""
        if self._connection._on_raw is not None:  # pyright: ignore[reportPrivateUsage]
            return self._try_send_tapped
        return self._out.try_put

    @property
    def closed(self) -> bool:
        """Whether the connection has closed."""
        return self._connection.closed

    async def _send_tapped(self, line: bytes) -> None:
        self._connection._on_raw("out", line[:-1])  # type: ignore[misc]  # pyright: ignore[reportPrivateUsage, reportOptionalCall]
        await self._out.put(line)

    def _try_send_tapped(self, line: bytes) -> bool:
        if not self._out.try_put(line):
            return False
        self._connection._on_raw("out", line[:-1])  # type: ignore[misc]  # pyright: ignore[reportPrivateUsage, reportOptionalCall]
        return True

    async def notify(self, method: str, params: object) -> None:
        """Send a notification on the route (``params=None`` omits params)."""
        await self.line_sender(self._connection.notification_line(method, params))

    async def request(self, method: str, params: object, decode: Callable[[msgspec.Raw], T]) -> T:
        """:meth:`Connection.request`, sent on the route."""
        connection = self._connection
        return await self.request_prepared(
            method, connection.prepare_request(method, params), decode
        )

    def prepare_request(self, method: str, params: object) -> bytes:
        """:meth:`Connection.prepare_request`."""
        return self._connection.prepare_request(method, params)

    async def request_prepared(
        self, method: str, tail: bytes, decode: Callable[[msgspec.Raw], T]
    ) -> T:
        """:meth:`Connection.request_prepared`, sent on the route."""
        out = self._out
        return await self._connection._request_on(  # pyright: ignore[reportPrivateUsage]
            self._route, out, out.try_put, method=method, tail=tail, decode=decode
        )
