"""The current wire version: the server's own handlers, the plain encoding, the agent's commands.

How this works: the agent server implements the current version's methods
itself (``_agent/agent_server.py``); :data:`V2_WIRE` looks requests up there,
gives each session the plain :class:`~acpio._session.encoding.SessionEncoding`
(every update sent as it is, the hot paths spliced) and runs every command as
a process group of this program (:data:`~acpio._handles.host.AGENT_HOST`). A
request the agent gives up is withdrawn with ``$/cancel_request``.
"""

from __future__ import annotations

from typing import Final

import msgspec

from ..._handles.host import AGENT_HOST, CommandHost
from ..._protocol.peer import Peer
from ..._session.encoding import SessionEncoding
from ..wire import Handler, MethodTable, ServerView

__all__ = ["V2_WIRE", "V2Wire"]


class _Table:
    """The server's own handlers; notifications are read as they are."""

    __slots__ = ("_handlers",)

    def __init__(self, server: ServerView) -> None:
        self._handlers: Final = server.v2_requests

    def get(self, method: str) -> Handler | None:
        """The server's handler of ``method``, if it has one."""
        return self._handlers.get(method)

    def notification_params(self, method: str, params: msgspec.Raw | None) -> msgspec.Raw | None:
        """``params`` as they came."""
        return params


class V2Wire:
    """The current wire version (see the module docstring); :data:`V2_WIRE` is the one."""

    __slots__ = ()

    @property
    def withdraws_requests(self) -> bool:
        """True: the client takes ``$/cancel_request``."""
        return True

    def methods(self, server: ServerView) -> MethodTable:
        """The server's own handlers."""
        return _Table(server)

    def encoding(self, session_id: str, peer: Peer) -> SessionEncoding:
        """The plain encoding: every update as it is."""
        return SessionEncoding(session_id, peer)

    def host(self, peer: Peer) -> CommandHost:
        """The agent runs every command; the client serves no files."""
        return AGENT_HOST


#: The one object of the current wire version.
V2_WIRE: Final = V2Wire()
