"""The "Command output for the model" example of docs/tools.md, run as written, on both backends."""

from __future__ import annotations

from pathlib import Path

import pytest
from docs_pages import blocks

import acpio
from acpio.testing import MockClient, PermissionPolicy

pytestmark = pytest.mark.anyio


def readme_block(heading: str) -> str:
    """The first Python code block of ``heading`` in docs/tools.md."""
    (block, *_) = blocks("docs/tools.md", "python", within=heading)
    return block.code


def readme_agent() -> type[acpio.Agent]:
    namespace: dict[str, object] = {"__name__": "readme_example"}
    exec(
        compile(readme_block("## Command output for the model"), "docs/tools.md", "exec"), namespace
    )
    agent = namespace["ModelShellAgent"]
    assert isinstance(agent, type) and issubclass(agent, acpio.Agent)
    return agent


async def test_the_readme_agent_sends_the_output_back_as_text(tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_text("from the file\n")
    agent = readme_agent()
    async with MockClient(agent(), policy=PermissionPolicy.allow()) as client:
        session = await client.new_session(tmp_path)
        result = await session.prompt("cat data.txt; exit 2")
        (terminal,) = session.view.terminals.values()
    assert result.stop_reason == "end_turn"
    assert terminal.output == b"from the file\n" and terminal.exit_code == 2
    assert result.text == "exit code 2\nfrom the file\n"
    assert client.violations == []


async def test_the_readme_agent_runs_nothing_without_permission(tmp_path: Path) -> None:
    agent = readme_agent()
    async with MockClient(agent(), policy=PermissionPolicy.reject()) as client:
        session = await client.new_session(tmp_path)
        result = await session.prompt("touch made")
    assert result.stop_reason == "end_turn" and not (tmp_path / "made").exists()
    (call,) = result.view.tool_calls.values()
    assert call.status == "failed"
