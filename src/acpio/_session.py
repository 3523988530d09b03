"""Sessions: the prompt lifecycle, session updates and their order.

How this works: every update of a session goes through :meth:`Session.send`,
which (1) flushes terminal bytes still buffered, so nothing overtakes them,
(2) drops updates from foreground work that was already reported idle, so a
cancelled turn never speaks after its ``cancelled`` idle, (3) records the
update in the session's history for replay, and (4) queues the encoded
notification on the connection's single ordered writer.

A prompt becomes a :class:`_Work` item. Accepted prompts are answered with a
``messageId`` at once and queued; one runner per session executes them one
after another (a second prompt sent while the session is busy waits for the
current one; ``session/cancel`` cancels the running work and discards the
queue). The runner reports ``running`` before the work starts, and
:meth:`_finish` sends exactly one ``idle`` with the stop reason: when the work
returns, fails, or, if cancelled work ignores cancellation for longer than
the grace period, when that period ends.
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
from ._errors import LocalProtocolError, RequestError
from ._ids import new_id
from ._paths import require_absolute
from ._terminal import TerminalHandle
from ._tool_call import ToolCallHandle
from ._work import _current_work, _Work
from .schema._codec import _encoder

if TYPE_CHECKING:
    from ._connection import Connection
    from ._history import History

__all__ = ["Session", "StopReason"]

logger = logging.getLogger(__name__)

StopReason = str
KNOWN_STOP_REASONS: Final = frozenset(
    {"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "error"}
)
_encode = _encoder.encode  # the bound C method: one Python call less per update


PromptHandler = Callable[["Session", list[schema.ContentBlock]], Awaitable[object]]


@dataclass
class SessionLimits:
    """Per-session limits; each is reached with a clear error rather than memory growth."""

    max_queued_prompts: int = 16
    max_pending_permissions: int = 64
    cancel_grace: float = 2.0


class Session:
    """One ACP session: its working directory, its updates and its foreground work.

    Agent code receives the session in :meth:`acpio.Agent.prompt` and reports
    through it: messages and thoughts, plans, notices, usage, tool calls
    (:meth:`tool_call`) and terminals (:meth:`terminal`). Updates reach the
    client in exactly the order they were sent.
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
    ) -> None:
        self.id: Final = session_id
        self.cwd: Final = require_absolute(cwd, "cwd")
        self.additional_directories: list[str] = list(additional_directories)
        self.mcp_servers: list[schema.McpServer] = list(mcp_servers)
        self.limits = limits or SessionLimits()
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
        self._queue: deque[_Work] = deque()
        self._work: _Work | None = None
        self._runner_active = False
        self._state = "idle"
        self._pending_permissions = 0
        self._dirty_terminals: list[TerminalHandle] = []
        self._tool_calls: dict[str, ToolCallHandle] = {}
        self._terminals: dict[str, TerminalHandle] = {}
        self._closed = False
        self._idle_event: anyio.Event | None = None
        self.remembered_permissions: dict[str, str] = {}

    # ------------------------------------------------------------------ state

    @property
    def state(self) -> str:
        """``"idle"``, ``"running"`` or ``"requires_action"``, as last reported to the client."""
        return self._state

    @property
    def closed(self) -> bool:
        """True once the session was closed; closed sessions refuse prompts."""
        return self._closed

    @property
    def busy(self) -> bool:
        """True while foreground work runs or prompts are queued."""
        return self._work is not None or bool(self._queue)

    @property
    def history(self) -> History:
        """What the session has reported, as replayed by ``session/resume``."""
        return self._history

    # ---------------------------------------------------------------- sending

    async def send(self, update: schema.SessionUpdate) -> None:
        """Send one session update, in order, after any buffered terminal bytes.

        Updates from foreground work that was already reported idle (for
        example cancelled work that ignored cancellation) are dropped.
        """
        if self._dirty_terminals:
            await self._flush_terminals()
        work = _current_work.get()
        if work is not None and work.finished:
            logger.debug("dropping an update of finished work in session %s", self.id)
            return
        self._record(update)
        await self._send_line(self._prefix + _encode(update) + b"}}\n")

    async def send_replayed(self, update: schema.SessionUpdate) -> None:
        """Send an update from the history (``session/resume``) without recording it again."""
        await self._send_line(self._prefix + _encode(update) + b"}}\n")

    def _work_cancel_requested(self) -> bool:
        work = _current_work.get()
        return work is not None and work.cancel_requested

    async def _send_encoded(self, encoded_update: bytes) -> None:
        """Send an update that is already encoded (terminal bytes); no flush, no history."""
        await self._send_line(self._prefix + encoded_update + b"}}\n")

    def _mark_terminal_dirty(self, terminal: TerminalHandle) -> None:
        self._dirty_terminals.append(terminal)

    async def _flush_terminals(self) -> None:
        dirty, self._dirty_terminals = self._dirty_terminals, []
        for terminal in dirty:
            await terminal.flush()

    # -------------------------------------------------------- output helpers

    async def message(
        self, content: str | schema.ContentBlock | Sequence[schema.ContentBlock]
    ) -> str:
        """Send a whole agent message; returns its ``messageId``."""
        message_id = new_id("msg")
        await self.send(schema.AgentMessage(message_id=message_id, content=_blocks(content)))
        return message_id

    async def thought(
        self, content: str | schema.ContentBlock | Sequence[schema.ContentBlock]
    ) -> str:
        """Send a whole agent thought; returns its ``messageId``."""
        message_id = new_id("thought")
        await self.send(schema.AgentThought(message_id=message_id, content=_blocks(content)))
        return message_id

    def message_stream(self, message_id: str | None = None) -> MessageStream:
        """A streamed agent message: each :meth:`MessageStream.write` sends one chunk."""
        return MessageStream(self, message_id or new_id("msg"), thought=False)

    def thought_stream(self, message_id: str | None = None) -> MessageStream:
        """A streamed agent thought: each :meth:`MessageStream.write` sends one chunk."""
        return MessageStream(self, message_id or new_id("thought"), thought=True)

    async def plan(self, entries: Sequence[schema.PlanEntry], *, plan_id: str = "plan") -> None:
        """Send the complete plan (entries replace the previous plan with that id)."""
        await self.send(
            schema.PlanUpdate(plan=schema.PlanItems(plan_id=plan_id, entries=list(entries)))
        )

    async def notice(
        self, title: str, *, severity: str = "info", description: str | None = None
    ) -> None:
        """Send a notice (``info``, ``warning``, ``error``, or a ``_``-prefixed severity)."""
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
        handle = ToolCallHandle(
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
        if self._pending_permissions == 1 and self._work is not None:
            await self._set_state("requires_action")

    async def _permission_finished(self) -> None:
        self._pending_permissions -= 1
        work = self._work
        if (
            self._pending_permissions == 0
            and work is not None
            and not work.finished
            and not work.cancel_requested
        ):
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

    # --------------------------------------------------------- prompt lifecycle

    async def accept_prompt(self, prompt: list[schema.ContentBlock]) -> str:
        """Insert a user prompt and queue it as foreground work; returns its ``messageId``."""
        if self._closed:
            raise RequestError.invalid_request(f"Session {self.id} is closed")
        if len(self._queue) >= self.limits.max_queued_prompts:
            raise RequestError.invalid_request(
                f"Session {self.id} already has {len(self._queue)} queued prompts "
                f"(limit {self.limits.max_queued_prompts}); wait for idle or cancel"
            )
        work = _Work(message_id=new_id("msg"), prompt=prompt)
        self._queue.append(work)
        return work.message_id

    def start_queued_work(self) -> None:
        """Start the runner for queued prompts (after the prompt response was queued)."""
        if not self._runner_active and self._queue:
            self._runner_active = True
            self._task_group.start_soon(self._run_queue)

    async def _run_queue(self) -> None:
        try:
            while self._queue and not self._closed:
                work = self._queue.popleft()
                await self._execute(work)
        finally:
            self._runner_active = False

    async def _execute(self, work: _Work) -> None:
        self._work = work
        token = _current_work.set(work)
        try:
            await self.send(schema.UserMessage(message_id=work.message_id, content=work.prompt))
            await self._set_state("running")
        finally:
            _current_work.reset(token)
        finished = anyio.Event()
        self._task_group.start_soon(self._work_task, work, finished)
        await finished.wait()

    async def _work_task(self, work: _Work, finished: anyio.Event) -> None:
        token = _current_work.set(work)
        stop_reason: str = "end_turn"
        error: schema.Error | None = None
        try:
            with work.scope:
                result = await self._prompt_handler(self, work.prompt)
                stop_reason = _stop_reason(result)
            if work.scope.cancelled_caught or work.cancel_requested:
                stop_reason = "cancelled"
        except Exception as exc:
            if work.cancel_requested:
                # Aborted operations raise; the protocol wants them reported as cancelled.
                stop_reason = "cancelled"
            else:
                logger.exception("prompt handler of session %s failed", self.id)
                stop_reason = "error"
                error = schema.Error(code=-32603, message=_short(f"{type(exc).__name__}: {exc}"))
        finally:
            work.done.set()
            _current_work.reset(token)
        await self._finish(work, stop_reason, error)
        finished.set()

    async def _finish(self, work: _Work, stop_reason: str, error: schema.Error | None) -> None:
        """Close out foreground work: finalize its handles, then exactly one idle."""
        if work.finished:
            return
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
            except Exception:
                logger.exception("could not report the end of work in session %s", self.id)
            finally:
                work.finished = True
                _current_work.reset(token)
                if self._work is work:
                    self._work = None
                if self._idle_event is not None and not self.busy:
                    self._idle_event.set()
                    self._idle_event = None

    async def _finalize_handles(self, work: _Work, stop_reason: str) -> None:
        for terminal in work.terminals:
            await terminal.flush()
        if stop_reason not in ("cancelled", "error"):
            return
        final_status = "cancelled" if stop_reason == "cancelled" else "failed"
        for call in work.tool_calls:
            if not call.final:
                await call._finish_quietly(final_status)

    async def cancel(self) -> None:
        """Cancel the foreground work and discard queued prompts (``session/cancel``).

        Returns at once; the work's ``idle`` with ``stopReason: "cancelled"``
        follows when it has unwound, or when the grace period ends.
        """
        self._queue.clear()
        work = self._work
        if work is None or work.finished:
            return
        work.cancel_requested = True
        work.scope.cancel()
        self._task_group.start_soon(self._cancel_watchdog, work)

    async def _cancel_watchdog(self, work: _Work) -> None:
        with anyio.move_on_after(self.limits.cancel_grace):
            await work.done.wait()
        if not work.done.is_set():
            logger.warning(
                "work in session %s ignored cancellation for %.1fs; reporting it cancelled",
                self.id,
                self.limits.cancel_grace,
            )
            await self._finish(work, "cancelled", None)

    async def wait_idle(self) -> None:
        """Wait until no foreground work runs and no prompt is queued."""
        while self.busy:
            if self._idle_event is None:
                self._idle_event = anyio.Event()
            await self._idle_event.wait()

    async def close(self) -> None:
        """Cancel running work as ``session/cancel`` would, wait for it, then refuse prompts."""
        self._closed = True
        await self.cancel()
        with anyio.move_on_after(self.limits.cancel_grace + 1.0):
            await self.wait_idle()


class MessageStream:
    """An agent message or thought streamed in chunks that share one ``messageId``."""

    def __init__(self, session: Session, message_id: str, *, thought: bool) -> None:
        self._session = session
        self.message_id: Final = message_id
        self._thought = thought

    async def write(self, content: str | schema.ContentBlock) -> None:
        """Send one chunk of the message."""
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
