"""The README's agent and the MCP page's tool agent, driven further than running them.

Every block of every page already runs in ``tests/test_docs_blocks.py`` (the README's
own tests with pytest, its commands checked); here the README's shell agent is driven by
the testing kit on asyncio and trio, in-process and as a real subprocess, and the tool
agent of docs/mcp.md calls a real MCP server. The blocks are read verbatim from the pages.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

import anyio
import pytest
from docs_pages import blocks, python

import acpio
from acpio import schema
from acpio.testing import MockClient, PermissionPolicy

pytestmark = pytest.mark.anyio

MCP_SERVERS = Path(__file__).with_name("mcp") / "mcp_servers.py"


def block(*, containing: str, page: str = "README.md") -> str:
    return python(page, containing=containing)


def load(code: str, name: str) -> types.ModuleType:
    """Run a block as module ``name`` (not as ``__main__``) and return it."""
    module = types.ModuleType(name)
    exec(compile(code, f"README.md:{name}", "exec"), module.__dict__)
    return module


def test_the_pages_have_the_blocks_these_tests_run() -> None:
    readme = [b.code for b in blocks("README.md", "python")]
    assert sum("class ShellAgent" in code for code in readme) == 1
    assert readme[0].startswith("# shell_agent.py") and readme[1].startswith(
        "# test_shell_agent.py"
    )
    mcp = [b.code for b in blocks("docs/mcp.md", "python")]
    assert sum(code.startswith("# tool_agent.py") for code in mcp) == 1


# ---------------------------------------------------------------- the headline agent


def shell_agent() -> acpio.Agent:
    module = load(block(containing="class ShellAgent"), "readme_shell_agent")
    agent: acpio.Agent = module.ShellAgent()
    return agent


async def test_the_shell_agent_runs_the_command_once_allowed(tmp_path: Path) -> None:
    async with MockClient(shell_agent(), policy=PermissionPolicy.allow()) as client:
        session = await client.new_session(cwd=tmp_path)
        result = await session.prompt("echo hello; touch marker")
    assert result.stop_reason == "end_turn"
    (call,) = session.view.tool_calls.values()
    assert call.status == "completed"
    assert session.view.terminals[call.terminal_ids[0]].output == b"hello\n"
    assert (tmp_path / "marker").exists()


async def test_the_shell_agent_fails_a_rejected_or_failing_command(tmp_path: Path) -> None:
    async with MockClient(shell_agent(), policy=PermissionPolicy.reject()) as client:
        session = await client.new_session(cwd=tmp_path)
        await session.prompt("touch marker")
        client.permission_policy = PermissionPolicy.allow()
        await session.prompt("exit 3")
    assert [c.status for c in session.view.tool_calls.values()] == ["failed", "failed"]
    assert not (tmp_path / "marker").exists()


async def test_the_shell_agent_cancelled_while_asking_ends_the_call_cancelled(
    tmp_path: Path,
) -> None:
    async with MockClient(shell_agent(), policy=PermissionPolicy.never()) as client:
        session = await client.new_session(cwd=tmp_path)
        turn = await session.start_prompt("touch marker")
        request = await session.wait_for_permission_request(pending=True)
        await session.cancel()
        result = await turn.wait()
        await request.wait_answered()
    assert result.stop_reason == "cancelled"
    (call,) = session.view.tool_calls.values()
    assert call.status == "cancelled"  # not "failed" with "Permission denied"
    assert "Permission denied" not in str(call.content)
    assert request.cancelled_by_agent
    assert not (tmp_path / "marker").exists()
    assert client.violations == []


async def test_the_shell_agent_runs_as_a_subprocess_verbatim(tmp_path: Path) -> None:
    script = tmp_path / "shell_agent.py"
    script.write_text(block(containing="class ShellAgent"), encoding="utf-8")
    async with MockClient(
        [sys.executable, str(script)], cwd=tmp_path, policy=PermissionPolicy.allow()
    ) as client:
        session = await client.new_session(cwd=tmp_path)
        result = await session.prompt("echo from a subprocess")
        assert result.stop_reason == "end_turn"
        (call,) = session.view.tool_calls.values()
        output = session.view.terminals[call.terminal_ids[0]].output
        assert output == b"from a subprocess\n"
    assert client.returncode == 0


async def test_the_shell_agent_ends_the_call_cancelled_when_the_client_goes_while_asking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).with_name("reliability")))
    from reliability_kit import spawned  # noqa: PLC0415 - the raw wire client of tests/reliability

    script = tmp_path / "shell_agent.py"
    script.write_text(block(containing="class ShellAgent"), encoding="utf-8")
    async with spawned([sys.executable, str(script)]) as agent:
        client = agent.client
        with anyio.fail_after(30):
            await client.initialize()
            session_id = await client.new_session(tmp_path)
            await client.prompt(session_id, "touch never")
            await client.wait_permission_request()
        await client.close_input()
        with anyio.fail_after(30):
            assert await agent.process.wait() == 0
        await client.read_to_eof()
    assert not (tmp_path / "never").exists()
    updates = client.updates(session_id)
    assert updates[-1].get("stopReason") == "cancelled"
    assert [u["status"] for u in updates if "status" in u][-1] == "cancelled"


# ------------------------------------------------------------------- the MCP section


async def test_the_mcp_tool_agent_calls_a_real_server(tmp_path: Path) -> None:
    module = load(block(containing="# tool_agent.py", page="docs/mcp.md"), "mcp_tool_agent")
    server = schema.McpServerStdio(
        name="calc", command=sys.executable, args=[str(MCP_SERVERS), "stdio"]
    )
    async with MockClient(module.ToolAgent()) as client:
        session = await client.new_session(cwd=tmp_path, mcp_servers=[server])
        added = await session.prompt('add {"a": 2, "b": 40}')
        failed = await session.prompt('broken {"message": "disk full"}')
        unknown = await session.prompt("nope")
    assert (added.stop_reason, added.text) == ("end_turn", "42")
    assert failed.text == "Error executing tool broken: disk full"
    assert unknown.text.startswith("Unknown tool 'nope'; tools: add, env")
    statuses = [(c.title, c.status) for c in session.view.tool_calls.values()]
    assert statuses == [("calc: add", "completed"), ("calc: broken", "failed")]
