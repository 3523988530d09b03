"""ACP v1 on the wire: its method table, its encoding and the client's terminals and files.

How this works: a connection whose client asked for protocol version 1 at
``initialize`` is given :data:`V1_WIRE`. Its method table is
:class:`~acpio._wire.v1.methods.V1Methods` (each v1 method mapped onto the
server's handlers, ``initialize`` included); each session's encoding is a
:class:`~acpio._wire.v1.encoding.V1Encoding` (what a v1 client is shown,
:mod:`acpio._wire.v1.projection`); a client that advertised ``terminal`` runs
the session's commands and one that advertised ``fs`` serves its files
(:mod:`acpio._wire.v1.client_services`). v1 defines no way for a client to take
``$/cancel_request``: a request the agent gives up (a poll, a wait for an exit,
a permission of a cancelled turn) is abandoned instead, and the client answers
what ``session/cancel`` ended itself.
"""

from __future__ import annotations

from typing import Final

from ..._handles.host import CommandHost
from ..._protocol.peer import Peer
from ..._session.encoding import SessionEncoding
from ..wire import ServerView
from .client_services import CLIENT_FILES, CLIENT_TERMINALS
from .encoding import V1Encoding
from .methods import V1Methods

__all__ = ["V1_WIRE", "V1Wire"]


class V1Wire:
    """ACP v1 (see the module docstring); :data:`V1_WIRE` is the one."""

    __slots__ = ()

    @property
    def withdraws_requests(self) -> bool:
        """False: v1 defines no ``$/cancel_request`` (an abandoned request is ignored)."""
        return False

    def methods(self, server: ServerView) -> V1Methods:
        """The v1 method table of a connection served by ``server``."""
        return V1Methods(server)

    def encoding(self, session_id: str, peer: Peer) -> SessionEncoding:
        """A :class:`V1Encoding`: each update as the v1 updates that show the same thing."""
        return V1Encoding(session_id, peer)

    def host(self, peer: Peer) -> CommandHost:
        """The client's terminals when it advertised ``terminal``, else the agent's."""
        return CLIENT_TERMINALS if peer.terminal else CLIENT_FILES


#: The one object of ACP v1.
V1_WIRE: Final = V1Wire()
