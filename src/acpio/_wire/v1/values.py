"""The one home of ACP v1's value sets: read from the vendored v1 schema, never listed by hand.

How this works: the official v1 schema (``schema/v1/schema.json``) defines each
closed string enum as a ``oneOf`` of ``const`` strings. :func:`schema_values`
reads those constants from one definition; the sets below are made from it
once, when this module is imported (the schema is read once per process, in
about a millisecond, by :mod:`acpio._wire.v1.lenient`). The v1 projection, the v1
server and the v1 conformance rules import these names, so a new schema
version changes them all at once.
"""

from __future__ import annotations

from typing import Final, cast

from .lenient import Node, definition

__all__ = [
    "V1_OPTION_KINDS",
    "V1_PLAN_PRIORITIES",
    "V1_PLAN_STATUSES",
    "V1_SESSION_UPDATES",
    "V1_STOP_REASONS",
    "V1_TOOL_KINDS",
    "V1_TOOL_STATUSES",
    "schema_values",
]


def _consts(node: Node, key: str | None) -> frozenset[str]:
    branches = node.get("oneOf", node.get("anyOf"))
    if not isinstance(branches, list):
        raise ValueError("not a oneOf/anyOf of constants")
    values: set[str] = set()
    for branch in cast("list[Node]", branches):
        holder = branch
        if key is not None:
            properties = cast("dict[str, Node]", branch.get("properties", {}))
            holder = properties.get(key, {})
        const = holder.get("const")
        if not isinstance(const, str):
            raise ValueError(f"a branch without a string const: {branch!r}")
        values.add(const)
    return frozenset(values)


def schema_values(name: str, *, discriminator: str | None = None) -> frozenset[str]:
    """The string constants v1 definition ``name`` allows.

    For an enum definition (a ``oneOf`` of ``const`` strings) its values; with
    ``discriminator``, the constants of that property across the ``oneOf``
    branches of a tagged union (``SessionUpdate``'s ``sessionUpdate``).

    :raises KeyError: when the schema has no such definition;
    :raises ValueError: when it is not of that shape.
    """
    return _consts(definition(name), discriminator)


#: v1 ``ToolKind``.
V1_TOOL_KINDS: Final = schema_values("ToolKind")
#: v1 ``ToolCallStatus`` (no ``cancelled``, no ``paused``: the projection maps those).
V1_TOOL_STATUSES: Final = schema_values("ToolCallStatus")
#: v1 ``PermissionOptionKind``.
V1_OPTION_KINDS: Final = schema_values("PermissionOptionKind")
#: v1 ``PlanEntryStatus``.
V1_PLAN_STATUSES: Final = schema_values("PlanEntryStatus")
#: v1 ``PlanEntryPriority``.
V1_PLAN_PRIORITIES: Final = schema_values("PlanEntryPriority")
#: v1 ``StopReason`` (no ``error``: v1 ends such a turn with an error answer).
V1_STOP_REASONS: Final = schema_values("StopReason")
#: The ``sessionUpdate`` values of v1 ``SessionUpdate``.
V1_SESSION_UPDATES: Final = schema_values("SessionUpdate", discriminator="sessionUpdate")
