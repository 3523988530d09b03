"""The WebSocket cursor: spliced into the message as encoded, or decoded and encoded again.

``with_cursor`` is on the path of every message over a resumable WebSocket,
so it splices ``_meta["acp/cursor"]`` into the bytes of a message laid out as
this process's encoders write it (``params`` or ``result`` last: every line
that reaches a stream is one of them). Whatever the path, the result must be
the message with exactly that member added, and nothing else changed.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from acpio._rpc.wire import notification_prefix, request_tail
from acpio.remote._connection import CURSOR_KEY, with_cursor

Json = Any


def expected(message: Json, cursor: str) -> Json:
    """What the message must become (the slow path written out)."""
    copy = msgspec.json.decode(msgspec.json.encode(message))
    if "method" in copy:
        holder = copy.setdefault("params", {})
    elif "result" in copy:
        holder = copy["result"]
    else:
        holder = copy["error"].setdefault("data", {})
    holder.setdefault("_meta", {})[CURSOR_KEY] = cursor
    return copy


OURS: list[bytes] = [
    # As the JSON-RPC layer and the session layer encode them.
    notification_prefix("session/update")
    + b'{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk",'
    + b'"content":{"type":"text","text":"a } { \\" brace"}}}}',
    notification_prefix("session/update") + b"{}}",
    notification_prefix("x") + b'{"a":{}}}',
    notification_prefix("x") + b'{"a":"{"}}',
    b'{"jsonrpc":"2.0","id":12' + request_tail("session/request_permission", b'{"o":[1]}')[:-1],
    b'{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}',
    b'{"jsonrpc":"2.0","id":3,"result":{}}',
]

OTHERS: list[bytes] = [
    # Any other shape takes the slow path, and must come out the same.
    b'{"jsonrpc":"2.0","method":"x","params":{"_meta":{"k":1},"a":2}}',
    b'{"jsonrpc":"2.0","id":"str-id","result":{"a":1}}',
    b'{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"m"}}',
    b'{"params":{"a":1},"jsonrpc":"2.0","method":"x"}',
    b'{"jsonrpc":"2.0","method":"x"}',
]


@pytest.mark.parametrize("line", OURS + OTHERS)
def test_the_cursor_is_added_and_nothing_else_changes(line: bytes) -> None:
    out = with_cursor(line, "tag.41")
    assert msgspec.json.decode(out) == expected(msgspec.json.decode(line), "tag.41")


@pytest.mark.parametrize("line", OURS)
def test_our_own_messages_keep_their_bytes_up_to_the_splice(line: bytes) -> None:
    out = with_cursor(line, "tag.7")
    assert out.startswith(line[:-2])
    assert out.endswith(b'"_meta":{"acp/cursor":"tag.7"}}}')


@pytest.mark.parametrize("line", [b"[1,2]", b'"text"', b'{"jsonrpc":"2.0","id":1}'])
def test_a_message_of_no_known_shape_is_left_as_it_is(line: bytes) -> None:
    assert with_cursor(line, "tag.1") == line
