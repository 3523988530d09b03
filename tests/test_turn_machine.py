"""The turn machine without I/O: sequences of events, the actions and the wire they lead to.

:class:`Driver` plays the part of :class:`~acpio._session.turn.Turns`: it
feeds the machine events, carries out its actions and writes down what would
go to the client (``user_message``, state updates, idles). The examples pin
the sequences that matter (cancel before start, cancel during a permission,
a handler error, the watchdog, queued prompts discarded by cancel, a turn
whose answer ends it); the property runs arbitrary interleavings and checks
the protocol's invariants on the wire they produce.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from acpio import schema
from acpio._session.turn_machine import (
    CANCELLED,
    Action,
    Phase,
    SessionState,
    Step,
    Transition,
    TurnEnding,
    TurnMachine,
    TurnRecord,
    transition,
)

IDLE = SessionState.IDLE
RUNNING = SessionState.RUNNING
REQUIRES_ACTION = SessionState.REQUIRES_ACTION


@dataclass
class Driver:
    """Turns without I/O: every send is an entry of :attr:`wire`, every task a flag."""

    machine: TurnMachine[TurnRecord] = field(default_factory=TurnMachine[TurnRecord])
    wire: list[tuple[str, str, str]] = field(default_factory=list[tuple[str, str, str]])
    turns: list[TurnRecord] = field(default_factory=list[TurnRecord])
    handlers: set[str] = field(default_factory=set[str])  # turns whose handler runs
    watchdogs: set[str] = field(default_factory=set[str])
    ended: set[str] = field(default_factory=set[str])
    asked: dict[str, int] = field(default_factory=dict[str, int])  # pending permissions
    #: A step the runner is in the middle of (its send awaited): ("start"|"finish", turn).
    pending: tuple[str, TurnRecord, TurnEnding | None] | None = None
    running_queued: bool = False
    responded_before: dict[str, int] = field(default_factory=dict[str, int])
    #: Turns whose answer ends them, and where on the wire their answer went out.
    answer_ends: set[str] = field(default_factory=set[str])
    answered_at: dict[str, int] = field(default_factory=dict[str, int])
    closed_at: int | None = None
    #: A count of events: when each turn was accepted, when its idle was decided
    #: (:attr:`Step.FINISH`), when cancels (or withdrawals of the current turn) came.
    clock: int = 0
    accepted_at: dict[str, int] = field(default_factory=dict[str, int])
    finishing_at: dict[str, int] = field(default_factory=dict[str, int])
    cancels: list[int] = field(default_factory=list[int])

    # -- events --------------------------------------------------------------------------------

    def accept(self, *, answer_ends_turn: bool = False) -> TurnRecord:
        turn = TurnRecord(message_id=f"m{len(self.turns)}")
        self.accepted_at[turn.message_id] = self.clock
        self.turns.append(turn)
        self.machine.accept(turn, answer_ends_turn=answer_ends_turn)
        if answer_ends_turn:
            self.answer_ends.add(turn.message_id)
        return turn

    def respond(self, turn: TurnRecord) -> None:
        self.responded_before[turn.message_id] = len(self.wire)
        self.act([(self.machine.responded(turn), turn)])

    def answer(self, turn: TurnRecord) -> None:
        self.answered_at.setdefault(turn.message_id, len(self.wire))
        self.act([(self.machine.answered(turn), turn)])

    def cancel(self) -> None:
        self.cancels.append(self.clock)
        self.act(self.machine.cancel())

    def end_handler(self, turn: TurnRecord, outcome: TurnEnding) -> None:
        for _ in range(self.asked.get(turn.message_id, 0)):
            self.answer_permission(turn)
        self.handlers.discard(turn.message_id)
        self.act([(self.machine.handler_ended(turn, outcome), turn)])

    def expire_watchdog(self, turn: TurnRecord) -> None:
        self.watchdogs.discard(turn.message_id)
        self.act(self.machine.watchdog_expired(turn))

    def ask(self, turn: TurnRecord) -> None:
        self.asked[turn.message_id] = self.asked.get(turn.message_id, 0) + 1
        if self.machine.permission_asked(turn):
            self.wire.append(("state", "requires_action", turn.message_id))

    def answer_permission(self, turn: TurnRecord) -> None:
        self.asked[turn.message_id] -= 1
        if self.machine.permission_answered(turn):
            self.wire.append(("state", "running", turn.message_id))

    def act(self, actions: list[tuple[Action, TurnRecord | None]]) -> None:
        for action, turn in actions:
            name = turn.message_id if turn is not None else ""
            if action is Action.RUN_HANDLER:
                self.handlers.add(name)
            elif action is Action.START_WATCHDOG:
                self.watchdogs.add(name)
            elif action is Action.END:
                self.ended.add(name)
            elif action is Action.CANCEL_HANDLER:
                pass  # the handler ends when the test says so, as a real one may
            elif action is Action.SKIP_HANDLER:
                assert turn is not None and turn.outcome == CANCELLED

    # -- the runner ----------------------------------------------------------------------------

    def step(self) -> Step | None:
        """One runner step; a send in it completes at the next call (events may come between)."""
        machine = self.machine
        if self.pending is not None:
            kind, turn, outcome = self.pending
            self.pending = None
            if kind == "start":
                if self.running_queued:
                    machine.state_sent(RUNNING)
                self.act([(machine.running_reported(turn), turn)])
            else:
                assert outcome is not None
                machine.idle_due()
                self.wire.append(("idle", outcome[0], turn.message_id))
                self.act([(machine.idle_sent(turn), turn)])
            return None
        step, turn = machine.next_step()
        if step is Step.ANNOUNCE:
            assert turn is not None
            self.wire.append(("user_message", "", turn.message_id))
        elif step is Step.START:
            assert turn is not None
            self.running_queued = machine.report_due(RUNNING, None)
            if self.running_queued:
                machine.state_queued(RUNNING)
                self.wire.append(("state", "running", turn.message_id))
            self.pending = ("start", turn, None)
        elif step is Step.FINISH:
            assert turn is not None and turn.outcome is not None
            self.finishing_at[turn.message_id] = self.clock
            self.pending = ("finish", turn, turn.outcome)
        return step

    def run(self) -> None:
        """Run the runner until it waits or stops."""
        while self.step() not in (Step.WAIT, Step.STOP):
            pass

    def of(self, turn: TurnRecord) -> list[tuple[str, str]]:
        return [(kind, value) for kind, value, name in self.wire if name == turn.message_id]


def ended_with(turn: TurnRecord, stop_reason: str) -> TurnEnding:
    del turn
    return (stop_reason, None)


# -- examples ----------------------------------------------------------------------------------


def test_a_turn_announces_after_its_response_runs_and_ends_with_one_idle() -> None:
    driver = Driver()
    turn = driver.accept()
    driver.run()
    assert driver.wire == []  # no user_message before the response
    driver.respond(turn)
    driver.run()
    assert driver.of(turn) == [("user_message", ""), ("state", "running")]
    assert turn.phase is Phase.STARTED and turn.message_id in driver.handlers
    driver.end_handler(turn, ("end_turn", None))
    driver.run()
    assert driver.of(turn) == [("user_message", ""), ("state", "running"), ("idle", "end_turn")]
    assert turn.phase is Phase.FINISHED and turn.message_id in driver.ended
    assert driver.machine.next_step() == (Step.STOP, None)
    assert driver.machine.state is IDLE and not driver.machine.busy


def test_cancel_before_start_reports_running_then_cancelled_and_never_runs_the_handler() -> None:
    driver = Driver()
    turn = driver.accept()
    driver.respond(turn)
    driver.cancel()
    driver.run()
    assert driver.of(turn) == [("user_message", ""), ("state", "running"), ("idle", "cancelled")]
    assert turn.message_id not in driver.handlers and not driver.watchdogs


def test_cancel_while_running_is_sent_reports_cancelled() -> None:
    driver = Driver()
    turn = driver.accept()
    driver.respond(turn)
    assert driver.step() is Step.ANNOUNCE
    assert driver.step() is Step.START
    driver.cancel()  # while the running update is on its way
    driver.run()
    assert turn.message_id not in driver.handlers
    assert driver.of(turn)[-1] == ("idle", "cancelled")


def test_cancel_during_a_permission_blocks_no_more_and_the_idle_says_cancelled() -> None:
    driver = Driver()
    turn = driver.accept()
    driver.respond(turn)
    driver.run()
    driver.ask(turn)
    assert driver.machine.state is REQUIRES_ACTION
    driver.ask(turn)  # a second request does not repeat requires_action
    driver.cancel()
    assert turn.message_id in driver.watchdogs
    driver.answer_permission(turn)  # withdrawn: the cancelled turn reports no running
    driver.end_handler(turn, ("end_turn", None))  # the handler ignored the cancel's meaning
    driver.run()
    assert driver.of(turn) == [
        ("user_message", ""),
        ("state", "running"),
        ("state", "requires_action"),
        ("idle", "cancelled"),
    ]


def test_an_answered_permission_reports_running_again() -> None:
    driver = Driver()
    turn = driver.accept()
    driver.respond(turn)
    driver.run()
    driver.ask(turn)
    driver.ask(turn)
    driver.answer_permission(turn)  # the asker resumes: running, though one still waits
    driver.ask(turn)  # ... and blocks again
    assert [value for kind, value in driver.of(turn) if kind == "state"] == [
        "running",
        "requires_action",
        "running",
    ]
    assert not driver.machine.permission_asked(turn)  # three pending now


def test_a_due_state_that_could_not_be_sent_at_once_leaves_the_session_as_it_was() -> None:
    driver = Driver()
    turn = driver.accept()
    driver.respond(turn)
    driver.run()
    assert driver.machine.permission_asked(turn)
    assert driver.machine.state is REQUIRES_ACTION  # counted as reported ...
    driver.machine.report_failed()  # ... until the driver says it could not send it now
    assert (driver.machine.state, driver.machine.reported_state) == (RUNNING, RUNNING)
    assert driver.machine.report_due(REQUIRES_ACTION, turn)  # the slow way sends it
    driver.machine.state_queued(REQUIRES_ACTION)
    driver.machine.state_sent(REQUIRES_ACTION)
    assert driver.machine.permission_answered(turn) and driver.machine.state is RUNNING


def test_a_handler_error_is_its_stop_reason() -> None:
    driver = Driver()
    turn = driver.accept()
    driver.respond(turn)
    driver.run()
    error = schema.Error(code=-32603, message="RuntimeError: boom")
    driver.end_handler(turn, ("error", error))
    assert driver.machine.next_step() == (Step.FINISH, turn)
    assert turn.outcome == ("error", error)


def test_a_handler_error_after_cancel_is_reported_cancelled() -> None:
    driver = Driver()
    turn = driver.accept()
    driver.respond(turn)
    driver.run()
    driver.cancel()
    driver.end_handler(turn, ("error", schema.Error(code=-32603, message="aborted")))
    driver.run()
    assert driver.of(turn)[-1] == ("idle", "cancelled")


def test_the_watchdog_reports_a_handler_that_ignores_cancel_and_drops_its_late_end() -> None:
    driver = Driver()
    turn = driver.accept()
    driver.respond(turn)
    driver.run()
    driver.cancel()
    driver.run()
    assert driver.of(turn)[-1] == ("state", "running")  # waits for the handler
    assert driver.machine.watchdog_expired(turn)[0] == (Action.ABANDONED, turn)
    driver.run()
    assert driver.of(turn)[-1] == ("idle", "cancelled")
    driver.end_handler(turn, ("end_turn", None))  # too late: the turn is over
    assert turn.outcome == CANCELLED
    assert not driver.machine.permission_asked(turn)  # nothing of it goes out any more
    assert not driver.machine.report_due(REQUIRES_ACTION, turn)


def test_the_watchdog_does_nothing_once_the_handler_ended() -> None:
    driver = Driver()
    turn = driver.accept()
    driver.respond(turn)
    driver.run()
    driver.cancel()
    driver.end_handler(turn, ("end_turn", None))
    assert driver.machine.watchdog_expired(turn) == []


def test_cancel_discards_queued_prompts_which_are_announced_but_never_run() -> None:
    driver = Driver()
    first, second, third = driver.accept(), driver.accept(), driver.accept()
    for turn in (first, second, third):
        driver.respond(turn)
    driver.run()
    assert [kind for kind, _ in driver.of(second)] == ["user_message"]
    driver.cancel()
    assert {second.message_id, third.message_id} <= driver.ended
    assert second.discarded and third.discarded
    driver.end_handler(first, ("end_turn", None))
    driver.run()
    assert driver.of(first)[-1] == ("idle", "cancelled")
    assert driver.of(second) == [("user_message", "")]
    assert driver.of(third) == [("user_message", "")]
    assert not driver.machine.busy


def test_a_queued_turn_starts_after_the_idle_of_the_one_in_front() -> None:
    driver = Driver()
    first, second = driver.accept(), driver.accept()
    driver.respond(first)
    driver.respond(second)
    driver.run()
    driver.end_handler(first, ("max_tokens", None))
    driver.run()
    assert [entry[1:] for entry in driver.wire] == [
        ("", "m0"),
        ("", "m1"),
        ("running", "m0"),
        ("max_tokens", "m0"),
        ("running", "m1"),
    ]


def test_a_turn_whose_answer_ends_it_holds_the_next_until_answered() -> None:
    driver = Driver()
    first = driver.accept(answer_ends_turn=True)
    driver.respond(first)
    driver.run()
    second = driver.accept(answer_ends_turn=True)
    driver.respond(second)
    driver.end_handler(first, ("end_turn", None))
    driver.run()
    assert driver.of(first)[-1] == ("idle", "end_turn")
    assert driver.of(second) == [("user_message", "")]  # inserted while the first ran
    third = driver.accept(answer_ends_turn=True)
    driver.respond(third)
    driver.run()
    assert driver.of(third) == []  # not even its user_message: the runner holds
    assert driver.machine.next_step() == (Step.WAIT, None)
    driver.answer(first)
    driver.run()
    assert driver.of(second) == [("user_message", ""), ("state", "running")]
    assert driver.of(third) == [("user_message", "")]


def test_a_held_turn_goes_once_cancel_empties_the_queue() -> None:
    driver = Driver()
    first = driver.accept(answer_ends_turn=True)
    driver.respond(first)
    driver.run()
    second = driver.accept(answer_ends_turn=True)
    driver.respond(second)
    driver.end_handler(first, ("end_turn", None))
    driver.run()
    third = driver.accept()
    driver.respond(third)
    driver.run()
    assert driver.of(third) == []
    driver.cancel()  # discards the held ones: nothing waits for the answer any more
    driver.run()
    assert driver.of(second) == [("user_message", "")]
    assert driver.of(third) == [("user_message", "")]
    assert second.discarded and third.discarded and not driver.machine.busy


def test_withdrawing_a_queued_prompt_drops_it_and_the_current_one_cancels() -> None:
    driver = Driver()
    first, second = driver.accept(), driver.accept()
    driver.respond(first)
    driver.respond(second)
    driver.run()
    assert driver.machine.withdraw(second) == [(Action.END, second)]
    assert second.discarded and not first.cancel_requested
    assert (Action.CANCEL_HANDLER, first) in driver.machine.withdraw(first)
    assert first.cancel_requested


def test_abandon_reports_running_work_cancelled_at_once() -> None:
    driver = Driver()
    turn = driver.accept()
    driver.respond(turn)
    driver.run()
    assert driver.machine.abandon() == [(Action.CANCEL_HANDLER, turn), (Action.WAKE, None)]
    assert driver.machine.abandon() == []
    driver.run()
    assert driver.of(turn)[-1] == ("idle", "cancelled")


def test_drop_all_ends_every_turn_without_a_word() -> None:
    driver = Driver()
    first, second = driver.accept(), driver.accept()
    driver.respond(first)
    driver.run()
    wire = list(driver.wire)
    assert set(driver.machine.drop_all()) == {first, second}
    assert first.finished and second.finished and not driver.machine.busy
    assert driver.machine.next_step() == (Step.STOP, None)
    assert driver.wire == wire


def test_transitions_name_what_a_state_update_does() -> None:
    assert transition(IDLE, RUNNING) is Transition.START
    assert transition(IDLE, REQUIRES_ACTION) is Transition.START
    assert transition(RUNNING, REQUIRES_ACTION) is Transition.BLOCK
    assert transition(REQUIRES_ACTION, RUNNING) is Transition.RESUME
    assert transition(RUNNING, IDLE) is Transition.END
    assert transition(REQUIRES_ACTION, IDLE) is Transition.END
    for state in SessionState:
        assert transition(state, state) is Transition.REPEAT


# -- the property ------------------------------------------------------------------------------

EVENTS = (
    "accept",
    "accept_answered",
    "respond",
    "answer",
    "step",
    "run",
    "run",
    "end",
    "error",
    "cancel",
    "watchdog",
    "ask",
    "answer_permission",
    "withdraw",
    "close",
)


def apply(driver: Driver, event: str, pick: int) -> None:
    """Apply ``event`` to the ``pick``-th turn it can apply to, if any."""
    machine = driver.machine
    turns = driver.turns

    def choose(candidates: list[TurnRecord]) -> TurnRecord | None:
        return candidates[pick % len(candidates)] if candidates else None

    if event in ("accept", "accept_answered"):
        if not machine.closed:
            driver.accept(answer_ends_turn=event == "accept_answered")
    elif event == "respond":
        turn = choose([t for t in turns if not t.responded])
        if turn is not None:
            driver.respond(turn)
    elif event == "answer":
        turn = choose([t for t in turns if t.awaiting_answer and t.responded])
        if turn is not None and (turn.finished or turn.discarded):
            driver.answer(turn)  # a turn's answer comes once it is over
    elif event == "step":
        driver.step()
    elif event == "run":
        driver.run()
    elif event in ("end", "error"):
        turn = choose([t for t in turns if t.message_id in driver.handlers])
        if turn is not None:
            error = schema.Error(code=-32603, message="boom")
            driver.end_handler(turn, ("end_turn", None) if event == "end" else ("error", error))
    elif event == "cancel":
        driver.cancel()
    elif event == "watchdog":
        turn = choose([t for t in turns if t.message_id in driver.watchdogs])
        if turn is not None:
            driver.expire_watchdog(turn)
    elif event == "ask":
        turn = choose([t for t in turns if t.message_id in driver.handlers])
        if turn is not None:
            driver.ask(turn)
    elif event == "answer_permission":
        turn = choose([t for t in turns if driver.asked.get(t.message_id, 0)])
        if turn is not None:
            driver.answer_permission(turn)
    elif event == "withdraw":
        turn = choose([t for t in turns if t.responded and not t.finished])
        if turn is not None:
            if turn is machine.current:
                driver.cancels.append(driver.clock)
            driver.act(machine.withdraw(turn))
    elif event == "close":
        machine.closed = True
        driver.closed_at = len(driver.wire)
        driver.cancel()


def settle(driver: Driver) -> None:
    """Let everything finish: respond, end handlers and watchdogs, answer, run."""
    for _ in range(1000):
        driver.clock += 1
        step = driver.step()
        if step is Step.STOP and driver.pending is None:
            return
        if step is not Step.WAIT:
            continue
        for turn in driver.turns:
            if not turn.responded:
                driver.respond(turn)
        for turn in driver.turns:
            if turn.message_id in driver.handlers:
                driver.end_handler(turn, ("end_turn", None))
        for turn in driver.turns:
            if turn.awaiting_answer and (turn.finished or turn.discarded):
                driver.answer(turn)
    raise AssertionError("the machine never came to rest")


def check_wire(driver: Driver) -> None:
    """The protocol's invariants on what the driver would have sent."""
    wire = driver.wire
    announced: list[str] = []
    started: list[str] = []
    started_at: dict[str, int] = {}
    idles: dict[str, int] = {}
    state = IDLE
    current: str | None = None
    for position, (kind, value, name) in enumerate(wire):
        if kind == "user_message":
            assert name not in announced, "one user_message per prompt"
            assert driver.responded_before[name] <= position, "user_message after its response"
            announced.append(name)
            continue
        assert name not in idles, f"{kind} {value} of {name} after its idle"
        if kind == "state":
            new = SessionState(value)
            change = transition(state, new)
            assert change is not Transition.REPEAT, f"{value} repeated"
            assert change is not Transition.END
            if change is Transition.START:
                assert new is RUNNING, "running before requires_action"
                assert current is None, "one turn at a time"
                assert name in announced, "user_message before the turn starts"
                started.append(name)
                started_at[name] = position
                current = name
            else:
                assert name == current
            state = new
        else:
            assert name == current, "an idle ends the turn that started"
            idles[name] = position
            current = None
            state = IDLE
    assert sorted(idles) == sorted(started), "exactly one idle per started turn"
    order = [turn.message_id for turn in driver.turns]
    assert started == [name for name in order if name in started], "turns start in order"
    assert announced == [name for name in order if name in announced], "announced in order"
    for before, after in pairwise(started):
        if before in driver.answer_ends and (
            driver.closed_at is None or driver.closed_at > started_at[after]
        ):
            assert driver.answered_at[before] <= started_at[after], "held until answered"
    for turn in driver.turns:
        if turn.discarded:
            assert turn.message_id not in started, "a discarded prompt never runs"
        if turn.message_id in started:
            assert turn.finished and turn.message_id in driver.ended
            stop_reason = next(v for k, v, n in wire if n == turn.message_id and k == "idle")
            since, until = driver.accepted_at[turn.message_id], driver.finishing_at[turn.message_id]
            if any(since < t < until for t in driver.cancels):
                # (A cancel once the idle was decided crosses it: that idle stands.)
                assert stop_reason == "cancelled", "an idle after cancel says cancelled"


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(EVENTS), st.integers(min_value=0, max_value=7)), max_size=60)
)
def test_any_interleaving_keeps_the_turn_invariants(events: list[tuple[str, int]]) -> None:
    driver = Driver()
    for event, pick in events:
        driver.clock += 1
        apply(driver, event, pick)
    settle(driver)
    check_wire(driver)
    assert not driver.machine.busy and driver.machine.state is IDLE
    for turn in driver.turns:
        assert turn.finished or turn.discarded, f"{turn.message_id} never ended"
        assert turn.message_id in driver.ended


def test_an_observer_learns_which_idle_ends_a_turn_and_the_stop_reason_it_allows() -> None:
    machine = TurnMachine[TurnRecord]()
    first = TurnRecord(message_id="span-1")
    machine.observe_start(first, RUNNING)
    assert machine.state is RUNNING and machine.current is first
    machine.state_reported(REQUIRES_ACTION)
    machine.cancel()
    ended = machine.observe_end("end_turn")
    assert ended is first and ended.outcome == CANCELLED  # what the agent's idle had to say
    assert machine.state is IDLE and first.finished
    assert machine.observe_end("end_turn") is None  # a second idle ends nothing
    second = TurnRecord(message_id="span-2")
    machine.observe_start(second, RUNNING)
    ended = machine.observe_end("max_tokens")
    assert ended is second and ended.outcome == ("max_tokens", None)


# -- the same machine seen from the wire -------------------------------------------------------


@dataclass
class Wire(Driver):
    """A driver whose client messages (prompts, cancels) are noted where they fall on the wire,
    as an observer of the connection sees them (each arrives at once)."""

    client: list[tuple[int, str, str]] = field(default_factory=list[tuple[int, str, str]])

    def accept(self, *, answer_ends_turn: bool = False) -> TurnRecord:
        turn = super().accept(answer_ends_turn=answer_ends_turn)
        self.client.append((len(self.wire), "prompt", turn.message_id))
        return turn

    def cancel(self) -> None:
        self.client.append((len(self.wire), "cancel", ""))
        super().cancel()


def observe(wire: Wire) -> None:
    """Feed an observer's machine the wire ``wire`` produced and check it finds the agent's
    turns: the turn each ``running`` starts, the turn each idle ends, the turns a cancel
    discards (until a cancel crosses an idle, which the wire cannot tell from one not read)."""
    observer = TurnMachine[TurnRecord]()
    seen: dict[str, TurnRecord] = {}
    client = iter(wire.client)
    pending = next(client, None)
    agent = {turn.message_id: turn for turn in wire.turns}
    trusted = True
    for position, (kind, value, name) in enumerate([*wire.wire, ("end", "", "")]):
        while pending is not None and pending[0] <= position:
            if pending[1] == "prompt":
                seen[pending[2]] = TurnRecord(message_id=pending[2])
                observer.prompt_sent(seen[pending[2]])
            else:
                observer.cancel_sent()
            pending = next(client, None)
        if kind not in {"state", "idle"}:
            continue
        change = transition(observer.state, IDLE if kind == "idle" else SessionState(value))
        if change is Transition.START:
            started = observer.observe_start(TurnRecord(message_id="unprompted"), RUNNING)
            assert not trusted or started.message_id == name, "the oldest prompt sent starts"
        elif change is Transition.END:
            ended, discarded = observer.observe_idle(value)
            assert ended is not None and (not trusted or ended.message_id == name)
            if value == "cancelled":
                assert ended.cancel_requested, "only a cancel sent ends a turn cancelled"
                for turn in discarded:
                    assert agent[turn.message_id].discarded, "the agent discarded it too"
                if any(turn.cancel_requested for turn in observer.unstarted):
                    # A later cancel reached the turns still queued: whether the agent read it
                    # before this idle (and discarded them) the wire does not tell (the
                    # prompts' answers do, where the wire has them).
                    trusted = False
            elif ended.cancel_requested:
                trusted = False  # the cancel crossed this idle: which turns it reached is unknown
        else:
            observer.state_reported(SessionState(value))
    assert observer.state is IDLE and observer.running is None


def test_an_observer_starts_the_oldest_prompt_and_a_cancelled_idle_discards_the_queue() -> None:
    machine = TurnMachine[TurnRecord]()
    first, second, third = (TurnRecord(message_id=name) for name in ("a", "b", "c"))
    machine.prompt_sent(first)
    machine.prompt_sent(second)
    assert machine.unstarted == [first, second] and machine.running is None
    assert machine.observe_start(TurnRecord(message_id="unprompted"), RUNNING) is first
    assert machine.running is first and machine.unstarted == [second]
    assert machine.cancel_sent() == 1  # reaches the running turn and the queued one
    machine.prompt_sent(third)  # sent after the cancel: not reached
    assert first.cancel_requested and second.cancel_mark == 1 and not third.cancel_requested
    ended, discarded = machine.observe_idle("cancelled")
    assert ended is first and first.outcome == CANCELLED
    assert discarded == [second] and second.discarded and machine.unstarted == [third]
    assert machine.observe_start(TurnRecord(message_id="unprompted"), RUNNING) is third


def test_an_idle_that_crossed_a_cancel_discards_nothing() -> None:
    machine = TurnMachine[TurnRecord]()
    first, second = TurnRecord(message_id="a"), TurnRecord(message_id="b")
    machine.prompt_sent(first)
    machine.prompt_sent(second)
    machine.observe_start(TurnRecord(message_id="unprompted"), RUNNING)
    machine.cancel_sent()
    ended, discarded = machine.observe_idle("end_turn")
    assert ended is first and first.outcome == CANCELLED  # what the idle had to say, if read
    assert discarded == [] and machine.unstarted == [second]


def test_a_refused_prompt_never_runs_and_unprompted_work_starts_its_own_turn() -> None:
    machine = TurnMachine[TurnRecord]()
    refused = TurnRecord(message_id="a")
    machine.prompt_sent(refused)
    machine.prompt_refused(refused)
    assert refused.discarded and refused.finished and machine.unstarted == []
    own = TurnRecord(message_id="own")
    assert machine.observe_start(own, REQUIRES_ACTION) is own
    assert machine.state is REQUIRES_ACTION
    assert machine.observe_idle("end_turn") == (own, [])
    assert machine.observe_idle("end_turn") == (None, [])  # a second idle ends nothing


def test_answers_end_turns_where_the_wire_has_no_state_updates() -> None:
    machine = TurnMachine[TurnRecord]()
    first, second, third = (TurnRecord(message_id=name) for name in ("a", "b", "c"))
    for turn in (first, second, third):
        machine.prompt_sent(turn)
    machine.cancel_sent()
    # The agent answers a discarded queued prompt before the turn in front of it ends.
    assert machine.observe_answer(third, "cancelled") == []
    assert third.finished and third.outcome == CANCELLED and machine.unstarted == [first, second]
    assert machine.observe_answer(first, "cancelled") == [second]  # the queue goes with it
    assert first.outcome == CANCELLED and machine.state is IDLE and machine.current is None
    assert machine.observe_answer(second, "cancelled") == []  # its own answer changes nothing


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([e for e in EVENTS if e not in ("accept_answered", "withdraw")]),
            st.integers(min_value=0, max_value=7),
        ),
        max_size=60,
    )
)
def test_an_observer_of_the_wire_finds_the_agents_turns(events: list[tuple[str, int]]) -> None:
    wire = Wire()
    for event, pick in events:
        wire.clock += 1
        apply(wire, event, pick)
    settle(wire)
    observe(wire)


def test_an_observer_follows_a_cancel_that_discards_the_queue_and_the_turn_after_it() -> None:
    wire = Wire()
    running = wire.accept()
    wire.respond(running)
    wire.run()
    queued = [wire.accept(), wire.accept()]
    for turn in queued:
        wire.respond(turn)
    wire.cancel()  # read at once: the queue is discarded, the running turn cancelled
    wire.end_handler(running, ("end_turn", None))
    wire.run()
    after = wire.accept()
    wire.respond(after)
    wire.run()
    wire.end_handler(after, ("end_turn", None))
    settle(wire)
    assert all(turn.discarded for turn in queued)
    assert [(kind, value) for kind, value, _ in wire.wire if kind != "user_message"] == [
        ("state", "running"),
        ("idle", "cancelled"),
        ("state", "running"),
        ("idle", "end_turn"),
    ]
    observe(wire)  # the observer's next run is the prompt sent after the cancel
