"""`acpio demo` end to end: the example agents as subprocesses, what it shows, its exit code."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import REPO, Captured, run_cli

from acpio._cli import main
from acpio._cli._demo import NEW_FILE, OLD_FILE, run_demo

ANSI = re.compile(r"\x1b\[")


def _assert_shows_the_whole_story(text: str) -> None:
    # 1. allowed: the permission prompt, the answer, the streamed output, the exit.
    assert "✓ allowed: Allow once" in text
    for line in ("lint: ok", "test: ok", "build: ok", "exit code 0", "execute · completed"):
        assert line in text
    # 2. rejected: never run.
    assert "✗ rejected: Reject" in text
    assert "Permission denied: the command was not run." in text
    assert "execute · failed" in text
    # 3. the edit: a diff shown with the prompt, then approved and completed.
    assert "modify greeting.py" in text
    assert '-    return "Hello " + name' in text
    assert '+    return f"Hello, {name}!"' in text
    assert "edit · completed" in text
    # 4. the long command: cancelled while it ran, its process killed.
    assert "fetching 2 GB of dependencies..." in text
    assert "killed by SIGTERM" in text
    assert "execute · cancelled" in text
    assert "■ cancelled" in text
    assert text.count("■ end_turn") == 3
    prose = " ".join(text.split())  # long sentences wrap at the console's width
    assert "4 turns, stop reasons end_turn, end_turn, end_turn, cancelled" in prose
    assert "found no protocol violation" in prose


def test_demo_as_a_subprocess_in_a_pipe() -> None:
    result = run_cli("demo")
    assert result.returncode == 0, result.stderr
    _assert_shows_the_whole_story(result.stdout)
    assert not ANSI.search(result.stdout), "a pipe gets neither colours nor redraws"
    assert result.stderr == ""
    # The log is append-only: each tool call is printed once, when final.
    assert result.stdout.count("execute · completed") == 1


@pytest.mark.anyio
async def test_run_demo_in_process(tmp_path: Path) -> None:
    captured = Captured(record_svg=True)
    assert await run_demo(captured.output, workdir=str(tmp_path)) == 0
    _assert_shows_the_whole_story(captured.text)
    # The edit was approved, so the file changed on disk.
    assert (tmp_path / "greeting.py").read_text() == NEW_FILE != OLD_FILE
    svg = tmp_path / "demo.svg"
    captured.output.save_svg(svg, title="acpio demo")
    picture = svg.read_text()
    assert picture.startswith("<svg")
    assert "greeting.py" in picture
    assert "end_turn" in picture


@pytest.mark.anyio
async def test_run_demo_in_a_terminal_redraws_live_and_leaves_the_same_log(
    tmp_path: Path,
) -> None:
    captured = Captured(terminal=True)
    assert await run_demo(captured.output, workdir=str(tmp_path)) == 0
    text = captured.text
    assert ANSI.search(text), "a terminal gets colours"
    assert "\x1b[2K" in text, "and the live footer is redrawn (erase-line codes)"
    plain = ANSI.sub("", text)
    assert "build: ok" in plain
    assert "killed by SIGTERM" in plain


def test_demo_svg_export(tmp_path: Path) -> None:
    picture = tmp_path / "demo.svg"
    result = run_cli("demo", "--workdir", str(tmp_path / "project"), "--svg", str(picture))
    assert result.returncode == 0, result.stderr
    assert picture.read_text().startswith("<svg")
    assert "saved" in result.stderr


def test_demo_without_the_examples_says_where_to_get_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", "--examples", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "example agents" in err
    assert "checkout" in err
    assert "Traceback" not in err


def test_render_demo_svg_script_writes_a_picture(tmp_path: Path) -> None:
    target = tmp_path / "demo.svg"
    subprocess.run(
        [sys.executable, str(REPO / "scripts" / "render_demo_svg.py"), str(target)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    picture = target.read_text()
    assert picture.startswith("<svg")
    assert "acpio-demo/greeting.py" in picture  # a fixed project path: a stable picture
