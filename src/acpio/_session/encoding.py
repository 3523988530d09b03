"""The wire encoding of a session: what the session core asks of its connection's version.

How this works: each wire version (``acpio._wire.v1``, ``acpio._wire.v2``) gives a
session its :class:`SessionEncoding` once, when the session is made on a
connection that negotiated that version. The update path
(:class:`~acpio._session.updates.UpdatePath`), the handles and the features ask
it what they need and never learn which version it is; where a version shows
nothing, its methods return no lines, so nobody tests a flag:

* the lines of a general update, live or replayed (:meth:`SessionEncoding.update_lines`);
* the lines of a mid-turn state update (:meth:`~SessionEncoding.state_lines`);
* the pre-encoded hot paths: the prefix of a tool call's text chunks, of a
  reply's or thought's text chunks and of terminal bytes, each to be completed
  by one encoded value and a suffix (:attr:`~SessionEncoding.text_chunk_end`,
  :attr:`~SessionEncoding.message_chunk_end`), or the lines of such a chunk when
  it has no one-line form (:meth:`~SessionEncoding.text_chunk_lines`,
  :meth:`~SessionEncoding.terminal_lines`);
* the params of a permission request, the request encoded once when it may be
  sent again as is, and how to read the client's answers
  (:meth:`~SessionEncoding.permission_params`, :meth:`~SessionEncoding.reusable_request`,
  :meth:`~SessionEncoding.answer_decoder`);
* a terminal the client runs (:meth:`~SessionEncoding.client_terminal`);
* a timer-driven flush (:meth:`~SessionEncoding.due`, :meth:`~SessionEncoding.flush_due`)
  and a reset before a replay rebuilds the client's view (:meth:`~SessionEncoding.reset`).

What is due at a turn's end goes out with the turn's ``idle`` update (its
:meth:`~SessionEncoding.update_lines`).

The base class is the plain encoding: every line is the session's envelope
prefix, the encoded update (or one spliced value) and the suffix that closes it
(:mod:`acpio._session.framing`). A version whose client is shown something else
overrides what differs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, TypeVar

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

__all__ = ["SessionEncoding"]

T = TypeVar("T")

_encode: Final = encode_json
_NOTHING: Final[tuple[bytes, ...]] = ()


class SessionEncoding:
    """How one session's updates and requests are written for its connection's version.

    The invariant it keeps: every line it returns is one whole ``session/update``
    message of this session (the envelope of :mod:`acpio._session.framing`), and a
    client reading them is shown what the v2 updates it was given say, as far as
    its version can show it. Each wire version gives its own (the base is the
    plain one); callers never ask which.
    """

    __slots__ = ("_prefix", "peer", "session_id")

    #: The suffix of a tool call's spliced text chunk (prefix + encoded text + this);
    #: None when such a chunk has no one-line form (:meth:`text_chunk_lines` then).
    text_chunk_end: bytes | None = TEXT_CHUNK_END
    #: The suffix of a reply's or thought's spliced text chunk (the prefix of
    #: :meth:`message_chunk_prefix` + encoded text + this).
    message_chunk_end: bytes = MESSAGE_CHUNK_END

    def __init__(self, session_id: str, peer: Peer) -> None:
        self.session_id: Final = session_id
        self.peer: Final = peer
        # Made by the first line (an idle session never sends one).
        self._prefix: bytes | None = None

    @property
    def prefix(self) -> bytes:
        """The session's lines up to the update (:func:`~acpio._session.framing.update_prefix`)."""
        return self._prefix or self._make_prefix()

    def _make_prefix(self) -> bytes:
        prefix = self._prefix = update_prefix(self.session_id)
        return prefix

    def line(self, update: schema.SessionUpdate) -> bytes:
        """The one line of ``update`` as it is (a state update's line; hot paths splice)."""
        return (self._prefix or self._make_prefix()) + _encode(update) + UPDATE_END

    def state_lines(self, line: bytes) -> Sequence[bytes]:
        """The lines that show a mid-turn state update (``running``, ``requires_action``)
        whose one line is ``line`` (:meth:`line`); none where the version has no form."""
        return (line,)

    def update_lines(
        self, update: schema.SessionUpdate, *, replay: bool = False
    ) -> Sequence[bytes]:
        """The lines that show ``update`` (possibly none); ``replay`` during a history replay."""
        return ((self._prefix or self._make_prefix()) + _encode(update) + UPDATE_END,)

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

    def reusable_request(
        self, prepare: Callable[[str, object], bytes], method: str, params: object
    ) -> bytes | None:
        """``params`` encoded once by ``prepare`` when an equal request may be sent again
        as is (its params depend on nothing but their own arguments); else ``None``."""
        return prepare(method, params)

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
