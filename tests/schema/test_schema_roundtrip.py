"""Property tests: every session update variant survives encode -> decode unchanged.

Instances are generated from the Structs' own field types, so optional fields are drawn as
UNSET (omitted), None (explicit null) or a value, and union fields as any of their variants
including unknown ones.
"""

from __future__ import annotations

import json
import types
import typing
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acpio.schema import (
    SessionUpdate,
    UnknownVariant,
    UpdateSessionNotification,
    decode,
    encode,
    to_builtins,
)

TEXT = st.text(st.characters(codec="utf-8"), max_size=8)
INT = st.integers(-(2**63), 2**63 - 1)
FLOAT = st.floats(allow_nan=False, allow_infinity=False)
JSON: st.SearchStrategy[object] = st.recursive(
    st.none() | st.booleans() | INT | FLOAT | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)
UNKNOWN_TAG = (TEXT.map(lambda s: "_" + s) | st.sampled_from(["future_value", "v3"])).filter(bool)


def all_subclasses(cls: type) -> list[type]:
    found: list[type] = []
    sub: type
    for sub in cls.__subclasses__():
        found.append(sub)
        found.extend(all_subclasses(sub))
    return found


def concrete_variants(marker: object) -> list[type]:
    """The variant classes of a union, from its runtime marker (nested unions included)."""
    assert isinstance(marker, type)  # a Union for type checkers, a marker class at runtime
    return [
        c
        for c in all_subclasses(marker)
        if issubclass(c, msgspec.Struct | UnknownVariant) and not c.__name__.startswith("_")
    ]


_cache: dict[object, st.SearchStrategy[Any]] = {}


def strategy(tp: Any) -> st.SearchStrategy[Any]:
    if tp not in _cache:
        _cache[tp] = st.deferred(lambda: _build(tp))
    return _cache[tp]


def _build(tp: Any) -> st.SearchStrategy[Any]:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return st.one_of([strategy(a) for a in args])
    if origin is typing.Literal:
        return st.sampled_from(args)
    if origin is list:
        return st.lists(strategy(args[0]), max_size=2)
    if origin is dict:
        return st.dictionaries(TEXT, strategy(args[1]), max_size=2)
    simple: dict[object, st.SearchStrategy[Any]] = {
        str: TEXT,
        int: INT,
        float: FLOAT,
        bool: st.booleans(),
        object: JSON,
        type(None): st.none(),
        msgspec.UnsetType: st.just(msgspec.UNSET),
    }
    if tp in simple:
        return simple[tp]
    if isinstance(tp, type) and issubclass(tp, UnknownVariant):
        return unknown_strategy(tp)
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        kwargs = {}
        for field in msgspec.structs.fields(tp):
            if typing.get_origin(field.type) is typing.Literal:
                continue  # discriminator: keep its default
            value = strategy(field.type)
            if field.default is msgspec.UNSET and field.type is object:
                value = st.just(msgspec.UNSET) | value
            kwargs[field.name] = value
        return st.builds(tp, **kwargs)
    if isinstance(tp, type):  # a union marker
        return st.one_of([strategy(c) for c in concrete_variants(tp)])
    raise TypeError(f"no strategy for {tp!r}")


def unknown_strategy(cls: type[UnknownVariant]) -> st.SearchStrategy[Any]:
    fixed = dict(cls._fixed)
    reserved = {cls._key, *fixed}
    tag = UNKNOWN_TAG.filter(lambda value: value not in cls._known)
    extra = st.dictionaries(TEXT.filter(lambda k: k not in reserved), JSON, max_size=3)
    return st.builds(lambda t, e: cls({**e, **fixed, cls._key: t}), tag, extra)


SESSION_UPDATE_CLASSES = sorted(concrete_variants(SessionUpdate), key=lambda c: c.__name__)


def test_all_session_update_variants_are_covered() -> None:
    names = {c.__name__ for c in SESSION_UPDATE_CLASSES}
    assert {"ToolCallUpdate", "IdleStateUpdate", "UnknownStateUpdate"} <= names
    assert {"UnknownSessionUpdate", "TerminalOutputChunk", "UserMessageChunk"} <= names
    assert len(SESSION_UPDATE_CLASSES) == 23


@pytest.mark.parametrize("cls", SESSION_UPDATE_CLASSES, ids=lambda c: c.__name__)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_session_update_round_trips(cls: type, data: st.DataObject) -> None:
    update = data.draw(strategy(cls))
    wire = encode(update)
    again = decode(wire, SessionUpdate)
    assert type(again) is cls
    assert again == update
    assert encode(again) == wire
    assert json.loads(wire) == to_builtins(update)

    notification = UpdateSessionNotification(session_id="s", update=update)
    assert decode(encode(notification), UpdateSessionNotification) == notification
