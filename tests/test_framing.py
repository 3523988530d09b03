"""The framing module: every framed line is exactly what the general encoder writes."""

from __future__ import annotations

import base64
import json

from hypothesis import given
from hypothesis import strategies as st

from acpio import schema
from acpio._protocol.peer import Peer
from acpio._rpc.wire import notification_prefix as _notification_prefix
from acpio._session.framing import (
    MESSAGE_CHUNK_END,
    TEXT_CHUNK_END,
    UPDATE_END,
    encode_update_line,
    message_chunk_prefix,
    terminal_chunk_line,
    text_chunk_prefix,
    update_prefix,
)
from acpio._wire.v1 import V1_WIRE
from acpio._wire.v1.encoding import V1Encoding
from acpio._wire.v2 import V2_WIRE

# JSON strings hold any Unicode text but lone surrogates (not encodable as UTF-8).
text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
ids = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=20)

updates = st.one_of(
    st.builds(
        lambda m, t: schema.AgentMessageChunk(message_id=m, content=schema.TextContent(text=t)),
        ids,
        text,
    ),
    st.builds(
        lambda c, t, s: schema.ToolCallUpdate(tool_call_id=c, title=t, status=s),
        ids,
        text,
        st.sampled_from(["pending", "in_progress", "completed", "_custom"]),
    ),
    st.builds(
        lambda u, n: schema.UsageUpdate(used=u, size=n),
        st.integers(0, 2**53),
        st.integers(0, 2**53),
    ),
    st.builds(lambda t: schema.SessionInfoUpdate(title=t), st.one_of(st.none(), text)),
    st.builds(schema.RunningStateUpdate),
)


def general(session_id: str, update: schema.SessionUpdate) -> bytes:
    """What Connection.notify writes for the update: the reference encoding."""
    params = schema.UpdateSessionNotification(session_id=session_id, update=update)
    return _notification_prefix("session/update") + schema.encode(params) + b"}\n"


@given(ids, updates)
def test_a_framed_update_is_the_general_encoding(
    session_id: str, update: schema.SessionUpdate
) -> None:
    framing = V2_WIRE.encoding(session_id, Peer())
    line = framing.line(update)
    assert line == general(session_id, update)
    assert line == encode_update_line(update_prefix(session_id), update)
    assert framing.update_lines(update) == (line,)  # the v2 encoding sends it as it is
    assert line.endswith(UPDATE_END) and line.count(b"\n") == 1
    assert json.loads(line)["params"]["update"] == json.loads(schema.encode(update))


@given(ids, ids, text)
def test_a_framed_text_chunk_is_the_general_encoding(
    session_id: str, tool_call_id: str, chunk: str
) -> None:
    framing = V2_WIRE.encoding(session_id, Peer())
    line = framing.text_chunk_prefix(tool_call_id) + schema.encode(chunk) + TEXT_CHUNK_END
    assert framing.text_chunk_end == TEXT_CHUNK_END
    assert framing.text_chunk_lines(
        tool_call_id, framing.text_chunk_prefix(tool_call_id), chunk
    ) == (line,)
    update = schema.ToolCallContentChunk(
        tool_call_id=tool_call_id, content=schema.Content(content=schema.TextContent(text=chunk))
    )
    assert line == general(session_id, update)
    assert framing.text_chunk_prefix(tool_call_id) == text_chunk_prefix(
        framing.prefix, tool_call_id
    )


@given(ids, ids, text, st.booleans())
def test_a_framed_message_chunk_is_the_general_encoding(
    session_id: str, message_id: str, chunk: str, thought: bool
) -> None:
    framing = V2_WIRE.encoding(session_id, Peer())
    prefix = framing.message_chunk_prefix(message_id, thought=thought)
    line = prefix + schema.encode(chunk) + MESSAGE_CHUNK_END
    cls = schema.AgentThoughtChunk if thought else schema.AgentMessageChunk
    update = cls(message_id=message_id, content=schema.TextContent(text=chunk))
    assert line == general(session_id, update)
    assert prefix == message_chunk_prefix(framing.prefix, message_id, thought=thought)


@given(ids, ids, text, st.booleans())
def test_a_v1_message_chunk_is_the_line_of_the_projection(
    session_id: str, message_id: str, chunk: str, thought: bool
) -> None:
    framing = V1_WIRE.encoding(session_id, Peer(protocol_version=1))
    assert isinstance(framing, V1Encoding)
    prefix = framing.message_chunk_prefix(message_id, thought=thought)
    line = prefix + schema.encode(chunk) + MESSAGE_CHUNK_END
    cls = schema.AgentThoughtChunk if thought else schema.AgentMessageChunk
    update = cls(message_id=message_id, content=schema.TextContent(text=chunk))
    (projected,) = framing.lines(framing.projection.project(update, now=0.0))
    assert framing.message_chunk_end == MESSAGE_CHUNK_END
    assert line == projected
    kind = "agent_thought_chunk" if thought else "agent_message_chunk"
    assert json.loads(line)["params"] == {
        "sessionId": session_id,
        "update": {"sessionUpdate": kind, "content": {"type": "text", "text": chunk}},
    }


@given(ids, ids, st.binary(max_size=300))
def test_a_framed_terminal_chunk_is_the_general_encoding(
    session_id: str, terminal_id: str, data: bytes
) -> None:
    framing = V2_WIRE.encoding(session_id, Peer())
    line = terminal_chunk_line(framing.terminal_chunk_prefix(terminal_id), data)
    assert framing.terminal_lines(
        terminal_id, framing.terminal_chunk_prefix(terminal_id), data
    ) == (line,)
    update = schema.TerminalOutputChunk(
        terminal_id=terminal_id, data=base64.b64encode(data).decode()
    )
    assert line == general(session_id, update)
    decoded = schema.decode(
        json.dumps(json.loads(line)["params"]), schema.UpdateSessionNotification
    )
    assert isinstance(decoded.update, schema.TerminalOutputChunk)
    assert base64.b64decode(decoded.update.data) == data


@given(ids, updates)
def test_v1_lines_share_the_envelope(session_id: str, update: schema.SessionUpdate) -> None:
    framing = V1_WIRE.encoding(session_id, Peer(protocol_version=1))
    assert isinstance(framing, V1Encoding)
    assert framing.prefix == update_prefix(session_id)
    body = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}
    (line,) = framing.lines([body])
    message = json.loads(line)
    assert message == {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session_id, "update": body},
    }
