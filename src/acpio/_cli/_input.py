"""Lines from standard input without blocking the event loop (prompts and permission answers).

The descriptor's blocking mode is never changed: a terminal's stdin and stdout
often share one open file description, and a non-blocking stdout would make
writes fail. Instead we wait until the descriptor is readable, then read what
is there (a pipe or a terminal line never blocks then); a regular file cannot
be polled and never blocks, so it is simply read.

Several tasks may wait at once (the prompt, a permission answer, the watch
for Ctrl-D while a turn runs): whichever needs data first reads, the others
wait for what it read, so the descriptor has one reader at a time and a
line typed ahead is never lost.
"""

from __future__ import annotations

import os
import stat
import sys

import anyio

__all__ = ["LineInput"]


class LineInput:
    """Reads lines from a file descriptor (standard input by default), shared by its waiters."""

    def __init__(self, fd: int | None = None) -> None:
        self._fd = sys.stdin.fileno() if fd is None else fd
        mode = os.fstat(self._fd).st_mode
        self._pollable = not stat.S_ISREG(mode)
        self._buffer = bytearray()
        self._eof = False
        self._reading = False
        self._read_done = anyio.Event()
        self.interactive = os.isatty(self._fd)

    async def wait_eof(self) -> None:
        """Return at the end of input (Ctrl-D in a terminal), keeping lines typed meanwhile."""
        while not self._eof:
            await self._read_more()

    async def _read_more(self) -> None:
        if self._reading:
            await self._read_done.wait()
            return
        self._reading = True
        try:
            if self._pollable:
                await anyio.wait_readable(self._fd)
            else:
                await anyio.lowlevel.checkpoint()
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if data:
                self._buffer += data
            else:
                self._eof = True
        finally:
            self._reading = False
            done, self._read_done = self._read_done, anyio.Event()
            done.set()

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
            await self._read_more()

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
