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
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Final, cast

import msgspec

__all__ = ["definition", "lenient", "lenient_raw", "loads", "matches", "message_definition"]

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
    is, for the decoder that follows to accept or refuse."""
    return _lenient(definition(node) if isinstance(node, str) else node, value)


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
    """:func:`lenient` of encoded params against the definition ``name`` (None: as is)."""
    if raw is None or name is None:
        return raw
    try:
        value = loads(raw)
    except ValueError:
        return raw  # not JSON: the decoder that follows says so
    return msgspec.Raw(msgspec.json.encode(lenient(name, value)))
