"""The ACP v1 rules of the conformance checker: what v1 requires beyond its schema.

How this works: a checker made with ``protocol_version=1`` validates every
agent message against the official v1 schema (vendored in
``acpio/schema/v1``) and keeps the envelope rules that hold on both versions
(`V1_SHARED_RULES`). The draft v2 session rules (state updates, the
``messageId`` answer, ...) do not apply on v1; in their place `V1Rules` keeps
the rules of `V1_RULES`, fed by the checker's hooks in wire order:

* ``v1-updates``: only v1 session updates (a draft v2 form such as
  ``state_update`` has crashed real v1 clients);
* ``v1-tool-call-order``: a toolCallId is created with ``tool_call`` before any
  ``tool_call_update`` (or permission request without a title) names it, and
  never created twice (replays of ``session/load`` excepted);
* ``v1-prompt-answer``: each ``session/prompt`` is answered once, with a v1
  ``stopReason`` and not the draft v2 ``messageId`` answer;
* ``v1-cancel``: after ``session/cancel`` the turn is answered
  ``cancelled`` (reported only when the wire proves the agent read the
  cancel first: a permission request was pending when it was sent, or the
  agent answered a later request before the prompt) and nothing of that turn
  (message or thought chunks, tool calls, plans, permission requests) is sent
  after the cancelled answer, until the next prompt;
* ``v1-modes``: a session's ``currentModeId`` (in a ``session/new``, ``load`` or
  ``resume`` answer's ``modes``, or a ``current_mode_update``) is one of the
  ``availableModes`` the session was last offered.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from .._json import as_list, as_object
from .._protocol.values import is_known_or_custom
from .._session.turn_machine import TurnMachine, TurnRecord
from .._wire.v1.values import V1_SESSION_UPDATES, V1_STOP_REASONS
from ._rules import RULES, Rule
from ._rules import short as _short
from ._schema_check import is_absolute
from ._session_rules import get

__all__ = (
    "V1_HINTS",
    "V1_RULES",
    "V1_SESSION_UPDATES",
    "V1_SHARED_RULES",
    "V1Rules",
    "v1_rule_table",
)

V1_RULES: Final[Mapping[str, Rule]] = MappingProxyType(
    {
        rule.id: rule
        for rule in (
            Rule(
                "v1-updates",
                "on a v1 connection the agent sends only v1 session updates (never draft v2 "
                "forms such as state_update, user_message or tool_call_content_chunk)",
                True,
            ),
            Rule(
                "v1-tool-call-order",
                "a toolCallId is created once with tool_call before tool_call_update (or a "
                "permission request without a title) names it",
                True,
            ),
            Rule(
                "v1-prompt-answer",
                "each session/prompt is answered exactly once, at the end of its turn, with a "
                "v1 stopReason",
                True,
            ),
            Rule(
                "v1-cancel",
                "after session/cancel the turn is answered with stopReason cancelled and "
                "nothing of that turn is sent after the answer",
                True,
            ),
            Rule(
                "v1-modes",
                "a session's current mode (modes.currentModeId, current_mode_update) is one of "
                "the availableModes it offered",
                True,
            ),
        )
    }
)
"""The rules only a v1 connection has, by ID (the v2 ones are `acpio.testing.RULES`)."""

V1_SHARED_RULES: Final = (
    "stdout",
    "jsonrpc",
    "no-reply-to-notification",
    "schema",
    "methods",
    "custom-values",
    "absolute-paths",
    "base64",
    "tool-call-ended",
    "permission-options",
)
"""The `RULES` IDs that also hold on v1 (the others are draft v2 session rules)."""

_V1_SCHEMA_RULE: Final = Rule(
    "schema", "every agent message validates against the official ACP v1 JSON Schema", True
)

V1_HINTS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "schema": "make the message match the v1 schema (see the path named in the message)",
        "v1-updates": "send v1 updates only: agent_message_chunk, agent_thought_chunk, "
        "tool_call, tool_call_update, plan, usage_update, ...; end a turn by answering "
        "session/prompt with {stopReason}, not with state_update",
        "v1-tool-call-order": "report each tool call first with sessionUpdate tool_call (with "
        "its title), then patch it with tool_call_update; use a new toolCallId per call",
        "v1-prompt-answer": "answer each session/prompt once, when its turn ends, with "
        '{"stopReason": "end_turn"} (or ' + ", ".join(sorted(V1_STOP_REASONS - {"end_turn"})) + ")",
        "v1-cancel": "after session/cancel, answer the prompt with stopReason cancelled once the "
        "remaining updates are sent, and send nothing for that turn afterwards",
        "v1-modes": "offer every mode in modes.availableModes of the session answers, and "
        "switch only to one of them",
    }
)
"""How to fix a violation of each v1 rule (and the v1 wording of shared ones), by rule ID."""

# What belongs to a turn, and so must not follow its cancelled answer.
_TURN_WORK: Final = frozenset(
    {"agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan"}
)


def v1_rule_table() -> Mapping[str, Rule]:
    """Every rule a v1 checker knows, in report order: the shared ones, then `V1_RULES`."""
    table = {rule_id: RULES[rule_id] for rule_id in V1_SHARED_RULES}
    table["schema"] = _V1_SCHEMA_RULE
    table.update(V1_RULES)
    return MappingProxyType(table)


@dataclass(eq=False)
class _Prompt(TurnRecord):
    """A ``session/prompt``'s turn as the checker's turn machine tracks it."""

    index: int = 0  # where the prompt was on the wire


@dataclass(eq=False)
class _Session:
    tool_calls: set[str] = field(default_factory=set[str])
    #: The turns, the agent's own machine fed with what the v1 wire shows: prompts sent,
    #: cancels sent, and the answers that end the turns.
    turns: TurnMachine[_Prompt] = field(default_factory=TurnMachine[_Prompt])
    unanswered: dict[int, _Prompt] = field(default_factory=dict[int, _Prompt])  # by index
    cancel_reach: int = 0  # the last prompt a cancel reached, while one of them is unanswered
    proven: bool = False  # the wire proves the agent read that cancel
    silenced: bool = False  # after the cancelled answer, until the next prompt
    loads: int = 0  # session/load requests pending (their replay repeats history)
    modes: frozenset[str] | None = None  # the mode ids last offered (None: no modes)
    open_calls: dict[str, str] = field(default_factory=dict[str, str])  # id -> raw (this turn)


Violate = Callable[[str, str, str], None]


def _cancelling(state: _Session) -> bool:
    """Whether a cancel reached a prompt that is not answered yet."""
    return any(prompt.cancel_requested for prompt in state.unanswered.values())


class V1Rules:
    """The v1 session rules of one checker (see the module docstring)."""

    def __init__(self, violate: Violate, exercise: Callable[[str], None]) -> None:
        self._violate = violate
        self._exercise = exercise
        self._sessions: dict[str, _Session] = {}
        self._answered_prompts: set[object] = set()

    def _session(self, session: str) -> _Session:
        state = self._sessions.get(session)
        if state is None:
            state = self._sessions[session] = _Session()
        return state

    # -- client messages -----------------------------------------------------------------------

    def client_request(self, method: str, session: str | None, index: int) -> None:
        """The client sent a request (``session/prompt``, ``session/load``, ...)."""
        if session is None:
            return
        state = self._session(session)
        if method == "session/prompt":
            prompt = state.unanswered[index] = _Prompt(message_id="", index=index)
            state.turns.prompt_sent(prompt)
            state.silenced = False
        elif method == "session/load":
            state.loads += 1
            state.silenced = False

    def client_cancel(self, session: str, pending_requests: bool) -> None:
        """The client sent ``session/cancel``; ``pending_requests``: the agent was waiting on
        the client for that session (so it must read the cancel before finishing)."""
        state = self._session(session)
        if not state.unanswered:
            return
        state.proven = (_cancelling(state) and state.proven) or pending_requests
        state.cancel_reach = max(state.unanswered)
        state.turns.cancel_sent()

    def answered_other(self, session: str | None, index: int) -> None:
        """The agent answered a client request sent at ``index``, other than a prompt."""
        if session is None:
            return
        state = self._sessions.get(session)
        if state is not None and _cancelling(state) and index > state.cancel_reach:
            state.proven = True

    def load_answered(self, session: str | None) -> None:
        """A ``session/load`` was answered (its replay is over)."""
        if session is not None:
            state = self._session(session)
            state.loads = max(state.loads - 1, 0)

    # -- agent messages ------------------------------------------------------------------------

    def modes_offered(self, session: str, modes: object, raw: str) -> None:
        """A session answer's ``modes`` (``None``: the answer offered none)."""
        state = self._session(session)
        if modes is None:
            return  # the modes offered before, if any, still hold
        ids = frozenset(
            mode_id
            for mode in as_list(get(modes, "availableModes")) or ()
            if isinstance(mode_id := get(mode, "id"), str)
        )
        state.modes = ids
        self._check_mode(state, get(modes, "currentModeId"), "modes.currentModeId", raw)

    def _check_mode(self, state: _Session, mode_id: object, what: str, raw: str) -> None:
        if not isinstance(mode_id, str):
            return  # the schema reports it
        self._exercise("v1-modes")
        if state.modes is None:
            self._violate(
                "v1-modes", f"{what} {mode_id!r} for a session that was offered no modes", raw
            )
        elif mode_id not in state.modes:
            offered = ", ".join(sorted(state.modes)) or "none"
            self._violate(
                "v1-modes", f"{what} {mode_id!r} is not one of the modes offered ({offered})", raw
            )

    def duplicate_answer(self, key: object, raw: str) -> bool:
        """A response to no pending request: whether it answers a prompt a second time."""
        if key not in self._answered_prompts:
            return False
        self._exercise("v1-prompt-answer")
        self._violate(
            "v1-prompt-answer", "a second answer to a session/prompt already answered", raw
        )
        return True

    def prompt_answered(
        self, key: object, session: str, index: int, message: dict[str, object], raw: str
    ) -> None:
        """The agent answered the ``session/prompt`` sent at ``index``."""
        self._exercise("v1-prompt-answer")
        self._answered_prompts.add(key)
        state = self._session(session)
        prompt = state.unanswered.pop(index, None)
        result = message.get("result")
        fields = as_object(result)
        if "result" not in message:
            stop_reason: object = None  # an error answer
        elif fields is None or "stopReason" not in fields:
            if prompt is not None:
                state.turns.observe_answer(prompt, "")  # still the end of its turn
            what = (
                "the draft v2 answer {messageId}"
                if fields is not None and "messageId" in fields
                else f"{_short(result)}"
            )
            self._violate(
                "v1-prompt-answer",
                f"session/prompt answered with {what} instead of {{stopReason}} at the turn's end",
                raw,
            )
            return
        else:
            stop_reason = fields["stopReason"]
            if stop_reason not in V1_STOP_REASONS:
                self._violate(
                    "v1-prompt-answer",
                    f"stopReason {_short(stop_reason)} is not a v1 stop reason",
                    raw,
                )
        if prompt is not None:
            # The answer ends the prompt's turn: v1 shows no state updates.
            state.turns.observe_answer(prompt, stop_reason if isinstance(stop_reason, str) else "")
        if not state.unanswered:
            self._open_calls(state, raw)
        if prompt is None or not prompt.cancel_requested:
            return
        self._exercise("v1-cancel")
        due = prompt.outcome[0] if prompt.outcome is not None else "cancelled"
        if stop_reason == due or stop_reason is None:
            if all(later.cancel_requested for later in state.unanswered.values()):
                state.silenced = True  # no prompt sent after the cancel waits
        elif state.proven:
            self._violate(
                "v1-cancel",
                f"the cancelled turn was answered with stopReason {_short(stop_reason)}, "
                "not cancelled",
                raw,
            )
        if not _cancelling(state):
            state.proven = False

    def _open_calls(self, state: _Session, raw: str) -> None:
        """The turn ended: a tool call it left pending or in progress is shown so forever."""
        self._exercise("tool-call-ended")
        for tool_call_id in sorted(state.open_calls):
            self._violate(
                "tool-call-ended",
                f"tool call {tool_call_id!r} is still {state.open_calls[tool_call_id]} when "
                "its turn ends: the client shows it running forever",
                raw,
            )
        state.open_calls.clear()

    def agent_request(self, method: str, session: str | None, params: object, raw: str) -> None:
        """The agent sent a request for ``session``."""
        if method in ("fs/read_text_file", "fs/write_text_file"):
            self.check_path(get(params, "path"), f"{method} path", raw)
        elif method == "terminal/create":
            self.check_path(get(params, "cwd"), "terminal/create cwd", raw)
        if session is None:
            return
        state = self._session(session)
        if method == "session/request_permission" and state.silenced:
            self._exercise("v1-cancel")
            self._violate(
                "v1-cancel",
                "session/request_permission after the cancelled turn was answered",
                raw,
            )

    def permission_tool_call(self, session: str | None, tool_call: object, raw: str) -> None:
        """A permission request's ``toolCall``: a known tool call, or one with its title."""
        if session is None:
            return
        tool_call_id = get(tool_call, "toolCallId")
        if not isinstance(tool_call_id, str):
            return
        state = self._session(session)
        self._exercise("v1-tool-call-order")
        if tool_call_id in state.tool_calls:
            return
        if isinstance(get(tool_call, "title"), str):
            state.tool_calls.add(tool_call_id)  # shown as a new call, as editors do
            return
        self._violate(
            "v1-tool-call-order",
            f"session/request_permission names tool call {tool_call_id!r}, never reported with "
            "tool_call, without a title",
            raw,
        )

    def check_path(self, path: object, what: str, raw: str) -> None:
        """v1's schema has no absolute-path type: file paths are checked here."""
        if not isinstance(path, str):
            return
        self._exercise("absolute-paths")
        if not is_absolute(path):
            self._violate("absolute-paths", f"{what} {path!r} is not an absolute path", raw)

    def _tool_call_paths(self, update: dict[str, object], raw: str) -> None:
        for location in as_list(update.get("locations")) or ():
            self.check_path(get(location, "path"), "location path", raw)
        for item in as_list(update.get("content")) or ():
            if get(item, "type") == "diff":
                self.check_path(get(item, "path"), "diff path", raw)

    @staticmethod
    def _track_status(state: _Session, kind: str, update: dict[str, object]) -> None:
        tool_call_id = update.get("toolCallId")
        if not isinstance(tool_call_id, str) or state.loads or not state.unanswered:
            return  # a replay, or no turn to end
        status = update.get("status")
        if kind == "tool_call" or "status" in update:
            if status in ("completed", "failed"):
                state.open_calls.pop(tool_call_id, None)
            else:
                state.open_calls[tool_call_id] = status if isinstance(status, str) else "pending"

    def session_update(self, session: str, update: dict[str, object], raw: str) -> None:
        """One ``session/update`` for ``session``."""
        state = self._session(session)
        kind = update.get("sessionUpdate")
        self._exercise("v1-updates")
        if not isinstance(kind, str):
            return  # the schema reports it
        if not is_known_or_custom(kind, V1_SESSION_UPDATES):
            self._violate(
                "v1-updates",
                f"sessionUpdate {kind!r} is not a v1 update: a v1 client cannot show it",
                raw,
            )
            return
        if state.silenced and kind in _TURN_WORK and not state.loads:
            self._exercise("v1-cancel")
            self._violate(
                "v1-cancel",
                f"{kind} after the cancelled turn was answered: nothing of that turn may follow",
                raw,
            )
        if kind == "current_mode_update":
            self._check_mode(state, update.get("currentModeId"), "current_mode_update", raw)
        if kind in ("tool_call", "tool_call_update"):
            self._tool_call_paths(update, raw)
            self._track_status(state, kind, update)
        tool_call_id = update.get("toolCallId")
        if kind == "tool_call" and isinstance(tool_call_id, str):
            self._exercise("v1-tool-call-order")
            if tool_call_id in state.tool_calls and not state.loads:
                self._violate(
                    "v1-tool-call-order",
                    f"tool_call reports toolCallId {tool_call_id!r} a second time: use "
                    "tool_call_update to change it, a new id for a new call",
                    raw,
                )
            state.tool_calls.add(tool_call_id)
        elif kind == "tool_call_update" and isinstance(tool_call_id, str):
            self._exercise("v1-tool-call-order")
            if tool_call_id not in state.tool_calls:
                self._violate(
                    "v1-tool-call-order",
                    f"tool_call_update for {tool_call_id!r} before any tool_call created it",
                    raw,
                )
                state.tool_calls.add(tool_call_id)  # one report per id
