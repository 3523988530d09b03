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
stdout and stderr into the terminal as it arrives, reports the exit status
and returns it with a bounded copy of the output (:class:`CommandResult`);
:meth:`start` is the same as a stream of chunks. The process itself, the
shielded start and the stop on cancellation (SIGTERM, SIGKILL after a grace
period, the exit status still reported) live in :mod:`acpio._handles.process`; every
process is registered with the connection of its session until it is
reaped, so :func:`kill_all_processes` can kill what a closed connection left
behind without touching the processes of other connections in the same
program, or in the client's terminal where the client runs terminals: the
session's host chooses (:mod:`acpio._handles.host`).
"""

from __future__ import annotations

import base64
import logging
import math
import shlex
from collections.abc import Awaitable, Callable, Generator, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Final

import anyio
import anyio.lowlevel
from msgspec import UNSET, UnsetType

from .. import schema
from .._errors import LibraryCreated, LocalProtocolError
from .._protocol.paths import require_absolute
from .._protocol.values import check_frame
from .._session.channel import OwningSession
from .._session.work import Work, current_work
from .host import HandleParts, ShowsTerminal
from .process import (
    DEFAULT_OUTPUT_LIMIT,
    KILL_GRACE,
    CommandResult,
    CommandSpec,
    ExitStatus,
    RunningCommand,
    kill_all_processes,
)

if TYPE_CHECKING:
    from .._session.channel import Flushable

__all__ = [
    "CommandResult",
    "ExitStatus",
    "RunningCommand",
    "ShowsTerminal",
    "TerminalHandle",
    "kill_all_processes",
]

logger = logging.getLogger(__name__)

DEFAULT_MAX_CHUNK: Final = 64 * 1024
DEFAULT_FLUSH_DELAY: Final = 0.01
_UNSET: Final = UNSET

# The update a terminal's bytes go out as, pre-encoded with the base64 spliced in:
# proven to hold no enum value whatever the bytes.
check_frame(schema.TerminalOutputChunk(terminal_id="", data=""), ("data",))


class TerminalHandle(metaclass=LibraryCreated):
    """One display-only terminal: bytes streamed exactly, snapshots, exit status, processes.

    Create it with :meth:`acpio.ToolCallHandle.terminal` (which also shows it
    in the tool call's content) or :meth:`acpio.Session.terminal`. The client
    receives every written byte exactly once, in order, each chunk base64
    encoded on its own. ``max_chunk`` (bytes per ``terminal_output_chunk``)
    and ``flush_delay`` (seconds a byte may wait to be coalesced with later
    writes; negative: only when the buffer fills or another update goes out)
    can be changed at any time, and so can ``kill_grace``, the seconds a
    process has to exit after SIGTERM before its group gets SIGKILL.

    Terminals are created by :meth:`acpio.Session.terminal` and
    :meth:`acpio.ToolCallHandle.terminal`; calling ``TerminalHandle(...)``
    raises :class:`TypeError`.
    """

    def __init__(
        self,
        channel: HandleParts,
        register: Callable[[TerminalHandle], None],
        session: OwningSession,
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
        self._channel: Final = channel
        self._register: Final = register
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
        self._dirty_list: list[Flushable] | None = None
        self._flush_scheduled = False
        self._announced = False
        self._work: Work | None = current_work.get()
        self._running: RunningCommand | None = None
        self._stop_running: Callable[[], None] = _nothing_runs
        #: Bytes of a command's output :meth:`run` keeps for the agent (head and tail).
        self.output_limit = DEFAULT_OUTPUT_LIMIT
        #: The id of the client's terminal that runs the command, once created (a client
        #: that runs terminals: the session's host, :mod:`acpio._handles.host`).
        self.client_terminal_id: str | None = None
        # When the client runs terminals: the tool call whose content shows this
        # terminal once it is known which id to show (see ToolCallHandle.terminal).
        self._show_in: ShowsTerminal | None = None
        # The line of this terminal's bytes up to the bytes (the session's encoding).
        self._line_prefix = channel.terminal_prefix(terminal_id)

    async def announce(self) -> TerminalHandle:
        """Send the first ``terminal_update`` (command, cwd, size) unless already sent."""
        if not self._announced:
            self._register(self)
            work = current_work.get()
            if work is not None:
                work.terminal_flushes.append(self.flush)
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
        if self._show_in is not None:
            await self._show_pending()
        if not buffer and len(data) >= self.max_chunk:
            await self._send_chunks(data)
            return
        buffer += data
        if len(buffer) >= self.max_chunk:
            await self.flush()
            return
        channel = self._channel
        mark_pending = channel.mark_terminal_pending  # (see _session/channel.py: bound once)
        self._dirty_list = mark_pending(self, self._dirty_list)
        if not self._flush_scheduled and self.flush_delay >= 0:
            self._flush_scheduled = True
            spawn = channel.spawn
            spawn(self._flush_later)

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
        send = self._channel.send_terminal_bytes
        prefix = self._line_prefix
        pieces: Iterable[bytes]
        if len(data) <= step:
            pieces = (bytes(data),)  # no copy when data is already bytes
        else:
            view = memoryview(data)
            pieces = (bytes(view[start : start + step]) for start in range(0, len(view), step))
        for piece in pieces:
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
        if self._show_in is not None and self._running is None:
            await self._show_pending()
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
        output_limit: int | None = None,
    ) -> CommandResult:
        """Run ``command`` with the shell, streaming its output live; returns its result.

        ``shell -c command`` under the rules of :meth:`run`; a terminal created
        without a command shows ``command``.
        """
        async with self.start_shell(
            command, cwd=cwd, env=env, shell=shell, output_limit=output_limit
        ) as running:
            return await running.wait()

    async def run(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        output_limit: int | None = None,
    ) -> CommandResult:
        """Run a process in its own process group and stream its stdout+stderr into the terminal.

        The process runs in ``cwd`` (default: the terminal's, else the
        session's; absolute), with ``env`` as its whole environment when
        given, stdin from ``/dev/null`` and stderr merged into stdout, so
        both reach the client live and in the order the process wrote them.
        The exit status is reported to the client and returned in a
        :class:`CommandResult` with the output (bounded by ``output_limit``
        bytes, default :attr:`output_limit`: the head and the tail are kept).
        On ``terminal/cancel`` the process group is terminated, then killed
        after a short grace, the exit status is reported and returned. On
        other cancellation (``session/cancel``, a closed connection), at any
        moment of the call, the same happens and the cancellation continues.
        No process of the group outlives this call; work that is already
        cancelled starts no process.

        On a v1 connection whose client runs terminals, the command runs in
        the client's terminal instead (``terminal/create`` with ``env`` added
        to the client's environment; see the ACP v1 page of the documentation),
        with the same result, reporting and cancellation.
        """
        async with self.start(argv, cwd=cwd, env=env, output_limit=output_limit) as running:
            return await running.wait()

    def start_shell(
        self,
        command: str,
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        shell: str = "/bin/sh",
        output_limit: int | None = None,
    ) -> RunningCommand:
        """:meth:`start` for ``shell -c command``; the terminal shows ``command``.

        ``async with terminal.start_shell("make") as make:`` then ``async for
        chunk in make.output: ...`` and ``result = await make.wait()``.
        """
        return self._command((shell, "-c", command), command, cwd, env, output_limit)

    def start(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        output_limit: int | None = None,
    ) -> RunningCommand:
        """The streaming form of :meth:`run`: enter it with ``async with`` to start the process.

        The :class:`RunningCommand` yields the output chunks as they arrive
        (``async for chunk in command.output``) and :meth:`RunningCommand.wait`
        returns the :class:`CommandResult`. The rules of :meth:`run` hold;
        leaving the block while the process runs stops it and reports its exit.
        """
        return self._command(tuple(argv), shlex.join(argv), cwd, env, output_limit)

    def _command(
        self,
        argv: tuple[str, ...],
        display: str,
        cwd: str | None,
        env: Mapping[str, str] | None,
        output_limit: int | None,
    ) -> RunningCommand:
        """The command as the session's host runs it; its :class:`CommandSpec` is made here."""
        spec = CommandSpec(
            argv=argv,
            display=display,
            cwd=cwd or self.cwd or self.session.cwd,
            env=env,
            output_limit=self.output_limit if output_limit is None else output_limit,
        )
        channel = self._channel
        return channel.host.command(
            self,
            spec,
            begin=self._begin,
            show_client_terminal=self._show_client_terminal,
            parts=channel,
        )

    async def _begin(
        self,
        running: RunningCommand,
        start: Callable[[], Awaitable[None]],
        request_stop: Callable[[], None],
    ) -> None:
        """Start ``running``: shielded, so a started process is always known to its stopper."""
        if self._running is not None and self._running.result is None:
            raise RuntimeError(f"terminal {self.id!r} is already running a process")
        if self.exit_status is not None:
            raise LocalProtocolError(
                f"terminal {self.id!r} already exited; a terminalId must not be reused for "
                "another process: create a new terminal"
            )
        if anyio.current_effective_deadline() == -math.inf:
            # Cancelled before anything started: start nothing, end the terminal, raise.
            self._show_in = None  # no client terminal exists to be shown
            if self._announced:
                with anyio.CancelScope(shield=True):
                    await self.exit()
            await anyio.lowlevel.checkpoint()
        self._running = running
        self._stop_running = request_stop
        try:
            with anyio.CancelScope(shield=True):
                if self.command is None:
                    self.command = running.display
                    if self._announced:
                        await self._send_update(command=running.display)
                if not self._announced:
                    await self.announce()
                await start()
        except BaseException:
            self._running = None
            raise

    async def _show_client_terminal(self, client_terminal_id: str) -> None:
        """Show the client's terminal in the tool call this terminal belongs to."""
        self.client_terminal_id = client_terminal_id
        # The item names the client's own terminal: the encoding shows it as such.
        self._channel.show_client_terminal(client_terminal_id)
        call, self._show_in = self._show_in, None
        if call is not None:
            await call.append(schema.Terminal(terminal_id=client_terminal_id))

    def show_in(self, call: ShowsTerminal) -> None:
        """When the client runs terminals: ``call``'s content shows this terminal once it is
        known which id to show (the client's, when a command runs there; else this one)."""
        self._show_in = call

    async def _show_pending(self) -> None:
        """Put this terminal in its tool call's content once it shows something itself."""
        call, self._show_in = self._show_in, None
        if call is not None:
            await call.append(schema.Terminal(terminal_id=self.id))

    def request_cancel(self) -> bool:
        """Handle ``terminal/cancel``: stop the running process; False if none runs."""
        running = self._running
        if running is None or running.result is not None:
            return False
        self._stop_running()
        return True


def _nothing_runs() -> None:
    """The stop of a terminal that never ran a process."""
