"""Newline-delimited framing of a byte stream: complete lines out, with a size limit.

How this works: :class:`LineReader` turns a receiving byte stream into
complete lines without ever holding more than ``max_line`` plus one read of
bytes; a line that grows past the limit is reported as an :class:`Oversized`
marker holding its first :data:`HEAD_SIZE` bytes (where a message's ``id``
usually is, so that it can still be answered) and skipped up to its newline,
so the connection recovers at the next message.
It does no I/O of its own beyond ``stream.receive``, so every line channel
(:mod:`acpio._rpc.channel`) frames its input with it.
"""

from __future__ import annotations

from typing import Final

import anyio
from anyio.abc import ByteReceiveStream

__all__ = ["DEFAULT_READ_SIZE", "HEAD_SIZE", "OVERSIZED", "LineReader", "Oversized"]

DEFAULT_READ_SIZE: Final = 256 * 1024
#: Bytes of an oversized line kept in its marker.
HEAD_SIZE: Final = 4096
_CLOSED_ERRORS: Final = (anyio.BrokenResourceError, anyio.ClosedResourceError)


class Oversized:
    """Marker for a line that exceeded the size limit and was skipped.

    ``head`` is the line's first bytes (at most :data:`HEAD_SIZE`): a
    message's ``id`` usually comes first, so the line can still be answered
    or matched with the request it answers. Every marker compares equal to
    every other: what a line held is not what it is.
    """

    __slots__ = ("head",)

    def __init__(self, head: bytes = b"") -> None:
        self.head: Final = head

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Oversized)

    def __hash__(self) -> int:
        return hash(Oversized)

    def __repr__(self) -> str:
        return "OVERSIZED"


#: An oversized line whose start is unknown (every :class:`Oversized` equals it).
OVERSIZED: Final = Oversized()


class LineReader:
    """Splits a byte stream into newline-terminated lines with a size limit.

    ``receive_lines`` returns every complete line one read made available, so
    a burst of small messages costs one call; a message split over many reads
    is assembled without rescanning what was already searched. Memory stays
    bounded: a line longer than ``max_line`` is dropped (reported once, as an
    :class:`Oversized` marker) while it streams in, so the buffer never holds
    more than ``max_line + read_size`` bytes. Blank lines are skipped.
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

    async def receive_lines(self) -> list[bytes | Oversized]:
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

    def _feed(self, data: bytes) -> list[bytes | Oversized]:
        lines: list[bytes | Oversized] = []
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
                lines.append(Oversized(bytes(buffer[:HEAD_SIZE])))
                buffer.clear()
                self._discarding = True
            return lines
        if buffer:
            # The buffered start of a line is completed by this read's first line.
            if len(buffer) + newline - start > max_line:
                head = bytes(buffer[:HEAD_SIZE])
                if len(head) < HEAD_SIZE:
                    head += data[start : min(newline, start + HEAD_SIZE - len(head))]
                lines.append(Oversized(head))
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
                lines.append(Oversized(piece[:HEAD_SIZE]))
            elif piece and not piece.isspace():
                lines.append(piece)
        if len(tail) > max_line:
            lines.append(Oversized(tail[:HEAD_SIZE]))
            self._discarding = True
        else:
            buffer += tail
        return lines
