"""The durable stores' shared contract, run against SQLite and a real PostgreSQL alike.

Each test runs real agent subprocesses (``tests/store_agent.py`` and
``tests/state_agent.py`` with ``acpio.run()``), pointed at the store by
``ACPIO_SESSION_STORE`` (a file, or a ``postgresql://`` URL of a database of
the test's own on the server of ``tests/pg_server.py``): replay byte for byte
after a restart, crash loss bounded by the flush, one owner per session with
listing across processes, the durable agent state after a SIGKILL, and the tool
calls of a killed turn ended on reopen.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import anyio
import msgspec
import pytest
from test_sqlite_store import messages, replay_lines, texts

import acpio
from acpio import schema
from acpio.testing import ClientSession, MockClient

pytestmark = pytest.mark.anyio

HERE = Path(__file__).parent
STORE_AGENT = HERE / "store_agent.py"
STATE_AGENT = HERE / "state_agent.py"


@dataclass
class Store:
    """Where the agents keep their sessions, and how a test reads it as another process."""

    kind: str
    url: str

    def query(self, sql: str, *params: object) -> list[tuple[object, ...]]:
        """``sql`` (written for the PostgreSQL table names, ``%s`` parameters) on the store."""
        if self.kind == "postgres":
            import psycopg  # noqa: PLC0415

            with psycopg.connect(self.url) as conn:
                return [tuple(row) for row in conn.execute(sql.encode(), params).fetchall()]
        sqlite_sql = sql.replace("acpio_", "").replace("%s", "?")
        with sqlite3.connect(self.url) as conn:
            return conn.execute(sqlite_sql, params).fetchall()

    def stored(self, session_id: str, part: bytes) -> bool:
        """Whether a committed row of the session holds ``part``."""
        found = self.query("SELECT data FROM acpio_events WHERE session_id = %s", session_id)
        return any(part in bytes(row[0]) for row in found)  # type: ignore[call-overload]

    def owned(self) -> int:
        """How many sessions name a process that serves them."""
        column = "owner" if self.kind == "postgres" else "owner_pid"
        return int(self.query(f"SELECT count({column}) FROM acpio_sessions")[0][0])  # type: ignore[call-overload]

    def env(self, tmp_path: Path, url: str | None = None) -> dict[str, str]:
        return {
            **os.environ,
            "ACPIO_SESSION_STORE": url or self.url,
            "ACPIO_STATE_DIR": os.fspath(tmp_path / "state-dir"),
        }


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    if request.param == "postgres":
        return Store("postgres", request.getfixturevalue("postgres_url"))
    return Store("sqlite", os.fspath(tmp_path / "store" / "sessions.sqlite3"))


def store_agent(anyio_backend: str) -> list[str]:
    return [sys.executable, os.fspath(STORE_AGENT), anyio_backend]


def state_agent(anyio_backend: str) -> list[str]:
    return [sys.executable, os.fspath(STATE_AGENT), anyio_backend]


async def until(check: Callable[[], object], what: str) -> None:
    """Wait (bounded) for another process's commit: there is no event to wait on."""
    for _ in range(1000):
        if check():
            return
        await anyio.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


async def test_resume_and_list_across_a_restart_replay_the_same_bytes(
    store: Store, tmp_path: Path, anyio_backend: str
) -> None:
    env = store.env(tmp_path)
    async with MockClient(store_agent(anyio_backend), env=env, cwd=tmp_path) as client:
        session = await client.new_session()
        await session.prompt("rich")
        await session.prompt("count a 3")
        await session.prompt("chunks 20 7")  # one chunk with an integer msgpack cannot hold
        await session.resume(replay=True)
        in_process = replay_lines(client, session.id)
        other = await client.new_session(additional_directories=[os.fspath(tmp_path / "x")])
        await other.close()
    assert store.owned() == 0  # the agent exited: it gave its sessions up
    assert store.query("SELECT count(*) FROM acpio_events") == [(0,)]  # folded into snapshots

    async with MockClient(store_agent(anyio_backend), env=env, cwd=tmp_path) as client:
        listed = await client.list_sessions()
        assert {s.session_id for s in listed.sessions} == {session.id, other.id}
        (info,) = [s for s in listed.sessions if s.session_id == other.id]
        assert info.additional_directories == [os.fspath(tmp_path / "x")]
        resumed = await client.resume_session(session.id, tmp_path)
        assert replay_lines(client, session.id) == in_process
        await resumed.prompt("count b 2")
        await resumed.resume(replay=True)
        again = replay_lines(client, session.id)
    async with MockClient(store_agent(anyio_backend), env=env, cwd=tmp_path) as client:
        await client.resume_session(session.id, tmp_path)
        assert replay_lines(client, session.id) == again
        assert messages(client.sessions[session.id].replayed)[-2:] == ["b-0", "b-1"]


async def test_sigkill_during_a_streaming_turn_keeps_what_was_flushed(
    store: Store, tmp_path: Path, anyio_backend: str
) -> None:
    env = store.env(tmp_path)
    async with MockClient(
        store_agent(anyio_backend), env=env, cwd=tmp_path, strict=False
    ) as client:
        session = await client.new_session()
        await session.prompt("rich")
        await session.resume(replay=True)
        after_rich = replay_lines(client, session.id)[:-1]  # without the state snapshot
        (pid_text,) = messages((await session.prompt("pid")).updates)
        await session.start_prompt("stream")
        await session.wait_for(
            lambda: texts(session.updates, "streamed").count("<") >= 200, what="200 chunks"
        )
        # At least one flush of the running turn is committed before the kill.
        await until(lambda: store.stored(session.id, b"<10>"), "a row of the streaming turn")
        os.kill(int(pid_text), signal.SIGKILL)
    assert client.returncode == -signal.SIGKILL
    sent = texts(session.updates, "streamed")
    async with MockClient(store_agent(anyio_backend), env=env, cwd=tmp_path) as client:
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
        # The killed turn up to a flush: in order, none missing, at least the row waited
        # for. It may hold a few chunks the client never got: recorded as they were
        # sent, they were still in the agent's write buffer when it was killed.
        count = kept.count("<")
        assert count >= 11 and kept == "".join(f"<{index}>" for index in range(count))
        assert sent.startswith(kept) or kept.startswith(sent)
        assert (await resumed.prompt("count after 1")).stop_reason == "end_turn"


async def test_two_processes_share_one_store(
    store: Store, tmp_path: Path, anyio_backend: str
) -> None:
    env = store.env(tmp_path)
    async with (
        MockClient(store_agent(anyio_backend), env=env, cwd=tmp_path) as first,
        MockClient(store_agent(anyio_backend), env=env, cwd=tmp_path) as second,
    ):
        one = await first.new_session()
        two = await second.new_session()

        async def work(session: ClientSession, tag: str) -> None:
            for round_ in range(3):
                await session.prompt(f"count {tag}{round_} 150")

        async with anyio.create_task_group() as group:
            group.start_soon(work, one, "one")
            group.start_soon(work, two, "two")
        # Each process lists the other's session too.
        for client in (first, second):
            listed = await client.list_sessions()
            assert {one.id, two.id} <= {s.session_id for s in listed.sessions}
        with pytest.raises(acpio.RequestError) as refused:
            await second.resume_session(one.id, tmp_path)
        assert refused.value.code == -32603
        assert "another agent process" in refused.value.message
        with pytest.raises(acpio.RequestError) as refused_delete:
            await second.request("session/delete", {"sessionId": one.id})
        assert refused_delete.value.code == -32603
        await one.close()
        taken = await second.resume_session(one.id, tmp_path)
        assert messages(taken.replayed) == [f"one{r}-{i}" for r in range(3) for i in range(150)]
    async with MockClient(store_agent(anyio_backend), env=env, cwd=tmp_path) as third:
        resumed = await third.resume_session(two.id, tmp_path)
        assert messages(resumed.replayed) == [f"two{r}-{i}" for r in range(3) for i in range(150)]


async def test_a_killed_turns_tool_calls_are_ended_on_reopen(
    store: Store, tmp_path: Path, anyio_backend: str
) -> None:
    env = store.env(tmp_path)
    async with MockClient(
        store_agent(anyio_backend), env=env, cwd=tmp_path, strict=False
    ) as client:
        session = await client.new_session()
        (pid,) = messages((await session.prompt("pid")).updates)
        await session.start_prompt("hang")
        await session.wait_for_tool_call("long", status="in_progress")
        await until(lambda: store.stored(session.id, b"working"), "the tool call's row")
        os.kill(int(pid), signal.SIGKILL)
    assert client.returncode == -signal.SIGKILL
    for _ in range(2):  # the ending is stored: a third process shows it without ending it again
        async with MockClient(store_agent(anyio_backend), env=env, cwd=tmp_path) as client:
            resumed = await client.resume_session(session.id, tmp_path)
            call = resumed.view.tool_calls["long"]
            assert call.status == "failed"
            shown = [
                c.content.text
                for c in call.content
                if isinstance(c, schema.Content) and isinstance(c.content, schema.TextContent)
            ]
            assert shown[0] == "working" and "agent stopped" in shown[-1]
            assert len(shown) == 2


def stored_state(store: Store, session_id: str) -> tuple[object, ...] | None:
    found = store.query(
        "SELECT state, version, config_values FROM acpio_agent_states WHERE session_id = %s",
        session_id,
    )
    if not found:
        return None
    state, version, config = found[0]
    return (
        msgspec.json.decode(bytes(state)) if state is not None else None,  # type: ignore[arg-type]
        version,
        msgspec.json.decode(config),  # type: ignore[call-overload]
    )


async def test_agent_state_and_config_survive_sigkill_and_restart(
    store: Store, tmp_path: Path, anyio_backend: str
) -> None:
    # The state agent flushes only at turn ends and config changes (an hour's interval).
    url = store.url + ("?acpio_flush_interval=3600" if store.kind == "postgres" else "")
    env = store.env(tmp_path, url)
    async with MockClient(
        state_agent(anyio_backend), env=env, cwd=tmp_path, strict=False
    ) as client:
        session = await client.new_session()
        await session.prompt("remember apple")
        await session.prompt("remember pear")
        (pid_text,) = messages((await session.prompt("pid")).updates)
        await session.set_config_option("model", "smart")  # after the last turn
        expected = ({"words": ["apple", "pear"]}, 1, {"model": "smart"})
        await until(lambda: stored_state(store, session.id) == expected, "the stored state")
        os.kill(int(pid_text), signal.SIGKILL)
    assert client.returncode == -signal.SIGKILL
    async with MockClient(state_agent(anyio_backend), env=env, cwd=tmp_path) as client:
        reopened = await client.resume_session(session.id, tmp_path)
        await reopened.wait_for(
            lambda: any("resumed_with" in m for m in messages(reopened.updates)),
            what="the resume hook's message",
        )
        assert '{"resumed_with":{"words":["apple","pear"]}}' in messages(reopened.updates)
        recalled = messages((await reopened.prompt("recall")).updates)
        assert recalled == ['{"state":{"words":["apple","pear"]},"model":"smart"}']
        await reopened.prompt("remember plum")
    assert stored_state(store, session.id) == (
        {"words": ["apple", "pear", "plum"]},
        1,
        {"model": "smart"},
    )
