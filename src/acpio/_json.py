"""Typed access to decoded JSON: narrow ``object`` values to objects, arrays and fields.

How this works: ``msgspec.json.decode`` without a type gives ``object``
values: ``dict`` (keys always ``str``), ``list``, ``str``, ``int``, ``float``,
``bool`` or ``None``. These helpers are the one place that says so to the type
checker, so code reading raw JSON (the testing kit, the CLI, the v1 shapes)
narrows a value once and reads typed fields from then on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TypeAlias, cast

import msgspec

__all__ = (
    "JsonObject",
    "JsonValue",
    "as_list",
    "as_object",
    "as_str_list",
    "decode_json",
    "get_field",
)

JsonObject: TypeAlias = dict[str, object]
"""A decoded JSON object."""

JsonValue: TypeAlias = dict[str, object] | list[object] | str | int | float | bool | None
"""A decoded JSON value (``isinstance(value, dict)`` narrows it to a :data:`JsonObject`)."""


def as_object(value: object) -> JsonObject | None:
    """``value`` as a JSON object, or ``None`` when it is not one."""
    # Decoded JSON objects have str keys only.
    return cast("JsonObject", value) if isinstance(value, dict) else None


def as_list(value: object) -> list[object] | None:
    """``value`` as a JSON array, or ``None`` when it is not one."""
    return cast("list[object]", value) if isinstance(value, list) else None


def get_field(value: object, key: str) -> object:
    """``value[key]`` when ``value`` is a JSON object that has ``key``, else ``None``."""
    return value.get(key) if (value := as_object(value)) is not None else None


def as_str_list(value: object) -> list[str] | None:
    """``value`` as a JSON array of strings, or ``None`` when it is not one."""
    items = as_list(value)
    if items is None or not all(isinstance(item, str) for item in items):
        return None
    return cast("list[str]", items)


decode_json: Final[Callable[[bytes | bytearray | memoryview | str], JsonValue]] = (
    msgspec.json.Decoder().decode
)
"""Decode any JSON text to builtins (``dict``, ``list``, ``str``, numbers, ``None``)."""
