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
