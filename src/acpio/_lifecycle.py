"""The prompt lifecycle of a session: one runner task, so its messages never reorder.

How this works: an accepted prompt becomes a :class:`_Work` item; once its
``session/prompt`` response was queued, the runner sends its
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

The session state (``idle``, ``running``, ``requires_action``) changes only
here: the runner reports ``running`` and ``idle``, and a permission request
of the running work reports ``requires_action`` until it is answered.

:class:`_PromptLifecycle` is a base class of :class:`~acpio.Session` rather
than an object of its own, so lifecycle and updates share the session's
state with no extra indirection. The session sets the attributes declared
below, sends every update through :meth:`Session.send`, and keeps the
public side of the lifecycle (``cancel``, ``wait_idle``, ``close``).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Final, Self

import anyio
import anyio.abc
from msgspec import UNSET

from . import schema
from ._errors import INTERNAL_ERROR, ConnectionClosed, LocalProtocolError, RequestError
from ._ids import new_id
from ._values import require_value
from ._work import _current_work, _Work

if TYPE_CHECKING:
    from ._limits import SessionLimits

__all__ = ["KNOWN_STOP_REASONS", "_PromptLifecycle"]

logger = logging.getLogger(__name__)

KNOWN_STOP_REASONS: Final = schema.KNOWN_STOP_REASON


class _PromptLifecycle:
    """Runs the prompts of one session and reports its state (see the module doc)."""

    # Set by Session.__init__.
    limits: SessionLimits
    _task_group: anyio.abc.TaskGroup
    _prompt_handler: Callable[[Self, list[schema.ContentBlock]], Awaitable[object]]
    _accepted: deque[_Work]  # user_message not sent yet
    _queue: deque[_Work]  # waiting behind the current work
    _work: _Work | None
    _runner_active: bool
    _wake: anyio.Event | None
    _idle_event: anyio.Event | None
    _state: str  # the state the session is in (its update may be on its way)
    _reported_state: str  # the last state update queued for the client
    _pending_permissions: int
    _closed: bool

    if TYPE_CHECKING:
        # Provided by Session.
        @property
        def id(self) -> str: ...

        @property
        def busy(self) -> bool: ...

        async def _send(self, update: schema.SessionUpdate) -> None: ...

        def _try_send(self, update: schema.SessionUpdate) -> bool: ...

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
            await self._send(
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
            # v1: the prompt's answer is its end on the wire; the next turn waits for it.
            while work.awaiting_answer and self._queue and not self._closed:
                await self._sleep()
            self._work = self._queue.popleft() if self._queue else None
        return True

    def _prompt_answered(self, work: _Work) -> None:
        """v1: the answer to ``work``'s ``session/prompt`` was queued; the next turn may start."""
        work.awaiting_answer = False
        self._wakeup()

    async def _work_task(self: Self, work: _Work) -> None:
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
                outcome = ("error", schema.Error(code=INTERNAL_ERROR, message=message))
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
                await self._send(
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
                work.ended.set()
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
                work.ended.set()
        self._accepted.clear()
        self._queue.clear()
        self._work = None

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
        if (
            work is self._work
            and not work.finished
            and not work.cancel_requested
            and not self._set_state_now("running")
        ):
            with anyio.CancelScope(shield=True):
                await self._set_state("running")

    async def _set_state(self, state: str) -> None:
        if self._set_state_now(state):
            return
        self._state = state
        await self._send(_state_update(state))
        self._reported_state = state

    def _set_state_now(self, state: str) -> bool:
        """Report ``state`` if that needs no waiting; False when :meth:`_set_state` must."""
        if state == self._state:
            return True
        if not self._try_send(_state_update(state)):
            return False
        self._state = self._reported_state = state
        return True

    def _state_snapshot(self) -> schema.SessionUpdate:
        """The state the client was last told, as ``session/resume`` repeats it.

        A repeated idle carries no stop reason: it is not a new end of work.
        """
        if self._reported_state == "running":
            return schema.RunningStateUpdate()
        if self._reported_state == "requires_action":
            return schema.RequiresActionStateUpdate()
        return schema.IdleStateUpdate()


def _state_update(state: str) -> schema.SessionUpdate:
    if state == "running":
        return schema.RunningStateUpdate()
    return schema.RequiresActionStateUpdate()


def _stop_reason(result: object) -> str:
    if result is None:
        return "end_turn"
    if not isinstance(result, str):
        raise LocalProtocolError(
            f"a prompt handler must return a stop reason string, got {result!r}"
        )
    return require_value(result, KNOWN_STOP_REASONS, "stop reason")


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
