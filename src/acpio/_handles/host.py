"""Who runs a session's commands and serves its files: the agent, or the client.

How this works: the wire version a connection negotiated gives each of its
sessions a :class:`CommandHost` (``acpio._wire``), held by the session's
:class:`HandleParts`. A terminal's command (a
:class:`~acpio._handles.process.CommandSpec`) starts with :meth:`CommandHost.command`,
a tool call shows a terminal it made with :meth:`CommandHost.show_terminal`, and
``Session.read_text_file``/``write_text_file`` and editor reads go to
:meth:`CommandHost.read_text_file`/:meth:`CommandHost.write_text_file`; nobody
asks which host it is. :data:`AGENT_HOST` runs commands as process groups of
this program (:class:`~acpio._handles.process.LocalCommand`) and has no editor
files; a client that runs terminals has its own host (``acpio._wire.v1``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Final, Protocol, TypeAlias

from .. import schema
from .._errors import ClientCapabilityError
from .._session.channel import SessionChannel
from .process import BeginCommand, CommandSpec, CommandTerminal, LocalCommand, RunningCommand

__all__ = [
    "AGENT_HOST",
    "AgentHost",
    "CommandHost",
    "HandleParts",
    "ShowsTerminal",
    "ShownTerminal",
]


class ShowsTerminal(Protocol):
    """A tool call whose content shows a terminal (:meth:`acpio.ToolCallHandle.append`)."""

    async def append(self, item: schema.ToolCallContent) -> None:
        """Append ``item`` (here a ``{type: "terminal"}`` item) to the call's content."""
        ...


class ShownTerminal(Protocol):
    """A terminal a tool call made (:class:`acpio.TerminalHandle`), as its host sees it."""

    @property
    def id(self) -> str:
        """The ``terminalId`` the agent gave it."""
        ...

    def show_in(self, call: ShowsTerminal) -> None:
        """Have ``call`` show this terminal once it is known which id to show."""
        ...


class CommandHost(Protocol):
    """Who runs the commands of a session's terminals and serves its editor files.

    One per wire version a connection negotiated, shared by its sessions; every
    method takes the session's parts, so a host keeps no session's state.
    """

    def command(
        self,
        terminal: CommandTerminal,
        spec: CommandSpec,
        *,
        begin: BeginCommand,
        show_client_terminal: Callable[[str], Awaitable[None]],
        parts: HandleParts,
    ) -> RunningCommand:
        """The command ``spec`` of ``terminal``, not yet started (``async with`` starts it).

        It runs ``spec`` as given; the host only chooses where (and so how
        ``spec.env`` applies, see :class:`~acpio._handles.process.CommandSpec`).
        """
        ...

    async def show_terminal(self, call: ShowsTerminal, terminal: ShownTerminal) -> None:
        """Show ``terminal``, just made by ``call``, in ``call``'s content (now or later)."""
        ...

    async def read_text_file(
        self, parts: HandleParts, path: str, line: int | None, limit: int | None
    ) -> str:
        """The text of ``path`` as the editor has it (unsaved changes included).

        :raises ClientCapabilityError: when the client serves no files.
        """
        ...

    async def write_text_file(self, parts: HandleParts, path: str, content: str) -> None:
        """Write ``path`` through the editor.

        :raises ClientCapabilityError: when the client serves no files.
        """
        ...


class AgentHost:
    """The agent runs every command itself; the client serves no files."""

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
        """A process group of this program, registered with the session's connection."""
        return LocalCommand(terminal, begin, parts, spec)

    async def show_terminal(self, call: ShowsTerminal, terminal: ShownTerminal) -> None:
        """The terminal is the agent's: ``call`` shows it at once, under its own id."""
        await call.append(schema.Terminal(terminal_id=terminal.id))

    async def read_text_file(
        self, parts: HandleParts, path: str, line: int | None, limit: int | None
    ) -> str:
        """:raises ClientCapabilityError: always (this client serves no files)."""
        raise _no_files("fs.readTextFile")

    async def write_text_file(self, parts: HandleParts, path: str, content: str) -> None:
        """:raises ClientCapabilityError: always (this client serves no files)."""
        raise _no_files("fs.writeTextFile")


def _no_files(what: str) -> ClientCapabilityError:
    return ClientCapabilityError(f"{what} is a v1 client service; this connection speaks ACP v2")


#: The host of every session whose client runs no terminals.
AGENT_HOST: Final = AgentHost()


#: A session's channel as its handles get it: with who runs its commands (``host``).
HandleParts: TypeAlias = "SessionChannel[CommandHost]"
