"""What the durable session stores share around their writer thread.

:class:`WriterStore` is the record-level half of :class:`~acpio.store.SqliteSessionStore`
and :class:`~acpio.store.PostgresSessionStore`: creating a served session,
queueing its durable state, flushing, giving sessions up on close, the
barrier a caller waits on, and how a failed write is reported (once on
stderr) and raised (by the next store call). Each store keeps what is its
own (its connection, its schema, its rows, who owns a session) behind small
hooks: whether it writes at all (a read-only SQLite file does not), whether
a session was taken from it (PostgreSQL fencing), how a transaction is
committed and which failures are worth a retry.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections import deque
from typing import ClassVar, Generic, Self, TypeVar

import anyio.to_thread

from .._errors import SessionStoreError
from .._limits import HistoryLimits
from .history import SessionRecord, visible
from .store_paths import current_owner
from .stored_history import (
    Barrier,
    Create,
    Drained,
    Release,
    SaveState,
    StoredHistory,
    StoredRecord,
    StreamPace,
    Unloaded,
    dirs_decode,
    drain,
    json_encode,
    mark_written,
    put_back,
)

__all__ = ["RETAIN_EVERY", "ListedRow", "WriterStore"]

_List = list  # the store has a method named list

RETAIN_EVERY = 100
"""New sessions between two retention passes of the writer."""

C = TypeVar("C")  # the store's connection

#: A listed session: id, cwd, additional directories (JSON), title, updated at, principal.
ListedRow = tuple[str, str, str, str | None, str, str | None]


class WriterStore(Generic[C]):
    """A session store whose writer thread drains the sessions' queues into a database.

    Keeps the writer's invariants for both durable stores: recording never waits
    (the loop only queues), ``flush`` and ``release`` return once what was queued
    before them is committed, nothing accepted is dropped (a write the database
    refuses stays queued and is retried), and every write failure is reported on
    stderr once and raised as :class:`SessionStoreError` by the next store call.
    """

    #: The subclass module's logger (what it logs keeps its module's name).
    _log: ClassVar[logging.Logger]
    limits: HistoryLimits
    flush_interval: float
    busy_timeout: float
    _writer: threading.Thread

    def _start_queues(self, where: str) -> None:
        """Set up the queues the loop fills and the writer drains; ``where`` names the
        store in messages and logs."""
        self._where = where
        self._queue: deque[object] = deque()
        self._wake = threading.Event()
        self._pace = StreamPace(self._wake)
        self._stopping = False
        self._served: dict[str, StoredRecord] = {}
        self._histories: set[StoredHistory] = set()  # with items for the writer
        self._lock = threading.Lock()  # the request connection is used by one thread at a time
        self._creates = 0
        self._error: BaseException | None = None  # the writer's last failure, not yet raised
        self._reported = False  # the current failure was reported on stderr

    # ------------------------------------------------------------------ hooks

    def _writable(self) -> bool:
        """Whether this store writes at all (else it serves from memory only)."""
        return True

    def _adopt(self, history: StoredHistory) -> None:
        """A new session's history is served here (called before it is queued)."""

    def _refuse_lost(self, record: SessionRecord) -> None:
        """Raise when ``record``'s session was taken from this store."""

    def _close_connections(self) -> None:
        """Close the store's own connections (under ``_lock``, the writer stopped)."""
        raise NotImplementedError

    def _commit(self, conn: C, items: _List[object], drained: Drained) -> None:
        """Write ``items`` and ``drained`` in one transaction, rolled back on failure."""
        raise NotImplementedError

    def _busy(self, exc: Exception) -> bool:
        """Whether ``exc`` means another writer held a lock too long (retried, not reported)."""
        raise NotImplementedError

    def _retryable(self, exc: Exception, conn: C) -> bool:
        """Whether ``exc`` is the database refusing the write now (kept queued and
        retried) rather than a failure no retry mends; may drop ``conn`` (the writer
        connects again)."""
        raise NotImplementedError

    def _retain(self, conn: C) -> None:
        """Delete the sessions retention drops."""
        raise NotImplementedError

    def _retain_errors(self) -> tuple[type[Exception], ...]:
        """The database errors a failed retention pass raises (logged, not reported)."""
        raise NotImplementedError

    # ------------------------------------------------------------- sessions

    def _new_history(self, record: StoredRecord) -> StoredHistory:
        history = StoredHistory(
            self.limits,
            record,
            histories=self._histories,
            wake=self._wake,
            stream_started=self._pace.started,
        )
        record.history = history
        return history

    async def create(
        self,
        session_id: str,
        cwd: str,
        additional_directories: _List[str],
        *,
        principal: str | None = None,
    ) -> SessionRecord:
        """Create a session served by this store, owned by ``principal`` (written at the
        next flush).

        :raises SessionStoreError: when the writer failed since the last store call.
        """
        self._check()
        record = StoredRecord(
            session_id, cwd, list(additional_directories), Unloaded(), principal=principal
        )
        history = self._new_history(record)
        self._served[session_id] = record
        self._adopt(history)
        if not self._writable():
            return record  # kept in memory only
        self._queue.append(
            Create(
                session_id,
                cwd,
                json_encode(record.additional_directories).decode(),
                record.updated_at,
                current_owner(),
                principal=principal,
            )
        )
        history.attach()
        self._wake.set()
        return record

    def _served_to(self, session_id: str, principal: str | None) -> StoredRecord | None:
        """The record served here, if ``principal`` may see it."""
        record = self._served.get(session_id)
        return record if record is not None and visible(record, principal) else None

    def _merge(self, rows: _List[ListedRow], principal: str | None) -> _List[SessionRecord]:
        """The listed rows (``principal``'s only, when given) and the sessions served
        here that ``principal`` may see, most recently updated first."""
        records: _List[SessionRecord] = []
        # Served here but maybe not committed yet (the writer commits a new session later).
        unseen = {k: r for k, r in self._served.items() if visible(r, principal)}
        for session_id, cwd, directories, title, updated_at, owner in rows:
            served = unseen.pop(session_id, None)
            if served is not None:
                records.append(served)
            else:
                records.append(
                    SessionRecord(
                        session_id,
                        cwd,
                        dirs_decode(directories),
                        Unloaded(),
                        title=title,
                        updated_at=updated_at,
                        principal=owner,
                    )
                )
        records.extend(unseen.values())
        records.sort(key=lambda r: r.updated_at, reverse=True)
        return records

    def _give_up(self, record: StoredRecord) -> None:
        """Queue the session's snapshot, its metadata and its release; stop recording it."""
        history = record.history
        if isinstance(history, StoredHistory):
            history.snapshot()
            history.put_op(record.meta())
            history.put_op(Release(record.session_id))
            history.detach()

    async def save_state(self, record: SessionRecord) -> None:
        """Queue the session's durable state (agent state, its version, config values).

        Never waits: the writer commits the newest state of each session at its next
        flush (at the latest by the end of the turn, which wakes it; a config
        change wakes it at once), replacing the one kept before. A store that
        cannot write keeps the state in the record (memory) only.

        :raises SessionStoreError: when the session was taken over by another store.
        """
        self._refuse_lost(record)
        if (
            not self._writable()
            or not isinstance(record, StoredRecord)
            or self._served.get(record.session_id) is not record
        ):
            return
        history = record.history
        if not isinstance(history, StoredHistory):
            return
        previous = record.state_row
        config = json_encode(record.config_values).decode()
        record.state_row = (record.agent_state, record.agent_state_version, config)
        if not record.state_queued:
            record.state_queued = True
            history.put_op(SaveState(record))
        if previous is None or previous[2] != config:
            self._wake.set()  # a picker change outside a turn: no turn end will flush it

    async def flush(self) -> None:
        """Write everything recorded so far; returns once committed.

        :raises SessionStoreError: when the writer failed (what failed stays queued).
        """
        for record in self._served.values():
            if isinstance(record.history, StoredHistory):
                record.history.catch_up()  # what a history behind kept out of the queue
        await anyio.to_thread.run_sync(self._sync)
        self._check()

    def close(self) -> None:
        """Write everything recorded, give up this store's sessions and close its
        connections.

        Blocks until the writer is done (call it when serving is over).
        """
        if self._stopping:
            return
        for record in list(self._served.values()):
            self._give_up(record)
        self._served.clear()
        self._stopping = True
        self._wake.set()
        if self._writer.is_alive():
            self._writer.join(self.busy_timeout * 2 + self.flush_interval)
        with self._lock:
            self._close_connections()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ---------------------------------------------- off-loop (worker threads)

    def _sync(self) -> None:
        if not self._writer.is_alive():
            return  # no writer (a read-only store), or closed
        barrier = Barrier(threading.Event())
        self._queue.append(barrier)
        self._wake.set()
        if not barrier.done.wait(self.busy_timeout * 2 + self.flush_interval):
            self._log.warning("the session store %s did not flush in time", self._where)

    # ------------------------------------------------------------ the writer

    def _all_written(self) -> bool:
        return not self._queue and not any(h.pending for h in self._histories)

    def _flush(self, conn: C) -> bool:
        """Write what is queued in one transaction; False when the write failed."""
        items, drained = drain(self._queue, self._histories, self._pace)
        if not items and not drained:
            return True
        written = False
        failed = False
        try:
            self._commit(conn, items, drained)
            written = True
        except Exception as exc:
            if self._busy(exc):
                # Another writer held the lock past the busy timeout: try again later.
                self._log.warning("session store %s busy; retrying: %s", self._where, exc)
                put_back(self._queue, items, drained)
                return True
            failed = True
            self._fail(exc)
            if self._retryable(exc, conn):
                # The database cannot be written now (disk full, connection lost):
                # kept queued, retried.
                put_back(
                    self._queue, [item for item in items if not isinstance(item, Barrier)], drained
                )
            else:
                # Not the database: a failure no retry mends. This batch is lost, and reported.
                written = True
        if written:
            mark_written(drained)
        if not failed:
            self._reported = False  # a later failure is reported again
        for item in items:
            if isinstance(item, Barrier):  # the next store call raises what failed
                item.done.set()
        if not failed and self._creates >= RETAIN_EVERY:
            self._creates = 0
            try:
                self._retain(conn)
            except self._retain_errors() as exc:
                self._log.warning("session store %s retention failed: %s", self._where, exc)
        return not failed

    def _fail(self, exc: BaseException) -> None:
        """A write failed: on stderr (once until a write succeeds), and raised by the next
        store call."""
        self._error = exc
        if self._reported:
            return
        self._reported = True
        self._log.error("cannot write the session store %s", self._where, exc_info=exc)
        print(
            f"acpio warning: cannot write the session store {self._where} "
            f"({type(exc).__name__}: {exc}); what is not written stays queued and is "
            "retried, and the next session request reports the failure",
            file=sys.stderr,
            flush=True,
        )

    def _check(self) -> None:
        """Raise the writer's failure not yet reported to a client (once)."""
        exc = self._error
        if exc is not None:
            self._error = None
            raise SessionStoreError(
                f"the session store {self._where} could not be written "
                f"({type(exc).__name__}: {exc})"
            ) from exc
