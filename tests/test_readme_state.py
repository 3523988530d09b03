"""The "Durable agent state" example of docs/sessions.md, run as written, on both backends.

The agent saves its notes in a SQLite store in the test's directory; the
session is reopened from a new store on the same file (what a restarted
process sees) with v2 ``session/resume`` and v1 ``session/load``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from docs_pages import blocks

import acpio
from acpio.store import SqliteSessionStore
from acpio.testing import MockClient

pytestmark = pytest.mark.anyio


def readme_agent() -> type[acpio.Agent]:
    (block, *_) = blocks("docs/sessions.md", "python", within="## Durable agent state")
    namespace: dict[str, object] = {"__name__": "readme_state_example"}
    exec(compile(block.code, str(block), "exec"), namespace)
    agent = namespace["NotesAgent"]
    assert isinstance(agent, type) and issubclass(agent, acpio.Agent)
    return agent


@pytest.mark.parametrize("protocol_version", [2, 1])
async def test_the_notes_come_back_in_a_new_store_on_the_same_file(
    tmp_path: Path, protocol_version: int
) -> None:
    agent = readme_agent()
    path = tmp_path / "sessions.sqlite3"
    with SqliteSessionStore(path) as store:
        async with MockClient(agent(), store=store) as client:
            session = await client.new_session(tmp_path)
            await session.prompt("buy milk")
            assert (await session.prompt("call Ann")).text == "2 notes: buy milk, call Ann"
    with SqliteSessionStore(path) as store:
        async with MockClient(agent(), store=store, protocol_version=protocol_version) as client:
            reopened = await client.load_session(session.id, tmp_path)
            result = await reopened.prompt("water plants")
            assert result.text == "3 notes: buy milk, call Ann, water plants"
            assert client.violations == []


async def test_a_version_1_state_is_migrated_and_an_unknown_one_refused(tmp_path: Path) -> None:
    agent = readme_agent()
    store = acpio.store.InMemorySessionStore()
    async with MockClient(agent(), store=store) as client:
        session = await client.new_session(tmp_path)
        await session.prompt("first")
        await session.close()
    (record,) = await store.list()
    record.agent_state, record.agent_state_version = b'["old one"]', 1
    async with MockClient(agent(), store=store) as client:
        reopened = await client.resume_session(session.id, tmp_path)
        assert (await reopened.prompt("new")).text == "2 notes: old one, new"
        await reopened.close()
    record.agent_state, record.agent_state_version = b'{"notes": []}', 3
    async with MockClient(agent(), store=store) as client:
        with pytest.raises(acpio.RequestError, match="version 3") as caught:
            await client.resume_session(session.id, tmp_path)
        assert caught.value.code == -32603
