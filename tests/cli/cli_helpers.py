"""Helpers for the `acpio` command's tests (imported by the test modules next to it): run it
as a subprocess, or run its commands in-process with their output captured as plain text."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from acpio._cli._output import Output

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
RAW_AGENT = Path(__file__).resolve().parent / "raw_agent.py"
PY_SDK_V1_AGENT = Path(__file__).resolve().parent / "py_sdk_v1_agent.py"
#: Generous bound for one CLI run; the runs themselves take a second or two.
RUN_TIMEOUT = 60.0


def example(name: str) -> list[str]:
    """The command line of an example agent."""
    return [sys.executable, str(EXAMPLES / f"{name}.py")]


def raw_agent(mode: str = "good") -> list[str]:
    """The command line of the hand-written test agent in one of its modes."""
    return [sys.executable, str(RAW_AGENT), mode]


def py_sdk_v1_agent(mode: str = "latest") -> list[str]:
    """The command line of the v1 agent built on the official Python SDK (``latest`` answers
    protocol 1 to any initialize, ``echo`` the requested version)."""
    return [sys.executable, str(PY_SDK_V1_AGENT), mode]


def run_cli(
    *args: str, stdin: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m acpio._cli ARGS`` with stdout and stderr captured (plain pipes)."""
    env = {key: value for key, value in os.environ.items() if key not in ("FORCE_COLOR",)}
    env["COLUMNS"] = "100"
    return subprocess.run(
        [sys.executable, "-m", "acpio._cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        cwd=cwd,
        env=env,
        check=False,
    )


class Captured:
    """An :class:`Output` that writes plain text to memory."""

    def __init__(self, *, record_svg: bool = False, terminal: bool = False) -> None:
        self.buffer = io.StringIO()
        console = Console(
            file=self.buffer,
            width=100,
            force_terminal=terminal,
            color_system="truecolor" if terminal else None,
            highlight=False,
        )
        self.output = Output(console, record_svg=record_svg, live=terminal)

    @property
    def text(self) -> str:
        """Everything written so far."""
        return self.buffer.getvalue()
