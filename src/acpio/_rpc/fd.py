"""The file-descriptor backend: non-blocking fd streams and the asyncio line channel.

Everything acpio does differently on asyncio, to save event-loop turns per
message, lives here, behind the line-channel interface of
:mod:`acpio._rpc.channel`; no layer above tests for these classes.

How this works:

- :class:`FdReceiveStream` and :class:`FdSendStream` read and write a
  file descriptor without blocking the loop, on any anyio backend (they are
  what :func:`~acpio.rpc.stdio_streams` returns). On asyncio a pollable input
  descriptor is read by a callback that stays registered with the loop
  (``add_reader``), saving a loop turn and two ``epoll_ctl`` calls per wait;
  elsewhere by ``anyio.wait_readable``.
- :class:`AsyncioChannel` is the line channel on a running asyncio loop.
  A sent request waits on a bare future, the cheapest thing a task can
  wait on there, which the response sets to the raw result. Over an fd send stream, a request
  and whatever was queued before it are written by the requesting task
  itself when the writer task holds nothing, and other output is written from
  a ``call_soon`` callback instead of waking the writer task (which is woken
  only when the descriptor is full). Over an fd receive stream, responses at
  the start of a fresh read are handled straight from the read callback,
  without waking the reader task (``FdReceiveStream.on_data``).

Order is kept throughout: only one writer at a time (the writer task, or an
inline write while the writer task holds nothing), the unwritten tail of an
inline write goes back to the front of the outgoing buffer, and the read hook
only runs while the reader waits with nothing buffered.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import os
import stat
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, cast

import anyio
import anyio.lowlevel
from anyio.abc import ByteReceiveStream, ByteSendStream

from .lines import DEFAULT_READ_SIZE, LineReader
from .outgoing import OutgoingBuffer
from .wire import Answer

if TYPE_CHECKING:
    import asyncio

__all__ = ["AsyncioChannel", "FdReceiveStream", "FdSendStream", "asyncio_channel"]

PIPE_BUFFER_SIZE: Final = 1024 * 1024


class FdReceiveStream(ByteReceiveStream):
    """Reads a file descriptor without blocking the event loop.

    On asyncio a pollable descriptor is read by a callback registered once
    with the loop (``add_reader``), which reads eagerly into a small buffer:
    waiting for input then costs no ``epoll_ctl`` calls and no extra loop
    iteration. The buffer holds at most about two reads; past one read the
    callback is removed until the buffer is drained, so the peer still feels
    backpressure. Elsewhere (trio, regular files) the descriptor is read on
    demand after ``anyio.wait_readable``.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._pollable = _make_nonblocking(fd)
        self._closed = False
        # Filled in by the first receive on asyncio; None means "not decided yet".
        self._loop: asyncio.AbstractEventLoop | None = None
        self._use_loop_reader: bool | None = None
        self._registered = False
        self._read_size: int = 0
        # Reads land in one buffer made once (see _set_read_size).
        self._view = memoryview(bytearray(0))
        self._views: tuple[memoryview, ...] = (self._view,)
        self._chunks: collections.deque[bytes] = collections.deque()
        self._buffered = 0
        self._eof = False
        self._error: OSError | None = None
        self._waiter: asyncio.Future[None] | None = None
        self.on_data: Callable[[bytes], bytes] | None = None
        """Given a read while the reader waits with nothing buffered (loop reader
        only), handles what it can at once and returns the rest for the reader."""

    def _set_read_size(self, size: int) -> None:
        """Read at most ``size`` bytes per read (and :data:`DEFAULT_READ_SIZE`) from now on.

        ``os.read(fd, n)`` allocates ``n`` bytes up front and shrinks the
        result to what arrived: for a size above the C allocator's mmap
        threshold (128 KiB by default in glibc) that can be an ``mmap``, an
        ``mremap``, a ``munmap`` and page faults per read, however short the
        message, depending on the heap's layout (the same agent ran 1.5x
        slower per permission round trip depending on how it was launched).
        Reading into one buffer made here and copying out what arrived costs
        the same whatever the size and the allocator.
        """
        if size != self._read_size:
            self._read_size = size
            self._view = memoryview(bytearray(max(1, min(size, DEFAULT_READ_SIZE))))
            self._views = (self._view,)

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if self._use_loop_reader is None:
            self._set_read_size(max(max_bytes, 1))
            self._use_loop_reader = self._start_loop_reader()
        if self._use_loop_reader:
            return await self._receive_buffered(max_bytes)
        while True:
            # Once closed the descriptor is blocking again: reading it could stall the loop.
            if self._closed:
                raise anyio.ClosedResourceError
            self._set_read_size(max(max_bytes, 1))
            try:
                data = self._view[: os.readv(self._fd, self._views)].tobytes()
            except BlockingIOError:
                await anyio.wait_readable(self._fd)
                continue
            except OSError as exc:
                raise anyio.BrokenResourceError from exc
            if not data:
                raise anyio.EndOfStream
            # A flood of input must not starve the other tasks of the loop.
            await anyio.lowlevel.checkpoint()
            return data

    def _start_loop_reader(self) -> bool:
        if self._closed or not self._pollable:
            return False
        try:
            loop = running_asyncio_loop()
            if loop is None:
                return False
            loop.add_reader(self._fd, self._on_readable)
        except (NotImplementedError, RuntimeError):
            # No running asyncio loop, or a Proactor loop on Windows without
            # add_reader: anyio's path copes.
            return False
        self._loop = loop
        self._registered = True
        # Input that is already waiting is taken now, as a direct read would.
        self._on_readable()
        return True

    def _on_readable(self) -> None:
        try:
            data = self._view[: os.readv(self._fd, self._views)].tobytes()
        except BlockingIOError:
            return
        except OSError as exc:
            self._error = exc
            self._pause()
        else:
            if data:
                hook, waiter = self.on_data, self._waiter
                # Only while the reader waits with nothing buffered: then no line
                # read earlier is still unhandled, and the hook keeps the order.
                if hook and waiter and not waiter.done() and not self._chunks:
                    data = hook(data)
                    if not data:
                        return
                self._chunks.append(data)
                self._buffered += len(data)
                if self._buffered >= self._read_size:
                    self._pause()
            else:
                self._eof = True
                self._pause()
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _pause(self) -> None:
        # The selector is level-triggered: unread input would call us back forever.
        if self._registered and self._loop is not None:
            self._registered = False
            self._loop.remove_reader(self._fd)

    async def _receive_buffered(self, max_bytes: int) -> bytes:
        self._set_read_size(max(max_bytes, 1))
        waited = False
        while not self._chunks:
            if self._closed:
                raise anyio.ClosedResourceError
            if self._error is not None:
                raise anyio.BrokenResourceError from self._error
            if self._eof:
                raise anyio.EndOfStream
            if self._waiter is not None:
                raise anyio.BusyResourceError("reading from")
            assert self._loop is not None
            waiter = self._waiter = self._loop.create_future()
            try:
                # Cancelling the wait loses nothing: the data stays buffered.
                await waiter
            finally:
                self._waiter = None
            waited = True
        if self._closed:
            raise anyio.ClosedResourceError
        chunks = self._chunks
        data = chunks.popleft()
        if len(data) > max_bytes:
            chunks.appendleft(data[max_bytes:])
            data = data[:max_bytes]
        else:
            while chunks and len(data) + len(chunks[0]) <= max_bytes:
                data += chunks.popleft()
        self._buffered -= len(data)
        if (
            not self._registered
            and not self._eof
            and self._error is None
            and self._buffered < self._read_size
        ):
            assert self._loop is not None
            self._loop.add_reader(self._fd, self._on_readable)
            self._registered = True
        if not waited:
            # A flood of input must not starve the other tasks of the loop.
            await anyio.lowlevel.checkpoint()
        return data

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            self._pause()
            self._chunks.clear()
            self._buffered = 0
            waiter = self._waiter
            if waiter is not None and not waiter.done():
                waiter.set_result(None)
            _restore_blocking(self._fd, self._pollable)


class FdSendStream(ByteSendStream):
    """Writes a file descriptor without blocking the event loop."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._pollable = _make_nonblocking(fd)
        self._closed = False

    async def send(self, item: bytes) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        view = memoryview(item)
        while view:
            try:
                written = os.write(self._fd, view)
            except BlockingIOError:
                await anyio.wait_writable(self._fd)
                continue
            except OSError as exc:
                raise anyio.BrokenResourceError from exc
            view = view[written:]

    def send_nowait(self, data: bytes) -> int:
        """Write what fits right now; return how many bytes were written.

        Returns 0 when the descriptor is full, closed or broken (the caller
        then hands the data to :meth:`send`, which waits or reports the error).
        """
        if self._closed or not self._pollable:
            return 0
        try:
            return os.write(self._fd, data)
        except OSError:
            return 0

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            _restore_blocking(self._fd, self._pollable)


def _make_nonblocking(fd: int) -> bool:
    """Switch a pipe, socket or tty to non-blocking mode; report whether that happened.

    Regular files and devices such as ``/dev/null`` never block and cannot
    be polled, so they are left as they are.
    """
    mode = os.fstat(fd).st_mode
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)):
        return False
    try:
        os.set_blocking(fd, False)
    except OSError:  # pragma: no cover - exotic descriptors
        return False
    if stat.S_ISFIFO(mode):
        _grow_pipe(fd)
    return True


def _grow_pipe(fd: int) -> None:
    """Ask Linux for a larger pipe buffer (64 KiB by default), within the unprivileged limit.

    Fewer full-pipe waits means fewer event-loop round trips per megabyte
    streamed; where the call is not available nothing changes.
    """
    if sys.platform != "linux":  # pragma: no cover
        return
    import fcntl  # noqa: PLC0415 - Unix only; this module must import everywhere

    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BUFFER_SIZE)


def _restore_blocking(fd: int, was_changed: bool) -> None:
    # The flag lives on the open file description, which the editor's terminal
    # or a parent shell may share: leave it as we found it.
    if was_changed:
        with contextlib.suppress(OSError):
            os.set_blocking(fd, True)


# ------------------------------------------------------------ the asyncio channel


def running_asyncio_loop() -> asyncio.AbstractEventLoop | None:
    """The running asyncio loop when the current task runs on asyncio, else None (trio)."""
    # No asyncio loop runs before asyncio is imported: acpio leaves that import to the
    # backend (anyio.run), so a trio agent never pays for it.
    if "asyncio" not in sys.modules:
        return None
    import asyncio  # noqa: PLC0415

    try:
        # Only an asyncio task has a current asyncio task (not trio, nor trio-asyncio's
        # trio side); anyio no longer ships sniffio, so ask asyncio itself.
        if asyncio.current_task() is None:
            return None
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class AsyncioChannel:
    """The line channel on a running asyncio loop (see the module doc for what it saves)."""

    __slots__ = (
        "_flush_handle",
        "_loop",
        "_new_future",
        "_outgoing",
        "_receive",
        "_send",
        "_send_nowait",
        "_writing",
        "reader",
    )

    def __init__(
        self,
        receive: ByteReceiveStream,
        send: ByteSendStream,
        outgoing: OutgoingBuffer,
        max_line: int,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        self.reader = LineReader(receive, max_line)
        self._receive = receive
        self._send = send
        self._outgoing = outgoing
        self._loop = loop
        self._send_nowait = send.send_nowait if isinstance(send, FdSendStream) else None
        self._flush_handle: asyncio.Handle | None = None
        # True while the writer task holds a block it took from the buffer.
        self._writing = False
        futures = running_loop_future_factory()
        assert futures is not None  # the loop runs
        self._new_future: Callable[[], asyncio.Future[Answer]] = futures

    def waiter_factory(self) -> Callable[[], asyncio.Future[Answer]]:
        """What makes a slot for one sent request's response: a bare future of this loop."""
        return self._new_future

    def waiter_set(self) -> None:
        """A response set a waiter: have a flush ready right behind the task it wakes.

        A woken requester usually sends at once (the ``running`` update after
        a permission answer). Its wake-up and this flush then run in the same
        loop iteration, task first, so what it queued is written without the
        extra iteration (and ``epoll_wait``) that scheduling the flush from
        inside the task would cost once the task's next request had already
        written it inline and left a cancelled callback behind.
        """
        if self._flush_handle is None and self._outgoing.on_data is not None:
            self._flush_handle = self._loop.call_soon(self._flush_soon)

    def set_response_hook(self, hook: Callable[[LineReader, bytes], bytes] | None) -> None:
        """Let the read callback hand fresh reads to ``hook`` first (fd input only)."""
        receive = self._receive
        if isinstance(receive, FdReceiveStream):
            receive.on_data = None if hook is None else functools.partial(hook, self.reader)

    def send_request(self, line: bytes) -> bool:
        """Queue a request and write it now, one loop turn sooner than the writer would.

        Everything queued before it goes out in the same write; only while the
        writer task holds nothing (one writer at a time), and what the
        descriptor does not take goes back to the front of the queue.
        """
        send_nowait = self._send_nowait
        if send_nowait is None or self._writing:
            return self._outgoing.try_put(line)
        outgoing = self._outgoing
        data = outgoing.take_with(line)
        if data is None:
            return False
        self._write(data, send_nowait)
        return True

    async def write_all(self) -> None:
        """Write what the outgoing buffer holds, in order, until it is closed and drained."""
        outgoing = self._outgoing
        if self._send_nowait is not None:
            outgoing.on_data = self._schedule_flush
        try:
            send = self._send.send
            take = outgoing.take
            while True:
                data = await take()
                if data is None:
                    break
                self._writing = True
                try:
                    await send(data)
                finally:
                    self._writing = False
        finally:
            outgoing.on_data = None
            if self._flush_handle is not None:
                self._flush_handle.cancel()
                self._flush_handle = None

    def _write_inline(self, send_nowait: Callable[[bytes], int]) -> None:
        """Write the queue from the current task or callback, as far as the descriptor takes it.

        Only done while the writer task holds nothing, so one writer at a time
        keeps the order; what does not fit goes back to the front of the queue.
        """
        data = self._outgoing.take_nowait()
        if data:
            self._write(data, send_nowait)

    def _write(self, data: bytes, send_nowait: Callable[[bytes], int]) -> None:
        """Write ``data`` (taken from the queue) now; what does not fit goes back to its front."""
        written = send_nowait(data)
        if written < len(data):
            self._outgoing.unwrite(data[written:])
        elif self._flush_handle is not None:
            # Everything is out: the scheduled flush would find nothing to do.
            self._flush_handle.cancel()
            self._flush_handle = None

    def _schedule_flush(self) -> None:
        """Arrange for what was just queued to be written from a loop callback.

        The callback runs after the current task yields, so a burst of sends
        is still one write, and it costs no task switch: the writer task is
        woken only when the descriptor is full.
        """
        if self._flush_handle is None:
            self._flush_handle = self._loop.call_soon(self._flush_soon)

    def _flush_soon(self) -> None:
        self._flush_handle = None
        # While the writer task holds a block, it takes the rest itself when done.
        if not self._writing and self._send_nowait is not None:
            self._write_inline(self._send_nowait)


def running_loop_future_factory() -> Callable[[], asyncio.Future[Answer]] | None:
    """What makes bare futures of the running asyncio loop; None when not on asyncio."""
    loop = running_asyncio_loop()
    if loop is None:
        return None
    import asyncio  # noqa: PLC0415 - loaded already: the loop is running

    if type(loop).create_future is asyncio.BaseEventLoop.create_future:
        # The default loop's create_future, without its Python frame.
        return cast(
            "Callable[[], asyncio.Future[Answer]]", functools.partial(asyncio.Future, loop=loop)
        )
    return loop.create_future


def asyncio_channel(
    receive: ByteReceiveStream, send: ByteSendStream, outgoing: OutgoingBuffer, max_line: int
) -> AsyncioChannel | None:
    """The asyncio line channel when the current task runs on asyncio, else None."""
    loop = running_asyncio_loop()
    if loop is None:
        return None
    return AsyncioChannel(receive, send, outgoing, max_line, loop)
