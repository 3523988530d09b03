"""The turn state machine of a session: one runner at a time, so its messages never reorder.

How this works: an accepted prompt becomes a :class:`~acpio._session.work.Work` item;
once its ``session/prompt`` response was queued, the runner sends its
``user_message`` (at once, even while another turn runs: the prompt is
inserted into the conversation), and when no other work is in front of it,
``state_update running``, then runs the agent's handler in a task of its
own. When the handler returns or fails, or, after ``session/cancel``, when
it ignored cancellation for longer than the grace period (the cancel
watchdog abandons it: whatever it sends later is dropped), the runner
finalizes the work's tool calls and terminals and sends exactly one ``idle``
with the stop reason; only then does the next queued prompt start. The
runner is a role, not a task: it ends when there is nothing to do now, and a
handler's task that ends takes it up when none holds it (:meth:`Turns._run`).
``session/cancel`` cancels the running work and discards queued prompts
(they stay in the conversation, but never run); a prompt received before a
``session/cancel`` is cancelled too, even when it is accepted after it
(:meth:`Turns.cancel_received_through`, :meth:`Turns.cancelled_by_earlier_cancel`).

Which of these happens when is decided by the session's
:class:`~acpio._session.turn_machine.TurnMachine`, a transition function
without I/O: :class:`Turns` feeds it the session's events and carries out
the actions it answers with (sends, tasks, cancel scopes). The session state
(:class:`SessionState`) changes only there: the runner reports ``running``
and ``idle``, and a permission request (or elicitation) of the running work
reports ``requires_action`` until it is answered. Every update goes out
through the session's :class:`~acpio._session.updates.UpdatePath`.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Final, Protocol

import anyio
import anyio.abc
from msgspec import UNSET

from .. import schema
from .._errors import INTERNAL_ERROR, ConnectionClosed, LocalProtocolError, RequestError
from .._limits import SessionLimits
from .._protocol.ids import new_id
from .._protocol.values import require_value
from .turn_machine import (
    CANCELLED,
    IDLE,
    REQUIRES_ACTION,
    RUNNING,
    Action,
    SessionState,
    Step,
    TurnEnding,
    TurnMachine,
)
from .updates import UpdatePath
from .work import Work, current_work

if TYPE_CHECKING:
    from .observe import Restore, SessionObserver

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


class PromptRunner(Protocol):
    """What runs a session's turns: :meth:`run_prompt` is called once per started turn."""

    def run_prompt(self, prompt: list[schema.ContentBlock]) -> Awaitable[object]:
        """Run the agent's handler on ``prompt``; its result is the turn's stop reason."""
        ...


class Turns:
    """Runs the prompts of one session and reports its state (see the module doc).

    The invariants it keeps are its machine's: a ``user_message`` never
    precedes its prompt's response; turns run one at a time in acceptance
    order; each started turn ends with exactly one ``idle``, after its tool
    calls and terminals were finalized; nothing of a turn goes out after its idle.
    """

    __slots__ = (
        "_cancelled_through",
        "_context",
        "_idle_event",
        "_lines",
        "_machine",
        "_pending_permissions",
        "_runner_active",
        "_task_group",
        "_updates",
        "limits",
        "observer",
        "runner",
        "session_id",
    )

    def __init__(
        self,
        session_id: str,
        *,
        updates: UpdatePath,
        task_group: anyio.abc.TaskGroup,
        limits: SessionLimits,
        runner: PromptRunner,
    ) -> None:
        self.session_id: Final = session_id
        self._updates: Final = updates
        self._task_group: Final = task_group
        self.limits: SessionLimits = limits
        #: Runs each turn's prompt (an object, not a closure: nothing made per session).
        self.runner: PromptRunner = runner
        # (Not TurnMachine[Work](): calling the alias stores __orig_class__ on each machine.)
        self._machine: Final[TurnMachine[Work]] = TurnMachine()
        #: The connection's count of received messages at the last ``session/cancel``.
        self._cancelled_through: int = 0
        self._runner_active: bool = False
        # The context each turn's handler task starts from: the one the last prompt was
        # answered in, so nothing a handler sets reaches the handlers after it.
        self._context: contextvars.Context | None = None
        self._idle_event: anyio.Event | None = None
        self._pending_permissions: int = 0
        #: Traces the session's turns; None (the default) when tracing is off.
        self.observer: SessionObserver | None = None
        # The encoded lines of the two state updates a turn reports mid-way, made at the
        # session's first turn (an idle session never needs them).
        self._lines: tuple[bytes, bytes] | None = None

    @property
    def _running_line(self) -> bytes:
        """The ``running`` state update of this session, encoded."""
        lines = self._lines or self._encode_states()
        return lines[0]

    @property
    def _requires_action_line(self) -> bytes:
        """The ``requires_action`` state update of this session, encoded."""
        lines = self._lines or self._encode_states()
        return lines[1]

    def _encode_states(self) -> tuple[bytes, bytes]:
        line = self._updates.encoding.line
        lines = self._lines = (line(_STATE_UPDATES[RUNNING]), line(_STATE_UPDATES[REQUIRES_ACTION]))
        return lines

    def _state_line(self, state: SessionState) -> bytes:
        return self._running_line if state is RUNNING else self._requires_action_line

    @property
    def busy(self) -> bool:
        """True while foreground work runs or accepted prompts wait to run."""
        return self._machine.busy

    @property
    def closed(self) -> bool:
        """The session is closed: no prompt is accepted any more."""
        return self._machine.closed

    @closed.setter
    def closed(self, closed: bool) -> None:
        self._machine.closed = closed

    @property
    def state(self) -> SessionState:
        """The state the session is in (its update may be on its way)."""
        return self._machine.state

    @property
    def reported_state(self) -> SessionState:
        """The last state whose update was queued for the client."""
        return self._machine.reported_state

    # ---------------------------------------------------------------- prompts

    def accept_prompt(
        self,
        prompt: list[schema.ContentBlock],
        *,
        answer_ends_turn: bool = False,
        meta: dict[str, object] | None = None,
    ) -> Work:
        """Insert a user prompt: it gets a ``messageId`` and runs after the work in front.

        The runner announces it only after :meth:`prompt_responded`, so the
        ``session/prompt`` response always precedes its ``user_message``.
        ``answer_ends_turn``: the prompt's answer is its turn's end on the wire
        (:meth:`prompt_answered`), so the next turn waits for it. ``meta`` is the
        request's ``_meta`` (a traced turn continues the client's trace context).

        :raises RequestError: when the session is closed (``-32002``) or too
            many prompts are queued (``-32603``).
        """
        if self.closed:
            raise RequestError.session_not_found(self.session_id)
        waiting = self._machine.waiting
        if waiting >= self.limits.max_queued_prompts:
            raise RequestError.internal_error(
                f"Session {self.session_id} already has {waiting} "
                f"queued prompts (limit {self.limits.max_queued_prompts}); wait for idle or "
                "cancel"
            )
        work = Work(message_id=new_id("msg"), prompt=prompt, meta=meta)
        self._machine.accept(work, answer_ends_turn=answer_ends_turn)
        return work

    def prompt_responded(self, work: Work) -> None:
        """The response to ``work``'s ``session/prompt`` was queued: its turn may go on."""
        self._act(self._machine.responded(work), work)

    def prompt_answered(self, work: Work) -> None:
        """The answer to ``work``'s ``session/prompt``, which ends it on the wire, was queued.

        Only for work accepted with ``answer_ends_turn``: the next turn waits for it.
        """
        self._act(self._machine.answered(work), work)

    def withdraw(self, work: Work) -> None:
        """The client withdrew ``work``'s ``session/prompt`` request itself."""
        self._act_all(self._machine.withdraw(work))

    def cancel_received_through(self, received: int) -> None:
        """A ``session/cancel`` arrived as the connection's ``received``-th message.

        Prompts received before it are cancelled too, even those whose request
        handler has not run yet (requests run in tasks, notifications inline).
        """
        self._cancelled_through = received

    def cancelled_by_earlier_cancel(self, sequence: int) -> bool:
        """Whether the prompt received as message ``sequence`` preceded the last cancel."""
        return sequence < self._cancelled_through

    # ---------------------------------------------------------------- actions

    def _act(self, action: Action, work: Work | None) -> None:
        """Carry out one action of the machine."""
        if action is Action.RUN_RUNNER:
            self._context = contextvars.copy_context()
            self._kick()
            return
        if action is Action.WAKE:
            self._kick()
            return
        assert work is not None  # every other action is about one turn
        if action is Action.END:
            work.ended.set()
        elif action is Action.CANCEL_HANDLER:
            work.scope.cancel()
        elif action is Action.START_WATCHDOG:
            self._task_group.start_soon(self._cancel_watchdog, work)
        elif action is Action.RUN_HANDLER:
            context = self._context
            if context is None:
                self._task_group.start_soon(self._work_task, work)
            else:
                context.run(self._task_group.start_soon, self._work_task, work)
        elif action is Action.SKIP_HANDLER:
            work.done.set()
        else:  # Action.ABANDONED
            logger.warning(
                "work in session %s ignored cancellation for %.1fs; reporting it cancelled",
                self.session_id,
                self.limits.cancel_grace,
            )

    def _act_all(self, actions: list[tuple[Action, Work | None]]) -> None:
        """Carry out the machine's actions, in order."""
        for action, work in actions:
            self._act(action, work)

    # ----------------------------------------------------------------- runner

    def _kick(self) -> None:
        """Start the runner when there is work and none runs.

        A runner that runs asks the machine again after the step it is taking
        (it never waits for an event: it ends when the machine answers
        :attr:`Step.WAIT`), so it sees whatever happened meanwhile.
        """
        if not self._runner_active and self.busy:
            self._runner_active = True
            self._task_group.start_soon(self._run)

    async def _run(self) -> None:
        """The runner: every turn message of this session, in order (see the module doc).

        At most one task is the runner at a time (``_runner_active``); it takes
        steps until there is nothing to do now, then has what it queued written
        (``write_queued``; it looks again if that waited). Whatever gives it
        something to do again starts it (:meth:`_kick`), and a turn's handler
        task that ends takes the runner's place itself when none runs: a turn's
        end goes out without a hand-off to another task, so under load turns end
        in the order they ran instead of all together.
        """
        write_queued = self._updates.connection.write_queued
        try:
            while True:
                while await self._step():
                    pass
                # What the steps queued (a turn's end above all) goes out now, before the
                # other tasks ready to run, where the transport lets this task write it.
                if not await write_queued():
                    break
        except ConnectionClosed:
            self.drop_all()
        except Exception:
            logger.exception("the prompt lifecycle of session %s failed", self.session_id)
            self.drop_all()
        except BaseException:
            # Cancelled (the agent is shutting down): nothing more goes out.
            self.drop_all()
            raise
        finally:
            self._runner_active = False
            self.notify_idle()

    def notify_idle(self) -> None:
        """Wake :meth:`wait_idle` callers once nothing is left to run."""
        if self._idle_event is not None and not self.busy:
            self._idle_event.set()
            self._idle_event = None

    async def _step(self) -> bool:
        """Take the machine's next step; False when there is nothing to do now."""
        step, work = self._machine.next_step()
        if step is Step.WAIT or step is Step.STOP:
            return False
        if step is Step.ANNOUNCE:
            assert work is not None
            await self._updates.send(
                schema.UserMessage(message_id=work.message_id, content=work.prompt)
            )
        elif step is Step.START:
            assert work is not None
            await self.set_state(RUNNING)
            self._act(self._machine.running_reported(work), work)
        elif step is Step.FINISH:
            assert work is not None
            await self._finish(work)
        return True

    async def _work_task(self, work: Work) -> None:
        """Run the agent's handler for ``work`` and report its outcome to the machine."""
        current_work.set(work)
        outcome: TurnEnding = CANCELLED
        observer = self.observer
        restore: Restore | None = None
        if observer is not None:
            # The handler runs in the turn's trace context: spans it makes nest under the turn.
            try:
                trace = work.trace = observer.turn(work.meta)
                restore = trace.enter()
            except Exception:  # a broken exporter setup never stops the turn
                logger.exception("could not trace a turn of session %s", self.session_id)
        try:
            with work.scope:
                result = await self.runner.run_prompt(work.prompt)
                outcome = (_stop_reason(result), None)
            if work.scope.cancelled_caught:
                outcome = CANCELLED
        except Exception as exc:
            if work.cancel_requested:
                # Aborted operations raise; the protocol wants them reported as cancelled.
                outcome = CANCELLED
            else:
                logger.exception("prompt handler of session %s failed", self.session_id)
                if work.trace is not None:
                    work.trace.failed(exc)
                message = _short(f"{type(exc).__name__}: {exc}")
                outcome = ("error", schema.Error(code=INTERNAL_ERROR, message=message))
        except BaseException:
            # Cancelled from outside (the session shuts down): a runner task drops the turn.
            if restore is not None:
                restore()
                restore = None
            work.done.set()
            self._act(self._machine.handler_ended(work, outcome), work)
            raise
        finally:
            if restore is not None:
                restore()
        work.done.set()
        self._machine.handler_ended(work, outcome)
        if not self._runner_active:
            # This task takes the runner's place: the turn ends without a hand-off.
            current_work.set(None)
            self._runner_active = True
            await self._run()

    async def _finish(self, work: Work) -> None:
        """Close out foreground work: finalize its handles, then exactly one idle."""
        assert work.outcome is not None
        stop_reason, error = work.outcome
        with anyio.CancelScope(shield=True):
            token = current_work.set(work)
            try:
                await _finalize_handles(work, stop_reason)
                self._machine.idle_due()
                await self._updates.send(
                    schema.IdleStateUpdate(
                        stop_reason=stop_reason, error=UNSET if error is None else error
                    )
                )
            except ConnectionClosed:
                raise
            except Exception:
                logger.exception("could not report the end of work in session %s", self.session_id)
            finally:
                if work.trace is not None:
                    work.trace.end(stop_reason)
                self._act(self._machine.idle_sent(work), work)
                current_work.reset(token)

    def drop_all(self) -> None:
        """Nothing more may be sent: end every work item without a word."""
        for work in self._machine.drop_all():
            work.scope.cancel()
            work.ended.set()
            if work.trace is not None:
                work.trace.end("cancelled")

    # ------------------------------------------------------------ cancelling

    def cancel(self) -> None:
        """Cancel the foreground work and discard queued prompts (``session/cancel``)."""
        self._act_all(self._machine.cancel())

    async def _cancel_watchdog(self, work: Work) -> None:
        """Report ``work`` cancelled once it ignored cancellation for the grace period."""
        with anyio.move_on_after(self.limits.cancel_grace):
            await work.done.wait()
        self._act_all(self._machine.watchdog_expired(work))

    def abandon(self) -> None:
        """Report cancelled work that still runs as cancelled now (shutdown)."""
        self._act_all(self._machine.abandon())

    async def wait_idle(self) -> None:
        """Wait until no foreground work runs and no accepted prompt waits to run."""
        while self.busy:
            if self._idle_event is None:
                self._idle_event = anyio.Event()
            await self._idle_event.wait()

    # ------------------------------------------------------------ permissions

    def permission_started_now(self) -> bool:
        """A question to the user (permission, elicitation) goes out: ``requires_action`` for
        the turn, if that needs no waiting; False when the caller must ``await
        set_state(REQUIRES_ACTION)`` (:meth:`acpio._session.channel.SessionChannel.ask` does).

        :raises LocalProtocolError: when too many are pending in the session.
        """
        if self._pending_permissions >= self.limits.max_pending_permissions:
            raise LocalProtocolError(
                f"too many pending permission requests in session {self.session_id} "
                f"(limit {self.limits.max_pending_permissions})"
            )
        self._pending_permissions += 1
        work = current_work.get()
        if work is None:
            return True  # not foreground work: the session state does not change
        if not self._machine.permission_asked(work) or self._updates.try_send_state(
            self._requires_action_line
        ):
            return True
        self._machine.report_failed()
        return False

    def permission_finished_now(self) -> bool:
        """The question was answered (or withdrawn): ``running`` again for the turn, if that
        needs no waiting; False when the caller must ``await set_state(RUNNING)``, shielded."""
        self._pending_permissions -= 1
        work = current_work.get()
        if work is None:
            return True
        if not self._machine.permission_answered(work) or self._updates.try_send_state(
            self._running_line
        ):
            return True
        self._machine.report_failed()
        return False

    async def set_state(self, state: SessionState) -> None:
        """Report ``state`` (``running`` or ``requires_action``) unless it is the current one."""
        if self._set_state_now(state):
            return
        self._machine.state_queued(state)
        await self._updates.send_state(self._state_line(state))
        self._machine.state_sent(state)

    def _set_state_now(self, state: SessionState) -> bool:
        """Report ``state`` if that needs no waiting; False when :meth:`set_state` must."""
        if not self._machine.report_due(state, current_work.get()):
            return True
        if not self._updates.try_send_state(self._state_line(state)):
            return False
        self._machine.state_reported(state)
        return True

    def state_snapshot(self) -> schema.SessionUpdate:
        """The state the client was last told, as ``session/resume`` repeats it.

        A repeated idle carries no stop reason: it is not a new end of work.
        """
        if self._machine.reported_state is IDLE:
            return schema.IdleStateUpdate()
        return _STATE_UPDATES[self._machine.reported_state]


#: The two state updates a turn reports mid-way: they carry no fields, so they are shared.
_STATE_UPDATES: Final[dict[SessionState, schema.SessionUpdate]] = {
    RUNNING: schema.RunningStateUpdate(),
    REQUIRES_ACTION: schema.RequiresActionStateUpdate(),
}


#: The note a tool call the agent left open gets when its turn ends.
UNFINISHED_NOTE: Final = (
    "The agent did not finish this tool call before its turn ended; it is shown failed."
)


async def _finalize_handles(work: Work, stop_reason: str) -> None:
    for flush in work.terminal_flushes:
        await flush()
    if stop_reason in ("cancelled", "error"):
        final_status = "cancelled" if stop_reason == "cancelled" else "failed"
        for finish in work.tool_call_finishers:
            await finish(final_status, None)
        return
    # A call opened without `async with` and never finished would stay pending in the
    # editor forever: it ends failed, and says why (a call already final is left alone).
    for finish in work.tool_call_finishers:
        await finish("failed", UNFINISHED_NOTE)


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
