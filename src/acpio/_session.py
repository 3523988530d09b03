"""Sessions: the prompt lifecycle, session updates and their order.

How this works: every update of a session goes through :meth:`Session.send`,
which (1) flushes terminal bytes still buffered, so nothing overtakes them,
(2) drops updates from foreground work that was already reported idle, so a
cancelled turn never speaks after its ``cancelled`` idle, (3) records the
update in the session's history for replay, and (4) queues the encoded
notification on the connection's single ordered writer. Sending is the one
place where an update becomes wire bytes (``_encode`` and the precomputed
envelope prefix): a later protocol version's encoding (a v1 downgrade for
older editors) plugs in there, not in agent code.

The prompt lifecycle belongs to one runner task per session, so its
messages can never be reordered: an accepted prompt becomes a :class:`_Work`
item; once its ``session/prompt`` response was queued, the runner sends its
``user_message`` (at once, even while another turn runs: the prompt is
inserted into the conversation), and when no other work is in front of it,
``state_update running``, then runs the agent's handler in a task of its
own. When the handler returns or fails, or, after ``session/cancel``, when
it ignored cancellation for longer than the grace period (it is then
abandoned: whatever it sends later is dropped), the runner finalizes the
work's tool calls and terminals and sends exactly one ``idle`` with the stop
reason; only then does the next queued prompt start. ``session/cancel``
cancels the running work and discards queued prompts (they stay in the
conversation, but never run).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import anyio
import anyio.abc
from msgspec import UNSET

from . import schema
from ._errors import ConnectionClosed, LocalProtocolError, RequestError
from ._ids import new_id
from ._paths import require_absolute
from ._terminal import TerminalHandle
from ._tool_call import ToolCallHandle
from ._work import _current_work, _Work
from .schema._codec import _encoder

if TYPE_CHECKING:
    from ._connection import Connection
    from ._history import History

__all__ = ["MessageStream", "Session", "SessionLimits", "StopReason"]

logger = logging.getLogger(__name__)

StopReason = str
KNOWN_STOP_REASONS: Final = frozenset(
    {"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "error"}
)
_encode = _encoder.encode  # the bound C method: one Python call less per update


PromptHandler = Callable[["Session", list[schema.ContentBlock]], Awaitable[object]]


@dataclass
class SessionLimits:
    """Per-session limits; each is reached with a clear error rather than memory growth.

    ``max_queued_prompts`` prompts may wait behind the running one (``-32603``
    beyond), ``max_pending_permissions`` permission requests may be open at
    once (:class:`~acpio.LocalProtocolError` beyond). ``cancel_grace`` is how
    many seconds cancelled work may take to unwind before it is abandoned and
    reported ``cancelled`` anyway.
    """

    max_queued_prompts: int = 16
    max_pending_permissions: int = 64
    cancel_grace: float = 2.0


class Session:
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
        protocol_version: int = schema.PROTOCOL_VERSION,
    ) -> None:
        self.id: Final = session_id
        self.cwd: Final = require_absolute(cwd, "cwd")
        self.additional_directories: list[str] = list(additional_directories)
        self.mcp_servers: list[schema.McpServer] = list(mcp_servers)
        self.limits = limits or SessionLimits()
        self.protocol_version: Final = protocol_version
        self._connection = connection
        self._task_group = task_group
        self._history = history
        self._prompt_handler = prompt_handler
        # Every update of this session is this prefix, the encoded update, and "}}\n".
        self._prefix = (
            b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":'
            + schema.encode(session_id)
            + b',"update":'
        )
        self._send_line = connection.line_sender
        self._record = history.record
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

        The update is recorded in the history first. Updates from foreground
        work that was already reported idle (for example cancelled work that
        ignored cancellation) are dropped, and so is everything sent after the
        session was closed.
        """
        if self._dirty_terminals:
            await self._flush_terminals()
        if self._held and not await self._wait_held():
            return
        work = _current_work.get()
        if work is not None and work.finished:
            logger.debug("dropping an update of finished work in session %s", self.id)
            return
        self._record(update)
        await self._send_line(self._prefix + _encode(update) + b"}}\n")

    async def _send_encoded(self, encoded_update: bytes) -> None:
        """Send an update that is already encoded (terminal bytes); no flush, no history."""
        if self._held and not await self._wait_held():
            return
        await self._send_line(self._prefix + encoded_update + b"}}\n")

    async def _emit(self, update: schema.SessionUpdate) -> None:
        """Send an update as is: not recorded, not held back (replay and state snapshots)."""
        await self._send_line(self._prefix + _encode(update) + b"}}\n")

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
        if severity not in schema.KNOWN_NOTICE_SEVERITY and not severity.startswith("_"):
            raise LocalProtocolError(
                f"notice severity {severity!r} is not an ACP value; custom values start with '_'"
            )
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
        is passed (an LLM's own tool-use id is the common case).
        """
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

    # ----------------------------------------------------- registry of handles

    def _register_tool_call(self, handle: ToolCallHandle) -> None:
        existing = self._tool_calls.get(handle.id)
        if existing is not None and existing is not handle and not existing.final:
            raise LocalProtocolError(f"tool call id {handle.id!r} is already in use")
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

    def terminal_handle(self, terminal_id: str) -> TerminalHandle | None:
        """The handle of a terminal of this session, if any."""
        return self._terminals.get(terminal_id)

    # ------------------------------------------------------------ permissions

    async def _permission_started(self) -> None:
        if self._pending_permissions >= self.limits.max_pending_permissions:
            raise LocalProtocolError(
                f"too many pending permission requests in session {self.id} "
                f"(limit {self.limits.max_pending_permissions})"
            )
        self._pending_permissions += 1
        work = _current_work.get()
        if work is None:
            return  # not foreground work: the session state does not change
        work.pending_permissions += 1
        if (
            work.pending_permissions == 1
            and work is self._work
            and not work.finished
            and not work.cancel_requested
        ):
            await self._set_state("requires_action")

    async def _permission_finished(self) -> None:
        self._pending_permissions -= 1
        work = _current_work.get()
        if work is None:
            return
        work.pending_permissions -= 1
        # The task that asked resumes now: that is progress, and the protocol
        # wants running before it shows, even while other requests still wait.
        if work is self._work and not work.finished and not work.cancel_requested:
            with anyio.CancelScope(shield=True):
                await self._set_state("running")

    async def _set_state(self, state: str) -> None:
        if state == self._state:
            return
        self._state = state
        update: schema.SessionUpdate
        if state == "running":
            update = schema.RunningStateUpdate()
        else:
            update = schema.RequiresActionStateUpdate()
        await self.send(update)
        self._reported_state = state

    def _state_snapshot(self) -> schema.SessionUpdate:
        """The state the client was last told, as ``session/resume`` repeats it.

        A repeated idle carries no stop reason: it is not a new end of work.
        """
        if self._reported_state == "running":
            return schema.RunningStateUpdate()
        if self._reported_state == "requires_action":
            return schema.RequiresActionStateUpdate()
        return schema.IdleStateUpdate()

    # --------------------------------------------------------- prompt lifecycle

    def _accept_prompt(self, prompt: list[schema.ContentBlock]) -> _Work:
        """Insert a user prompt: it gets a ``messageId`` and runs after the work in front.

        The runner announces it only after :meth:`_prompt_responded`, so the
        ``session/prompt`` response always precedes its ``user_message``.

        :raises RequestError: when the session is closed (``-32002``) or too
            many prompts are queued (``-32603``).
        """
        if self._closed:
            raise RequestError.session_not_found(self.id)
        if len(self._queue) + len(self._accepted) >= self.limits.max_queued_prompts:
            raise RequestError.internal_error(
                f"Session {self.id} already has {len(self._queue) + len(self._accepted)} "
                f"queued prompts (limit {self.limits.max_queued_prompts}); wait for idle or "
                "cancel"
            )
        work = _Work(message_id=new_id("msg"), prompt=prompt)
        self._accepted.append(work)
        if self._work is None:
            self._work = work
        else:
            self._queue.append(work)
        return work

    def _prompt_responded(self, work: _Work) -> None:
        """The response to ``work``'s ``session/prompt`` was queued: its lifecycle may go on."""
        work.responded = True
        self._kick()

    def _kick(self) -> None:
        if self._runner_active:
            self._wakeup()
        elif self.busy:
            self._runner_active = True
            self._task_group.start_soon(self._run)

    def _wakeup(self) -> None:
        wake = self._wake
        if wake is not None:
            self._wake = None
            wake.set()

    async def _sleep(self) -> None:
        # Callers check their condition right before, with no await in between,
        # so a wakeup cannot fall between the check and this wait.
        wake = self._wake = anyio.Event()
        await wake.wait()

    async def _run(self) -> None:
        """The runner: every lifecycle message of this session, in order (see the module doc)."""
        try:
            while await self._step():
                pass
        except ConnectionClosed:
            self._drop_all()
        except Exception:
            logger.exception("the prompt lifecycle of session %s failed", self.id)
            self._drop_all()
        finally:
            self._runner_active = False
            if self.busy:
                # Cancelled (the agent is shutting down): nothing more goes out.
                self._drop_all()
            self._notify_idle()

    def _notify_idle(self) -> None:
        if self._idle_event is not None and not self.busy:
            self._idle_event.set()
            self._idle_event = None

    async def _step(self) -> bool:
        """Do the next lifecycle step; False when nothing is left to do."""
        accepted = self._accepted
        if accepted:
            # User messages first, in acceptance order, each after its response.
            if not accepted[0].responded:
                await self._sleep()
                return True
            inserted = accepted.popleft()
            inserted.announced = True
            await self.send(
                schema.UserMessage(message_id=inserted.message_id, content=inserted.prompt)
            )
            return True
        work = self._work
        if work is None:
            return False
        if not work.started:
            work.started = True
            await self._set_state("running")
            if work.cancel_requested:
                # Cancelled before it started: the handler never runs.
                work.outcome = ("cancelled", None)
                work.done.set()
            else:
                self._task_group.start_soon(self._work_task, work)
        elif work.outcome is None:
            await self._sleep()
        else:
            await self._finish(work)
            self._work = self._queue.popleft() if self._queue else None
        return True

    async def _work_task(self, work: _Work) -> None:
        _current_work.set(work)
        outcome: tuple[str, schema.Error | None] = ("cancelled", None)
        try:
            with work.scope:
                result = await self._prompt_handler(self, work.prompt)
                outcome = (_stop_reason(result), None)
            if work.scope.cancelled_caught or work.cancel_requested:
                outcome = ("cancelled", None)
        except Exception as exc:
            if work.cancel_requested:
                # Aborted operations raise; the protocol wants them reported as cancelled.
                outcome = ("cancelled", None)
            else:
                logger.exception("prompt handler of session %s failed", self.id)
                message = _short(f"{type(exc).__name__}: {exc}")
                outcome = ("error", schema.Error(code=-32603, message=message))
        finally:
            work.done.set()
            if work.outcome is None:
                work.outcome = outcome
            self._wakeup()

    async def _finish(self, work: _Work) -> None:
        """Close out foreground work: finalize its handles, then exactly one idle."""
        assert work.outcome is not None
        stop_reason, error = work.outcome
        with anyio.CancelScope(shield=True):
            token = _current_work.set(work)
            try:
                await self._finalize_handles(work, stop_reason)
                self._state = "idle"
                await self.send(
                    schema.IdleStateUpdate(
                        stop_reason=stop_reason, error=UNSET if error is None else error
                    )
                )
            except ConnectionClosed:
                raise
            except Exception:
                logger.exception("could not report the end of work in session %s", self.id)
            finally:
                self._state = self._reported_state = "idle"
                work.finished = True
                _current_work.reset(token)

    async def _finalize_handles(self, work: _Work, stop_reason: str) -> None:
        for terminal in work.terminals:
            await terminal.flush()
        if stop_reason not in ("cancelled", "error"):
            return
        final_status = "cancelled" if stop_reason == "cancelled" else "failed"
        for call in work.tool_calls:
            if not call.final:
                await call._finish_quietly(final_status)

    def _drop_all(self) -> None:
        """Nothing more may be sent: end every work item without a word."""
        for work in (*self._accepted, *self._queue, self._work):
            if work is not None:
                work.cancel_requested = True
                work.scope.cancel()
                work.finished = True
        self._accepted.clear()
        self._queue.clear()
        self._work = None

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
        self._queue.clear()
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

    async def _cancel_watchdog(self, work: _Work) -> None:
        with anyio.move_on_after(self.limits.cancel_grace):
            await work.done.wait()
        if work.outcome is None:
            logger.warning(
                "work in session %s ignored cancellation for %.1fs; reporting it cancelled",
                self.id,
                self.limits.cancel_grace,
            )
            work.outcome = ("cancelled", None)
            self._wakeup()

    def _abandon(self) -> None:
        """Report cancelled work that still runs as cancelled now (shutdown)."""
        work = self._work
        if work is not None and work.started and work.outcome is None:
            work.cancel_requested = True
            work.scope.cancel()
            work.outcome = ("cancelled", None)
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


def _stop_reason(result: object) -> str:
    if result is None:
        return "end_turn"
    if not isinstance(result, str):
        raise LocalProtocolError(
            f"a prompt handler must return a stop reason string, got {result!r}"
        )
    if result not in KNOWN_STOP_REASONS and not result.startswith("_"):
        raise LocalProtocolError(
            f"stop reason {result!r} is not an ACP stop reason; custom ones must start with '_'"
        )
    return result


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
