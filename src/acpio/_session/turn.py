"""The turn state machine of a session: one runner task, so its messages never reorder.

How this works: an accepted prompt becomes a :class:`~acpio._session.work.Work` item;
once its ``session/prompt`` response was queued, the runner sends its
``user_message`` (at once, even while another turn runs: the prompt is
inserted into the conversation), and when no other work is in front of it,
``state_update running``, then runs the agent's handler in a task of its
own. When the handler returns or fails, or, after ``session/cancel``, when
it ignored cancellation for longer than the grace period (the cancel
watchdog abandons it: whatever it sends later is dropped), the runner
finalizes the work's tool calls and terminals and sends exactly one ``idle``
with the stop reason; only then does the next queued prompt start.
``session/cancel`` cancels the running work and discards queued prompts
(they stay in the conversation, but never run); a prompt received before a
``session/cancel`` is cancelled too, even when it is accepted after it
(:meth:`Turns.cancel_received_through`, :meth:`Turns.cancelled_by_earlier_cancel`).

The session state (:class:`SessionState`) changes only here: the runner
reports ``running`` and ``idle``, and a permission request (or elicitation)
of the running work reports ``requires_action`` until it is answered. Every
update goes out through the session's :class:`~acpio._session.updates.UpdatePath`.
"""

from __future__ import annotations

import enum
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Final

import anyio
import anyio.abc
from msgspec import UNSET

from .. import schema
from .._errors import INTERNAL_ERROR, ConnectionClosed, LocalProtocolError, RequestError
from .._limits import SessionLimits
from .._protocol.ids import new_id
from .._protocol.values import require_value
from .updates import UpdatePath
from .work import Work, current_work

__all__ = [
    "IDLE",
    "KNOWN_STOP_REASONS",
    "REQUIRES_ACTION",
    "RUNNING",
    "SessionState",
    "Turns",
]

logger = logging.getLogger(__name__)

KNOWN_STOP_REASONS: Final = schema.KNOWN_STOP_REASON


class SessionState(enum.Enum):
    """The state a session reports to the client (``state_update``)."""

    IDLE = "idle"
    RUNNING = "running"
    REQUIRES_ACTION = "requires_action"


IDLE: Final = SessionState.IDLE
RUNNING: Final = SessionState.RUNNING
REQUIRES_ACTION: Final = SessionState.REQUIRES_ACTION

PromptRunner = Callable[[list[schema.ContentBlock]], Awaitable[object]]


class Turns:
    """Runs the prompts of one session and reports its state (see the module doc).

    The invariants it keeps: a ``user_message`` never precedes its prompt's
    response; turns run one at a time in acceptance order; each started turn
    ends with exactly one ``idle``, after its tool calls and terminals were
    finalized; nothing of a turn goes out after its idle.
    """

    def __init__(
        self,
        session_id: str,
        *,
        updates: UpdatePath,
        task_group: anyio.abc.TaskGroup,
        limits: SessionLimits,
        run_prompt: PromptRunner,
    ) -> None:
        self.session_id: Final = session_id
        self.updates: Final = updates
        self.task_group: Final = task_group
        self.limits = limits
        self.run_prompt = run_prompt
        self.accepted: deque[Work] = deque()  # user_message not sent yet
        self.queue: deque[Work] = deque()  # waiting behind the current work
        self.work: Work | None = None
        #: The connection's count of received messages at the last ``session/cancel``.
        self.cancelled_through: int = 0
        self.runner_active: bool = False
        self.wake: anyio.Event | None = None
        self.idle_event: anyio.Event | None = None
        # The state the session is in (its update may be on its way), and the
        # last state whose update was queued for the client.
        self.state: SessionState = IDLE
        self.reported_state: SessionState = IDLE
        self.pending_permissions: int = 0
        self.closed = False
        # The two state updates a turn reports mid-way, each with its encoded line:
        # they carry no fields, so they are built once per session.
        self.state_updates: Final[dict[SessionState, tuple[schema.SessionUpdate, bytes]]] = {
            state: (update, updates.framing.line(update))
            for state, update in (
                (RUNNING, schema.RunningStateUpdate()),
                (REQUIRES_ACTION, schema.RequiresActionStateUpdate()),
            )
        }

        self.requires_action_line: Final = self.state_updates[REQUIRES_ACTION][1]
        self.running_line: Final = self.state_updates[RUNNING][1]

    @property
    def busy(self) -> bool:
        """True while foreground work runs or accepted prompts wait to run."""
        return self.work is not None or bool(self.accepted) or bool(self.queue)

    # ---------------------------------------------------------------- prompts

    def accept_prompt(self, prompt: list[schema.ContentBlock]) -> Work:
        """Insert a user prompt: it gets a ``messageId`` and runs after the work in front.

        The runner announces it only after :meth:`prompt_responded`, so the
        ``session/prompt`` response always precedes its ``user_message``.

        :raises RequestError: when the session is closed (``-32002``) or too
            many prompts are queued (``-32603``).
        """
        if self.closed:
            raise RequestError.session_not_found(self.session_id)
        waiting = len(self.queue) + len(self.accepted)
        if waiting >= self.limits.max_queued_prompts:
            raise RequestError.internal_error(
                f"Session {self.session_id} already has {waiting} "
                f"queued prompts (limit {self.limits.max_queued_prompts}); wait for idle or "
                "cancel"
            )
        work = Work(message_id=new_id("msg"), prompt=prompt)
        self.accepted.append(work)
        if self.work is None:
            self.work = work
        else:
            self.queue.append(work)
        return work

    def prompt_responded(self, work: Work) -> None:
        """The response to ``work``'s ``session/prompt`` was queued: its turn may go on."""
        work.responded = True
        self.kick()

    def prompt_answered(self, work: Work) -> None:
        """v1: the answer to ``work``'s ``session/prompt`` was queued; the next turn may start."""
        work.awaiting_answer = False
        self.wakeup()

    def withdraw(self, work: Work) -> None:
        """v1: the client cancelled ``work``'s ``session/prompt`` request itself."""
        if work is self.work:
            self.cancel()
        elif work in self.queue:
            self.queue.remove(work)
            work.discarded = True
            work.ended.set()

    def cancel_received_through(self, received: int) -> None:
        """A ``session/cancel`` arrived as the connection's ``received``-th message.

        Prompts received before it are cancelled too, even those whose request
        handler has not run yet (requests run in tasks, notifications inline).
        """
        self.cancelled_through = received

    def cancelled_by_earlier_cancel(self, sequence: int) -> bool:
        """Whether the prompt received as message ``sequence`` preceded the last cancel."""
        return sequence < self.cancelled_through

    # ----------------------------------------------------------------- runner

    def kick(self) -> None:
        """Wake the runner, or start it when there is work and it is not running."""
        if self.runner_active:
            self.wakeup()
        elif self.busy:
            self.runner_active = True
            self.task_group.start_soon(self.run)

    def wakeup(self) -> None:
        """Let a waiting runner look again."""
        wake = self.wake
        if wake is not None:
            self.wake = None
            wake.set()

    async def sleep(self) -> None:
        """Wait for :meth:`wakeup` (callers check their condition right before)."""
        # No await between the caller's check and this wait, so a wakeup cannot fall between.
        wake = self.wake = anyio.Event()
        await wake.wait()

    async def run(self) -> None:
        """The runner: every turn message of this session, in order (see the module doc)."""
        try:
            while await self.step():
                pass
        except ConnectionClosed:
            self.drop_all()
        except Exception:
            logger.exception("the prompt lifecycle of session %s failed", self.session_id)
            self.drop_all()
        finally:
            self.runner_active = False
            if self.busy:
                # Cancelled (the agent is shutting down): nothing more goes out.
                self.drop_all()
            self.notify_idle()

    def notify_idle(self) -> None:
        """Wake :meth:`wait_idle` callers once nothing is left to run."""
        if self.idle_event is not None and not self.busy:
            self.idle_event.set()
            self.idle_event = None

    async def step(self) -> bool:
        """Do the next step of the turns; False when nothing is left to do."""
        accepted = self.accepted
        if accepted:
            # User messages first, in acceptance order, each after its response.
            if not accepted[0].responded:
                await self.sleep()
                return True
            inserted = accepted.popleft()
            inserted.announced = True
            await self.updates.send(
                schema.UserMessage(message_id=inserted.message_id, content=inserted.prompt)
            )
            return True
        work = self.work
        if work is None:
            return False
        if not work.started:
            work.started = True
            await self.set_state(RUNNING)
            if work.cancel_requested:
                # Cancelled before it started: the handler never runs.
                work.outcome = ("cancelled", None)
                work.done.set()
            else:
                self.task_group.start_soon(self.work_task, work)
        elif work.outcome is None:
            await self.sleep()
        else:
            await self.finish(work)
            # v1: the prompt's answer is its end on the wire; the next turn waits for it.
            while work.awaiting_answer and self.queue and not self.closed:
                await self.sleep()
            self.work = self.queue.popleft() if self.queue else None
        return True

    async def work_task(self, work: Work) -> None:
        """Run the agent's handler for ``work`` and record its outcome."""
        current_work.set(work)
        outcome: tuple[str, schema.Error | None] = ("cancelled", None)
        try:
            with work.scope:
                result = await self.run_prompt(work.prompt)
                outcome = (_stop_reason(result), None)
            if work.scope.cancelled_caught or work.cancel_requested:
                outcome = ("cancelled", None)
        except Exception as exc:
            if work.cancel_requested:
                # Aborted operations raise; the protocol wants them reported as cancelled.
                outcome = ("cancelled", None)
            else:
                logger.exception("prompt handler of session %s failed", self.session_id)
                message = _short(f"{type(exc).__name__}: {exc}")
                outcome = ("error", schema.Error(code=INTERNAL_ERROR, message=message))
        finally:
            work.done.set()
            if work.outcome is None:
                work.outcome = outcome
            self.wakeup()

    async def finish(self, work: Work) -> None:
        """Close out foreground work: finalize its handles, then exactly one idle."""
        assert work.outcome is not None
        stop_reason, error = work.outcome
        with anyio.CancelScope(shield=True):
            token = current_work.set(work)
            try:
                await _finalize_handles(work, stop_reason)
                self.state = IDLE
                await self.updates.send(
                    schema.IdleStateUpdate(
                        stop_reason=stop_reason, error=UNSET if error is None else error
                    )
                )
            except ConnectionClosed:
                raise
            except Exception:
                logger.exception("could not report the end of work in session %s", self.session_id)
            finally:
                self.state = self.reported_state = IDLE
                work.finished = True
                work.ended.set()
                current_work.reset(token)

    def drop_all(self) -> None:
        """Nothing more may be sent: end every work item without a word."""
        for work in (*self.accepted, *self.queue, self.work):
            if work is not None:
                work.cancel_requested = True
                work.scope.cancel()
                work.finished = True
                work.ended.set()
        self.accepted.clear()
        self.queue.clear()
        self.work = None

    # ------------------------------------------------------------ cancelling

    def cancel(self) -> None:
        """Cancel the foreground work and discard queued prompts (``session/cancel``)."""
        for queued in self.queue:
            queued.discarded = True
            queued.ended.set()
        self.queue.clear()
        self.wakeup()  # a runner waiting to start the next queued turn goes on
        work = self.work
        if work is None or work.finished or work.cancel_requested:
            return
        work.cancel_requested = True
        work.scope.cancel()
        if work.outcome is not None:
            # Ended but not yet reported: the idle after a cancel says cancelled.
            work.outcome = ("cancelled", None)
        elif work.started:
            self.task_group.start_soon(self.cancel_watchdog, work)
        self.wakeup()

    async def cancel_watchdog(self, work: Work) -> None:
        """Report ``work`` cancelled once it ignored cancellation for the grace period."""
        with anyio.move_on_after(self.limits.cancel_grace):
            await work.done.wait()
        if work.outcome is None:
            logger.warning(
                "work in session %s ignored cancellation for %.1fs; reporting it cancelled",
                self.session_id,
                self.limits.cancel_grace,
            )
            work.outcome = ("cancelled", None)
            self.wakeup()

    def abandon(self) -> None:
        """Report cancelled work that still runs as cancelled now (shutdown)."""
        work = self.work
        if work is not None and work.started and work.outcome is None:
            work.cancel_requested = True
            work.scope.cancel()
            work.outcome = ("cancelled", None)
            self.wakeup()

    async def wait_idle(self) -> None:
        """Wait until no foreground work runs and no accepted prompt waits to run."""
        while self.busy:
            if self.idle_event is None:
                self.idle_event = anyio.Event()
            await self.idle_event.wait()

    @staticmethod
    def work_cancel_requested() -> bool:
        """Whether the foreground work of the calling task was cancelled."""
        work = current_work.get()
        return work is not None and work.cancel_requested

    # ------------------------------------------------------------ permissions

    async def permission_started(self) -> None:
        """A permission request (or elicitation) goes out: ``requires_action`` for the turn.

        :raises LocalProtocolError: when too many are pending in the session.
        """
        if not self.permission_started_now():
            await self.set_state(REQUIRES_ACTION)

    def permission_started_now(self) -> bool:
        """:meth:`permission_started` when it needs no waiting; False when the
        caller must ``await set_state(REQUIRES_ACTION)``.

        :raises LocalProtocolError: when too many are pending in the session.
        """
        if self.pending_permissions >= self.limits.max_pending_permissions:
            raise LocalProtocolError(
                f"too many pending permission requests in session {self.session_id} "
                f"(limit {self.limits.max_pending_permissions})"
            )
        self.pending_permissions += 1
        work = current_work.get()
        if work is None:
            return True  # not foreground work: the session state does not change
        work.pending_permissions += 1
        if (
            work.pending_permissions != 1
            or work is not self.work
            or work.finished
            or work.cancel_requested
            or self.state is REQUIRES_ACTION
        ):
            return True
        # set_state_now() written out: this runs for every permission request.
        if not self.updates.try_send_state(self.requires_action_line):
            return False
        self.state = self.reported_state = REQUIRES_ACTION
        return True

    async def permission_finished(self) -> None:
        """The request was answered (or withdrawn): ``running`` again for the turn."""
        if not self.permission_finished_now():
            with anyio.CancelScope(shield=True):
                await self.set_state(RUNNING)

    def permission_finished_now(self) -> bool:
        """:meth:`permission_finished` when it needs no waiting; False when the
        caller must ``await set_state(RUNNING)``, shielded."""
        self.pending_permissions -= 1
        work = current_work.get()
        if work is None:
            return True
        work.pending_permissions -= 1
        # The task that asked resumes now: that is progress, and the protocol
        # wants running before it shows, even while other requests still wait.
        if work is not self.work or work.finished or work.cancel_requested or self.state is RUNNING:
            return True
        # set_state_now() written out: this runs for every permission answer.
        if not self.updates.try_send_state(self.running_line):
            return False
        self.state = self.reported_state = RUNNING
        return True

    async def set_state(self, state: SessionState) -> None:
        """Report ``state`` (``running`` or ``requires_action``) unless it is the current one."""
        if self.set_state_now(state):
            return
        self.state = state
        await self.updates.send_state(self.state_updates[state][1])
        self.reported_state = state

    def set_state_now(self, state: SessionState) -> bool:
        """Report ``state`` if that needs no waiting; False when :meth:`set_state` must."""
        if state is self.state:
            return True
        work = current_work.get()
        if work is not None and work.finished:
            return True  # the work was reported idle: its state updates are dropped
        if not self.updates.try_send_state(self.state_updates[state][1]):
            return False
        self.state = self.reported_state = state
        return True

    def state_snapshot(self) -> schema.SessionUpdate:
        """The state the client was last told, as ``session/resume`` repeats it.

        A repeated idle carries no stop reason: it is not a new end of work.
        """
        if self.reported_state is IDLE:
            return schema.IdleStateUpdate()
        return self.state_updates[self.reported_state][0]


async def _finalize_handles(work: Work, stop_reason: str) -> None:
    for flush in work.terminal_flushes:
        await flush()
    if stop_reason not in ("cancelled", "error"):
        return
    final_status = "cancelled" if stop_reason == "cancelled" else "failed"
    for finish in work.tool_call_finishers:
        await finish(final_status)


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
