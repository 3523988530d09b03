"""The turn lifecycle of a session as a transition function: events in, actions out.

No I/O, no tasks, no clock: :class:`TurnMachine` only records what happened
to a session's turns and answers with what must happen next. The agent and
the observers of its wire run the same machine (docs/architecture.md, "One
turn model"). :class:`~acpio._session.turn.Turns` (the agent side) feeds it
the events of a session and executes its answers (sends the updates, runs the
handlers, starts the cancel watchdog). The conformance checkers
(:mod:`acpio.testing._session_rules`, :mod:`acpio.testing._v1_rules`) and the
mock client (:mod:`acpio.testing._client_session`) feed it what they see on
the wire, the facts each protocol version shows: prompts sent, refused or
accepted (:meth:`TurnMachine.prompt_sent`, :meth:`TurnMachine.prompt_refused`),
cancels sent (:meth:`TurnMachine.cancel_sent`), state updates classified by
:func:`transition` (:meth:`TurnMachine.observe_start`,
:meth:`TurnMachine.observe_idle`) or, where a version shows none, the answers
that end turns (:meth:`TurnMachine.observe_answer`); they read back which
turn runs and the stop reason its end had to carry.

A session reports one of three :class:`SessionState`\\ s. A turn (one
accepted prompt, :class:`TurnRecord`) goes through the :class:`Phase`\\ s in
order: accepted, responded (its ``session/prompt`` response was queued),
announced (its ``user_message`` went out), started (``running`` was
reported and its handler runs), ended (it has an outcome: the handler
returned or failed, or it was reported cancelled), finished (its ``idle``
went out). The invariants the machine keeps:

* a turn's ``user_message`` goes out after its prompt's response, in
  acceptance order (:meth:`TurnMachine.next_step` announces only a responded
  turn, the oldest first);
* turns run one at a time in acceptance order; a turn reports ``running``
  before anything else of it, in particular before ``requires_action``;
* ``requires_action`` is reported only for the running current turn while a
  request to the user is pending, ``running`` again once it is answered;
* every started turn ends with exactly one ``idle`` carrying its stop reason,
  ``cancelled`` when ``session/cancel`` reached it before its idle;
* nothing of a turn goes out after its idle (:attr:`TurnRecord.finished`);
* ``session/cancel`` cancels the current turn and discards the queued ones
  (they were announced or will be, but never run);
* where a prompt's answer ends its turn on the wire
  (:attr:`TurnRecord.awaiting_answer`), the next turn starts only after it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Generic, TypeVar

from .. import schema

__all__ = [
    "CANCELLED",
    "IDLE",
    "REQUIRES_ACTION",
    "RUNNING",
    "Action",
    "TurnEnding",
    "Phase",
    "SessionState",
    "Step",
    "Transition",
    "TurnRecord",
    "TurnMachine",
    "transition",
]


class SessionState(enum.Enum):
    """The state a session reports to the client (``state_update``)."""

    IDLE = "idle"
    RUNNING = "running"
    REQUIRES_ACTION = "requires_action"

    # Members are singletons compared by identity: the identity hash, in C, keeps the
    # state lookups of every permission round trip cheap (Enum's own hash runs Python code).
    if TYPE_CHECKING:

        def __hash__(self) -> int: ...

    else:
        __hash__ = object.__hash__


# The states as module constants: an Enum member read through its class costs a
# Python-level lookup (about 0.2 us here), the permission path reads several per request.
IDLE: Final = SessionState.IDLE
RUNNING: Final = SessionState.RUNNING
REQUIRES_ACTION: Final = SessionState.REQUIRES_ACTION


class Transition(enum.Enum):
    """What a reported state does to the session's turn (:func:`transition`)."""

    START = "start"
    """From idle to work: a turn begins (``running`` precedes all of its output)."""
    BLOCK = "block"
    """``running`` to ``requires_action``: the turn waits on the user."""
    RESUME = "resume"
    """``requires_action`` to ``running``: the turn goes on."""
    END = "end"
    """From work to idle: the turn's one ``idle``, which carries its stop reason."""
    REPEAT = "repeat"
    """The state the session is in already: it starts and ends nothing."""


_TRANSITIONS: Final[dict[tuple[SessionState, SessionState], Transition]] = {
    (IDLE, RUNNING): Transition.START,
    (IDLE, REQUIRES_ACTION): Transition.START,
    (RUNNING, REQUIRES_ACTION): Transition.BLOCK,
    (REQUIRES_ACTION, RUNNING): Transition.RESUME,
    (RUNNING, IDLE): Transition.END,
    (REQUIRES_ACTION, IDLE): Transition.END,
}


def transition(current: SessionState, new: SessionState) -> Transition:
    """What reporting ``new`` in state ``current`` does to the turn."""
    return _TRANSITIONS.get((current, new), Transition.REPEAT)


class Phase(enum.Enum):
    """Where a turn is in its lifecycle (see the module doc), derived from its record."""

    ACCEPTED = "accepted"
    RESPONDED = "responded"
    ANNOUNCED = "announced"
    STARTED = "started"
    ENDED = "ended"
    FINISHED = "finished"


#: How a turn ended: its stop reason and, for ``error``, the error it reports.
TurnEnding = tuple[str, "schema.Error | None"]

CANCELLED: Final[TurnEnding] = ("cancelled", None)


@dataclass(eq=False)
class TurnRecord:
    """One accepted prompt as the machine tracks it; its fields change only in the machine."""

    message_id: str
    responded: bool = False
    announced: bool = False
    started: bool = False
    #: Discarded by ``session/cancel`` (or withdrawn) while queued: it never runs.
    discarded: bool = False
    cancel_requested: bool = False
    outcome: TurnEnding | None = None
    #: Its idle went out (or it was dropped): nothing of it may reach the client any more.
    finished: bool = False
    #: Requests to the user it has pending (they back ``requires_action``).
    pending_permissions: int = 0
    #: Its prompt's answer ends it on the wire: the next turn starts after that answer.
    awaiting_answer: bool = False
    #: For an observer: the number of the first cancel sent after its prompt (0: none yet).
    cancel_mark: int = 0

    @property
    def phase(self) -> Phase:
        """The furthest phase the turn reached."""
        if self.finished:
            return Phase.FINISHED
        if self.outcome is not None:
            return Phase.ENDED
        if self.started:
            return Phase.STARTED
        if self.announced:
            return Phase.ANNOUNCED
        return Phase.RESPONDED if self.responded else Phase.ACCEPTED


class Step(enum.Enum):
    """What the driver's runner does next (:meth:`TurnMachine.next_step`)."""

    ANNOUNCE = "announce"
    """Send the turn's ``user_message``."""
    START = "start"
    """Report ``running`` for the turn, then tell :meth:`TurnMachine.running_reported`."""
    FINISH = "finish"
    """Finalize the turn's tool calls and terminals, then send its idle with
    the outcome it has now (:meth:`TurnMachine.idle_due`, :meth:`TurnMachine.idle_sent`)."""
    WAIT = "wait"
    """Nothing to do now: the runner ends, and the next event starts it again."""
    STOP = "stop"
    """Nothing left: the runner ends (the next responded prompt starts it again)."""


class Action(enum.Enum):
    """What an event asks of the driver at once, each about one turn (or none)."""

    RUN_RUNNER = "run_runner"
    """A prompt was answered: the runner has something to do (start it if none runs)."""
    WAKE = "wake"
    """The runner has something to look at again (start it if none runs)."""
    RUN_HANDLER = "run_handler"
    """Run the turn's handler; tell :meth:`TurnMachine.handler_ended` how it ended."""
    SKIP_HANDLER = "skip_handler"
    """The turn was cancelled before its handler ran: it never runs (its outcome is set)."""
    CANCEL_HANDLER = "cancel_handler"
    """Cancel the turn's handler (and all it started)."""
    START_WATCHDOG = "start_watchdog"
    """Tell :meth:`TurnMachine.watchdog_expired` after the grace period, unless the handler
    ended first."""
    ABANDONED = "abandoned"
    """The handler ignored cancellation for the grace period: it is reported cancelled."""
    END = "end"
    """The turn is over for its prompt (discarded, withdrawn, finished or dropped)."""


TurnT = TypeVar("TurnT", bound=TurnRecord)
_BOTH_IDLE: Final = (IDLE, IDLE)  # one tuple for every machine
Actions = list[tuple[Action, "TurnT | None"]]


class TurnMachine(Generic[TurnT]):
    """The turns of one session and the state it reports (see the module doc).

    Every method is one event; it returns the :class:`Action`\\ s the driver
    carries out, in order. :meth:`next_step` is the runner's question.
    """

    __slots__ = (
        "_before",
        "_cancels",
        "closed",
        "current",
        "queue",
        "reported_state",
        "state",
        "unannounced",
    )

    def __init__(self) -> None:
        #: Accepted turns whose ``user_message`` did not go out yet, oldest first.
        #: (Lists, not deques: a few turns at most, and an empty deque costs 760 bytes
        #: per session, a list 56.)
        self.unannounced: list[TurnT] = []
        #: Turns waiting behind :attr:`current`, in acceptance order.
        self.queue: list[TurnT] = []
        #: The turn that runs (or is next to, or has just finished and holds the next back).
        self.current: TurnT | None = None
        #: The state the session is in (its update may still be on its way).
        self.state: SessionState = IDLE
        #: The last state whose update was queued for the client.
        self.reported_state: SessionState = IDLE
        #: The session is closed: nothing is accepted, and no turn waits for an answer.
        self.closed: bool = False
        self._before: tuple[SessionState, SessionState] = _BOTH_IDLE
        #: For an observer: how many cancels it saw sent (the agent's machines never count).
        self._cancels = 0

    @property
    def busy(self) -> bool:
        """True while a turn runs or accepted turns wait to run or be announced."""
        return self.current is not None or bool(self.unannounced) or bool(self.queue)

    @property
    def waiting(self) -> int:
        """How many accepted turns wait (to be announced or to run)."""
        return len(self.queue) + len(self.unannounced)

    # ---------------------------------------------------------------- prompts

    def accept(self, turn: TurnT, *, answer_ends_turn: bool = False) -> None:
        """A prompt was accepted as ``turn``: it runs after the turns in front of it.

        ``answer_ends_turn``: the prompt's answer is the end of its turn on the
        wire, so the next turn waits for :meth:`answered`.
        """
        turn.awaiting_answer = answer_ends_turn
        self.unannounced.append(turn)
        if self.current is None:
            self.current = turn
        else:
            self.queue.append(turn)

    def responded(self, turn: TurnT) -> Action:
        """``turn``'s prompt response was queued: its ``user_message`` may go out."""
        turn.responded = True
        return Action.RUN_RUNNER

    def answered(self, turn: TurnT) -> Action:
        """``turn``'s prompt answer (which ends it on the wire) was queued."""
        turn.awaiting_answer = False
        return Action.WAKE

    def withdraw(self, turn: TurnT) -> Actions[TurnT]:
        """The client withdrew ``turn``'s prompt request: cancel it, or drop it from the queue."""
        if turn is self.current:
            return self.cancel()
        if turn in self.queue:
            self.queue.remove(turn)
            turn.discarded = True
            return [(Action.END, turn)]
        return []

    # ----------------------------------------------------------------- runner

    def next_step(self) -> tuple[Step, TurnT | None]:
        """The runner's next step; the machine counts it as taken (see :class:`Step`)."""
        current = self.current
        if current is not None and current.finished:
            if self._holds_next(current):
                return Step.WAIT, None
            current = self._advance()
        unannounced = self.unannounced
        if unannounced:
            if not unannounced[0].responded:
                return Step.WAIT, None
            turn = unannounced.pop(0)
            turn.announced = True
            return Step.ANNOUNCE, turn
        if current is None:
            return Step.STOP, None
        if not current.started:
            current.started = True
            return Step.START, current
        if current.outcome is None:
            return Step.WAIT, None
        return Step.FINISH, current

    def running_reported(self, turn: TurnT) -> Action:
        """``running`` was reported for ``turn`` (:attr:`Step.START`): run it, unless cancelled."""
        if turn.cancel_requested:
            turn.outcome = CANCELLED
            return Action.SKIP_HANDLER
        return Action.RUN_HANDLER

    def handler_ended(self, turn: TurnT, outcome: TurnEnding) -> Action:
        """``turn``'s handler ended with ``outcome`` (``cancelled`` if cancel reached it first).

        The first outcome counts: a handler that ends after being reported
        cancelled changes nothing.
        """
        if turn.outcome is None:
            turn.outcome = CANCELLED if turn.cancel_requested else outcome
        return Action.WAKE

    def idle_due(self) -> None:
        """The current turn's idle goes out now (with the outcome it had at
        :attr:`Step.FINISH`, its tool calls and terminals finalized): the session is idle."""
        self.state = IDLE

    def idle_sent(self, turn: TurnT) -> Action:
        """``turn``'s idle was queued (or could not be): the turn is over."""
        self.state = self.reported_state = IDLE
        turn.finished = True
        if not self._holds_next(turn):
            self._advance()
        return Action.END

    def _holds_next(self, finished: TurnT) -> bool:
        # The finished turn's answer ends it on the wire: the next one waits for it.
        return finished.awaiting_answer and bool(self.queue) and not self.closed

    def _advance(self) -> TurnT | None:
        self.current = self.queue.pop(0) if self.queue else None
        return self.current

    def drop_all(self) -> list[TurnT]:
        """Nothing more may be sent: every turn ends without a word (cancelled, finished)."""
        dropped = [*self.unannounced, *self.queue]
        if self.current is not None:
            dropped.append(self.current)
        for turn in dropped:
            turn.cancel_requested = True
            turn.finished = True
        self.unannounced.clear()
        self.queue.clear()
        self.current = None
        return dropped

    # ------------------------------------------------------------ cancelling

    def cancel(self) -> Actions[TurnT]:
        """``session/cancel``: discard the queued turns, cancel the current one."""
        actions: Actions[TurnT] = []
        for queued in self.queue:
            queued.discarded = True
            actions.append((Action.END, queued))
        self.queue.clear()
        actions.append((Action.WAKE, None))  # a runner holding the next turn back goes on
        turn = self.current
        if turn is None or turn.finished or turn.cancel_requested:
            return actions
        turn.cancel_requested = True
        actions.append((Action.CANCEL_HANDLER, turn))
        if turn.outcome is not None:
            # Ended but not yet reported: the idle after a cancel says cancelled.
            turn.outcome = CANCELLED
        elif turn.started:
            actions.append((Action.START_WATCHDOG, turn))
        actions.append((Action.WAKE, None))
        return actions

    def watchdog_expired(self, turn: TurnT) -> Actions[TurnT]:
        """The cancel grace period of ``turn`` is over: report it cancelled if it still runs."""
        if turn.outcome is not None:
            return []
        turn.outcome = CANCELLED
        return [(Action.ABANDONED, turn), (Action.WAKE, None)]

    def abandon(self) -> Actions[TurnT]:
        """Shutdown: a current turn still running is cancelled and reported cancelled now."""
        turn = self.current
        if turn is None or not turn.started or turn.outcome is not None:
            return []
        turn.cancel_requested = True
        turn.outcome = CANCELLED
        return [(Action.CANCEL_HANDLER, turn), (Action.WAKE, None)]

    # ------------------------------------------------------------- the state

    def report_due(self, state: SessionState, turn: TurnT | None) -> bool:
        """Whether ``state``, reported on behalf of ``turn``, needs an update.

        Not when the session is in it already, nor for a finished turn: its
        state updates are dropped with the rest of it.
        """
        return transition(self.state, state) is not Transition.REPEAT and not (
            turn is not None and turn.finished
        )

    def state_queued(self, state: SessionState) -> None:
        """``state``'s update is on its way (the session is in it; the client is told soon)."""
        self.state = state

    def state_sent(self, state: SessionState) -> None:
        """The update :meth:`state_queued` announced was queued for the client."""
        self.reported_state = state

    def state_reported(self, state: SessionState) -> None:
        """``state``'s update was queued for the client at once: the session is in it."""
        self.state = self.reported_state = state

    def permission_asked(self, turn: TurnT) -> bool:
        """``turn`` sends a request to the user: whether ``requires_action`` is due.

        Only the first pending request of the running current turn blocks it;
        a cancelled or finished turn reports nothing more. A due state counts
        as reported from here on: the driver sends it at once, or calls
        :meth:`report_failed` and sends it the slow way (:meth:`report_due`).
        """
        turn.pending_permissions += 1
        if (
            turn.pending_permissions != 1
            or turn is not self.current
            or turn.finished
            or turn.cancel_requested
            or self.state is REQUIRES_ACTION
        ):
            return False
        # Counted as reported before it is sent (report_failed undoes it), and written
        # out in both methods: the driver then makes one call per direction. Measured
        # with benchmarks/instructions.py permission 500 1500: 101.0k instructions per
        # round trip with set_state_now() written out in Turns (before the machine),
        # 102.0k this way, 103.5k with a shared helper.
        self._before = (self.state, self.reported_state)
        self.state = self.reported_state = REQUIRES_ACTION
        return True

    def permission_answered(self, turn: TurnT) -> bool:
        """``turn``'s request was answered or withdrawn: whether ``running`` is due.

        The task that asked resumes now: that is progress, so ``running`` is
        reported before it shows, even while other requests of the turn wait.
        A due state counts as reported, as for :meth:`permission_asked`.
        """
        turn.pending_permissions -= 1
        if (
            turn is not self.current
            or turn.finished
            or turn.cancel_requested
            or self.state is RUNNING
        ):
            return False
        self._before = (self.state, self.reported_state)
        self.state = self.reported_state = RUNNING
        return True

    def report_failed(self) -> None:
        """The state :meth:`permission_asked` or :meth:`permission_answered` found due
        could not be sent at once: the session is as it was before."""
        self.state, self.reported_state = self._before

    # ------------------------------------------------------ seen from outside
    #
    # An observer (the conformance checkers, the mock client) sees the wire, not the
    # agent's tasks: it feeds the facts its protocol version shows (prompts sent and
    # answered, cancels sent, the state updates where a version has them, the answers
    # that end turns where it has not) and reads the turns back. It never calls
    # next_step: :attr:`current` is the oldest prompt sent whose turn has not ended,
    # :attr:`queue` the prompts behind it.

    @property
    def unstarted(self) -> list[TurnT]:
        """For an observer: the prompts sent (not refused) whose turn did not start, oldest
        first."""
        current = self.current
        if current is not None and not current.started and not current.finished:
            return [current, *self.queue]
        return list(self.queue)

    @property
    def running(self) -> TurnT | None:
        """For an observer: the turn that started and has not ended, if any."""
        current = self.current
        if current is not None and current.started and not current.finished:
            return current
        return None

    def prompt_sent(self, turn: TurnT) -> None:
        """An observer saw ``turn``'s prompt go out: it runs after the turns sent before it."""
        if self.current is None:
            self.current = turn
        else:
            self.queue.append(turn)

    def prompt_refused(self, turn: TurnT) -> None:
        """``turn``'s prompt was answered with an error before it started: it never runs."""
        if turn.started:
            return
        turn.discarded = turn.finished = True
        if turn is self.current:
            self._advance()
        elif turn in self.queue:
            self.queue.remove(turn)

    def cancel_sent(self) -> int:
        """An observer saw ``session/cancel`` (or a close) go out; returns its number.

        It reaches every turn whose prompt was sent and that has not ended (its
        :attr:`TurnRecord.cancel_mark` is the first cancel that reached it).
        Unlike :meth:`cancel`, which the agent calls when it reads the cancel,
        nothing is discarded yet: the agent may end the running turn before it
        reads the cancel. :meth:`observe_idle` discards the queued turns once
        the wire shows the cancel ended a turn.
        """
        self._cancels += 1
        current = self.current
        for turn in (current, *self.queue) if current is not None else self.queue:
            if not turn.finished and not turn.cancel_mark:
                turn.cancel_mark = self._cancels
                turn.cancel_requested = True
        return self._cancels

    def observe_start(self, turn: TurnT, state: SessionState) -> TurnT:
        """An observer saw ``state`` start a turn (:attr:`Transition.START`); returns it.

        Turns run in the order their prompts were sent: the oldest unstarted
        one starts, or ``turn`` when no prompt waits (work the agent started
        on its own, or prompts the observer was not told of).
        """
        current = self.current
        if current is not None and not current.started and not current.finished:
            turn = current
        else:
            self.current = turn
        turn.responded = turn.announced = turn.started = True
        self.state_reported(state)
        return turn

    def observe_end(self, stop_reason: str) -> TurnT | None:
        """An observer saw the idle that ends the current turn, with ``stop_reason``.

        Returns the turn it ended, its :attr:`TurnRecord.outcome` the one the
        machine allowed (``cancelled`` if a cancel reached the turn), or
        ``None`` when no started turn was current (an idle that ends nothing).
        """
        return self.observe_idle(stop_reason)[0]

    def observe_idle(self, stop_reason: str) -> tuple[TurnT | None, list[TurnT]]:
        """:meth:`observe_end`, and the queued turns the same idle ended.

        When the turn ends ``cancelled`` and a cancel reached it, that cancel
        took effect: the turns queued behind it that it reached too are
        discarded (they end with this idle, never run).
        """
        turn = self.current
        if turn is None or not turn.started or turn.finished:
            self.state_reported(IDLE)
            return None, []
        self.handler_ended(turn, (stop_reason, None))
        self.idle_due()
        self.idle_sent(turn)
        discarded: list[TurnT] = []
        mark = turn.cancel_mark
        if stop_reason == "cancelled" and mark:
            discarded = [queued for queued in self.unstarted if queued.cancel_mark == mark]
            for queued in discarded:
                self.prompt_refused(queued)
        return turn, discarded

    def observe_answer(self, turn: TurnT, stop_reason: str) -> list[TurnT]:
        """An observer saw the answer that ends ``turn`` on the wire (where a version shows
        no state updates, the prompt's answer is the end of its turn).

        ``turn`` started when it became current (unseen on the wire) and ends
        now, with the outcome the machine allows; returns the queued turns the
        same answer ended (see :meth:`observe_idle`).
        """
        if turn.finished:
            return []
        if turn is not self.current:
            # Answered out of order: it leaves the queue, the turn in front goes on.
            if turn in self.queue:
                self.queue.remove(turn)
            turn.started = True
            self.handler_ended(turn, (stop_reason, None))
            turn.finished = True
            return []
        if not turn.started:
            self.observe_start(turn, RUNNING)
        return self.observe_idle(stop_reason)[1]
