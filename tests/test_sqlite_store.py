"""The SQLite session store: sessions that survive the process, shared by processes.

Most tests run the agent of ``tests/store_agent.py`` as a real subprocess
(``acpio.run()`` with its default store, pointed at a file of the test by
``ACPIO_SESSION_STORE``) and drive it with :class:`MockClient`; replay is
compared byte for byte with the wire lines of a resume in the first process.
"""

from __future__ import annotations

import base64
import datetime
import os
import random
import signal
import sqlite3
import sys
from pathlib import Path

import anyio
import msgspec
import pytest

import acpio
from acpio import schema
from acpio._store.store_paths import current_owner, default_store_path, owner_alive
from acpio.testing import ClientSession, MockClient
from acpio.testing._transcript import AGENT_TO_CLIENT, CLIENT_TO_AGENT

sys.path.insert(0, str(Path(__file__).parent))
from store_agent import StoreAgent

pytestmark = pytest.mark.anyio

AGENT = Path(__file__).parent / "store_agent.py"


@pytest.fixture
def store_file(tmp_path: Path) -> Path:
    return tmp_path / "state" / "sessions.sqlite3"


def command(anyio_backend: str) -> list[str]:
    return [sys.executable, os.fspath(AGENT), anyio_backend]


def env_for(path: Path) -> dict[str, str]:
    return {**os.environ, "ACPIO_SESSION_STORE": os.fspath(path)}


def replay_lines(client: MockClient, session_id: str) -> list[bytes]:
    """The ``session/update`` lines the agent sent for the last resume of ``session_id``."""
    entries = list(client.transcript)
    request_id = None
    start = 0
    for index, entry in enumerate(entries):
        message = entry.message
        if (
            entry.direction == CLIENT_TO_AGENT
            and isinstance(message, dict)
            and message.get("method") == "session/resume"
            and message["params"]["sessionId"] == session_id
        ):
            request_id, start = message["id"], index + 1
    assert request_id is not None
    lines: list[bytes] = []
    for entry in entries[start:]:
        message = entry.message
        if entry.direction != AGENT_TO_CLIENT or not isinstance(message, dict):
            continue
        if message.get("id") == request_id:
            assert "result" in message, message
            return lines
        if message.get("method") == "session/update":
            lines.append(entry.data)
    raise AssertionError("no response to the resume")


def texts(updates: list[schema.SessionUpdate], message_id: str) -> str:
    return "".join(
        u.content.text
        for u in updates
        if isinstance(u, schema.AgentMessageChunk)
        and u.message_id == message_id
        and isinstance(u.content, schema.TextContent)
    )


def messages(updates: list[schema.SessionUpdate]) -> list[str]:
    return [
        block.text
        for u in updates
        if isinstance(u, schema.AgentMessage)
        for block in u.content or ()
        if isinstance(block, schema.TextContent)
    ]


# ------------------------------------------------------------ across processes


async def test_resume_and_list_across_a_restart_replay_the_same_bytes(
    store_file: Path, tmp_path: Path, anyio_backend: str
) -> None:
    async with MockClient(command(anyio_backend), env=env_for(store_file), cwd=tmp_path) as client:
        session = await client.new_session()
        await session.prompt("rich")
        await session.prompt("count a 3")
        await session.resume(replay=True)
        in_process = replay_lines(client, session.id)
        other = await client.new_session(additional_directories=[os.fspath(tmp_path / "x")])
        await other.close()
    kinds = {msgspec.json.decode(line)["params"]["update"]["sessionUpdate"] for line in in_process}
    assert {"agent_message", "tool_call_update", "terminal_update", "plan_update"} <= kinds
    # The agent exited: it gave its sessions up, and its rows were folded into snapshots.
    assert rows(store_file, "SELECT owner_pid FROM sessions") == [(None,), (None,)]
    assert rows(store_file, "SELECT count(*) FROM events") == [(0,)]

    async with MockClient(command(anyio_backend), env=env_for(store_file), cwd=tmp_path) as client:
        listed = await client.list_sessions()
        assert {s.session_id for s in listed.sessions} == {session.id, other.id}
        (info,) = [s for s in listed.sessions if s.session_id == other.id]
        assert info.cwd == os.fspath(tmp_path)
        assert info.additional_directories == [os.fspath(tmp_path / "x")]
        resumed = await client.resume_session(session.id, tmp_path)
        assert replay_lines(client, session.id) == in_process
        # The session goes on in the new process and comes back whole again.
        await resumed.prompt("count b 2")
        await resumed.resume(replay=True)
        again = replay_lines(client, session.id)
    async with MockClient(command(anyio_backend), env=env_for(store_file), cwd=tmp_path) as client:
        await client.resume_session(session.id, tmp_path)
        assert replay_lines(client, session.id) == again
        assert messages(client.sessions[session.id].replayed)[-2:] == ["b-0", "b-1"]


async def test_sigkill_during_a_streaming_turn_keeps_what_was_flushed(
    store_file: Path, tmp_path: Path, anyio_backend: str
) -> None:
    async with MockClient(
        command(anyio_backend), env=env_for(store_file), cwd=tmp_path, strict=False
    ) as client:
        session = await client.new_session()
        await session.prompt("rich")
        await session.resume(replay=True)
        after_rich = replay_lines(client, session.id)[:-1]  # without the state snapshot
        pid_turn = await session.prompt("pid")
        (pid_text,) = messages(pid_turn.updates)
        await session.start_prompt("stream")
        await session.wait_for(
            lambda: texts(session.updates, "streamed").count("<") >= 200, what="200 chunks"
        )
        os.kill(int(pid_text), signal.SIGKILL)
    assert client.returncode == -signal.SIGKILL
    sent = texts(session.updates, "streamed")

    # The file is whole and opens; the finished turns are there, and of the
    # killed turn at most what was sent, in order.
    with sqlite3.connect(store_file) as check:
        assert check.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    async with MockClient(command(anyio_backend), env=env_for(store_file), cwd=tmp_path) as client:
        resumed = await client.resume_session(session.id, tmp_path)
        lines = replay_lines(client, session.id)
        assert lines[: len(after_rich)] == after_rich
        assert pid_text in messages(resumed.replayed)
        kept = "".join(
            block.text
            for u in resumed.replayed
            if isinstance(u, schema.AgentMessage) and u.message_id == "streamed"
            for block in u.content or ()
            if isinstance(block, schema.TextContent)
        )
        assert sent.startswith(kept)
        result = await resumed.prompt("count after 1")
        assert result.stop_reason == "end_turn"


async def test_two_processes_share_one_store(
    store_file: Path, tmp_path: Path, anyio_backend: str
) -> None:
    async with (
        MockClient(command(anyio_backend), env=env_for(store_file), cwd=tmp_path) as first,
        MockClient(command(anyio_backend), env=env_for(store_file), cwd=tmp_path) as second,
    ):
        one = await first.new_session()
        two = await second.new_session()

        async def work(session: ClientSession, tag: str) -> None:
            for round_ in range(3):
                await session.prompt(f"count {tag}{round_} 150")

        async with anyio.create_task_group() as group:
            group.start_soon(work, one, "one")
            group.start_soon(work, two, "two")
        listed = await first.list_sessions()
        assert {one.id, two.id} <= {s.session_id for s in listed.sessions}
        # The other process serves it: refused, clearly, and not as "not found".
        with pytest.raises(acpio.RequestError) as refused:
            await second.resume_session(one.id, tmp_path)
        assert refused.value.code == -32603
        assert "another agent process" in refused.value.message
        with pytest.raises(acpio.RequestError) as refused_delete:
            await second.request("session/delete", {"sessionId": one.id})
        assert refused_delete.value.code == -32603
        await one.close()
        # Closed there: now this process may take it over.
        taken = await second.resume_session(one.id, tmp_path)
        assert messages(taken.replayed) == [f"one{r}-{i}" for r in range(3) for i in range(150)]
    async with MockClient(command(anyio_backend), env=env_for(store_file), cwd=tmp_path) as third:
        resumed = await third.resume_session(two.id, tmp_path)
        assert messages(resumed.replayed) == [f"two{r}-{i}" for r in range(3) for i in range(150)]


async def test_a_corrupted_file_is_reported_and_the_agent_serves_from_memory(
    store_file: Path, tmp_path: Path, anyio_backend: str
) -> None:
    store_file.parent.mkdir(parents=True)
    garbage = b"this is not a database\n" * 400
    store_file.write_bytes(garbage)
    async with MockClient(command(anyio_backend), env=env_for(store_file), cwd=tmp_path) as client:
        session = await client.new_session()
        assert (await session.prompt("count a 2")).stop_reason == "end_turn"
        await client.wait_for(lambda: b"acpio warning" in client.stderr, what="the warning")
    stderr = client.stderr.decode()
    assert os.fspath(store_file) in stderr and "in memory only" in stderr
    assert store_file.read_bytes() == garbage  # left for the user to look at


async def test_a_file_from_a_newer_version_is_left_alone(
    store_file: Path, tmp_path: Path, anyio_backend: str
) -> None:
    store_file.parent.mkdir(parents=True)
    with sqlite3.connect(store_file) as newer:
        newer.execute("CREATE TABLE future (x)")
        newer.execute("PRAGMA user_version = 99")
    async with MockClient(command(anyio_backend), env=env_for(store_file), cwd=tmp_path) as client:
        session = await client.new_session()
        assert (await session.prompt("count a 1")).stop_reason == "end_turn"
        await client.wait_for(lambda: b"acpio warning" in client.stderr, what="the warning")
    assert "schema version 99, newer" in client.stderr.decode()
    with sqlite3.connect(store_file) as newer:
        assert newer.execute("PRAGMA user_version").fetchone() == (99,)
        assert newer.execute("SELECT name FROM sqlite_master").fetchall() == [("future",)]


# ------------------------------------------------------------- in one process


async def test_in_process_restart_replays_like_the_first_store(store_file: Path) -> None:
    store = acpio.store.SqliteSessionStore(store_file)
    try:
        async with MockClient(StoreAgent(), store=store) as client:
            session = await client.new_session()
            await session.prompt("rich")
            await session.resume(replay=True)
            first = replay_lines(client, session.id)
            cwd = session.cwd
            # Keep the directory the mock client would remove: the session lives on.
            assert cwd is not None
            keep = Path(cwd)
            (keep / "marker").write_text("x")
            assert isinstance(await store.get(session.id), acpio.store.SessionRecord)
    finally:
        store.close()
    second_store = acpio.store.SqliteSessionStore(store_file)
    try:
        async with MockClient(StoreAgent(), store=second_store) as client:
            await client.resume_session(session.id, cwd)
            assert replay_lines(client, session.id) == first
    finally:
        second_store.close()


def test_unreadable_and_newer_files_raise_a_clear_error(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.sqlite3"
    garbage.write_bytes(b"\x00garbage" * 1000)
    with pytest.raises(
        acpio.store.SessionStoreError, match=r"session store .*garbage.sqlite3.*not a database"
    ):
        acpio.store.SqliteSessionStore(garbage)
    foreign = tmp_path / "foreign.sqlite3"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE t (x)")
    with pytest.raises(acpio.store.SessionStoreError, match="not an acpio session store"):
        acpio.store.SqliteSessionStore(foreign)
    newer = tmp_path / "newer.sqlite3"
    with sqlite3.connect(newer) as conn:
        conn.execute("PRAGMA user_version = 7")
    with pytest.raises(acpio.store.SessionStoreError, match="newer than"):
        acpio.store.SqliteSessionStore(newer)
    with pytest.raises(acpio.store.SessionStoreError, match="cannot open"):
        acpio.store.SqliteSessionStore(garbage / "inside-a-file.sqlite3")
    # What run() does with such a file: warn and keep sessions in memory.
    os.environ["ACPIO_SESSION_STORE"] = os.fspath(newer)
    try:
        assert isinstance(acpio.store.default_session_store("x"), acpio.store.InMemorySessionStore)
    finally:
        del os.environ["ACPIO_SESSION_STORE"]


def rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as conn:
        return conn.execute(sql).fetchall()


async def test_retention_by_count_and_age_and_deleted_sessions_removed(store_file: Path) -> None:
    store = acpio.store.SqliteSessionStore(store_file, max_sessions=3)
    for index in range(6):
        record = await store.create(f"s{index}", "/w", [])
        record.history.record(
            schema.AgentMessage(message_id="m", content=[schema.TextContent(text="hi")])
        )
        await store.release(record)
    store.close()
    now = datetime.datetime.now(datetime.UTC)
    with sqlite3.connect(store_file) as conn:
        for index in range(6):
            when = (now - datetime.timedelta(minutes=10 - index)).isoformat(timespec="seconds")
            conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (when, f"s{index}"))
    reopened = acpio.store.SqliteSessionStore(store_file, max_sessions=3)
    kept = [r.session_id for r in await reopened.list()]
    assert kept == ["s5", "s4", "s3"]
    assert {r[0] for r in rows(store_file, "SELECT session_id FROM snapshots")} == set(kept)
    # Delete: the session and everything it recorded leave the file.
    assert await reopened.delete("s4") and not await reopened.delete("s4")
    assert [r.session_id for r in await reopened.list()] == ["s5", "s3"]
    assert rows(store_file, "SELECT * FROM snapshots WHERE session_id = 's4'") == []
    reopened.close()
    # By age: a session last updated longer ago than max_age goes.
    old = (now - datetime.timedelta(days=31)).isoformat(timespec="seconds")
    with sqlite3.connect(store_file) as conn:
        conn.execute("UPDATE sessions SET updated_at = ? WHERE id = 's3'", (old,))
    served = acpio.store.SqliteSessionStore(store_file)
    assert [r.session_id for r in await served.list()] == ["s5"]
    # A session a live process serves is kept whatever the limits say.
    live = await served.create("live", "/w", [])
    await served.flush()
    with sqlite3.connect(store_file) as conn:
        conn.execute("UPDATE sessions SET updated_at = ? WHERE id = 'live'", (old,))
    strict = acpio.store.SqliteSessionStore(store_file, max_sessions=0)
    assert [r.session_id for r in await strict.list()] == [live.session_id]
    strict.close()
    served.close()


async def test_long_histories_are_folded_into_one_snapshot(store_file: Path) -> None:
    limits = acpio.HistoryLimits(terminal_bytes=1000)
    store = acpio.store.SqliteSessionStore(store_file, limits=limits)
    record = await store.create("s", "/w", [])
    history = record.history
    history.record(schema.TerminalUpdate(terminal_id="t", command="yes"))
    for _ in range(2000):
        history.record_terminal_output("t", b"y\n" * 500)
    history.record(schema.IdleStateUpdate(stop_reason="end_turn"))
    expected = [schema.encode(u) for u in history.replay()]
    await store.release(record)
    # Compacted: one snapshot, no rows; what is kept is what replay needs, not 2 MB.
    assert rows(store_file, "SELECT count(*) FROM events") == [(0,)]
    ((size,),) = rows(store_file, "SELECT length(data) FROM snapshots")
    assert isinstance(size, int) and size < 2000
    again = await store.get("s")
    assert again is not None and again is not record
    assert [schema.encode(u) for u in again.history.replay()] == expected
    store.close()


def test_the_default_path_follows_the_agent_name_and_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACPIO_STATE_DIR", os.fspath(tmp_path))
    assert default_store_path("my agent/../x") == tmp_path / "my_agent_.._x" / "sessions.sqlite3"
    monkeypatch.setenv("ACPIO_SESSION_STORE", "memory")
    assert default_store_path("a") is None
    assert isinstance(acpio.store.default_session_store("a"), acpio.store.InMemorySessionStore)
    monkeypatch.setenv("ACPIO_SESSION_STORE", os.fspath(tmp_path / "f.db"))
    assert default_store_path("a") == tmp_path / "f.db"
    monkeypatch.delenv("ACPIO_SESSION_STORE")
    monkeypatch.delenv("ACPIO_STATE_DIR")
    if sys.platform.startswith("linux"):
        monkeypatch.setenv("XDG_STATE_HOME", os.fspath(tmp_path / "xdg"))
        assert default_store_path("a") == tmp_path / "xdg" / "a" / "sessions.sqlite3"
        monkeypatch.setenv("XDG_STATE_HOME", "relative")  # invalid by the spec: ignored
        monkeypatch.setenv("HOME", os.fspath(tmp_path / "home"))
        assert default_store_path("a") == tmp_path / "home/.local/state/a/sessions.sqlite3"


def test_a_dead_owner_is_not_alive_and_this_process_is() -> None:
    pid, start = current_owner()
    assert owner_alive(pid, start)
    assert not owner_alive(pid, start + "0")  # an earlier process with this pid
    assert not owner_alive(None, None)


async def test_rows_without_a_snapshot_replay_the_same(store_file: Path) -> None:
    """What a crashed process leaves (rows since the last snapshot) replays as the history did."""
    limits = acpio.HistoryLimits(terminal_bytes=3000, tool_call_items=5)
    store = acpio.store.SqliteSessionStore(store_file, limits=limits)
    record = await store.create("s", "/w", [])
    history = record.history
    history.record(schema.TerminalUpdate(terminal_id="t", command="yes"))
    history.record(schema.ToolCallUpdate(tool_call_id="c", title="call"))
    assert isinstance(history, acpio.store.InMemoryHistory)
    for flush in range(4):
        for index in range(50):
            history.record_terminal_output("t", b"%d:%d\n" % (flush, index) * 20)
            history.record_text_chunk("c", f"{flush}/{index}")
        history.record(schema.TerminalUpdate(terminal_id="u", command=f"u{flush}"))
        history.record_terminal_output("u", b"u" * flush)
        await store.flush()
    expected = [schema.encode(u) for u in history.replay()]
    assert rows(store_file, "SELECT count(*) FROM snapshots") == [(0,)]
    # A second store on the file, as a new process after a crash would open it.
    reader = acpio.store.SqliteSessionStore(store_file, limits=limits)
    loaded = await reader.get("s")
    assert loaded is not None
    assert [schema.encode(u) for u in loaded.history.replay()] == expected
    reader.close()
    store.close()


async def test_interleaved_terminals_and_text_replay_the_same_from_rows(store_file: Path) -> None:
    rng = random.Random(12)
    limits = acpio.HistoryLimits(terminal_bytes=700, tool_call_items=40)
    store = acpio.store.SqliteSessionStore(store_file, limits=limits)
    record = await store.create("s", "/w", [])
    history = record.history
    assert isinstance(history, acpio.store.InMemoryHistory)
    for name in ("t1", "t2"):
        history.record(schema.TerminalUpdate(terminal_id=name, command=name))
    history.record(schema.ToolCallUpdate(tool_call_id="c", title="call"))
    recorded = 0
    for step in range(600):
        choice = rng.random()
        if choice < 0.4:
            data = rng.randbytes(rng.randint(0, 300))
            recorded += len(data)
            history.record_terminal_output(rng.choice(["t1", "t2"]), data)
        elif choice < 0.7:
            history.record_text_chunk("c", f"text {step}")
        elif choice < 0.75:
            output = schema.TerminalOutput(data=base64.b64encode(b"snap").decode())
            history.record(schema.TerminalUpdate(terminal_id="t2", output=output))
        else:
            history.record(
                schema.AgentMessageChunk(message_id="m", content=schema.TextContent(text="w"))
            )
        if step % 150 == 149:
            await store.flush()
    expected = [schema.encode(u) for u in history.replay()]
    await store.flush()
    # The rows kept only about the output replay can show.
    stored = 0
    for (blob,) in rows(store_file, "SELECT data FROM events"):
        assert isinstance(blob, bytes)
        for item in msgspec.msgpack.decode(blob):
            if isinstance(item, list) and len(item) == 2 and isinstance(item[1], bytes):
                stored += len(item[1])
    assert stored > 0
    assert stored < recorded / 2
    reader = acpio.store.SqliteSessionStore(store_file, limits=limits)
    loaded = await reader.get("s")
    assert loaded is not None
    assert [schema.encode(u) for u in loaded.history.replay()] == expected
    reader.close()
    store.close()


async def test_the_mock_client_never_lets_an_agent_write_the_users_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, anyio_backend: str
) -> None:
    home = tmp_path / "home"
    monkeypatch.delenv("ACPIO_STATE_DIR")
    monkeypatch.delenv("ACPIO_SESSION_STORE", raising=False)
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    monkeypatch.setenv("HOME", os.fspath(home))
    for env in (None, {"PATH": os.environ["PATH"], "HOME": os.fspath(home)}):
        async with MockClient(command(anyio_backend), env=env, cwd=tmp_path) as client:
            session = await client.new_session()
            await session.prompt("count a 1")
        assert not home.exists()


async def test_sigterm_during_a_streaming_turn_keeps_everything_sent(
    store_file: Path, tmp_path: Path, anyio_backend: str
) -> None:
    async with MockClient(command(anyio_backend), env=env_for(store_file), cwd=tmp_path) as client:
        session = await client.new_session()
        (pid_text,) = messages((await session.prompt("pid")).updates)
        turn = await session.start_prompt("stream")
        await session.wait_for(
            lambda: texts(session.updates, "streamed").count("<") >= 50, what="50 chunks"
        )
        os.kill(int(pid_text), signal.SIGTERM)
        result = await turn.wait()
        assert result.stop_reason == "cancelled"
        sent = texts(session.updates, "streamed")
    assert client.returncode == 0
    assert rows(store_file, "SELECT owner_pid FROM sessions") == [(None,)]
    async with MockClient(command(anyio_backend), env=env_for(store_file), cwd=tmp_path) as client:
        resumed = await client.resume_session(session.id, tmp_path)
        (streamed,) = [
            u
            for u in resumed.replayed
            if isinstance(u, schema.AgentMessage) and u.message_id == "streamed"
        ]
        assert (
            "".join(b.text for b in streamed.content or () if isinstance(b, schema.TextContent))
            == sent
        )


async def test_a_store_locked_by_another_process_is_written_once_it_is_free(
    store_file: Path,
) -> None:
    store = acpio.store.SqliteSessionStore(store_file, busy_timeout=0.01, flush_interval=0.01)
    record = await store.create("s", "/w", [])
    await store.flush()
    history = record.history
    assert isinstance(history, acpio.store.InMemoryHistory)
    history.record(schema.TerminalUpdate(terminal_id="t", command="x"))
    history.record(schema.ToolCallUpdate(tool_call_id="c", title="call"))
    blocker = sqlite3.connect(store_file, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # another writer holds the lock
    try:
        history.record_terminal_output("t", b"held back")
        history.record_text_chunk("c", "held back")
        await store.flush()  # gives up waiting; the batch stays queued
        assert rows(store_file, "SELECT count(*) FROM events") == [(0,)]
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    history.record_terminal_output("t", b" and more")
    await store.flush()
    expected = [schema.encode(u) for u in history.replay()]
    reader = acpio.store.SqliteSessionStore(store_file)
    loaded = await reader.get("s")
    assert loaded is not None
    assert [schema.encode(u) for u in loaded.history.replay()] == expected
    reader.close()
    store.close()
