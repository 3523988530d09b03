"""Newline-delimited framing of a byte stream: complete lines out, with a size limit.

How this works: :class:`LineReader` turns a receiving byte stream into
complete lines without ever holding more than ``max_line`` plus one read of
bytes; a line that grows past the limit is reported as :data:`OVERSIZED` and
skipped up to its newline, so the connection recovers at the next message.
It does no I/O of its own beyond ``stream.receive``, so every line channel
(:mod:`acpio._rpc.channel`) frames its input with it.
"""

from __future__ import annotations

from typing import Final

import anyio
from anyio.abc import ByteReceiveStream

__all__ = ["DEFAULT_READ_SIZE", "OVERSIZED", "LineReader"]

DEFAULT_READ_SIZE: Final = 256 * 1024
_CLOSED_ERRORS: Final = (anyio.BrokenResourceError, anyio.ClosedResourceError)


class _Oversized:
    """Marker for a line that exceeded the size limit and was skipped."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "OVERSIZED"


OVERSIZED: Final = _Oversized()


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
