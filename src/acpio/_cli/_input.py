"""Lines from standard input without blocking the event loop (prompts and permission answers).

The descriptor's blocking mode is never changed: a terminal's stdin and stdout
often share one open file description, and a non-blocking stdout would make
writes fail. Instead we wait until the descriptor is readable, then read what
is there (a pipe or a terminal line never blocks then); a regular file cannot
be polled and never blocks, so it is simply read.
"""

from __future__ import annotations

import os
import stat
import sys

import anyio

__all__ = ["LineInput"]


class LineInput:
    """Reads lines from a file descriptor (standard input by default); one reader at a time."""

    def __init__(self, fd: int | None = None) -> None:
        self._fd = sys.stdin.fileno() if fd is None else fd
        mode = os.fstat(self._fd).st_mode
        self._pollable = not stat.S_ISREG(mode)
        self._buffer = bytearray()
        self._eof = False
        self.interactive = os.isatty(self._fd)

    async def readline(self) -> str | None:
        """The next line without its newline; ``None`` at the end of input."""
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                return line.decode("utf-8", "replace").rstrip("\r")
            if self._eof:
                if not self._buffer:
                    return None
                line = bytes(self._buffer)
                self._buffer.clear()
                return line.decode("utf-8", "replace")
            if self._pollable:
                await anyio.wait_readable(self._fd)
            else:
                await anyio.lowlevel.checkpoint()
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if data:
                self._buffer += data
            else:
                self._eof = True

    async def read_prompt(self) -> str | None:
        """A prompt: one line, or several joined where a line ends with a backslash."""
        parts: list[str] = []
        while True:
            line = await self.readline()
            if line is None:
                return "\n".join(parts) if parts else None
            if line.endswith("\\"):
                parts.append(line[:-1])
                continue
            parts.append(line)
            return "\n".join(parts)
