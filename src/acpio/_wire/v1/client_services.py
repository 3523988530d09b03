"""What a v1 client does for the agent: run terminals, read and write text files.

How this works: on a connection whose client advertised ``terminal``,
:meth:`TerminalHandle.run` runs the command in the client's terminal
(:class:`ClientCommand`): ``terminal/create``, then ``terminal/output``
polled (quickly at first, backing off while nothing changes; each answer's
new bytes are the next output chunk), ``terminal/kill`` when the work is
cancelled and ``terminal/release`` always, last. The end of the command is
learnt two ways, whichever comes first: ``terminal/wait_for_exit``, asked
once right after the create and awaited in a task of the session while the
output is polled (some clients never put ``exitStatus`` in an output
answer), or the ``exitStatus`` of an output answer. Once the exit is known,
one more poll collects the last output and the command ends. The waiting
task never outlives its command: releasing the terminal gives its request
up (abandoned: v1 clients take no ``$/cancel_request``, so none is sent; a
late answer is ignored) and waits for the task first.

A stop (a cancelled turn, ``terminal/cancel``) sends ``terminal/kill`` and
polls ``terminal/output`` at once, without waiting for the kill's answer,
until either the output or ``terminal/wait_for_exit`` tells the exit; the
kill, the exit and the last output share one deadline of the terminal's
``kill_grace``, and ``terminal/release`` is then awaited at most
``max(kill_grace, RELEASE_WAIT)``. So a client that never answers
``wait_for_exit`` (or ``kill``, or ``output``) holds a cancelled turn at most
``2 * kill_grace`` (2 s by default), whatever its output answers said. The editor shows its own live
terminal: the tool call's content gets the v1 ``{type: "terminal",
terminalId}`` item with the client's id right after the create.

Every request that should come back at once (``terminal/create``,
``terminal/output``, ``fs/*``) is bounded by
:attr:`SessionLimits.client_request_timeout <acpio.SessionLimits>`: beyond
it the request is given up and :class:`~acpio.RequestTimeout` naming it is
raised (the command is then stopped and released, and the error reaches the
agent code that waited). ``terminal/wait_for_exit`` waits as long as the
command runs; the last poll after an exit the agent did not cause is given
:data:`CLEANUP_TIMEOUT`, the requests of a stop the bound above. A
response the connection could not use (past the message size limit,
malformed) fails its request at once (see :meth:`acpio.rpc.Connection.request`).

The requests are the v1 shapes of :mod:`acpio._wire.v1.shapes` (the vendored v1
schema, ``schema/v1/schema.json``), sent with :meth:`Session._client_request`,
which flushes buffered terminal output first; unknown fields in answers are
ignored. Asking for a service the client did not
advertise raises :class:`~acpio.ClientCapabilityError` before anything is sent.
The session's host (:class:`~acpio._handles.host.CommandHost`) is
:data:`CLIENT_TERMINALS` when the client advertised ``terminal``, else
:data:`CLIENT_FILES`, whose commands the agent runs itself.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Final, TypeVar

import anyio
import anyio.lowlevel
import msgspec
from msgspec import UNSET, UnsetType

from ..._errors import (
    ClientCapabilityError,
    ConnectionClosed,
    RemoteProtocolError,
    RequestError,
    RequestTimeout,
)
from ..._handles.host import AgentHost, HandleParts, ShownTerminal, ShowsTerminal
from ..._handles.process import (
    BeginCommand,
    CommandSpec,
    CommandTerminal,
    ExitStatus,
    RunningCommand,
)
from ..._protocol.paths import require_absolute
from . import shapes as v1

__all__ = [
    "CLIENT_FILES",
    "CLIENT_TERMINALS",
    "ClientCommand",
    "ClientFileHost",
    "ClientTerminalHost",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")
#: Seconds between two ``terminal/output`` polls: from the first to the slowest.
POLL_FIRST: Final = 0.005
POLL_SLOWEST: Final = 0.5
#: Bytes of output the client is asked to keep (``outputByteLimit``), at least. Each
#: poll returns what the client kept, so this bounds what one poll costs.
CLIENT_OUTPUT_LIMIT: Final = 1024 * 1024
#: How long a request made while stopping or releasing may take before it is given up.
CLEANUP_TIMEOUT: Final = 5.0
#: At least this long (else the kill grace) for the client's answer to ``terminal/release``.
RELEASE_WAIT: Final = 0.5
# How much of the last answer must reappear in the next one to find where new output starts.
_ANCHOR: Final = 4096
# What a request to the client may fail with once sent (the client's fault or a closed line).
_CLIENT_FAILURES: Final = (ConnectionClosed, RequestError, RemoteProtocolError, RequestTimeout)


_decode_create = v1.decoder(v1.CreateTerminalResponse).decode
_decode_output = v1.decoder(v1.TerminalOutputResponse).decode
_decode_exit = v1.decoder(v1.WaitForTerminalExitResponse).decode
_decode_read = v1.decoder(v1.ReadTextFileResponse).decode


def _value(field: T | None | UnsetType) -> T | None:
    return None if field is UNSET else field


def _ignore(_: msgspec.Raw) -> None:
    return None


_Request = Callable[[str, object, Callable[[msgspec.Raw], T]], Awaitable[T]]


async def _ask(
    client_request: _Request[T],
    method: str,
    params: object,
    decode: Callable[[msgspec.Raw], T],
    limit: float,
) -> T:
    """A request the client should answer at once, withdrawn after ``limit`` seconds."""
    with anyio.move_on_after(limit):
        return await client_request(method, params, decode)
    raise RequestTimeout(
        f"the client did not answer {method} within {limit:g} s; the request was withdrawn "
        "(the limit is SessionLimits.client_request_timeout)"
    )


class ClientCommand(RunningCommand):
    """A command running in a terminal of the v1 client (see the module docstring)."""

    def __init__(
        self,
        terminal: CommandTerminal,
        spec: CommandSpec,
        *,
        begin: BeginCommand,
        show_client_terminal: Callable[[str], Awaitable[None]],
        parts: HandleParts,
    ) -> None:
        super().__init__(terminal, begin, spec)
        self._show_client_terminal = show_client_terminal
        self._session_id = parts.session_id
        self._client_request = parts.client_request
        self._timeout = parts.limits.client_request_timeout
        self._spawn = parts.spawn
        self.terminal_id: str | None = None
        self._last = b""  # the output the client returned last time
        self._seen = 0  # bytes of output read so far
        self._ended = False  # the output after the exit was read: nothing more comes
        self._released = False
        self._delay = POLL_FIRST
        self._status: ExitStatus | None = None  # how the command ended, once known
        self._exit_known = anyio.Event()
        self._watch_scope = anyio.CancelScope()  # the terminal/wait_for_exit task's
        self._watch_done: anyio.Event | None = None  # set when that task ended
        self._stop_deadline: float | None = None  # stopped: when the cleanup gives up

    def _ids(self) -> tuple[str, str]:
        assert self.terminal_id is not None
        return self._session_id, self.terminal_id

    def _learn(self, status: ExitStatus) -> None:
        """The command exited (the first way of learning it wins)."""
        if self._status is None:
            self._status = status
            self._exit_known.set()

    async def _start(self) -> None:
        """``terminal/create``, watch for the exit, show the client's terminal; runs shielded."""
        spec = self._spec
        params = v1.CreateTerminalRequest(
            session_id=self._session_id,
            command=spec.argv[0],
            args=list(spec.argv[1:]),
            env=[v1.EnvVariable(name=k, value=v) for k, v in (spec.env or {}).items()],
            cwd=spec.cwd,
            output_byte_limit=max(CLIENT_OUTPUT_LIMIT, 2 * spec.output_limit),
        )
        created = await _ask(
            self._client_request, "terminal/create", params, _decode_create, self._timeout
        )
        self.terminal_id = created.terminal_id
        try:
            done = anyio.Event()
            self._spawn(self._watch_exit, done)
            self._watch_done = done
        except RuntimeError:  # the session's task group is closing: polling alone tells
            logger.debug("not watching client terminal %s for its exit", self.terminal_id)
        try:
            await self._show_client_terminal(created.terminal_id)
        except BaseException:
            await self._abort()
            raise

    async def _watch_exit(self, done: anyio.Event) -> None:
        """``terminal/wait_for_exit``, awaited while the output is polled (see the module doc)."""
        try:
            with self._watch_scope:
                session_id, terminal_id = self._ids()
                status = await self._client_request(
                    "terminal/wait_for_exit",
                    v1.WaitForTerminalExitRequest(session_id=session_id, terminal_id=terminal_id),
                    _decode_exit,
                )
                self._learn(ExitStatus(_value(status.exit_code), _value(status.signal)))
        except ConnectionClosed:
            pass  # every other request of the command fails the same way
        except Exception as exc:
            # Output polling still learns the exit from ``exitStatus`` where the client gives it.
            logger.warning(
                "terminal/wait_for_exit of client terminal %s failed (%s); its end is known "
                "only if the client puts exitStatus in terminal/output",
                self.terminal_id,
                exc,
            )
        finally:
            done.set()

    async def _poll(self) -> bytes:
        """One ``terminal/output``: the bytes that are new since the last one."""
        session_id, terminal_id = self._ids()
        final = self._status is not None  # asked after the exit: the output is complete
        answer = await _ask(
            self._client_request,
            "terminal/output",
            v1.TerminalOutputRequest(session_id=session_id, terminal_id=terminal_id),
            _decode_output,
            self._timeout,
        )
        status = _value(answer.exit_status)
        if status is not None:
            self._learn(ExitStatus(_value(status.exit_code), _value(status.signal)))
            final = True
        if final:
            self._ended = True
        text = answer.output
        if not final and text.endswith("\ufffd"):
            # Perhaps a character the process has not finished writing: count it next time.
            text = text[:-1]
        output = text.encode("utf-8", "replace")
        last, self._last = self._last, output
        if not answer.truncated:
            new = output[self._seen :]
        else:
            # The client dropped the oldest bytes: new output follows what was seen last.
            anchor = last[-_ANCHOR:]
            at = output.rfind(anchor) if anchor else -1
            new = output[at + len(anchor) :] if at >= 0 else output
        self._seen += len(new)
        return new

    async def _read(self) -> bytes | None:
        while not self._ended:
            new = await self._poll()
            if new:
                self._delay = POLL_FIRST
                return new
            if self._ended:
                break
            with anyio.move_on_after(self._delay):
                await self._exit_known.wait()  # the exit learnt: poll the last output now
            self._delay = min(self._delay * 2, POLL_SLOWEST)
        return None

    async def _wait_exit(self) -> ExitStatus:
        # After the end of the output the exit is known; a stop waits for the watcher.
        if self._status is None and self._watch_done is not None:
            await self._watch_done.wait()
        return self._status if self._status is not None else ExitStatus()

    async def _stop(self) -> ExitStatus:
        """``terminal/kill``, then the exit from whichever tells first: an output poll or
        ``terminal/wait_for_exit``; all within the kill grace, whatever the client answers."""
        if self.terminal_id is None or self._status is not None:
            return self._status or ExitStatus()
        session_id, terminal_id = self._ids()
        kill = v1.KillTerminalRequest(session_id=session_id, terminal_id=terminal_id)
        self._stop_deadline = anyio.current_time() + self._grace
        with anyio.move_on_at(self._stop_deadline):
            async with anyio.create_task_group() as group:
                # The kill's answer is not waited for before polling: a client that
                # never answers it still tells the exit through terminal/output.
                group.start_soon(self._kill, kill)
                await anyio.lowlevel.checkpoint()  # the kill goes out first
                await self._poll_for_exit()
                group.cancel_scope.cancel()
        return self._status or ExitStatus()

    async def _kill(self, kill: v1.KillTerminalRequest) -> None:
        try:
            await self._client_request("terminal/kill", kill, _ignore)
        except _CLIENT_FAILURES as exc:
            # A closed connection: the client ends its terminals itself.
            logger.debug("could not stop client terminal %s: %s", self.terminal_id, exc)

    async def _poll_for_exit(self) -> None:
        """Poll ``terminal/output`` until the exit is known (from it or from the watcher).

        Polled, never waited for alone: a client that never answers
        ``terminal/wait_for_exit`` still tells through ``terminal/output``.
        """
        self._delay = POLL_FIRST
        while self._status is None:
            try:
                new = await self._poll()
            except _CLIENT_FAILURES as exc:
                logger.debug("no output of client terminal %s: %s", self.terminal_id, exc)
                await self._exit_known.wait()
                return
            if new:
                self._capture.add(new)
            if self._status is not None:
                return
            with anyio.move_on_after(self._delay):
                await self._exit_known.wait()
            self._delay = min(self._delay * 2, POLL_SLOWEST)

    async def _after_exit(self) -> None:
        # What the process wrote since the last poll still belongs in the result.
        if self.terminal_id is None or self._ended:
            return
        # After a stop, within the same kill grace as the kill and the exit.
        deadline = anyio.current_time() + CLEANUP_TIMEOUT
        if self._stop_deadline is not None:
            deadline = min(deadline, self._stop_deadline)
        try:
            with anyio.move_on_at(deadline):
                new = await self._poll()
                if new:
                    self._capture.add(new)
        except _CLIENT_FAILURES as exc:
            logger.debug("no final output of client terminal %s: %s", self.terminal_id, exc)

    async def _release(self) -> None:
        if self.terminal_id is None or self._released:
            return
        self._released = True
        # Nothing of the command outlives it: the exit watcher's request is given up first
        # (withdrawn where the client takes $/cancel_request, else abandoned).
        self._watch_scope.cancel()
        if self._watch_done is not None:
            with anyio.move_on_after(CLEANUP_TIMEOUT, shield=True):
                await self._watch_done.wait()
        session_id, terminal_id = self._ids()
        release = v1.ReleaseTerminalRequest(session_id=session_id, terminal_id=terminal_id)
        # The turn may be waiting (a cancel): the answer is awaited for the kill grace only.
        try:
            with anyio.move_on_after(max(self._grace, RELEASE_WAIT), shield=True):
                await self._client_request("terminal/release", release, _ignore)
        except Exception as exc:
            logger.debug("terminal/release of %s failed: %s", self.terminal_id, exc)


# ------------------------------------------------------------------- file system


def _require(offered: bool, what: str) -> None:
    if not offered:
        raise ClientCapabilityError(f"the client did not advertise {what} in initialize")


class ClientFileHost(AgentHost):
    """A v1 client's host: files through the editor (``fs/*``) as far as it advertised
    them; commands run by the agent (the client advertised no ``terminal``)."""

    __slots__ = ()

    async def read_text_file(
        self, parts: HandleParts, path: str, line: int | None, limit: int | None
    ) -> str:
        """``fs/read_text_file`` (see :meth:`acpio.Session.read_text_file`)."""
        _require(parts.peer.read_text_file, "fs.readTextFile")
        require_absolute(path, "file path")
        for name, value in (("line", line), ("limit", limit)):
            if value is not None and value < (1 if name == "line" else 0):
                raise ValueError(f"{name} must be {'1-based' if name == 'line' else 'at least 0'}")
        params = v1.ReadTextFileRequest(
            session_id=parts.session_id,
            path=path,
            line=UNSET if line is None else line,
            limit=UNSET if limit is None else limit,
        )
        answer = await _ask(
            parts.client_request,
            "fs/read_text_file",
            params,
            _decode_read,
            parts.limits.client_request_timeout,
        )
        return answer.content

    async def write_text_file(self, parts: HandleParts, path: str, content: str) -> None:
        """``fs/write_text_file`` (see :meth:`acpio.Session.write_text_file`)."""
        _require(parts.peer.write_text_file, "fs.writeTextFile")
        require_absolute(path, "file path")
        params = v1.WriteTextFileRequest(session_id=parts.session_id, path=path, content=content)
        await _ask(
            parts.client_request,
            "fs/write_text_file",
            params,
            _ignore,
            parts.limits.client_request_timeout,
        )


class ClientTerminalHost(ClientFileHost):
    """A v1 client that advertised ``terminal``: every command runs in its terminals."""

    __slots__ = ()

    def command(
        self,
        terminal: CommandTerminal,
        spec: CommandSpec,
        *,
        begin: BeginCommand,
        show_client_terminal: Callable[[str], Awaitable[None]],
        parts: HandleParts,
    ) -> RunningCommand:
        """A :class:`ClientCommand`: ``terminal/create`` when it starts."""
        return ClientCommand(
            terminal,
            spec,
            begin=begin,
            show_client_terminal=show_client_terminal,
            parts=parts,
        )

    async def show_terminal(self, call: ShowsTerminal, terminal: ShownTerminal) -> None:
        """A command will show the client's own terminal, under the client's id; bytes
        the agent writes itself show this one: ``call`` shows whichever comes first."""
        terminal.show_in(call)


#: The host of a v1 client that runs no terminals.
CLIENT_FILES: Final = ClientFileHost()
#: The host of a v1 client that runs terminals.
CLIENT_TERMINALS: Final = ClientTerminalHost()
