"""Every ``python``, ``toml`` and ``shell`` block of docs/publishing.md runs here (``text``
blocks are fragments): the agent block is the agent the ``toml`` block packages and the
``shell`` block checks, in a temporary directory, as the page tells the reader to."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import textwrap
import tomllib
import types
from pathlib import Path

import pytest

import acpio
from acpio.testing import MockClient

DOC = Path(__file__).resolve().parents[1] / "docs" / "publishing.md"
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def blocks(language: str) -> list[str]:
    """The page's blocks in ``language``, in order."""
    text = DOC.read_text(encoding="utf-8")
    return [textwrap.dedent(m.group(2)) for m in _FENCE.finditer(text) if m.group(1) == language]


def _agent_module(tmp_path: Path) -> types.ModuleType:
    (code,) = blocks("python")
    assert code.startswith("# my_agent.py")
    (tmp_path / "my_agent.py").write_text(code)
    module = types.ModuleType("my_agent")
    exec(compile(code, "publishing.md:my_agent.py", "exec"), module.__dict__)
    return module


def test_the_page_has_the_blocks_these_tests_run() -> None:
    assert len(blocks("python")) == 1
    assert len(blocks("toml")) == 1
    assert len(blocks("shell")) == 1


def test_the_console_script_names_the_package_and_the_agents_main(tmp_path: Path) -> None:
    (toml,) = blocks("toml")
    project = tomllib.loads(toml)["project"]
    scripts = project["scripts"]
    # `uvx my-agent` runs the script named like the package.
    assert list(scripts) == [project["name"]]
    module_name, _, function = scripts[project["name"]].partition(":")
    module = _agent_module(tmp_path)
    assert module_name == "my_agent" and callable(getattr(module, function))


@pytest.mark.anyio
async def test_the_agent_asks_for_sign_in_until_it_has_a_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACPIO_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("MY_AGENT_API_KEY", raising=False)
    module = _agent_module(tmp_path)
    async with MockClient(module.MyAgent()) as client:
        with pytest.raises(acpio.RequestError) as refused:
            await client.new_session()
        assert refused.value.code == -32000
        module.KEY.save("sk-doc")  # what the terminal run does
        session = await client.new_session()
        assert "with the key now: hi" in (await session.prompt("hi")).text
        await client.request("auth/logout", {})
        assert module.KEY.get() is None
    monkeypatch.setenv("MY_AGENT_API_KEY", "sk-env")
    async with MockClient(module.MyAgent()) as client:
        await client.new_session()


def test_the_shell_block_runs_in_a_project_directory(tmp_path: Path) -> None:
    _agent_module(tmp_path)
    (block,) = blocks("shell")
    env = {**os.environ, "COLUMNS": "100"}
    for line in block.splitlines():
        words = shlex.split(line)
        if words[0] == "acpio":
            words = [sys.executable, "-m", "acpio._cli", *words[1:]]
        words = [sys.executable if word == "python" else word for word in words]
        done = subprocess.run(
            words, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False
        )
        assert done.returncode == 0, f"{line}\n{done.stdout}{done.stderr}"
    assert (tmp_path / "my-agent" / "agent.json").is_file()
