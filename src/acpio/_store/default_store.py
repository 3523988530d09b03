"""Choosing a store: the one :func:`acpio.run` uses when given none, and one from a URL.

It lives with the stores, not with ``run``, so that :mod:`acpio.store` needs
nothing of the agent layer.
"""

from __future__ import annotations

import os
import sys
import urllib.parse
from pathlib import Path

from .._errors import SessionStoreError
from .._limits import HistoryLimits
from .history import InMemorySessionStore, SessionStore
from .sqlite_store import SqliteSessionStore
from .store_paths import MEMORY_VALUES, SESSION_STORE_ENV, default_store_path

__all__ = ["default_session_store", "open_session_store"]

_POSTGRES_SCHEMES = ("postgresql://", "postgres://")
# Query parameters of a postgresql:// URL that are the store's, not libpq's.
_STORE_PARAMETERS = {"acpio_lease": "lease", "acpio_flush_interval": "flush_interval"}


def open_session_store(url: str, *, limits: HistoryLimits | None = None) -> SessionStore:
    """The store that ``url`` names (what ``--store`` and ``ACPIO_SESSION_STORE`` take).

    - ``memory``: an :class:`~acpio.store.InMemorySessionStore`;
    - ``postgresql://...`` (or ``postgres://``): a
      :class:`~acpio.store.PostgresSessionStore` (the ``postgres`` extra); the query
      parameters ``acpio_lease`` and ``acpio_flush_interval`` (seconds) set its
      lease and flush interval, the others go to libpq;
    - ``sqlite:///path`` or a plain file path: a :class:`~acpio.store.SqliteSessionStore`.

    A plain function: the store is open when it returns. Whoever opened it closes it
    when serving is over (``store.close()``: the SQLite and PostgreSQL stores write
    what is queued and give their sessions up; the in-memory store has nothing to
    close). Histories keep ``limits`` (the defaults if ``None``).

    :raises SessionStoreError: when the store cannot be opened (unreachable database,
        unusable file, newer schema, missing extra) or the URL names no store.
    """
    text = url.strip()
    if text.lower() in MEMORY_VALUES:
        return InMemorySessionStore(limits)
    if text.lower().startswith(_POSTGRES_SCHEMES):
        conninfo, options = _store_options(text)
        # The PostgreSQL store (and its imports) loads only for a postgresql:// URL.
        from .postgres_store import PostgresSessionStore  # noqa: PLC0415

        return PostgresSessionStore(
            conninfo,
            limits=limits,
            lease=options.get("lease", 15.0),
            flush_interval=options.get("flush_interval", 1.0),
        )
    if text.lower().startswith("sqlite://"):
        return SqliteSessionStore(Path(text[len("sqlite://") :]).expanduser(), limits=limits)
    if "://" in text:
        scheme = text.split("://", 1)[0]
        raise SessionStoreError(
            f"unknown session store {scheme}://...: give a file path, sqlite:///path, "
            "postgresql://... or memory"
        )
    return SqliteSessionStore(Path(text).expanduser(), limits=limits)


def _store_options(url: str) -> tuple[str, dict[str, float]]:
    """``url`` without the store's own query parameters, and those parameters."""
    parts = urllib.parse.urlsplit(url)
    kept: list[tuple[str, str]] = []
    options: dict[str, float] = {}
    for name, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True):
        option = _STORE_PARAMETERS.get(name)
        if option is None:
            kept.append((name, value))
            continue
        try:
            seconds = float(value)
        except ValueError:
            seconds = -1.0
        if not seconds > 0:
            raise SessionStoreError(f"{name} must be a positive number of seconds, not {value!r}")
        options[option] = seconds
    query = urllib.parse.urlencode(kept)
    return urllib.parse.urlunsplit(parts._replace(query=query)), options


def default_session_store(agent_name: str, *, limits: HistoryLimits | None = None) -> SessionStore:
    """The store :func:`acpio.run` uses when given none: sessions that outlive the process.

    ``ACPIO_SESSION_STORE`` names it when set (see :func:`open_session_store`: a
    file, ``memory``, or a ``postgresql://`` URL); else a
    :class:`~acpio.store.SqliteSessionStore` at
    ``<state dir>/<agent_name>/sessions.sqlite3``: the state directory is
    ``ACPIO_STATE_DIR``, else ``$XDG_STATE_HOME`` (``~/.local/state``) on
    Linux, ``~/Library/Application Support`` on macOS, ``%LOCALAPPDATA%`` on
    Windows. A store that cannot be used (unreadable file, not a store, written
    by a newer acpio, unreachable database) is reported on stderr and sessions
    stay in memory: the agent always starts. Its histories keep ``limits`` (the
    defaults if ``None``).
    """
    explicit = os.environ.get(SESSION_STORE_ENV, "").strip()
    try:
        if explicit.lower().startswith(_POSTGRES_SCHEMES):
            return open_session_store(explicit, limits=limits)
        path = default_store_path(agent_name)
        if path is None:
            return InMemorySessionStore(limits)
        return SqliteSessionStore(path, limits=limits)
    except SessionStoreError as exc:
        # Straight to stderr, whatever the log level: the user loses sessions otherwise.
        print(
            f"acpio warning: {exc}; sessions are kept in memory only (they end with this process)",
            file=sys.stderr,
            flush=True,
        )
        return InMemorySessionStore(limits)
