"""One principal's view of a session store: what a remote connection's agent is given.

How this works: :class:`PrincipalStore` wraps the server's store and passes
the connection's principal to every call that names sessions, so the agent
server above it needs no notion of principals: the sessions it creates belong
to the principal, and another principal's session is, to it, an unknown one
(the store decides that before anything else). stdio serves the bare store
(no principal, every session), so this costs nothing there.
"""

from __future__ import annotations

from typing import final

from .history import SessionRecord, SessionStore

__all__ = ["PrincipalStore"]

_List = list  # the store has a method named list


@final
class PrincipalStore:
    """``store`` as ``principal`` sees it: only its sessions exist.

    Every session created through it belongs to ``principal``; ``get``,
    ``list`` and ``delete`` see only ``principal``'s sessions, and answer
    for any other exactly as for a session that does not exist.
    """

    __slots__ = ("principal", "store")

    def __init__(self, store: SessionStore, principal: str) -> None:
        self.store = store
        self.principal = principal

    async def create(
        self,
        session_id: str,
        cwd: str,
        additional_directories: _List[str],
        *,
        principal: str | None = None,
    ) -> SessionRecord:
        """A new session of this view's principal (``principal`` is ignored)."""
        return await self.store.create(
            session_id, cwd, additional_directories, principal=self.principal
        )

    async def get(self, session_id: str, *, principal: str | None = None) -> SessionRecord | None:
        """The principal's session, or ``None`` (unknown, or another principal's)."""
        return await self.store.get(session_id, principal=self.principal)

    async def list(self, *, principal: str | None = None) -> _List[SessionRecord]:
        """The principal's sessions, most recently updated first."""
        return await self.store.list(principal=self.principal)

    async def delete(self, session_id: str, *, principal: str | None = None) -> bool:
        """Delete the principal's session; False (and nothing deleted) for any other."""
        return await self.store.delete(session_id, principal=self.principal)

    async def release(self, record: SessionRecord) -> None:
        """The store's ``release``."""
        await self.store.release(record)

    async def save_state(self, record: SessionRecord) -> None:
        """The store's ``save_state``."""
        await self.store.save_state(record)
