"""The SQLite session store under faults (issue 24): what it accepted is never lost.

Values msgpack cannot hold, a writer that fails, file modes, dead (zombie)
owners, listing right after ``session/new``, junk cursors, turns killed
mid-way and read-only files. Restarts use real agent subprocesses
(``tests/store_agent.py`` with ``acpio.run()``'s default store, pointed at a
file in the test's temporary directory).
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import msgspec
import pytest

import acpio
from acpio import schema
from acpio._store.store_paths import owner_alive, process_start
from acpio.testing import MockClient

sys.path.insert(0, str(Path(__file__).parent))
from store_agent import StoreAgent

pytestmark = pytest.mark.anyio

AGENT = Path(__file__).parent / "store_agent.py"
BIG = 10**30  # JSON holds it, msgpack (64-bit integers) does not


@pytest.fixture
def store_file(tmp_path: Path) -> Path:
    return tmp_path / "state" / "sessions.sqlite3"


def command(anyio_backend: str) -> list[str]:
    return [sys.executable, os.fspath(AGENT), anyio_backend]


def env_for(path: Path) -> dict[str, str]:
    return {**os.environ, "ACPIO_SESSION_STORE": os.fspath(path)}


def rows(path: Path, sql: str, *args: object) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as conn:
        return conn.execute(sql, args).fetchall()


async def until(predicate: Callable[[], object], what: str) -> None:
    """Wait until ``predicate()`` holds (checked every 20 ms, for at most 30 s)."""
    for _ in range(1500):
        if predicate():
            return
        await anyio.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def proc_state(pid: int) -> bytes:
    return Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]


def message_text(updates: list[schema.SessionUpdate], message_id: str) -> str:
    return "".join(
        block.text
        for u in updates
        if isinstance(u, schema.AgentMessage) and u.message_id == message_id
        for block in u.content or ()
        if isinstance(block, schema.TextContent)
    )


# ------------------------------------------- values msgpack cannot hold; the writer


async def test_a_prompt_msgpack_cannot_hold_is_kept_and_later_sessions_too(
    store_file: Path, tmp_path: Path, anyio_backend: str
) -> None:
    poisoned = schema.TextContent(text="count p 1", meta={"n": BIG, "m": -(2**64) - 1})
    async with MockClient(command(anyio_backend), env=env_for(store_file), cwd=tmp_path) as client:
        session = await client.new_session()
        assert (await session.prompt([poisoned])).stop_reason == "end_turn"
        await session.prompt("count q 2")
        later = await client.new_session()
        await later.prompt("count r 1")
        await later.close()  # answered at once: the writer is alive and committed it
        assert b"Traceback" not in client.stderr
    async with MockClient(command(anyio_backend), env=env_for(store_file), cwd=tmp_path) as client:
        listed = {s.session_id for s in (await client.list_sessions()).sessions}
        assert {session.id, later.id} <= listed
        resumed = await client.resume_session(session.id, tmp_path)
        (user,) = [u for u in resumed.replayed if isinstance(u, schema.UserMessage)][:1]
        assert user.content == [poisoned]  # the huge integers, exactly
        texts = [
            b.text
            for u in resumed.replayed
            if isinstance(u, schema.AgentMessage)
            for b in u.content or ()
            if isinstance(b, schema.TextContent)
        ]
        assert texts == ["p-0", "q-0", "q-1"]
        again = await client.resume_session(later.id, tmp_path)
        assert [u for u in again.replayed if isinstance(u, schema.AgentMessage)]


async def test_100k_updates_with_a_poisoned_one_all_kept_after_a_restart(
    store_file: Path, tmp_path: Path, anyio_backend: str
) -> None:
    count, poisoned = 100_000, 50_000
    async with MockClient(
        command(anyio_backend), env=env_for(store_file), cwd=tmp_path, timeout=120
    ) as client:
        session = await client.new_session()
        result = await session.prompt(f"chunks {count} {poisoned}", timeout=120)
        assert result.stop_reason == "end_turn"
        after = await session.prompt("count after 1")
        assert after.stop_reason == "end_turn"
    assert client.returncode == 0
    assert b"Traceback" not in client.stderr
    async with MockClient(
        command(anyio_backend), env=env_for(store_file), cwd=tmp_path, timeout=120
    ) as client:
        resumed = await client.resume_session(session.id, tmp_path, timeout=120)
        (message,) = [
            u
            for u in resumed.replayed
            if isinstance(u, schema.AgentMessage) and u.message_id == "chunks"
        ]
        blocks = message.content or []
        assert len(blocks) == count
        assert all(
            isinstance(b, schema.TextContent) and b.text == f"<{i}>" for i, b in enumerate(blocks)
        )
        bad = blocks[poisoned]
        assert isinstance(bad, schema.TextContent) and bad.meta == {"n": BIG}
        assert "after-0" in [
            b.text
            for u in resumed.replayed
            if isinstance(u, schema.AgentMessage)
            for b in u.content or ()
            if isinstance(b, schema.TextContent)
        ]


async def test_snapshots_and_rows_keep_values_msgpack_cannot_hold(store_file: Path) -> None:
    store = acpio.store.SqliteSessionStore(store_file, flush_interval=60)
    record = await store.create("s", "/w", [])
    history = record.history
    big_exit = schema.TerminalExitStatus(exit_code=2**64)
    history.record(schema.TerminalUpdate(terminal_id="t", command="x", exit_status=big_exit))
    history.record(schema.ToolCallUpdate(tool_call_id="c", title="t", raw_input={"n": BIG}))
    history.record(schema.AgentMessage(message_id="m", content=[schema.TextContent(text="ok")]))
    expected = [schema.encode(u) for u in history.replay()]
    await store.flush()  # as rows
    reader = acpio.store.SqliteSessionStore(store_file)  # as a new process after a crash
    from_rows = await reader.get("s")
    assert from_rows is not None
    assert [schema.encode(u) for u in from_rows.history.replay()] == expected
    reader.close()
    await store.release(record)  # as a snapshot
    store.close()
    assert rows(store_file, "SELECT count(*) FROM events") == [(0,)]
    again = acpio.store.SqliteSessionStore(store_file)
    loaded = await again.get("s")
    assert loaded is not None
    assert [schema.encode(u) for u in loaded.history.replay()] == expected
    again.close()


async def test_a_failing_writer_is_reported_raised_and_retried(
    store_file: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    store = acpio.store.SqliteSessionStore(store_file, flush_interval=60)
    record = await store.create("s", "/w", [])
    await store.flush()
    # A trigger that fails every write of a row: the file refuses, as a full disk would.
    with sqlite3.connect(store_file) as conn:
        conn.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON events "
            "BEGIN SELECT RAISE(ABORT, 'disk full (test)'); END"
        )
    history = record.history
    history.record(schema.AgentMessage(message_id="m", content=[schema.TextContent(text="a")]))
    with pytest.raises(acpio.store.SessionStoreError, match="disk full"):
        await store.flush()
    assert "cannot write the session store" in capfd.readouterr().err
    history.record(schema.AgentMessage(message_id="n", content=[schema.TextContent(text="b")]))
    with sqlite3.connect(store_file) as conn:
        conn.execute("DROP TRIGGER refuse")
    await store.flush()  # the queued batch is written now: nothing was lost
    expected = [schema.encode(u) for u in history.replay()]
    store.close()
    reader = acpio.store.SqliteSessionStore(store_file)
    loaded = await reader.get("s")
    assert loaded is not None
    assert [schema.encode(u) for u in loaded.history.replay()] == expected
    reader.close()


# --------------------------------------------------------------------- file modes


def test_store_files_are_private_whatever_the_directory_mode(tmp_path: Path) -> None:
    directory = tmp_path / "state"
    directory.mkdir(mode=0o755)
    directory.chmod(0o755)
    path = directory / "sessions.sqlite3"
    old = os.umask(0o022)
    try:
        store = acpio.store.SqliteSessionStore(path)

        async def use() -> None:
            await store.create("s", "/w", [])
            await store.flush()

        anyio.run(use)
        names = [path, Path(f"{path}-wal"), Path(f"{path}-shm")]
        assert all(name.exists() for name in names)
        modes = {name.name: stat.S_IMODE(name.stat().st_mode) for name in names}
        store.close()
        # A file an older acpio left readable by all is made private when opened.
        path.chmod(0o644)
        acpio.store.SqliteSessionStore(path).close()
        reopened = stat.S_IMODE(path.stat().st_mode)
    finally:
        os.umask(old)
    assert modes == dict.fromkeys(modes, 0o600)
    assert reopened == 0o600


# ------------------------------------------------------------------------ owners


@pytest.fixture
def zombie_agent(store_file: Path, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """An agent (speaking raw JSON-RPC) that opened a session and is then killed, unreaped."""
    with subprocess.Popen(
        [sys.executable, os.fspath(AGENT), "asyncio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env_for(store_file),
    ) as process:
        try:
            yield process
        finally:
            if process.poll() is None:
                process.kill()


def raw_call(
    process: subprocess.Popen[bytes], request_id: int, method: str, params: object
) -> object:
    assert process.stdin is not None and process.stdout is not None
    line = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    process.stdin.write(msgspec.json.encode(line) + b"\n")
    process.stdin.flush()
    while True:
        message = msgspec.json.decode(process.stdout.readline())
        if isinstance(message, dict) and message.get("id") == request_id:
            assert "result" in message, message
            return message["result"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc states are Linux's")
async def test_an_unreaped_dead_owner_does_not_hold_its_session(
    store_file: Path, tmp_path: Path, anyio_backend: str, zombie_agent: subprocess.Popen[bytes]
) -> None:
    raw_call(
        zombie_agent, 1, "initialize", {"protocolVersion": 2, "info": {"name": "t", "version": "1"}}
    )
    created = raw_call(zombie_agent, 2, "session/new", {"cwd": os.fspath(tmp_path)})
    assert isinstance(created, dict)
    session_id = created["sessionId"]
    owner = [(zombie_agent.pid, process_start(zombie_agent.pid))]
    # The writer commits the new session within a second.
    await until(
        lambda: rows(store_file, "SELECT owner_pid, owner_start FROM sessions") == owner,
        "the session's row",
    )
    assert owner_alive(*owner[0])
    os.kill(zombie_agent.pid, signal.SIGKILL)
    await until(lambda: proc_state(zombie_agent.pid) == b"Z", "a zombie")
    assert not owner_alive(*owner[0])  # a zombie, still there, is dead
    async with MockClient(command(anyio_backend), env=env_for(store_file), cwd=tmp_path) as client:
        resumed = await client.resume_session(session_id, tmp_path)
        assert (await resumed.prompt("count z 1")).stop_reason == "end_turn"
    assert zombie_agent.poll() == -signal.SIGKILL  # reaped only now


# ----------------------------------------------------------------------- listing


async def test_listing_includes_a_session_created_a_moment_earlier(store_file: Path) -> None:
    store = acpio.store.SqliteSessionStore(store_file, busy_timeout=0.05)
    # Another process holds the write lock: the writer cannot commit the new sessions yet.
    blocker = sqlite3.connect(store_file, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        async with MockClient(StoreAgent(), store=store) as client:
            created = [(await client.new_session()).id for _ in range(5)]
            listed = [s.session_id for s in (await client.list_sessions()).sessions]
            assert sorted(listed) == sorted(created)
            blocker.execute("ROLLBACK")
    finally:
        blocker.close()
        store.close()
    assert len(rows(store_file, "SELECT id FROM sessions")) == 5


@pytest.mark.parametrize("cursor", ["\u00b2", "9" * 5000, "-1", " 1", "1e3", "\u0661"])
async def test_junk_cursors_are_invalid_params(cursor: str) -> None:
    async with MockClient(StoreAgent()) as client:
        await client.new_session()
        with pytest.raises(acpio.RequestError) as refused:
            await client.request("session/list", {"cursor": cursor})
        assert refused.value.code == -32602
        assert "cursor" in refused.value.message
        assert (await client.list_sessions(cursor="0")).sessions


# ------------------------------------------------------------------ killed turns


async def test_a_killed_turns_tool_calls_are_ended_on_reopen(
    store_file: Path, tmp_path: Path, anyio_backend: str
) -> None:
    async with MockClient(
        command(anyio_backend), env=env_for(store_file), cwd=tmp_path, strict=False
    ) as client:
        session = await client.new_session()
        (pid,) = [
            b.text
            for u in (await session.prompt("pid")).updates
            if isinstance(u, schema.AgentMessage)
            for b in u.content or ()
            if isinstance(b, schema.TextContent)
        ]
        await session.start_prompt("hang")
        await session.wait_for_tool_call("long", status="in_progress")
        # Flushed within a second, the turn still running.
        await until(
            lambda: rows(store_file, "SELECT 1 FROM events WHERE instr(data, ?) > 0", b"working"),
            "the tool call's row",
        )
        os.kill(int(pid), signal.SIGKILL)
    assert client.returncode == -signal.SIGKILL
    async with MockClient(command(anyio_backend), env=env_for(store_file), cwd=tmp_path) as client:
        resumed = await client.resume_session(session.id, tmp_path)
        call = resumed.view.tool_calls["long"]
        assert call.status == "failed"
        shown = [
            c.content.text
            for c in call.content
            if isinstance(c, schema.Content) and isinstance(c.content, schema.TextContent)
        ]
        assert shown[0] == "working"
        assert "agent stopped" in shown[-1]
    # The ending was stored: a third process shows the same, without ending it again.
    async with MockClient(command(anyio_backend), env=env_for(store_file), cwd=tmp_path) as client:
        resumed = await client.resume_session(session.id, tmp_path)
        call = resumed.view.tool_calls["long"]
        assert call.status == "failed"
        assert len(call.content) == 2


def test_end_open_tool_calls_ends_only_open_calls() -> None:
    from acpio._store.history import end_open_tool_calls  # noqa: PLC0415

    history = acpio.store.InMemoryHistory()
    for tool_call_id, status in [("a", None), ("b", "in_progress"), ("c", "completed")]:
        history.record(schema.ToolCallUpdate(tool_call_id=tool_call_id, title=tool_call_id))
        if status is not None:
            history.record(schema.ToolCallUpdate(tool_call_id=tool_call_id, status=status))
    history.record(schema.ToolCallUpdate(tool_call_id="d", status="cancelled"))
    assert end_open_tool_calls(history) == ["a", "b"]
    statuses = {
        u.tool_call_id: u.status for u in history.replay() if isinstance(u, schema.ToolCallUpdate)
    }
    assert statuses == {"a": "failed", "b": "failed", "c": "completed", "d": "cancelled"}
    assert end_open_tool_calls(history) == []


# --------------------------------------------------------------------- read-only


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory the test makes read-only, made writable again before it is removed."""
    path = Path(tempfile.mkdtemp(prefix="acpio-ro-"))
    yield path
    for sub in (path, *path.rglob("*")):
        sub.chmod(0o755 if sub.is_dir() else 0o644)
    shutil.rmtree(path)


def without_root_overrides(argv: list[str]) -> list[str]:
    """``argv`` run so that file modes bind it, as root too.

    Root ignores file modes (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER): the
    agent keeps root's uid, so it still reads the checkout wherever that sits (a
    0700 directory included), but without those capabilities a mode of 0444 is
    read-only for it as for anyone else.
    """
    if os.geteuid() != 0:
        return argv
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner", *argv]


async def test_a_read_only_store_serves_what_it_can_read(
    shared_dir: Path, anyio_backend: str
) -> None:
    store_file = shared_dir / "state" / "sessions.sqlite3"
    store = acpio.store.SqliteSessionStore(store_file)
    try:
        async with MockClient(StoreAgent(), store=store) as client:
            old = await client.new_session(cwd=shared_dir)
            await old.prompt("count old 2")
    finally:
        store.close()
    store_file.chmod(0o444)
    store_file.parent.chmod(0o555)
    agent = without_root_overrides(command(anyio_backend))
    before = store_file.read_bytes()
    env = {**env_for(store_file), "HOME": os.fspath(shared_dir)}
    async with MockClient(agent, env=env, cwd=shared_dir) as client:
        listed = [s.session_id for s in (await client.list_sessions()).sessions]
        assert listed == [old.id]
        resumed = await client.resume_session(old.id, shared_dir)
        assert [
            b.text
            for u in resumed.replayed
            if isinstance(u, schema.AgentMessage)
            for b in u.content or ()
            if isinstance(b, schema.TextContent)
        ] == ["old-0", "old-1"]
        assert (await resumed.prompt("count more 1")).stop_reason == "end_turn"
        new = await client.new_session(cwd=shared_dir)  # kept in memory
        listed = [s.session_id for s in (await client.list_sessions()).sessions]
        assert sorted(listed) == sorted([old.id, new.id])
        with pytest.raises(acpio.RequestError, match="read-only"):
            await client.request("session/delete", {"sessionId": old.id})
    assert "cannot be written" in client.stderr.decode()
    assert store_file.read_bytes() == before
