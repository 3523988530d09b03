"""Every code block of README.md and of every docs/*.md page runs or is validated here.

- ``python``: run as a module (its ``if __name__ == "__main__"`` part is not run), with
  the page's blocks that name their file (a first line ``# name.py``) importable by that
  name. A page whose named blocks include tests (``# test_*.py``) has them run with pytest
  in a directory holding exactly those files, on asyncio and trio (the page's own
  ``conftest.py`` block, when it shows one), the way a reader would run them.
- ``sh``/``bash``/``shell``: each command is checked, not run (running them would install
  environments or run this very suite): ``acpio`` lines parse with the command's own
  parser, ``bash``/``python`` name files that exist (or ``my_agent.py``, the reader's own),
  ``pip install`` names extras that exist.
- ``json``/``toml``: parsed. ``haproxy``: a configuration ``haproxy -c`` accepts without a
  warning (Debian's package; ``.ci/run`` installs it). ``text`` (output, a listing, an
  address): must not be a command in disguise. A block of any other language, or of
  none, fails: say what it is.

Other tests drive particular blocks further (``tests/test_readme*.py`` and the tests
they point at); they read the blocks through ``tests/docs_pages.py`` too.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
import types
from pathlib import Path

import pytest
from docs_pages import REPO, Block, blocks, named_files, pages

from acpio._cli import _parser  # the acpio command's own argument parser

ALL = [block for page in pages() for block in blocks(page)]
SHELLS = {"sh", "bash", "shell"}
LANGUAGES = {"python", *SHELLS, "json", "toml", "haproxy", "text"}
# The reader's own agent, as the pages call it where any agent will do.
PLACEHOLDERS = {"my_agent.py"}
COMMANDS = {"acpio", "bash", "python", "python3", "pip", "uvicorn", "hypercorn", "cd"}
CONFTEST = """
import pytest

@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)
"""


def _ids(found: list[Block]) -> list[str]:
    return [str(block) for block in found]


def test_the_pages_have_blocks() -> None:
    assert "README.md" in pages() and "docs/testing.md" in pages()
    assert len([b for b in ALL if b.language == "python"]) >= 20


@pytest.mark.parametrize("block", ALL, ids=_ids(ALL))
def test_every_block_says_what_it_is(block: Block) -> None:
    assert block.language in LANGUAGES, f"{block}: mark the fence with one of {sorted(LANGUAGES)}"


PYTHON = [b for b in ALL if b.language == "python"]


@pytest.mark.parametrize("block", PYTHON, ids=_ids(PYTHON))
def test_every_python_block_runs_as_a_module(
    block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, code in named_files(block.page).items():
        (tmp_path / name).write_text(code, encoding="utf-8")
        monkeypatch.delitem(sys.modules, name[:-3], raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = types.ModuleType(f"docs_block_{block.line}")
    exec(compile(block.code, str(block), "exec"), module.__dict__)


TESTED = [page for page in pages() if any(n.startswith("test_") for n in named_files(page))]


@pytest.mark.parametrize("page", TESTED)
def test_the_tests_a_page_shows_pass_as_written(page: str, tmp_path: Path) -> None:
    files = named_files(page)
    for name, code in files.items():
        (tmp_path / name).write_text(code, encoding="utf-8")
    shown = [b.code for b in blocks(page, "python") if "def anyio_backend" in b.code]
    (tmp_path / "conftest.py").write_text(shown[0] if shown else CONFTEST, encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    tests = sum(
        len(re.findall(r"^(?:async )?def test_", code, re.MULTILINE))
        for name, code in files.items()
        if name.startswith("test_")
    )
    assert f"{2 * tests} passed" in done.stdout, done.stdout  # each on asyncio and trio


def _commands(code: str) -> list[list[str]]:
    """The commands of a shell block: continuation lines joined, comments, ``&`` and
    leading ``VAR=value`` assignments dropped."""
    commands = []
    for line in code.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        if words and words[-1] == "&":
            words.pop()
        while words and re.fullmatch(r"[A-Za-z_]\w*=.*", words[0]):
            words.pop(0)
        if words:
            commands.append(words)
    return commands


def _extras() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return set(project["optional-dependencies"])


def _check_command(words: list[str], block: Block) -> None:
    line = " ".join(words)
    program = words[0]
    assert program in COMMANDS, f"{block}: unknown command {line!r}; teach this test it"
    if program == "acpio":
        parsed = _parser().parse_args(words[1:])  # exits on an unknown command or option
        assert parsed.command == words[1], line
    elif program == "bash":
        assert (REPO / words[1]).is_file(), f"{block}: {words[1]} does not exist"
    elif program in ("python", "python3"):
        if words[1] == "-m":
            assert importlib.util.find_spec(words[2]) is not None, f"{block}: {line}"
        else:
            shown = named_files(block.page)
            known = (REPO / words[1]).is_file() or words[1] in shown or words[1] in PLACEHOLDERS
            assert known, f"{block}: {line} (no such file in the repository or on the page)"
    elif program == "pip":
        assert words[1] == "install", line
        for requirement in words[2:]:
            match = re.fullmatch(r"(?:acpio|-e \.|\.)?\[([\w,-]+)\]", requirement)
            if requirement.startswith("-") or match is None:
                continue
            assert set(match.group(1).split(",")) <= _extras(), f"{block}: {line}"
    elif program in ("uvicorn", "hypercorn"):
        module = words[-1].split(":")[0]
        assert f"{module}.py" in named_files(block.page), f"{block}: {line}"


SHELL = [b for b in ALL if b.language in SHELLS]


@pytest.mark.parametrize("block", SHELL, ids=_ids(SHELL))
def test_every_shell_command_exists(block: Block) -> None:
    commands = _commands(block.code)
    assert commands, f"{block}: an empty shell block"
    for words in commands:
        _check_command(words, block)


DATA = [b for b in ALL if b.language in ("json", "toml", "text")]


@pytest.mark.parametrize("block", DATA, ids=_ids(DATA))
def test_every_data_block_is_valid(block: Block) -> None:
    if block.language == "json":
        json.loads(block.code)
    elif block.language == "toml":
        tomllib.loads(block.code)
    else:
        for line in block.code.splitlines():
            first = line.split(maxsplit=1)[0] if line.strip() else ""
            assert first not in COMMANDS, f"{block}: a command belongs in a sh block: {line!r}"


HAPROXY = [b for b in ALL if b.language == "haproxy"]


@pytest.mark.parametrize("block", HAPROXY, ids=_ids(HAPROXY))
def test_every_haproxy_block_is_a_valid_configuration(block: Block, tmp_path: Path) -> None:
    binary = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/sbin")
    if binary is None:
        pytest.fail("haproxy is not installed (Debian: apt-get install -y haproxy)", pytrace=False)
    config = tmp_path / "haproxy.cfg"
    config.write_text(block.code, encoding="utf-8")
    done = subprocess.run(
        [binary, "-c", "-f", str(config)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, f"{block}: {done.stdout}{done.stderr}"
    assert "WARNING" not in done.stdout + done.stderr, f"{block}: {done.stdout}{done.stderr}"


def test_the_shell_checks_catch_what_they_should() -> None:
    fake = Block("README.md", 1, "sh", "")
    with pytest.raises(AssertionError, match="unknown command"):
        _check_command(["make", "docs"], fake)
    with pytest.raises(AssertionError, match="does not exist"):
        _check_command(["bash", "scripts/nope.sh"], fake)
    with pytest.raises(AssertionError):
        _check_command(["pip", "install", "acpio[nope]"], fake)
    with pytest.raises(SystemExit):
        _check_command(["acpio", "nope"], fake)
    assert _commands("A=1 B='x y' acpio check \\\n  -- python x.py &  # note\n") == [
        ["acpio", "check", "--", "python", "x.py"]
    ]
