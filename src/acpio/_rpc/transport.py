"""Byte transports for newline-delimited JSON: stdio, subprocess pipes, in-memory pairs.

How this works: a transport is just a pair of anyio byte streams (one to
receive, one to send), a :class:`StreamPair`. What turns it into lines and
writes lines back is a line channel (:mod:`acpio._rpc.channel`), chosen when a
connection is entered; the framing itself is :class:`~acpio._rpc.lines.LineReader`.

Standard input and output are driven with non-blocking file descriptors and
the event loop's readiness notifications, not with threads, so the agent runs
unchanged on asyncio and trio; those streams, and the asyncio fast path that
goes with them, live in the file-descriptor backend :mod:`acpio._rpc.fd`.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Final

import anyio
import anyio.abc
from anyio.abc import ByteReceiveStream, ByteSendStream

from .fd import FdReceiveStream as _FdReceiveStream
from .fd import FdSendStream as _FdSendStream
from .lines import DEFAULT_READ_SIZE as DEFAULT_READ_SIZE
from .lines import OVERSIZED as OVERSIZED
from .lines import LineReader as LineReader

__all__ = [
    "OVERSIZED",
    "LineReader",
    "StreamPair",
    "memory_stream_pair",
    "process_streams",
    "stdio_streams",
]

_CLOSED_ERRORS: Final = (anyio.BrokenResourceError, anyio.ClosedResourceError)


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


@contextlib.asynccontextmanager
async def stdio_streams() -> AsyncGenerator[StreamPair]:
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
    a :class:`~acpio.rpc.Connection` over this pair talks to an agent subprocess.
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
