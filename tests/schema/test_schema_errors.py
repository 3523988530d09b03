"""Decode errors name the full path of the bad value, including inside (nested) unions."""

from __future__ import annotations

import re

import msgspec
import pytest

from acpio import schema
from acpio.schema import PromptRequest, UpdateSessionNotification, convert, decode


def _update(update: str) -> bytes:
    return b'{"sessionId":"s","update":' + update.encode() + b"}"


CASES = [
    (
        PromptRequest,
        b'{"sessionId":"s","prompt":[{"type":"text","text":1}]}',
        "Expected `str`, got `int` - at `$.prompt[0].text`",
    ),
    (
        PromptRequest,
        b'{"sessionId":"s","prompt":[{"type":"text","text":"a"},{"text":"b"}]}',
        "Object missing required field `type` - at `$.prompt[1]`",
    ),
    (
        PromptRequest,
        b'{"sessionId":"s","prompt":["hi"]}',
        "Expected `object`, got `str` - at `$.prompt[0]`",
    ),
    (
        PromptRequest,
        b'{"sessionId":"s","prompt":[{"type":"resource","resource":{"uri":"file:///a"}}]}',
        "Object missing required field `text` - at `$.prompt[0].resource`",
    ),
    (
        PromptRequest,
        b'{"sessionId":"s","prompt":[{"type":"resource","resource":{"uri":"u","blob":7}}]}',
        "Expected `str`, got `int` - at `$.prompt[0].resource.blob`",
    ),
    (
        UpdateSessionNotification,
        _update(
            '{"sessionUpdate":"tool_call_content_chunk","toolCallId":"c",'
            '"content":{"type":"content","content":{"type":"text","text":null}}}'
        ),
        "Expected `str`, got `null` - at `$.update.content.content.text`",
    ),
    (
        UpdateSessionNotification,
        _update('{"sessionUpdate":"state_update","state":"idle","error":{"code":"x"}}'),
        "Expected `int`, got `str` - at `$.update.error.code`",
    ),
    (
        UpdateSessionNotification,
        _update(
            '{"sessionUpdate":"state_update","state":"running","background":[{"type":"tool_call"}]}'
        ),
        "Object missing required field `toolCallId` - at `$.update.background[0]`",
    ),
    (
        UpdateSessionNotification,
        _update('{"sessionUpdate":"state_update"}'),
        "Object missing required field `state` - at `$.update`",
    ),
    (
        UpdateSessionNotification,
        _update('{"sessionUpdate":7}'),
        "Expected `str`, got `int` - at `$.update.sessionUpdate`",
    ),
    (
        UpdateSessionNotification,
        _update('{"sessionUpdate":"tool_call_update","toolCallId":"c","locations":[{"line":1}]}'),
        "Object missing required field `path` - at `$.update.locations[0]`",
    ),
    (
        schema.RequestPermissionResponse,
        b'{"outcome":{"outcome":"selected"}}',
        "Object missing required field `optionId` - at `$.outcome`",
    ),
]


@pytest.mark.parametrize(("tp", "wire", "message"), CASES)
def test_decode_error_names_the_full_path(tp: type, wire: bytes, message: str) -> None:
    with pytest.raises(msgspec.ValidationError, match=f"^{re.escape(message)}$"):
        decode(wire, tp)


@pytest.mark.parametrize(("tp", "wire", "message"), CASES)
def test_convert_error_names_the_full_path(tp: type, wire: bytes, message: str) -> None:
    with pytest.raises(msgspec.ValidationError, match=f"^{re.escape(message)}$"):
        convert(msgspec.json.decode(wire), tp)


def test_error_at_the_root_of_a_union() -> None:
    with pytest.raises(
        msgspec.ValidationError, match=r"^Expected `str`, got `int` - at `\$.text`$"
    ):
        decode(b'{"type":"text","text":5}', schema.ContentBlock)
    with pytest.raises(msgspec.ValidationError, match=r"^Expected `object`, got `array`$"):
        decode(b"[]", schema.SessionUpdate)


def test_closed_union_rejects_unknown_discriminator() -> None:
    with pytest.raises(msgspec.ValidationError, match=r"Object missing required field `text`"):
        decode(b'{"uri":"u","_x":1}', schema.EmbeddedResourceResource)


def test_malformed_json_is_a_decode_error() -> None:
    with pytest.raises(msgspec.DecodeError):
        decode(b'{"sessionId":', PromptRequest)


def test_decode_accepts_str_bytes_and_raw() -> None:
    wire = '{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}'
    expected = decode(wire.encode(), PromptRequest)
    assert decode(wire, PromptRequest) == expected
    assert decode(msgspec.Raw(wire.encode()), PromptRequest) == expected
