"""The v1 encoding of a session: each v2 update as the v1 updates that show the same thing.

How this works: a :class:`V1Encoding` holds the session's
:class:`~acpio._wire.v1.projection.V1Projection` (coalesced tool-call content,
refreshes of agent-side terminals, terminals the client runs) and encodes what
it returns in the session's envelope (:mod:`acpio._session.framing`,
``docs/v1.md``). Where v1 shows nothing (mid-turn states) it returns no lines.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final, TypeVar

import anyio
import msgspec

from ... import schema
from ..._protocol.peer import Peer
from ..._session.encoding import SessionEncoding
from ..._session.framing import UPDATE_END, encode_json, message_chunk_prefix
from .lenient import lenient_raw
from .projection import V1Projection

__all__ = ["V1Encoding"]

T = TypeVar("T")

_encode: Final = encode_json
_NOTHING: Final[tuple[bytes, ...]] = ()


class V1Encoding(SessionEncoding):
    """The v1 encoding: each update as the v1 updates that show the same thing.

    Its :attr:`projection` keeps what the client was shown (``docs/v1.md``).
    Tool-call text chunks are coalesced (no one-line form); a reply's text chunk
    is one ``agent_message_chunk`` line without ``messageId``, as v1 shows it.
    """

    __slots__ = ("projection",)

    text_chunk_end = None

    def __init__(self, session_id: str, peer: Peer) -> None:
        super().__init__(session_id, peer)
        self.projection = V1Projection(session_id, peer)

    def state_lines(self, line: bytes) -> Sequence[bytes]:
        """None: v1 has no mid-turn state updates."""
        return _NOTHING

    def lines(self, updates: Sequence[Mapping[str, object] | msgspec.Raw]) -> list[bytes]:
        """The lines of v1 updates (mappings or encoded), in order."""
        prefix = self.prefix
        return [prefix + _encode(update) + UPDATE_END for update in updates]

    def update_lines(
        self, update: schema.SessionUpdate, *, replay: bool = False
    ) -> Sequence[bytes]:
        """The v1 lines that show ``update`` (see :meth:`V1Projection.project`)."""
        projected = self.projection.project(update, now=anyio.current_time(), replay=replay)
        return self.lines(projected) if projected else _NOTHING

    def ending_lines(
        self, chunk: schema.ToolCallContentChunk, patch: schema.ToolCallUpdate
    ) -> Sequence[bytes]:
        """One ``tool_call_update``: the final status with the whole content."""
        return self.lines(self.projection.ending(chunk, patch, now=anyio.current_time()))

    def text_chunk_lines(self, tool_call_id: str, line_prefix: bytes, text: str) -> Sequence[bytes]:
        """The coalesced content of the call, when this chunk makes it due."""
        return self.lines(self.projection.text_chunk(tool_call_id, text))

    def message_chunk_prefix(self, message_id: str, *, thought: bool) -> bytes:
        """:meth:`SessionEncoding.message_chunk_prefix` without ``messageId`` (v1 has none)."""
        return message_chunk_prefix(self.prefix, None, thought=thought)

    def terminal_lines(self, terminal_id: str, line_prefix: bytes, data: bytes) -> Sequence[bytes]:
        """Refreshes of the tool calls showing the terminal, now or later (see :meth:`due`)."""
        now = anyio.current_time()
        return self.lines(self.projection.terminal_output(terminal_id, data, now=now))

    def permission_params(self, params: schema.RequestPermissionRequest) -> object:
        """The v1 params (see :meth:`V1Projection.permission_request`)."""
        return self.projection.permission_request(params)

    def reusable_request(
        self, prepare: Callable[[str, object], bytes], method: str, params: object
    ) -> bytes | None:
        """None: the v1 params name the tool call as the client was last shown it."""
        return None

    def answer_decoder(
        self, decode: Callable[[msgspec.Raw], T], definition: str
    ) -> Callable[[msgspec.Raw], T]:
        """``decode`` of the answer first read as the v1 schema says (its lenient fields)."""

        def decode_v1(raw: msgspec.Raw) -> T:
            cleaned = lenient_raw(definition, raw)
            return decode(cleaned if cleaned is not None else raw)

        return decode_v1

    def client_terminal(self, terminal_id: str) -> None:
        """Its ``terminal`` items name the client's own terminal: passed through as they are."""
        self.projection.mark_client_terminal(terminal_id)

    def due(self) -> float | None:
        """When the next rate-limited terminal refresh is due."""
        return self.projection.due()

    def flush_due(self, now: float) -> Sequence[bytes]:
        """The terminal refreshes due at ``now``."""
        return self.lines(self.projection.flush_due(now))

    def reset(self) -> None:
        """A projection that has shown nothing yet (the client's terminals are still its own)."""
        self.projection = self.projection.fresh()
