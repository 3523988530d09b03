"""Where sessions live between turns and processes: histories for replay and session stores.

An agent written as ``class MyAgent(acpio.Agent)`` and started with
:func:`acpio.run` needs nothing from here: its sessions survive the process in
the store of :func:`default_session_store` (SQLite at a per-user path). Import
from this module to choose another store (``acpio.run(agent,
store=acpio.store.InMemorySessionStore())``) or to write one:

- :class:`SessionStore`: what a store implements (create, get, list, delete
  and release sessions, save a session's durable state), with its
  :class:`SessionRecord` per session (the agent's state and the config
  values are part of it);
  :class:`InMemorySessionStore` (sessions live as long as the process),
  :class:`SqliteSessionStore` (sessions survive restarts; it raises
  :class:`SessionStoreError` when its file cannot be used) and
  :class:`PostgresSessionStore` (sessions shared by replicas on many machines;
  the ``postgres`` extra) are the three kept here; :func:`default_session_store`
  is the one :func:`acpio.run` picks, :func:`open_session_store` opens one from
  a URL (``memory``, a file, ``postgresql://...``);
- :class:`History`: what a session records of itself so that
  ``session/resume`` can replay it, and :class:`InMemoryHistory`, the default
  (also the base of a durable history).

The bounds a history keeps are :class:`acpio.HistoryLimits`, with the other
limits at the top level (``acpio.AgentLimits(history=...)`` sets them for the
store acpio creates). ``docs/session-store.md`` shows how to write a store.
"""

from ._errors import SessionStoreError as SessionStoreError
from ._store.default_store import default_session_store as default_session_store
from ._store.default_store import open_session_store as open_session_store
from ._store.history import History as History
from ._store.history import InMemoryHistory as InMemoryHistory
from ._store.history import InMemorySessionStore as InMemorySessionStore
from ._store.history import SessionRecord as SessionRecord
from ._store.history import SessionStore as SessionStore
from ._store.postgres_store import PostgresSessionStore as PostgresSessionStore
from ._store.sqlite_store import SqliteSessionStore as SqliteSessionStore

__all__ = (
    "History",
    "InMemoryHistory",
    "InMemorySessionStore",
    "PostgresSessionStore",
    "SessionRecord",
    "SessionStore",
    "SessionStoreError",
    "SqliteSessionStore",
    "default_session_store",
    "open_session_store",
)
