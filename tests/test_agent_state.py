"""Durable agent state: saved with the session, given back when it is reopened.

The agent saves its state with ``Session.save_agent_state`` and reads it back
as ``Session.agent_state``; config option values are saved on every change.
Each test drives a real agent through the MockClient and reopens the session
on a new connection (a fresh agent object, the same store), so what comes back
came from the store's record, not from the agent's memory. Both stores run:
in memory, and SQLite in a temporary directory (the restart across processes
is in ``tests/test_agent_state_restart.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

import acpio
from acpio.store import InMemorySessionStore, SessionRecord, SessionStore, SqliteSessionStore
from acpio.testing import MockClient

pytestmark = pytest.mark.anyio

MODEL = acpio.select_option("model", "Model", ["fast", "smart", "huge"])
THINKING = acpio.boolean_option("thinking", "Think harder")


class Memo(msgspec.Struct):
    notes: list[str]
    turns: int


class CountingAgent(acpio.Agent):
    """Counts turns in its durable state; ``save <json>`` saves that value instead."""

    config_options = (MODEL, THINKING)

    def __init__(self) -> None:
        self.seen_on_resume: list[object] = []
        self.config_on_resume: list[dict[str, str | bool]] = []
        self.errors: list[str] = []

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        text = acpio.text_of(prompt)
        if text.startswith("save "):
            await session.save_agent_state(msgspec.json.decode(text[5:]))
        elif text == "struct":
            await session.save_agent_state(Memo(notes=["a", "b"], turns=2))
        elif text.startswith("bad "):
            value: object = {"tuple": (1, 2), "set": {1}, "big": 2**70, "obj": object()}[text[4:]]
            try:
                await session.save_agent_state(value)
            except acpio.AgentStateError as exc:
                self.errors.append(str(exc))
        elif text == "smart":
            await session.config.set("model", "smart")
        else:
            state = session.agent_state
            turns = state["turns"] if isinstance(state, dict) else 0
            await session.save_agent_state({"turns": turns + 1, "last": text})
        await session.message(f"state={session.agent_state!r}")
        return "end_turn"

    async def on_resume_session(self, session: acpio.Session) -> None:
        self.seen_on_resume.append(session.agent_state)
        self.config_on_resume.append(dict(session.config))


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SessionStore]:
    if request.param == "memory":
        yield InMemorySessionStore()
        return
    sqlite = SqliteSessionStore(tmp_path / "sessions.sqlite3")
    try:
        yield sqlite
    finally:
        sqlite.close()


def _reopen_store(store: SessionStore, tmp_path: Path) -> SessionStore:
    """The same store, or for SQLite a fresh one on the same file (what a new process sees)."""
    if isinstance(store, SqliteSessionStore):
        store.close()
        return SqliteSessionStore(tmp_path / "sessions.sqlite3")
    return store


async def test_saved_state_and_config_come_back_on_a_new_connection(
    store: SessionStore, tmp_path: Path
) -> None:
    async with MockClient(CountingAgent(), store=store) as client:
        session = await client.new_session()
        await session.prompt("one")
        await session.prompt("two")
        await session.set_config_option("model", "huge")
        await session.set_config_option("thinking", True)
        cwd = session.cwd
        assert cwd is not None
    store = _reopen_store(store, tmp_path)
    try:
        agent = CountingAgent()
        async with MockClient(agent, store=store) as client:
            reopened = await client.resume_session(session.id, cwd)
            assert agent.seen_on_resume == [{"turns": 2, "last": "two"}]
            assert {o.config_id: o.current_value for o in reopened.view.config_options} == {
                "model": "huge",
                "thinking": True,
            }
            result = await reopened.prompt("three")
            assert result.text == "state={'turns': 3, 'last': 'three'}"
            assert client.violations == []
    finally:
        if isinstance(store, SqliteSessionStore):
            store.close()


async def test_the_agent_sees_the_json_value_it_saved(store: SessionStore) -> None:
    async with MockClient(CountingAgent(), store=store) as client:
        session = await client.new_session()
        result = await session.prompt("struct")
        assert result.text == "state={'notes': ['a', 'b'], 'turns': 2}"
        result = await session.prompt('save [1, "x", null, true, 1.5]')
        assert result.text == "state=[1, 'x', None, True, 1.5]"


@pytest.mark.parametrize(
    ("kind", "accepted"), [("tuple", True), ("set", True), ("big", True), ("obj", False)]
)
async def test_values_msgspec_cannot_encode_are_refused_and_nothing_changes(
    kind: str, accepted: bool
) -> None:
    store = InMemorySessionStore()
    agent = CountingAgent()
    async with MockClient(agent, store=store) as client:
        session = await client.new_session()
        await session.prompt("first")
        result = await session.prompt(f"bad {kind}")
        (record,) = await store.list()
        if accepted:
            assert agent.errors == []
            assert record.agent_state is not None
            assert record.agent_state != b'{"turns":1,"last":"first"}'
        else:
            assert len(agent.errors) == 1
            assert "not JSON-encodable" in agent.errors[0]
            assert "Nothing was saved" in agent.errors[0]
            assert result.text == "state={'turns': 1, 'last': 'first'}"
            assert record.agent_state == b'{"turns":1,"last":"first"}'


async def test_a_state_over_the_limit_is_refused_before_anything_is_stored() -> None:
    class Big(acpio.Agent):
        async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
            await session.save_agent_state("small")
            session.limits = dataclasses.replace(session.limits, max_agent_state_bytes=100)
            with pytest.raises(acpio.AgentStateError, match="over the session's limit of 100"):
                await session.save_agent_state("x" * 99)  # 101 bytes with the quotes
            await session.save_agent_state("x" * 98)
            with pytest.raises(ValueError, match="max_agent_state_bytes"):
                await session.save_agent_state(["y" * 200])
            return "end_turn"

    store = InMemorySessionStore()
    async with MockClient(Big(), store=store) as client:
        session = await client.new_session()
        assert (await session.prompt("go")).stop_reason == "end_turn"
        (record,) = await store.list()
        assert record.agent_state == b'"' + b"x" * 98 + b'"'


def test_the_default_limit_is_16_mib() -> None:
    assert acpio.SessionLimits().max_agent_state_bytes == 16 * 1024 * 1024
    assert issubclass(acpio.AgentStateError, ValueError)
    assert issubclass(acpio.AgentStateError, acpio.AcpError)


async def test_a_session_without_saved_state_reads_none_and_stores_nothing(
    store: SessionStore,
) -> None:
    agent = CountingAgent()
    async with MockClient(agent, store=store) as client:
        session = await client.new_session()
        cwd = session.cwd
        assert cwd is not None
        await session.close()
        await client.resume_session(session.id, cwd)
        assert agent.seen_on_resume == [None]
        assert agent.config_on_resume == [{"model": "fast", "thinking": False}]
    records = await store.list() if isinstance(store, InMemorySessionStore) else []
    for record in records:
        assert record.agent_state is None
        assert record.config_values == {}


async def test_the_agents_own_config_change_is_saved(store: SessionStore, tmp_path: Path) -> None:
    async with MockClient(CountingAgent(), store=store) as client:
        session = await client.new_session()
        await session.prompt("smart")
        cwd = session.cwd
        assert cwd is not None
    store = _reopen_store(store, tmp_path)
    try:
        agent = CountingAgent()
        async with MockClient(agent, store=store) as client:
            reopened = await client.resume_session(session.id, cwd)
            assert dict(agent.config_on_resume[0]) == {"model": "fast", "thinking": False}
            assert {o.config_id: o.current_value for o in reopened.view.config_options} == {
                "model": "smart",
                "thinking": False,
            }
    finally:
        if isinstance(store, SqliteSessionStore):
            store.close()


class RedeclaringAgent(CountingAgent):
    """Declares its options in on_resume_session: a new option list without ``huge``."""

    async def on_resume_session(self, session: acpio.Session) -> None:
        await session.config.replace(
            [acpio.select_option("model", "Model", ["fast", "smart"]), THINKING]
        )
        await super().on_resume_session(session)


async def test_saved_values_are_applied_after_the_hook_and_dropped_when_not_offered() -> None:
    store = InMemorySessionStore()
    async with MockClient(CountingAgent(), store=store) as client:
        session = await client.new_session()
        await session.set_config_option("model", "huge")
        await session.set_config_option("thinking", True)
        await session.close()
    agent = RedeclaringAgent()
    async with MockClient(agent, store=store) as client:
        assert session.cwd is not None
        reopened = await client.resume_session(session.id, session.cwd)
        # The hook saw its own defaults; the saved values were applied after it.
        assert agent.config_on_resume == [{"model": "fast", "thinking": False}]
        values = {o.config_id: o.current_value for o in reopened.view.config_options}
        assert values == {"model": "fast", "thinking": True}  # "huge" is no longer offered
        (record,) = await store.list()
        assert record.config_values == {"model": "fast", "thinking": True}


# ------------------------------------------------------------------ versions


class V2Agent(CountingAgent):
    agent_state_version = 2


class MigratingAgent(V2Agent):
    def __init__(self) -> None:
        super().__init__()
        self.migrated: list[tuple[int, object]] = []

    async def migrate_agent_state(
        self, session: acpio.Session, version: int, state: object
    ) -> object:
        self.migrated.append((version, state))
        assert isinstance(state, dict)
        return {"turns": state["turns"], "last": state["last"], "v2": True}


async def _session_saved_by_version_1(store: SessionStore) -> tuple[str, str]:
    async with MockClient(CountingAgent(), store=store) as client:
        session = await client.new_session()
        await session.prompt("one")
        await session.set_config_option("model", "smart")
        await session.close()
        assert session.cwd is not None
        return session.id, session.cwd


@pytest.mark.parametrize("v1", [False, True], ids=["resume-v2", "load-v1"])
async def test_a_state_of_another_version_is_refused_by_default(
    store: SessionStore, v1: bool
) -> None:
    session_id, cwd = await _session_saved_by_version_1(store)
    agent = V2Agent()
    async with MockClient(agent, store=store, protocol_version=1 if v1 else 2) as client:
        with pytest.raises(acpio.RequestError) as caught:
            await client.resume_session(session_id, cwd)
        error = caught.value
        assert error.code == -32603
        assert "version 1" in error.message
        assert "agent_state_version is 2" in error.message
        assert "migrate_agent_state" in error.message
        assert agent.seen_on_resume == []
        # Nothing was lost or taken: the session can still be opened by a version 1 agent.
    agent1 = CountingAgent()
    async with MockClient(agent1, store=store) as client:
        await client.resume_session(session_id, cwd)
        assert agent1.seen_on_resume == [{"turns": 1, "last": "one"}]


@pytest.mark.parametrize("v1", [False, True], ids=["resume-v2", "load-v1"])
async def test_a_migrated_state_is_used_and_saved_with_the_new_version(
    store: SessionStore, v1: bool
) -> None:
    session_id, cwd = await _session_saved_by_version_1(store)
    agent = MigratingAgent()
    async with MockClient(agent, store=store, protocol_version=1 if v1 else 2) as client:
        reopened = await client.resume_session(session_id, cwd)
        assert agent.migrated == [(1, {"turns": 1, "last": "one"})]
        assert agent.seen_on_resume == [{"turns": 1, "last": "one", "v2": True}]
        assert {o.config_id: o.current_value for o in reopened.view.config_options}["model"] == (
            "smart"
        )
        await reopened.close()
    again = MigratingAgent()
    async with MockClient(again, store=store) as client:
        await client.resume_session(session_id, cwd)
        assert again.migrated == []  # saved with version 2 by the first reopen
        assert again.seen_on_resume == [{"turns": 1, "last": "one", "v2": True}]


# ------------------------------------------------------------------ the store


class CountingStore(InMemorySessionStore):
    """An in-memory store that records what save_state was given."""

    def __init__(self) -> None:
        super().__init__()
        self.saved: list[tuple[bytes | None, int, dict[str, str | bool]]] = []

    async def save_state(self, record: SessionRecord) -> None:
        self.saved.append(
            (record.agent_state, record.agent_state_version, dict(record.config_values))
        )


async def test_every_save_and_every_config_change_reaches_save_state() -> None:
    store = CountingStore()
    async with MockClient(V2Agent(), store=store) as client:
        session = await client.new_session()
        await session.prompt("one")
        await session.set_config_option("thinking", True)
        await session.set_config_option("thinking", True)  # no change: nothing to save
        await session.prompt("smart")
    assert store.saved == [
        (b'{"turns":1,"last":"one"}', 2, {}),
        (b'{"turns":1,"last":"one"}', 2, {"model": "fast", "thinking": True}),
        (b'{"turns":1,"last":"one"}', 2, {"model": "smart", "thinking": True}),
    ]
