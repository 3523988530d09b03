"""Open enums and open unions: unknown values decode, stay verbatim, and never pass as known."""

from __future__ import annotations

import json

import msgspec
import pytest

from acpio import schema
from acpio.schema import (
    KNOWN_NOTICE_SEVERITY,
    KNOWN_STOP_REASON,
    KNOWN_TOOL_CALL_STATUS,
    KNOWN_TOOL_KIND,
    Content,
    IdleStateUpdate,
    Notice,
    PromptRequest,
    RequestPermissionResponse,
    SelectedPermissionOutcome,
    TextContent,
    ToolCallUpdate,
    UnknownContentBlock,
    UnknownDiffChange,
    UnknownRequestPermissionOutcome,
    UnknownRequestPermissionSubject,
    UnknownSessionUpdate,
    UnknownStateUpdate,
    UnknownToolCallContent,
    UnknownVariant,
    UpdateSessionNotification,
    convert,
    decode,
    encode,
    to_builtins,
)


def known_variants(union_marker: object) -> list[type]:
    assert isinstance(union_marker, type)  # a Union for type checkers, a class at runtime
    subclasses: list[type] = union_marker.__subclasses__()
    return [
        c for c in subclasses if issubclass(c, msgspec.Struct) and not c.__name__.startswith("_")
    ]


@pytest.mark.parametrize(
    ("field", "value", "known"),
    [("kind", "_custom", KNOWN_TOOL_KIND), ("status", "future_value", KNOWN_TOOL_CALL_STATUS)],
)
def test_open_string_enums_decode_and_stay_verbatim(
    field: str, value: str, known: frozenset[str]
) -> None:
    wire = json.dumps(
        {"sessionUpdate": "tool_call_update", "toolCallId": "c", field: value},
        separators=(",", ":"),
    ).encode()
    update = decode(wire, schema.SessionUpdate)
    assert isinstance(update, ToolCallUpdate)
    assert getattr(update, field) == value
    assert value not in known
    assert encode(update) == wire


def test_unknown_stop_reason_and_notice_severity_stay_verbatim() -> None:
    idle = b'{"sessionUpdate":"state_update","state":"idle","stopReason":"_x"}'
    update = decode(idle, schema.SessionUpdate)
    assert isinstance(update, IdleStateUpdate)
    assert update.stop_reason == "_x"
    assert update.stop_reason not in KNOWN_STOP_REASON
    assert encode(update) == idle

    notice = b'{"sessionUpdate":"notice","severity":"_x","title":"Heads up"}'
    decoded = decode(notice, schema.SessionUpdate)
    assert isinstance(decoded, Notice)
    assert decoded.severity == "_x"
    assert decoded.severity not in KNOWN_NOTICE_SEVERITY
    assert encode(decoded) == notice


UNKNOWN_UNION_VALUES = [
    # (union, compact wire JSON, expected unknown class, discriminator attribute, value)
    (
        "ToolCallContent",
        b'{"type":"_widget","widgetId":"w1","props":{"size":[1,2.5,null]},"_meta":null}',
        UnknownToolCallContent,
        "type",
        "_widget",
    ),
    (
        "ContentBlock",
        b'{"type":"_widget","text":"not a text block","extra":true}',
        UnknownContentBlock,
        "type",
        "_widget",
    ),
    (
        "SessionUpdate",
        b'{"sessionUpdate":"future_update","payload":{"a":1}}',
        UnknownSessionUpdate,
        "session_update",
        "future_update",
    ),
    (
        "SessionUpdate",
        b'{"sessionUpdate":"state_update","state":"_paused","reason":"user"}',
        UnknownStateUpdate,
        "state",
        "_paused",
    ),
    (
        "RequestPermissionOutcome",
        b'{"outcome":"_maybe","optionId":"allow-once"}',
        UnknownRequestPermissionOutcome,
        "outcome",
        "_maybe",
    ),
    (
        "RequestPermissionSubject",
        b'{"type":"_x","command":"rm -rf /"}',
        UnknownRequestPermissionSubject,
        "type",
        "_x",
    ),
    (
        "DiffChange",
        b'{"operation":"_rename","path":"/a","oldPath":"/b"}',
        UnknownDiffChange,
        "operation",
        "_rename",
    ),
]


@pytest.mark.parametrize(
    ("union", "wire", "cls", "attr", "value"),
    UNKNOWN_UNION_VALUES,
    ids=[f"{u}-{c.__name__}" for u, _, c, _, _ in UNKNOWN_UNION_VALUES],
)
def test_unknown_union_values_are_kept_verbatim_and_never_known(
    union: str, wire: bytes, cls: type[UnknownVariant], attr: str, value: str
) -> None:
    marker = getattr(schema, union)
    decoded = decode(wire, marker)
    assert type(decoded) is cls
    assert getattr(decoded, attr) == value
    assert decoded.raw == json.loads(wire)
    assert encode(decoded) == wire
    assert to_builtins(decoded) == json.loads(wire)
    assert convert(json.loads(wire), marker) == decoded
    for variant in known_variants(marker):
        assert not isinstance(decoded, variant)
    assert decoded == cls(json.loads(wire))
    assert decoded != cls({**json.loads(wire), "other": 1})


def test_unknown_state_keeps_its_outer_discriminator() -> None:
    update = decode(b'{"sessionUpdate":"state_update","state":"_paused"}', schema.SessionUpdate)
    assert isinstance(update, UnknownStateUpdate)
    assert update.session_update == "state_update"
    assert isinstance(update, schema.StateUpdate)
    assert not isinstance(update, UnknownSessionUpdate)


def test_unknown_permission_outcome_is_not_a_selection() -> None:
    response = decode(
        b'{"outcome":{"outcome":"_maybe","optionId":"allow-once"}}', RequestPermissionResponse
    )
    assert not isinstance(response.outcome, SelectedPermissionOutcome)
    assert isinstance(response.outcome, UnknownRequestPermissionOutcome)
    assert response.outcome != SelectedPermissionOutcome(option_id="allow-once")


def test_unknown_values_nested_inside_known_objects_round_trip() -> None:
    wire = (
        b'{"sessionId":"s","update":{"sessionUpdate":"tool_call_content_chunk",'
        b'"toolCallId":"c","content":{"type":"content","content":{"type":"_widget","w":1}}}}'
    )
    notification = decode(wire, UpdateSessionNotification)
    chunk = notification.update
    assert isinstance(chunk, schema.ToolCallContentChunk)
    assert isinstance(chunk.content, Content)
    assert isinstance(chunk.content.content, UnknownContentBlock)
    assert encode(notification) == wire

    prompt = decode(
        b'{"sessionId":"s","prompt":[{"type":"_widget"},{"type":"text","text":"hi"}]}',
        PromptRequest,
    )
    assert [type(block) for block in prompt.prompt] == [UnknownContentBlock, TextContent]


@pytest.mark.parametrize(
    ("cls", "raw", "error"),
    [
        (UnknownContentBlock, {"type": "text", "text": "x"}, ValueError),
        (UnknownSessionUpdate, {"sessionUpdate": "state_update", "state": "_x"}, ValueError),
        (UnknownStateUpdate, {"state": "_x"}, ValueError),
        (UnknownStateUpdate, {"sessionUpdate": "state_update", "state": "idle"}, ValueError),
        (UnknownContentBlock, {"kind": "_x"}, TypeError),
        (UnknownContentBlock, {"type": 3}, TypeError),
    ],
)
def test_unknown_constructor_refuses_known_or_malformed_values(
    cls: type[UnknownVariant], raw: dict[str, object], error: type[Exception]
) -> None:
    with pytest.raises(error):
        cls(raw)


def test_unknowns_built_by_hand_encode_verbatim() -> None:
    block = UnknownContentBlock({"type": "_widget", "b": [1], "a": None})
    assert encode(block) == b'{"type":"_widget","b":[1],"a":null}'
    assert repr(block) == "UnknownContentBlock({'type': '_widget', 'b': [1], 'a': None})"
    assert UnknownToolCallContent({"type": "_widget"}) != UnknownContentBlock({"type": "_widget"})
