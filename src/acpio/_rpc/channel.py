"""The line channel: the one seam between a connection and its I/O backend.

How this works: a :class:`~acpio._rpc.connection.Connection` never looks at the
type of its streams. When it is entered it asks :func:`open_channel` for a
:class:`LineChannel` over its :class:`~acpio._rpc.transport.StreamPair` and its
outgoing buffer, and from then on reads, writes and waits only through it:

- ``reader`` frames the input into lines (:class:`~acpio._rpc.lines.LineReader`);
- ``write_all()`` is the connection's writer: it drains the outgoing buffer
  (:mod:`acpio._rpc.outgoing`) to the peer in order until the buffer is closed;
- ``waiter_factory()`` gives what makes the slot a sent request waits on for its answer
  (the result's raw JSON, or the exception to raise), and ``waiter_set()``
  is told each time the receiving half set one;
- ``send_request(line)`` queues a request line (and may write it at once),
  and ``set_response_hook()`` offers a way to handle responses straight from
  a read, for backends that can do either sooner than the reader and writer
  tasks (a plain queue and a no-op elsewhere).

There are two implementations, chosen once per connection: the asyncio
channel of the file-descriptor backend (:mod:`acpio._rpc.fd`), whenever the
connection runs on asyncio, and :class:`AnyioChannel`, plain anyio, on
every other backend (trio). Both keep the same invariants: lines are written
in the order they were queued, by one writer at a time; a waiter is set
once (``done()`` says whether it still can be: a waiter whose task stopped
waiting may be done already), and setting one nobody awaits any more is
harmless.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any, Protocol

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream

from .fd import asyncio_channel, running_loop_future_factory
from .lines import LineReader
from .outgoing import OutgoingBuffer
from .wire import Answer

__all__ = [
    "AnyioChannel",
    "EventWaiter",
    "LineChannel",
    "Waiter",
    "open_channel",
    "plain_waiter_factory",
]


class Waiter(Protocol):
    """A sent request's slot: the receiving half sets its answer once, the requester awaits it.

    ``await waiter`` returns the answer given to ``set_result`` (a raw result,
    or the exception the requester raises). Only a waiter that is not
    ``done()`` may be set; one whose task stopped waiting may be done
    already (on asyncio a cancelled wait cancels its future).
    """

    def done(self) -> bool: ...

    def set_result(self, answer: Answer, /) -> None: ...

    def __await__(self) -> Generator[Any, None, Answer]: ...


class LineChannel(Protocol):
    """Lines in, lines out, and request waiters, over one :class:`StreamPair`.

    ``write_all`` writes every block the outgoing buffer hands out, in order,
    and returns once the buffer is closed and drained; a peer that stopped
    reading surfaces as ``anyio.BrokenResourceError``,
    ``anyio.ClosedResourceError`` or ``OSError``.
    """

    @property
    def reader(self) -> LineReader: ...

    def waiter_factory(self) -> Callable[[], Waiter]:
        """What makes the slot each sent request waits on (asked once, called per request)."""
        ...

    def waiter_set(self) -> None:
        """Called after the receiving half set a waiter (the backend may prepare a write)."""
        ...

    def set_response_hook(self, hook: Callable[[LineReader, bytes], bytes] | None) -> None: ...

    def send_request(self, line: bytes) -> bool:
        """Queue a request line after everything queued before it, if that needs no
        waiting; False (nothing queued) when the outgoing buffer has no room."""
        ...

    async def write_all(self) -> None: ...


class EventWaiter:
    """A sent request's slot on any anyio backend: an :class:`anyio.Event` and the answer."""

    __slots__ = ("_answer", "_event")

    def __init__(self) -> None:
        self._event = anyio.Event()
        self._answer: Answer | None = None

    def done(self) -> bool:
        """True once the answer was set."""
        return self._event.is_set()

    def set_result(self, answer: Answer, /) -> None:
        """Set the answer and let the requesting task go on (harmless if it stopped waiting)."""
        self._answer = answer
        self._event.set()

    def __await__(self) -> Generator[Any, None, Answer]:
        yield from self._event.wait().__await__()
        answer = self._answer
        assert answer is not None
        return answer


class AnyioChannel:
    """The plain anyio line channel: one reader task, one writer task, events."""

    __slots__ = ("_outgoing", "_send", "reader")

    def __init__(
        self,
        receive: ByteReceiveStream,
        send: ByteSendStream,
        outgoing: OutgoingBuffer,
        max_line: int,
    ) -> None:
        self.reader = LineReader(receive, max_line)
        self._send = send
        self._outgoing = outgoing

    def waiter_factory(self) -> Callable[[], EventWaiter]:
        """What makes a slot for one sent request's response."""
        return EventWaiter

    def waiter_set(self) -> None:
        """Nothing to do: the woken task's output wakes the writer task."""

    def set_response_hook(self, hook: Callable[[LineReader, bytes], bytes] | None) -> None:
        """Nothing to do: the reader task handles every line."""

    def send_request(self, line: bytes) -> bool:
        """Queue the request line: the writer task, woken by the buffer, writes it."""
        return self._outgoing.try_put(line)

    async def write_all(self) -> None:
        """Write what the outgoing buffer holds, in order, until it is closed and drained."""
        send = self._send.send
        take = self._outgoing.take
        while True:
            data = await take()
            if data is None:
                return
            await send(data)


def open_channel(
    receive: ByteReceiveStream, send: ByteSendStream, outgoing: OutgoingBuffer, max_line: int
) -> LineChannel:
    """The line channel for these streams on the running backend (asyncio's, else anyio's).

    Called where the event loop is known (entering a connection); outside
    any loop it returns the anyio channel, which works on every backend.
    """
    channel: LineChannel | None = asyncio_channel(receive, send, outgoing, max_line)
    if channel is None:
        channel = AnyioChannel(receive, send, outgoing, max_line)
    return channel


def plain_waiter_factory() -> Callable[[], Waiter]:
    """What makes request slots without a line channel (a routed connection): a bare
    future of the running asyncio loop, else (trio, or no loop yet) :class:`EventWaiter`."""
    futures = running_loop_future_factory()
    return futures if futures is not None else EventWaiter
