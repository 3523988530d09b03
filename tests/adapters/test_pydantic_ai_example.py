"""examples/pydantic_ai_agent.py as an editor runs it: a subprocess over stdio, offline."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from support import EXAMPLES

import acpio
from acpio import schema
from acpio.testing import MockClient, PermissionPolicy

pytestmark = pytest.mark.anyio

COMMAND = [sys.executable, str(EXAMPLES / "pydantic_ai_agent.py")]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_example_reads_writes_and_plans(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("remember the milk\n")
    async with MockClient(COMMAND, cwd=tmp_path, policy=PermissionPolicy.allow()) as client:
        assert client.agent_info.name == "pydantic-ai-example"
        session = await client.new_session()

        await session.prompt("read notes.txt")
        (read,) = session.view.tool_calls.values()
        assert read.kind == "read" and read.status == "completed"
        reply = acpio.text_of(session.view.agent_messages[-1].content)
        assert "remember the milk" in reply

        result = await session.prompt("write todo.txt\nbuy milk\n")
        assert result.stop_reason == "end_turn"
        assert (tmp_path / "todo.txt").read_text() == "buy milk\n"
        write = [c for c in session.view.tool_calls.values() if c.kind == "edit"]
        assert write and write[0].diffs

        await session.prompt("run echo example-output")
        shell = [c for c in session.view.tool_calls.values() if c.kind == "execute"]
        assert shell and shell[0].status == "completed"
        assert "example-output" in acpio.text_of(session.view.agent_messages[-1].content)

        await session.prompt("plan")
        (plan,) = session.view.plans.values()
        assert [e.status for e in plan.entries] == ["completed", "in_progress", "pending"]


async def test_example_rejected_write_leaves_the_file(tmp_path: Path) -> None:
    target = tmp_path / "keep.txt"
    target.write_text("original\n")
    async with MockClient(COMMAND, cwd=tmp_path, policy=PermissionPolicy.reject()) as client:
        session = await client.new_session()
        result = await session.prompt("write keep.txt\nreplaced\n")
        assert result.stop_reason == "end_turn"
    assert target.read_text() == "original\n"


async def test_example_tools_report_progress_and_ask_only_in_ask_mode(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("remember the milk\n")
    (tmp_path / "old.txt").write_text("x\n")
    async with MockClient(COMMAND, cwd=tmp_path, policy=PermissionPolicy.reject()) as client:
        session = await client.new_session()
        assert session.view.config_values == {"model": "scripted", "mode": "ask"}

        await session.prompt("count notes.txt")
        (count,) = session.view.tool_calls.values()
        assert count.status == "completed"
        assert acpio.text_of([c.content for c in count.content]) == "notes.txt has 3 words."
        statuses = [
            u.status
            for u in session.updates
            if isinstance(u, schema.ToolCallUpdate) and isinstance(u.status, str)
        ]
        assert statuses == ["pending", "in_progress", "completed"]

        await session.prompt("delete old.txt")  # Ask mode: asks, and the user rejects
        assert len(client.permission_requests) == 1
        assert (tmp_path / "old.txt").exists()

        await session.set_config_option("mode", "code")
        await session.prompt("delete old.txt")  # Code mode: runs unasked
        assert len(client.permission_requests) == 1
        assert not (tmp_path / "old.txt").exists()
