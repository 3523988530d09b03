"""Running a command for a terminal: exit statuses, bounded output, and no orphans.

How this works: a :class:`RunningCommand` is one process behind one
:class:`~acpio.TerminalHandle`. Nothing runs in the background: output is
read when the agent asks for the next chunk (``async for chunk in
command.output``) or waits (:meth:`RunningCommand.wait`, which reads the rest),
so a slow consumer slows the process down through its pipe instead of growing
memory, and every byte read is streamed to the client exactly as read. What
the agent keeps is bounded: an :class:`_OutputCapture` keeps the first and the
last bytes up to a cap and counts what it cut.

No orphans: the start (spawn and registration) runs shielded from
cancellation, and the command is returned only once the process is known to
the code that kills it, so there is no moment in which a started process can
be lost. Every later way out (an exception, a cancellation, leaving the
``async with`` block early, ``terminal/cancel``) goes through
:meth:`RunningCommand._abort`, which stops the process (its whole group: SIGTERM,
SIGKILL after a grace period), reaps it and reports its exit status to the
client, shielded. A command that is already cancelled when asked to start
starts nothing.

Two kinds of process sit behind the same class: :class:`LocalCommand` (a real
process group of this program) and, where the client runs terminals, the
client's terminal (the session's host chooses, :mod:`acpio._handles.host`).
Both read what to run from one :class:`CommandSpec`, which the terminal builds
once per command and hands through the host unchanged.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal as signal_module
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType, TracebackType
from typing import Final, Protocol, Self

import anyio
import anyio.abc

from .._protocol.paths import require_absolute

__all__ = [
    "BeginCommand",
    "CommandResult",
    "CommandSpec",
    "CommandTerminal",
    "ExitStatus",
    "LocalCommand",
    "RunningCommand",
    "kill_all_processes",
]

logger = logging.getLogger(__name__)


class CommandTerminal(Protocol):
    """The terminal a command runs in (:class:`acpio.TerminalHandle`), as the command sees it.

    The command streams what the process writes through :meth:`write` and
    reports the end through :meth:`exit`, exactly once. Typed by this protocol
    so that processes never import the terminal module, which starts them.
    """

    @property
    def id(self) -> str:
        """The ``terminalId``."""
        ...

    @property
    def kill_grace(self) -> float:
        """Seconds between SIGTERM and SIGKILL when the command is stopped."""
        ...

    async def write(self, data: bytes | bytearray | memoryview) -> None:
        """Stream output bytes to the client, exactly as the process wrote them."""
        ...

    async def exit(self, exit_code: int | None = None, signal: str | None = None) -> None:
        """Report the command's exit status (once)."""
        ...


#: What :meth:`TerminalHandle.run` keeps of a command's output for the agent by default.
DEFAULT_OUTPUT_LIMIT: Final = 64 * 1024
# Shorter than the session's default cancel grace (2 s), so a process that
# ignores SIGTERM is killed and its exit reported before the turn goes idle.
KILL_GRACE: Final = 1.0
READ_SIZE: Final = 64 * 1024


#: Every process started by a TerminalHandle that has not been reaped yet,
#: with the channel of the session that started it (its connection may close).
class _Closable(Protocol):
    @property
    def connection_closed(self) -> bool: ...


_live_processes: dict[anyio.abc.Process, _Closable] = {}

#: How a command starts in its terminal: ``begin(command, start, request_stop)``
#: checks the terminal, runs ``start`` shielded and keeps ``request_stop`` for
#: ``terminal/cancel`` (see :meth:`TerminalHandle.start`).
BeginCommand = Callable[
    ["RunningCommand", Callable[[], Awaitable[None]], Callable[[], None]], Awaitable[None]
]


@dataclass(frozen=True, slots=True)
class CommandSpec:
    """What one command of a terminal runs, where, with what, and how it is shown.

    Built once per command (:meth:`TerminalHandle.start`, ``start_shell``) and
    handed unchanged through the session's host (:class:`CommandHost.command
    <acpio._handles.host.CommandHost>`) to the command it makes, so every kind
    of process reads the same values. Checked when made, in this order:
    ``argv`` is not empty (:class:`ValueError`), ``cwd`` is absolute
    (:class:`~acpio.RelativePathError`), ``output_limit`` is not negative
    (:class:`ValueError`). Immutable: ``argv`` is a tuple and ``env`` a
    read-only copy of the mapping given, so changing that mapping later
    changes no command.
    """

    #: The program and its arguments (``argv[0]`` is the program).
    argv: tuple[str, ...]
    #: The command line as the terminal shows it (``shlex.join(argv)``, or a shell command).
    display: str
    #: The absolute directory the command runs in.
    cwd: str
    #: The environment given, or None. The host decides how it applies: a process of
    #: this program gets it as its whole environment (None: this program's own); a v1
    #: client's terminal gets it added to the client's environment (None: nothing added).
    env: Mapping[str, str] | None = field(hash=False)
    #: Bytes of output kept for the agent (:class:`CommandResult`, head and tail); the
    #: client is sent every byte whatever the limit.
    output_limit: int

    def __post_init__(self) -> None:
        if not self.argv:
            raise ValueError("argv must not be empty")
        require_absolute(self.cwd, "process cwd")
        if self.output_limit < 0:
            raise ValueError("output_limit must not be negative")
        if self.env is not None:
            object.__setattr__(self, "env", MappingProxyType(dict(self.env)))


@dataclass(frozen=True, slots=True)
class ExitStatus:
    """How a process ended: an exit code, or the conventional name of a signal."""

    exit_code: int | None = None
    signal: str | None = None

    @property
    def success(self) -> bool:
        """True for exit code 0."""
        return self.exit_code == 0

    @classmethod
    def from_returncode(cls, returncode: int) -> Self:
        """Translate a POSIX return code (negative for a signal) into an exit status."""
        if returncode < 0:
            return cls(signal=_signal_name(-returncode))
        return cls(exit_code=returncode)


@dataclass(frozen=True, slots=True, eq=False)
class CommandResult(ExitStatus):
    """A finished command: its exit status and a bounded copy of its output.

    What :meth:`TerminalHandle.run` and :meth:`TerminalHandle.run_shell`
    return. It *is* an :class:`ExitStatus` (``.success``, ``.exit_code``,
    ``.signal``, and it compares equal to the plain exit status), so code
    written for the exit status keeps working; :attr:`exit_status` is the
    plain one. ``output`` holds the merged stdout and stderr bytes, exactly as
    the process wrote them, up to the command's output limit: beyond it the
    first and the last bytes are kept (each cut at a UTF-8 character
    boundary) and ``truncated_bytes`` counts the bytes cut out between them,
    at offset ``truncated_at`` of ``output``. The client always receives every
    byte; only the agent's copy is bounded.
    """

    output: bytes = b""
    truncated_bytes: int = 0
    truncated_at: int = 0

    @property
    def exit_status(self) -> ExitStatus:
        """The exit status alone."""
        return ExitStatus(self.exit_code, self.signal)

    @property
    def text(self) -> str:
        """The output decoded as UTF-8 (invalid bytes replaced), with a marker where bytes were cut.

        The marker is a line of its own: ``[... 1234 bytes of output cut ...]``.
        """
        if not self.truncated_bytes:
            return self.output.decode("utf-8", "replace")
        head = self.output[: self.truncated_at].decode("utf-8", "replace")
        tail = self.output[self.truncated_at :].decode("utf-8", "replace")
        separator = "" if not head or head.endswith("\n") else "\n"
        return f"{head}{separator}[... {self.truncated_bytes} bytes of output cut ...]\n{tail}"

    def __repr__(self) -> str:
        shown = repr(self.output[:40]) + ("..." if len(self.output) > 40 else "")
        return (
            f"CommandResult(exit_code={self.exit_code!r}, signal={self.signal!r}, "
            f"output={shown} ({len(self.output)} bytes), truncated_bytes={self.truncated_bytes})"
        )

    def __eq__(self, other: object) -> bool:
        if type(other) is ExitStatus:
            return (self.exit_code, self.signal) == (other.exit_code, other.signal)
        if isinstance(other, CommandResult):
            return _fields(self) == _fields(other)
        return NotImplemented

    def __hash__(self) -> int:
        # Equal to its plain exit status, so it must hash like it.
        return hash((self.exit_code, self.signal))


def _fields(result: CommandResult) -> tuple[object, ...]:
    return (
        result.exit_code,
        result.signal,
        result.output,
        result.truncated_bytes,
        result.truncated_at,
    )


def _signal_name(number: int) -> str:
    try:
        return signal_module.Signals(number).name
    except ValueError:
        return f"SIG{number}"


class _OutputCapture:
    """The first and last bytes of a stream, ``limit`` bytes in all, and how many were cut."""

    def __init__(self, limit: int) -> None:
        if limit < 0:
            raise ValueError("output_limit must not be negative")
        self._head_cap = limit // 2
        self._tail_cap = limit - self._head_cap
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self._head_cap - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data:
            tail = self._tail
            tail += data
            # Trimmed in batches: amortised linear, at most twice the cap held.
            if len(tail) > 2 * self._tail_cap + READ_SIZE:
                del tail[: len(tail) - self._tail_cap]

    def result(self, status: ExitStatus) -> CommandResult:
        head = bytes(self._head)
        tail = bytes(self._tail[len(self._tail) - self._tail_cap :] if self._tail_cap else b"")
        cut = self.total - len(head) - len(tail)
        if cut <= 0:
            return CommandResult(status.exit_code, status.signal, output=head + bytes(self._tail))
        end = _complete_utf8_length(head)
        start = _leading_continuations(tail)
        head, tail = head[:end], tail[start:]
        cut = self.total - len(head) - len(tail)
        return CommandResult(
            status.exit_code,
            status.signal,
            output=head + tail,
            truncated_bytes=cut,
            truncated_at=len(head),
        )


def _complete_utf8_length(data: bytes) -> int:
    """``len(data)`` without a UTF-8 sequence cut off at its end."""
    size = len(data)
    for back in range(1, min(4, size) + 1):
        byte = data[size - back]
        if byte & 0xC0 != 0x80:  # not a continuation byte: ASCII or a lead byte
            if byte >= 0xF0:
                need = 4
            elif byte >= 0xE0:
                need = 3
            elif byte >= 0xC0:
                need = 2
            else:
                need = 1
            return size - back if need > back else size
    return size


def _leading_continuations(data: bytes) -> int:
    """How many UTF-8 continuation bytes (at most 3) ``data`` starts with."""
    count = 0
    while count < min(3, len(data)) and data[count] & 0xC0 == 0x80:
        count += 1
    return count


class _Chunks:
    """``RunningCommand.output``: each iteration step reads the next chunk of output."""

    def __init__(self, read_next: Callable[[], Awaitable[bytes | None]]) -> None:
        self._read_next = read_next

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> bytes:
        data = await self._read_next()
        if data is None:
            raise StopAsyncIteration
        return data


class RunningCommand:
    """A command in a terminal, an async context manager made by :meth:`TerminalHandle.start`.

    Iterate :attr:`output` for the output chunks as the process writes them
    (each chunk is also streamed to the client, byte for byte), then
    :meth:`wait` for the :class:`CommandResult`; or just :meth:`wait`.
    Leaving the ``async with`` block before the process ended (early, by an
    exception or by cancellation) stops the process group (SIGTERM, then
    SIGKILL after ``kill_grace`` seconds) and reports its exit status; the
    exit status is reported to the client exactly once, however the command
    ends. While the agent neither iterates nor waits, the process can fill its
    pipe and pause: output is read on demand, never buffered without bound.
    """

    def __init__(self, terminal: CommandTerminal, begin: BeginCommand, spec: CommandSpec) -> None:
        self.terminal: Final = terminal
        self._begin = begin
        self._spec: Final = spec
        #: The command line as the terminal shows it.
        self.display: Final = spec.display
        self._entered = False
        self._capture = _OutputCapture(spec.output_limit)
        self._grace = terminal.kill_grace
        self._result: CommandResult | None = None
        self._eof = False
        self._stop_requested = False
        self._scope: anyio.CancelScope | None = None
        self._output = _Chunks(self._next)

    # ---------------------------------------------------------------- public

    @property
    def output(self) -> AsyncIterator[bytes]:
        """The output chunks (stdout and stderr merged), in the order the process wrote them."""
        return self._output

    @property
    def result(self) -> CommandResult | None:
        """The result once the command ended (see :meth:`wait`), else None."""
        return self._result

    async def wait(self) -> CommandResult:
        """Read the rest of the output, wait for the process to exit, report and return the result.

        A cancellation while waiting stops the process group, reports its exit
        status and propagates; ``terminal/cancel`` stops it and returns normally.
        """
        if not self._entered:
            raise RuntimeError("start the command with `async with` before waiting for it")
        while self._result is None:
            if not self._eof:
                await self._next()
                continue
            scope = self._scope = anyio.CancelScope()
            status = ExitStatus()
            try:
                with scope:
                    status = await self._wait_exit()
            except BaseException:
                await self._abort()
                raise
            finally:
                self._scope = None
            if scope.cancelled_caught:
                await self._abort()
            else:
                await self._finish(status)
        return self._result

    async def __aenter__(self) -> Self:
        if self._entered:
            raise RuntimeError("a command can be started only once")
        self._entered = True
        await self._begin(self, self._start, self._request_stop)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._result is None:
            await self._abort()

    # ---------------------------------------------------------- common logic

    def _request_stop(self) -> None:
        """``terminal/cancel``: stop the process now; the next read or wait reports its end."""
        self._stop_requested = True
        self._signal_stop()
        if self._scope is not None:
            self._scope.cancel()

    async def _next(self) -> bytes | None:
        if not self._entered:
            raise RuntimeError("start the command with `async with` before reading its output")
        if self._result is not None or self._eof:
            return None
        if self._stop_requested:
            await self._abort()
            return None
        scope = self._scope = anyio.CancelScope()
        data: bytes | None = None
        try:
            with scope:
                data = await self._read()
            if scope.cancelled_caught:
                await self._abort()
                return None
            if data is None:
                self._eof = True
                return None
            self._capture.add(data)
            await self._show(data)
        except BaseException:
            await self._abort()
            raise
        finally:
            self._scope = None
        return data

    async def _finish(self, status: ExitStatus) -> None:
        """The process exited by itself: clean up, report and keep the result."""
        with anyio.CancelScope(shield=True):
            try:
                await self._after_exit()
            finally:
                self._result = self._capture.result(status)
            try:
                await self.terminal.exit(status.exit_code, status.signal)
            finally:
                await self._release()

    async def _abort(self) -> None:
        """Stop the process (if it still runs), report its exit status; never raises."""
        if self._result is not None:
            return
        with anyio.CancelScope(shield=True):
            status = ExitStatus()
            try:
                status = await self._stop()
                await self._after_exit()
            except Exception:
                logger.exception("could not stop the process of terminal %s", self.terminal.id)
            self._result = self._capture.result(status)
            try:
                await self.terminal.exit(status.exit_code, status.signal)
            except Exception:
                logger.debug("could not report the exit of terminal %s", self.terminal.id)
            try:
                await self._release()
            except Exception:
                logger.debug("could not release terminal %s", self.terminal.id, exc_info=True)

    # ---------------------------------------------- what each kind provides

    @property
    def pid(self) -> int | None:
        """The process id when the process runs in this program (None for a client's terminal)."""
        return None

    async def _start(self) -> None:
        """Start the process and make it known to the code that stops it (runs shielded)."""
        raise NotImplementedError

    async def _read(self) -> bytes | None:
        """The next output bytes, or None at the end of the output."""
        raise NotImplementedError

    async def _show(self, data: bytes) -> None:
        """Show bytes read to the client (the client's own terminal needs nothing)."""

    async def _wait_exit(self) -> ExitStatus:
        raise NotImplementedError

    def _signal_stop(self) -> None:
        """Ask the process to stop without waiting (``terminal/cancel``)."""

    async def _stop(self) -> ExitStatus:
        """Stop the process for good and return how it ended (runs shielded)."""
        raise NotImplementedError

    async def _after_exit(self) -> None:
        """Clean up after the process ended (runs shielded)."""

    async def _release(self) -> None:
        """Give back what the command held (runs shielded, once, after the exit was reported)."""


class LocalCommand(RunningCommand):
    """A process group of this program, stdout and stderr merged into one pipe.

    It is registered with ``connection`` (its terminal's) until it is reaped,
    for :func:`kill_all_processes`.
    """

    _process: anyio.abc.Process | None = None

    def __init__(
        self,
        terminal: CommandTerminal,
        begin: BeginCommand,
        connection: _Closable,
        spec: CommandSpec,
    ) -> None:
        super().__init__(terminal, begin, spec)
        self._connection = connection

    async def _start(self) -> None:
        import subprocess  # noqa: PLC0415 - loaded by anyio.open_process anyway

        spec = self._spec
        process = await anyio.open_process(
            spec.argv,
            cwd=spec.cwd,
            env=None if spec.env is None else dict(spec.env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        # No await between the spawn returning and these lines: the caller runs
        # this shielded, so the process is registered before anything can cancel.
        _live_processes[process] = self._connection
        self._process = process

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    async def _read(self) -> bytes | None:
        assert self._process is not None and self._process.stdout is not None
        try:
            return await self._process.stdout.receive(READ_SIZE)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return None

    async def _show(self, data: bytes) -> None:
        await self.terminal.write(data)

    async def _wait_exit(self) -> ExitStatus:
        assert self._process is not None
        return ExitStatus.from_returncode(await self._process.wait())

    def _signal_stop(self) -> None:
        if self._process is not None and self._process.returncode is None:
            _kill_group(self._process, signal_module.SIGTERM)

    async def _stop(self) -> ExitStatus:
        assert self._process is not None
        return await _stop_process(self._process, self._grace)

    async def _after_exit(self) -> None:
        assert self._process is not None
        # Children it left in the background must not outlive it either.
        _kill_group(self._process, signal_module.SIGKILL)
        await _close(self._process)


async def _stop_process(process: anyio.abc.Process, grace: float) -> ExitStatus:
    """Terminate the process group, kill it after ``grace`` seconds, and reap the process."""
    with anyio.CancelScope(shield=True):
        if process.returncode is None:
            _kill_group(process, signal_module.SIGTERM)
            with anyio.move_on_after(grace):
                await process.wait()
        if process.returncode is None:
            _kill_group(process, signal_module.SIGKILL)
            await process.wait()
        _kill_group(process, signal_module.SIGKILL)
        await _close(process)
    assert process.returncode is not None
    return ExitStatus.from_returncode(process.returncode)


async def _close(process: anyio.abc.Process) -> None:
    """Close the pipes and reap the process (bounded), then forget it."""
    try:
        with anyio.move_on_after(KILL_GRACE, shield=True):
            await process.aclose()
    finally:
        _live_processes.pop(process, None)


def _kill_group(process: anyio.abc.Process, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)


def kill_all_processes() -> None:
    """Kill every process group whose terminal's connection has closed (shutdown path).

    :func:`acpio.serve` calls it last: normally every process was stopped and
    reaped while its work unwound, and this only catches what escaped. Processes
    of connections that are still open are left alone.
    """
    for process, connection in list(_live_processes.items()):
        if connection.connection_closed:
            _kill_group(process, signal_module.SIGKILL)
            _live_processes.pop(process, None)
