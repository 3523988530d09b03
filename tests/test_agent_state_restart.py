"""Durable agent state across a real restart, and the SQLite file's schema migration.

The agent of ``tests/state_agent.py`` runs as a subprocess with its SQLite
store in the test's temporary directory (``ACPIO_SESSION_STORE``; the state
directories point there too, never at the user's home). It saves state and
a config option changes after the last turn; once the file holds them (the
store's flush interval is an hour, so only the turn's end and the config
change can have written them) the process is killed with SIGKILL, a new one is started, and
the session is reopened with v2 ``session/resume`` and with v1 ``session/load``:
the agent sees its state before its resume hook runs, and the config value is
back.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import sys
from pathlib import Path

import anyio
import msgspec
import pytest

import acpio
from acpio import schema
from acpio._store.sqlite_store import SCHEMA_VERSION
from acpio.store import SqliteSessionStore
from acpio.testing import MockClient

pytestmark = pytest.mark.anyio

AGENT = Path(__file__).parent / "state_agent.py"


def command(anyio_backend: str) -> list[str]:
    return [sys.executable, os.fspath(AGENT), anyio_backend]


def env_for(path: Path, tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "ACPIO_SESSION_STORE": os.fspath(path),
        "ACPIO_STATE_DIR": os.fspath(tmp_path / "state-dir"),
        "XDG_STATE_HOME": os.fspath(tmp_path / "xdg-state"),
        **extra,
    }


def messages(updates: list[schema.SessionUpdate]) -> list[str]:
    """The agent's messages (on v1 each arrives as one chunk: this agent sends whole ones)."""
    found: list[str] = []
    for u in updates:
        if isinstance(u, schema.AgentMessage):
            found.extend(b.text for b in u.content or () if isinstance(b, schema.TextContent))
        elif isinstance(u, schema.AgentMessageChunk) and isinstance(u.content, schema.TextContent):
            found.append(u.content.text)
    return found


def stored_state(path: Path, session_id: str) -> tuple[object, int, object] | None:
    """What the file holds of the session's durable state (read as another process would)."""
    with sqlite3.connect(path) as conn:
        row = conn.execute(
            "SELECT state, version, config_values FROM agent_states WHERE session_id = ?",
            (session_id,),
        ).fetchone()
    if row is None:
        return None
    state = msgspec.json.decode(row[0]) if row[0] is not None else None
    return state, row[1], msgspec.json.decode(row[2])


async def wait_until_stored(path: Path, session_id: str, expected: object) -> None:
    """Wait (bounded) until the file holds ``expected``: the agent's writer commits off its loop."""
    # Another process's commit has no event to wait on: the file is polled.
    for _ in range(1000):
        if stored_state(path, session_id) == expected:
            return
        await anyio.sleep(0.01)
    assert stored_state(path, session_id) == expected


async def run_and_kill(path: Path, tmp_path: Path, anyio_backend: str) -> str:
    """A session that saved state and changed its model, in a process then SIGKILLed."""
    async with MockClient(
        command(anyio_backend), env=env_for(path, tmp_path), cwd=tmp_path, strict=False
    ) as client:
        session = await client.new_session()
        await session.prompt("remember apple")
        await session.prompt("remember pear")
        (pid_text,) = messages((await session.prompt("pid")).updates)
        # After the last turn: no turn end flushes it, the change itself wakes the writer.
        await session.set_config_option("model", "smart")
        await wait_until_stored(
            path, session.id, ({"words": ["apple", "pear"]}, 1, {"model": "smart"})
        )
        os.kill(int(pid_text), signal.SIGKILL)
    assert client.returncode == -signal.SIGKILL
    return session.id


@pytest.mark.parametrize("protocol_version", [2, 1], ids=["v2-resume", "v1-load"])
async def test_state_and_config_survive_sigkill_and_restart(
    tmp_path: Path, anyio_backend: str, protocol_version: int
) -> None:
    path = tmp_path / "store" / "sessions.sqlite3"
    session_id = await run_and_kill(path, tmp_path, anyio_backend)
    async with MockClient(
        command(anyio_backend),
        env=env_for(path, tmp_path),
        cwd=tmp_path,
        protocol_version=protocol_version,
    ) as client:
        # v2: session/resume with replay; v1: session/load.
        reopened = await client.load_session(session_id, tmp_path)
        await reopened.wait_for(
            lambda: any("resumed_with" in m for m in messages(reopened.updates)),
            what="the resume hook's message",
        )
        assert '{"resumed_with":{"words":["apple","pear"]}}' in messages(reopened.updates)
        assert "remember pear" in str(reopened.replayed)  # the history came back too
        model = next(
            o.current_value for o in reopened.view.config_options if o.config_id == "model"
        )
        assert model == "smart"
        recalled = messages((await reopened.prompt("recall")).updates)
        assert recalled == ['{"state":{"words":["apple","pear"]},"model":"smart"}']
        await reopened.prompt("remember plum")
        assert client.violations == []
    assert stored_state(path, session_id) == (
        {"words": ["apple", "pear", "plum"]},
        1,
        {"model": "smart"},
    )


async def test_v2_resume_without_replay_restores_too(tmp_path: Path, anyio_backend: str) -> None:
    path = tmp_path / "store" / "sessions.sqlite3"
    session_id = await run_and_kill(path, tmp_path, anyio_backend)
    async with MockClient(
        command(anyio_backend), env=env_for(path, tmp_path), cwd=tmp_path
    ) as client:
        reopened = await client.resume_session(session_id, tmp_path, replay=False)
        recalled = messages((await reopened.prompt("recall")).updates)
        assert recalled == ['{"state":{"words":["apple","pear"]},"model":"smart"}']


@pytest.mark.parametrize("protocol_version", [2, 1], ids=["v2-resume", "v1-load"])
async def test_a_new_agent_version_refuses_or_migrates_the_old_state(
    tmp_path: Path, anyio_backend: str, protocol_version: int
) -> None:
    path = tmp_path / "store" / "sessions.sqlite3"
    session_id = await run_and_kill(path, tmp_path, anyio_backend)
    refusing = env_for(path, tmp_path, STATE_AGENT_VERSION="2")
    async with MockClient(
        command(anyio_backend), env=refusing, cwd=tmp_path, protocol_version=protocol_version
    ) as client:
        with pytest.raises(acpio.RequestError) as caught:
            await client.load_session(session_id, tmp_path)
        assert caught.value.code == -32603
        message = caught.value.message
        assert "version 1" in message and "agent_state_version is 2" in message
        assert "migrate_agent_state" in message
    # Refused: the file still holds the old state, untouched.
    assert stored_state(path, session_id) == ({"words": ["apple", "pear"]}, 1, {"model": "smart"})

    migrating = env_for(path, tmp_path, STATE_AGENT_VERSION="2", STATE_AGENT_MIGRATE="1")
    async with MockClient(
        command(anyio_backend), env=migrating, cwd=tmp_path, protocol_version=protocol_version
    ) as client:
        reopened = await client.load_session(session_id, tmp_path)
        recalled = messages((await reopened.prompt("recall")).updates)
        assert recalled == [
            '{"state":{"words":["apple","pear"],"migrated_from":1},"model":"smart"}'
        ]
    assert stored_state(path, session_id) == (
        {"words": ["apple", "pear"], "migrated_from": 1},
        2,
        {"model": "smart"},
    )


async def test_v1_load_answers_the_restored_mode_in_modes(
    tmp_path: Path, anyio_backend: str
) -> None:
    # A plain agent's mode option is v1's modes: set with session/set_mode, saved with the
    # session, restored on session/load before the answer's modes are made from it.
    path = tmp_path / "store" / "sessions.sqlite3"
    env = env_for(path, tmp_path, STATE_AGENT_MODES="1")
    async with MockClient(
        command(anyio_backend), env=env, cwd=tmp_path, protocol_version=1, strict=False
    ) as client:
        session = await client.new_session()
        assert session.current_mode_id == "ask"
        await session.set_mode("code")
        await session.set_config_option("model", "smart")
        await session.prompt("remember apple")
        (pid_text,) = messages((await session.prompt("pid")).updates)
        await wait_until_stored(
            path, session.id, ({"words": ["apple"]}, 1, {"model": "smart", "mode": "code"})
        )
        os.kill(int(pid_text), signal.SIGKILL)
    assert client.returncode == -signal.SIGKILL

    async with MockClient(
        command(anyio_backend), env=env, cwd=tmp_path, protocol_version=1
    ) as client:
        reopened = await client.load_session(session.id, tmp_path)
        (request,) = client.transcript.messages("client->agent", method="session/load")
        assert isinstance(request, dict)
        (answer,) = [
            m
            for m in client.transcript.messages("agent->client")
            if isinstance(m, dict) and m.get("id") == request["id"] and "result" in m
        ]
        result = answer["result"]
        assert isinstance(result, dict)
        assert result["modes"] == {
            "currentModeId": "code",
            "availableModes": [{"id": "ask", "name": "ask"}, {"id": "code", "name": "code"}],
        }
        assert {o["id"]: o["currentValue"] for o in result["configOptions"]} == {
            "model": "smart",
            "mode": "code",
        }
        assert reopened.current_mode_id == "code"
        recalled = messages((await reopened.prompt("recall")).updates)
        assert recalled == ['{"state":{"words":["apple"]},"model":"smart","mode":"code"}']
        # Nothing told the client of another mode since (no current_mode_update to "ask").
        assert reopened.current_mode_id == "code"
        assert client.violations == []


# ------------------------------------------------------------ the file's schema


def _downgrade_to_version_1(path: Path) -> None:
    """Make ``path`` what acpio with schema version 1 wrote: no agent_states table."""
    with sqlite3.connect(path) as conn:
        conn.execute("DROP INDEX sessions_by_principal")
        conn.execute("ALTER TABLE sessions DROP COLUMN principal")
        conn.execute("DROP TABLE agent_states")
        conn.execute("PRAGMA user_version = 1")


async def test_a_version_1_file_opens_keeps_its_sessions_and_then_keeps_state(
    tmp_path: Path,
) -> None:
    path = tmp_path / "sessions.sqlite3"

    class Talker(acpio.Agent):
        async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
            if acpio.text_of(prompt) == "save":
                await session.save_agent_state({"saved": True})
            await session.message(f"state={session.agent_state!r}")
            return "end_turn"

    with SqliteSessionStore(path) as store:
        async with MockClient(Talker(), store=store) as client:
            old = await client.new_session()
            await old.prompt("hello from version 1")
            assert old.cwd is not None
            cwd = old.cwd
    _downgrade_to_version_1(path)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (1,)

    with SqliteSessionStore(path) as store:
        with sqlite3.connect(path) as conn:
            assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
            assert SCHEMA_VERSION == 3
        async with MockClient(Talker(), store=store) as client:
            assert [s.session_id for s in (await client.list_sessions()).sessions] == [old.id]
            reopened = await client.resume_session(old.id, cwd)
            assert "hello from version 1" in str(reopened.replayed)
            assert messages((await reopened.prompt("save")).updates) == ["state={'saved': True}"]
    assert stored_state(path, old.id) == ({"saved": True}, 1, {})
    with SqliteSessionStore(path) as store:
        record = await store.get(old.id)
        assert record is not None
        assert (record.agent_state, record.agent_state_version) == (b'{"saved":true}', 1)


async def test_the_store_round_trips_the_record_fields_and_deletes_them(tmp_path: Path) -> None:
    path = tmp_path / "sessions.sqlite3"
    with SqliteSessionStore(path) as store:
        record = await store.create("sess_a", os.fspath(tmp_path), [])
        record.agent_state = b'{"k":[1,2]}'
        record.agent_state_version = 7
        record.config_values = {"model": "smart", "thinking": True}
        await store.save_state(record)
        record.agent_state = b'{"k":[3]}'  # saved again before the writer ran: the newest wins
        await store.save_state(record)
        await store.flush()
        assert stored_state(path, "sess_a") == (
            {"k": [3]},
            7,
            {"model": "smart", "thinking": True},
        )
        await store.release(record)
    with SqliteSessionStore(path) as store:
        loaded = await store.get("sess_a")
        assert loaded is not None
        assert loaded.agent_state == b'{"k":[3]}'
        assert loaded.agent_state_version == 7
        assert loaded.config_values == {"model": "smart", "thinking": True}
        assert await store.delete("sess_a")
    assert stored_state(path, "sess_a") is None
