"""Render the picture of `acpio demo` (docs/cli.md) into docs/demo.svg (or the path given).

Runs the demo exactly as `acpio demo --svg` does, in a fixed project directory
(so the picture does not change from one run to the next), and saves what it
showed through rich's own SVG export. Run it after changing the demo, the
example agents or the CLI's rendering:

    python scripts/render_demo_svg.py
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from acpio._cli import main

ROOT = Path(__file__).resolve().parent.parent
#: Shown in the picture, so it is the same on every machine.
PROJECT = Path(tempfile.gettempdir()) / "acpio-demo"


def render(target: Path) -> int:
    """Run the demo and write its picture to ``target``; returns the demo's exit code."""
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(PROJECT, ignore_errors=True)
    try:
        return main(["--color", "never", "demo", "--workdir", str(PROJECT), "--svg", str(target)])
    finally:
        shutil.rmtree(PROJECT, ignore_errors=True)


if __name__ == "__main__":
    destination = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "demo.svg"
    sys.exit(render(destination))
