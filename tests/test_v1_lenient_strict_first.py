"""The quick reading of v1 messages gives what the full two-pass lenient reading gives.

``lenient_raw`` (and ``lenient``) first asks which marks can apply
(``marks_apply``) and skips the full walk when none can. Here every v1
message definition (requests, notifications, answers) is read both ways: the
new path, and the old one (decode to builtins, the full walk, encode again),
for its minimal forms (each union branch), its full forms (every property),
and each property, at every depth, set to ``null``, to wrong-typed values, and
(arrays) with an invalid item among valid ones; then for random JSON placed at
random properties. The results must be the same JSON; and ``marks_apply``
never says False for a value the full walk changes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acpio import schema
from acpio._features.elicitation import (
    _decode_response,  # pyright: ignore[reportPrivateUsage]
)
from acpio._handles.permission import decode_permission_response
from acpio._protocol.peer import Peer
from acpio._wire.v1 import V1_WIRE
from acpio._wire.v1 import lenient as v1_schema
from acpio._wire.v1.lenient import definition, lenient, lenient_raw, marks_apply

DEFS: dict[str, Any] = v1_schema._defs()  # pyright: ignore[reportPrivateUsage]
MESSAGES = sorted(name for name, node in DEFS.items() if "x-method" in node)
WRONG: tuple[object, ...] = (None, 1.5, -1, 2**64, "x", True, [1], {"x": 1}, [])


def old_path(name: str, raw: msgspec.Raw) -> msgspec.Raw:
    """The reading before: decode to builtins, the full walk, encode again."""
    value = v1_schema.loads(bytes(raw))
    walked = v1_schema._lenient(definition(name), value)  # pyright: ignore[reportPrivateUsage]
    return msgspec.Raw(msgspec.json.encode(walked))


def same_reading(name: str, value: object) -> None:
    raw = msgspec.Raw(json.dumps(value).encode())
    new = lenient_raw(name, raw)
    assert new is not None
    old = old_path(name, raw)
    assert json.loads(bytes(new)) == json.loads(bytes(old)), (name, value)
    full = v1_schema._lenient(definition(name), value)  # pyright: ignore[reportPrivateUsage]
    assert lenient(name, value) == full
    if full != value:
        assert marks_apply(name, value), (name, value)


def resolve(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = DEFS[node["$ref"].rsplit("/", 1)[-1]]
    return node


def sample(node: dict[str, Any], depth: int, full: bool) -> object:
    """A value of ``node``: its first union branch, its required (``full``: all) properties."""
    node = resolve(node)
    if "const" in node:
        return node["const"]
    if isinstance(node.get("enum"), list):
        return node["enum"][0]
    branches = node.get("anyOf", node.get("oneOf"))
    base: object = None
    if isinstance(branches, list) and branches:
        base = sample(branches[0], depth, full)
    for part in node.get("allOf", []):
        part_value = sample(part, depth, full)
        if isinstance(part_value, dict) and isinstance(base, dict):
            base = {**base, **part_value}
        elif base is None:
            base = part_value
    kinds = node.get("type")
    kind = kinds if isinstance(kinds, str) else next((k for k in kinds or [] if k != "null"), None)
    properties: dict[str, Any] = node.get("properties", {})
    if kind == "object" or properties:
        out: dict[str, object] = dict(base) if isinstance(base, dict) else {}
        if depth > 0:
            names = properties if full else node.get("required", [])
            for key in names:
                out[key] = sample(properties[key], depth - 1, full)
        return out
    if base is not None:
        return base
    if kind == "array":
        items = node.get("items")
        return [sample(items, depth - 1, full)] if isinstance(items, dict) and depth > 0 else []
    return {"string": "s", "integer": 0, "number": 0, "boolean": False}.get(str(kind))


def branch_forms(name: str) -> Iterator[object]:
    node = DEFS[name]
    branches = node.get("anyOf", node.get("oneOf")) or [None]
    for branch in branches:
        for full in (False, True):
            form = sample(node, 4, full)
            if branch is not None:
                chosen = sample(branch, 4, full)
                form = (
                    {**form, **chosen}
                    if isinstance(form, dict) and isinstance(chosen, dict)
                    else chosen
                )
            yield form


def mutations(value: object, depth: int = 4) -> Iterator[object]:
    """``value`` with one place (a property or an item, at any depth) replaced."""
    if depth == 0:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            for wrong in WRONG:
                yield {**value, key: wrong}
            if isinstance(item, list) and item:
                yield {**value, key: [*item, 7, {"x": 1}]}
                yield {**value, key: [None, *item]}
            for changed in mutations(item, depth - 1):
                yield {**value, key: changed}
    elif isinstance(value, list):
        for index, item in enumerate(value):
            for changed in mutations(item, depth - 1):
                yield [*value[:index], changed, *value[index + 1 :]]


@pytest.mark.parametrize("name", MESSAGES)
def test_each_form_of_each_message_reads_the_same_both_ways(name: str) -> None:
    count = 0
    for form in branch_forms(name):
        same_reading(name, form)
        for mutated in mutations(form):
            same_reading(name, mutated)
            count += 1
    # A definition with properties is tried with many variants, not just its minimal form.
    assert count > 0 or not resolve(DEFS[name]).get("properties")


def test_the_walk_reaches_every_kind_of_mark() -> None:
    # The forms above put a null in each default-on-null field, a mismatch in
    # default-on-error ones and an invalid item in skip-invalid-items arrays.
    changed = {"null": False, "error": False, "items": False}
    cases = [
        ("NewSessionRequest", {"cwd": "/", "mcpServers": None}, "null"),
        ("TerminalOutputResponse", {"output": "", "truncated": False, "_meta": 3}, "error"),
        ("ListSessionsResponse", {"sessions": [{"sessionId": "a", "cwd": "/a"}, 5]}, "items"),
    ]
    for name, value, kind in cases:
        assert marks_apply(name, value)
        same_reading(name, value)
        changed[kind] = lenient(name, value) != value
    assert all(changed.values())


def test_a_skip_invalid_items_mark_alone_applies_to_an_invalid_item() -> None:
    # In the v1 schema every such array is default-on-error too; the check stands alone.
    node: dict[str, object] = {
        "type": "object",
        "properties": {
            "a": {"type": "array", "items": {"type": "integer"}, v1_schema.SKIP_ITEMS: True}
        },
    }
    assert not marks_apply(node, {"a": [1, 2]})
    assert marks_apply(node, {"a": [1, "x"]})
    assert lenient(node, {"a": [1, "x"]}) == {"a": [1]}


def test_numbers_past_what_msgspec_reads_are_read_as_before() -> None:
    # Decoded by the json module (as infinity): encoded again, as the old path did.
    raw = msgspec.Raw(b'{"sessionId": "s", "prompt": [], "_meta": {"n": 1e400}}')
    read = lenient_raw("PromptRequest", raw)
    assert read is not None
    assert json.loads(bytes(read)) == json.loads(bytes(old_path("PromptRequest", raw)))


def test_a_message_no_mark_applies_to_is_passed_on_as_it_came() -> None:
    raw = msgspec.Raw(b'{"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}')
    assert lenient_raw("PromptRequest", raw) is raw
    nulled = msgspec.Raw(b'{"cwd": "/", "mcpServers": null}')
    assert json.loads(bytes(lenient_raw("NewSessionRequest", nulled) or b"")) == {"cwd": "/"}


def test_null_that_v1_reads_as_absent_stays_absent_once_decoded() -> None:
    # The v2 type allows null here: a strict decode alone would give None, v1 says absent.
    raw = msgspec.Raw(b'{"cwd": "/", "mcpServers": null, "additionalDirectories": null}')
    strict = schema.decode(raw, schema.NewSessionRequest)
    assert strict.mcp_servers is None
    read = lenient_raw("NewSessionRequest", raw)
    assert read is not None
    request = schema.decode(read, schema.NewSessionRequest)
    assert request.mcp_servers is msgspec.UNSET
    assert request.additional_directories is msgspec.UNSET


def test_a_mismatched_meta_of_an_answer_is_absent_once_decoded() -> None:
    answer = msgspec.Raw(b'{"outcome": {"outcome": "cancelled"}, "_meta": [1]}')
    v1 = V1_WIRE.encoding("s", Peer(protocol_version=1))
    decoded = v1.answer_decoder(decode_permission_response, "RequestPermissionResponse")(answer)
    assert decoded is not None
    assert decoded.meta is msgspec.UNSET
    read_form = v1.answer_decoder(_decode_response, "CreateElicitationResponse")
    form = read_form(msgspec.Raw(b'{"action": "decline", "_meta": "x"}'))
    assert form.meta is msgspec.UNSET


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(MESSAGES), data=st.data())
def test_random_json_at_random_places_reads_the_same_both_ways(
    name: str, data: st.DataObject
) -> None:
    forms = list(branch_forms(name))
    value = data.draw(st.sampled_from(forms))
    places = list(mutations(value, 4))
    if places:
        value = data.draw(st.sampled_from(places))
    if isinstance(value, dict) and value:
        key = data.draw(st.sampled_from(sorted(value)))
        value = {**value, key: data.draw(JSON)}
    same_reading(name, value)
