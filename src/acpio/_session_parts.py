"""What the parts of one session share: the collaborators its handles and services use.

A :class:`~acpio.Session` is a facade over two collaborators, the turn state
machine (:class:`~acpio._turn.Turns`) and the update path
(:class:`~acpio._updates.UpdatePath`). Tool calls, terminals, processes,
client services, elicitation and config get a :class:`SessionParts`, never the
session's private attributes.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._peer import Peer
from ._turn import Turns
from ._updates import ClientConnection, UpdatePath

__all__ = ["SessionParts"]


@dataclass(frozen=True, eq=False, slots=True)
class SessionParts:
    """The collaborators of one session (see the module doc)."""

    session_id: str
    cwd: str
    peer: Peer
    updates: UpdatePath
    turns: Turns

    @property
    def connection(self) -> ClientConnection:
        """The session's connection (requests that are no session updates go here)."""
        return self.updates.connection

    @property
    def client_runs_terminals(self) -> bool:
        """Whether commands of this session run in the client's terminals (v1, ``terminal``)."""
        peer = self.peer
        return peer.protocol_version < 2 and peer.terminal
