"""The store :func:`acpio.run` uses when given none: one SQLite file per agent, or memory.

It lives with the stores, not with ``run``, so that :mod:`acpio.store` needs
nothing of the agent layer.
"""

from __future__ import annotations

import sys

from .._errors import SessionStoreError
from .._limits import HistoryLimits
from .history import InMemorySessionStore, SessionStore
from .sqlite_store import SqliteSessionStore
from .store_paths import default_store_path

__all__ = ["default_session_store"]


def default_session_store(agent_name: str, *, limits: HistoryLimits | None = None) -> SessionStore:
    """The store :func:`acpio.run` uses when given none: sessions that outlive the process.

    A :class:`~acpio.store.SqliteSessionStore` at ``ACPIO_SESSION_STORE`` (a file,
    or ``memory`` for an :class:`~acpio.store.InMemorySessionStore`), else at
    ``<state dir>/<agent_name>/sessions.sqlite3``: the state directory is
    ``ACPIO_STATE_DIR``, else ``$XDG_STATE_HOME`` (``~/.local/state``) on
    Linux, ``~/Library/Application Support`` on macOS, ``%LOCALAPPDATA%`` on
    Windows. A file that cannot be used (unreadable, not a store, written by
    a newer acpio) is reported on stderr and sessions stay in memory: the
    agent always starts. Its histories keep ``limits`` (the defaults if ``None``).
    """
    path = default_store_path(agent_name)
    if path is None:
        return InMemorySessionStore(limits)
    try:
        return SqliteSessionStore(path, limits=limits)
    except SessionStoreError as exc:
        # Straight to stderr, whatever the log level: the user loses sessions otherwise.
        print(
            f"acpio warning: {exc}; sessions are kept in memory only (they end with this process)",
            file=sys.stderr,
            flush=True,
        )
        return InMemorySessionStore(limits)
