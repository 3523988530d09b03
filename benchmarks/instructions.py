"""Count an agent's user-space instructions per unit of work with valgrind's callgrind.

Timings on a shared machine move with its load; instruction counts do not.
The agent runs under ``valgrind --tool=callgrind`` twice, driven by
``client.py``, once with a small and once with a large count of the
scenario's units; the difference divided by the difference in units is the
cost of one unit, with start-up and the first turn cancelled out. Kernel time
(system calls, wake-ups) is not counted: pair it with ``strace -c`` or the
agent CPU figures of ``run.py``.

    python benchmarks/instructions.py permission 1000 3000
    python benchmarks/instructions.py permission 1000 3000 --agent benchmarks/loop_floor_agent.py
    python benchmarks/instructions.py notify 20000 60000 --src /tmp/before/src

Slow (valgrind runs Python about 50 times slower): keep the counts small.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent


def count(agent: Path, scenario: list[str], src: str | None, out: Path) -> int:
    """Total instructions of one callgrind run of ``agent`` on ``scenario``."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, env.get("PYTHONPATH")]))
    valgrind = [
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={out}",
        "--log-file=/dev/null",
    ]
    argv = [sys.executable, str(HERE / "client.py"), "--timeout", "900", "--"]
    argv += [*valgrind, sys.executable, str(agent), "--", *scenario]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    if '"ok": true' not in done.stdout:
        raise SystemExit(f"run failed: {done.stdout[-2000:]}{done.stderr[-2000:]}")
    for line in out.read_text().splitlines():
        if line.startswith("totals:"):
            return int(line.split()[1])
    raise SystemExit(f"no totals in {out}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("kind", choices=["notify", "reply", "permission", "terminal"])
    parser.add_argument("small", type=int, help="units in the first run")
    parser.add_argument("large", type=int, help="units in the second run")
    parser.add_argument("--chunk", type=int, default=1024, help="terminal write size")
    parser.add_argument("--agent", type=Path, default=HERE / "bench_agent.py")
    parser.add_argument("--src", help="directory holding the acpio package to import first")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed")
    if args.large <= args.small:
        raise SystemExit("large must exceed small")
    totals = []
    with tempfile.TemporaryDirectory() as tmp:
        for units in (args.small, args.large):
            scenario = [args.kind, str(units)]
            if args.kind == "terminal":
                scenario.append(str(args.chunk))
            totals.append(count(args.agent, scenario, args.src, Path(tmp) / f"cg.{units}"))
    per_unit = (totals[1] - totals[0]) / (args.large - args.small)
    unit = "byte" if args.kind == "terminal" else "unit"
    print(f"{args.agent.name}: {per_unit:,.0f} instructions per {unit} ({args.kind})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
