"""The wire encoding of a session: one object per protocol version, chosen at ``initialize``.

How this works: :func:`session_encoding` gives each session the encoding of the
version its connection negotiated, once. The update path
(:class:`~acpio._session.updates.UpdatePath`), the handles and the features ask
it what they need and never learn which version it is:

* the lines of a general update, live or replayed (:meth:`SessionEncoding.update_lines`);
* the pre-encoded hot paths: the prefix of a tool call's text chunks, of a
  reply's or thought's text chunks and of terminal bytes, each to be completed
  by one encoded value and a suffix (:attr:`~SessionEncoding.text_chunk_end`,
  :attr:`~SessionEncoding.message_chunk_end`), or the lines of such a chunk when
  it has no one-line form (:meth:`~SessionEncoding.text_chunk_lines`,
  :meth:`~SessionEncoding.terminal_lines`);
* whether mid-turn state updates are shown (:attr:`~SessionEncoding.shows_states`);
* the params of a permission request and how to read the client's answers
  (:meth:`~SessionEncoding.permission_params`, :meth:`~SessionEncoding.answer_decoder`);
* what the peer does for the agent (:attr:`~SessionEncoding.client_runs_terminals`,
  :meth:`~SessionEncoding.client_terminal`);
* a timer-driven flush (:meth:`~SessionEncoding.due`, :meth:`~SessionEncoding.flush_due`)
  and a reset before a replay rebuilds the client's view (:meth:`~SessionEncoding.reset`).

What is due at a turn's end goes out with the turn's ``idle`` update (its
:meth:`~SessionEncoding.update_lines`).

:class:`V2Encoding` is a few byte strings: every line is the session's envelope
prefix, the encoded update (or one spliced value) and the suffix that closes it
(:mod:`acpio._session.framing`). :class:`V1Encoding` holds the session's
:class:`~acpio._session.v1_projection.V1Projection` (coalesced tool-call content,
refreshes of agent-side terminals, terminals the client runs) and encodes what
it returns in the same envelope (``docs/v1.md``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Final, TypeVar

import anyio
import msgspec

from .. import schema
from .._protocol.peer import Peer
from .framing import (
    MESSAGE_CHUNK_END,
    TEXT_CHUNK_END,
    UPDATE_END,
    encode_json,
    message_chunk_prefix,
    terminal_chunk_line,
    terminal_chunk_prefix,
    text_chunk_prefix,
    update_prefix,
)

if TYPE_CHECKING:
    pass

__all__ = ["SessionEncoding", "V1Encoding", "V2Encoding", "session_encoding"]

T = TypeVar("T")

_encode: Final = encode_json
_NOTHING: Final[tuple[bytes, ...]] = ()


class SessionEncoding:
    """How one session's updates and requests are written for its connection's version.

    The invariant it keeps: every line it returns is one whole ``session/update``
    message of this session (the envelope of :mod:`acpio._session.framing`), and a
    client reading them is shown what the v2 updates it was given say, as far as
    its version can show it. Subclasses are the versions; callers never ask which.
    """

    __slots__ = ("peer", "prefix", "session_id")

    #: Mid-turn state updates (``running``, ``requires_action``) have a form: send them.
    shows_states: bool = True
    #: The suffix of a tool call's spliced text chunk (prefix + encoded text + this);
    #: None when such a chunk has no one-line form (:meth:`text_chunk_lines` then).
    text_chunk_end: bytes | None = TEXT_CHUNK_END
    #: The suffix of a reply's or thought's spliced text chunk (the prefix of
    #: :meth:`message_chunk_prefix` + encoded text + this).
    message_chunk_end: bytes = MESSAGE_CHUNK_END
    #: A permission request's params depend on nothing but its own arguments, so an
    #: equal request may be encoded once and sent again as is.
    stable_permission_params: bool = True
    #: Lines may fall due later (:meth:`due`): the update path asks after sending.
    timed_flushes: bool = False

    def __init__(self, session_id: str, peer: Peer) -> None:
        self.session_id: Final = session_id
        self.peer: Final = peer
        self.prefix: Final = update_prefix(session_id)

    @property
    def client_runs_terminals(self) -> bool:
        """Whether the session's commands run in the client's terminals (``terminal/create``)."""
        return False

    def line(self, update: schema.SessionUpdate) -> bytes:
        """The one line of ``update`` as it is (a state update's line; hot paths splice)."""
        return self.prefix + _encode(update) + UPDATE_END

    def update_lines(
        self, update: schema.SessionUpdate, *, replay: bool = False
    ) -> Sequence[bytes]:
        """The lines that show ``update`` (possibly none); ``replay`` during a history replay."""
        return (self.prefix + _encode(update) + UPDATE_END,)

    def ending_lines(
        self, chunk: schema.ToolCallContentChunk, patch: schema.ToolCallUpdate
    ) -> Sequence[bytes]:
        """The lines of a call's last content item and the patch that ends it."""
        return (*self.update_lines(chunk), *self.update_lines(patch))

    def text_chunk_prefix(self, tool_call_id: str) -> bytes:
        """The line of a one-text-item ``tool_call_content_chunk`` up to the encoded text."""
        return text_chunk_prefix(self.prefix, tool_call_id)

    def text_chunk_lines(self, tool_call_id: str, line_prefix: bytes, text: str) -> Sequence[bytes]:
        """The lines that show a text chunk of a tool call (``line_prefix``: its prefix)."""
        return (line_prefix + _encode(text) + TEXT_CHUNK_END,)

    def message_chunk_prefix(self, message_id: str, *, thought: bool) -> bytes:
        """The line of a one-text-block reply (or ``thought``) chunk up to the encoded text."""
        return message_chunk_prefix(self.prefix, message_id, thought=thought)

    def terminal_chunk_prefix(self, terminal_id: str) -> bytes:
        """The line of a ``terminal_output_chunk`` up to the base64 data."""
        return terminal_chunk_prefix(self.prefix, terminal_id)

    def terminal_lines(self, terminal_id: str, line_prefix: bytes, data: bytes) -> Sequence[bytes]:
        """The lines that show bytes an agent-side terminal printed."""
        return (terminal_chunk_line(line_prefix, data),)

    def permission_params(self, params: schema.RequestPermissionRequest) -> object:
        """The ``session/request_permission`` params that ask what ``params`` asks."""
        return params

    def answer_decoder(
        self, decode: Callable[[msgspec.Raw], T], definition: str
    ) -> Callable[[msgspec.Raw], T]:
        """How to read the client's answer of schema type ``definition`` with ``decode``."""
        return decode

    def client_terminal(self, terminal_id: str) -> None:
        """``terminal_id`` names a terminal the client runs (it created it)."""

    def due(self) -> float | None:
        """When :meth:`flush_due` has lines to give (``None``: nothing pending)."""
        return None

    def flush_due(self, now: float) -> Sequence[bytes]:
        """The lines due at ``now`` (time-bounded refreshes)."""
        return _NOTHING

    def reset(self) -> None:
        """Forget what the client was shown: a replay rebuilds its view."""


class V2Encoding(SessionEncoding):
    """The v2 encoding: every update is sent as it is, the hot paths spliced."""

    __slots__ = ()


class V1Encoding(SessionEncoding):
    """The v1 encoding: each update as the v1 updates that show the same thing.

    Its :attr:`projection` keeps what the client was shown (``docs/v1.md``).
    Tool-call text chunks are coalesced (no one-line form); a reply's text chunk
    is one ``agent_message_chunk`` line without ``messageId``, as v1 shows it.
    """

    __slots__ = ("projection",)

    shows_states = False
    text_chunk_end = None
    stable_permission_params = False
    timed_flushes = True

    def __init__(self, session_id: str, peer: Peer) -> None:
        super().__init__(session_id, peer)
        # The v1 modules (and the vendored v1 schema) load with the first v1 session.
        from .v1_projection import V1Projection  # noqa: PLC0415

        self.projection = V1Projection(session_id, peer)

    @property
    def client_runs_terminals(self) -> bool:
        """Whether the client advertised ``terminal``: the session's commands run there."""
        return self.peer.terminal

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

    def answer_decoder(
        self, decode: Callable[[msgspec.Raw], T], definition: str
    ) -> Callable[[msgspec.Raw], T]:
        """``decode`` of the answer first read as the v1 schema says (its lenient fields)."""
        from .._protocol.v1_schema import lenient_raw  # noqa: PLC0415 - loaded for v1 only

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


def session_encoding(peer: Peer, session_id: str) -> SessionEncoding:
    """The encoding of a session on a connection that negotiated ``peer``'s version."""
    if peer.protocol_version == 1:
        return V1Encoding(session_id, peer)
    return V2Encoding(session_id, peer)
