"""The PostgreSQL store's own rules: failover between replicas, leases and fencing,
versioned migrations, retention, and choosing a store from a URL.

A real server (``tests/pg_server.py``), never a mock. The replicas are real agent
processes (``tests/store_agent.py`` and ``tests/state_agent.py`` run with
``acpio.run()``) sharing one database; a replica dies by SIGKILL, or stops
(SIGSTOP) long enough to lose its lease and is then continued (SIGCONT).
"""

from __future__ import annotations

import datetime
import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import msgspec
import psycopg
import pytest
from test_sqlite_store import messages, replay_lines
from test_store_contract import state_agent, store_agent, until

import acpio
from acpio import schema
from acpio._store.postgres_store import SCHEMA_VERSION, redact
from acpio.store import (
    InMemorySessionStore,
    PostgresSessionStore,
    SessionStoreError,
    SqliteSessionStore,
    default_session_store,
    open_session_store,
)
from acpio.testing import MockClient

pytestmark = pytest.mark.anyio


def query(url: str, sql: str, *params: object) -> list[tuple[object, ...]]:
    with psycopg.connect(url) as conn:
        return [tuple(row) for row in conn.execute(sql.encode(), params).fetchall()]


def stored(url: str, session_id: str, part: bytes) -> bool:
    """Whether a committed row of the session holds ``part``."""
    found = query(url, "SELECT data FROM acpio_events WHERE session_id = %s", session_id)
    return any(part in bytes(row[0]) for row in found)  # type: ignore[call-overload]


def env_for(url: str, tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "ACPIO_SESSION_STORE": url,
        "ACPIO_STATE_DIR": os.fspath(tmp_path / "state-dir"),
    }


def replay_of(history: acpio.store.History) -> list[bytes]:
    return [msgspec.json.encode(update) for update in history.replay()]


# ------------------------------------------------------------------ failover


async def test_failover_a_replica_killed_after_a_turn_its_session_goes_on_in_another(
    postgres_url: str, tmp_path: Path, anyio_backend: str
) -> None:
    """Two replicas on one database. A creates a session, runs turns and saves its
    state; A is SIGKILLed; the client reopens the session on B: the replay is every
    update A recorded (all flushed by the turn ends), the state is restored, and the
    conversation goes on there."""
    env = env_for(postgres_url + "?acpio_flush_interval=3600", tmp_path)
    async with MockClient(state_agent(anyio_backend), env=env, cwd=tmp_path) as b:
        async with MockClient(state_agent(anyio_backend), env=env, cwd=tmp_path, strict=False) as a:
            session = await a.new_session()
            await session.prompt("remember apple")
            await session.set_config_option("model", "huge")
            await session.prompt("remember pear")
            (pid,) = messages((await session.prompt("pid")).updates)
            # The turn's end wakes A's writer; its commit is what the kill must come after.
            await until(lambda: stored(postgres_url, session.id, pid.encode()), "A's last flush")
            await session.resume(replay=True)
            on_a = replay_lines(a, session.id)
            # B lists A's session while A serves it, and may not take it from a live A.
            assert session.id in {s.session_id for s in (await b.list_sessions()).sessions}
            with pytest.raises(acpio.RequestError) as refused:
                await b.resume_session(session.id, tmp_path)
            assert refused.value.code == -32603
            assert "another agent process" in refused.value.message
            os.kill(int(pid), signal.SIGKILL)
        assert a.returncode == -signal.SIGKILL

        reopened = await b.resume_session(session.id, tmp_path)
        # The replay, byte for byte, is what A itself replayed after its last turn (the
        # message A's resume hook sent after that replay came after A's last flush: lost).
        assert replay_lines(b, session.id) == on_a
        await reopened.wait_for(
            lambda: '{"resumed_with":{"words":["apple","pear"]}}' in messages(reopened.updates),
            what="the restored state",
        )
        recalled = messages((await reopened.prompt("recall")).updates)
        assert recalled == ['{"state":{"words":["apple","pear"]},"model":"huge"}']
        await reopened.prompt("remember plum")
        await reopened.close()
    owner, fence = query(postgres_url, "SELECT owner, fence FROM acpio_sessions")[0]
    assert owner is None and fence == 2  # created by A (1), taken over by B (2), released


# ------------------------------------------------------------ lease and fence


async def test_a_paused_owner_loses_its_lease_and_cannot_write_when_it_comes_back(
    postgres_url: str, tmp_path: Path, anyio_backend: str
) -> None:
    """A replica that stops (SIGSTOP: alive, but renewing nothing) keeps its session until
    its lease runs out; then another replica takes it over. Continued (SIGCONT), the old
    owner writes nothing more of the session and says so on stderr."""
    url = postgres_url + "?acpio_lease=3&acpio_flush_interval=0.2"
    env = env_for(url, tmp_path)
    async with (
        MockClient(store_agent(anyio_backend), env=env, cwd=tmp_path, strict=False) as a,
        MockClient(store_agent(anyio_backend), env=env, cwd=tmp_path) as b,
    ):
        session = await a.new_session()
        await session.prompt("count a 3")
        (pid,) = messages((await session.prompt("pid")).updates)
        await until(lambda: stored(postgres_url, session.id, pid.encode()), "A's last flush")
        os.kill(int(pid), signal.SIGSTOP)
        try:
            # Alive (this machine sees the process): refused while the lease runs.
            with pytest.raises(acpio.RequestError) as refused:
                await b.resume_session(session.id, tmp_path)
            assert "lease" in refused.value.message
            await until(
                lambda: (
                    query(postgres_url, "SELECT lease_until < now() FROM acpio_sessions")
                    == [(True,)]
                ),
                "the lease to run out",
            )
            taken = await b.resume_session(session.id, tmp_path)
        finally:
            os.kill(int(pid), signal.SIGCONT)
        assert messages(taken.replayed)[:3] == ["a-0", "a-1", "a-2"]
        # The old owner goes on in memory (the hot path never waits) but is fenced off.
        await session.prompt("count late 3")
        await a.wait_for(lambda: b"taken over" in a.stderr, what="the old owner's report")
        await taken.prompt("count b 2")
        await taken.close()
    stderr = a.stderr.decode()
    assert f"Session {session.id} was taken over by another agent process" in stderr
    async with MockClient(store_agent(anyio_backend), env=env, cwd=tmp_path) as c:
        resumed = await c.resume_session(session.id, tmp_path)
        shown = messages(resumed.replayed)
        assert "b-0" in shown and "b-1" in shown
        assert not any(m.startswith("late-") for m in shown)


async def test_fencing_in_one_process_refuses_the_old_owners_writes(postgres_url: str) -> None:
    """Two stores, two owners. The first's lease runs out as if it had hung (set in the
    past: its writer renews only every 10 s, so not during the test); the second takes
    over (fence 2); the first's later writes are refused, its save_state and release
    raise, and nothing of them is stored."""
    old = PostgresSessionStore(postgres_url, lease=30, flush_interval=3600)
    new = PostgresSessionStore(postgres_url, lease=30)
    try:
        record = await old.create("s", "/w", [])
        record.history.record(schema.AgentMessage(message_id="m1", content=[]))
        await old.flush()
        with pytest.raises(acpio.RequestError):
            await new.get("s")  # the same process: alive, so only the lease tells
        query(
            postgres_url,
            "UPDATE acpio_sessions SET lease_until = now() - interval '1 second' RETURNING id",
        )
        taken = await new.get("s")
        assert taken is not None
        assert query(postgres_url, "SELECT fence FROM acpio_sessions") == [(2,)]
        record.history.record(schema.AgentMessage(message_id="late", content=[]))
        await old.flush()
        record.agent_state = b'{"late": true}'
        with pytest.raises(SessionStoreError, match="taken over"):
            await old.save_state(record)
        with pytest.raises(SessionStoreError, match="taken over"):
            await old.release(record)
        # The new owner's writes go on.
        taken.history.record(schema.AgentMessage(message_id="m2", content=[]))
        await new.release(taken)
    finally:
        old.close()
        new.close()
    check = PostgresSessionStore(postgres_url)
    try:
        again = await check.get("s")
        assert again is not None and again.agent_state is None
        ids = [u.message_id for u in again.history.replay() if isinstance(u, schema.AgentMessage)]
        assert ids == ["m1", "m2"]
    finally:
        check.close()


# ------------------------------------------------------------ in one process


async def test_replay_survives_rows_snapshots_and_a_new_store(postgres_url: str) -> None:
    store = PostgresSessionStore(postgres_url)
    try:
        record = await store.create("r", "/w", ["/a"])
        history = record.history
        for index in range(50):
            history.record(
                schema.AgentMessageChunk(
                    message_id=f"m{index // 10}", content=schema.TextContent(text=f"<{index}>")
                )
            )
            history.record_terminal_output("t", b"x" * 100 + bytes([index]))
        history.record(schema.ToolCallUpdate(tool_call_id="c", title="run", status="pending"))
        history.record_text_chunk("c", "streamed ")
        history.record_text_chunk("c", "text")
        history.record(
            schema.AgentMessage(
                message_id="big", content=[schema.TextContent(text="n", meta={"n": 10**30})]
            )
        )
        expected = replay_of(history)
        await store.flush()
        assert query(postgres_url, "SELECT count(*) FROM acpio_snapshots") == [(0,)]
        # Rows only (no snapshot): a second store folds them into the same replay.
        reader = PostgresSessionStore(postgres_url)
        try:
            await store.release(record)  # now a snapshot
            loaded = await reader.get("r")
            assert loaded is not None and replay_of(loaded.history) == expected
            assert loaded.additional_directories == ["/a"]
        finally:
            reader.close()
    finally:
        store.close()


async def test_listing_shows_every_replicas_sessions_and_unwritten_ones(
    postgres_url: str,
) -> None:
    one = PostgresSessionStore(postgres_url, flush_interval=3600)
    two = PostgresSessionStore(postgres_url)
    try:
        await one.create("first", "/w", [])
        await one.flush()
        await two.create("second", "/w", [])  # listed at once, written or not
        assert {r.session_id for r in await two.list()} == {"first", "second"}
        assert await two.delete("second") is True
        with pytest.raises(acpio.RequestError, match="another agent process"):
            await two.delete("first")
        assert {r.session_id for r in await one.list()} == {"first"}
    finally:
        one.close()
        two.close()


async def test_retention_drops_old_unleased_sessions(postgres_url: str) -> None:
    store = PostgresSessionStore(postgres_url)
    try:
        for name in ("old", "kept"):
            await store.release(await store.create(name, "/w", []))
        old = (datetime.datetime.now(datetime.UTC) - datetime.timedelta(days=60)).isoformat()
        query(
            postgres_url,
            "UPDATE acpio_sessions SET updated_at = %s WHERE id = 'old' RETURNING id",
            old,
        )
    finally:
        store.close()
    PostgresSessionStore(postgres_url).close()
    assert query(postgres_url, "SELECT id FROM acpio_sessions") == [("kept",)]
    PostgresSessionStore(postgres_url, max_sessions=0).close()
    assert query(postgres_url, "SELECT id FROM acpio_sessions") == []


# ---------------------------------------------------------------- migrations


def test_migrations_are_versioned_and_a_newer_database_is_left_alone(postgres_url: str) -> None:
    PostgresSessionStore(postgres_url).close()
    PostgresSessionStore(postgres_url).close()  # a second open migrates nothing
    assert query(postgres_url, "SELECT version FROM acpio_schema") == [(SCHEMA_VERSION,)]
    query(postgres_url, "UPDATE acpio_schema SET version = 99 RETURNING version")
    with pytest.raises(SessionStoreError, match="schema version 99, newer"):
        PostgresSessionStore(postgres_url)
    assert query(postgres_url, "SELECT version FROM acpio_schema") == [(99,)]


def test_a_database_with_a_foreign_sessions_table_is_refused(postgres_url: str) -> None:
    with psycopg.connect(postgres_url) as conn:
        conn.execute(b"CREATE TABLE acpio_sessions (x int)")
    with pytest.raises(SessionStoreError, match="not an acpio session store"):
        PostgresSessionStore(postgres_url)


def test_an_unreachable_database_is_a_clear_error_without_the_password() -> None:
    url = "postgresql://acpio:s3cret@127.0.0.1:1/postgres"
    with pytest.raises(SessionStoreError, match="cannot connect") as raised:
        PostgresSessionStore(url)
    assert "s3cret" not in str(raised.value) and "***" in str(raised.value)
    assert redact("postgresql://u@h/db") == "postgresql://u@h/db"


# ------------------------------------------------------------ choosing a store


async def test_open_session_store_reads_the_url(postgres_url: str, tmp_path: Path) -> None:
    assert isinstance(open_session_store("memory"), InMemorySessionStore)
    sqlite = open_session_store(os.fspath(tmp_path / "a.sqlite3"))
    assert isinstance(sqlite, SqliteSessionStore)
    sqlite.close()
    other = open_session_store(f"sqlite://{tmp_path / 'b.sqlite3'}")
    assert isinstance(other, SqliteSessionStore) and other.path == tmp_path / "b.sqlite3"
    other.close()
    pg = open_session_store(postgres_url + "?acpio_lease=2.5&acpio_flush_interval=0.5")
    assert isinstance(pg, PostgresSessionStore)
    assert (pg.lease, pg.flush_interval, pg.conninfo) == (2.5, 0.5, postgres_url)
    pg.close()
    with pytest.raises(SessionStoreError, match="unknown session store mysql"):
        open_session_store("mysql://x/y")
    with pytest.raises(SessionStoreError, match="acpio_lease must be a positive"):
        open_session_store(postgres_url + "?acpio_lease=0")


def test_an_unusable_database_in_the_environment_serves_from_memory(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ACPIO_SESSION_STORE", "postgresql://acpio@127.0.0.1:1/postgres")
    assert isinstance(default_session_store("agent"), InMemorySessionStore)
    assert "in memory only" in capsys.readouterr().err


async def test_run_uses_the_database_the_environment_names(
    postgres_url: str, tmp_path: Path, anyio_backend: str
) -> None:
    async with MockClient(
        store_agent(anyio_backend), env=env_for(postgres_url, tmp_path), cwd=tmp_path
    ) as client:
        session = await client.new_session()
        await session.prompt("count a 2")
    assert query(postgres_url, "SELECT id, owner FROM acpio_sessions") == [(session.id, None)]
    assert sys.modules.get("psycopg") is not None


def test_importing_acpio_loads_no_driver() -> None:
    """psycopg is the postgres extra's: loaded only when a PostgreSQL store is opened."""
    code = "import sys, acpio, acpio.store; assert 'psycopg' not in sys.modules, 'loaded'"
    subprocess.run([sys.executable, "-c", code], check=True)


async def test_two_reopens_at_once_in_one_store_keep_the_session_writable(
    postgres_url: str,
) -> None:
    store = PostgresSessionStore(postgres_url)
    try:
        await store.release(await store.create("s", "/w", []))
        found: list[acpio.store.SessionRecord | None] = []

        async def reopen() -> None:
            found.append(await store.get("s"))

        async with anyio.create_task_group() as group:
            group.start_soon(reopen)
            group.start_soon(reopen)
        record = found[0]
        assert record is not None and found[1] is record
        record.history.record(schema.AgentMessage(message_id="after", content=[]))
        await store.release(record)  # raises when the flush was fenced off
    finally:
        store.close()
    assert query(postgres_url, "SELECT fence, owner FROM acpio_sessions") == [(2, None)]


async def test_leases_are_renewed_whatever_the_flush_interval(postgres_url: str) -> None:
    owner = PostgresSessionStore(postgres_url, lease=1.5, flush_interval=3600)
    other = PostgresSessionStore(postgres_url)
    try:
        await owner.create("s", "/w", [])
        await owner.flush()
        (first,) = query(postgres_url, "SELECT lease_until FROM acpio_sessions")
        # Past the first lease's end: renewed meanwhile, so still the owner's.
        await until(
            lambda: (
                query(postgres_url, "SELECT now() > %s FROM acpio_sessions", first[0]) == [(True,)]
            ),
            "the first lease's end",
        )
        with pytest.raises(acpio.RequestError, match="another agent process"):
            await other.get("s")
    finally:
        owner.close()
        other.close()
