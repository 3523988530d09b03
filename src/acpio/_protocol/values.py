"""The one home of the rule for enum values the agent sends: known, or ``_``-prefixed.

How this works: the generated schema (re-exported by ``acpio.schema``) defines,
for every open string enum ``X`` of the protocol, a ``KnownX`` literal and a
``KNOWN_X`` set; a value of such a field is valid when it is in the set or starts with ``_`` (custom
values). Closed enums (plain ``Literal`` aliases) accept only their values.
:func:`require_value` checks one value; :func:`check_values` walks a whole
protocol object the agent is about to send and checks every enum field in it,
finding those fields from the generated classes' annotations (so no value set
is ever copied by hand). Both raise :class:`~acpio.LocalProtocolError`, before
anything reaches the wire.

:func:`check_update` is the one check every update the agent sends passes, of
whatever kind: :meth:`acpio.Session.send` (which every handle's update goes
through) and the config options' updates call it. Per update class it knows,
from the schema, whether an enum value can occur anywhere inside
(:func:`can_hold_enums`); a class where none can (terminal output, usage,
session info, ...) costs one dict lookup. The streaming fast paths send
pre-encoded lines of one update shape with one string spliced in (a reply's or
a tool call's text, a terminal's bytes): :func:`check_frame` proves once, when
the module that owns such a path is imported, that its shape holds no enum
value and that the spliced string is no enum field, so no line of it can carry
an invalid value.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Iterable
from typing import Final, cast

import msgspec
from msgspec import UNSET

from .. import schema as generated
from .._errors import LocalProtocolError

__all__ = [
    "FINAL_TOOL_CALL_STATUSES",
    "can_hold_enums",
    "check_frame",
    "check_update",
    "check_values",
    "is_known_or_custom",
    "require_value",
]


def _literal_values(name: str) -> frozenset[str]:
    return frozenset(typing.get_args(getattr(generated, name)))


#: Open enums of the schema: alias name -> its known values.
_OPEN: Final[dict[str, frozenset[str]]] = {
    name[len("Known") :]: _literal_values(name)
    for name in dir(generated)
    if name.startswith("Known")
    and typing.get_origin(getattr(generated, name)) is typing.Literal
    # Error codes are integers the protocol leaves to implementations.
    and name != "KnownErrorCode"
}
#: Closed enums of the schema: alias name -> the only valid values.
_CLOSED: Final[dict[str, frozenset[str]]] = {
    name: _literal_values(name)
    for name in dir(generated)
    if not name.startswith(("Known", "_"))
    and typing.get_origin(getattr(generated, name)) is typing.Literal
}

#: The statuses after which a tool call never changes again (a subset of the schema's).
FINAL_TOOL_CALL_STATUSES: Final = frozenset({"completed", "failed", "cancelled"})
assert FINAL_TOOL_CALL_STATUSES <= generated.KNOWN_TOOL_CALL_STATUS


def is_known_or_custom(value: str, known: Iterable[str]) -> bool:
    """True for a value of an open enum the protocol accepts: known, or ``_``-prefixed."""
    return value in known or value.startswith("_")


def require_value(value: object, known: frozenset[str], what: str, *, closed: bool = False) -> str:
    """Return ``value`` if ``what`` may carry it: a known value, or (open enums) ``_``-prefixed.

    :raises LocalProtocolError: naming ``what``, the value and the known values otherwise.
    """
    if isinstance(value, str) and (value in known or (not closed and value.startswith("_"))):
        return value
    listed = ", ".join(sorted(known))
    if not isinstance(value, str):
        raise LocalProtocolError(f"{what} must be a string (one of {listed}), got {value!r}")
    if closed:
        raise LocalProtocolError(f"{what} {value!r} is not valid here; it must be one of {listed}")
    raise LocalProtocolError(
        f"unknown {what} {value!r}: not an ACP value (known: {listed}); "
        "custom values must start with '_'"
    )


# ------------------------------------------------------------------- walking objects

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'")
# Annotation names that never hold a protocol object: no need to look inside.
_LEAVES: Final = frozenset(
    {"str", "int", "float", "bool", "None", "UnsetType", "object", "dict", "Any", "bytes"}
    | {"AbsolutePath", "SessionId", "ToolCallId", "TerminalId", "MessageId", "PlanId"}
)

# Per class: the enum fields (name, known values, closed, what) and the fields to descend into.
_Plan = tuple[tuple[tuple[str, frozenset[str], bool, str], ...], tuple[str, ...]]
_plans: dict[type, _Plan] = {}
_UNSET: Final = UNSET


def _plan(cls: type[msgspec.Struct]) -> _Plan:
    annotations: dict[str, object] = {}
    for klass in reversed(cls.__mro__):
        annotations.update(getattr(klass, "__annotations__", {}))
    enums: list[tuple[str, frozenset[str], bool, str]] = []
    children: list[str] = []
    for field in cls.__struct_fields__:
        annotation = annotations.get(field)
        if isinstance(annotation, str):
            names = set(_NAME.findall(_QUOTED.sub("", annotation)))
        else:
            names = {"?"}
        found = False
        for name in names:
            what = f"{cls.__name__}.{field}"
            if name in _OPEN:
                enums.append((field, _OPEN[name], False, what))
                found = True
            elif name in _CLOSED:
                enums.append((field, _CLOSED[name], True, what))
                found = True
        if not found and names - _LEAVES - {"list", "Literal"}:
            children.append(field)
    plan = (tuple(enums), tuple(children))
    _plans[cls] = plan
    return plan


def check_values(value: object) -> None:
    """Check every enum value inside a protocol object the agent is about to send.

    Open enums take a known value or a ``_``-prefixed one, closed enums only
    their values; lists and nested objects are walked, unknown variants kept
    verbatim are not (they are the peer's or the author's raw JSON).

    :raises LocalProtocolError: for the first invalid value, naming its field.
    """
    plan = _plans.get(type(value))
    if plan is None:
        if not isinstance(value, msgspec.Struct):
            return
        plan = _plan(type(value))
    enums, children = plan
    for field, known, closed, what in enums:
        item = getattr(value, field)
        if item is _UNSET or item is None:
            continue
        if type(item) is list:
            for element in cast("list[object]", item):
                require_value(element, known, what, closed=closed)
        elif type(item) is not str or item not in known:
            require_value(item, known, what, closed=closed)
    for field in children:
        item = getattr(value, field)
        if item is _UNSET or item is None:
            continue
        if type(item) is list:
            for element in cast("list[object]", item):
                check_values(element)
        else:
            check_values(item)


# ------------------------------------------------------------------- updates

#: Every Struct class of the generated schema (the variants of every union among them).
_STRUCTS: Final = tuple(
    value
    for value in vars(generated).values()
    if isinstance(value, type) and issubclass(value, msgspec.Struct)
)
#: Per class: whether an enum value can occur in it at any depth (see can_hold_enums).
_holds_enums: dict[type, bool] = {}
#: The update classes :func:`check_frame` proved a fast path's shape of.
_proven_frames: set[type] = set()


def _field_types(cls: type[msgspec.Struct]) -> set[type[msgspec.Struct]]:
    """The generated classes a field of ``cls`` may hold (every variant of a union)."""
    annotations: dict[str, object] = {}
    for klass in reversed(cls.__mro__):
        annotations.update(getattr(klass, "__annotations__", {}))
    found: set[type[msgspec.Struct]] = set()
    for field in cls.__struct_fields__:
        annotation = annotations.get(field)
        if not isinstance(annotation, str):
            continue
        for name in set(_NAME.findall(_QUOTED.sub("", annotation))) - _LEAVES:
            target: object = getattr(generated, name, None)
            if not isinstance(target, type):
                continue
            if issubclass(target, msgspec.Struct):
                found.add(target)
            else:  # a union's marker class: its variants subclass it
                found.update(c for c in _STRUCTS if issubclass(c, target))
    return found


def can_hold_enums(cls: type) -> bool:
    """Whether an object of ``cls`` can hold an enum value of the schema at any depth.

    Derived once per class from the generated annotations (the classes its
    fields may hold, transitively). False for what is not a protocol Struct.
    """
    known = _holds_enums.get(cls)
    if known is not None:
        return known
    holds = False
    if issubclass(cls, msgspec.Struct):
        seen: set[type[msgspec.Struct]] = {cls}
        stack: list[type[msgspec.Struct]] = [cls]
        while stack and not holds:
            current = stack.pop()
            plan = _plans.get(current) or _plan(current)
            if plan[0]:
                holds = True
                break
            for child in _field_types(current) - seen:
                seen.add(child)
                stack.append(child)
    _holds_enums[cls] = holds
    return holds


def check_update(update: generated.SessionUpdate) -> None:
    """Check every enum value of an update the agent is about to send, of any kind.

    The one check of the rule for updates (known or ``_``-prefixed values;
    closed enums only theirs): one dict lookup for a class that can hold no
    enum value, :func:`check_values` otherwise.

    :raises LocalProtocolError: for the first invalid value, naming its field.
    """
    holds = _holds_enums.get(type(update))
    if holds is None:
        holds = can_hold_enums(type(update))
    if holds:
        check_values(update)


def check_frame(frame: generated.SessionUpdate, spliced: tuple[str, ...]) -> None:
    """Prove that the lines of a fast path carry no invalid enum value, whatever is spliced.

    ``frame`` is the update a pre-encoded line stands for, with the spliced
    string empty; ``spliced`` the path of attribute names to that string (a
    text, a base64 ``data``). Checked: the frame holds no enum value at all,
    and the spliced field is a string that is no enum field.

    :raises LocalProtocolError: when a line of that shape could carry an enum value.
    """
    holder: object = frame
    for name in spliced[:-1]:
        holder = getattr(holder, name)
    last = spliced[-1]
    if not isinstance(getattr(holder, last, None), str) or not isinstance(holder, msgspec.Struct):
        raise LocalProtocolError(f"{type(frame).__name__}: {'.'.join(spliced)} is not a string")
    enums = (_plans.get(type(holder)) or _plan(type(holder)))[0]
    if any(field == last for field, _, _, _ in enums):
        raise LocalProtocolError(
            f"{type(frame).__name__}: {'.'.join(spliced)} is an enum field; "
            "a line spliced around it could carry any value"
        )
    found: list[str] = []
    _enum_values(frame, found)
    if found:
        raise LocalProtocolError(
            f"{type(frame).__name__} frame holds enum values ({', '.join(found)}): "
            "every line of it would repeat them unchecked"
        )
    _proven_frames.add(type(frame))


def _enum_values(value: object, found: list[str]) -> None:
    """Append ``Class.field`` for every enum field set in ``value``, at any depth."""
    if not isinstance(value, msgspec.Struct):
        return
    enums, children = _plans.get(type(value)) or _plan(type(value))
    for field, _, _, what in enums:
        if getattr(value, field) not in (_UNSET, None):
            found.append(what)
    for field in children:
        item = getattr(value, field)
        for element in cast("list[object]", item) if type(item) is list else (item,):
            _enum_values(element, found)
