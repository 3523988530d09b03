"""A :class:`~acpio.store.SessionStore` on PostgreSQL: sessions shared by replicas.

How this works: the same queues as the SQLite store (see
:mod:`acpio._store.stored_history`): a served session's history is an
:class:`~acpio.store.InMemoryHistory` that also appends what it records to a
deque (one C call on the hot path, no encoding, no lock, no I/O), and a writer
thread drains every session's deque in one transaction per flush: every
``flush_interval`` seconds, at once at every turn end, on ``release`` and on
close. The rows, the snapshots and the folding are the SQLite store's, so a
session reopened on another replica replays, byte for byte, what a resume in
the process that recorded it would have.

Why a thread and the synchronous driver (psycopg 3): acpio runs on asyncio
and on trio, and the async PostgreSQL drivers (asyncpg, psycopg's async
API) are asyncio-only. A writer thread never blocks the event loop on
either; the store's coroutines run their queries in worker threads
(:func:`anyio.to_thread.run_sync`), as the SQLite store does.

Ownership across machines: every store has an owner id (host, process and
a random token) and every session row names the owner serving it, the
owner's lease (``lease_until``, on the database's clock) and a fencing
token (``fence``). The writer renews its leases every third of ``lease``
(whatever ``flush_interval`` is).
:meth:`PostgresSessionStore.get` takes a session over when nobody serves
it, when its owner's lease has expired, or at once when that owner is a
process of this machine that is gone; the takeover increments the fence.
Every flush locks its sessions' rows and writes only those whose owner and
fence are still this store's: an old owner that comes back (paused, cut
off from the database) writes nothing more for a session taken from it,
reports it on stderr, and raises :class:`SessionStoreError` from
``save_state`` and ``release`` of that session. A takeover waits for a
flush in progress (the row lock), so every update the old owner committed
is in the replay the new owner loads.

Durability: one transaction per flush, so a crash (SIGKILL) loses at most
what was recorded after the last flush (``flush_interval``, plus the
commit in progress). Nothing accepted is dropped: a flush the database
refuses (connection lost, server restarting) stays queued, is retried at
the next flush, is reported on stderr, and the next store call raises
:class:`SessionStoreError`.

Schema: tables ``acpio_sessions``, ``acpio_snapshots``, ``acpio_events``,
``acpio_agent_states`` and ``acpio_schema`` (its version) in the
connection's schema; versions are migrated forward at open under an advisory
lock (replicas starting together migrate once); a newer database raises
:class:`SessionStoreError` and is left untouched.
"""

from __future__ import annotations

import contextlib
import datetime
import logging
import os
import secrets
import socket
import sys
import threading
import time
import urllib.parse
import zlib
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import anyio
import anyio.to_thread
import msgspec

from .._errors import RequestError, SessionStoreError
from .._limits import HistoryLimits
from .history import SessionRecord, visible
from .store_paths import current_owner, owner_alive
from .stored_history import (
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

if TYPE_CHECKING:
    import psycopg

__all__ = ["SCHEMA_VERSION", "PostgresSessionStore", "redact"]

_List = list  # the store has a method named list

logger = logging.getLogger(__name__)

SCHEMA_VERSION: Final = 2
# pg_advisory_xact_lock key of the migrations ("acpio" in ASCII).
_MIGRATION_LOCK: Final = 0x616370696F

_SCHEMA_1: Final = """
CREATE TABLE acpio_schema (version INTEGER NOT NULL);
INSERT INTO acpio_schema VALUES (0);
CREATE TABLE acpio_sessions (
    id TEXT PRIMARY KEY,
    cwd TEXT NOT NULL,
    additional_directories TEXT NOT NULL DEFAULT '[]',
    title TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    owner TEXT,
    fence BIGINT NOT NULL DEFAULT 1,
    lease_until TIMESTAMPTZ
);
CREATE INDEX acpio_sessions_by_update ON acpio_sessions (updated_at);
CREATE INDEX acpio_sessions_by_owner ON acpio_sessions (owner);
CREATE TABLE acpio_snapshots (
    session_id TEXT PRIMARY KEY REFERENCES acpio_sessions ON DELETE CASCADE,
    data BYTEA NOT NULL
);
CREATE TABLE acpio_events (
    session_id TEXT NOT NULL REFERENCES acpio_sessions ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    data BYTEA NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE acpio_agent_states (
    session_id TEXT PRIMARY KEY REFERENCES acpio_sessions ON DELETE CASCADE,
    version INTEGER NOT NULL,
    state BYTEA,
    config_values TEXT NOT NULL DEFAULT '{}'
)
"""
# Who each session belongs to (the principal that created it; NULL: nobody in particular).
_SCHEMA_2: Final = """
ALTER TABLE acpio_sessions ADD COLUMN principal TEXT;
CREATE INDEX acpio_sessions_by_principal ON acpio_sessions (principal, updated_at)
"""
# Forward migrations: MIGRATIONS[n] turns a version n-1 database into version n.
MIGRATIONS: Final[dict[int, str]] = {1: _SCHEMA_1, 2: _SCHEMA_2}


def redact(conninfo: str) -> str:
    """``conninfo`` without its password, for messages and logs."""
    if "://" not in conninfo:
        return conninfo
    parts = urllib.parse.urlsplit(conninfo)
    if parts.password is None:
        return conninfo
    netloc = parts.netloc.replace(":" + parts.password + "@", ":***@", 1)
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def _node() -> str:
    """What makes process ids comparable: the boot and the pid namespace (Linux); ``""``
    elsewhere (then only leases tell a gone owner)."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as boot:
            boot_id = boot.read().strip()
        return f"{boot_id}.{os.stat('/proc/self/ns/pid').st_ino}"
    except OSError:
        return ""


def _owner_id() -> str:
    pid, start = current_owner()
    return f"{socket.gethostname()}/{_node()}/{pid}/{start}/{secrets.token_hex(8)}"


def _owner_gone(owner: str) -> bool:
    """Whether ``owner`` is a process of this machine (and pid namespace) that is gone."""
    parts = owner.rsplit("/", 4)
    if len(parts) != 5 or not parts[1] or parts[1] != _node():
        return False
    try:
        pid = int(parts[2])
    except ValueError:
        return False
    return not owner_alive(pid, parts[3])


def _owner_name(owner: str) -> str:
    """An owner id as people read it: host and pid."""
    parts = owner.rsplit("/", 4)
    return f"pid {parts[2]} on {parts[0]}" if len(parts) == 5 else owner


class _Busy(NamedTuple):
    """A live owner serves the session: who, and its lease's remaining seconds."""

    owner: str
    remaining: float


class PostgresSessionStore(WriterStore["psycopg.Connection[Any]"]):
    """Sessions in PostgreSQL, shared by any number of agent processes (replicas).

    Keeps what :class:`~acpio.store.SqliteSessionStore` keeps (id, working
    directory, additional directories, title, timestamps, durable state and the
    folded history within ``limits``), with the same replay and crash-loss bound
    (``flush_interval``). One live owner per session: a session served by
    another store is refused in :meth:`get` (``-32603``) until its owner
    releases it, its lease of ``lease`` seconds runs out, or (same machine) its
    process is gone; a fencing token keeps an old owner from writing after a
    takeover. :meth:`list` shows every session of every replica.

    ``conninfo`` is a libpq connection string or ``postgresql://`` URL. Retention:
    none older than ``max_age`` and, when given, at most ``max_sessions``
    (sessions under a live lease are kept). Needs the ``postgres`` extra
    (``pip install 'acpio[postgres]'``).

    :raises SessionStoreError: when psycopg is missing, the database cannot be
        reached or is not an acpio store, or it was migrated by a newer acpio.
    """

    _log = logger

    def __init__(
        self,
        conninfo: str,
        *,
        limits: HistoryLimits | None = None,
        max_sessions: int | None = None,
        max_age: datetime.timedelta = datetime.timedelta(days=30),
        flush_interval: float = 1.0,
        lease: float = 15.0,
        busy_timeout: float = 5.0,
    ) -> None:
        if lease <= 0 or flush_interval <= 0:
            raise ValueError("lease and flush_interval must be positive")
        self.conninfo = conninfo
        self.limits: HistoryLimits = limits or HistoryLimits()
        self.max_sessions = max_sessions
        self.max_age = max_age
        self.flush_interval = flush_interval
        self.lease = lease
        self.busy_timeout = busy_timeout
        #: This store's owner id, written on every session it serves.
        self.owner: str = _owner_id()
        self._start_queues(redact(conninfo))
        self._fences: dict[StoredHistory, int] = {}  # the fence each served history holds
        # Histories of sessions taken over from this store (writer thread): why.
        self._lost: dict[object, str] = {}
        self._conn: psycopg.Connection[Any] | None = None
        self._conn = self._connect()
        writer_conn: psycopg.Connection[Any] | None = None
        try:
            self._migrate(self._conn)
            self._retain(self._conn)
            # Connected now, not at the first flush: that one comes with a session's
            # first turn, which must not share the CPU with a connection handshake.
            writer_conn = self._connect()
        except BaseException as exc:
            self._conn.close()
            if writer_conn is not None:
                writer_conn.close()
            if isinstance(exc, SessionStoreError):
                raise
            raise SessionStoreError(
                f"cannot prepare the session store {self._where}: {exc}"
            ) from exc
        self._writer = threading.Thread(
            target=self._write_loop,
            args=(writer_conn,),
            name="acpio-store:postgres",
            daemon=True,
        )
        self._writer.start()

    # ---------------------------------------------------------------- opening

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            import psycopg  # noqa: PLC0415 - the postgres extra, loaded when used
        except ImportError as exc:
            raise SessionStoreError(
                "the PostgreSQL session store needs psycopg: pip install 'acpio[postgres]'"
            ) from exc
        try:
            conn = psycopg.connect(self.conninfo, autocommit=True, connect_timeout=10)
            # A takeover waits at most this long for a flush in progress; a stuck
            # transaction (a paused owner) is ended by the server after a lease.
            conn.execute(
                "SELECT set_config('lock_timeout', %s, false), "
                "set_config('idle_in_transaction_session_timeout', %s, false)",
                (str(int(self.busy_timeout * 1000)), str(max(1000, int(self.lease * 1000)))),
            )
        except psycopg.Error as exc:
            raise SessionStoreError(
                f"cannot connect to the session store {self._where}: {exc}"
            ) from exc
        return conn

    def _request_conn(self) -> psycopg.Connection[Any]:
        """The request connection (under ``_lock``), connected again if it was lost."""
        conn = self._conn
        if conn is None or conn.closed or conn.broken:
            if conn is not None:
                conn.close()
            self._conn = conn = self._connect()
        return conn

    def _migrate(self, conn: psycopg.Connection[Any]) -> None:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            row = conn.execute("SELECT to_regclass('acpio_schema') IS NOT NULL").fetchone()
            version = 0
            if row is not None and row[0]:
                found = conn.execute("SELECT max(version) FROM acpio_schema").fetchone()
                version = int(found[0]) if found is not None and found[0] is not None else 0
            elif conn.execute("SELECT to_regclass('acpio_sessions') IS NOT NULL").fetchone() == (
                True,
            ):
                raise SessionStoreError(
                    f"{self._where} has an acpio_sessions table but no acpio_schema: "
                    "not an acpio session store"
                )
            if version > SCHEMA_VERSION:
                raise SessionStoreError(
                    f"the session store {self._where} has schema version {version}, newer "
                    f"than this acpio's {SCHEMA_VERSION}; it was migrated by a newer acpio "
                    "and is left untouched"
                )
            for target in range(version + 1, SCHEMA_VERSION + 1):
                for statement in MIGRATIONS[target].split(";"):
                    if statement.strip():
                        conn.execute(statement.encode())
                conn.execute("UPDATE acpio_schema SET version = %s", (target,))

    def _retain(self, conn: psycopg.Connection[Any]) -> None:
        """Delete sessions older than ``max_age`` or beyond ``max_sessions`` (not leased)."""
        cutoff = (datetime.datetime.now(datetime.UTC) - self.max_age).isoformat(timespec="seconds")
        with conn.transaction():
            conn.execute(
                "DELETE FROM acpio_sessions WHERE updated_at < %s "
                "AND (lease_until IS NULL OR lease_until < now())",
                (cutoff,),
            )
            if self.max_sessions is not None:
                conn.execute(
                    "DELETE FROM acpio_sessions WHERE id IN (SELECT id FROM acpio_sessions "
                    "ORDER BY updated_at DESC OFFSET %s) "
                    "AND (lease_until IS NULL OR lease_until < now())",
                    (self.max_sessions,),
                )

    # --------------------------------------------------------- the store API

    def _adopt(self, history: StoredHistory) -> None:
        self._fences[history] = 1

    async def get(self, session_id: str, *, principal: str | None = None) -> SessionRecord | None:
        """The session with its history, now served by this store; ``None`` if unknown
        (or, given a ``principal``, another principal's: then nothing is taken over, and
        nothing says whether another replica serves it).

        Takes the session over when nobody serves it, its owner's lease ran out, or
        its owner is a gone process of this machine (the fence is incremented, so the
        old owner can write nothing more).

        :raises RequestError: ``-32603`` when another live owner serves it.
        :raises SessionStoreError: when the database cannot be reached, or the writer
            failed since the last store call.
        """
        self._check()
        record = self._served.get(session_id)
        if record is not None:
            if not visible(record, principal):
                return None
            if record.history not in self._lost:
                return record
            # Taken over from this store: forget it here, load what its new owner keeps.
            del self._served[session_id]
            self._lost.pop(record.history, None)
        loaded = await anyio.to_thread.run_sync(self._load, session_id, principal)
        record = self._served.get(session_id)  # another connection won the race
        if record is not None or loaded is None:
            return self._served_to(session_id, principal)
        if isinstance(loaded, _Busy):
            owner, remaining = loaded
            raise RequestError.internal_error(
                f"Session {session_id} is open in another agent process ({_owner_name(owner)}); "
                f"close it there first, or retry once its lease runs out (in {remaining:.0f} s)",
                {"sessionId": session_id, "owner": owner, "retryAfter": remaining},
            )
        record, fence = loaded
        assert isinstance(record.history, StoredHistory)
        self._fences[record.history] = fence
        record.history.attach()
        self._served[session_id] = record
        return record

    async def list(self, *, principal: str | None = None) -> _List[SessionRecord]:
        """Every session of every replica and every session this store serves (given a
        ``principal``, only that principal's), most recently updated first (their
        histories are not loaded).

        :raises SessionStoreError: when the database cannot be reached, or the writer
            failed since the last store call.
        """
        self._check()
        rows = await anyio.to_thread.run_sync(self._list_rows, principal)
        return self._merge(rows, principal)

    async def delete(self, session_id: str, *, principal: str | None = None) -> bool:
        """Delete a session and its history; False if unknown (or, given a ``principal``,
        another principal's: then it is kept).

        :raises RequestError: ``-32603`` when another live owner serves it.
        :raises SessionStoreError: when the database cannot be reached, or the writer
            failed since the last store call.
        """
        self._check()
        if session_id in self._served and self._served_to(session_id, principal) is None:
            return False
        record = self._served.pop(session_id, None)
        if record is not None and isinstance(record.history, StoredHistory):
            record.history.detach()
            record.history.dropped = True
            self._fences.pop(record.history, None)
        result = await anyio.to_thread.run_sync(self._delete_row, session_id, principal)
        if isinstance(result, str):
            raise RequestError.internal_error(
                f"Session {session_id} is open in another agent process "
                f"({_owner_name(result)}); close it there first",
                {"sessionId": session_id, "owner": result},
            )
        return result or record is not None

    async def release(self, record: SessionRecord) -> None:
        """Write what the session recorded (a snapshot) and give it up; returns once committed.

        :raises SessionStoreError: when the session was taken over by another store
            (nothing it recorded since was written), or the writer failed (this
            session's data stays queued and is retried).
        """
        lost = self._lost.pop(record.history, None)
        if lost is not None:
            if self._served.get(record.session_id) is record:
                del self._served[record.session_id]
            raise SessionStoreError(lost)
        if self._served.get(record.session_id) is not record:
            return
        del self._served[record.session_id]
        history = record.history
        if isinstance(record, StoredRecord):
            self._give_up(record)
        await anyio.to_thread.run_sync(self._sync)
        self._check()
        lost = self._lost.pop(history, None)
        if lost is not None:
            raise SessionStoreError(lost)

    def _refuse_lost(self, record: SessionRecord) -> None:
        lost = self._lost.get(record.history)
        if lost is not None:
            raise SessionStoreError(lost)

    def _close_connections(self) -> None:
        if self._conn is not None:
            self._conn.close()

    # ---------------------------------------------- off-loop (worker threads)

    def _db_error(self, exc: BaseException) -> SessionStoreError:
        return SessionStoreError(f"the session store {self._where} failed: {exc}")

    def _load(
        self, session_id: str, principal: str | None
    ) -> tuple[StoredRecord, int] | _Busy | None:
        """Take a session over (unless a live owner holds it) and fold its history; the
        owner and its lease's remaining seconds when a live owner serves it; ``None``
        when it is unknown or not ``principal``'s."""
        import psycopg  # noqa: PLC0415

        self._sync()  # what this store recorded and released is in the database
        try:
            with self._lock:
                conn = self._request_conn()
                with conn.transaction():
                    row = conn.execute(
                        "SELECT cwd, additional_directories, title, updated_at, owner, fence, "
                        "coalesce(extract(epoch FROM lease_until - now()), 0), principal "
                        "FROM acpio_sessions WHERE id = %s FOR UPDATE",
                        (session_id,),
                    ).fetchone()
                    if row is None or (principal is not None and row[7] != principal):
                        return None
                    owner: str | None = row[4]
                    remaining = float(row[6])
                    if (
                        owner is not None
                        and owner != self.owner
                        and remaining > 0
                        and not _owner_gone(owner)
                    ):
                        return _Busy(owner, remaining)
                    # Already this store's (two reopens at once): the fence stays, so the
                    # record that wins the race writes with the fence the row holds.
                    fence = int(row[5]) + (owner != self.owner)
                    conn.execute(
                        "UPDATE acpio_sessions SET owner = %s, fence = %s, "
                        "lease_until = now() + %s * interval '1 second' WHERE id = %s",
                        (self.owner, fence, self.lease, session_id),
                    )
                    snapshot = conn.execute(
                        "SELECT data FROM acpio_snapshots WHERE session_id = %s", (session_id,)
                    ).fetchone()
                    events = conn.execute(
                        "SELECT seq, data FROM acpio_events WHERE session_id = %s ORDER BY seq",
                        (session_id,),
                    ).fetchall()
                    state = conn.execute(
                        "SELECT state, version, config_values FROM acpio_agent_states "
                        "WHERE session_id = %s",
                        (session_id,),
                    ).fetchone()
        except psycopg.Error as exc:
            raise self._db_error(exc) from exc
        record = StoredRecord(
            session_id,
            row[0],
            dirs_decode(row[1]),
            Unloaded(),
            title=row[2],
            updated_at=row[3],
            principal=row[7],
        )
        history = self._new_history(record)
        try:
            key = ["", ""]
            if snapshot is not None:
                history.snapshot_bytes = history.fold_blob(bytes(snapshot[0]), key)
            for seq, data in events:
                history.log_bytes += history.fold_blob(bytes(data), key)
                history.seq = int(seq)
            if state is not None:
                blob = bytes(state[0]) if state[0] is not None else None
                record.agent_state = blob
                record.agent_state_version = int(state[1])
                record.config_values = config_decode(state[2])
                record.state_row = (blob, int(state[1]), state[2])
        except (zlib.error, msgspec.DecodeError, msgspec.ValidationError, ValueError) as exc:
            logger.exception("session %s in %s cannot be read", session_id, self._where)
            raise RequestError.internal_error(
                f"Session {session_id}'s stored history cannot be read ({exc})",
                {"sessionId": session_id},
            ) from None
        return record, fence

    def _list_rows(self, principal: str | None) -> _List[ListedRow]:
        import psycopg  # noqa: PLC0415

        columns = "SELECT id, cwd, additional_directories, title, updated_at, principal "
        try:
            with self._lock:
                conn = self._request_conn()
                if principal is None:
                    return conn.execute(
                        columns + "FROM acpio_sessions ORDER BY updated_at DESC, id"
                    ).fetchall()
                return conn.execute(
                    columns + "FROM acpio_sessions WHERE principal = %s "
                    "ORDER BY updated_at DESC, id",
                    (principal,),
                ).fetchall()
        except psycopg.Error as exc:
            raise self._db_error(exc) from exc

    def _delete_row(self, session_id: str, principal: str | None) -> bool | str:
        import psycopg  # noqa: PLC0415

        self._sync()
        try:
            with self._lock:
                conn = self._request_conn()
                with conn.transaction():
                    row = conn.execute(
                        "SELECT owner, coalesce(lease_until > now(), false), principal "
                        "FROM acpio_sessions WHERE id = %s FOR UPDATE",
                        (session_id,),
                    ).fetchone()
                    if row is None or (principal is not None and row[2] != principal):
                        return False
                    owner: str | None = row[0]
                    if (
                        owner is not None
                        and owner != self.owner
                        and row[1]
                        and not _owner_gone(owner)
                    ):
                        return owner
                    conn.execute("DELETE FROM acpio_sessions WHERE id = %s", (session_id,))
        except psycopg.Error as exc:
            raise self._db_error(exc) from exc
        return True

    # ------------------------------------------------------------ the writer

    def _write_loop(self, conn: psycopg.Connection[Any] | None) -> None:
        renew_every = self.lease / 3
        renewed = flushed = time.monotonic()
        while True:
            # Up at every wake-up, every flush interval (every STREAM_POLL seconds while
            # text streams fast), and every third of a lease: the leases are renewed
            # however long the flush interval is.
            interval = self._pace.interval(self.flush_interval)
            woken = self._wake.wait(min(interval, renew_every))
            self._wake.clear()
            stopping = self._stopping
            now = time.monotonic()
            ok = True
            try:
                if conn is None or conn.closed or conn.broken:
                    if conn is not None:
                        conn.close()
                    conn = None
                    conn = self._connect()
                if woken or stopping or now - flushed >= interval:
                    flushed = now
                    ok = self._flush(conn)
                if ok and now - renewed >= renew_every:
                    renewed = now
                    conn.execute(
                        "UPDATE acpio_sessions SET lease_until = now() + %s * interval '1 second' "
                        "WHERE owner = %s",
                        (self.lease, self.owner),
                    )
            except Exception as exc:  # the writer outlives any failure
                self._fail(exc)
                release_barriers(self._queue)
                ok = False
            # Stopping: done once all is written, or when the database cannot be written.
            if stopping and (not ok or self._all_written()):
                break
        if conn is not None:
            conn.close()

    def _commit(
        self, conn: psycopg.Connection[Any], items: _List[object], drained: Drained
    ) -> None:
        with conn.transaction():
            self._write(conn, items, drained)

    def _busy(self, exc: Exception) -> bool:
        import psycopg  # noqa: PLC0415

        return isinstance(exc, psycopg.errors.DeadlockDetected | psycopg.errors.LockNotAvailable)

    def _retryable(self, exc: Exception, conn: psycopg.Connection[Any]) -> bool:
        import psycopg  # noqa: PLC0415

        if not isinstance(exc, psycopg.Error):
            return False
        # Connection lost, server restarting: retried on a new connection.
        if not conn.closed:
            with contextlib.suppress(psycopg.Error):
                conn.close()
        return True

    def _retain_errors(self) -> tuple[type[Exception], ...]:
        import psycopg  # noqa: PLC0415

        return (psycopg.Error,)

    def _write(self, conn: psycopg.Connection[Any], items: _List[object], drained: Drained) -> None:
        creates = [item for item in items if isinstance(item, Create)]
        if creates:
            self._creates += len(creates)
            owner, lease = self.owner, self.lease
            with conn.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO acpio_sessions (id, cwd, additional_directories, created_at, "
                    "updated_at, owner, fence, lease_until, principal) VALUES (%s, %s, %s, %s, "
                    "%s, %s, 1, now() + %s * interval '1 second', %s) "
                    "ON CONFLICT (id) DO NOTHING",
                    [
                        (
                            c.session_id,
                            c.cwd,
                            c.directories,
                            c.updated_at,
                            c.updated_at,
                            owner,
                            lease,
                            c.principal,
                        )
                        for c in creates
                    ],
                )
        ids = sorted({h.session_id for h, _, _ in drained if not h.dropped})
        if ids:
            # Locked until the commit: a takeover waits for this flush, and this flush
            # writes only the sessions this store still owns at this fence.
            held = {
                session_id: (owner, fence)
                for session_id, owner, fence in conn.execute(
                    "SELECT id, owner, fence FROM acpio_sessions WHERE id = ANY(%s) "
                    "ORDER BY id FOR SHARE",
                    (ids,),
                ).fetchall()
            }
            kept: Drained = []
            for entry in drained:
                history = entry[0]
                mine = (self.owner, self._fences.get(history))
                if history.dropped or held.get(history.session_id) == mine:
                    kept.append(entry)
                else:
                    self._lose(history, held.get(history.session_id))
            drained = kept
        pipeline = conn.pipeline() if drained else contextlib.nullcontext()
        with pipeline:
            write_batches(
                drained,
                self._histories,
                events=lambda history, events: self._write_events(conn, history, events),
                snapshot=lambda snapshot: self._write_snapshot(conn, snapshot),
                op=lambda history, item: self._write_op(conn, history, item),
            )

    def _lose(self, history: StoredHistory, held: tuple[str | None, int] | None) -> None:
        """The session was taken over (or deleted) by another store: write nothing more
        of it here, say so on stderr, and refuse its ``save_state`` and ``release``."""
        session_id = history.session_id
        history.detach()
        history.pending.clear()
        self._histories.discard(history)
        self._fences.pop(history, None)
        if held is None:
            why = "was deleted by another agent process"
        elif held[0] is None:
            why = "was taken over by another agent process (and released since)"
        else:
            why = f"was taken over by another agent process ({_owner_name(held[0])})"
        message = (
            f"Session {session_id} {why} (fence {held[1] if held else '-'}); what this process "
            "recorded for it since its last write is not stored, and it no longer serves it"
        )
        self._lost[history] = message
        logger.error("%s", message)
        print(f"acpio warning: {message}", file=sys.stderr, flush=True)

    def _write_snapshot(self, conn: psycopg.Connection[Any], snapshot: Snapshot) -> None:
        blob = pack(snapshot.updates)
        conn.execute(
            "INSERT INTO acpio_snapshots VALUES (%s, %s) "
            "ON CONFLICT (session_id) DO UPDATE SET data = EXCLUDED.data",
            (snapshot.session_id, zlib.compress(blob, 1)),
        )
        conn.execute("DELETE FROM acpio_events WHERE session_id = %s", (snapshot.session_id,))
        snapshot.history.snapshot_bytes = len(blob)

    def _write_op(
        self, conn: psycopg.Connection[Any], history: StoredHistory, item: object
    ) -> None:
        if isinstance(item, Meta):
            conn.execute(
                "UPDATE acpio_sessions SET additional_directories = %s, title = %s, "
                "updated_at = %s WHERE id = %s",
                (item.directories, item.title, item.updated_at, item.session_id),
            )
        elif isinstance(item, SaveState):
            record = item.record
            record.state_queued = False  # before the row is read: a newer save queues again
            row = record.state_row
            if row is not None:
                conn.execute(
                    "INSERT INTO acpio_agent_states VALUES (%s, %s, %s, %s) "
                    "ON CONFLICT (session_id) DO UPDATE SET version = EXCLUDED.version, "
                    "state = EXCLUDED.state, config_values = EXCLUDED.config_values",
                    (record.session_id, row[1], row[0], row[2]),
                )
        elif isinstance(item, Release):
            conn.execute(
                "UPDATE acpio_sessions SET owner = NULL, lease_until = NULL "
                "WHERE id = %s AND owner = %s",
                (item.session_id, self.owner),
            )
            self._histories.discard(history)
            self._fences.pop(history, None)

    def _write_events(
        self, conn: psycopg.Connection[Any], history: StoredHistory, events: _List[object]
    ) -> None:
        blob = history.row(events)
        if blob is None:
            return
        conn.execute(
            "INSERT INTO acpio_events VALUES (%s, %s, %s) "
            "ON CONFLICT (session_id, seq) DO UPDATE SET data = EXCLUDED.data",
            (history.session_id, history.seq, blob),
        )
