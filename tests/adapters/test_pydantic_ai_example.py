"""examples/pydantic_ai_agent.py as an editor runs it: a subprocess over stdio, offline."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from support import EXAMPLES

import acpio
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
