"""A durable :class:`~acpio.store.SessionStore` on SQLite: sessions survive the agent process.

How this works: a served session's history is an :class:`InMemoryHistory`
(the same folding, the same bounds) that also appends each recorded item
(the update object; a text chunk; for terminal output, a mark naming the
terminal) to its own :class:`collections.deque`: one C call on the hot
path, no encoding, no lock (the loop only appends, the writer only pops).
A writer thread owns a connection and drains every session's deque in one
transaction per flush: every ``flush_interval`` seconds, at once at every
turn end (the ``idle`` state update passes through ``record``), on session
close (``release``) and on shutdown; and every
:data:`~acpio._store.stored_history.STREAM_POLL` seconds while text streams
fast (the loop tells it when a stream starts:
:class:`~acpio._store.stored_history.StreamPace`), so a fast stream is not
held in the queue for a whole interval. Each flush writes one msgpack row per
session (``events``); a terminal that got output is written once per row,
as its newest bytes (what replay shows), so streaming 64 MiB writes at most
1 MiB per flush and holds nothing extra in memory. Now and then (once the
rows outgrow 4 MiB and twice the last snapshot, and on close) the
session's folded history is captured as ``replay()`` and written as its
zlib-compressed ``snapshot``, replacing its rows. Loading a session folds
the snapshot and then the rows into a fresh history: folding a replay
rebuilds the same records, so a resume in a new process replays exactly
what a resume in the old one would have.

A session's durable state (the agent's saved state, its version, the config
values: :meth:`SqliteSessionStore.save_state`) is one row of ``agent_states``:
the loop puts the newest row on the record and queues one operation for it,
which the writer turns into that row (whatever is newest when it gets there).

Durability: WAL journal and one transaction per flush, so a crash (even
SIGKILL) leaves the file consistent and loses at most what was recorded
after the last flush: at most ``flush_interval`` seconds of updates (plus
the commit in progress). A turn's end wakes the writer at once, and a
closed session is committed before the close is answered (``release``
waits for it). ``synchronous=NORMAL``: a power cut may also lose
the last commits, never consistency. Nothing accepted is dropped on the
way: a value msgpack cannot hold is stored as JSON (see
:func:`~acpio._store.stored_history.pack`), and the writer outlives any
failure: a write the file refuses stays queued and is retried, is reported
on stderr, and the next store call raises :class:`SessionStoreError`.
The file and its ``-wal`` and ``-shm`` are private to the user (0600); a
file that can be read but not written is served read-only (``read_only``).

Several processes: each row names the process that serves the session
(pid and process start time). :meth:`SqliteSessionStore.get` takes a
session over only when that process is gone (a zombie is gone); otherwise it is refused with
``-32603`` (the session exists, so not ``-32002``; the request is valid, so
not ``-32602``; ACP keeps ``-32000..-32099`` for its own codes). Writers
wait on each other up to ``busy_timeout``; claims, loads and deletes run in
worker threads, never on the event loop. ``session/list`` reads on the loop
(a WAL reader never waits for writers; at most 100 ms of busy timeout, then
it reads from a thread), so it is answered at once, as in memory; the
sessions this process serves are listed even before the writer committed them.

Bounds: retention keeps the ``max_sessions`` most recently updated sessions
and none older than ``max_age`` (sessions a live process serves are kept),
at open and every 100 new sessions; freed pages are returned to the file
system (incremental vacuum) once a quarter of the file is free. The file's
``PRAGMA user_version`` is its schema version; older files are migrated
forward, newer or unreadable ones raise :class:`SessionStoreError`.
"""

from __future__ import annotations

import contextlib
import datetime
import logging
import os
import sqlite3
import sys
import threading
import urllib.parse
import zlib
from pathlib import Path
from typing import Any, Final

import anyio
import anyio.to_thread
import msgspec

from .._errors import RequestError, SessionStoreError
from .._limits import HistoryLimits
from .history import SessionRecord
from .store_paths import current_owner, owner_alive
from .stored_history import (
    COMPACT_BYTES,
    Create,
    Drained,
    Meta,
    Release,
    SaveState,
    Snapshot,
    StoredHistory,
    StoredRecord,
    Unloaded,
    config_decode,
    dirs_decode,
    pack,
    release_barriers,
    write_batches,
)
from .writer_store import ListedRow, WriterStore

__all__ = ["COMPACT_BYTES", "SCHEMA_VERSION", "SqliteSessionStore"]

_List = list  # the store has a method named list

logger = logging.getLogger(__name__)

SCHEMA_VERSION: Final = 3

_SCHEMA_1: Final = """
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    cwd TEXT NOT NULL,
    additional_directories TEXT NOT NULL DEFAULT '[]',
    title TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    owner_pid INTEGER,
    owner_start TEXT
);
CREATE INDEX sessions_by_update ON sessions (updated_at);
CREATE TABLE snapshots (session_id TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE events (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
"""
# Each session's durable state (Session.save_agent_state, config values), one row each.
_SCHEMA_2: Final = """
CREATE TABLE agent_states (
    session_id TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    state BLOB,
    config_values TEXT NOT NULL DEFAULT '{}'
);
"""
# Who each session belongs to (the principal that created it; NULL: nobody in particular).
_SCHEMA_3: Final = """
ALTER TABLE sessions ADD COLUMN principal TEXT;
CREATE INDEX sessions_by_principal ON sessions (principal, updated_at);
"""
# Forward migrations: MIGRATIONS[n] turns a version n-1 file into version n.
MIGRATIONS: Final[dict[int, str]] = {1: _SCHEMA_1, 2: _SCHEMA_2, 3: _SCHEMA_3}


class SqliteSessionStore(WriterStore[sqlite3.Connection]):
    """The default store of :func:`acpio.run`: sessions in a SQLite file.

    Keeps each session's id, working directory, additional directories,
    title, timestamps, durable state (agent state, its version, config
    values) and folded history (the records and bounds of
    :class:`~acpio.store.InMemoryHistory`, ``limits``), so ``session/list`` and
    ``session/resume`` work after a restart and across agent processes
    sharing the file. Recording never waits: a writer thread flushes every
    ``flush_interval`` seconds, at each turn end, on close and on
    :meth:`close` (see the module docstring for the crash-loss bound).
    Retention: at most ``max_sessions`` sessions, none older than
    ``max_age``.

    :raises SessionStoreError: when the file cannot be opened or created, is
        not a session store, or was written by a newer acpio.
    """

    _log = logger

    def __init__(
        self,
        path: str | Path,
        *,
        limits: HistoryLimits | None = None,
        max_sessions: int = 1000,
        max_age: datetime.timedelta = datetime.timedelta(days=30),
        flush_interval: float = 1.0,
        busy_timeout: float = 5.0,
    ) -> None:
        self.path: Path = Path(path)
        self.limits: HistoryLimits = limits or HistoryLimits()
        self.max_sessions = max_sessions
        self.max_age = max_age
        self.flush_interval = flush_interval
        self.busy_timeout = busy_timeout
        self._start_queues(str(self.path))
        #: True when the file can be read but not written: its sessions are listed and
        #: resumed, nothing is written (new sessions and new updates stay in memory).
        self.read_only: bool = False
        self._immutable = False  # read-only, and SQLite may not even create its -shm
        # The principal column, or NULL in a read-only file of an older schema (no principals).
        self._principal_column = "principal"
        self._conn = self._open()
        self._reader = self._connect(timeout=0.1)  # session/list, on the event loop
        self._writer = threading.Thread(
            target=self._write_loop, name=f"acpio-store:{self.path.name}", daemon=True
        )
        if not self.read_only:
            self._writer.start()

    # ---------------------------------------------------------------- opening

    def _connect(self, timeout: float | None = None) -> sqlite3.Connection:
        timeout = self.busy_timeout if timeout is None else timeout
        if self.read_only:
            uri = "file:" + urllib.parse.quote(os.fspath(self.path.absolute())) + "?mode=ro"
            if self._immutable:
                uri += "&immutable=1"
            conn = sqlite3.connect(
                uri, timeout=timeout, isolation_level=None, check_same_thread=False, uri=True
            )
        else:
            conn = sqlite3.connect(
                self.path, timeout=timeout, isolation_level=None, check_same_thread=False
            )
        conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        conn.execute("PRAGMA synchronous = NORMAL")
        return conn

    def _open(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            writable = _make_private(self.path)
        except OSError as exc:
            raise SessionStoreError(f"cannot open the session store {self.path}: {exc}") from exc
        if writable:
            try:
                return self._open_as()
            except SessionStoreError as exc:
                if "readonly" not in str(exc) and "read-only" not in str(exc):
                    raise
        self.read_only = True
        try:
            conn = self._open_as()
        except SessionStoreError:
            # A WAL file whose directory is read-only too: SQLite cannot make its -shm.
            self._immutable = True
            conn = self._open_as()
        print(
            f"acpio warning: the session store {self.path} cannot be written; its sessions "
            "are listed and can be resumed, but new sessions and updates are kept in memory "
            "only (they end with this process)",
            file=sys.stderr,
            flush=True,
        )
        return conn

    def _open_as(self) -> sqlite3.Connection:
        try:
            conn = self._connect()
        except (OSError, sqlite3.Error) as exc:
            raise SessionStoreError(f"cannot open the session store {self.path}: {exc}") from exc
        try:
            if self.read_only:
                self._check_readable(conn)
            else:
                self._migrate(conn)
                self._retain(conn)
        except BaseException as exc:
            conn.close()
            if isinstance(exc, SessionStoreError):
                raise
            if isinstance(exc, sqlite3.Error | OSError):
                raise SessionStoreError(
                    f"cannot read the session store {self.path}: {exc}"
                ) from exc
            raise
        return conn

    def _check_readable(self, conn: sqlite3.Connection) -> None:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise SessionStoreError(
                f"the session store {self.path} has schema version {version}, newer than "
                f"this acpio's {SCHEMA_VERSION}; it was written by a newer acpio and is left "
                "untouched"
            )
        if version == 0:
            if conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                raise SessionStoreError(
                    f"{self.path} is an SQLite file but not an acpio session store"
                )
            raise SessionStoreError(f"the session store {self.path} is empty and read-only")
        if version < 3:
            self._principal_column = "NULL"

    def _migrate(self, conn: sqlite3.Connection) -> None:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise SessionStoreError(
                f"the session store {self.path} has schema version {version}, newer than "
                f"this acpio's {SCHEMA_VERSION}; it was written by a newer acpio and is left "
                "untouched"
            )
        if version == 0:
            # Only takes effect on a new file (no tables), before the journal mode is set.
            conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
        conn.execute("PRAGMA journal_mode = WAL")
        if version == SCHEMA_VERSION:
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            self._migrate_in(conn)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _migrate_in(self, conn: sqlite3.Connection) -> None:
        version = conn.execute("PRAGMA user_version").fetchone()[0]  # another process?
        if version == 0 and conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
            raise SessionStoreError(f"{self.path} is an SQLite file but not an acpio session store")
        for target in range(version + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[target].split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {target}")

    def _retain(self, conn: sqlite3.Connection) -> None:
        """Delete sessions beyond ``max_sessions`` or older than ``max_age`` (not live ones)."""
        cutoff = (datetime.datetime.now(datetime.UTC) - self.max_age).isoformat(timespec="seconds")
        conn.execute("BEGIN IMMEDIATE")
        try:
            rows = conn.execute(
                "SELECT id, updated_at, owner_pid, owner_start FROM sessions "
                "ORDER BY updated_at DESC, rowid DESC"
            ).fetchall()
            doomed = [
                (session_id,)
                for index, (session_id, updated_at, pid, start) in enumerate(rows)
                if (index >= self.max_sessions or updated_at < cutoff)
                and not owner_alive(pid, start)
            ]
            conn.executemany("DELETE FROM sessions WHERE id = ?", doomed)
            conn.execute("DELETE FROM snapshots WHERE session_id NOT IN (SELECT id FROM sessions)")
            conn.execute("DELETE FROM events WHERE session_id NOT IN (SELECT id FROM sessions)")
            conn.execute(
                "DELETE FROM agent_states WHERE session_id NOT IN (SELECT id FROM sessions)"
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        _compact(conn)

    # --------------------------------------------------------- the store API

    async def get(self, session_id: str, *, principal: str | None = None) -> SessionRecord | None:
        """The session with its history, now served by this process; ``None`` if unknown
        (or, given a ``principal``, another principal's: nothing is taken over then).

        :raises RequestError: ``-32603`` when another live agent process serves it.
        :raises SessionStoreError: when the writer failed since the last store call.
        """
        self._check()
        record = self._served.get(session_id)
        if record is not None:
            return self._served_to(session_id, principal)
        loaded = await anyio.to_thread.run_sync(self._load, session_id, principal)
        record = self._served.get(session_id)  # another connection won the race
        if record is not None or loaded is None:
            return self._served_to(session_id, principal)
        if isinstance(loaded, int):
            raise RequestError.internal_error(
                f"Session {session_id} is open in another agent process (pid {loaded}); "
                "close it there first",
                {"sessionId": session_id, "pid": loaded},
            )
        assert isinstance(loaded.history, StoredHistory)
        if not self.read_only:
            loaded.history.attach()
        self._served[session_id] = loaded
        return loaded

    async def list(self, *, principal: str | None = None) -> _List[SessionRecord]:
        """Every session in the file and every session this process serves (given a
        ``principal``, only that principal's), most recently updated first (including
        other processes' sessions; their histories are not loaded).

        :raises SessionStoreError: when the writer failed since the last store call.
        """
        self._check()
        try:
            # On the loop, without waiting for the writer: a WAL reader never waits for
            # writers, and what this process changed is either served (listed from
            # memory) or committed (release and delete wait for it). Answered at once,
            # like the in-memory store, even when the client hangs up right after.
            rows = self._list_rows(self._reader, principal)
        except sqlite3.OperationalError:
            rows = await anyio.to_thread.run_sync(self._list_rows_locked, principal)
        return self._merge(rows, principal)

    async def delete(self, session_id: str, *, principal: str | None = None) -> bool:
        """Delete a session and its history; False if unknown (or, given a ``principal``,
        another principal's: then it is kept).

        :raises RequestError: ``-32603`` when another live agent process serves it, or
            when the store is read-only and the session is in the file.
        :raises SessionStoreError: when the writer failed since the last store call.
        """
        self._check()
        if session_id in self._served and self._served_to(session_id, principal) is None:
            return False
        record = self._served.pop(session_id, None)
        if record is not None and isinstance(record.history, StoredHistory):
            record.history.detach()
            record.history.dropped = True
        if self.read_only:
            if not await anyio.to_thread.run_sync(self._has_row, session_id, principal):
                return record is not None
            raise RequestError.internal_error(
                f"Session {session_id} cannot be deleted: the session store {self.path} "
                "is read-only",
                {"sessionId": session_id},
            )
        result = await anyio.to_thread.run_sync(self._delete_row, session_id, principal)
        if not isinstance(result, bool):  # the pid of the process that holds it
            raise RequestError.internal_error(
                f"Session {session_id} is open in another agent process (pid {result}); "
                "close it there first",
                {"sessionId": session_id, "pid": result},
            )
        return result or record is not None

    async def release(self, record: SessionRecord) -> None:
        """Write what the session recorded (a snapshot) and give it up; returns once committed.

        A read-only store keeps the session in memory (nothing can be written).

        :raises SessionStoreError: when the writer failed (this session's data stays
            queued and is retried).
        """
        if self._served.get(record.session_id) is not record or self.read_only:
            return
        del self._served[record.session_id]
        if isinstance(record, StoredRecord):
            self._give_up(record)
        await anyio.to_thread.run_sync(self._sync)
        self._check()

    def _writable(self) -> bool:
        return not self.read_only

    def _close_connections(self) -> None:
        # Another process may be reading: then the next checkpoint will do.
        self._reader.close()
        with contextlib.suppress(sqlite3.Error):
            if self.read_only:
                raise sqlite3.Error("nothing to compact")
            _compact(self._conn)
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self._conn.close()

    # ---------------------------------------------- off-loop (worker threads)

    def _state_row(self, conn: sqlite3.Connection, session_id: str) -> tuple[Any, ...] | None:
        try:
            row: tuple[Any, ...] | None = conn.execute(
                "SELECT state, version, config_values FROM agent_states WHERE session_id = ?",
                (session_id,),
            ).fetchone()
        except sqlite3.OperationalError:
            if not self.read_only:
                raise
            return None  # a read-only file of schema 1 (not migrated): it has no states
        return row

    def _busy_owner(self, pid: int | None, start: str | None) -> int | None:
        if pid is None or (pid, start or "") == current_owner():
            return None
        return pid if owner_alive(pid, start) else None

    def _load(self, session_id: str, principal: str | None) -> StoredRecord | int | None:
        """Take a session over (if its owner is gone) and fold its history; its owner's
        pid when a live process serves it; ``None`` when unknown or not ``principal``'s."""
        self._sync()  # what this process recorded and released is in the file
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN" if self.read_only else "BEGIN IMMEDIATE")
            try:
                row = conn.execute(
                    "SELECT cwd, additional_directories, title, updated_at, owner_pid, "
                    f"owner_start, {self._principal_column} FROM sessions WHERE id = ?",
                    (session_id,),
                ).fetchone()
                if row is None or (principal is not None and row[6] != principal):
                    conn.execute("COMMIT")
                    return None
                busy = self._busy_owner(row[4], row[5])
                if busy is not None:
                    conn.execute("COMMIT")
                    return busy
                if not self.read_only:  # else served here without a claim
                    pid, start = current_owner()
                    conn.execute(
                        "UPDATE sessions SET owner_pid = ?, owner_start = ? WHERE id = ?",
                        (pid, start, session_id),
                    )
                snapshot = conn.execute(
                    "SELECT data FROM snapshots WHERE session_id = ?", (session_id,)
                ).fetchone()
                events = conn.execute(
                    "SELECT seq, data FROM events WHERE session_id = ? ORDER BY seq",
                    (session_id,),
                ).fetchall()
                state = self._state_row(conn, session_id)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        record = StoredRecord(
            session_id,
            row[0],
            dirs_decode(row[1]),
            Unloaded(),
            title=row[2],
            updated_at=row[3],
            principal=row[6],
        )
        history = self._new_history(record)
        try:
            key = ["", ""]
            if snapshot is not None:
                history.snapshot_bytes = history.fold_blob(snapshot[0], key)
            for seq, data in events:
                history.log_bytes += history.fold_blob(data, key)
                history.seq = seq
            if state is not None:
                record.agent_state = state[0]
                record.agent_state_version = state[1]
                record.config_values = config_decode(state[2])
                record.state_row = (state[0], state[1], state[2])
        except (zlib.error, msgspec.DecodeError, msgspec.ValidationError, ValueError) as exc:
            logger.exception("session %s in %s cannot be read", session_id, self.path)
            raise RequestError.internal_error(
                f"Session {session_id}'s stored history cannot be read ({exc})",
                {"sessionId": session_id},
            ) from None
        return record

    def _has_row(self, session_id: str, principal: str | None) -> bool:
        with self._lock:
            row = self._conn.execute(
                f"SELECT {self._principal_column} FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
            return row is not None and (principal is None or row[0] == principal)

    def _list_rows(self, conn: sqlite3.Connection, principal: str | None) -> _List[ListedRow]:
        column = self._principal_column
        if principal is None:
            return conn.execute(
                f"SELECT id, cwd, additional_directories, title, updated_at, {column} "
                "FROM sessions ORDER BY updated_at DESC, rowid DESC"
            ).fetchall()
        return conn.execute(
            f"SELECT id, cwd, additional_directories, title, updated_at, {column} "
            f"FROM sessions WHERE {column} = ? ORDER BY updated_at DESC, rowid DESC",
            (principal,),
        ).fetchall()

    def _list_rows_locked(self, principal: str | None) -> _List[ListedRow]:
        self._sync()
        with self._lock:
            return self._list_rows(self._conn, principal)

    def _delete_row(self, session_id: str, principal: str | None) -> bool | int:
        self._sync()
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                row = conn.execute(
                    "SELECT owner_pid, owner_start, principal FROM sessions WHERE id = ?",
                    (session_id,),
                ).fetchone()
                if row is not None and principal is not None and row[2] != principal:
                    conn.execute("COMMIT")
                    return False
                if row is not None:
                    busy = self._busy_owner(row[0], row[1])
                    if busy is not None:
                        conn.execute("COMMIT")
                        return busy
                for table, column in (("sessions", "id"), ("snapshots", "session_id")):
                    conn.execute(f"DELETE FROM {table} WHERE {column} = ?", (session_id,))
                conn.execute("DELETE FROM events WHERE session_id = ?", (session_id,))
                conn.execute("DELETE FROM agent_states WHERE session_id = ?", (session_id,))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return row is not None

    # ------------------------------------------------------------ the writer

    def _write_loop(self) -> None:
        conn: sqlite3.Connection | None = None
        while True:
            # While a fast stream runs (the last batch was large, or text just started
            # streaming: the loop wakes it), the writer looks again soon, so its queue
            # holds about STREAM_POLL seconds of the stream, not a flush interval's.
            self._wake.wait(self._pace.interval(self.flush_interval))
            self._wake.clear()
            stopping = self._stopping
            try:
                if conn is None:
                    conn = self._connect()
                    # It appends rows and reads little: a small page cache (256 KiB) is
                    # enough, and keeps a fast stream's memory down.
                    conn.execute("PRAGMA cache_size = -256")
                ok = self._flush(conn)
            except Exception as exc:  # the writer outlives any failure
                self._fail(exc)
                release_barriers(self._queue)
                ok = False
            # Stopping: done once all is written, or when the file cannot be written.
            if stopping and (not ok or self._all_written()):
                break
        if conn is not None:
            conn.close()

    def _commit(self, conn: sqlite3.Connection, items: _List[object], drained: Drained) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            self._write(conn, items, drained)
            conn.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise

    def _busy(self, exc: Exception) -> bool:
        return isinstance(exc, sqlite3.OperationalError) and (
            "locked" in str(exc) or "busy" in str(exc)
        )

    def _retryable(self, exc: Exception, conn: sqlite3.Connection) -> bool:
        return isinstance(exc, sqlite3.Error | OSError)

    def _retain_errors(self) -> tuple[type[Exception], ...]:
        return (sqlite3.Error,)

    def _write(self, conn: sqlite3.Connection, items: _List[object], drained: Drained) -> None:
        for item in items:
            if isinstance(item, Create):
                self._creates += 1
                conn.execute(
                    "INSERT OR REPLACE INTO sessions (id, cwd, additional_directories, "
                    "created_at, updated_at, owner_pid, owner_start, principal) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        item.session_id,
                        item.cwd,
                        item.directories,
                        item.updated_at,
                        item.updated_at,
                        *item.owner,
                        item.principal,
                    ),
                )
        write_batches(
            drained,
            self._histories,
            events=lambda history, events: self._write_events(conn, history, events),
            snapshot=lambda snapshot: self._write_snapshot(conn, snapshot),
            op=lambda history, item: self._write_op(conn, history, item),
        )

    def _write_snapshot(self, conn: sqlite3.Connection, snapshot: Snapshot) -> None:
        blob = pack(snapshot.updates)
        conn.execute(
            "INSERT OR REPLACE INTO snapshots VALUES (?, ?)",
            (snapshot.session_id, zlib.compress(blob, 1)),
        )
        conn.execute("DELETE FROM events WHERE session_id = ?", (snapshot.session_id,))
        snapshot.history.snapshot_bytes = len(blob)

    def _write_op(self, conn: sqlite3.Connection, history: StoredHistory, item: object) -> None:
        if isinstance(item, Meta):
            conn.execute(
                "UPDATE sessions SET additional_directories = ?, title = ?, updated_at = ? "
                "WHERE id = ?",
                (item.directories, item.title, item.updated_at, item.session_id),
            )
        elif isinstance(item, SaveState):
            record = item.record
            record.state_queued = False  # before the row is read: a newer save queues again
            row = record.state_row
            if row is not None:
                conn.execute(
                    "INSERT OR REPLACE INTO agent_states VALUES (?, ?, ?, ?)",
                    (record.session_id, row[1], row[0], row[2]),
                )
        elif isinstance(item, Release):
            conn.execute(
                "UPDATE sessions SET owner_pid = NULL, owner_start = NULL "
                "WHERE id = ? AND owner_pid = ?",
                (item.session_id, current_owner()[0]),
            )
            self._histories.discard(history)

    def _write_events(
        self, conn: sqlite3.Connection, history: StoredHistory, events: _List[object]
    ) -> None:
        # Not compressed: rows are short-lived (folded into the next snapshot), and
        # compressing every streamed chunk costs more CPU than the rest of the store.
        blob = history.row(events)
        if blob is None:
            return
        conn.execute(
            "INSERT OR REPLACE INTO events VALUES (?, ?, ?)",
            (history.session_id, history.seq, blob),
        )


def _make_private(path: Path) -> bool:
    """Create the store file readable by its owner only (0600 whatever the umask and the
    directory's mode) and take group and other access away from an existing one and its
    ``-wal`` and ``-shm`` (SQLite creates those with the file's mode); False when the
    file exists but cannot be written."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except PermissionError:
        if path.exists():
            return False
        raise
    os.close(fd)
    for name in (os.fspath(path), f"{path}-wal", f"{path}-shm"):
        try:
            mode = os.stat(name).st_mode
            if mode & 0o077:
                os.chmod(name, mode & 0o700)
        except OSError:
            continue  # absent, or not ours to change
    return True


def _compact(conn: sqlite3.Connection) -> None:
    """Give free pages back to the file system once a quarter of the file is free."""
    free = conn.execute("PRAGMA freelist_count").fetchone()[0]
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    if free and free * 4 >= pages:
        conn.executescript("PRAGMA incremental_vacuum;")  # execute() frees one page only
