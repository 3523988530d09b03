"""The LLM loop of docs/llm.md runs as written (both backends).

Its ``python`` blocks name their files on their first line (``# llm_loop.py``);
they are written to a directory as is and their tests run there with pytest, on
asyncio and trio, the way a reader would run them. The agent block also runs as
a real ACP agent over stdio.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from docs_pages import named_files

from acpio.testing import MockClient, PermissionPolicy

PAGE = "docs/llm.md"
CONFTEST = """
import pytest

@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)
"""


def _files() -> dict[str, str]:
    return named_files(PAGE)


def test_the_llm_loop_section_runs_as_written(tmp_path: Path) -> None:
    files = _files()
    assert sorted(files) == ["llm_loop.py", "test_llm_loop.py"]
    for name, code in files.items():
        (tmp_path / name).write_text(code)
    (tmp_path / "conftest.py").write_text(CONFTEST)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    tests = files["test_llm_loop.py"].count("\nasync def test_")
    assert f"{2 * tests} passed" in result.stdout, result.stdout


@pytest.mark.anyio
async def test_the_llm_loop_agent_runs_over_stdio(
    tmp_path: Path, acp_client_factory: Callable[..., MockClient]
) -> None:
    agent = tmp_path / "llm_loop.py"
    agent.write_text(_files()["llm_loop.py"])
    command = [sys.executable, str(agent)]
    async with acp_client_factory(command, policy=PermissionPolicy.allow()) as client:
        session = await client.new_session(cwd=tmp_path)
        result = await session.prompt("printf 'a\\nb'")
    assert result.text == "Let me run that. It printed 'a\\nb'."


@pytest.mark.anyio
async def test_the_llm_loop_agent_cancelled_while_asking_ends_the_call_cancelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "llm_loop.py").write_text(_files()["llm_loop.py"])
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "llm_loop", raising=False)
    from llm_loop import LoopAgent  # type: ignore[import-not-found]  # noqa: PLC0415

    async with MockClient(LoopAgent(), policy=PermissionPolicy.never()) as client:
        session = await client.new_session(cwd=tmp_path)
        turn = await session.start_prompt("touch marker")
        await session.wait_for_permission_request()
        await session.cancel()
        result = await turn.wait()
    assert result.stop_reason == "cancelled"
    assert [call.status for call in result.view.tool_calls.values()] == ["cancelled"]
    assert not (tmp_path / "marker").exists()
