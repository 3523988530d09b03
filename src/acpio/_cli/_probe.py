"""A raw line-level client for the probes the mock client would never send.

How this works: the agent runs as a subprocess; we write bytes to its stdin
exactly as given (invalid JSON, batches, unknown methods, notifications) and
collect every line of its stdout in order. Waits are "until a line matching
this arrives" with a deadline. Every line both ways is recorded in a
:class:`Transcript` and fed to a :class:`ConformanceChecker`, except batches
(JSON arrays) and their array answers: the checker judges single messages,
and the batch probes judge batches themselves.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Final, Self

import anyio
import anyio.abc
import msgspec

from .._json import JsonValue, decode_json
from ..testing import ConformanceChecker, Transcript

__all__ = ["RawAgent"]

STDERR_LIMIT: Final = 64 * 1024
_encode = msgspec.json.encode
_decode = decode_json


def is_array(line: bytes) -> bool:
    """Whether a line holds a JSON array (a batch) rather than a single message."""
    return line.lstrip().startswith(b"[")


def parse(line: bytes) -> JsonValue:
    """The line as JSON, or ``None`` when it is not JSON."""
    try:
        return _decode(line)
    except (msgspec.DecodeError, RecursionError):
        return None


class RawAgent:
    """An agent subprocess spoken to line by line (see the module docstring).

    :raises OSError: from entering, when the command cannot be started.
    """

    def __init__(
        self,
        command: Sequence[str],
        checker: ConformanceChecker,
        *,
        timeout: float,
        cwd: str | None = None,
    ) -> None:
        self.command = list(command)
        self.checker = checker
        self.timeout = timeout
        self.cwd = cwd
        self.transcript = Transcript()
        self.lines: list[bytes] = []
        self.stderr = bytearray()
        self.eof = False
        self.returncode: int | None = None
        self._process: anyio.abc.Process | None = None
        self._group: anyio.abc.TaskGroup | None = None
        self._changed = anyio.Event()
        self._stdin_closed = False

    async def __aenter__(self) -> Self:
        self._process = await anyio.open_process(
            self.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=self.cwd,
            start_new_session=True,
        )
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        self._group.start_soon(self._read_stdout)
        self._group.start_soon(self._read_stderr)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        process = self._process
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            with anyio.CancelScope(shield=True):
                await process.wait()
        if self._group is not None:
            # Entered in __aenter__, so left at the same level (never inside a shield).
            self._group.cancel_scope.cancel()
            await self._group.__aexit__(None, None, None)
        if process is not None:
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                await process.aclose()

    # -- reading -----------------------------------------------------------------------------

    def _wake(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def _read_stdout(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        buffer = bytearray()
        try:
            async for chunk in self._process.stdout:
                buffer += chunk
                while (end := buffer.find(b"\n")) >= 0:
                    self._received(bytes(buffer[:end]))
                    del buffer[: end + 1]
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
        if buffer:
            self._received(bytes(buffer))
        self.eof = True
        self._wake()

    def _received(self, line: bytes) -> None:
        line = line.rstrip(b"\r")
        self.lines.append(line)
        self.transcript.record("agent->client", line)
        if not is_array(line):
            self.checker.observe("agent->client", line)
        self._wake()

    async def _read_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        try:
            async for chunk in self._process.stderr:
                self.stderr += chunk
                if len(self.stderr) > STDERR_LIMIT:
                    del self.stderr[: len(self.stderr) - STDERR_LIMIT]
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass

    async def wait_line(
        self,
        match: Callable[[bytes], bool],
        since: int,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - a default for every wait
    ) -> bytes | None:
        """The first line at or after index ``since`` that matches; ``None`` when none arrived
        in time or stdout ended first."""
        with anyio.move_on_after(self.timeout if timeout is None else timeout):
            index = since
            while True:
                while index < len(self.lines):
                    line = self.lines[index]
                    index += 1
                    if match(line):
                        return line
                if self.eof:
                    return None
                await self._changed.wait()
        return None

    # -- writing -----------------------------------------------------------------------------

    async def send(self, line: bytes) -> int:
        """Write one line (a newline is added); returns the index of the next agent line.

        :raises anyio.BrokenResourceError: when the agent no longer reads.
        """
        assert self._process is not None and self._process.stdin is not None
        mark = len(self.lines)
        self.transcript.record("client->agent", line)
        if not is_array(line):
            self.checker.observe("client->agent", line)
        await self._process.stdin.send(line + b"\n")
        return mark

    async def send_json(self, message: object) -> int:
        """Encode and send one message; returns the index of the next agent line."""
        return await self.send(_encode(message))

    async def request(self, request_id: str, method: str, params: object) -> JsonValue:
        """Send a request and return its parsed response (``None`` when none came in time)."""
        message: dict[str, object] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        mark = await self.send_json(message)
        line = await self.wait_line(lambda data: _response_to(data, request_id), mark)
        return None if line is None else parse(line)

    async def close_stdin(self, timeout: float) -> tuple[int | None, float]:  # noqa: ASYNC109
        """End the agent's input and wait up to ``timeout`` seconds for it to exit.

        Returns the exit code (``None`` if it is still running) and the time it took.
        """
        process = self._process
        assert process is not None and process.stdin is not None
        start = anyio.current_time()
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
        with anyio.move_on_after(timeout):
            await process.wait()
        self.returncode = process.returncode
        return process.returncode, anyio.current_time() - start


def _response_to(line: bytes, request_id: str) -> bool:
    message = parse(line)
    return isinstance(message, dict) and "method" not in message and message.get("id") == request_id
