"""Sessions belong to the principal that created it, in every store.

Given a principal, a store lists, reopens and deletes only that principal's
sessions, and answers for another's exactly as for a session that does not
exist; without one (stdio) it sees every session. The SQLite file and the
PostgreSQL database of an older schema are migrated (their sessions belong to
nobody in particular). The PostgreSQL store is a real server, two stores on it
two replicas.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import psycopg
import pytest

from acpio._store import sqlite_store
from acpio._store.postgres_store import MIGRATIONS as PG_MIGRATIONS
from acpio._store.principal_store import PrincipalStore
from acpio._store.sqlite_store import MIGRATIONS as SQLITE_MIGRATIONS
from acpio._store.sqlite_store import SCHEMA_VERSION
from acpio.store import (
    InMemorySessionStore,
    PostgresSessionStore,
    SessionStore,
    SqliteSessionStore,
)

pytestmark = pytest.mark.anyio

StoreFactory = Callable[[], SessionStore]


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def stores(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[StoreFactory]:
    """Makes stores sharing one place (a second one is another process's, a replica)."""
    made: list[SessionStore] = []
    memory = InMemorySessionStore()

    def make() -> SessionStore:
        store: SessionStore
        if request.param == "memory":
            store = memory
        elif request.param == "sqlite":
            store = SqliteSessionStore(tmp_path / "sessions.sqlite3", flush_interval=0.05)
        else:
            url: str = request.getfixturevalue("postgres_url")
            store = PostgresSessionStore(url, flush_interval=0.05, lease=30)
        made.append(store)
        return store

    yield make
    for store in made:
        close = getattr(store, "close", None)
        if callable(close):
            close()


async def test_a_principal_sees_only_its_own_sessions(stores: StoreFactory) -> None:
    store = stores()
    alice = await store.create("sess_a", "/work", [], principal="alice")
    await store.create("sess_b", "/work", [], principal="bob")
    await store.create("sess_n", "/work", [])
    assert alice.principal == "alice"

    assert [r.session_id for r in await store.list(principal="alice")] == ["sess_a"]
    assert [r.session_id for r in await store.list(principal="bob")] == ["sess_b"]
    assert {r.session_id for r in await store.list()} == {"sess_a", "sess_b", "sess_n"}
    # Another principal's session is an unknown one: not given, not deleted.
    assert await store.get("sess_a", principal="bob") is None
    assert await store.get("sess_n", principal="bob") is None
    assert await store.delete("sess_a", principal="bob") is False
    assert await store.get("sess_a", principal="alice") is alice
    assert await store.get("sess_a") is alice  # no principal (stdio): every session


async def test_ownership_survives_a_release_and_another_replica(stores: StoreFactory) -> None:
    first = stores()
    record = await first.create("sess_a", "/work", ["/extra"], principal="alice")
    await first.create("sess_b", "/work", [], principal="bob")
    await first.release(record)
    other = stores()  # another process on the same file or database (the same, in memory)
    # bob learns nothing: not listed, not given, and alice's session is not taken over.
    assert [r.session_id for r in await other.list(principal="bob")] == ["sess_b"]
    assert await other.get("sess_a", principal="bob") is None
    assert await other.delete("sess_a", principal="bob") is False
    listed = await other.list(principal="alice")
    assert [(r.session_id, r.principal) for r in listed] == [("sess_a", "alice")]
    reopened = await other.get("sess_a", principal="alice")
    assert reopened is not None
    assert (reopened.principal, reopened.additional_directories) == ("alice", ["/extra"])
    assert await other.delete("sess_a", principal="alice") is True
    assert await other.get("sess_a") is None


async def test_another_principals_session_served_elsewhere_looks_unknown(
    postgres_url: str,
) -> None:
    """A replica serving alice's session: bob on another replica gets `None`, not "served
    elsewhere" (which would say that it exists), and alice's lease is untouched."""
    one = PostgresSessionStore(postgres_url, flush_interval=0.05, lease=30)
    two = PostgresSessionStore(postgres_url, flush_interval=0.05, lease=30)
    try:
        await one.create("sess_a", "/work", [], principal="alice")
        await one.flush()
        assert await two.get("sess_a", principal="bob") is None
        assert await two.delete("sess_a", principal="bob") is False
        with psycopg.connect(postgres_url) as conn:
            row = conn.execute("SELECT owner FROM acpio_sessions WHERE id = 'sess_a'").fetchone()
        assert row is not None and row[0] == one.owner
        with pytest.raises(Exception, match="open in another agent process"):
            await two.get("sess_a", principal="alice")
    finally:
        one.close()
        two.close()


async def test_a_principal_view_creates_and_sees_as_its_principal() -> None:
    shared = InMemorySessionStore()
    alice = PrincipalStore(shared, "alice")
    bob = PrincipalStore(shared, "bob")
    created = await alice.create("sess_a", "/work", [], principal="mallory")
    assert created.principal == "alice"  # the view's principal, whatever is passed
    assert await bob.list() == []
    assert await bob.get("sess_a") is None
    assert await bob.delete("sess_a") is False
    assert [r.session_id for r in await alice.list()] == ["sess_a"]
    assert await alice.get("sess_a") is created


def _version_2_file(path: Path) -> None:
    """A file as acpio with schema version 2 wrote it, with one session in it."""
    with sqlite3.connect(path) as conn:
        for version in (1, 2):
            for statement in SQLITE_MIGRATIONS[version].split(";"):
                if statement.strip():
                    conn.execute(statement)
        conn.execute(
            "INSERT INTO sessions VALUES ('sess_old', '/work', '[]', 'Old', "
            "'2025-01-01T00:00:00+00:00', '2025-01-01T00:00:00+00:00', NULL, NULL)"
        )
        conn.execute("PRAGMA user_version = 2")


async def test_an_older_sqlite_file_is_migrated_and_its_sessions_belong_to_nobody(
    tmp_path: Path,
) -> None:
    path = tmp_path / "sessions.sqlite3"
    _version_2_file(path)
    path.chmod(0o600)
    with SqliteSessionStore(path, max_age=_forever()) as store:
        with sqlite3.connect(path) as conn:
            assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
            columns = [row[1] for row in conn.execute("PRAGMA table_info(sessions)")]
            assert "principal" in columns
        assert [r.session_id for r in await store.list()] == ["sess_old"]
        assert await store.list(principal="alice") == []
        assert await store.get("sess_old", principal="alice") is None
        new = await store.create("sess_new", "/work", [], principal="alice")
        await store.release(new)
    with SqliteSessionStore(path, max_age=_forever()) as store:
        assert [r.session_id for r in await store.list(principal="alice")] == ["sess_new"]
        old = await store.get("sess_old")
        assert old is not None and old.principal is None and old.title == "Old"


async def test_a_read_only_file_of_an_older_schema_lists_its_sessions_as_nobodys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "sessions.sqlite3"
    _version_2_file(path)
    # What the store finds for a file it cannot write (root writes any file, so it is told).
    monkeypatch.setattr(sqlite_store, "_make_private", lambda path: False)
    with SqliteSessionStore(path, max_age=_forever()) as store:
        assert store.read_only
        assert [r.session_id for r in await store.list()] == ["sess_old"]
        assert await store.list(principal="alice") == []
        assert await store.get("sess_old", principal="alice") is None
        assert await store.get("sess_old") is not None


async def test_an_older_postgres_database_is_migrated(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        for statement in PG_MIGRATIONS[1].split(";"):
            if statement.strip():
                conn.execute(statement.encode())
        conn.execute("UPDATE acpio_schema SET version = 1")
        conn.execute(
            "INSERT INTO acpio_sessions (id, cwd, created_at, updated_at) "
            "VALUES ('sess_old', '/work', '2025-01-01', '2025-01-01')"
        )
    store = PostgresSessionStore(postgres_url, max_age=_forever())
    try:
        assert [r.session_id for r in await store.list()] == ["sess_old"]
        assert await store.list(principal="alice") == []
        assert await store.get("sess_old", principal="alice") is None
        record = await store.create("sess_new", "/work", [], principal="alice")
        await store.release(record)
        assert [r.session_id for r in await store.list(principal="alice")] == ["sess_new"]
    finally:
        store.close()


def _forever() -> object:
    import datetime  # noqa: PLC0415

    return datetime.timedelta(days=100000)


async def test_the_in_memory_store_evicts_the_longest_unused_closed_session() -> None:
    store = InMemorySessionStore(max_records=2)
    early = await store.create("early", "/work", [])
    early.active = True
    early.updated_at = "2020-01-01T00:00:00+00:00"  # its last prompt was long ago
    await store.create("idle", "/work", [])
    await store.release(early)  # closed just now: used more recently than "idle"
    await store.create("new", "/work", [])
    kept = {r.session_id for r in await store.list()}
    assert kept == {"early", "new"}


async def test_the_in_memory_store_never_evicts_served_sessions() -> None:
    store = InMemorySessionStore(max_records=3)
    served = []
    for index in range(5):
        record = await store.create(f"served-{index}", "/work", [])
        record.active = True
        served.append(record)
    for index in range(4):
        await store.create(f"closed-{index}", "/work", [])
    kept = {r.session_id for r in await store.list()}
    # Five are served (over the cap, all kept); of the closed ones only the newest stays.
    assert kept == {f"served-{index}" for index in range(5)} | {"closed-3"}
    for record in served[:3]:
        await store.release(record)
    await store.create("last", "/work", [])
    kept = {r.session_id for r in await store.list()}
    assert kept == {"served-3", "served-4", "last"}
