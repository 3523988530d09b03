"""Sessions: what agent code reports through, and the order updates reach the client.

How this works: every update of a session goes through :meth:`Session.send`,
which (1) flushes terminal bytes still buffered, so nothing overtakes them,
(2) drops updates from foreground work that was already reported idle, so a
cancelled turn never speaks after its ``cancelled`` idle, (3) records the
update in the session's history for replay, and (4) queues the encoded
notification on the connection's single ordered writer. Sending is the one
place where an update becomes wire bytes, in the encoding of the session's
:class:`~acpio._framing.SessionFraming` (chosen per connection at
``initialize``): on v2 the precomputed envelope prefix, the encoded update and
:data:`~acpio._framing.UPDATE_END`; on v1 the lines its
:class:`~acpio._v1_projection.V1Projection` makes of the update (possibly
none). Agent code never sees the difference.

The prompt lifecycle (accepting prompts, the runner task, ``running`` and
``idle``, cancellation) lives in :mod:`acpio._lifecycle`, a base class of
:class:`Session`; this module adds the output helpers, the registry of tool
call and terminal handles, closing and resuming.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Final, TypeVar

import anyio
import anyio.abc
import msgspec
from msgspec import UNSET

from . import _client_services, schema
from ._config import SessionConfig
from ._errors import LocalProtocolError
from ._framing import TEXT_CHUNK_END, UPDATE_END, session_framing, terminal_chunk_line
from ._history import InMemoryHistory
from ._ids import new_id
from ._lifecycle import _PromptLifecycle
from ._limits import SessionLimits
from ._paths import require_absolute
from ._peer import Peer
from ._session_features import _SessionFeatures
from ._terminal import TerminalHandle
from ._tool_call import ToolCallHandle
from ._values import check_values, require_value
from ._work import _current_work, _Work
from .schema._codec import _encoder

if TYPE_CHECKING:
    from ._connection import Connection
    from ._history import History

T = TypeVar("T")

__all__ = ["MessageStream", "Session", "StopReason"]

logger = logging.getLogger(__name__)

StopReason = str
_encode = _encoder.encode  # the bound C method: one Python call less per update


def _text_chunk_recorder(history: History) -> Callable[[str, str], None]:
    """How a session records a text chunk: directly when the history folds text chunks
    itself (the in-memory history, or a subclass that overrides both ``record`` and
    ``record_text_chunk``), else as an update."""
    if isinstance(history, InMemoryHistory):
        cls = type(history)
        if (
            cls.record is InMemoryHistory.record
            or cls.record_text_chunk is not InMemoryHistory.record_text_chunk
        ):
            return history.record_text_chunk

    def record(tool_call_id: str, text: str) -> None:
        history.record(
            schema.ToolCallContentChunk(
                tool_call_id=tool_call_id,
                content=schema.Content(content=schema.TextContent(text=text)),
            )
        )

    return record


PromptHandler = Callable[["Session", list[schema.ContentBlock]], Awaitable[object]]


class Session(_PromptLifecycle, _SessionFeatures):
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
    and questions to the user (:meth:`elicit`, :meth:`elicit_url`) come from
    :mod:`acpio._session_features`. What the session sends while
    ``session/new`` or ``session/resume`` is answered goes out right after the
    answer, in order.

    On a v1 connection the same turns are projected onto v1 (see ``docs/v1.md``):
    each ``session/prompt`` is answered at the end of its own turn with its stop
    reason, and updates take their v1 form; agent code does not change.
    """

    def __init__(
        self,
        session_id: str,
        cwd: str,
        *,
        connection: Connection,
        task_group: anyio.abc.TaskGroup,
        history: History,
        prompt_handler: PromptHandler,
        additional_directories: Sequence[str] = (),
        mcp_servers: Sequence[schema.McpServer] = (),
        limits: SessionLimits | None = None,
        peer: Peer | None = None,
    ) -> None:
        self.id: Final = session_id
        self.cwd: Final = require_absolute(cwd, "cwd")
        self.additional_directories: list[str] = list(additional_directories)
        self.mcp_servers: list[schema.McpServer] = list(mcp_servers)
        self.limits = limits or SessionLimits()
        self._peer = peer if peer is not None else Peer()
        self.protocol_version: Final = self._peer.protocol_version
        self._connection = connection
        self._task_group = task_group
        self._history = history
        self._prompt_handler = prompt_handler
        # How updates become lines: on v2 every update is this prefix, the encoded
        # update and UPDATE_END; on v1 the projection decides (see _framing).
        self._framing = session_framing(self._peer, session_id)
        self._prefix = self._framing.prefix
        self._v1 = self._framing.projection is not None
        self._v1_timer = False
        self._send_line = connection.line_sender
        self._try_send_line = connection.line_try_sender
        self._record = history.record
        self._record_text_chunk = _text_chunk_recorder(history)
        self._accepted: deque[_Work] = deque()  # user_message not sent yet
        self._queue: deque[_Work] = deque()  # waiting behind the current work
        self._work: _Work | None = None
        self._cancelled_through = 0
        self._runner_active = False
        self._wake: anyio.Event | None = None
        self._idle_event: anyio.Event | None = None
        self._state = "idle"  # the state the session is in (its update may be on its way)
        self._reported_state = "idle"  # the last state update queued for the client
        self._pending_permissions = 0
        self._dirty_terminals: list[TerminalHandle] = []
        self._tool_calls: dict[str, ToolCallHandle] = {}
        self._terminals: dict[str, TerminalHandle] = {}
        self._closed = False
        self._close_done: anyio.Event | None = None
        self._released = False
        self._replay_gate: anyio.Event | None = None
        # One flag on the hot path for the two rare reasons to hold an update back.
        self._held = False
        self.remembered_permissions: dict[str, str] = {}
        # Config options, slash commands and setup holding: see _session_features.
        self.config = SessionConfig(self)
        self._commands: list[schema.AvailableCommand] = []
        self._setup_lines: list[bytes] | None = None
        # Resources that live as long as the session (acpio.mcp's connections).
        self._on_close: list[Callable[[], None]] = []

    def __repr__(self) -> str:
        return f"<Session {self.id} cwd={self.cwd!r} state={self._reported_state!r}>"

    # ------------------------------------------------------------------ state

    @property
    def state(self) -> str:
        """``"idle"``, ``"running"`` or ``"requires_action"``, as last reported to the client."""
        return self._reported_state

    @property
    def closed(self) -> bool:
        """True once ``session/close`` began; a closed session refuses prompts."""
        return self._closed

    @property
    def busy(self) -> bool:
        """True while foreground work runs or accepted prompts wait to run."""
        return self._work is not None or bool(self._accepted) or bool(self._queue)

    @property
    def history(self) -> History:
        """What the session has reported, as replayed by ``session/resume``."""
        return self._history

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
        check_values(update)
        await self._send(update)

    async def _send(self, update: schema.SessionUpdate) -> None:
        """:meth:`send` of an update acpio built or relays (no value checks)."""
        admitted = self._admit_now()
        if admitted is None:
            admitted = await self._admit()
        if admitted:
            self._record(update)
            if self._v1:
                await self._send_v1(update)
            else:
                await self._send_line(self._prefix + _encode(update) + UPDATE_END)

    def _try_send(self, update: schema.SessionUpdate) -> bool:
        """:meth:`send` when it would not wait (no terminal bytes buffered, no replay,
        room in the buffer); False when nothing was sent and :meth:`send` is needed."""
        admitted = self._admit_now()
        if admitted:
            if self._v1:
                if not isinstance(
                    update, schema.RunningStateUpdate | schema.RequiresActionStateUpdate
                ):
                    return False  # other updates may make lines: the waiting path sends them
                self._record(update)
                return True  # no v1 form: nothing to send
            if not self._try_send_line(self._prefix + _encode(update) + UPDATE_END):
                return False
            self._record(update)
        return admitted is not None

    def _try_send_text_chunk(self, tool_call_id: str, line_prefix: bytes, text: str) -> bool:
        """:meth:`_send_text_chunk` when it would not wait; False when nothing was done."""
        # _admit_now() written out: this runs for every streamed text chunk.
        if self._dirty_terminals or self._held or self._v1:
            return False
        work = _current_work.get()
        if work is not None and work.finished:
            self._drop_finished()
            return True  # dropped, as send() drops it
        if not self._try_send_line(line_prefix + _encode(text) + TEXT_CHUNK_END):
            return False
        self._record_text_chunk(tool_call_id, text)
        return True

    async def _send_text_chunk(self, tool_call_id: str, line_prefix: bytes, text: str) -> None:
        """:meth:`send` of a one-text-item ``tool_call_content_chunk`` (the streaming path).

        ``line_prefix`` is the encoded line up to the text (see
        :meth:`ToolCallHandle.append_text`); the same checks and history record
        as :meth:`send`, without building the update.
        """
        if self._v1:
            await self._send_v1_text_chunk(tool_call_id, text)
            return
        admitted = self._admit_now()
        if admitted is None:
            admitted = await self._admit()
        if admitted:
            self._record_text_chunk(tool_call_id, text)
            await self._send_line(line_prefix + _encode(text) + TEXT_CHUNK_END)

    def _admit_now(self) -> bool | None:
        """Whether an update may be sent, if that is known without waiting.

        None while terminal bytes are buffered or a replay holds updates back
        (then :meth:`_admit` decides); False for an update of foreground work
        already reported idle, which is dropped; True otherwise.
        """
        if self._dirty_terminals or self._held:
            return None
        work = _current_work.get()
        return work is None or not work.finished or self._drop_finished()

    async def _admit(self) -> bool:
        """Flush buffered terminal bytes and wait out a replay; then as :meth:`_admit_now`."""
        if self._dirty_terminals:
            await self._flush_terminals()
        if self._held and not await self._wait_held():
            return False
        work = _current_work.get()
        return work is None or not work.finished or self._drop_finished()

    def _drop_finished(self) -> bool:
        logger.debug("dropping an update of finished work in session %s", self.id)
        return False

    async def _send_encoded_line(self, line: bytes) -> None:
        """Send a whole ``session/update`` line already encoded (terminal bytes).

        No terminal flush and no history record: the caller records the bytes.
        """
        if self._held and not await self._wait_held():
            return
        await self._send_line(line)

    async def _send_terminal_bytes(self, terminal_id: str, line_prefix: bytes, data: bytes) -> None:
        """Send bytes of an agent-side terminal: one ``terminal_output_chunk`` line on v2.

        ``line_prefix`` is the terminal's :func:`~acpio._framing.terminal_chunk_prefix`.
        On v1 the projection shows them in the tool calls that show the terminal.
        No terminal flush and no history record: the caller records the bytes.
        """
        if not self._v1:
            await self._send_encoded_line(terminal_chunk_line(line_prefix, data))
            return
        if self._held and not await self._wait_held():
            return
        projection = self._framing.projection
        assert projection is not None
        updates = projection.terminal_output(terminal_id, data, now=anyio.current_time())
        for line in self._framing.v1_lines(updates):
            await self._send_line(line)
        self._v1_arm()

    async def _emit(self, update: schema.SessionUpdate) -> None:
        """Send an update as is: not recorded, not held back (replay and state snapshots)."""
        if self._v1:
            await self._send_v1(update, replay=True)
        else:
            await self._send_line(self._prefix + _encode(update) + UPDATE_END)

    # ------------------------------------------------------------- v1 encoding

    async def _send_v1_text_chunk(self, tool_call_id: str, text: str) -> None:
        """:meth:`_send_text_chunk` on v1: the projection takes the text as it is."""
        admitted = self._admit_now()
        if admitted is None:
            admitted = await self._admit()
        if not admitted:
            return
        self._record_text_chunk(tool_call_id, text)
        projection = self._framing.projection
        assert projection is not None
        for line in self._framing.v1_lines(projection.text_chunk(tool_call_id, text)):
            await self._send_line(line)

    async def _send_v1(self, update: schema.SessionUpdate, *, replay: bool = False) -> None:
        """Send the v1 lines the projection makes of ``update`` (possibly none)."""
        projection = self._framing.projection
        assert projection is not None
        updates = projection.project(update, now=anyio.current_time(), replay=replay)
        for line in self._framing.v1_lines(updates):
            await self._send_line(line)
        self._v1_arm()

    def _v1_arm(self) -> None:
        """Arm the timer of a rate-limited v1 terminal refresh, if one is due."""
        projection = self._framing.projection
        if self._v1_timer or self._released or projection is None:
            return
        due = projection.due()
        if due is not None:
            self._v1_timer = True
            self._task_group.start_soon(self._v1_refresh_later, due)

    async def _v1_refresh_later(self, due: float) -> None:
        try:
            await anyio.sleep(max(0.0, due - anyio.current_time()))
            self._v1_timer = False
            if self._held and not await self._wait_held():
                return
            projection = self._framing.projection
            assert projection is not None
            for line in self._framing.v1_lines(projection.flush_due(anyio.current_time())):
                await self._send_line(line)
        except Exception:
            logger.debug("v1 terminal refresh of session %s failed", self.id, exc_info=True)
        finally:
            self._v1_timer = False
        self._v1_arm()

    def _permission_params(self, params: schema.RequestPermissionRequest) -> object:
        """The ``session/request_permission`` params in the connection's version."""
        projection = self._framing.projection
        return params if projection is None else projection.permission_request(params)

    async def _client_request(
        self, method: str, params: object, decode: Callable[[msgspec.Raw], T]
    ) -> T:
        """Send a request to the client (``terminal/*``, ``fs/*``, ...) after pending output.

        Buffered terminal bytes are flushed first, so the request never
        overtakes output sent before it. ``params`` is sent as given: it must
        already have the shape of the connection's protocol version
        (:attr:`protocol_version`; on v1 see :mod:`acpio._v1_types`).

        :raises RequestError: for an error answer; :raises ConnectionClosed:
            when the connection ends first.
        """
        if self._dirty_terminals:
            await self._flush_terminals()
        return await self._connection.request(method, params, decode)

    async def _wait_held(self) -> bool:
        """Wait while a replay is being sent; False when the update must be dropped."""
        while not self._released:
            gate = self._replay_gate
            if gate is None:
                return True
            await gate.wait()
        return False

    def _update_held(self) -> None:
        self._held = self._released or self._replay_gate is not None

    def _work_cancel_requested(self) -> bool:
        work = _current_work.get()
        return work is not None and work.cancel_requested

    def _mark_terminal_dirty(self, terminal: TerminalHandle) -> None:
        self._dirty_terminals.append(terminal)

    async def _flush_terminals(self) -> None:
        # A fresh list: a terminal written to during the flush marks itself dirty again.
        dirty, self._dirty_terminals = self._dirty_terminals, []
        for terminal in dirty:
            await terminal.flush()

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
        return MessageStream(self, message_id or new_id("msg"), thought=False)

    def thought_stream(self, message_id: str | None = None) -> MessageStream:
        """A streamed agent thought: each :meth:`MessageStream.write` sends one chunk."""
        return MessageStream(self, message_id or new_id("thought"), thought=True)

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
        if tool_call_id is not None:
            self._refuse_reused_tool_call_id(tool_call_id)
        return ToolCallHandle(
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
        return TerminalHandle(
            self,
            terminal_id or new_id("term"),
            command=command,
            cwd=cwd if cwd is not None else self.cwd,
            size=size,
            cancellable=cancellable,
        )

    # ------------------------------------------------- the client's services

    async def read_text_file(
        self, path: str, line: int | None = None, limit: int | None = None
    ) -> str:
        """Read a text file through the editor (v1 ``fs/read_text_file``), unsaved changes included.

        ``line`` (1-based) and ``limit`` (lines) select a part of the file.

        :raises ClientCapabilityError: when the client did not advertise
            ``fs.readTextFile``, and on v2 connections; nothing is sent.
        :raises RequestError: when the client answers with an error.
        """
        return await _client_services.read_text_file(self, path, line, limit)

    async def write_text_file(self, path: str, content: str) -> None:
        """Write a text file through the editor (v1 ``fs/write_text_file``).

        :raises ClientCapabilityError: when the client did not advertise
            ``fs.writeTextFile``, and on v2 connections; nothing is sent.
        :raises RequestError: when the client answers with an error.
        """
        await _client_services.write_text_file(self, path, content)

    # ----------------------------------------------------- registry of handles

    def _refuse_reused_tool_call_id(
        self, tool_call_id: str, handle: ToolCallHandle | None = None
    ) -> None:
        existing = self._tool_calls.get(tool_call_id)
        if existing is not None and existing is not handle:
            # A finished call would silently reopen on the client (completed, then pending).
            raise LocalProtocolError(
                f"tool call id {tool_call_id!r} was already used in this session"
                + (f" (that call ended {existing.status})" if existing.final else "")
                + "; ids must not be reused: use a fresh id, or reattach_tool_call() "
                "to go on reporting the existing call"
            )

    def _register_tool_call(self, handle: ToolCallHandle) -> None:
        self._refuse_reused_tool_call_id(handle.id, handle)
        self._tool_calls[handle.id] = handle
        work = _current_work.get()
        if work is not None:
            work.tool_calls.append(handle)

    def _register_terminal(self, handle: TerminalHandle) -> None:
        if handle.id in self._terminals and self._terminals[handle.id] is not handle:
            raise LocalProtocolError(
                f"terminal id {handle.id!r} was already used in this session; "
                "ids must not be reused"
            )
        self._terminals[handle.id] = handle
        work = _current_work.get()
        if work is not None:
            work.terminals.append(handle)

    def tool_call_handle(self, tool_call_id: str) -> ToolCallHandle | None:
        """The handle of a tool call of this session, if any."""
        return self._tool_calls.get(tool_call_id)

    def reattach_tool_call(self, tool_call_id: str) -> ToolCallHandle:
        """The existing handle of a tool call already reported in this session.

        The explicit way to go on reporting a call (say, from a later turn):
        :meth:`tool_call` refuses an id that was used before, since reporting
        it again would reopen the call on the client. A final status stays
        final on the returned handle.

        :raises LocalProtocolError: when no call with this id was reported.
        """
        handle = self._tool_calls.get(tool_call_id)
        if handle is None:
            raise LocalProtocolError(f"no tool call {tool_call_id!r} in session {self.id}")
        return handle

    def terminal_handle(self, terminal_id: str) -> TerminalHandle | None:
        """The handle of a terminal of this session, if any."""
        return self._terminals.get(terminal_id)

    # ---------------------------------------------------------- cancel and close

    async def cancel(self) -> None:
        """Cancel the foreground work and discard queued prompts (``session/cancel``).

        Returns at once. The work's exceptions from cancellation are caught;
        after its pending updates it reports one ``idle`` with
        ``stopReason: "cancelled"`` and nothing after it. Work that ignores
        cancellation for ``limits.cancel_grace`` seconds is abandoned: the idle
        goes out then, and whatever it sends later is dropped.
        """
        for queued in self._queue:
            queued.discarded = True
            queued.ended.set()
        self._queue.clear()
        self._wakeup()  # a runner waiting to start the next queued turn goes on
        work = self._work
        if work is None or work.finished or work.cancel_requested:
            return
        work.cancel_requested = True
        work.scope.cancel()
        if work.outcome is not None:
            # Ended but not yet reported: the idle after a cancel says cancelled.
            work.outcome = ("cancelled", None)
        elif work.started:
            self._task_group.start_soon(self._cancel_watchdog, work)
        self._wakeup()

    async def wait_idle(self) -> None:
        """Wait until no foreground work runs and no accepted prompt waits to run."""
        while self.busy:
            if self._idle_event is None:
                self._idle_event = anyio.Event()
            await self._idle_event.wait()

    async def close(self) -> None:
        """Cancel the work as ``session/cancel`` would, wait for its idle, then go silent.

        Prompts are refused from the start; once the work reported idle (or
        the grace period passed), background terminal processes are stopped
        and nothing more is sent for this session. Calling it again waits for
        the first close to finish.
        """
        if self._close_done is not None:
            # Closing already: answer this close, too, only once the work ended.
            await self._close_done.wait()
            return
        self._closed = True
        done = self._close_done = anyio.Event()
        try:
            await self.cancel()
            with anyio.move_on_after(self.limits.cancel_grace + 1.0):
                await self.wait_idle()
        finally:
            self._released = True
            self._update_held()
            self._drop_all()
            self._notify_idle()
            for terminal in self._terminals.values():
                terminal.request_cancel()
            for release in self._on_close:
                release()
            done.set()

    # ------------------------------------------------------------------ resume

    async def _resume(self, *, replay: bool) -> None:
        """Send the history (``replay``) and then the current state, before the response.

        Live updates wait while the replay is sent, so the client never sees
        one of them overtaken by the older snapshot of the same thing.
        """
        while self._replay_gate is not None:
            await self._replay_gate.wait()
        gate = self._replay_gate = anyio.Event()
        self._update_held()
        try:
            if replay:
                # A v1 client rebuilds its view from the replay (session/load).
                self._framing.reset_projection()
                for update in list(self._history.replay()):
                    await self._emit(update)
            await self._emit(self._state_snapshot())
        finally:
            self._replay_gate = None
            self._update_held()
            gate.set()


class MessageStream:
    """An agent message or thought streamed in chunks that share one ``messageId``."""

    def __init__(self, session: Session, message_id: str, *, thought: bool) -> None:
        self._session = session
        self.message_id: Final = message_id
        self._thought = thought

    async def write(self, content: str | schema.ContentBlock) -> None:
        """Send one chunk (``agent_message_chunk`` or ``agent_thought_chunk``) of the message."""
        block = schema.TextContent(text=content) if isinstance(content, str) else content
        chunk: schema.SessionUpdate
        if self._thought:
            chunk = schema.AgentThoughtChunk(message_id=self.message_id, content=block)
        else:
            chunk = schema.AgentMessageChunk(message_id=self.message_id, content=block)
        await self._session.send(chunk)


def _blocks(
    content: str | schema.ContentBlock | Sequence[schema.ContentBlock],
) -> list[schema.ContentBlock]:
    if isinstance(content, str):
        return [schema.TextContent(text=content)]
    if isinstance(content, list | tuple):
        return list(content)
    return [content]  # type: ignore[list-item]
