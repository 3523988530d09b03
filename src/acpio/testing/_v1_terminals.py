"""Client-run terminals of ACP v1: the mock client runs ``terminal/create`` commands for real.

How this works: on a v1 connection whose client advertised ``terminal: true``
the agent asks the client to run a command (``terminal/create``) and then
reads its output (``terminal/output``), waits for it (``terminal/wait_for_exit``),
kills it (``terminal/kill``) and frees it (``terminal/release``), as an editor's
terminal panel does. Each command is a real subprocess (stdout and stderr
into one buffer, stdin closed), pumped by a task of the client's task group.
The buffer keeps at most ``outputByteLimit`` bytes: when it is exceeded the
oldest bytes are dropped, cut at a UTF-8 character boundary, and the output
reports ``truncated: true``. The terminal's :class:`TerminalView` in the
session view shows the same retained bytes, the command and its exit status,
so a tool call that embeds ``{"type": "terminal", "terminalId": ...}`` shows
its live output over v1 as over v2. Release kills a command still running;
a released id is unknown afterwards. Leaving the client kills every command.
Some editors never put ``exitStatus`` in a ``terminal/output`` answer (the
agent then learns the exit from ``terminal/wait_for_exit`` alone): set
:attr:`ClientTerminals.exit_in_output` to ``False`` to behave like them.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import subprocess
from dataclasses import dataclass, field
from typing import Final

import anyio
import anyio.abc

from .. import schema
from .._errors import RequestError
from .._json import as_list, as_object, as_str_list, get_field
from .._protocol.paths import is_local_absolute
from ._client_session import ClientSessions
from ._view import SessionView, TerminalView

__all__ = ("ClientTerminal", "ClientTerminals", "show_terminal_answer", "trim_output")

_READ_SIZE: Final = 65536
_ids = itertools.count(1)


def trim_output(buffer: bytearray, limit: int | None) -> bool:
    """Drop the oldest bytes of ``buffer`` beyond ``limit``, at a UTF-8 character boundary.

    Returns whether anything was dropped.
    """
    if limit is None or len(buffer) <= limit:
        return False
    cut = len(buffer) - limit
    while cut < len(buffer) and buffer[cut] & 0xC0 == 0x80:
        cut += 1  # never start the kept output inside a character
    del buffer[:cut]
    return True


@dataclass(eq=False)
class ClientTerminal:
    """One command the client runs for the agent."""

    id: str
    session_id: str
    command: list[str]
    limit: int | None
    view: TerminalView
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    exit_code: int | None = None
    signal: str | None = None
    exited: anyio.Event = field(default_factory=anyio.Event)
    process: anyio.abc.Process | None = None
    released: bool = False

    def exit_status(self) -> dict[str, object] | None:
        """The v1 ``exitStatus`` once the command exited, else ``None``."""
        if not self.exited.is_set():
            return None
        return {"exitCode": self.exit_code, "signal": self.signal}


class ClientTerminals:
    """The terminals of one client, by ``terminalId`` (see the module docstring)."""

    def __init__(self, sessions: ClientSessions) -> None:
        self._sessions = sessions
        self.terminals: dict[str, ClientTerminal] = {}
        """Every terminal the agent created, released ones included, by id."""
        self.exit_in_output = True
        """Whether ``terminal/output`` answers carry ``exitStatus`` once the command exited."""

    def _get(self, raw: dict[str, object]) -> ClientTerminal:
        terminal_id = raw.get("terminalId")
        terminal = self.terminals.get(terminal_id) if isinstance(terminal_id, str) else None
        if terminal is None or terminal.released:
            raise RequestError.invalid_params(f"unknown terminal {terminal_id!r}")
        if terminal.session_id != raw.get("sessionId"):
            raise RequestError.invalid_params(
                f"terminal {terminal_id!r} belongs to another session"
            )
        return terminal

    async def serve(self, method: str, raw: dict[str, object]) -> object:
        """Answer one ``terminal/*`` request."""
        if method == "terminal/create":
            return await self._create(raw)
        terminal = self._get(raw)
        if method == "terminal/output":
            result: dict[str, object] = {
                "output": terminal.output.decode("utf-8", "replace"),
                "truncated": terminal.truncated,
            }
            status = terminal.exit_status()
            if status is not None and self.exit_in_output:
                result["exitStatus"] = status
            return result
        if method == "terminal/wait_for_exit":
            await terminal.exited.wait()
            return terminal.exit_status()
        if method == "terminal/kill":
            self._kill(terminal)
            return {}
        if method == "terminal/release":
            self._kill(terminal)
            terminal.released = True
            return {}
        raise RequestError.method_not_found(method)

    async def _create(self, raw: dict[str, object]) -> object:
        session_id, command = raw.get("sessionId"), raw.get("command")
        if not isinstance(session_id, str) or not isinstance(command, str):
            raise RequestError.invalid_params("terminal/create needs sessionId and command")
        args = as_str_list(raw.get("args") or [])
        if args is None:
            raise RequestError.invalid_params("args must be a list of strings")
        cwd = raw.get("cwd")
        if cwd is not None and (not is_local_absolute(cwd)):
            raise RequestError.invalid_params(f"cwd must be an absolute path, got {cwd!r}")
        limit = raw.get("outputByteLimit")
        if limit is not None and (not isinstance(limit, int) or limit < 0):
            raise RequestError.invalid_params("outputByteLimit must be a non-negative integer")
        env = dict(os.environ)
        variables = raw.get("env")
        for variable in as_list(variables) or []:
            name, value = get_field(variable, "name"), get_field(variable, "value")
            if isinstance(name, str) and isinstance(value, str):
                env[name] = value
        session = self._sessions.get(session_id)
        terminal_id = f"term-{next(_ids)}"
        view = session.view.terminal(terminal_id)
        view.command = " ".join([command, *args])
        view.cwd = cwd if isinstance(cwd, str) else session.cwd
        argv = [command, *args]
        terminal = ClientTerminal(terminal_id, session_id, argv, limit, view)
        try:
            terminal.process = await anyio.open_process(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=view.cwd,
                env=env,
            )
        except OSError as exc:
            raise RequestError.internal_error(f"cannot run {command!r}: {exc}") from None
        self.terminals[terminal_id] = terminal
        group = self._sessions.link.task_group
        assert group is not None
        group.start_soon(self._pump, terminal)
        return {"terminalId": terminal_id}

    async def _pump(self, terminal: ClientTerminal) -> None:
        process = terminal.process
        assert process is not None and process.stdout is not None
        try:
            async for data in process.stdout:
                terminal.output += data
                if trim_output(terminal.output, terminal.limit):
                    terminal.truncated = True
                terminal.view.set_output(bytes(terminal.output))
                self._sessions.link.changed()
            code = await process.wait()
        finally:
            with anyio.CancelScope(shield=True):
                if process.returncode is None:
                    self._kill(terminal)
                    code = await process.wait()
                await process.aclose()
        if code < 0:
            terminal.signal = signal.Signals(-code).name
        else:
            terminal.exit_code = code
        terminal.view.exit_status = schema.TerminalExitStatus(
            exit_code=terminal.exit_code, signal=terminal.signal
        )
        terminal.exited.set()
        self._sessions.link.changed()

    @staticmethod
    def _kill(terminal: ClientTerminal) -> None:
        process = terminal.process
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()


def show_terminal_answer(
    view: SessionView, method: str, params: dict[str, object], result: object
) -> str | None:
    """Fold a client's answer to a v1 ``terminal/*`` request into ``view``'s terminal, for a
    viewer that sees only the wire (a recorded transcript): ``terminal/create`` gives the id,
    command and cwd, ``terminal/output`` the retained output (and exit status, once exited),
    ``terminal/wait_for_exit`` the exit status. Returns the terminal's id, if known."""
    result = as_object(result)
    if result is None:
        return None
    if method == "terminal/create":
        terminal_id = result.get("terminalId")
        if not isinstance(terminal_id, str):
            return None
        terminal = view.terminal(terminal_id)
        command, args = params.get("command"), params.get("args")
        words = [command, *(as_list(args) or [])]
        terminal.command = " ".join(str(word) for word in words)
        cwd = params.get("cwd")
        terminal.cwd = cwd if isinstance(cwd, str) else None
        return terminal_id
    terminal_id = params.get("terminalId")
    if not isinstance(terminal_id, str):
        return None
    terminal = view.terminal(terminal_id)
    status: object = None
    if method == "terminal/output":
        output = result.get("output")
        if isinstance(output, str):
            terminal.set_output(output.encode("utf-8", "surrogateescape"))
        status = result.get("exitStatus")
    elif method == "terminal/wait_for_exit":
        status = result
    status = as_object(status)
    if status is not None:
        code, name = status.get("exitCode"), status.get("signal")
        terminal.exit_status = schema.TerminalExitStatus(
            exit_code=code if isinstance(code, int) else None,
            signal=name if isinstance(name, str) else None,
        )
    return terminal_id
