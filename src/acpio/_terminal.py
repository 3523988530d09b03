"""TerminalHandle: a display-only terminal and, optionally, the real process behind it.

How this works: :meth:`TerminalHandle.write` appends bytes to a buffer. The
buffer is sent as one ``terminal_output_chunk`` (base64 of exactly those
bytes) when it reaches ``max_chunk`` bytes, when ``flush_delay`` seconds have
passed since the first buffered byte, and before any later update of the
session (a terminal with buffered bytes is always on the session's list of
dirty terminals, which :meth:`Session.send` flushes first), so small writes
are coalesced and nothing is ever reordered or lost. Large writes are cut
into ``max_chunk`` pieces so no message exceeds what clients accept; a write
of at least ``max_chunk`` bytes into an empty buffer bypasses the buffer.

:meth:`run` starts a process in its own process group, pumps its merged
stdout and stderr into the terminal as it arrives, and reports the exit
status. If the work is cancelled the whole group gets SIGTERM, then SIGKILL
after a grace period, and the exit status is still reported. Every process
is registered with the connection of its session until it is reaped, so
:func:`kill_all_processes` can kill what a closed connection left behind
without touching the processes of other connections in the same program.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import shlex
import signal as signal_module
import subprocess
from collections.abc import Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import anyio
import anyio.abc
from msgspec import UNSET, UnsetType

from . import schema
from ._errors import LocalProtocolError
from ._paths import require_absolute
from ._work import _current_work, _Work

if TYPE_CHECKING:
    from ._connection import Connection
    from ._session import Session

__all__ = ["ExitStatus", "TerminalHandle"]

logger = logging.getLogger(__name__)

DEFAULT_MAX_CHUNK: Final = 64 * 1024
DEFAULT_FLUSH_DELAY: Final = 0.01
# Shorter than the session's default cancel grace (2 s), so a process that
# ignores SIGTERM is killed and its exit reported before the turn goes idle.
KILL_GRACE: Final = 1.0
_UNSET: Final = UNSET

#: Every process started by a TerminalHandle that has not been reaped yet,
#: with the connection of the session that started it.
_live_processes: dict[anyio.abc.Process, Connection] = {}


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
    def from_returncode(cls, returncode: int) -> ExitStatus:
        """Translate a POSIX return code (negative for a signal) into an exit status."""
        if returncode < 0:
            return cls(signal=_signal_name(-returncode))
        return cls(exit_code=returncode)


def _signal_name(number: int) -> str:
    try:
        return signal_module.Signals(number).name
    except ValueError:
        return f"SIG{number}"


class TerminalHandle:
    """One display-only terminal: bytes streamed exactly, snapshots, exit status, processes.

    Create it with :meth:`acpio.ToolCallHandle.terminal` (which also shows it
    in the tool call's content) or :meth:`acpio.Session.terminal`. The client
    receives every written byte exactly once, in order, each chunk base64
    encoded on its own. ``max_chunk`` (bytes per ``terminal_output_chunk``)
    and ``flush_delay`` (seconds a byte may wait to be coalesced with later
    writes; negative: only when the buffer fills or another update goes out)
    can be changed at any time, and so can ``kill_grace``, the seconds a
    process has to exit after SIGTERM before its group gets SIGKILL.
    """

    def __init__(
        self,
        session: Session,
        terminal_id: str,
        *,
        command: str | None,
        cwd: str | None,
        size: tuple[int, int] | None,
        cancellable: bool,
        max_chunk: int = DEFAULT_MAX_CHUNK,
        flush_delay: float = DEFAULT_FLUSH_DELAY,
    ) -> None:
        if max_chunk < 1:
            raise ValueError("max_chunk must be at least 1 byte")
        self.session: Final = session
        self.id: Final = terminal_id
        self.command = command
        self.cwd = require_absolute(cwd, "terminal cwd") if cwd is not None else None
        self.size = size
        self.cancellable: Final = cancellable
        self.max_chunk = max_chunk
        self.flush_delay = flush_delay
        self.kill_grace = KILL_GRACE
        self.exit_status: ExitStatus | None = None
        self._buffer = bytearray()
        # The session's dirty list this terminal is on. Session.send swaps in a
        # new list when it flushes, so "is it the current one" says whether
        # buffered bytes are sure to be flushed before the next update.
        self._dirty_list: list[TerminalHandle] | None = None
        self._flush_scheduled = False
        self._announced = False
        self._work: _Work | None = _current_work.get()
        self._run_scope: anyio.CancelScope | None = None
        # A terminal_output_chunk line is this prefix, the base64, and its end (_framing).
        self._line_prefix = session._framing.terminal_chunk_prefix(terminal_id)

    async def announce(self) -> TerminalHandle:
        """Send the first ``terminal_update`` (command, cwd, size) unless already sent."""
        if not self._announced:
            self.session._register_terminal(self)
            self._announced = True
            await self.session.send(
                schema.TerminalUpdate(
                    terminal_id=self.id,
                    command=_UNSET if self.command is None else self.command,
                    cwd=_UNSET if self.cwd is None else self.cwd,
                    size=(
                        _UNSET
                        if self.size is None
                        else schema.TerminalSize(cols=self.size[0], rows=self.size[1])
                    ),
                    capabilities=(
                        schema.TerminalCapabilities(cancel=schema.TerminalCancelCapabilities())
                        if self.cancellable
                        else _UNSET
                    ),
                )
            )
        return self

    def __await__(self) -> Generator[object, None, TerminalHandle]:
        return self.announce().__await__()

    # ------------------------------------------------------------------- bytes

    async def write(self, data: bytes | bytearray | memoryview) -> None:
        """Stream bytes to the terminal, exactly as given (any bytes, in order).

        Small writes are coalesced (see the class docstring); everything
        written is sent before any later update of the session.
        """
        buffer = self._buffer
        if buffer and self._flush_scheduled and len(buffer) + len(data) < self.max_chunk:
            # Bytes are already waiting, and a timed flush is armed: just add these.
            buffer += data
            return
        if not data:
            return
        if not self._announced:
            await self.announce()
        if not buffer and len(data) >= self.max_chunk:
            await self._send_chunks(data)
            return
        buffer += data
        if len(buffer) >= self.max_chunk:
            await self.flush()
            return
        session = self.session
        if self._dirty_list is not session._dirty_terminals:
            session._mark_terminal_dirty(self)
            self._dirty_list = session._dirty_terminals
        if not self._flush_scheduled and self.flush_delay >= 0:
            self._flush_scheduled = True
            session._task_group.start_soon(self._flush_later)

    async def _flush_later(self) -> None:
        try:
            await anyio.sleep(self.flush_delay)
            # Disarmed before flushing: a write during the flush arms a new timer.
            self._flush_scheduled = False
            await self.flush()
        except Exception:
            logger.debug("delayed flush of terminal %s failed", self.id, exc_info=True)
        finally:
            self._flush_scheduled = False

    async def flush(self) -> None:
        """Send every buffered byte now (as chunks of at most ``max_chunk`` bytes)."""
        if not self._buffer:
            return
        data = bytes(self._buffer)
        # Taken out before the first await: a concurrent flush cannot send them twice.
        self._buffer.clear()
        await self._send_chunks(data)

    async def _send_chunks(self, data: bytes | bytearray | memoryview) -> None:
        work = self._work
        if work is not None and work.finished:
            # The turn was reported idle: nothing of it may reach the client any more.
            return
        step = self.max_chunk
        history = self.session.history
        send = self.session._send_terminal_bytes
        prefix = self._line_prefix
        pieces: Iterable[bytes]
        if len(data) <= step:
            pieces = (bytes(data),)  # no copy when data is already bytes
        else:
            view = memoryview(data)
            pieces = (bytes(view[start : start + step]) for start in range(0, len(view), step))
        for piece in pieces:
            history.record_terminal_output(self.id, piece)
            await send(self.id, prefix, piece)

    async def snapshot(self, data: bytes) -> None:
        """Replace everything the client stores for this terminal with ``data``.

        Sends ``terminal_update`` with ``output`` (base64 of ``data``), after
        any bytes still buffered, so later writes append to this snapshot.
        """
        await self._send_update(output=schema.TerminalOutput(data=base64.b64encode(data).decode()))

    async def exit(self, exit_code: int | None = None, signal: str | None = None) -> None:
        """Report that the terminal's process exited (a code, or a signal name like ``SIGTERM``).

        Sends ``exitStatus`` after any buffered bytes; a cancellable terminal
        stops advertising ``terminal/cancel`` in the same update.
        """
        if signal is not None and not signal:
            raise LocalProtocolError("a signal name must not be empty")
        self.exit_status = ExitStatus(exit_code, signal)
        await self._send_update(
            exit_status=schema.TerminalExitStatus(
                exit_code=_UNSET if exit_code is None else exit_code,
                signal=_UNSET if signal is None else signal,
            ),
            capabilities=None if self.cancellable else _UNSET,
        )

    async def update(
        self,
        *,
        command: str | UnsetType | None = _UNSET,
        cwd: str | UnsetType | None = _UNSET,
        size: tuple[int, int] | UnsetType | None = _UNSET,
    ) -> None:
        """Patch the terminal's command, working directory or size (``None`` clears).

        Omitted fields are left unchanged on the client; ``size`` is ``(cols, rows)``.

        :raises LocalProtocolError: for a relative ``cwd``, before anything is sent.
        """
        if isinstance(cwd, str):
            require_absolute(cwd, "terminal cwd")
        if not isinstance(command, UnsetType):
            self.command = command
        if not isinstance(cwd, UnsetType):
            self.cwd = cwd
        if not isinstance(size, UnsetType):
            self.size = size
        await self._send_update(
            command=command,
            cwd=cwd,
            size=(
                schema.TerminalSize(cols=size[0], rows=size[1]) if isinstance(size, tuple) else size
            ),
        )

    async def _send_update(
        self,
        *,
        command: str | UnsetType | None = _UNSET,
        cwd: str | UnsetType | None = _UNSET,
        size: schema.TerminalSize | UnsetType | None = _UNSET,
        output: schema.TerminalOutput | UnsetType = _UNSET,
        exit_status: schema.TerminalExitStatus | UnsetType = _UNSET,
        capabilities: UnsetType | None = _UNSET,
    ) -> None:
        if not self._announced:
            await self.announce()
        await self.flush()
        await self.session.send(
            schema.TerminalUpdate(
                terminal_id=self.id,
                command=command,
                cwd=cwd,
                size=size,
                output=output,
                exit_status=exit_status,
                capabilities=capabilities,
            )
        )

    # ---------------------------------------------------------------- processes

    async def run_shell(
        self,
        command: str,
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        shell: str = "/bin/sh",
    ) -> ExitStatus:
        """Run ``command`` with the shell, streaming its output live; returns its exit status.

        ``shell -c command`` under the rules of :meth:`run`; a terminal created
        without a command shows ``command``.
        """
        return await self._run([shell, "-c", command], command, cwd, env)

    async def run(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ExitStatus:
        """Run a process in its own process group and stream its stdout+stderr into the terminal.

        The process runs in ``cwd`` (default: the terminal's, else the
        session's; absolute), with ``env`` as its whole environment when
        given, stdin from ``/dev/null`` and stderr merged into stdout, so
        both reach the client live and in the order the process wrote them.
        The exit status is reported to the client and returned. On
        ``terminal/cancel`` the process group is terminated, then killed after
        a short grace, the exit status is reported and returned. On other
        cancellation (``session/cancel``, a closed connection) the same
        happens and the cancellation continues. No process of the group
        outlives this call.
        """
        if not argv:
            raise ValueError("argv must not be empty")
        return await self._run(argv, shlex.join(argv), cwd, env)

    async def _run(
        self,
        argv: Sequence[str],
        display: str,
        cwd: str | None,
        env: Mapping[str, str] | None,
    ) -> ExitStatus:
        if self._run_scope is not None:
            raise RuntimeError(f"terminal {self.id!r} is already running a process")
        if self.exit_status is not None:
            raise LocalProtocolError(
                f"terminal {self.id!r} already exited; a terminalId must not be reused for "
                "another process: create a new terminal"
            )
        workdir = require_absolute(cwd or self.cwd or self.session.cwd, "process cwd")
        scope = self._run_scope = anyio.CancelScope()
        try:
            if self.command is None:
                self.command = display
                if self._announced:
                    await self._send_update(command=display)
            if not self._announced:
                await self.announce()
            process = await anyio.open_process(
                list(argv),
                cwd=workdir,
                env=dict(env) if env is not None else None,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except BaseException:
            self._run_scope = None
            raise
        _live_processes[process] = self.session._connection
        grace = self.kill_grace
        try:
            with scope:
                assert process.stdout is not None
                async for data in process.stdout:
                    await self.write(data)
                returncode = await process.wait()
            if scope.cancelled_caught:
                # terminal/cancel: stop the process, report, and return normally.
                status = await _stop_process(process, grace)
                await self.exit(status.exit_code, status.signal)
                return status
        except BaseException:
            with anyio.CancelScope(shield=True):
                status = await _stop_process(process, grace)
                try:
                    await self.exit(status.exit_code, status.signal)
                except Exception:
                    logger.debug("could not report the exit of terminal %s", self.id)
            raise
        finally:
            self._run_scope = None
        status = ExitStatus.from_returncode(returncode)
        # Children it left in the background must not outlive it either.
        _kill_group(process, signal_module.SIGKILL)
        with anyio.CancelScope(shield=True):
            await _close(process)
        await self.exit(status.exit_code, status.signal)
        return status

    def request_cancel(self) -> bool:
        """Handle ``terminal/cancel``: stop the running process; False if none runs."""
        if self._run_scope is None:
            return False
        self._run_scope.cancel()
        return True


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
        with anyio.move_on_after(KILL_GRACE):
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
        if connection.closed:
            _kill_group(process, signal_module.SIGKILL)
            _live_processes.pop(process, None)
