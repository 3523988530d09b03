"""The receiving half of a connection: lines in, messages dispatched, refusals answered.

How this works: the connection's reader task hands every complete line to
:meth:`Receiver._handle_line`. A line that is not UTF-8 or nests arrays and
objects deeper than ``max_nesting_depth`` is refused before the JSON decoder
sees it (see :mod:`acpio._rpc.scan`); a batch is unpacked here. Each message is
then classified: a response wakes the request waiting for it, a notification
runs inline in arrival order (``$/cancel_request`` cancels the request it
names), and a valid request is registered at once (so duplicate ids, the
concurrency limit and a cancel that follows see it) and started in its own
task of the connection's task group. Whatever is invalid is answered at
once, with the request's ``id`` whenever it can be read, even from a message
the decoder refused.

:class:`Receiver` is a base class of :class:`~acpio._rpc.connection.Connection`
rather than an object of its own, so the per-message path reads the
connection's state with no extra indirection; the connection sets the
attributes declared below and runs the request tasks.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio
import msgspec

from .._errors import ConnectionClosed, RequestError
from .channel import Waiter
from .handler import MessageHandler
from .lines import LineReader, Oversized
from .routes import RouteOut, Routes
from .scan import (
    _is_object,
    _scalar,
    _too_deep,
    _top_level_items,
    _top_level_members,
    leading_members,
)
from .tasks import RequestTasks
from .wire import (
    CANCEL_REQUEST,
    DECODE_ERRORS,
    LEADING_WHITESPACE,
    NULL_ID_REPLY,
    OPEN_BRACE,
    OPEN_BRACKET,
    Answer,
    Envelope,
    Refused,
    RequestId,
    batch_line,
    decode_batch,
    decode_cancel,
    decode_envelope,
    error_from_wire,
    error_line,
    is_decoder_recursion,
    is_valid_id,
    parse_error,
    short,
    valid_id_or_none,
)

_NEWLINE = ord("\n")

__all__ = ["Job", "Receiver"]

logger = logging.getLogger(__name__)


# (request id, method, params, cancel scope, sequence, route of its answer) of an
# accepted incoming request (the route is ``None`` but on a routed connection).
Job = tuple[RequestId, str, msgspec.Raw | None, anyio.CancelScope, int, object]


class Receiver:
    """Reads and dispatches what the peer sends (see the module doc)."""

    # Set by Connection.__init__.
    received: int
    _handler: MessageHandler
    _max_message_size: int
    _max_depth: int
    _depth_check_above: int
    _response_hook_limit: int
    _max_concurrent: int
    _out: RouteOut
    _routes: Routes | None
    _on_raw: Callable[[str, bytes], None] | None
    _pending: dict[int, Waiter]
    _waiter_set: Callable[[], None]
    _incoming: dict[RequestId, anyio.CancelScope]
    _open: bool
    _requests: RequestTasks
    _active: int

    if TYPE_CHECKING:
        # Run by the connection, which builds each request's context.
        async def _run_single(self, job: Job) -> None: ...

        async def _run_batch(
            self, jobs: list[Job], replies: list[bytes], route: object
        ) -> None: ...

    async def _read_all(self, reader: LineReader) -> None:
        while True:
            lines = await reader.receive_lines()
            if not lines:
                break
            for line in lines:
                if isinstance(line, Oversized):
                    reply = self._refuse_oversized(line.head)
                    if reply is not None:
                        await self._reply(reply)
                    continue
                if self._on_raw is not None:
                    self._on_raw("in", line)
                await self._handle_line(line)

    def _take_responses(self, reader: LineReader, data: bytes) -> bytes:
        """Handle the responses at the start of a fresh read at once; return the rest.

        The line channel's response hook (``set_response_hook``): on asyncio
        over a pipe it is called from the loop's read callback while the reader
        task waits with nothing buffered (see :mod:`acpio._rpc.fd`): a response then
        wakes its request without first waking the reader task. Only plain
        cases are taken (whole lines, short, ASCII, an object whose envelope
        decodes as a response); from the first other line on, everything is
        left to the reader task, in order.
        """
        size = len(data)
        if data[-1] != _NEWLINE or not reader.at_line_start:
            return data
        start = 0
        limit = self._response_hook_limit
        while start < size:
            end = data.index(b"\n", start) + 1
            # With its newline (which the decoder skips): a read of one line is
            # then ``data`` itself, not a copy.
            line = data[start:end]
            if end - start > limit + 1 or line[0] != OPEN_BRACE or not line.isascii():
                break
            try:
                envelope = decode_envelope(line)
            except (msgspec.DecodeError, RecursionError):
                break
            if envelope.method is not msgspec.UNSET or (
                envelope.result is msgspec.UNSET and envelope.error is msgspec.UNSET
            ):
                break
            if self._on_raw is not None:
                try:
                    self._on_raw("in", line[:-1])
                except Exception:
                    break  # the reader task taps this line again and meets the error as usual
            self.received += 1
            self._handle_response(envelope)
            start = end
        return data[start:] if start else data

    async def _handle_line(self, line: bytes, route: object = None) -> None:
        # msgspec leaves the inside of raw params unchecked, so check UTF-8 here.
        if not line.isascii():
            try:
                line.decode()
            except UnicodeDecodeError:
                await self._reply(
                    error_line(
                        None, RequestError.parse_error("Parse error: the message is not UTF-8")
                    ),
                    route,
                )
                return
        first = line[0]
        if first in LEADING_WHITESPACE:
            first = line.lstrip()[0]
        if len(line) > self._depth_check_above and _too_deep(line, self._max_depth):
            logger.warning(
                "refused an incoming message nested deeper than %d levels", self._max_depth
            )
            if first == OPEN_BRACKET:
                await self._handle_batch(line, route, deep=True)
            else:
                await self._refuse_deep(line, route)
            return
        if first == OPEN_BRACKET:
            await self._handle_batch(line, route)
            return
        reply: bytes | None
        try:
            envelope = decode_envelope(line)
        except msgspec.ValidationError as exc:
            # Valid JSON: either no object at all, or a value the decoder cannot hold.
            if _is_object(line):
                reply = self._unreadable(line, parse_error(exc), valid_json=True)
            else:
                reply = error_line(
                    None, RequestError.invalid_request("The message is not a JSON object")
                )
        except RecursionError:
            # Only when the depth limit was set beyond what the decoder can take.
            await self._refuse_deep(line, route)
            return
        except msgspec.DecodeError as exc:
            reply = self._unreadable(line, parse_error(exc), valid_json=False)
        else:
            reply = await self._dispatch(envelope, None, route)
        if reply is not None:
            await self._reply(reply, route)

    def _deep_error(self) -> RequestError:
        return RequestError.parse_error(
            f"Parse error: the message is nested deeper than the limit of {self._max_depth} levels"
        )

    async def _refuse_deep(self, line: bytes, route: object) -> None:
        """Answer a message nested too deeply without decoding it (see the module doc)."""
        reply = self._unreadable(line, self._deep_error(), valid_json=True)
        if reply is not None:
            await self._reply(reply, route)

    def _unreadable(self, line: bytes, error: RequestError, *, valid_json: bool) -> bytes | None:
        """What to do with a message the decoder refused; returns the reply, if any.

        Its top level is read without decoding: a request is answered with its
        id, a response fails the request it answers (never answered itself),
        a notification that is valid JSON is dropped. What cannot be read (or
        is not valid JSON) is answered with ``id: null``, as JSON-RPC says.
        """
        scanned = _top_level_members(line)
        if scanned is None:
            return error_line(None, error)
        members, complete = scanned
        if not complete and not valid_json:
            # Truncated or garbled: only a response to one of our requests, read
            # from the start, counts (the request fails rather than wait forever).
            cut = leading_members(line)
            if cut is not None and self._fail_cut_response(*cut, f"malformed: {error.message}"):
                return None
            return error_line(None, error)
        request_id = _scalar(members.get("id"))
        if "method" not in members and ("result" in members or "error" in members):
            self._fail_request(request_id, f"malformed: {error.message}")
            return None
        if valid_json and complete and "method" in members and "id" not in members:
            logger.warning("dropped a notification: %s", error.message)
            return None
        return error_line(valid_id_or_none(request_id), error)

    def _refuse_oversized(self, head: bytes) -> bytes | None:
        """What to do with a line past the size limit, from its first bytes; the reply, if any.

        A response to one of our requests (``id`` and ``result`` or ``error``
        read from its start) fails that request; a request whose ``id`` can be
        read is answered with it; anything else is answered with ``id: null``.
        """
        limit = self._max_message_size
        logger.warning("rejected an incoming message larger than %d bytes", limit)
        error = RequestError.invalid_request(
            f"Message rejected: larger than the limit of {limit} bytes"
        )
        cut = leading_members(head)
        if cut is None:
            return error_line(None, error)
        members, open_key = cut
        if self._fail_cut_response(members, open_key, f"larger than the limit of {limit} bytes"):
            return None
        if "method" in members or open_key == "method":
            return error_line(valid_id_or_none(_scalar(members.get("id"))), error)
        return error_line(None, error)

    def _fail_cut_response(
        self, members: dict[str, bytes | None], open_key: str | None, reason: str
    ) -> bool:
        """Fail the request a cut-off response answers; False when it is no response."""
        if "method" in members or open_key == "method":
            return False
        if not ("result" in members or "error" in members or open_key in ("result", "error")):
            return False
        self._fail_request(_scalar(members.get("id")), reason)
        return True

    def _fail_request(self, request_id: object, reason: str) -> None:
        """The peer's response to ``request_id`` could not be used: that request fails."""
        # ``type() is int`` so that ``true`` never matches request 1.
        pending = self._pending.pop(request_id, None) if type(request_id) is int else None
        if pending is None:
            logger.debug("ignoring an unusable response to unknown request %r", request_id)
        elif not pending.done():
            pending.set_result(Refused(short(reason)))
            self._waiter_set()

    async def _handle_batch(self, line: bytes, route: object, *, deep: bool = False) -> None:
        """Unpack a batch; one that is too deep is split without decoding its entries."""
        entries: list[msgspec.Raw] | list[bytes] | None
        try:
            entries = _top_level_items(line) if deep else decode_batch(line)
        except RecursionError:
            entries = _top_level_items(line)
            deep = True
        except msgspec.DecodeError as exc:
            await self._reply(error_line(None, parse_error(exc)), route)
            return
        if entries is None:
            await self._reply(error_line(None, self._deep_error()), route)
            return
        if not entries:
            await self._reply(error_line(None, RequestError.invalid_request("Empty batch")), route)
            return
        replies: list[bytes] = []
        jobs: list[Job] = []
        for raw in entries:
            reply: bytes | None
            if deep and _too_deep(bytes(raw), self._max_depth):
                reply = self._unreadable(bytes(raw), self._deep_error(), valid_json=True)
                if reply is not None:
                    replies.append(reply)
                continue
            try:
                envelope = decode_envelope(raw)
            except DECODE_ERRORS as exc:
                entry = bytes(raw)
                reply = (
                    self._unreadable(entry, parse_error(exc), valid_json=True)
                    if _is_object(entry)
                    else error_line(
                        None, RequestError.invalid_request("Batch entry is not an object")
                    )
                )
            else:
                reply = await self._dispatch(envelope, jobs, route)
            if reply is not None:
                replies.append(reply)
        if deep and not jobs and replies and all(r.startswith(NULL_ID_REPLY) for r in replies):
            # Nothing in it could be read: the batch is refused as a whole.
            replies = [error_line(None, self._deep_error())]
            await self._reply(replies[0], route)
            return
        if jobs:
            self._active += 1
            self._requests.start_soon(self._run_batch, jobs, replies, route)
        elif replies:
            await self._reply(batch_line(replies), route)

    async def _dispatch(
        self, envelope: Envelope, jobs: list[Job] | None, route: object = None
    ) -> bytes | None:
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
            return error_line(
                valid_id_or_none(request_id),
                RequestError.invalid_request('"method" is missing'),
            )
        if envelope.jsonrpc != "2.0":
            return error_line(
                valid_id_or_none(request_id),
                RequestError.invalid_request('"jsonrpc" must be exactly "2.0"'),
            )
        if not isinstance(method, str):
            return error_line(
                valid_id_or_none(request_id),
                RequestError.invalid_request('"method" must be a string'),
            )
        params = envelope.params
        raw_params: msgspec.Raw | None = None
        if params is not msgspec.UNSET:
            if memoryview(params)[0] not in (OPEN_BRACE, OPEN_BRACKET):
                return error_line(
                    valid_id_or_none(request_id),
                    RequestError.invalid_request('"params" must be an object or an array'),
                )
            raw_params = params
        if request_id is msgspec.UNSET:
            await self._run_notification(method, raw_params)
            return None
        if not is_valid_id(request_id):
            return error_line(
                None, RequestError.invalid_request('"id" must be an integer or a string')
            )
        assert isinstance(request_id, int | str)
        if request_id in self._incoming:
            return error_line(
                request_id,
                RequestError.invalid_request(f"Duplicate request id {request_id!r} still in use"),
            )
        if len(self._incoming) >= self._max_concurrent:
            return error_line(
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
        job = (request_id, method, raw_params, scope, self.received, route)
        if jobs is None:
            self._active += 1
            self._requests.start_soon(self._run_single, job)
        else:
            jobs.append(job)
        return None

    async def _run_notification(self, method: str, params: msgspec.Raw | None) -> None:
        if method == CANCEL_REQUEST:
            self._cancel_incoming(params)
            return
        try:
            await self._handler.on_notification(method, params)
        except Exception as exc:
            if is_decoder_recursion(exc):
                logger.warning("ignoring %s: its params are nested too deeply", method)
            else:
                logger.exception("notification handler for %s failed", method)

    def _cancel_incoming(self, params: msgspec.Raw | None) -> None:
        try:
            request_id = decode_cancel(params).request_id if params is not None else None
        except DECODE_ERRORS:
            request_id = None
        if not is_valid_id(request_id):
            logger.warning("ignoring malformed $/cancel_request: %r", bytes(params or b"")[:200])
            return
        assert isinstance(request_id, int | str)
        scope = self._incoming.get(request_id)
        if scope is not None:
            scope.cancel()
        else:
            logger.debug("ignoring $/cancel_request for unknown request %r", request_id)

    async def _reply(self, line: bytes, route: object = None) -> None:
        """Send an answer on ``route`` (that of the request it answers; ``None``: the
        connection's own, and every answer of a connection over a stream)."""
        if self._on_raw is not None:
            self._on_raw("out", line[:-1])
        try:
            if route is None:
                await self._out.put(line)
            else:
                assert self._routes is not None
                await self._routes.out(route).put(line)
        except ConnectionClosed:
            logger.debug("connection closed before a response could be sent")

    def _handle_response(self, envelope: Envelope) -> None:
        request_id = envelope.id
        # ``type() is int`` so that ``true`` never matches request 1.
        pending = self._pending.pop(request_id, None) if type(request_id) is int else None
        self._settle(pending, envelope)

    def _settle(self, pending: Waiter | None, envelope: Envelope) -> None:
        """Set ``pending`` (popped for ``envelope.id``; None: unknown) to the response's answer."""
        request_id = envelope.id
        if pending is None:
            if request_id is None and envelope.error is not msgspec.UNSET:
                logger.warning("the peer reported an error: %r", envelope.error)
            else:
                logger.debug("ignoring a response to unknown or abandoned request %r", request_id)
            return
        if pending.done():
            return  # the request's wait was cancelled; its task forgets it
        answer: Answer
        if envelope.error is not msgspec.UNSET:
            answer = error_from_wire(envelope.error)
        elif envelope.result is not msgspec.UNSET:
            answer = envelope.result
        else:
            answer = Refused("malformed: neither result nor error")
        pending.set_result(answer)
        self._waiter_set()
