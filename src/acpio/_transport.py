"""Byte transports for newline-delimited JSON: stdio, subprocess pipes, in-memory pairs.

How this works: a transport is just a pair of anyio byte streams (one to
receive, one to send). :class:`LineReader` turns the receiving side into
complete lines without ever holding more than ``max_line`` plus one read of
bytes; a line that grows past the limit is reported as :data:`OVERSIZED` and
skipped up to its newline, so the connection recovers at the next message.

Standard input and output are driven with non-blocking file descriptors and
the event loop's readiness notifications, not with threads, so the agent runs
unchanged on asyncio and trio (on asyncio the input is read by a callback that
stays registered with the loop, saving a loop turn and two ``epoll_ctl`` calls
per wait; elsewhere by ``anyio.wait_readable``).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import stat
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Final

import anyio
import anyio.abc
import anyio.lowlevel
from anyio.abc import ByteReceiveStream, ByteSendStream

__all__ = [
    "OVERSIZED",
    "LineReader",
    "StreamPair",
    "memory_stream_pair",
    "process_streams",
    "stdio_streams",
]

DEFAULT_READ_SIZE: Final = 256 * 1024
PIPE_BUFFER_SIZE: Final = 1024 * 1024
_CLOSED_ERRORS: Final = (anyio.BrokenResourceError, anyio.ClosedResourceError)


class _Oversized:
    """Marker for a line that exceeded the size limit and was skipped."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "OVERSIZED"


OVERSIZED: Final = _Oversized()


@dataclass(frozen=True, slots=True)
class StreamPair:
    """The two byte streams of one side of a connection.

    Whatever is written to ``send`` reaches the peer in order; ``receive``
    yields the peer's bytes in the chunks the operating system delivered them,
    which need not line up with message boundaries.
    """

    receive: ByteReceiveStream
    send: ByteSendStream

    async def aclose(self) -> None:
        """Close both streams (sending side first, so the peer sees end of input)."""
        with contextlib.suppress(*_CLOSED_ERRORS):
            await self.send.aclose()
        with contextlib.suppress(*_CLOSED_ERRORS):
            await self.receive.aclose()


class LineReader:
    """Splits a byte stream into newline-terminated lines with a size limit.

    ``receive_lines`` returns every complete line one read made available, so
    a burst of small messages costs one call; a message split over many reads
    is assembled without rescanning what was already searched. Memory stays
    bounded: a line longer than ``max_line`` is dropped (reported once as
    :data:`OVERSIZED`) while it streams in, so the buffer never holds more than
    ``max_line + read_size`` bytes. Blank lines are skipped.
    """

    def __init__(
        self, stream: ByteReceiveStream, max_line: int, read_size: int = DEFAULT_READ_SIZE
    ) -> None:
        if max_line < 1 or read_size < 1:
            raise ValueError("max_line and read_size must be positive")
        self._stream = stream
        self._max_line = max_line
        self._read_size = read_size
        self._buffer = bytearray()
        self._discarding = False
        self._eof = False

    @property
    def buffered(self) -> int:
        """Bytes of an incomplete line currently held (at most ``max_line + read_size``)."""
        return len(self._buffer)

    @property
    def at_line_start(self) -> bool:
        """True when the next byte read starts a new line (nothing partial is held)."""
        return not self._buffer and not self._discarding

    async def receive_lines(self) -> list[bytes | _Oversized]:
        """Wait for at least one complete line (or the end of the stream).

        Returns an empty list once the stream has ended and everything was
        delivered. A final line without a newline is delivered at the end.
        """
        while not self._eof:
            try:
                data = await self._stream.receive(self._read_size)
            except (anyio.EndOfStream, *_CLOSED_ERRORS):
                self._eof = True
                break
            lines = self._feed(data)
            if lines:
                return lines
        if self._buffer and not self._discarding:
            rest = bytes(self._buffer)
            self._buffer.clear()
            return [rest] if not rest.isspace() else []
        self._buffer.clear()
        return []

    def _feed(self, data: bytes) -> list[bytes | _Oversized]:
        lines: list[bytes | _Oversized] = []
        max_line = self._max_line
        start = 0
        if self._discarding:
            start = data.find(b"\n") + 1
            if not start:
                return lines
            self._discarding = False
        newline = data.find(b"\n", start)
        buffer = self._buffer
        if newline < 0:
            buffer += memoryview(data)[start:]
            if len(buffer) > max_line:
                buffer.clear()
                self._discarding = True
                lines.append(OVERSIZED)
            return lines
        if buffer:
            # The buffered start of a line is completed by this read's first line.
            if len(buffer) + newline - start > max_line:
                lines.append(OVERSIZED)
            else:
                buffer += memoryview(data)[start:newline]
                if not buffer.isspace():
                    lines.append(bytes(buffer))
            buffer.clear()
            start = newline + 1
        pieces = (data[start:] if start else data).split(b"\n")
        tail = pieces.pop()
        for piece in pieces:
            if len(piece) > max_line:
                lines.append(OVERSIZED)
            elif piece and not piece.isspace():
                lines.append(piece)
        if len(tail) > max_line:
            lines.append(OVERSIZED)
            self._discarding = True
        else:
            buffer += tail
        return lines


class _FdReceiveStream(ByteReceiveStream):
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
        self._read_size = DEFAULT_READ_SIZE
        self._chunks: collections.deque[bytes] = collections.deque()
        self._buffered = 0
        self._eof = False
        self._error: OSError | None = None
        self._waiter: asyncio.Future[None] | None = None
        self.on_data: Callable[[bytes], bytes] | None = None
        """Given a read while the reader waits with nothing buffered (loop reader
        only), handles what it can at once and returns the rest for the reader."""

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if self._use_loop_reader is None:
            self._read_size = max(max_bytes, 1)
            self._use_loop_reader = self._start_loop_reader()
        if self._use_loop_reader:
            return await self._receive_buffered(max_bytes)
        while True:
            # Once closed the descriptor is blocking again: reading it could stall the loop.
            if self._closed:
                raise anyio.ClosedResourceError
            try:
                data = os.read(self._fd, max_bytes)
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
            # Only an asyncio task has a current asyncio task (not trio, nor trio-asyncio's
            # trio side); anyio no longer ships sniffio, so ask asyncio itself.
            if asyncio.current_task() is None:
                return False
            loop = asyncio.get_running_loop()
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
            data = os.read(self._fd, self._read_size)
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
        self._read_size = max(max_bytes, 1)
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


class _FdSendStream(ByteSendStream):
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


@contextlib.asynccontextmanager
async def stdio_streams() -> AsyncIterator[StreamPair]:
    """Standard input and output of this process (fds 0 and 1) as a :class:`StreamPair`.

    Keeps the invariant that only protocol messages reach the real stdout:
    for the duration, Python's ``sys.stdout`` is pointed at standard error and
    file descriptor 1 is a copy of standard error, so a stray ``print()``, C
    code or an inherited child process cannot corrupt the protocol stream.
    Likewise descriptor 0 is replaced by ``/dev/null``, so a child process
    cannot steal protocol input. Both are restored on exit.
    """
    with contextlib.suppress(OSError, ValueError, AttributeError):
        if sys.stdout is not None:
            sys.stdout.flush()
    # Private, non-inheritable copies carry the protocol; 0 and 1 are redirected.
    in_fd = os.dup(0)
    out_fd = os.dup(1)
    saved_stdin_fd = os.dup(0)
    saved_stdout_fd = os.dup(1)
    saved_stdout = sys.stdout
    devnull = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(devnull, 0)
    finally:
        os.close(devnull)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    pair = StreamPair(_FdReceiveStream(in_fd), _FdSendStream(out_fd))
    try:
        yield pair
    finally:
        with anyio.CancelScope(shield=True):
            await pair.aclose()
        with contextlib.suppress(OSError, ValueError, AttributeError):
            if sys.stdout is not None:
                sys.stdout.flush()
        sys.stdout = saved_stdout
        os.dup2(saved_stdin_fd, 0)
        os.dup2(saved_stdout_fd, 1)
        for fd in (saved_stdin_fd, saved_stdout_fd, in_fd, out_fd):
            os.close(fd)


def process_streams(process: anyio.abc.Process) -> StreamPair:
    """The pipes of a child started with ``anyio.open_process`` as a :class:`StreamPair`.

    We receive what the child writes to its stdout and send to its stdin, so
    a :class:`~acpio.Connection` over this pair talks to an agent subprocess.
    The child's stderr is left to the caller (it carries logs, not messages).
    """
    if process.stdout is None or process.stdin is None:
        raise ValueError("the process needs stdin and stdout pipes (subprocess.PIPE)")
    return StreamPair(process.stdout, process.stdin)


class _MemoryReceiveStream(ByteReceiveStream):
    def __init__(self, stream: anyio.abc.ObjectReceiveStream[bytes]) -> None:
        self._stream = stream
        self._chunk = b""
        self._offset = 0

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if self._offset >= len(self._chunk):
            chunk = await self._stream.receive()
            if len(chunk) <= max_bytes:
                self._chunk = b""
                self._offset = 0
                return chunk
            self._chunk = chunk
            self._offset = 0
        # Slicing by offset keeps a large write O(size) however small the reads.
        start = self._offset
        self._offset = start + max_bytes
        return self._chunk[start : self._offset]

    async def aclose(self) -> None:
        self._chunk = b""
        await self._stream.aclose()


class _MemorySendStream(ByteSendStream):
    def __init__(self, stream: anyio.abc.ObjectSendStream[bytes]) -> None:
        self._stream = stream

    async def send(self, item: bytes) -> None:
        if item:
            await self._stream.send(bytes(item))

    async def aclose(self) -> None:
        await self._stream.aclose()


def memory_stream_pair(max_buffered_chunks: int = 16) -> tuple[StreamPair, StreamPair]:
    """Two connected in-memory :class:`StreamPair` objects (for tests and embedding).

    What one side sends, the other receives, byte for byte and in order.
    Each direction buffers at most ``max_buffered_chunks`` writes, so a side
    that stops reading makes the other side's writes wait: the same
    backpressure as a real pipe. Closing a side's ``send`` stream is seen by
    the other side as end of input.
    """
    a_to_b_send, a_to_b_receive = anyio.create_memory_object_stream[bytes](max_buffered_chunks)
    b_to_a_send, b_to_a_receive = anyio.create_memory_object_stream[bytes](max_buffered_chunks)
    side_a = StreamPair(_MemoryReceiveStream(b_to_a_receive), _MemorySendStream(a_to_b_send))
    side_b = StreamPair(_MemoryReceiveStream(a_to_b_receive), _MemorySendStream(b_to_a_send))
    return side_a, side_b
