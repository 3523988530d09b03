"""Framing: the envelope of every ``session/update`` line and the splices of the hot paths.

How this works: every ``session/update`` line is ``{"jsonrpc":"2.0","method":
"session/update","params":{"sessionId":<id>,"update":<update>}}`` and a newline.
This module is the one place that knows that shape. It hands out the
pre-encoded prefix of a session's lines and the suffix that closes them, and
the longer prefixes of the two streaming hot paths, whose lines are spliced
around one encoded value instead of encoding a whole update:

* a text chunk of a tool call (``tool_call_content_chunk`` holding one text
  item): :func:`text_chunk_prefix` + the encoded text + :data:`TEXT_CHUNK_END`;
* terminal bytes (``terminal_output_chunk``): :func:`terminal_chunk_prefix` +
  their base64 + :data:`TERMINAL_CHUNK_END`;
* a text chunk of a streamed reply or thought (``agent_message_chunk``,
  ``agent_thought_chunk`` holding one text block): :func:`message_chunk_prefix`
  + the encoded text + :data:`MESSAGE_CHUNK_END`, on both versions (v1 has no
  ``messageId``: the v1 encoding's prefix leaves it out).

Each prefix and its suffix are defined next to each other here; a property test
(``tests/test_framing.py``) checks that every framed line decodes to exactly the
message the general encoder writes for the same update.

These are pure byte helpers: which of them a session uses, and how, is its
encoding's choice (:mod:`acpio._session.encoding`, one object per protocol
version, chosen at ``initialize``); the envelope is the same in both versions.
"""

from __future__ import annotations

from binascii import b2a_base64
from typing import Final

import msgspec

from ..schema._base import enc_hook

__all__ = [
    "MESSAGE_CHUNK_END",
    "TERMINAL_CHUNK_END",
    "TEXT_CHUNK_END",
    "UPDATE_END",
    "encode_json",
    "encode_update_line",
    "message_chunk_prefix",
    "terminal_chunk_line",
    "terminal_chunk_prefix",
    "text_chunk_prefix",
    "update_prefix",
]

#: The JSON encoder of every framed value (msgspec's, with the schema's hook; the
#: same bytes as ``schema.encode``, as a bound C method: one Python call less per update).
encode_json: Final = msgspec.json.Encoder(enc_hook=enc_hook).encode
_encode: Final = encode_json

#: Closes a whole update: the ``params`` object and the message.
UPDATE_END: Final = b"}}\n"
#: Closes a text chunk: the text item, the content item, the update, ``params``, the message.
TEXT_CHUNK_END: Final = b"}}}}}\n"
#: Closes a message chunk: the text block, the update, ``params``, the message.
MESSAGE_CHUNK_END: Final = b"}}}}\n"
#: Closes a terminal chunk: the ``data`` string, the update, ``params``, the message.
TERMINAL_CHUNK_END: Final = b'"}}}\n'


def update_prefix(session_id: str) -> bytes:
    """The bytes of every ``session/update`` line of ``session_id`` up to the update.

    ``update_prefix(id) + <encoded update> + UPDATE_END`` is one whole line.
    """
    return (
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":'
        + _encode(session_id)
        + b',"update":'
    )


def text_chunk_prefix(prefix: bytes, tool_call_id: str) -> bytes:
    """The line of a one-text-item ``tool_call_content_chunk`` up to the encoded text.

    ``prefix`` is the session's :func:`update_prefix`; the line ends with
    ``_encode(text) + TEXT_CHUNK_END``.
    """
    return (
        prefix
        + b'{"sessionUpdate":"tool_call_content_chunk","toolCallId":'
        + _encode(tool_call_id)
        + b',"content":{"type":"content","content":{"type":"text","text":'
    )


def message_chunk_prefix(prefix: bytes, message_id: str | None, *, thought: bool) -> bytes:
    """The line of a one-text-block ``agent_message_chunk`` (``agent_thought_chunk`` when
    ``thought``) up to the encoded text.

    ``prefix`` is the session's :func:`update_prefix`; the line ends with
    ``_encode(text) + MESSAGE_CHUNK_END``. ``message_id`` is ``None`` on v1, whose
    chunks carry none (what the v1 projection sends for such a chunk).
    """
    kind = b"agent_thought_chunk" if thought else b"agent_message_chunk"
    message = b"" if message_id is None else b',"messageId":' + _encode(message_id)
    return (
        prefix
        + b'{"sessionUpdate":"'
        + kind
        + b'"'
        + message
        + b',"content":{"type":"text","text":'
    )


def terminal_chunk_prefix(prefix: bytes, terminal_id: str) -> bytes:
    """The line of a ``terminal_output_chunk`` up to the base64 data (inside its string)."""
    return (
        prefix
        + b'{"sessionUpdate":"terminal_output_chunk","terminalId":'
        + _encode(terminal_id)
        + b',"data":"'
    )


def terminal_chunk_line(line_prefix: bytes, data: bytes) -> bytes:
    """One whole ``terminal_output_chunk`` line carrying exactly ``data`` (base64)."""
    # One join per line: chunks are large, and every copy of them counts.
    return b"".join((line_prefix, b2a_base64(data, newline=False), TERMINAL_CHUNK_END))


def encode_update_line(prefix: bytes, update: object) -> bytes:
    """One whole ``session/update`` line for ``update`` (a v2 Struct or a v1 mapping)."""
    return prefix + _encode(update) + UPDATE_END
