"""Sessions: what agent code reports through, as a thin facade over the session's core.

How this works: a session's core is two collaborators, created together by
:func:`create_session` and held in its :class:`SessionCore`:

* the update path (:class:`~acpio._session.updates.UpdatePath`): every update the
  session sends (admission after idle, holding during setup and replay,
  terminal bytes first, history, framing);
* the turn runner (:class:`~acpio._session.turn.Turns`): prompts, queueing,
  cancellation and the ``running``/``requires_action``/``idle`` state.

Everything above the core talks to it through the session's
:class:`~acpio._session.channel.SessionChannel`: the :class:`Session` facade
sends, streams, asks, replays and closes through it, and so do the handles and
features it creates (they get it as :class:`~acpio._handles.host.HandleParts`,
the channel with who runs the session's commands; tool calls and terminals keep a registry,
:class:`~acpio._handles.tool_call.SessionHandles`). The agent server drives a
session through its :class:`SessionCore` (prompts, cancel, setup holding,
resume); agent code sees only :class:`Session`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Final, TypeVarTuple

import anyio
import anyio.abc
from msgspec import UNSET

from .. import schema
from .._errors import LibraryCreated
from .._features.commands import CommandInvocation, parse_command, validate_commands
from .._features.config import ConfigState, SessionConfig
from .._features.elicitation import ElicitationResult, complete_elicitation, elicit, elicit_url
from .._handles import file_read as _file_read
from .._handles.host import HandleParts
from .._handles.terminal import TerminalHandle
from .._handles.tool_call import SessionHandles, ToolCallHandle
from .._limits import SessionLimits
from .._protocol.ids import new_id
from .._protocol.paths import require_absolute
from .._protocol.peer import Peer
from .._protocol.values import check_frame, check_update, require_value
from .._session.channel import SessionChannel
from .._session.turn import Turns
from .._session.updates import ClientConnection, UpdatePath
from .._store.history import History
from .._wire.v2 import V2_WIRE
from .._wire.wire import Wire
from .durable import DurableState

__all__ = [
    "MessageStream",
    "Session",
    "SessionCore",
    "StopReason",
    "create_session",
]

logger = logging.getLogger(__name__)

StopReason = str

_PosArgsT = TypeVarTuple("_PosArgsT")

PromptHandler = Callable[["Session", list[schema.ContentBlock]], Awaitable[object]]

#: Where the text of a one-text-block message chunk is (see check_frame below).
_TEXT: Final = ("content", "text")


class SessionCore:
    """The library's side of one session: its parts, handles, config and commands.

    The agent server drives the session through it (prompts, cancel, setup
    holding, resume); :attr:`session` is the agent author's facade over it.
    """

    __slots__ = (
        "_prompt_handler",
        "channel",
        "commands",
        "config",
        "durable",
        "handles",
        "history",
        "session",
        "task_group",
        "turns",
        "updates",
    )

    session: Session

    def __init__(
        self,
        channel: HandleParts,
        *,
        updates: UpdatePath,
        turns: Turns,
        task_group: anyio.abc.TaskGroup,
        history: History,
        prompt_handler: PromptHandler,
    ) -> None:
        self.channel: Final = channel
        self._prompt_handler: Final = prompt_handler
        self.turns: Final = turns
        self.updates: Final = updates
        self.task_group: Final = task_group
        self.history: Final = history
        self.handles: Final = SessionHandles(channel.session_id)
        self.config: Final = ConfigState(channel)
        self.durable: Final = DurableState(self.config)
        #: The advertised commands (a tuple: replaced whole, never changed in place).
        self.commands: tuple[schema.AvailableCommand, ...] = ()
        # The first thing a close does once the work ended: stop the terminals' processes.
        channel.close_step = self

    def session_closed(self) -> None:
        """The session closed (its work ended): stop its terminals' processes."""
        for terminal in self.handles.terminals.values():
            terminal.request_cancel()

    def setup_features(
        self,
        config_options: Sequence[schema.SessionConfigOption],
        commands: Sequence[schema.AvailableCommand],
    ) -> None:
        """Give a fresh session the agent's declared config options and commands.

        :raises LocalProtocolError: when either is invalid.
        """
        self.config.reset(config_options)
        validate_commands(commands)
        self.commands = tuple(commands)

    def run_prompt(self, prompt: list[schema.ContentBlock]) -> Awaitable[object]:
        """Run the agent's prompt handler on :attr:`session` (the session's turns call it)."""
        return self._prompt_handler(self.session, prompt)

    async def resume(self, *, replay: bool) -> None:
        """Send the history (``replay``) and then the current state, before the response."""
        await self.channel.replay(self.history.replay() if replay else None)


def create_session(
    session_id: str,
    cwd: str,
    *,
    connection: ClientConnection,
    task_group: anyio.abc.TaskGroup,
    history: History,
    prompt_handler: PromptHandler,
    additional_directories: Sequence[str] = (),
    mcp_servers: Sequence[schema.McpServer] = (),
    limits: SessionLimits | None = None,
    peer: Peer | None = None,
    wire: Wire = V2_WIRE,
) -> SessionCore:
    """A new session and its parts; ``prompt_handler(session, prompt)`` runs each turn.

    ``wire`` is the connection's negotiated version: it gives the session's
    encoding and who runs its commands.

    :raises LocalProtocolError: for a relative ``cwd``.
    """
    cwd = require_absolute(cwd, "cwd")
    peer = peer if peer is not None else Peer()
    updates = UpdatePath(
        session_id,
        encoding=wire.encoding(session_id, peer),
        connection=connection,
        history=history,
        task_group=task_group,
    )
    turns = Turns(
        session_id,
        updates=updates,
        task_group=task_group,
        limits=limits or SessionLimits(),
        runner=_NOT_YET_RUNNING,
    )
    channel: HandleParts = SessionChannel(
        session_id,
        cwd,
        peer,
        updates=updates,
        turns=turns,
        task_group=task_group,
        host=wire.host(peer),
    )
    core = SessionCore(
        channel,
        updates=updates,
        turns=turns,
        task_group=task_group,
        history=history,
        prompt_handler=prompt_handler,
    )
    session = core.session = object.__new__(Session)
    Session.__init__(session, core)
    session.additional_directories = list(additional_directories)
    session.mcp_servers = list(mcp_servers)
    turns.runner = core
    return core


class _NotYetRunning:
    """The runner of a session's turns until its core exists (never called)."""

    def run_prompt(self, prompt: list[schema.ContentBlock]) -> Awaitable[object]:
        raise AssertionError("a session's turns run only once the session exists")


_NOT_YET_RUNNING: Final = _NotYetRunning()


class Session(metaclass=LibraryCreated):
    """One ACP session: its working directory, its updates and its foreground work.

    Agent code receives the session in :meth:`acpio.Agent.prompt` and reports
    through it: messages and thoughts (:meth:`message`, :meth:`thought`, and
    streamed in chunks with :meth:`message_stream`, :meth:`thought_stream`),
    plans, notices, usage, tool calls (:meth:`tool_call`) and terminals
    (:meth:`terminal`). Updates reach the client in exactly the order they
    were sent, and each is recorded in :attr:`history` so that
    ``session/resume`` can replay the conversation.

    Prompts: each accepted prompt is answered with its ``messageId`` at once,
    followed by its ``user_message``; its turn then reports ``running``, runs
    :meth:`acpio.Agent.prompt` and ends with exactly one ``idle`` carrying
    the stop reason. A prompt sent while a turn runs is accepted and queued
    the same way (its ``user_message`` goes out at once) and runs after the
    current turn's idle. ``session/cancel`` cancels the running turn (one
    ``idle`` with ``cancelled``, nothing of that turn after it) and discards
    queued prompts.

    Config options (:attr:`config`, a :class:`~acpio.SessionConfig`), slash
    commands (:attr:`commands`, :meth:`set_commands`, :meth:`parse_command`)
    and questions to the user (:meth:`elicit`, :meth:`elicit_url`). What the
    session sends while ``session/new`` or ``session/resume`` is answered goes
    out right after the answer, in order.

    On a v1 connection the same turns are projected onto v1 (see ``docs/v1.md``):
    each ``session/prompt`` is answered at the end of its own turn with its stop
    reason, and updates take their v1 form; agent code does not change.

    Sessions are created by acpio (an agent receives them); calling
    ``Session(...)`` raises :class:`TypeError`.
    """

    additional_directories: list[str]
    mcp_servers: list[schema.McpServer]

    def __init__(self, core: SessionCore, /) -> None:
        channel = core.channel
        self._core: Final = core
        self._turns: Final = core.turns
        self._channel: Final = channel
        self.id: Final = channel.session_id
        self.cwd: Final = channel.cwd
        self.additional_directories = []
        self.mcp_servers = []
        self.remembered_permissions: dict[str, str] = {}
        self.config: Final = SessionConfig(core.config)

    def __repr__(self) -> str:
        return f"<Session {self.id} cwd={self.cwd!r} state={self.state!r}>"

    # ------------------------------------------------------------------ state

    @property
    def limits(self) -> SessionLimits:
        """This session's :class:`~acpio.SessionLimits`."""
        return self._turns.limits

    @limits.setter
    def limits(self, limits: SessionLimits) -> None:
        self._turns.limits = limits

    @property
    def state(self) -> str:
        """``"idle"``, ``"running"`` or ``"requires_action"``, as last reported to the client."""
        return self._turns.reported_state.value

    @property
    def closed(self) -> bool:
        """True once ``session/close`` began; a closed session refuses prompts."""
        return self._turns.closed

    @property
    def busy(self) -> bool:
        """True while foreground work runs or accepted prompts wait to run."""
        return self._turns.busy

    @property
    def history(self) -> History:
        """What the session has reported, as replayed by ``session/resume``."""
        return self._core.history

    # ------------------------------------------------------ durable agent state

    @property
    def agent_state(self) -> object | None:
        """The state the agent saved last for this session (:meth:`save_agent_state`), or ``None``.

        It is the JSON value of what was saved (dicts, lists, str, int, float,
        bool, ``None``: a Struct comes back as a dict, a tuple as a list), the
        same in this process and in a new one: a session reopened
        (``session/resume``, v1 ``session/load``) has it restored, and migrated
        by :meth:`acpio.Agent.migrate_agent_state` when it was saved with another
        :attr:`acpio.Agent.agent_state_version`, before
        :meth:`acpio.Agent.on_resume_session` runs. Changing the object returned
        saves nothing: call :meth:`save_agent_state`.
        """
        return self._core.durable.value

    async def save_agent_state(self, value: object) -> None:
        """Replace the session's durable agent state with ``value``, kept by the session store.

        ``value`` must be JSON-encodable by msgspec (dicts with str keys, lists,
        str, int, float, bool, ``None``, msgspec Structs) and at most
        ``limits.max_agent_state_bytes`` (16 MiB) encoded. The store keeps it
        with the session's history: never blocking the event loop, durable by
        the end of the turn in which it was saved (and when the session is
        closed), given back in :attr:`agent_state` when the session is reopened
        in a new process.

        :raises AgentStateError: for a value that cannot be encoded or is too
            large; nothing is saved then.
        """
        await self._core.durable.save_agent_state(value, self._turns.limits.max_agent_state_bytes)

    # ---------------------------------------------------------------- sending

    async def send(self, update: schema.SessionUpdate) -> None:
        """Send one session update, in order, after any buffered terminal bytes.

        Every enum value in it (kinds, statuses, plan priorities, ...) is
        checked first: a known one or a ``_``-prefixed one. The update is
        recorded in the history. Updates from foreground work that was already
        reported idle (for example cancelled work that ignored cancellation)
        are dropped, and so is everything sent after the session was closed.

        :raises LocalProtocolError: for a value the protocol does not allow,
            before anything is sent.
        """
        check_update(update)
        send = self._channel.send  # (see _session/channel.py: bound once)
        await send(update)

    # -------------------------------------------------------- output helpers

    async def message(
        self, content: str | schema.ContentBlock | Sequence[schema.ContentBlock]
    ) -> str:
        """Send a whole agent message (``agent_message``); returns its ``messageId``."""
        message_id = new_id("msg")
        await self.send(schema.AgentMessage(message_id=message_id, content=_blocks(content)))
        return message_id

    async def thought(
        self, content: str | schema.ContentBlock | Sequence[schema.ContentBlock]
    ) -> str:
        """Send a whole agent thought (``agent_thought``); returns its ``messageId``."""
        message_id = new_id("thought")
        await self.send(schema.AgentThought(message_id=message_id, content=_blocks(content)))
        return message_id

    def message_stream(self, message_id: str | None = None) -> MessageStream:
        """A streamed agent message: each :meth:`MessageStream.write` sends one chunk.

        Every chunk carries the same ``messageId`` (fresh unless given), so
        the client shows one growing message.
        """
        return _message_stream(self, message_id or new_id("msg"), thought=False)

    def thought_stream(self, message_id: str | None = None) -> MessageStream:
        """A streamed agent thought: each :meth:`MessageStream.write` sends one chunk."""
        return _message_stream(self, message_id or new_id("thought"), thought=True)

    async def plan(self, entries: Sequence[schema.PlanEntry], *, plan_id: str = "plan") -> None:
        """Send the complete plan (``plan_update``): the entries replace that plan's entries."""
        await self.send(
            schema.PlanUpdate(plan=schema.PlanItems(plan_id=plan_id, entries=list(entries)))
        )

    async def notice(
        self, title: str, *, severity: str = "info", description: str | None = None
    ) -> None:
        """Send a notice (``info``, ``warning``, ``error``, or a ``_``-prefixed severity).

        Notices are live events, not conversation history: they are not replayed.

        :raises LocalProtocolError: for a severity that is neither known nor ``_``-prefixed.
        """
        require_value(severity, schema.KNOWN_NOTICE_SEVERITY, "notice severity")
        await self.send(
            schema.Notice(
                severity=severity,
                title=title,
                description=UNSET if description is None else description,
            )
        )

    async def usage(self, used: int, size: int, *, cost: schema.Cost | None = None) -> None:
        """Report context window usage (tokens used out of ``size``) and optional cost."""
        await self.send(
            schema.UsageUpdate(used=used, size=size, cost=UNSET if cost is None else cost)
        )

    def tool_call(
        self,
        title: str,
        *,
        kind: str | None = None,
        status: str = "pending",
        tool_call_id: str | None = None,
        name: str | None = None,
        raw_input: object = UNSET,
        locations: Sequence[schema.ToolCallLocation | str] | None = None,
        content: Sequence[schema.ToolCallContent] | None = None,
        cancellable: bool = False,
        meta: dict[str, object] | None = None,
    ) -> ToolCallHandle:
        """Create a tool call; ``await`` it or use ``async with`` to report it.

        The first ``tool_call_update`` carries the title and the status
        (``pending`` unless given) and a fresh unique ``toolCallId`` unless one
        is passed (an LLM's own tool-use id is the common case). Every id
        names one call for the whole session: to go on reporting an earlier
        call use :meth:`reattach_tool_call`.

        :raises LocalProtocolError: for an id already used in this session, a
            kind or status neither known nor ``_``-prefixed, or a relative path.
        """
        handles = self._core.handles
        if tool_call_id is not None:
            handles.refuse_reused_tool_call_id(tool_call_id)
        handle = object.__new__(ToolCallHandle)
        ToolCallHandle.__init__(
            handle,
            self._channel,
            handles,
            self,
            tool_call_id or new_id("call"),
            title=title,
            kind=kind,
            status=status,
            name=name,
            raw_input=raw_input,
            locations=locations,
            content=content,
            cancellable=cancellable,
            meta=meta,
        )
        return handle

    def terminal(
        self,
        *,
        command: str | None = None,
        cwd: str | None = None,
        terminal_id: str | None = None,
        size: tuple[int, int] | None = None,
        cancellable: bool = False,
    ) -> TerminalHandle:
        """Create a display-only terminal not attached to a tool call; ``await`` it to announce."""
        handle = object.__new__(TerminalHandle)
        TerminalHandle.__init__(
            handle,
            self._channel,
            self._core.handles.register_terminal,
            self,
            terminal_id or new_id("term"),
            command=command,
            cwd=cwd if cwd is not None else self.cwd,
            size=size,
            cancellable=cancellable,
        )
        return handle

    # ------------------------------------------------- the client's services

    async def read_file(
        self,
        path: str | os.PathLike[str],
        *,
        allow_outside: Sequence[str | os.PathLike[str]] = (),
        max_bytes: int = _file_read.DEFAULT_MAX_READ_BYTES,
    ) -> str:
        """Read a text file safely: through the editor when it offers ``fs.readTextFile``
        (the agent sees unsaved changes), from disk otherwise.

        A relative ``path`` is relative to the session's ``cwd``. As for
        :meth:`acpio.ToolCallHandle.propose_edit`, the real path (symlinks and
        ``..`` resolved) must lie inside the session's ``cwd``,
        ``additional_directories`` or a directory of ``allow_outside``, and be a
        regular file of at most ``max_bytes`` (8 MiB by default); only the editor
        may answer for a file that exists in it alone (an unsaved buffer). Bytes
        read from disk are decoded as UTF-8 (undecodable bytes replaced).

        :raises ReadRefused: with one sentence for a person naming the path and
            why: outside the directories, not a regular file, too large, missing,
            unreadable, or the editor's refusal (its message and code) or silence.
        """
        roots = (self.cwd, *self.additional_directories, *(os.fspath(p) for p in allow_outside))
        return await _file_read.read_file(self._channel, self.cwd, roots, path, max_bytes=max_bytes)

    async def read_text_file(
        self, path: str, line: int | None = None, limit: int | None = None
    ) -> str:
        """Read a text file through the editor (v1 ``fs/read_text_file``), unsaved changes included.

        ``line`` (1-based) and ``limit`` (lines) select a part of the file.

        :raises ClientCapabilityError: when the client did not advertise
            ``fs.readTextFile``, and on v2 connections; nothing is sent.
        :raises RequestError: when the client answers with an error.
        """
        channel = self._channel
        return await channel.host.read_text_file(channel, path, line, limit)

    async def write_text_file(self, path: str, content: str) -> None:
        """Write a text file through the editor (v1 ``fs/write_text_file``).

        :raises ClientCapabilityError: when the client did not advertise
            ``fs.writeTextFile``, and on v2 connections; nothing is sent.
        :raises RequestError: when the client answers with an error.
        """
        channel = self._channel
        await channel.host.write_text_file(channel, path, content)

    # ----------------------------------------------------- registry of handles

    def tool_call_handle(self, tool_call_id: str) -> ToolCallHandle | None:
        """The handle of a tool call of this session, if any."""
        return self._core.handles.tool_calls.get(tool_call_id)

    def reattach_tool_call(self, tool_call_id: str) -> ToolCallHandle:
        """The existing handle of a tool call already reported in this session.

        The explicit way to go on reporting a call (say, from a later turn):
        :meth:`tool_call` refuses an id that was used before, since reporting
        it again would reopen the call on the client. A final status stays
        final on the returned handle.

        :raises LocalProtocolError: when no call with this id was reported.
        """
        return self._core.handles.reattach(tool_call_id)

    def terminal_handle(self, terminal_id: str) -> TerminalHandle | None:
        """The handle of a terminal of this session, if any."""
        return self._core.handles.terminals.get(terminal_id)

    # ---------------------------------------------------------------- commands

    @property
    def commands(self) -> list[schema.AvailableCommand]:
        """The slash commands currently advertised in this session (a copy)."""
        return list(self._core.commands)

    async def set_commands(self, commands: Sequence[schema.AvailableCommand]) -> None:
        """Replace the session's slash commands (``available_commands_update``).

        During session setup nothing extra is sent: the answer carries the list.

        :raises LocalProtocolError: for a repeated or invalid command name.
        """
        validate_commands(commands)
        self._core.commands = tuple(commands)
        if not self._channel.in_setup:
            await self.send(schema.AvailableCommandsUpdate(available_commands=list(commands)))

    def parse_command(self, prompt: Sequence[schema.ContentBlock]) -> CommandInvocation | None:
        """The advertised command ``prompt`` invokes (``/name input``), if any."""
        return parse_command(prompt, self._core.commands)

    # ------------------------------------------------------------ elicitation

    def can_elicit(self, mode: str = "form") -> bool:
        """Whether the client advertised elicitation in ``mode`` (``"form"`` or ``"url"``)."""
        peer = self._channel.peer
        return peer.elicitation_url if mode == "url" else peer.elicitation_form

    async def elicit(
        self,
        message: str,
        requested_schema: schema.ElicitationSchema | Mapping[str, object],
        *,
        tool_call: ToolCallHandle | str | None = None,
    ) -> ElicitationResult:
        """Ask the user to fill a form (``elicitation/create``, form mode); returns the answer.

        ``requested_schema`` is an :class:`~acpio.schema.ElicitationSchema` or
        the same as JSON (``{"type": "object", "properties": {...},
        "required": [...]}``, primitive properties only). The request is scoped
        to this session and, with ``tool_call``, to one of its tool calls.
        While it is pending the session reports ``requires_action``, then
        ``running``. The answer is ``accepted`` (``result.content`` holds the
        values, checked against the schema), ``declined`` or ``dismissed``.
        When the work is cancelled meanwhile, ``$/cancel_request`` is sent and
        the cancellation propagates: an enclosing ``async with
        session.tool_call(...)`` ends ``cancelled``, the turn ``cancelled``.

        :raises ElicitationUnsupported: when the client did not advertise form
            elicitation (nothing is sent).
        :raises LocalProtocolError: for a schema that is not an elicitation schema
            (or requires a field it does not define); nothing is sent.
        :raises RemoteProtocolError: when accepted values do not match the schema.
        :raises ConnectionClosed: when the client went away (before or while asking).
        """
        return await elicit(self._channel, message, requested_schema, tool_call=tool_call)

    async def elicit_url(
        self,
        message: str,
        url: str,
        *,
        elicitation_id: str | None = None,
        tool_call: ToolCallHandle | str | None = None,
    ) -> ElicitationResult:
        """Ask the user to open ``url`` (``elicitation/create``, URL mode); returns the answer.

        ``accepted`` means only that the user agreed to open it; once the
        out-of-band interaction is done, call :meth:`complete_elicitation`
        with ``result.elicitation_id`` (fresh unless given). Pending,
        cancellation and refusal behave as in :meth:`elicit`.

        :raises ElicitationUnsupported: when the client did not advertise URL elicitation.
        """
        return await elicit_url(
            self._channel,
            message,
            url,
            elicitation_id=elicitation_id,
            tool_call=tool_call,
        )

    async def complete_elicitation(self, elicitation_id: str) -> None:
        """Tell the client a URL elicitation's interaction finished (``elicitation/complete``)."""
        await complete_elicitation(self._channel, elicitation_id)

    # ---------------------------------------------------------- cancel and close

    async def cancel(self) -> None:
        """Cancel the foreground work and discard queued prompts (``session/cancel``).

        Returns at once. The work's exceptions from cancellation are caught;
        after its pending updates it reports one ``idle`` with
        ``stopReason: "cancelled"`` and nothing after it. Work that ignores
        cancellation for ``limits.cancel_grace`` seconds is abandoned: the idle
        goes out then, and whatever it sends later is dropped.
        """
        self._turns.cancel()

    async def wait_idle(self) -> None:
        """Wait until no foreground work runs and no accepted prompt waits to run."""
        await self._turns.wait_idle()

    async def close(self) -> None:
        """Cancel the work as ``session/cancel`` would, wait for its idle, then go silent.

        Prompts are refused from the start; once the work reported idle (or
        the grace period passed), background terminal processes are stopped
        and nothing more is sent for this session. Calling it again waits for
        the first close to finish.
        """
        await self._channel.close()

    def start_soon(
        self, func: Callable[[*_PosArgsT], Awaitable[object]], *args: *_PosArgsT
    ) -> None:
        """Run ``await func(*args)`` in the background for as long as the session lives.

        The task belongs to the session, not to the turn: a cancelled or
        finished turn leaves it running. It is cancelled when the session
        closes (after the close callbacks ran) or the connection shuts down.
        An exception it raises is logged and ends only that task.

        :raises LocalProtocolError: when the session is closed.
        """
        self._channel.start_soon(func, *args)

    def add_close_callback(self, callback: Callable[[], object]) -> None:
        """Call ``callback()`` once when the session closes, to release what lives as long as it.

        Callbacks run in the order they were added, synchronously, once the
        session's work ended and before its background tasks
        (:meth:`start_soon`) are cancelled; one that raises is logged and the
        others still run.

        :raises LocalProtocolError: when the session is closed.
        """
        self._channel.add_close_callback(callback)


# The updates MessageStream.write(str) sends as pre-encoded lines, the text spliced in:
# proven to hold no enum value whatever the text (v1 lines are these without messageId).
check_frame(schema.AgentMessageChunk(message_id="", content=schema.TextContent(text="")), _TEXT)
check_frame(schema.AgentThoughtChunk(message_id="", content=schema.TextContent(text="")), _TEXT)


class MessageStream(metaclass=LibraryCreated):
    """An agent message or thought streamed in chunks that share one ``messageId``.

    Created by :meth:`Session.message_stream` and :meth:`Session.thought_stream`;
    calling ``MessageStream(...)`` raises :class:`TypeError`.
    """

    def __init__(self, session: Session, message_id: str, *, thought: bool) -> None:
        self._session = session
        self.message_id: Final = message_id
        self._thought = thought
        channel = session._channel  # pyright: ignore[reportPrivateUsage]
        self._channel: Final = channel
        # The line of a text chunk up to its text, encoded once for the session's connection.
        self._line_prefix: Final = channel.message_text_prefix(message_id, thought=thought)

    async def write(self, content: str | schema.ContentBlock) -> None:
        """Send one chunk (``agent_message_chunk`` or ``agent_thought_chunk``) of the message.

        A str is sent as one text block: the line is pre-encoded up to the
        text and, when nothing has to be waited for, sent without an ``await``
        (the same admission, order and history as :meth:`Session.send`; the
        shape of such a chunk is proven free of enum values once). On v1 it is one
        ``agent_message_chunk`` line, as the client shows it.
        """
        if isinstance(content, str):
            channel = self._channel
            try_send = channel.try_send_message_text  # (see _session/channel.py: bound once)
            if try_send(self._line_prefix, self.message_id, content, self._thought):
                return
            send = channel.send_message_text
            await send(self._line_prefix, self.message_id, content, self._thought)
            return
        chunk: schema.SessionUpdate
        if self._thought:
            chunk = schema.AgentThoughtChunk(message_id=self.message_id, content=content)
        else:
            chunk = schema.AgentMessageChunk(message_id=self.message_id, content=content)
        await self._session.send(chunk)


def _message_stream(session: Session, message_id: str, *, thought: bool) -> MessageStream:
    stream = object.__new__(MessageStream)
    MessageStream.__init__(stream, session, message_id, thought=thought)
    return stream


def _blocks(
    content: str | schema.ContentBlock | Sequence[schema.ContentBlock],
) -> list[schema.ContentBlock]:
    if isinstance(content, str):
        return [schema.TextContent(text=content)]
    if isinstance(content, list | tuple):
        return list(content)
    return [content]  # type: ignore[list-item]
