"""Protocol rules checked on the wire: a conformance checker for everything an agent sends.

How this works: `ConformanceChecker.observe` is fed every line in both directions, in the order
the client sent or received them (no I/O here: bytes in, violations out). Agent lines are
checked; client lines only update what the checker knows (pending requests, prompts, cancels).
Each rule has a stable ID in `RULES`; a violation names its rule, says what is wrong and how to
fix it, and carries the offending message.

Three layers do the work:

* JSON Schema: agent requests, notifications and responses are validated against the official
  draft v2 schema (the copy vendored in `acpio.schema`) with `jsonschema`. The schema's unions
  are ``anyOf`` lists of discriminated variants plus an open catch-all; the validator evaluates
  only the variant a discriminator selects (equivalent to ``anyOf`` for these shapes, ~10x
  faster, and its errors point inside the variant). While doing so it also reports, as separate
  findings that never change validity, unknown non-``_`` values of open enums and unions
  (``custom-values``), relative `AbsolutePath` values (``absolute-paths``) and invalid
  ``contentEncoding: base64`` strings (``base64``): all three are derived from the schema, so
  they follow it when the draft changes.
* A git patch reader for diff ``patch`` text (``patch-consistency``, paths in the patch).
* Per-session state machines for the rules that span messages: JSON-RPC correlation, tool-call
  titles, the prompt turn (running, idle with a stop reason, requires_action), cancellation,
  session close and background work.

Where the wire cannot tell who was first (a cancel crossing an idle in flight), a rule only
fires when the order proves the agent wrong.
"""

from __future__ import annotations

import base64
import binascii
import contextvars
import functools
import importlib.resources
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final, Literal, TypeAlias, cast

import msgspec
from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError, best_match

from .._errors import AcpError

__all__ = (
    "RULES",
    "ConformanceChecker",
    "ConformanceError",
    "ConformanceReport",
    "Direction",
    "Rule",
    "RuleResult",
    "Violation",
)

Direction: TypeAlias = Literal["agent->client", "client->agent"]
"""Which way a line went: written by the agent, or written by the client."""

_AGENT: Final = "agent->client"
_CLIENT: Final = "client->agent"
_JsonObject: TypeAlias = dict[str, object]


# -- rules -------------------------------------------------------------------------------------


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
        "one response per client request, no batches from the agent",
        True,
    ),
    Rule("no-reply-to-notification", "notifications are never answered", True),
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
)

_HINTS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "stdout": "stdout carries only protocol messages: send logs and prints to stderr",
        "jsonrpc": "send JSON-RPC 2.0 objects; answer each client request exactly once, echoing "
        "its id",
        "no-reply-to-notification": "requests without an id are notifications: never answer "
        "them, not even with an error",
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
    }
)


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
        lines = []
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


# -- schema validation -------------------------------------------------------------------------

# Finding "validators": errors carrying these never make an instance invalid; they are reported
# under their own rules.
_CUSTOM: Final = "acpio-custom-value"
_ABSOLUTE: Final = "acpio-absolute-path"
_BASE64: Final = "acpio-base64"
_FINDINGS: Final = frozenset({_CUSTOM, _ABSOLUTE, _BASE64})
_FINDING_RULES: Final[Mapping[str, str]] = {
    _CUSTOM: "custom-values",
    _ABSOLUTE: "absolute-paths",
    _BASE64: "base64",
}
# Which finding rules a validation run examined (for the report's "exercised" counts).
_touched: contextvars.ContextVar[set[str]] = contextvars.ContextVar("acpio_touched")


def _touch(rule: str) -> None:
    touched = _touched.get(None)
    if touched is not None:
        touched.add(rule)


def _official(error: ValidationError) -> bool:
    return error.validator not in _FINDINGS


def _has_official(errors: Iterable[ValidationError]) -> bool:
    return any(error.validator not in _FINDINGS for error in errors)


_WINDOWS_DRIVE: Final = re.compile(r"[A-Za-z]:[\\/]")


def _is_absolute(path: str) -> bool:
    # Native syntax of the agent's machine: POSIX, a Windows drive, or a UNC share; never a URI.
    return path.startswith(("/", "\\\\")) or _WINDOWS_DRIVE.match(path) is not None


def _is_base64(data: str) -> bool:
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _short(value: object, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True, slots=True)
class _Union:
    """An ``anyOf`` whose variants are told apart by a discriminator (or are string consts)."""

    name: str
    key: str | None  # the discriminator property; None for an enum of string consts
    table: Mapping[str, tuple[int, object]]
    rest: tuple[tuple[int, object, bool], ...]  # (index, branch, is an open catch-all)


_unions: dict[int, tuple[object, _Union | None]] = {}
_union_names: dict[int, str] = {}


def _const_tag(branch: Mapping[str, object]) -> tuple[str, str] | None:
    properties = branch.get("properties")
    required = branch.get("required")
    if branch.get("type") != "object" or not isinstance(properties, dict):
        return None
    if not isinstance(required, list):
        return None
    for key in required:
        prop = properties.get(key)
        if isinstance(prop, dict) and isinstance(prop.get("const"), str):
            return key, prop["const"]
    return None


def _is_catch_all(branch: Mapping[str, object], key: str | None) -> bool:
    target: object = (
        branch if key is None else cast(dict[str, object], branch.get("properties", {})).get(key)
    )
    return (
        isinstance(target, dict)
        and target.get("type") == "string"
        and not {"const", "enum", "pattern"} & target.keys()
    )


def _build_union(any_of: list[object]) -> _Union | None:
    enum_table: dict[str, tuple[int, object]] = {}
    object_table: dict[str, tuple[int, object]] = {}
    keys: set[str] = set()
    others: list[tuple[int, Mapping[str, object]]] = []
    for index, branch in enumerate(any_of):
        if not isinstance(branch, dict):
            return None
        const = branch.get("const")
        if isinstance(const, str) and branch.get("type") == "string":
            if (
                not branch.keys() <= {"type", "const", "description", "title"}
                or const in enum_table
            ):
                return None
            enum_table[const] = (index, branch)
            continue
        tag = _const_tag(branch)
        if tag is None:
            others.append((index, branch))
            continue
        if tag[1] in object_table:
            return None
        keys.add(tag[0])
        object_table[tag[1]] = (index, branch)
    if enum_table and not object_table:
        key = None
        table = enum_table
    elif object_table and not enum_table and len(keys) == 1:
        key = next(iter(keys))
        table = object_table
    else:
        return None
    rest = tuple((index, branch, _is_catch_all(branch, key)) for index, branch in others)
    return _Union(_union_names.get(id(any_of), key or "enum"), key, table, rest)


def _union(any_of: list[object]) -> _Union | None:
    cached = _unions.get(id(any_of))
    if cached is not None and cached[0] is any_of:
        return cached[1]
    union = _build_union(any_of)
    _unions[id(any_of)] = (any_of, union)  # keeps any_of alive, so its id stays unique
    return union


def _try_rest(
    validator: Any, union: _Union, instance: object, unknown: str | None
) -> list[ValidationError] | None:
    """Findings to report if a non-const variant accepts `instance`, else `None`."""
    for index, branch, catch_all in union.rest:
        errors = list(_descend(validator, instance, branch, schema_path=index))
        if _has_official(errors):
            continue
        if catch_all and unknown is not None and not unknown.startswith("_"):
            if union.key is None:
                what = f"{unknown!r} is not a {union.name} value"
            else:
                what = f"{union.key} {unknown!r} is not a {union.name} variant"
            errors.append(
                ValidationError(
                    f"{what} this protocol version defines, and custom values must start with '_'",
                    validator=_CUSTOM,
                    validator_value=union.name,
                    instance=unknown,
                    path=() if union.key is None else (union.key,),
                )
            )
        return errors
    return None


def _any_of_generic(
    validator: Any, any_of: list[object], instance: object
) -> Iterator[ValidationError]:
    context: list[ValidationError] = []
    for index, branch in enumerate(any_of):
        errors = list(_descend(validator, instance, branch, schema_path=index))
        if not _has_official(errors):
            yield from errors
            return
        context.extend(errors)
    yield ValidationError(
        f"{_short(instance)} is not valid under any of the given schemas", context=context
    )


def _any_of(
    validator: Any, any_of: list[object], instance: object, schema: object
) -> Iterator[ValidationError]:
    union = _union(any_of)
    if union is not None:
        if any(catch_all for _, _, catch_all in union.rest):
            _touch("custom-values")
        if union.key is None:
            if isinstance(instance, str):
                if instance in union.table:
                    return
                found = _try_rest(validator, union, instance, instance)
                if found is not None:
                    yield from found
                    return
        elif isinstance(instance, dict):
            tag = instance.get(union.key)
            if isinstance(tag, str):
                entry = union.table.get(tag)
                if entry is None:
                    # Only a non-const variant can accept an unknown discriminator.
                    found = _try_rest(validator, union, instance, tag)
                    if found is not None:
                        yield from found
                        return
                else:
                    # A variant requiring another const value cannot match: check this one.
                    index, branch = entry
                    errors = list(_descend(validator, instance, branch, schema_path=index))
                    if not _has_official(errors):
                        yield from errors
                        return
                    found = _try_rest(validator, union, instance, None)
                    if found is not None:
                        yield from found
                        return
                    yield from errors
                    return
    yield from _any_of_generic(validator, any_of, instance)


def _one_of(
    validator: Any, one_of: list[object], instance: object, schema: object
) -> Iterator[ValidationError]:
    context: list[ValidationError] = []
    valid: list[list[ValidationError]] = []
    for index, branch in enumerate(one_of):
        errors = list(_descend(validator, instance, branch, schema_path=index))
        if _has_official(errors):
            context.extend(errors)
        else:
            valid.append(errors)
    if not valid:
        yield ValidationError(
            f"{_short(instance)} is not valid under any of the given schemas", context=context
        )
    elif len(valid) > 1:
        yield ValidationError(f"{_short(instance)} is valid under more than one of the schemas")
    else:
        yield from valid[0]


def _not(
    validator: Any, not_schema: object, instance: object, schema: object
) -> Iterator[ValidationError]:
    if not _has_official(_descend(validator, instance, not_schema)):
        yield ValidationError(f"{_short(instance)} should not be valid under {_short(not_schema)}")


_ORIGINAL: Final = Draft202012Validator.VALIDATORS


def _unevaluated_properties(
    validator: Any, value: object, instance: object, schema: object
) -> Iterator[ValidationError]:
    if value is True:  # the only use in the schema: nothing to check
        return
    yield from _ORIGINAL["unevaluatedProperties"](validator, value, instance, schema)


def _additional_properties(
    validator: Any, value: object, instance: object, schema: object
) -> Iterator[ValidationError]:
    if value is True:  # nearly every use in the schema: nothing to check
        return
    yield from _ORIGINAL["additionalProperties"](validator, value, instance, schema)


def _properties(
    validator: Any, properties: dict[str, object], instance: object, schema: object
) -> Iterator[ValidationError]:
    if isinstance(instance, dict):
        for name, subschema in properties.items():
            if name in instance:
                yield from _descend(validator, instance[name], subschema, name, name)


def _items(
    validator: Any, items: object, instance: object, schema: dict[str, object]
) -> Iterator[ValidationError]:
    if not isinstance(instance, list) or "prefixItems" in schema or items is False:
        yield from _ORIGINAL["items"](validator, items, instance, schema)
        return
    for index, item in enumerate(instance):
        yield from _descend(validator, item, items, index)


def _all_of(
    validator: Any, all_of: list[object], instance: object, schema: object
) -> Iterator[ValidationError]:
    for index, subschema in enumerate(all_of):
        yield from _descend(validator, instance, subschema, schema_path=index)


def _is_json_type(instance: object, name: object) -> bool:
    # JSON types of msgspec-decoded data; 2020-12 counts 1.0 as an integer.
    if name == "object":
        return isinstance(instance, dict)
    if name == "string":
        return isinstance(instance, str)
    if name == "array":
        return isinstance(instance, list)
    if name == "null":
        return instance is None
    if name == "boolean":
        return isinstance(instance, bool)
    if isinstance(instance, bool):
        return False
    if name == "integer":
        return isinstance(instance, int) or (isinstance(instance, float) and instance.is_integer())
    return name == "number" and isinstance(instance, (int, float))


def _type(
    validator: Any, types: object, instance: object, schema: object
) -> Iterator[ValidationError]:
    names = types if isinstance(types, list) else [types]
    if not any(_is_json_type(instance, name) for name in names):
        yield ValidationError(f"{_short(instance)} is not of type {', '.join(map(repr, names))}")


def _descend(
    validator: Any,
    instance: object,
    schema: object,
    path: str | int | None = None,
    schema_path: str | int | None = None,
) -> Iterator[ValidationError]:
    """Validate `instance` against a subschema, like jsonschema's ``descend``.

    Unlike it, no validator object is derived per subschema (the schema holds no references
    to resolve, see `_inline_refs`): that derivation was half of the validation time.
    """
    if schema is True:
        return
    if not isinstance(schema, dict):
        yield ValidationError(f"{_short(instance)} is not allowed here (false schema)")
        return
    keywords = validator.VALIDATORS
    for keyword, value in schema.items():
        function = keywords.get(keyword)
        if function is None:
            continue
        for error in function(validator, value, instance, schema) or ():
            # Fill in what the keyword left unset, as jsonschema's own descend does.
            cast(Any, error)._set(
                validator=keyword,
                validator_value=value,
                instance=instance,
                schema=schema,
                type_checker=validator.TYPE_CHECKER,
            )
            error.relative_schema_path.appendleft(keyword)
            if path is not None:
                error.relative_path.appendleft(path)
            if schema_path is not None:
                error.relative_schema_path.appendleft(schema_path)
            yield error


def _content_encoding(
    validator: Any, encoding: object, instance: object, schema: object
) -> Iterator[ValidationError]:
    if encoding == "base64" and isinstance(instance, str):
        _touch("base64")
        if not _is_base64(instance):
            yield ValidationError(
                f"{_short(instance, 40)} is not valid RFC 4648 base64",
                validator=_BASE64,
                instance=instance,
            )


_ABSOLUTE_KEYWORD: Final = "x-acpio-absolute-path"


def _absolute_path(
    validator: Any, enabled: object, instance: object, schema: object
) -> Iterator[ValidationError]:
    if enabled is True and isinstance(instance, str):
        _touch("absolute-paths")
        if not _is_absolute(instance):
            yield ValidationError(
                f"{instance!r} is not an absolute path", validator=_ABSOLUTE, instance=instance
            )


_Validator: Any = validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator,
    {
        "anyOf": _any_of,
        "oneOf": _one_of,
        "not": _not,
        "unevaluatedProperties": _unevaluated_properties,
        "additionalProperties": _additional_properties,
        "properties": _properties,
        "items": _items,
        "allOf": _all_of,
        "type": _type,
        "contentEncoding": _content_encoding,
        _ABSOLUTE_KEYWORD: _absolute_path,
    },
)


_ANNOTATIONS: Final = frozenset({"description", "title", "default", "examples"})


def _inline_refs(defs: dict[str, Any]) -> None:
    """Replace every ``{"$ref": "#/$defs/Name"}`` by the definition object itself.

    Validation then never resolves a reference (a third of jsonschema's time otherwise); the
    definitions are shared, not copied, so this is the same schema. A reference with sibling
    keywords becomes an ``allOf`` next to them, as 2020-12 evaluates ``$ref``; an ``allOf`` of
    one schema with only annotations beside it is replaced by that schema.
    """

    def target(node: object) -> object:
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] in defs:
            if len(node) == 1:
                return defs[ref[8:]]
            node = {key: value for key, value in node.items() if key != "$ref"}
            node["allOf"] = [*node.get("allOf", ()), defs[ref[8:]]]
        all_of = node.get("allOf")
        if (
            isinstance(all_of, list)
            and len(all_of) == 1
            and node.keys() - _ANNOTATIONS == {"allOf"}
        ):
            # {"description": ..., "allOf": [X]} validates exactly like X: skip a descent.
            return target(all_of[0])
        return node

    seen: set[int] = set()
    stack: list[object] = list(defs.values())
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, dict):
            for key, value in node.items():
                if key not in ("properties", "$defs", "const", "enum", "default", "examples"):
                    node[key] = target(value)
                    stack.append(node[key])
                elif key in ("properties", "$defs") and isinstance(value, dict):
                    for name, sub in value.items():
                        value[name] = target(sub)
                        stack.append(value[name])
        elif isinstance(node, list):
            for index, item in enumerate(node):
                node[index] = target(item)
                stack.append(node[index])


@dataclass(frozen=True, slots=True)
class _MethodDefs:
    params: str | None  # def name of the params
    result: str | None  # def name of the successful result; None for a notification


class _Schema:
    """The draft v2 schema prepared for checking: validators per definition, method tables."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        defs: dict[str, Any] = document["$defs"]
        self.defs = defs
        absolute = defs.get("AbsolutePath")
        if isinstance(absolute, dict):
            absolute[_ABSOLUTE_KEYWORD] = True
        _inline_refs(defs)
        for name, definition in defs.items():
            if isinstance(definition, dict) and isinstance(definition.get("anyOf"), list):
                _union_names[id(definition["anyOf"])] = name
        self._validators: dict[str, Any] = {}
        params: dict[tuple[str, str], str] = {}
        results: dict[tuple[str, str], str] = {}
        for name, definition in defs.items():
            method = definition.get("x-method") if isinstance(definition, dict) else None
            side = definition.get("x-side") if isinstance(definition, dict) else None
            if not isinstance(method, str) or not isinstance(side, str):
                continue
            (results if name.endswith("Response") else params)[(side, method)] = name
        # Methods the client handles (the agent may call them) and methods the agent handles.
        self.client_methods: dict[str, _MethodDefs] = {}
        self.agent_methods: dict[str, _MethodDefs] = {}
        for (side, method), name in params.items():
            defs_ = _MethodDefs(name, results.get((side, method)))
            if side in ("client", "protocol"):
                self.client_methods[method] = defs_
            if side in ("agent", "protocol"):
                self.agent_methods[method] = defs_

    def validator(self, name: str) -> Any:
        validator = self._validators.get(name)
        if validator is None:
            validator = self._validators[name] = _Validator(self.defs[name])
        return validator


@functools.cache
def _load_schema(path: str | None) -> _Schema:
    if path is None:
        data = importlib.resources.files("acpio.schema").joinpath("schema.json").read_bytes()
    else:
        data = Path(path).read_bytes()
    document = msgspec.json.decode(data)
    if not isinstance(document, dict) or not isinstance(document.get("$defs"), dict):
        raise ValueError(f"{path or 'acpio.schema/schema.json'} is not an ACP JSON Schema")
    return _Schema(document)


def _error_text(error: ValidationError) -> str:
    path = "".join(
        f"[{part}]" if isinstance(part, int) else f".{part}" for part in error.absolute_path
    )
    message = error.message if len(error.message) <= 240 else error.message[:237] + "..."
    return f"{path.lstrip('.') or '(root)'}: {message}"


# -- git patches -------------------------------------------------------------------------------


@dataclass(slots=True)
class _PatchSection:
    header: tuple[str, str] | None = None
    minus: str | None = None  # path on the --- line; "" for /dev/null
    plus: str | None = None
    operation: str = "modify"
    rename_from: str | None = None
    rename_to: str | None = None

    @property
    def path(self) -> str | None:
        if self.operation in ("move", "copy"):
            return self.rename_to
        if self.operation == "delete":
            return self.minus or (self.header[0] if self.header else None)
        return self.plus or (self.header[1] if self.header else None)

    @property
    def old_path(self) -> str | None:
        return self.rename_from if self.operation in ("move", "copy") else None

    def paths(self) -> list[str]:
        found = [*(self.header or ())]
        found.extend(p for p in (self.minus, self.plus, self.rename_from, self.rename_to) if p)
        return found


_ESCAPES: Final = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def _unquote(text: str) -> tuple[str, str]:
    """Read one git-quoted path (C-style escapes, octal UTF-8 bytes); return it and the rest."""
    out = bytearray()
    i = 1
    while i < len(text):
        char = text[i]
        if char == '"':
            return out.decode("utf-8", "replace"), text[i + 1 :]
        if char == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt in "01234567" and i + 3 < len(text):
                out.append(int(text[i + 1 : i + 4], 8) & 0xFF)
                i += 4
                continue
            out.append(_ESCAPES.get(nxt, ord(nxt) & 0xFF))
            i += 2
            continue
        out += char.encode()
        i += 1
    return out.decode("utf-8", "replace"), ""


def _patch_path(text: str) -> str:
    # ---/+++/rename lines: a quoted or plain path; git may add a TAB after names with spaces.
    if text.startswith('"'):
        return _unquote(text)[0]
    return text[:-1] if text.endswith("\t") else text


def _header_paths(rest: str) -> tuple[str, str]:
    if rest.startswith('"'):
        first, tail = _unquote(rest)
        tail = tail.lstrip(" ")
        return first, _patch_path(tail)
    half = len(rest) // 2
    if len(rest) % 2 == 1 and rest[half] == " " and rest[:half] == rest[half + 1 :]:
        return rest[:half], rest[half + 1 :]
    if rest.endswith('"'):
        start = rest.rfind(' "')
        if start >= 0:
            return rest[:start], _unquote(rest[start + 1 :])[0]
    spaces = [i for i, char in enumerate(rest) if char == " "]
    for i in spaces:
        if _is_absolute(rest[i + 1 :]):
            return rest[:i], rest[i + 1 :]
    if spaces:
        return rest[: spaces[0]], rest[spaces[0] + 1 :]
    return rest, rest


def _parse_git_patch(text: str) -> tuple[list[_PatchSection], str | None]:
    """The sections of a ``git_patch`` text, and a problem with its framing (or `None`)."""
    sections: list[_PatchSection] = []
    problem = None
    current: _PatchSection | None = None
    in_hunks = False
    for line in text.split("\n"):
        if line.startswith("diff --git "):
            current = _PatchSection(header=_header_paths(line[len("diff --git ") :]))
            sections.append(current)
            in_hunks = False
            continue
        if current is None:
            if line.strip() and problem is None:
                problem = (
                    f"text before the first 'diff --git' line ({_short(line, 60)}): commit "
                    "metadata and email envelopes must not be included"
                )
            continue
        if in_hunks:
            continue
        if line.startswith(("@@", "Binary files ", "GIT binary patch")):
            in_hunks = True
        elif line.startswith("--- "):
            path = _patch_path(line[4:])
            current.minus = "" if path == "/dev/null" else path
        elif line.startswith("+++ "):
            path = _patch_path(line[4:])
            current.plus = "" if path == "/dev/null" else path
        elif line.startswith("new file mode"):
            current.operation = "add"
        elif line.startswith("deleted file mode"):
            current.operation = "delete"
        elif line.startswith(("rename from ", "copy from ")):
            current.operation = "move" if line.startswith("rename") else "copy"
            current.rename_from = _patch_path(line.split(" from ", 1)[1])
        elif line.startswith(("rename to ", "copy to ")):
            current.rename_to = _patch_path(line.split(" to ", 1)[1])
    if not sections:
        problem = "git_patch text has no 'diff --git' section"
    return sections, problem


# -- per-session state -------------------------------------------------------------------------


@dataclass(slots=True)
class _Request:
    method: str
    session: str | None
    index: int
    raw: str
    subjects: frozenset[str] = frozenset()  # tool call / terminal ids a permission is about
    withdrawn: bool = False  # the agent sent $/cancel_request for it


@dataclass(slots=True)
class _Cancel:
    index: int
    proven: bool  # the agent certainly processed the cancel before its idle
    requests: set[object]  # keys of agent requests pending when the client cancelled


@dataclass(slots=True)
class _SessionState:
    state: str = "idle"
    span: bool = False  # foreground work active (state other than idle)
    tool_status: dict[str, str] = field(default_factory=dict)
    tool_terminals: dict[str, set[str]] = field(default_factory=dict)
    terminals: dict[str, bool] = field(default_factory=dict)  # id -> exited
    terminal_commands: dict[str, str] = field(default_factory=dict)
    messages: set[tuple[str, str]] = field(default_factory=set)
    plans: set[str] = field(default_factory=set)
    user_messages: set[str] = field(default_factory=set)
    awaiting_user_message: dict[str, tuple[str, int]] = field(default_factory=dict)
    prompt_window: tuple[str, int] | None = None  # prompt sent while idle, before running
    accepted_unstarted: list[tuple[str, int]] = field(default_factory=list)
    span_work: set[str] = field(default_factory=set)  # "tool:<id>" / "term:<id>" of the span
    cancel: _Cancel | None = None
    silenced: set[str] | None = None  # after a cancelled idle: work that must stay silent
    background: set[tuple[str, str]] | None = None
    answered_subjects: set[str] = field(default_factory=set)
    answered_since_state: bool = False
    unbacked: tuple[str, int] | None = None  # requires_action not (yet) backed by a request
    last_stop_reason: str | None = None
    span_start: tuple[str, int] = ("", 0)  # the state update that started the work
    closed: bool = False


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
_FINAL_STATUSES: Final = frozenset({"completed", "failed", "cancelled"})
_KNOWN_OPTION_KINDS: Final = frozenset(
    {"allow_once", "allow_always", "reject_once", "reject_always"}
)
_NULL_ID_ERRORS: Final = frozenset({-32700, -32600})
_decode_json = msgspec.json.Decoder().decode


def _key(request_id: object) -> object:
    # 1, 1.0, True and "1" are different JSON-RPC ids.
    return (type(request_id).__name__, request_id)


def _valid_id(request_id: object) -> bool:
    return isinstance(request_id, str) or (
        isinstance(request_id, int) and not isinstance(request_id, bool)
    )


def _session_of(params: object) -> str | None:
    if isinstance(params, dict):
        session = params.get("sessionId")
        if isinstance(session, str):
            return session
    return None


def _get(obj: object, *keys: str | int) -> object:
    for key in keys:
        if isinstance(key, str) and isinstance(obj, dict):
            obj = obj.get(key)
        elif isinstance(key, int) and isinstance(obj, list) and 0 <= key < len(obj):
            obj = obj[key]
        else:
            return None
    return obj


def _excused(rule: str, error: ValidationError, instance: object) -> bool:
    """Whether a schema-derived finding belongs to another rule or is not the agent's doing."""
    path = list(error.absolute_path)
    if rule == "custom-values" and len(path) == 3 and path[0] == "options" and path[2] == "kind":
        return True  # permission-options reports option kinds itself
    # A user message echoes the client's prompt: unknown blocks in it came from the client.
    return path[:2] == ["update", "content"] and _get(instance, "update", "sessionUpdate") in (
        "user_message",
        "user_message_chunk",
    )


# -- the checker -------------------------------------------------------------------------------


class ConformanceChecker:
    """Checks every message an agent sends against the ACP draft v2 rules in `RULES`.

    Feed it every line in both directions with `observe`, in the order the client wrote and
    read them. Client lines are not judged; they tell the checker which requests are pending,
    which prompts and cancels were sent. `violations` lists what was found; a strict checker
    also raises `ConformanceError` on the first one. Call `check_report` at the end of a
    stream for the end-of-stream rules (unanswered requests, unfinished work) and a summary.

    :param schema_path: a draft v2 JSON Schema file to validate against; by default the copy
        vendored in `acpio.schema`.
    :param strict: raise `ConformanceError` on the first violation (it is still recorded).
    :param rules: the rule IDs to check (default: all of `RULES`).
    :param schema_every_n: validate only every n-th agent message against the schema (and the
        schema-derived custom-values/absolute-paths/base64 findings); 1, the default, validates
        all. Meant for soak tests of huge streams; terminal base64 is still checked on every
        message.
    :raises ValueError: for an unknown rule ID or a `schema_every_n` below 1.
    """

    def __init__(
        self,
        schema_path: str | os.PathLike[str] | None = None,
        strict: bool = True,
        *,
        rules: Iterable[str] | None = None,
        schema_every_n: int = 1,
    ) -> None:
        enabled = list(RULES) if rules is None else list(rules)
        unknown = [rule for rule in enabled if rule not in RULES]
        if unknown:
            raise ValueError(f"unknown conformance rules: {', '.join(unknown)}")
        if schema_every_n < 1:
            raise ValueError("schema_every_n must be at least 1")
        self._schema = _load_schema(None if schema_path is None else os.fspath(schema_path))
        self.strict: bool = strict
        """Whether `observe` raises on the first violation."""
        self.rules: frozenset[str] = frozenset(enabled)
        """The rule IDs being checked."""
        self.violations: list[Violation] = []
        """Every violation found so far, in order."""
        self._every = schema_every_n
        self._index = 0
        self._agent_messages = 0
        self._exercised: Counter[str] = Counter()
        self._sessions: dict[str, _SessionState] = {}
        self._client_requests: dict[object, _Request] = {}
        self._agent_requests: dict[object, _Request] = {}
        self._agent_request_ids: set[object] = set()
        self._finished = False

    # -- reporting ---------------------------------------------------------------------------

    def _violate(self, rule: str, message: str, raw: str, index: int | None = None) -> None:
        if rule not in self.rules:
            return
        violation = Violation(
            rule, message, _HINTS[rule], raw, self._index if index is None else index
        )
        self.violations.append(violation)
        if self.strict:
            raise ConformanceError(violation)

    def _exercise(self, rule: str) -> None:
        self._exercised[rule] += 1

    def report(self) -> ConformanceReport:
        """The per-rule results and violations so far (no end-of-stream checks)."""
        counts = Counter(violation.rule for violation in self.violations)
        results = tuple(
            RuleResult(rule, self._exercised[rule_id], counts[rule_id])
            for rule_id, rule in RULES.items()
            if rule_id in self.rules
        )
        return ConformanceReport(results, tuple(self.violations), self._index)

    def check_report(self) -> ConformanceReport:
        """Run the end-of-stream checks (once), then return the report.

        Call it when the stream is complete: every client request should have been answered,
        every accepted prompt's work should have ended with idle, and every prompt's user
        message should have been reported. A strict checker raises on the first of these.
        """
        self.finish()
        return self.report()

    # -- input -------------------------------------------------------------------------------

    def observe(self, direction: Direction, line: bytes | str) -> None:
        """Check one line as it went over the wire (without its trailing newline).

        :raises ConformanceError: in strict mode, on the first violation.
        :raises ValueError: for an unknown `direction`.
        """
        if direction not in (_AGENT, _CLIENT):
            raise ValueError(f"unknown direction {direction!r}")
        self._index += 1
        data = line.encode("utf-8") if isinstance(line, str) else bytes(line)
        data = data.rstrip(b"\r\n")
        if direction == _CLIENT:
            self._observe_client(data)
        else:
            self._observe_agent(data)

    def _observe_client(self, data: bytes) -> None:
        try:
            message = _decode_json(data)
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            return
        raw = data.decode("utf-8", "replace")
        for item in message if isinstance(message, list) else [message]:
            if isinstance(item, dict):
                self._client_message(item, raw)

    def _observe_agent(self, data: bytes) -> None:
        raw = data.decode("utf-8", "replace")
        self._agent_messages += 1
        self._exercise("stdout")
        self._exercise("jsonrpc")
        if not data.strip():
            self._violate("stdout", "blank line on stdout", raw)
            return
        try:
            message = _decode_json(data)
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            self._violate("stdout", f"not a JSON-RPC message: {_short(raw, 120)}", raw)
            return
        if isinstance(message, list):
            self._violate(
                "jsonrpc", "the agent sent a batch (JSON array); agents never send batches", raw
            )
            return
        if not isinstance(message, dict):
            self._violate("stdout", f"a JSON {type(message).__name__}, not a message object", raw)
            return
        self._agent_message(message, raw)

    # -- agent messages ----------------------------------------------------------------------

    def _agent_message(self, message: _JsonObject, raw: str) -> None:
        if message.get("jsonrpc") != "2.0":
            self._violate(
                "jsonrpc", f'"jsonrpc" is {_short(message.get("jsonrpc"))}, not "2.0"', raw
            )
        has_result = "result" in message
        has_error = "error" in message
        if "method" in message:
            method = message["method"]
            if has_result or has_error:
                self._violate(
                    "jsonrpc", "a message with a method must not carry result or error", raw
                )
            if not isinstance(method, str):
                self._violate("jsonrpc", f'"method" is {_short(method)}, not a string', raw)
                return
            if "id" in message:
                self._agent_request(message, method, raw)
            else:
                self._agent_notification(message, method, raw)
        elif has_result or has_error:
            self._agent_response(message, raw)
        else:
            self._violate("jsonrpc", "neither a request, a notification nor a response", raw)

    def _validate(self, def_name: str | None, instance: object, raw: str, what: str) -> bool:
        """Validate `instance` against a schema definition; whether it was validated."""
        if def_name is None or (self._every > 1 and self._agent_messages % self._every != 0):
            return False
        touched: set[str] = set()
        token = _touched.set(touched)
        try:
            errors = list(self._schema.validator(def_name).iter_errors(instance))
        finally:
            _touched.reset(token)
        self._exercise("schema")
        for rule in touched:
            self._exercise(rule)
        official = [error for error in errors if _official(error)]
        if official:
            best = best_match(official)
            self._violate("schema", f"{what} does not match {def_name}: {_error_text(best)}", raw)
        seen: set[tuple[str, str]] = set()
        for error in errors:
            if error.validator in _FINDINGS:
                rule = _FINDING_RULES[cast(str, error.validator)]
                text = f"{what}: {_error_text(error)}"
                if (rule, text) not in seen and not _excused(rule, error, instance):
                    seen.add((rule, text))
                    self._violate(rule, text, raw)
        return True

    def _agent_request(self, message: _JsonObject, method: str, raw: str) -> None:
        request_id = message["id"]
        params = message.get("params")
        self._exercise("methods")
        if not _valid_id(request_id):
            self._violate(
                "jsonrpc", f"request id {_short(request_id)} is not a string or an integer", raw
            )
        key = _key(request_id)
        if key in self._agent_requests:
            self._violate(
                "jsonrpc",
                f"request id {_short(request_id)} reused while a request with it is still pending",
                raw,
            )
        defs = self._schema.client_methods.get(method)
        if defs is not None and defs.result is None:
            self._violate("methods", f"{method} is a notification: send it without an id", raw)
        elif defs is None and not method.startswith("_"):
            self._violate("methods", f"{method!r} is not a method the client implements", raw)
        validated = defs is not None and self._validate(
            defs.params, params, raw, f"{method} params"
        )
        session = _session_of(params)
        if session is None and method == "elicitation/create":
            scope = self._client_requests.get(_key(_get(params, "requestId")))
            session = scope.session if scope is not None else None
        subjects: set[str] = set()
        if method == "session/request_permission":
            subjects = self._permission_request(params, session, raw, validated)
        elif method == "elicitation/create":
            tool_call = _get(params, "toolCallId")
            if isinstance(tool_call, str):
                subjects.add(f"tool:{tool_call}")
        self._agent_requests[key] = _Request(method, session, self._index, raw, frozenset(subjects))
        self._agent_request_ids.add(key)
        if session is not None:
            state = self._session(session)
            self._check_closed(state, session, raw)
            if state.silenced is not None:
                self._violate(
                    "cancel-silence",
                    f"{method} for session {session} after its cancelled work reported idle",
                    raw,
                )
            if state.unbacked is not None:
                state.unbacked = None

    def _permission_request(
        self, params: object, session: str | None, raw: str, validated: bool
    ) -> set[str]:
        self._exercise("permission-options")
        options = _get(params, "options")
        subjects: set[str] = set()
        if isinstance(options, list):
            if not options and not validated:  # else the schema (minItems) reported it
                self._violate(
                    "permission-options", "session/request_permission offers no options", raw
                )
            seen: set[object] = set()
            for option in options:
                option_id = _get(option, "optionId")
                if option_id in seen:
                    self._violate(
                        "permission-options", f"optionId {_short(option_id)} is offered twice", raw
                    )
                seen.add(option_id)
                kind = _get(option, "kind")
                if (
                    isinstance(kind, str)
                    and kind not in _KNOWN_OPTION_KINDS
                    and not kind.startswith("_")
                ):
                    self._violate(
                        "permission-options",
                        f"option {_short(option_id)} has kind {kind!r}, which is neither a known "
                        "kind nor _-prefixed",
                        raw,
                    )
        subject = _get(params, "subject")
        subject_type = _get(subject, "type")
        if subject_type == "tool_call":
            tool_call = _get(subject, "toolCall")
            tool_call_id = _get(tool_call, "toolCallId")
            if (
                isinstance(tool_call_id, str)
                and isinstance(tool_call, dict)
                and session is not None
            ):
                subjects.add(f"tool:{tool_call_id}")
                # Clients apply the subject like a tool_call_update (a first-seen id creates it).
                self._tool_call_update(self._session(session), tool_call, raw, subject=True)
        elif subject_type == "command":
            for key, prefix in (("toolCallId", "tool:"), ("terminalId", "term:")):
                value = _get(subject, key)
                if isinstance(value, str):
                    subjects.add(prefix + value)
        return subjects

    def _agent_notification(self, message: _JsonObject, method: str, raw: str) -> None:
        params = message.get("params")
        self._exercise("methods")
        defs = self._schema.client_methods.get(method)
        if defs is not None and defs.result is not None:
            self._violate("methods", f"{method} is a request: send it with an id", raw)
        elif defs is None and not method.startswith("_"):
            self._violate("methods", f"{method!r} is not a notification the client implements", raw)
        validated = False
        if defs is not None:
            validated = self._validate(defs.params, params, raw, f"{method} params")
        if method == "session/update" and isinstance(params, dict):
            session = params.get("sessionId")
            update = params.get("update")
            if isinstance(session, str) and isinstance(update, dict):
                self._session_update(session, update, raw, validated)
        elif method == "$/cancel_request":
            key = _key(_get(params, "requestId"))
            request = self._agent_requests.get(key)
            if request is not None:
                request.withdrawn = True
                if request.session is not None:
                    cancel = self._session(request.session).cancel
                    if cancel is not None:
                        cancel.proven = True
            elif key not in self._agent_request_ids:
                self._violate(
                    "jsonrpc",
                    f"$/cancel_request names request {_short(_get(params, 'requestId'))}, "
                    "which the agent never sent",
                    raw,
                )

    def _agent_response(self, message: _JsonObject, raw: str) -> None:
        self._exercise("no-reply-to-notification")
        has_result = "result" in message
        error = message.get("error")
        if has_result and "error" in message:
            self._violate("jsonrpc", "a response must carry exactly one of result and error", raw)
        if "id" not in message:
            self._violate("jsonrpc", "a response without an id", raw)
            return
        response_id = message["id"]
        if response_id is None:
            code = _get(error, "code")
            if has_result or code not in _NULL_ID_ERRORS:
                self._violate(
                    "no-reply-to-notification",
                    "a response with id null (only parse errors and invalid requests may use "
                    "it): notifications must not be answered",
                    raw,
                )
            elif error is not None:
                self._validate("Error", error, raw, "error")
            return
        if not _valid_id(response_id):
            self._violate(
                "jsonrpc", f"response id {_short(response_id)} is not a string or an integer", raw
            )
            return
        request = self._client_requests.pop(_key(response_id), None)
        if request is None:
            self._violate(
                "jsonrpc",
                f"response to id {_short(response_id)}, which is not a pending client request "
                "(never sent, or already answered)",
                raw,
            )
            return
        defs = self._schema.agent_methods.get(request.method)
        validated = False
        if has_result:
            if defs is not None:
                validated = self._validate(
                    defs.result, message["result"], raw, f"{request.method} result"
                )
        else:
            self._validate("Error", error, raw, "error")
        session = request.session
        if session is None:
            if request.method in ("session/new", "session/resume") and has_result:
                new = _session_of(message.get("result"))
                if new is not None:
                    self._session(new)
            return
        state = self._session(session)
        if state.cancel is not None and request.index > state.cancel.index:
            state.cancel.proven = True  # the agent read the cancel before answering this
        if request.method == "session/prompt":
            self._prompt_answered(state, request, message, raw, validated)
        elif request.method == "session/close" and has_result:
            self._exercise("session-close")
            if state.span:
                self._violate(
                    "session-close",
                    f"session/close answered while session {session} is still {state.state}: "
                    "report idle with stopReason cancelled first",
                    raw,
                )
            state.closed = True

    def _prompt_answered(
        self,
        state: _SessionState,
        request: _Request,
        message: _JsonObject,
        raw: str,
        validated: bool,
    ) -> None:
        self._exercise("prompt-message-id")
        if "result" not in message:
            if state.prompt_window is not None and state.prompt_window[1] == request.index:
                state.prompt_window = None  # rejected before insertion: no work to report
            return
        message_id = _get(message.get("result"), "messageId")
        if not isinstance(message_id, str):
            if not validated:  # else the schema reported it
                self._violate(
                    "prompt-message-id", "session/prompt result has no string messageId", raw
                )
            return
        if message_id not in state.user_messages:
            state.awaiting_user_message[message_id] = (raw, self._index)
        if not state.span:
            state.accepted_unstarted.append((raw, self._index))

    # -- session updates ---------------------------------------------------------------------

    def _session(self, session: str) -> _SessionState:
        state = self._sessions.get(session)
        if state is None:
            state = self._sessions[session] = _SessionState()
        return state

    def _check_closed(self, state: _SessionState, session: str, raw: str) -> None:
        if state.closed:
            self._exercise("session-close")
            self._violate(
                "session-close",
                f"a message for session {session} after session/close was answered",
                raw,
            )

    def _session_update(self, session: str, update: _JsonObject, raw: str, validated: bool) -> None:
        state = self._session(session)
        kind = update.get("sessionUpdate")
        self._check_closed(state, session, raw)
        if kind in _WORK_UPDATES and state.silenced is not None:
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
            plan_id = _get(update, "plan", "planId")
            if isinstance(plan_id, str) and plan_id not in state.plans:
                state.plans.add(plan_id)
                self._new_work(state, "a new plan", raw)
        elif kind == "state_update":
            self._state_update(state, session, update, raw)

    def _new_work(self, state: _SessionState, what: str, raw: str) -> None:
        self._exercise("turn-lifecycle")
        if state.prompt_window is not None:
            self._violate(
                "turn-lifecycle",
                f"{what} after session/prompt but before state_update running",
                raw,
            )
            state.prompt_window = None  # one report per turn

    def _check_silence(
        self, state: _SessionState, update: _JsonObject, kind: object, raw: str
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
        self, state: _SessionState, update: _JsonObject, raw: str, subject: bool = False
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
        if "status" in update:
            state.tool_status[tool_call_id] = status if isinstance(status, str) else "pending"
            if status == "cancelled" and state.cancel is not None:
                state.cancel.proven = True
        if state.span:
            state.span_work.add(f"tool:{tool_call_id}")
        content = update.get("content")
        if "content" in update:
            state.tool_terminals[tool_call_id] = set()
            for item in content if isinstance(content, list) else ():
                self._tool_content(state, tool_call_id, item, raw)
        if not subject and status in ("in_progress", "completed"):
            self._check_resumed(
                state, f"tool:{tool_call_id}", f"tool call {tool_call_id!r} {status}", raw
            )

    def _tool_call_chunk(self, state: _SessionState, update: _JsonObject, raw: str) -> None:
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
        if state.span:
            state.span_work.add(f"tool:{tool_call_id}")
        self._tool_content(state, tool_call_id, update.get("content"), raw)

    def _tool_content(
        self, state: _SessionState, tool_call_id: str, item: object, raw: str
    ) -> None:
        item_type = _get(item, "type")
        if item_type == "terminal":
            terminal_id = _get(item, "terminalId")
            if isinstance(terminal_id, str):
                state.terminals.setdefault(terminal_id, False)
                state.tool_terminals.setdefault(tool_call_id, set()).add(terminal_id)
                if state.span:
                    state.span_work.add(f"term:{terminal_id}")
        elif item_type == "diff":
            self._check_diff(item, raw)

    def _check_diff(self, diff: object, raw: str) -> None:
        patch = _get(diff, "patch")
        changes = _get(diff, "changes")
        if not isinstance(changes, list):
            return
        self._exercise("patch-consistency")
        if not isinstance(patch, dict) or patch.get("format") != "git_patch":
            return
        text = patch.get("text")
        if not isinstance(text, str):
            return
        sections, problem = _parse_git_patch(text)
        if problem is not None:
            self._violate("patch-consistency", problem, raw)
        declared = {
            (_get(change, "operation"), _get(change, "path"), _get(change, "oldPath"))
            for change in changes
        }
        by_path = {_get(change, "path"): _get(change, "operation") for change in changes}
        for section in sections:
            paths = section.paths()
            if paths:
                self._exercise("absolute-paths")
            relative = [path for path in paths if not _is_absolute(path)]
            for path in dict.fromkeys(relative):
                self._violate(
                    "absolute-paths", f"the git patch names the relative path {path!r}", raw
                )
            if relative:
                continue
            self._check_section(section, declared, by_path, raw)

    def _check_section(
        self,
        section: _PatchSection,
        declared: set[tuple[object, object, object]],
        by_path: Mapping[object, object],
        raw: str,
    ) -> None:
        operation, path, old_path = section.operation, section.path, section.old_path
        if path is None:
            return
        if section.header is not None and section.operation == "modify":
            for label, named in (("---", section.minus), ("+++", section.plus)):
                if named is not None and named != section.header[1]:
                    self._violate(
                        "patch-consistency",
                        f"the section 'diff --git' for {section.header[1]!r} has a {label} line "
                        f"naming {named or '/dev/null'!r}",
                        raw,
                    )
                    return
        if (operation, path, old_path if operation in ("move", "copy") else None) in declared:
            return
        if operation in ("move", "copy") and any(
            entry[0] == operation and entry[1] == path and entry[2] == old_path
            for entry in declared
        ):
            return
        if operation in ("move", "copy") and by_path.get(path) == operation:
            self._violate(
                "patch-consistency",
                f"the patch shows {path!r} as {operation} from {old_path!r}, but changes names "
                "a different oldPath",
                raw,
            )
        elif path in by_path:
            self._violate(
                "patch-consistency",
                f"the patch shows {path!r} as {operation}, but changes says "
                f"{_short(by_path[path])}",
                raw,
            )
        else:
            self._violate(
                "patch-consistency",
                f"the patch changes {path!r} ({operation}), which is not in changes",
                raw,
            )

    def _terminal(
        self, state: _SessionState, update: _JsonObject, kind: object, raw: str, validated: bool
    ) -> None:
        terminal_id = update.get("terminalId")
        if not isinstance(terminal_id, str):
            return
        if terminal_id not in state.terminals:
            state.terminals[terminal_id] = False
            self._new_work(state, f"terminal {terminal_id!r}", raw)
        if state.span:
            state.span_work.add(f"term:{terminal_id}")
        data = (
            update.get("data")
            if kind == "terminal_output_chunk"
            else _get(update, "output", "data")
        )
        if isinstance(data, str) and not validated:
            # The schema check covers base64 when it runs; sampled-out messages are checked here.
            self._exercise("base64")
            if not _is_base64(data):
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

    def _check_resumed(self, state: _SessionState, entity: str, what: str, raw: str) -> None:
        if state.state != "requires_action" or state.cancel is not None:
            return
        if entity in state.answered_subjects and not self._blocked_on(state, entity):
            self._violate(
                "turn-lifecycle",
                f"{what} after its permission was answered, while the session still reports "
                "requires_action: report running when work resumes",
                raw,
            )

    def _blocked_on(self, state: _SessionState, entity: str) -> bool:
        return any(
            entity in request.subjects and not request.withdrawn
            for request in self._agent_requests.values()
            if self._sessions.get(request.session or "") is state
        )

    def _pending_for(self, session: str) -> list[object]:
        return [
            key
            for key, request in self._agent_requests.items()
            if request.session == session and not request.withdrawn
        ]

    def _state_update(
        self, state: _SessionState, session: str, update: _JsonObject, raw: str
    ) -> None:
        new = update.get("state")
        if not isinstance(new, str):
            return
        self._exercise("turn-lifecycle")
        self._check_background(state, update, raw)
        if state.unbacked is not None:
            unbacked_raw, unbacked_index = state.unbacked
            state.unbacked = None
            self._violate(
                "turn-lifecycle",
                "requires_action while no permission or elicitation request was pending",
                unbacked_raw,
                unbacked_index,
            )
        if new != "idle":
            if new == "requires_action" and not (
                self._pending_for(session) or state.answered_since_state
            ):
                state.unbacked = (raw, self._index)  # the request may follow right after
            if not state.span:
                state.span = True
                state.span_start = (raw, self._index)
                state.span_work = set()
                state.accepted_unstarted.clear()
            state.prompt_window = None
            state.silenced = None
        else:
            self._idle(state, session, update, raw)
        state.state = new
        state.answered_since_state = False
        state.answered_subjects.clear()

    def _idle(self, state: _SessionState, session: str, update: _JsonObject, raw: str) -> None:
        stop = update.get("stopReason")
        stop_reason = stop if isinstance(stop, str) else None
        if state.span:
            if stop_reason is None:
                self._violate(
                    "turn-lifecycle", "idle ends foreground work without a stopReason", raw
                )
            if state.cancel is not None:
                self._cancelled_idle(state, session, stop_reason, update, raw)
            self._missing_user_messages(state)
            state.span = False
        elif stop_reason is not None:
            if state.prompt_window is not None or state.accepted_unstarted:
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
        state.prompt_window = None
        state.accepted_unstarted.clear()
        state.cancel = None

    def _cancelled_idle(
        self,
        state: _SessionState,
        session: str,
        stop_reason: str | None,
        update: _JsonObject,
        raw: str,
    ) -> None:
        cancel = state.cancel
        assert cancel is not None
        self._exercise("cancel-silence")
        if stop_reason != "cancelled" and cancel.proven:
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
                    f"{request.method} (id {_short(key[1] if isinstance(key, tuple) else key)}) of "
                    "the cancelled work is still pending at its idle: cancel it with "
                    "$/cancel_request",
                    raw,
                )
        background = {
            f"{'term' if kind == 'terminal' else 'tool'}:{ident}"
            for kind, ident in state.background or ()
        }
        state.silenced = state.span_work - background

    def _missing_user_messages(self, state: _SessionState) -> None:
        for message_id, (response_raw, index) in list(state.awaiting_user_message.items()):
            self._violate(
                "prompt-message-id",
                f"no user_message with messageId {message_id!r} (from the session/prompt "
                "response) before the work ended",
                response_raw,
                index,
            )
        state.awaiting_user_message.clear()

    def _check_background(self, state: _SessionState, update: _JsonObject, raw: str) -> None:
        background = update.get("background")
        if not isinstance(background, list):
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
            kind = _get(item, "type")
            ident = _get(item, "terminalId" if kind == "terminal" else "toolCallId")
            if kind not in ("terminal", "tool_call") or not isinstance(ident, str):
                continue
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

    # -- client messages ---------------------------------------------------------------------

    def _client_message(self, message: _JsonObject, raw: str) -> None:
        method = message.get("method")
        if isinstance(method, str):
            params = message.get("params")
            session = _session_of(params)
            if "id" in message:
                request = _Request(method, session, self._index, raw)
                self._client_requests[_key(message["id"])] = request
                if session is not None:
                    self._client_request(self._session(session), request)
            elif method == "session/cancel" and session is not None:
                self._client_cancel(self._session(session), session)
        elif "result" in message or "error" in message:
            answered = self._agent_requests.pop(_key(message.get("id")), None)
            if answered is not None and answered.session is not None:
                # The agent may report requires_action after the answer crossed it in flight.
                state = self._session(answered.session)
                state.answered_since_state = True
                state.answered_subjects |= answered.subjects

    def _client_request(self, state: _SessionState, request: _Request) -> None:
        if request.method == "session/prompt":
            state.silenced = None
            if not state.span:
                state.prompt_window = (request.raw, request.index)
        elif request.method == "session/close" and state.span and state.cancel is None:
            # Closing cancels active work as session/cancel would, and must wait for its idle.
            state.cancel = _Cancel(request.index, True, set())

    def _client_cancel(self, state: _SessionState, session: str) -> None:
        if not state.span:
            return
        pending = set(self._pending_for(session))
        # Blocked on the user, the agent cannot have ended its work before reading the cancel.
        proven = state.state == "requires_action" and bool(pending)
        if state.cancel is None:
            state.cancel = _Cancel(self._index, proven, pending)
        else:
            state.cancel.proven = state.cancel.proven or proven
            state.cancel.requests |= pending

    # -- end of stream -----------------------------------------------------------------------

    def finish(self) -> None:
        """Run the end-of-stream checks once: client requests never answered, foreground work
        that never reported idle, accepted prompts that never started, prompt user messages
        never reported, and requires_action never backed by a request.

        :raises ConformanceError: in strict mode, on the first violation.
        """
        if self._finished:
            return
        self._finished = True
        for request in list(self._client_requests.values()):
            self._violate(
                "jsonrpc",
                f"{request.method} (client request) was never answered",
                request.raw,
                request.index,
            )
        for session, state in self._sessions.items():
            if state.unbacked is not None:
                self._violate(
                    "turn-lifecycle",
                    "requires_action while no permission or elicitation request was pending",
                    *state.unbacked,
                )
            if state.span:
                self._violate(
                    "turn-lifecycle",
                    f"session {session} is still {state.state}: its work never reported idle",
                    *state.span_start,
                )
            for raw, index in state.accepted_unstarted:
                self._violate(
                    "turn-lifecycle",
                    "an accepted prompt whose work never reported running",
                    raw,
                    index,
                )
            self._missing_user_messages(state)
