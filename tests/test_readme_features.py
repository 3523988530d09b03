"""The config option and elicitation sections of docs/agents.md run as written (both backends).

Each ``python`` block of those sections names its file on its first line
(``# model_agent.py``); the blocks are written to a directory as is and their
tests run there with pytest, on asyncio and trio, the way a reader would run them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from docs_pages import blocks

PAGE = "docs/agents.md"
SECTIONS = ("## Config options and slash commands", "## Asking the user (elicitation)")
CONFTEST = """
import pytest

@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)
"""


def _files(heading: str) -> dict[str, str]:
    files: dict[str, str] = {}
    for block in blocks(PAGE, "python", within=heading):
        assert block.file_name, f"a block of {heading!r} does not name its file: {block}"
        files[block.file_name] = block.code
    return files


@pytest.mark.parametrize("heading", SECTIONS)
def test_the_section_runs_alone_as_written(heading: str, tmp_path: Path) -> None:
    files = _files(heading)
    assert any(name.startswith("test_") for name in files), "the section shows no tests"
    for name, code in files.items():
        (tmp_path / name).write_text(code)
        compile(code, name, "exec")  # every block is complete Python
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
    tests = sum(code.count("\nasync def test_") for code in files.values())
    assert f"{2 * tests} passed" in result.stdout, result.stdout
