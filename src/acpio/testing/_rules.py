"""The conformance rules and what the checker reports: rule table, violations, reports.

Each rule has a stable ID in `RULES`, one line saying what it requires, and a hint saying how to
fix a violation (`HINTS`). The checker (`acpio.testing._conformance`) reports a `Violation`
naming its rule, raises `ConformanceError` in strict mode, and sums a stream up in a
`ConformanceReport` with one `RuleResult` per rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from .._errors import AcpError

__all__ = (
    "HINTS",
    "RULES",
    "ConformanceError",
    "ConformanceReport",
    "Rule",
    "RuleResult",
    "Violation",
    "short",
)


@dataclass(frozen=True, slots=True)
class Rule:
    """One protocol rule the checker enforces."""

    id: str
    """Stable identifier, e.g. ``"turn-lifecycle"``."""
    description: str
    """One line saying what the rule requires."""
    mandatory: bool
    """Whether the protocol states it as a requirement (MUST); `False` for recommendations
    (SHOULD) and for heuristics that detect a MUST only in the cases the wire proves."""


def _rules(*rules: Rule) -> Mapping[str, Rule]:
    return MappingProxyType({rule.id: rule for rule in rules})


RULES: Final[Mapping[str, Rule]] = _rules(
    Rule("stdout", "every line the agent writes to stdout is one JSON-RPC message object", True),
    Rule(
        "jsonrpc",
        'JSON-RPC 2.0 envelopes: "jsonrpc": "2.0", valid ids, exactly one of result/error, '
        "one response per client request, arrays only to answer a client batch",
        True,
    ),
    Rule(
        "id-fidelity",
        "every response echoes its request's id exactly: the same type (string or number) and "
        "the same value",
        True,
    ),
    Rule(
        "no-reply-to-notification",
        "notifications are never answered (a batch of only notifications not even with [])",
        True,
    ),
    Rule("schema", "every agent message validates against the official draft v2 JSON Schema", True),
    Rule(
        "methods",
        "the agent calls only client methods (session/update, session/request_permission, "
        "elicitation/*, $/cancel_request) and _-prefixed extensions",
        True,
    ),
    Rule(
        "custom-values",
        "values of open enums and unions that this protocol version does not define start with _",
        True,
    ),
    Rule("absolute-paths", "file paths (locations, diffs, patches, cwd) are absolute", True),
    Rule("base64", "terminal output and other base64 fields are valid RFC 4648 base64", True),
    Rule(
        "patch-consistency",
        "a diff's git_patch text is one or more diff --git sections matching its changes",
        True,
    ),
    Rule(
        "tool-call-title",
        "a tool call's title is sent the first time its toolCallId is reported",
        False,
    ),
    Rule(
        "tool-call-ended",
        "every tool call of a turn reaches a final status (completed, failed or cancelled) by "
        "the turn's end (the client would show it running forever)",
        False,
    ),
    Rule(
        "permission-options",
        "permission requests offer at least one option, with unique optionIds and known or "
        "_-prefixed kinds",
        True,
    ),
    Rule(
        "prompt-message-id",
        "an accepted session/prompt is answered with a messageId, and a user message with that "
        "messageId is reported before the work ends",
        True,
    ),
    Rule(
        "turn-lifecycle",
        "running is reported before a prompt's output, requires_action only while a request "
        "to the user is pending and running again when work resumes, and foreground work ends "
        "with one idle carrying a stop reason",
        True,
    ),
    Rule(
        "cancel-silence",
        "after session/cancel the work ends with stopReason cancelled, pending permission "
        "requests are answered or cancelled, and nothing is sent for that work afterwards",
        True,
    ),
    Rule(
        "session-close",
        "session/close ends active work with idle cancelled before its response, and nothing "
        "is sent for the session afterwards",
        True,
    ),
    Rule(
        "background-work",
        "background work lists announced items, is reported on every state update once "
        "reported, and an item leaves the list only after its exit or final status",
        True,
    ),
    Rule(
        "terminal-id-reuse",
        "a terminalId is never reused for a different terminal (a new command after exit)",
        False,
    ),
    Rule(
        "config-and-commands",
        "advertised config options have unique configIds and a select's currentValue is one "
        "of its values; slash command names are unique and contain no whitespace",
        True,
    ),
)
"""Every rule the checker knows, by ID, in report order."""

HINTS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "stdout": "stdout carries only protocol messages: send logs and prints to stderr",
        "jsonrpc": "send JSON-RPC 2.0 objects; answer each client request exactly once, echoing "
        "its id (a client batch with one array of its responses)",
        "id-fidelity": "answer with the request's id exactly as it came: keep it as the raw "
        'JSON value, never convert "42" to 42 (or 42 to "42")',
        "no-reply-to-notification": "requests without an id are notifications: never answer "
        "them, not even with an error (nor a batch of them with [])",
        "schema": "make the message match the draft v2 schema (see the path named in the message)",
        "methods": "call only methods the client implements, or use a _-prefixed extension method",
        "custom-values": "use a value the schema defines, or prefix custom values with _ "
        "(unknown non-_ values are reserved for future ACP versions)",
        "absolute-paths": "send absolute paths (e.g. /home/user/project/src/main.py), never "
        "relative paths or URIs",
        "base64": "encode each chunk on its own with standard RFC 4648 base64 (with padding, "
        "no line breaks)",
        "patch-consistency": "build the patch from the same changes: one diff --git section per "
        "changed path, with the matching new file/deleted file/rename/copy headers",
        "tool-call-title": "send title (and name) in the first tool_call_update of each toolCallId",
        "tool-call-ended": "end every tool call before the turn ends: open it with "
        "`async with` (acpio ends it for you), or call complete() or fail()",
        "permission-options": "offer at least one option; give each option a unique optionId "
        "and a known or _-prefixed kind",
        "prompt-message-id": "answer session/prompt with {messageId} and echo the prompt as a "
        "user_message with that messageId before reporting idle",
        "turn-lifecycle": "report state_update running when foreground work starts or resumes, "
        "requires_action only while waiting for the user, and end with one idle carrying a "
        "stopReason",
        "cancel-silence": "after session/cancel, finish with idle stopReason cancelled, cancel "
        "pending permission requests with $/cancel_request, and send nothing for that work "
        "afterwards",
        "session-close": "on session/close, end active work with idle cancelled, then answer, "
        "then send nothing more for the session",
        "background-work": "announce each item before listing it, keep listing background work "
        "on every state update, and report exit or a final status before dropping an item",
        "terminal-id-reuse": "use a new terminalId for each terminal",
        "config-and-commands": "send each config option once with a currentValue among its "
        "values, and each command once under a name without whitespace (no leading /)",
    }
)
"""How to fix a violation of each rule, by rule ID."""


def short(value: object, limit: int = 80) -> str:
    """`value`'s repr, cut to `limit` characters (for violation messages)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule: what is wrong, how to fix it, and the offending message."""

    rule: str
    """The `RULES` ID."""
    message: str
    """What is wrong, naming the values involved."""
    hint: str
    """How to fix it."""
    raw: str
    """The offending message as written on the wire (or the related message for violations
    found at the end of the stream)."""
    index: int = 0
    """Position of the offending line in the observed stream (1-based; 0 when not tied to one)."""

    def __str__(self) -> str:
        raw = self.raw if len(self.raw) <= 300 else self.raw[:297] + "..."
        return f"[{self.rule}] {self.message}\n  hint: {self.hint}\n  message: {raw}"


class ConformanceError(AcpError, AssertionError):
    """Raised by a strict `ConformanceChecker` on the first protocol violation it sees."""

    def __init__(self, violation: Violation) -> None:
        """Wrap `violation` (its text is the exception message)."""
        super().__init__(str(violation))
        self.violation: Violation = violation
        """The violation that was found."""


@dataclass(frozen=True, slots=True)
class RuleResult:
    """How one rule fared over the observed stream."""

    rule: Rule
    """The rule."""
    exercised: int
    """How many relevant messages the rule examined (0: the stream never tested it)."""
    violations: int
    """How many violations of the rule were found."""

    @property
    def passed(self) -> bool:
        """Whether the rule found no violation."""
        return self.violations == 0


@dataclass(frozen=True, slots=True)
class ConformanceReport:
    """Summary of a checked stream: per-rule results and every violation."""

    results: tuple[RuleResult, ...]
    """One result per enabled rule, in `RULES` order."""
    violations: tuple[Violation, ...]
    """Every violation found, in order."""
    messages: int
    """How many lines were observed (both directions)."""

    @property
    def ok(self) -> bool:
        """Whether no violation was found."""
        return not self.violations

    @property
    def failed_rules(self) -> list[str]:
        """IDs of the rules with at least one violation."""
        return [result.rule.id for result in self.results if not result.passed]

    @property
    def exercised_rules(self) -> list[str]:
        """IDs of the rules that examined at least one relevant message."""
        return [result.rule.id for result in self.results if result.exercised]

    def summary(self) -> str:
        """One line per rule (PASS, FAIL or "not exercised"), then the violations."""
        lines: list[str] = []
        for result in self.results:
            if not result.passed:
                status = f"FAIL ({result.violations})"
            elif result.exercised:
                status = "pass"
            else:
                status = "not exercised"
            lines.append(f"{status:>14}  {result.rule.id}: {result.rule.description}")
        lines.extend(str(violation) for violation in self.violations)
        return "\n".join(lines)
