"""What the parts of one session share: the collaborators its handles and services use.

A :class:`~acpio.Session` is a facade over two collaborators, the turn state
machine (:class:`~acpio._session.turn.Turns`) and the update path
(:class:`~acpio._session.updates.UpdatePath`). Tool calls, terminals, processes,
client services, elicitation and config get a :class:`SessionParts`, never the
session's private attributes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .. import schema
from .._protocol.peer import Peer
from .turn import Turns
from .updates import ClientConnection, UpdatePath

__all__ = ["OwningSession", "SessionParts"]


class OwningSession(Protocol):
    """The session a tool call or terminal belongs to, as the handle sees it.

    :class:`acpio.Session` is the one implementation; handles are typed by
    this protocol so that the handle layer never imports the session facade
    (which imports the handles to create them). Every update a handle sends
    goes through :meth:`send`, so it passes the same value checks, ordering
    and admission as the agent's own updates.
    """

    @property
    def id(self) -> str:
        """The ``sessionId``."""
        ...

    @property
    def cwd(self) -> str:
        """The session's absolute working directory."""
        ...

    @property
    def additional_directories(self) -> list[str]:
        """The further absolute directories the client gave the session."""
        ...

    @property
    def remembered_permissions(self) -> dict[str, str]:
        """``allow_always``/``reject_always`` answers kept for the session, by subject."""
        ...

    async def send(self, update: schema.SessionUpdate) -> None:
        """Send one update through the session's update path (see :meth:`acpio.Session.send`)."""
        ...


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
