"""TerminalHandle: a display-only terminal and, optionally, the real process behind it.

How this works: :meth:`TerminalHandle.write` appends bytes to a buffer. The
buffer is sent as one ``terminal_output_chunk`` (base64 of exactly those
bytes) when it reaches ``max_chunk`` bytes, when ``flush_delay`` seconds have
passed since the first buffered byte, and before any later update of the
session (the session flushes dirty terminals first), so small writes are
coalesced and nothing is ever reordered or lost. Large writes are cut into
``max_chunk`` pieces so no message exceeds what clients accept.

:meth:`run` starts a process in its own process group, pumps its merged
stdout and stderr into the terminal as it arrives, and reports the exit
status. If the work is cancelled the whole group gets SIGTERM, then SIGKILL
after a grace period, and the exit status is still reported.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import signal as signal_module
import subprocess
from collections.abc import Generator, Mapping, Sequence
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
    from ._session import Session

__all__ = ["ExitStatus", "TerminalHandle"]

logger = logging.getLogger(__name__)

DEFAULT_MAX_CHUNK: Final = 64 * 1024
DEFAULT_FLUSH_DELAY: Final = 0.01
KILL_GRACE: Final = 2.0
_UNSET: Final = UNSET

#: Every process started by a TerminalHandle that has not been reaped yet.
_live_processes: set[anyio.abc.Process] = set()


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
    in the tool call's content) or :meth:`acpio.Session.terminal`.
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
        self.exit_status: ExitStatus | None = None
        self._buffer = bytearray()
        self._dirty = False
        self._flush_scheduled = False
        self._announced = False
        self._work: _Work | None = _current_work.get()
        self._run_scope: anyio.CancelScope | None = None
        self._prefix = (
            b'{"sessionUpdate":"terminal_output_chunk","terminalId":'
            + schema.encode(terminal_id)
            + b',"data":"'
        )

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
        """Stream bytes to the terminal, exactly as given (any bytes, in order)."""
        if not data:
            return
        if not self._announced:
            await self.announce()
        self._buffer += data
        if len(self._buffer) >= self.max_chunk:
            await self.flush()
            return
        if not self._dirty:
            self._dirty = True
            self.session._mark_terminal_dirty(self)
        if not self._flush_scheduled and self.flush_delay >= 0:
            self._flush_scheduled = True
            self.session._task_group.start_soon(self._flush_later)

    async def _flush_later(self) -> None:
        try:
            await anyio.sleep(self.flush_delay)
            await self.flush()
        except Exception:
            logger.debug("delayed flush of terminal %s failed", self.id, exc_info=True)
        finally:
            self._flush_scheduled = False

    async def flush(self) -> None:
        """Send every buffered byte now (as chunks of at most ``max_chunk`` bytes)."""
        self._dirty = False
        if not self._buffer:
            return
        work = self._work
        if work is not None and work.finished:
            self._buffer.clear()
            return
        data = bytes(self._buffer)
        self._buffer.clear()
        step = self.max_chunk
        history = self.session.history
        for start in range(0, len(data), step):
            piece = data[start : start + step]
            history.record_terminal_output(self.id, piece)
            await self.session._send_encoded(self._prefix + base64.b64encode(piece) + b'"}')

    async def snapshot(self, data: bytes) -> None:
        """Replace everything the client stores for this terminal with ``data``."""
        await self._send_update(output=schema.TerminalOutput(data=base64.b64encode(data).decode()))

    async def exit(self, exit_code: int | None = None, signal: str | None = None) -> None:
        """Report that the terminal's process exited (a code, or a signal name like ``SIGTERM``)."""
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
        """Patch the terminal's command, working directory or size (``None`` clears)."""
        if isinstance(cwd, str):
            require_absolute(cwd, "terminal cwd")
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
        """Run ``command`` with the shell, streaming its output live; returns its exit status."""
        return await self.run([shell, "-c", command], cwd=cwd, env=env)

    async def run(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ExitStatus:
        """Run a process in its own process group and stream its stdout+stderr into the terminal.

        The exit status is reported to the client and returned. On
        cancellation (``session/cancel``, ``terminal/cancel``, a closed
        connection) the process group is terminated, then killed after a short
        grace, and the exit status is still reported before the cancellation
        continues. No process outlives this call.
        """
        if not argv:
            raise ValueError("argv must not be empty")
        workdir = require_absolute(cwd or self.cwd or self.session.cwd, "process cwd")
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
        _live_processes.add(process)
        scope = self._run_scope = anyio.CancelScope()
        try:
            with scope:
                assert process.stdout is not None
                async for data in process.stdout:
                    await self.write(data)
                returncode = await process.wait()
            if scope.cancelled_caught:
                # terminal/cancel: stop the process, report, and return normally.
                status = await _stop_process(process)
                await self.exit(status.exit_code, status.signal)
                return status
        except BaseException:
            with anyio.CancelScope(shield=True):
                status = await _stop_process(process)
                try:
                    await self.exit(status.exit_code, status.signal)
                except Exception:
                    logger.debug("could not report the exit of terminal %s", self.id)
            raise
        finally:
            self._run_scope = None
            _live_processes.discard(process)
        status = ExitStatus.from_returncode(returncode)
        _kill_group(process, signal_module.SIGKILL)
        await self.exit(status.exit_code, status.signal)
        return status

    def request_cancel(self) -> bool:
        """Handle ``terminal/cancel``: stop the running process; False if none runs."""
        if self._run_scope is None:
            return False
        self._run_scope.cancel()
        return True


async def _stop_process(process: anyio.abc.Process) -> ExitStatus:
    """Terminate the process group, kill it after a grace period, and reap the process."""
    with anyio.CancelScope(shield=True):
        if process.returncode is None:
            _kill_group(process, signal_module.SIGTERM)
            with anyio.move_on_after(KILL_GRACE):
                await process.wait()
        if process.returncode is None:
            _kill_group(process, signal_module.SIGKILL)
            await process.wait()
        _kill_group(process, signal_module.SIGKILL)
        with anyio.move_on_after(KILL_GRACE):
            await process.aclose()
    assert process.returncode is not None
    return ExitStatus.from_returncode(process.returncode)


def _kill_group(process: anyio.abc.Process, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)


def kill_all_processes() -> None:
    """Kill every process group started by a terminal that is still alive (shutdown path)."""
    for process in list(_live_processes):
        _kill_group(process, signal_module.SIGKILL)
