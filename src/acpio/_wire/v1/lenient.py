"""What the vendored v1 schema lets a reader forgive, applied to what a v1 peer sends.

How this works: the official v1 schema (``schema/v1/schema.json``, vendored, read
once when a v1 connection first needs it) marks the fields its reference
implementation reads leniently:

* ``x-deserialize-default-on-null``: ``null`` means the field's default, as if absent;
* ``x-deserialize-default-on-error``: a value that does not match the field's schema
  is read as if the field were absent (an ``exitCode`` of ``1.5``, ``"0"`` or
  ``2**64``, a numeric ``signal``, a ``_meta`` that is not an object);
* ``x-deserialize-skip-invalid-items``: items of the array that do not match are
  dropped, the others kept.

:func:`lenient` applies those marks, and only those, to a decoded JSON value
against one v1 definition, nested definitions included, so acpio reads every
v1 message it decodes (a client's requests and its answers) as the v1 schema
says, with no per-field list kept by hand. :func:`matches` is the small JSON
Schema check the marks need (types, ``const``, ``enum``, ``$ref``, ``allOf``,
``anyOf``/``oneOf``, ``required``, ``items``, integer formats and bounds).

Most messages carry nothing a mark applies to, so the full walk (which tries
each branch of every union) runs only when one may: :func:`marks_apply` looks,
per definition, only at the properties under which the schema has marks (a
``null`` in a default-on-null field, a default-on-error field or an item of a
skip-invalid-items array that does not match), and :func:`lenient_raw` passes
such a message on as it came, undecoded again. A ``null`` v1 reads as absent is
always caught there, so it never reaches a decoder that would read it as ``None``.
"""

from __future__ import annotations

import functools
from typing import Final, cast

import msgspec

__all__ = [
    "definition",
    "lenient",
    "lenient_raw",
    "loads",
    "marks_apply",
    "matches",
    "message_definition",
]

ON_NULL: Final = "x-deserialize-default-on-null"
ON_ERROR: Final = "x-deserialize-default-on-error"
SKIP_ITEMS: Final = "x-deserialize-skip-invalid-items"

_FORMAT_RANGES: Final = {
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}

Node = dict[str, object]


@functools.cache
def _defs() -> dict[str, Node]:
    from importlib import resources  # noqa: PLC0415 - a v1 connection's first read only

    text = resources.files("acpio.schema").joinpath("v1", "schema.json").read_bytes()
    loaded = cast("dict[str, object]", msgspec.json.decode(text))
    return cast("dict[str, Node]", loaded["$defs"])


def definition(name: str) -> Node:
    """The v1 schema's definition ``name``; :raises KeyError: when there is none."""
    return _defs()[name]


def loads(raw: bytes) -> object:
    """Decode JSON into builtins; numbers past what msgspec reads (``1e400``) too."""
    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError:
        import json  # noqa: PLC0415 - numbers past msgspec's range only

        return json.loads(raw)


def _resolve(node: Node) -> Node:
    ref = node.get("$ref")
    while isinstance(ref, str):
        node = definition(ref.rsplit("/", 1)[-1])
        ref = node.get("$ref")
    return node


def _branches(node: Node) -> list[Node]:
    listed = node.get("anyOf", node.get("oneOf"))
    return cast("list[Node]", listed) if isinstance(listed, list) else []


def _type_matches(kind: str, value: object) -> bool:
    if kind == "null":
        return value is None
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    return True


def matches(node: Node, value: object) -> bool:
    """Whether ``value`` (decoded JSON) matches the v1 schema ``node``."""
    node = _resolve(node)
    kinds = node.get("type")
    if isinstance(kinds, str) and not _type_matches(kinds, value):
        return False
    if isinstance(kinds, list) and not any(
        _type_matches(str(kind), value) for kind in cast("list[object]", kinds)
    ):
        return False
    if "const" in node and value != node["const"]:
        return False
    enum = node.get("enum")
    if isinstance(enum, list) and value not in enum:
        return False
    if isinstance(value, int | float) and not isinstance(value, bool):
        bounds = _FORMAT_RANGES.get(str(node.get("format")))
        if bounds is not None and not bounds[0] <= value <= bounds[1]:
            return False
        minimum, maximum = node.get("minimum"), node.get("maximum")
        if isinstance(minimum, int | float) and value < minimum:
            return False
        if isinstance(maximum, int | float) and value > maximum:
            return False
    all_of = node.get("allOf")
    if isinstance(all_of, list) and not all(
        matches(part, value) for part in cast("list[Node]", all_of)
    ):
        return False
    branches = _branches(node)
    if branches and not any(matches(branch, value) for branch in branches):
        return False
    if isinstance(value, dict):
        fields = cast("dict[str, object]", value)
        required = node.get("required")
        if isinstance(required, list) and any(
            key not in fields for key in cast("list[str]", required)
        ):
            return False
        properties = node.get("properties")
        if isinstance(properties, dict):
            for key, sub in cast("dict[str, Node]", properties).items():
                if key in fields and not matches(sub, fields[key]):
                    return False
    if isinstance(value, list):
        items = node.get("items")
        if isinstance(items, dict) and not all(
            matches(cast("Node", items), item) for item in cast("list[object]", value)
        ):
            return False
    return True


def lenient(node: Node | str, value: object) -> object:
    """``value`` as the v1 schema says to read it against ``node`` (a definition's name or
    a schema node): the marked fields that are ``null`` or do not match made absent, the
    invalid items of marked arrays dropped, at every depth. Everything else is kept as it
    is, for the decoder that follows to accept or refuse.

    A value no mark applies to (:func:`marks_apply` is false: the common case) is
    returned as it is, without the full walk.
    """
    resolved = definition(node) if isinstance(node, str) else node
    if not _may_change(_plan(resolved), value):
        return value
    return _lenient(resolved, value)


def _lenient(node: Node, value: object) -> object:
    if not _container(value):
        return value  # the marks are on fields and items: nothing else ever changes
    node = _resolve(node)
    all_of = node.get("allOf")
    if isinstance(all_of, list):
        for part in cast("list[Node]", all_of):
            value = _lenient(part, value)
    branches = _branches(node)
    if branches:
        for branch in branches:
            cleaned = _lenient(branch, value)
            if matches(branch, cleaned):
                value = cleaned
                break
    if isinstance(value, dict):
        return _fields(node, cast("dict[str, object]", value))
    items = node.get("items")
    listed = _as_list(value)
    if listed is not None and isinstance(items, dict):
        item_node = cast("Node", items)
        return [_lenient(item_node, item) for item in listed]
    return value


def _container(value: object) -> bool:
    return isinstance(value, dict | list)


def _as_list(value: object) -> list[object] | None:
    return cast("list[object]", value) if isinstance(value, list) else None


def _fields(node: Node, fields: dict[str, object]) -> dict[str, object]:
    properties = node.get("properties")
    if not isinstance(properties, dict):
        return fields
    out = dict(fields)
    for key, sub in cast("dict[str, Node]", properties).items():
        if key not in out:
            continue
        item = out[key]
        if item is None and sub.get(ON_NULL) is True:
            del out[key]
            continue
        item = _lenient(sub, item)
        element = _resolve(sub).get("items")
        listed = _as_list(item)
        if sub.get(SKIP_ITEMS) is True and listed is not None and isinstance(element, dict):
            element_node = cast("Node", element)
            item = [x for x in listed if matches(element_node, x)]
        if sub.get(ON_ERROR) is True and not matches(sub, item):
            del out[key]
            continue
        out[key] = item
    return out


@functools.cache
def _messages() -> dict[tuple[str, str], str]:
    out: dict[tuple[str, str], str] = {}
    for name, node in _defs().items():
        method = node.get("x-method")
        if not isinstance(method, str):
            continue
        for suffix in ("Request", "Response", "Notification"):
            if name.endswith(suffix):
                out[method, suffix] = name
    return out


def message_definition(method: str, kind: str) -> str | None:
    """The v1 definition of ``method``'s params (``kind`` ``"Request"`` or
    ``"Notification"``) or result (``"Response"``), as the schema's ``x-method`` says."""
    return _messages().get((method, kind))


def lenient_raw(name: str | None, raw: msgspec.Raw | None) -> msgspec.Raw | None:
    """:func:`lenient` of encoded params against the definition ``name`` (None: as is).

    ``raw`` itself when no mark applies to it (no re-encoding); otherwise the
    lenient reading, encoded.
    """
    if raw is None or name is None:
        return raw
    try:
        value = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        # Numbers past what msgspec reads, or not JSON (the decoder that follows says so).
        try:
            import json  # noqa: PLC0415 - numbers past msgspec's range only

            value = json.loads(bytes(raw))
        except ValueError:
            return raw
    else:
        node = definition(name)
        if not _may_change(_plan(node), value):
            return raw
        return msgspec.Raw(msgspec.json.encode(_lenient(node, value)))
    return msgspec.Raw(msgspec.json.encode(lenient(name, value)))


# ------------------------------------------------------------ which marks can apply
#
# The full walk (_lenient) tries every branch of every union with matches(), some
# 50 us for a prompt. Most messages have nothing a mark applies to: no null in a
# default-on-null field, every default-on-error field matching, every item of a
# skip-invalid-items array matching. _may_change answers that (conservatively:
# true whenever any branch of a union might change) by visiting only the
# properties and items under which the schema has marks at all.


class _Plan:
    """What :func:`_may_change` checks of one resolved node that has marks below it."""

    __slots__ = ("all_of", "branches", "fields", "items")

    def __init__(self) -> None:
        self.all_of: tuple[_Plan, ...] = ()
        self.branches: tuple[_Plan, ...] = ()
        # key, the property's node, default-on-null, default-on-error, the node of the
        # items of a skip-invalid-items array (or None), the property's own plan.
        self.fields: tuple[tuple[str, Node, bool, bool, Node | None, _Plan | None], ...] = ()
        self.items: _Plan | None = None


# By id() of the schema node; the node is kept alive with its entry (_kept), so an id
# is never reused for another node.
_plans: dict[int, _Plan | None] = {}
_marked_nodes: dict[int, bool] = {}
_kept: list[Node] = []


def _children(node: Node) -> list[Node]:
    """The nodes :func:`_lenient` descends into from ``node`` (resolved)."""
    out: list[Node] = []
    for key in ("allOf", "anyOf", "oneOf"):
        listed = node.get(key)
        if isinstance(listed, list):
            out.extend(cast("list[Node]", listed))
    properties = node.get("properties")
    if isinstance(properties, dict):
        out.extend(cast("dict[str, Node]", properties).values())
    items = node.get("items")
    if isinstance(items, dict):
        out.append(cast("Node", items))
    return out


def _has_marks(node: Node) -> bool:
    return node.get(ON_NULL) is True or node.get(ON_ERROR) is True or node.get(SKIP_ITEMS) is True


def _marked(node: Node) -> bool:
    """Whether any mark is reachable from ``node``: otherwise nothing below it ever changes."""
    node = _resolve(node)
    known = _marked_nodes.get(id(node))
    if known is not None:
        return known
    seen: set[int] = set()
    stack = [node]
    found = False
    while stack and not found:
        current = _resolve(stack.pop())
        if id(current) in seen:
            continue
        seen.add(id(current))
        for child in _children(current):
            if _has_marks(child):
                found = True
                break
            stack.append(child)
    _marked_nodes[id(node)] = found
    _kept.append(node)
    return found


def _plan(node: Node) -> _Plan | None:
    """The checks of ``node``; None when no mark lies below it (nothing can change)."""
    node = _resolve(node)
    key = id(node)
    if key in _plans:
        return _plans[key]
    _kept.append(node)
    if not _marked(node):
        _plans[key] = None
        return None
    plan = _plans[key] = _Plan()  # registered first: a recursive schema finds it
    all_of = node.get("allOf")
    if isinstance(all_of, list):
        plan.all_of = tuple(
            found for part in cast("list[Node]", all_of) if (found := _plan(part)) is not None
        )
    plan.branches = tuple(
        found for branch in _branches(node) if (found := _plan(branch)) is not None
    )
    properties = node.get("properties")
    if isinstance(properties, dict):
        fields: list[tuple[str, Node, bool, bool, Node | None, _Plan | None]] = []
        for name, sub in cast("dict[str, Node]", properties).items():
            element = _resolve(sub).get("items")
            skip = sub.get(SKIP_ITEMS) is True and isinstance(element, dict)
            on_null = sub.get(ON_NULL) is True
            on_error = sub.get(ON_ERROR) is True
            below = _plan(sub)
            if on_null or on_error or skip or below is not None:
                fields.append(
                    (name, sub, on_null, on_error, cast("Node", element) if skip else None, below)
                )
        plan.fields = tuple(fields)
    items = node.get("items")
    if isinstance(items, dict):
        plan.items = _plan(cast("Node", items))
    return plan


def _may_change(plan: _Plan | None, value: object) -> bool:
    """False when :func:`_lenient` returns ``value`` unchanged; True when it may not."""
    if plan is None or not _container(value):
        return False
    for part in plan.all_of:
        if _may_change(part, value):
            return True
    for branch in plan.branches:
        if _may_change(branch, value):
            return True
    if isinstance(value, dict):
        fields = cast("dict[str, object]", value)
        for name, sub, on_null, on_error, element, below in plan.fields:
            if name not in fields:
                continue
            item = fields[name]
            if item is None and on_null:
                return True
            if below is not None and _may_change(below, item):
                return True
            listed = _as_list(item) if element is not None else None
            if element is not None and listed is not None:
                for x in listed:
                    if not matches(element, x):
                        return True
            if on_error and not matches(sub, item):
                return True
        return False
    items = plan.items
    if items is not None:
        for item in cast("list[object]", value):
            if _may_change(items, item):
                return True
    return False


def marks_apply(node: Node | str, value: object) -> bool:
    """Whether a lenient mark may apply to ``value`` (decoded JSON) read as ``node``.

    False means :func:`lenient` would return ``value`` unchanged. True whenever
    a mark could apply under some branch of a union, so it may say True for a
    value the full reading leaves as it is, never False for one it changes.
    """
    return _may_change(_plan(definition(node) if isinstance(node, str) else node), value)
