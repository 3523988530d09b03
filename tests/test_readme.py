"""Every code block of README.md runs here, verbatim (the text is read from the file).

Python blocks are run as modules (their ``if __name__ == "__main__"`` part as
a real subprocess where the block is an agent); the agents they define are
driven by the testing kit on asyncio and trio, the README's own test file runs
under pytest with the README's own ``conftest.py``. Shell blocks name
commands; each is checked to exist (running them would install environments
or run this very suite).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import anyio
import pytest

import acpio
from acpio import schema
from acpio._cli import _parser  # the acpio command's own argument parser
from acpio.testing import MockClient, PermissionPolicy

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
MCP_SERVERS = Path(__file__).with_name("mcp") / "mcp_servers.py"
_FENCE = re.compile(r"^( *)```(\w*)\n(.*?)^\1```$", re.DOTALL | re.MULTILINE)


def blocks(language: str) -> list[str]:
    """The README's code blocks in ``language``, dedented, in order."""
    text = README.read_text(encoding="utf-8")
    return [
        textwrap.dedent(match.group(3))
        for match in _FENCE.finditer(text)
        if match.group(2) == language
    ]


def block(*, containing: str) -> str:
    (found,) = [code for code in blocks("python") if containing in code]
    return found


def load(code: str, name: str) -> types.ModuleType:
    """Run a block as module ``name`` (not as ``__main__``) and return it."""
    module = types.ModuleType(name)
    exec(compile(code, f"README.md:{name}", "exec"), module.__dict__)
    return module


def test_the_readme_has_the_blocks_these_tests_run() -> None:
    python = blocks("python")
    assert len(python) >= 5
    assert sum("class ShellAgent" in code for code in python) == 1
    assert sum(code.startswith("# tool_agent.py") for code in python) == 1


def named_blocks() -> dict[str, str]:
    """The blocks that say which file they are (a first line ``# name.py``)."""
    named = {}
    for code in blocks("python"):
        first = code.splitlines()[0]
        match = re.fullmatch(r"# (\w+\.py)\b.*", first)
        if match:
            named[match.group(1)] = code
    return named


@pytest.mark.parametrize("index", range(len(blocks("python"))))
def test_every_python_block_runs_as_a_module(
    index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A block may import another by the file name it gives (the test imports the agent).
    for name, code in named_blocks().items():
        (tmp_path / name).write_text(code, encoding="utf-8")
        monkeypatch.delitem(sys.modules, name[:-3], raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    load(blocks("python")[index], f"readme_block_{index}")


def test_every_shell_command_exists() -> None:
    for code in blocks("sh"):
        for line in code.splitlines():
            words = shlex.split(line, comments=True)
            if not words:
                continue
            if words[0] == "bash":
                assert (ROOT / words[1]).is_file(), line
            else:
                assert words[0] == "acpio", line
                parsed = _parser().parse_args(words[1:])  # exits on an unknown command
                assert parsed.command == words[1], line


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


# ------------------------------------------------------------ the testing section


def test_the_greeter_agent_and_its_tests_run_verbatim(tmp_path: Path) -> None:
    named = named_blocks()
    (tmp_path / "greeter_agent.py").write_text(named["greeter_agent.py"])
    (tmp_path / "test_greeter_agent.py").write_text(named["test_greeter_agent.py"])
    (tmp_path / "conftest.py").write_text(block(containing='params=["asyncio", "trio"]'))
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "8 passed" in done.stdout, done.stdout


# ------------------------------------------------------------------- the MCP section


async def test_the_mcp_tool_agent_calls_a_real_server(tmp_path: Path) -> None:
    module = load(block(containing="# tool_agent.py"), "readme_tool_agent")
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
