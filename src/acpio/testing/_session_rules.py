"""The rules that span a session's messages: per-session state machines of the checker.

How this works: `SessionRules` is the base of `ConformanceChecker`. It keeps, per session, what
an editor would know from the wire: tool calls and terminals seen (and which belong to the
current foreground work), messages and plans, the prompt turn (a prompt sent while idle opens a
window that ``running`` must close before any output; an accepted prompt must report
``running``; work ends with one ``idle`` carrying a stop reason), pending requests to the user
(which back ``requires_action``), the cancellation in progress, background work and whether the
session was closed. The checker feeds it decoded session updates and the client's prompts,
cancels and closes; it reports violations through `_violate` and counts what each rule examined
through `_exercise`.

The turns are the agent's own machine (:class:`~acpio._session.turn_machine.TurnMachine`),
fed with what the wire shows: prompts sent, refused or accepted (each a `CheckedTurn`), cancels
and closes sent, and `transition` says what a state update does (start, block, resume, end,
repeat); `TurnMachine.observe_start` starts the oldest prompt sent, `TurnMachine.observe_end`
ends it, and the stop reason the machine allows at an idle (``cancelled`` once a cancel reached
the turn) is what the agent's idle is compared with. The prompt window is the machine's
unstarted turns sent while idle (`CheckedTurn.window`). What only the wire can tell stays
here: whether the agent provably read a cancel, replay during a resume, the silence of cancelled
work.

A cancel applies to the work of every prompt the client sent before it, even one whose work has
not reported running yet (the agent read the prompt first), unless that prompt is refused. It is
judged only when the wire proves the agent read the cancel before ending the work
(`Cancel.proven`): blocked on the user (requires_action with a request pending) when the cancel
arrived or after it, answering a client request sent after it, withdrawing a request with
``$/cancel_request``, or reporting a tool call cancelled. Otherwise an idle may simply have
crossed the cancel in flight.

While a ``session/resume`` of a session is pending (sent, not yet answered), its updates may be
replayed history and the current-state snapshot the agent must send before the response: they
are not work output, so they neither break the silence of cancelled work nor open new work, and
a state update repeating the current state changes nothing (a snapshot may repeat the last stop
reason; it is not a new end of work). A successful resume re-activates a closed session.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, cast

from .._json import JsonObject, as_list
from .._protocol.values import FINAL_TOOL_CALL_STATUSES
from .._session import turn_machine
from .._session.turn_machine import Transition, TurnMachine, TurnRecord, transition
from ._feature_rules import command_problems, config_problems
from ._patch_reader import check_diff
from ._rules import HINTS, ConformanceError, Violation
from ._rules import short as _short
from ._schema_check import is_base64

__all__ = (
    "Cancel",
    "CheckedSession",
    "CheckedTurn",
    "JsonObject",
    "Request",
    "SessionRules",
    "get",
    "shown_id",
)


@dataclass(slots=True)
class Request:
    """A request either side sent and the other has not answered yet."""

    method: str
    session: str | None
    index: int
    raw: str
    subjects: frozenset[str] = frozenset()  # tool call / terminal ids a permission is about
    withdrawn: bool = False  # the agent sent $/cancel_request for it
    refused: bool = False  # its batch was refused as a whole: no response is owed
    turn: CheckedTurn | None = None  # a session/prompt's turn


@dataclass(eq=False)
class CheckedTurn(TurnRecord):
    """A prompt's turn as the checker's turn machine tracks it, and what the wire showed of
    it before it started (both flags drop at the session's next state update)."""

    #: Sent while the session was idle: output before ``running`` breaks the turn's order.
    window: bool = False
    #: Its answer (raw, index) when it was accepted while the session was idle: it must
    #: report ``running`` before the next idle, and before the stream ends.
    accepted_idle: tuple[str, int] | None = None
    #: The state update (raw, index) that started it.
    started_by: tuple[str, int] = ("", 0)
    #: What its work reported: "tool:<id>" and "term:<id>" (silent once it ended cancelled).
    work: set[str] = field(default_factory=set[str])


@dataclass(slots=True)
class Cancel:
    """A session/cancel (or session/close) whose work has not reported idle yet."""

    index: int
    proven: bool  # the agent certainly processed the cancel before its idle
    requests: set[object]  # keys of agent requests pending when the client cancelled
    works: int = 1  # prompts (and running work) it may end; refused prompts do not count


@dataclass(slots=True)
class CheckedSession:
    """What the checker knows about one session."""

    #: The turns as the agent's own machine has them, fed with what the wire shows.
    turns: TurnMachine[CheckedTurn] = field(default_factory=TurnMachine[CheckedTurn])
    tool_status: dict[str, str] = field(default_factory=dict[str, str])
    # Where each tool call reported as work (not a permission subject) was first seen.
    tool_first: dict[str, tuple[str, int]] = field(default_factory=dict[str, tuple[str, int]])
    tool_terminals: dict[str, set[str]] = field(default_factory=dict[str, set[str]])
    terminals: dict[str, bool] = field(default_factory=dict[str, bool])  # id -> exited
    terminal_commands: dict[str, str] = field(default_factory=dict[str, str])
    messages: set[tuple[str, str]] = field(default_factory=set[tuple[str, str]])
    plans: set[str] = field(default_factory=set[str])
    user_messages: set[str] = field(default_factory=set[str])
    awaiting_user_message: dict[str, tuple[str, int]] = field(
        default_factory=dict[str, tuple[str, int]]
    )
    cancel: Cancel | None = None
    silenced: set[str] | None = None  # after a cancelled idle: work that must stay silent
    background: set[tuple[str, str]] | None = None
    answered_subjects: set[str] = field(default_factory=set[str])
    answered_since_state: bool = False
    unbacked: tuple[str, int] | None = None  # requires_action not (yet) backed by a request
    last_stop_reason: str | None = None
    closed: bool = False
    resumes: int = 0  # session/resume requests sent and not answered yet: replay may arrive

    @property
    def state(self) -> str:
        """The state the session last reported (``idle`` before any)."""
        return self.turns.state.value

    @property
    def span(self) -> bool:
        """Whether foreground work is active (a turn started and did not report idle)."""
        return self.turns.state is not turn_machine.SessionState.IDLE

    @property
    def span_start(self) -> tuple[str, int]:
        """The state update (raw, index) that started the foreground work, while it runs."""
        running = self.turns.running
        return running.started_by if running is not None else ("", 0)

    @property
    def window(self) -> CheckedTurn | None:
        """A prompt sent while idle whose turn did not report running yet, if any."""
        return next((turn for turn in self.turns.unstarted if turn.window), None)

    @property
    def accepted_unstarted(self) -> list[tuple[str, int]]:
        """The answers of prompts accepted while idle whose turn did not report running."""
        return [
            turn.accepted_idle for turn in self.turns.unstarted if turn.accepted_idle is not None
        ]

    def state_seen(self) -> None:
        """A state update (or an idle) came: what the unstarted turns showed before it is
        judged, their flags drop."""
        for turn in self.turns.unstarted:
            turn.window = False
            turn.accepted_idle = None


_WORK_UPDATES: Final = frozenset(
    {
        "tool_call_update",
        "tool_call_content_chunk",
        "terminal_update",
        "terminal_output_chunk",
        "agent_message",
        "agent_message_chunk",
        "agent_thought",
        "agent_thought_chunk",
        "plan_update",
    }
)
_MESSAGE_ROLES: Final[Mapping[str, str]] = {
    "agent_message": "agent",
    "agent_message_chunk": "agent",
    "agent_thought": "thought",
    "agent_thought_chunk": "thought",
}
_FINAL_STATUSES: Final = FINAL_TOOL_CALL_STATUSES
_OPEN_STATUSES: Final = frozenset({"pending", "in_progress", "paused"})


def _live_turn(state: CheckedSession) -> CheckedTurn | None:
    """The turn an update now belongs to as foreground work (none during a resume's replay)."""
    return None if state.resumes else state.turns.running


def shown_id(key: object) -> object:
    """The id as sent, from its identity (``id_key``'s (type name, id) pair)."""
    return cast("tuple[str, object]", key)[1] if isinstance(key, tuple) else key


def get(obj: object, *keys: str | int) -> object:
    """The value at a path of object keys and array indices in decoded JSON, or `None`."""
    for part in keys:
        if isinstance(part, str) and isinstance(obj, dict):
            obj = cast("JsonObject", obj).get(part)
        elif isinstance(part, int) and isinstance(obj, list):
            items = cast("list[object]", obj)
            if not 0 <= part < len(items):
                return None
            obj = items[part]
        else:
            return None
    return obj


class SessionRules:
    """Per-session state and the rules that span messages (the base of `ConformanceChecker`)."""

    def __init__(self, rules: frozenset[str], strict: bool) -> None:
        self.strict: bool = strict
        """Whether `observe` raises on the first violation."""
        self.rules: frozenset[str] = rules
        """The rule IDs being checked."""
        self.violations: list[Violation] = []
        """Every violation found so far, in order."""
        self._index: int = 0
        self._exercised: Counter[str] = Counter()
        self._sessions: dict[str, CheckedSession] = {}
        self._client_requests: dict[object, Request] = {}
        self._agent_requests: dict[object, Request] = {}
        self._hints: Mapping[str, str] = HINTS

    def _violate(self, rule: str, message: str, raw: str, index: int | None = None) -> None:
        if rule not in self.rules:
            return
        violation = Violation(
            rule, message, self._hints[rule], raw, self._index if index is None else index
        )
        self.violations.append(violation)
        if self.strict:
            raise ConformanceError(violation)

    def _exercise(self, rule: str) -> None:
        self._exercised[rule] += 1

    def _config_and_commands(self, problems: list[str], raw: str) -> None:
        self._exercise("config-and-commands")
        for problem in problems:
            self._violate("config-and-commands", problem, raw)

    # -- session state -------------------------------------------------------------------------

    def _session(self, session: str) -> CheckedSession:
        state = self._sessions.get(session)
        if state is None:
            state = self._sessions[session] = CheckedSession()
        return state

    def _check_closed(self, state: CheckedSession, session: str, raw: str) -> None:
        # While a resume is pending the message may belong to it (replay, snapshot, work after
        # the re-activation): the wire cannot tell, so only messages outside resumes count.
        if state.closed and not state.resumes:
            self._exercise("session-close")
            self._violate(
                "session-close",
                f"a message for session {session} after session/close was answered",
                raw,
            )

    def _pending_for(self, session: str) -> list[object]:
        return [
            key
            for key, request in self._agent_requests.items()
            if request.session == session and not request.withdrawn
        ]

    def _blocked_on(self, state: CheckedSession, entity: str) -> bool:
        return any(
            entity in request.subjects and not request.withdrawn
            for request in self._agent_requests.values()
            if self._sessions.get(request.session or "") is state
        )

    # -- prompts and client messages -----------------------------------------------------------

    def _client_request(self, state: CheckedSession, request: Request) -> None:
        if request.method == "session/prompt":
            state.silenced = None
            request.turn = CheckedTurn(message_id="", window=not state.span)
            state.turns.prompt_sent(request.turn)
        elif request.method == "session/close" and state.span and state.cancel is None:
            # Closing cancels active work as session/cancel would, and must wait for its idle.
            state.cancel = Cancel(request.index, True, set())
            state.turns.cancel_sent()
        elif request.method == "session/resume":
            state.resumes += 1

    def _resume_answered(self, state: CheckedSession, succeeded: bool) -> None:
        state.resumes = max(state.resumes - 1, 0)
        if succeeded:
            state.closed = False  # a resume re-activates a session closed earlier

    def _client_cancel(self, state: CheckedSession, session: str) -> None:
        # A prompt sent (or accepted) whose work has not reported running yet is cancelled too:
        # the agent read the prompt before the cancel, so the cancel applies to its work.
        unanswered = sum(
            1
            for request in self._client_requests.values()
            if request.method == "session/prompt" and request.session == session
        )
        works = unanswered + (1 if state.span or state.accepted_unstarted else 0)
        if not works:
            return  # nothing to cancel
        pending = set(self._pending_for(session))
        # Blocked on the user, the agent cannot have ended its work before reading the cancel.
        proven = state.turns.state is turn_machine.SessionState.REQUIRES_ACTION and bool(pending)
        if state.cancel is None:
            state.cancel = Cancel(self._index, proven, pending, works)
        else:
            state.cancel.proven = state.cancel.proven or proven
            state.cancel.requests |= pending
            state.cancel.works = works
        state.turns.cancel_sent()

    def _prompt_answered(
        self,
        state: CheckedSession,
        request: Request,
        message: JsonObject,
        raw: str,
        validated: bool,
    ) -> None:
        self._exercise("prompt-message-id")
        turn = request.turn
        if "result" not in message:
            if turn is not None:
                state.turns.prompt_refused(turn)  # rejected before insertion: no work to report
            cancel = state.cancel
            if cancel is not None and request.index < cancel.index:
                cancel.works -= 1
                if cancel.works <= 0 and not state.span:
                    state.cancel = None  # the prompts it cancelled were refused: no work to end
            return
        message_id = get(message.get("result"), "messageId")
        if not isinstance(message_id, str):
            if not validated:  # else the schema reported it
                self._violate(
                    "prompt-message-id", "session/prompt result has no string messageId", raw
                )
            return
        if message_id not in state.user_messages:
            state.awaiting_user_message[message_id] = (raw, self._index)
        if turn is not None:
            turn.message_id = message_id
            state.turns.responded(turn)
            if not state.span and not turn.started:
                turn.accepted_idle = (raw, self._index)

    # -- session updates -----------------------------------------------------------------------

    def _session_update(self, session: str, update: JsonObject, raw: str, validated: bool) -> None:
        state = self._session(session)
        kind = update.get("sessionUpdate")
        self._check_closed(state, session, raw)
        if kind in _WORK_UPDATES and state.silenced is not None and not state.resumes:
            # Replayed history of the cancelled work is not work sent after its idle.
            self._check_silence(state, update, kind, raw)
        if kind == "tool_call_update":
            self._tool_call_update(state, update, raw)
        elif kind == "tool_call_content_chunk":
            self._tool_call_chunk(state, update, raw)
        elif kind in ("terminal_update", "terminal_output_chunk"):
            self._terminal(state, update, kind, raw, validated)
        elif kind in ("user_message", "user_message_chunk"):
            message_id = update.get("messageId")
            if isinstance(message_id, str):
                state.user_messages.add(message_id)
                state.awaiting_user_message.pop(message_id, None)
        elif isinstance(kind, str) and kind in _MESSAGE_ROLES:
            message_id = update.get("messageId")
            if isinstance(message_id, str):
                key = (_MESSAGE_ROLES[kind], message_id)
                if key not in state.messages:
                    state.messages.add(key)
                    self._new_work(state, f"a new {kind}", raw)
        elif kind == "plan_update":
            plan_id = get(update, "plan", "planId")
            if isinstance(plan_id, str) and plan_id not in state.plans:
                state.plans.add(plan_id)
                self._new_work(state, "a new plan", raw)
        elif kind == "state_update":
            self._state_update(state, session, update, raw)
        elif kind == "config_option_update":
            self._config_and_commands(config_problems(update.get("configOptions")), raw)
        elif kind == "available_commands_update":
            self._config_and_commands(command_problems(update.get("availableCommands")), raw)

    def _new_work(self, state: CheckedSession, what: str, raw: str) -> None:
        self._exercise("turn-lifecycle")
        # Replayed history is not output of the prompt waiting for its running.
        if state.window is not None and not state.resumes:
            self._violate(
                "turn-lifecycle",
                f"{what} after session/prompt but before state_update running",
                raw,
            )
            for turn in state.turns.unstarted:
                turn.window = False  # one report per turn

    def _check_silence(
        self, state: CheckedSession, update: JsonObject, kind: object, raw: str
    ) -> None:
        assert state.silenced is not None
        self._exercise("cancel-silence")
        tool_call = update.get("toolCallId")
        terminal = update.get("terminalId")
        if isinstance(tool_call, str):
            entity = f"tool:{tool_call}"
            known = tool_call in state.tool_status
        elif isinstance(terminal, str):
            entity = f"term:{terminal}"
            known = terminal in state.terminals
        else:
            entity, known = "", False
        if known and entity not in state.silenced:
            return  # other (e.g. background) work may still report while idle
        self._violate(
            "cancel-silence",
            f"{kind} after the cancelled work reported idle: nothing may be sent for that work",
            raw,
        )

    def _tool_call_update(
        self, state: CheckedSession, update: JsonObject, raw: str, subject: bool = False
    ) -> None:
        tool_call_id = update.get("toolCallId")
        if not isinstance(tool_call_id, str):
            return
        self._exercise("tool-call-title")
        status = update.get("status")
        if tool_call_id not in state.tool_status:
            # A title of the wrong type is the schema's to report.
            if update.get("title") is None:
                where = "permission subject" if subject else "tool_call_update"
                self._violate(
                    "tool-call-title",
                    f"the first {where} for tool call {tool_call_id!r} has no title",
                    raw,
                )
            state.tool_status[tool_call_id] = "pending"
            if not subject:
                self._new_work(state, f"tool call {tool_call_id!r}", raw)
        if not subject and not state.resumes and tool_call_id not in state.tool_first:
            state.tool_first[tool_call_id] = (raw, self._index)
        if "status" in update:
            state.tool_status[tool_call_id] = status if isinstance(status, str) else "pending"
            if status == "cancelled" and state.cancel is not None:
                state.cancel.proven = True
        if (turn := _live_turn(state)) is not None:
            turn.work.add(f"tool:{tool_call_id}")
        content = update.get("content")
        if "content" in update:
            state.tool_terminals[tool_call_id] = set()
            for item in as_list(content) or ():
                self._tool_content(state, tool_call_id, item, raw)
        if not subject and status in ("in_progress", "completed"):
            self._check_resumed(
                state, f"tool:{tool_call_id}", f"tool call {tool_call_id!r} {status}", raw
            )

    def _tool_call_chunk(self, state: CheckedSession, update: JsonObject, raw: str) -> None:
        tool_call_id = update.get("toolCallId")
        if not isinstance(tool_call_id, str):
            return
        self._exercise("tool-call-title")
        if tool_call_id not in state.tool_status:
            self._violate(
                "tool-call-title",
                f"tool_call_content_chunk for tool call {tool_call_id!r}, which was never reported "
                "with a title",
                raw,
            )
            state.tool_status[tool_call_id] = "pending"
            self._new_work(state, f"tool call {tool_call_id!r}", raw)
        if (turn := _live_turn(state)) is not None:
            turn.work.add(f"tool:{tool_call_id}")
        self._tool_content(state, tool_call_id, update.get("content"), raw)

    def _tool_content(
        self, state: CheckedSession, tool_call_id: str, item: object, raw: str
    ) -> None:
        item_type = get(item, "type")
        if item_type == "terminal":
            terminal_id = get(item, "terminalId")
            if isinstance(terminal_id, str):
                state.terminals.setdefault(terminal_id, False)
                state.tool_terminals.setdefault(tool_call_id, set()).add(terminal_id)
                if (turn := _live_turn(state)) is not None:
                    turn.work.add(f"term:{terminal_id}")
        elif item_type == "diff":
            for rule, problem in check_diff(item):
                if problem is None:
                    self._exercise(rule)
                else:
                    self._violate(rule, problem, raw)

    def _terminal(
        self, state: CheckedSession, update: JsonObject, kind: object, raw: str, validated: bool
    ) -> None:
        terminal_id = update.get("terminalId")
        if not isinstance(terminal_id, str):
            return
        if terminal_id not in state.terminals:
            state.terminals[terminal_id] = False
            self._new_work(state, f"terminal {terminal_id!r}", raw)
        if (turn := _live_turn(state)) is not None:
            turn.work.add(f"term:{terminal_id}")
        data = (
            update.get("data") if kind == "terminal_output_chunk" else get(update, "output", "data")
        )
        if isinstance(data, str) and not validated:
            # The schema check covers base64 when it runs; sampled-out messages are checked here.
            self._exercise("base64")
            if not is_base64(data):
                self._violate(
                    "base64", f"terminal {terminal_id!r} data is not valid RFC 4648 base64", raw
                )
        if kind == "terminal_output_chunk":
            self._check_resumed(
                state, f"term:{terminal_id}", f"output of terminal {terminal_id!r}", raw
            )
            return
        command = update.get("command")
        if isinstance(command, str):
            self._exercise("terminal-id-reuse")
            previous = state.terminal_commands.get(terminal_id)
            if state.terminals[terminal_id] and previous is not None and previous != command:
                self._violate(
                    "terminal-id-reuse",
                    f"terminal {terminal_id!r} exited running {previous!r} and is now reported "
                    f"running {command!r}",
                    raw,
                )
            state.terminal_commands[terminal_id] = command
        if "exitStatus" in update:
            state.terminals[terminal_id] = isinstance(update["exitStatus"], dict)

    def _check_resumed(self, state: CheckedSession, entity: str, what: str, raw: str) -> None:
        if (
            state.turns.state is not turn_machine.SessionState.REQUIRES_ACTION
            or state.cancel is not None
            or state.resumes
        ):
            return
        if entity in state.answered_subjects and not self._blocked_on(state, entity):
            self._violate(
                "turn-lifecycle",
                f"{what} after its permission was answered, while the session still reports "
                "requires_action: report running when work resumes",
                raw,
            )

    # -- turn state ----------------------------------------------------------------------------

    def _state_update(
        self, state: CheckedSession, session: str, update: JsonObject, raw: str
    ) -> None:
        new = update.get("state")
        if not isinstance(new, str):
            return
        self._exercise("turn-lifecycle")
        self._check_background(state, update, raw)
        try:
            reported = turn_machine.SessionState(new)
        except ValueError:
            return  # not a state: the schema check reports the value
        change = transition(state.turns.state, reported)
        if state.resumes and change is Transition.REPEAT:
            self._snapshot(state, update, raw)
            return
        if state.unbacked is not None:
            unbacked_raw, unbacked_index = state.unbacked
            state.unbacked = None
            self._violate(
                "turn-lifecycle",
                "requires_action while no permission or elicitation request was pending",
                unbacked_raw,
                unbacked_index,
            )
        if reported is not turn_machine.SessionState.IDLE:
            if reported is turn_machine.SessionState.REQUIRES_ACTION:
                pending = self._pending_for(session)
                if not (pending or state.answered_since_state):
                    state.unbacked = (raw, self._index)  # the request may follow right after
                if pending and state.cancel is not None:
                    # Blocked on the user after the cancel was sent: the answer it waits for
                    # comes after the cancel, so the work cannot end before the cancel is read.
                    state.cancel.proven = True
                    state.cancel.requests.update(pending)
            state.state_seen()
            if change is Transition.START:
                # The oldest prompt sent starts (a cancel sent after it reached it), or work
                # the agent started on its own.
                started = state.turns.observe_start(
                    CheckedTurn(message_id=str(self._index)), reported
                )
                started.started_by = (raw, self._index)
            else:
                state.turns.state_reported(reported)
            state.silenced = None
        else:
            self._idle(state, session, update, raw)
        state.answered_since_state = False
        state.answered_subjects.clear()

    def _snapshot(self, state: CheckedSession, update: JsonObject, raw: str) -> None:
        """A state update repeating the current state while a resume is pending: the resume's
        current-state snapshot (or a repeat). It starts and ends nothing."""
        stop = update.get("stopReason")
        last = state.last_stop_reason
        if update.get("state") == "idle" and isinstance(stop, str) and last not in (None, stop):
            self._violate(
                "turn-lifecycle",
                f"a repeated idle changes the stop reason from {last!r} to {stop!r}: a resume "
                "snapshot may only repeat the last one",
                raw,
            )

    def _idle(self, state: CheckedSession, session: str, update: JsonObject, raw: str) -> None:
        stop = update.get("stopReason")
        stop_reason = stop if isinstance(stop, str) else None
        ended = state.turns.observe_end(stop_reason or "")
        if ended is not None:
            if stop_reason is None:
                self._violate(
                    "turn-lifecycle", "idle ends foreground work without a stopReason", raw
                )
            # The cancel is judged at the first idle after it (it may have crossed an earlier
            # turn's idle: then the turns behind it are the agent's to cancel or not).
            if ended.cancel_requested and state.cancel is not None:
                assert ended.outcome is not None
                self._cancelled_idle(state, ended, stop_reason, ended.outcome[0], raw)
            # A prompt accepted while this work ran is queued: its own work comes later.
            self._missing_user_messages(state, before=ended.started_by[1])
        elif stop_reason is not None:
            if state.window is not None or state.accepted_unstarted:
                self._violate(
                    "turn-lifecycle",
                    f"idle with stopReason {stop_reason!r}, but the prompt's work never reported "
                    "running",
                    raw,
                )
                self._missing_user_messages(state)
            elif state.last_stop_reason is not None and stop_reason != state.last_stop_reason:
                self._violate(
                    "turn-lifecycle",
                    f"a repeated idle changes the stop reason from {state.last_stop_reason!r} to "
                    f"{stop_reason!r}: foreground work ends with exactly one idle",
                    raw,
                )
        if stop_reason is not None:
            state.last_stop_reason = stop_reason
        state.state_seen()
        state.cancel = None

    def _open_calls(self, state: CheckedSession) -> None:
        """The session closed or the stream ended: a tool call that never reached a final
        status is shown running forever (on v2 a call may end after its turn's idle, so only
        the end can tell). Each is reported once."""
        self._exercise("tool-call-ended")
        first, state.tool_first = state.tool_first, {}
        for tool_call_id, (raw, index) in first.items():
            status = state.tool_status.get(tool_call_id)
            if status not in _OPEN_STATUSES:
                continue  # ended, or a custom status the checker cannot judge
            self._violate(
                "tool-call-ended",
                f"tool call {tool_call_id!r} never reached a final status (it is still "
                f"{status}): the client shows it running forever",
                raw,
                index,
            )

    def _cancelled_idle(
        self,
        state: CheckedSession,
        ended: CheckedTurn,
        stop_reason: str | None,
        due: str,
        raw: str,
    ) -> None:
        """The idle of work a cancel reached: the machine's ``due`` stop reason (cancelled)
        once the wire proves the agent read the cancel, and no request of it still pending."""
        cancel = state.cancel
        assert cancel is not None
        self._exercise("cancel-silence")
        if stop_reason != due and cancel.proven:
            self._violate(
                "cancel-silence",
                f"work cancelled with session/cancel ended with stopReason {stop_reason!r}, not "
                "'cancelled'",
                raw,
            )
        for key in cancel.requests:
            request = self._agent_requests.get(key)
            if request is not None and not request.withdrawn:
                self._violate(
                    "cancel-silence",
                    f"{request.method} (id {_short(shown_id(key))}) of "
                    "the cancelled work is still pending at its idle: cancel it with "
                    "$/cancel_request",
                    raw,
                )
        background = {
            f"{'term' if kind == 'terminal' else 'tool'}:{ident}"
            for kind, ident in state.background or ()
        }
        state.silenced = ended.work - background

    def _missing_user_messages(self, state: CheckedSession, before: int | None = None) -> None:
        """Report the prompts (answered before index `before`, if given) never echoed."""
        for message_id, (response_raw, index) in list(state.awaiting_user_message.items()):
            if before is not None and index > before:
                continue
            del state.awaiting_user_message[message_id]
            self._violate(
                "prompt-message-id",
                f"no user_message with messageId {message_id!r} (from the session/prompt "
                "response) before the work ended",
                response_raw,
                index,
            )

    def _check_background(self, state: CheckedSession, update: JsonObject, raw: str) -> None:
        background = as_list(update.get("background"))
        if background is None:
            if state.background is not None:
                self._exercise("background-work")
                self._violate(
                    "background-work",
                    "a state update without background after background work was reported",
                    raw,
                )
            return
        self._exercise("background-work")
        items: set[tuple[str, str]] = set()
        for item in background:
            kind = get(item, "type")
            ident = get(item, "terminalId" if kind == "terminal" else "toolCallId")
            if kind not in ("terminal", "tool_call") or not isinstance(ident, str):
                continue
            if kind == "tool_call":
                state.tool_first.pop(ident, None)  # background work: its own rule judges it
            known = ident in (state.terminals if kind == "terminal" else state.tool_status)
            if not known:
                self._violate(
                    "background-work",
                    f"background lists {kind} {ident!r}, which was never announced",
                    raw,
                )
            if (kind, ident) in items:
                self._violate("background-work", f"background lists {kind} {ident!r} twice", raw)
            items.add((kind, ident))
        for kind, ident in items:
            if kind == "tool_call":
                for terminal_id in state.tool_terminals.get(ident, ()):
                    if ("terminal", terminal_id) in items:
                        self._violate(
                            "background-work",
                            f"background lists tool call {ident!r} and its terminal "
                            f"{terminal_id!r}: list process-backed work once, as its terminal",
                            raw,
                        )
        for kind, ident in (state.background or set()) - items:
            if kind == "terminal" and not state.terminals.get(ident, False):
                self._violate(
                    "background-work",
                    f"terminal {ident!r} left the background list before reporting exitStatus",
                    raw,
                )
            elif kind == "tool_call" and state.tool_status.get(ident) not in _FINAL_STATUSES:
                self._violate(
                    "background-work",
                    f"tool call {ident!r} left the background list before reaching a final status",
                    raw,
                )
        state.background = items
