"""Compare acpio source trees on one scenario: alternating runs, medians side by side.

For judging a change on a noisy machine: each source tree (a directory that
holds the ``acpio`` package, such as ``src`` of a checkout) is put first on
``PYTHONPATH`` of the acpio bench agent, and the trees take turns, the order
reversing every repeat, so a slow phase of the machine hits each alike.

    git worktree add /tmp/before HEAD~1
    python benchmarks/compare.py permission:5000 /tmp/before/src src --repeats 10
    python benchmarks/compare.py permission:5000 /tmp/before/src src --floor
    python benchmarks/compare.py reply:100000 /tmp/before/src src --protocol 1

``--floor`` adds the asyncio floor agent (``loop_floor_agent.py``, no acpio) to
the alternation and prints each tree's median throughput as a ratio of the
floor's, measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent


FLOOR = "asyncio floor"


def run_once(
    src: str, scenario: Sequence[str], agent: Path, protocol: int = 2
) -> dict[str, object]:
    """One run of ``client.py`` against ``agent`` with ``src`` first on the import path."""
    if src == FLOOR:
        # The asyncio floor speaks v2 only; over v1 the blocking floor stands in.
        src, agent = "", HERE / ("loop_floor_agent.py" if protocol == 2 else "floor_agent.py")
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))
    )
    argv = [sys.executable, str(HERE / "client.py"), "--protocol", str(protocol)]
    argv += ["--", sys.executable, str(agent), "--"]
    done = subprocess.run([*argv, *scenario], env=env, capture_output=True, text=True, check=False)
    result: dict[str, object] = json.loads(done.stdout)
    if not result.get("ok"):
        raise SystemExit(f"{src}: run failed: {result.get('error')}")
    return result


def _median(runs: list[dict[str, object]], key: str) -> float | None:
    values = [float(v) for r in runs if isinstance(v := r.get(key), int | float)]
    return statistics.median(values) if values else None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("scenario", help="as for run.py, e.g. permission:5000 or notify:100000")
    parser.add_argument("sources", nargs="+", help="directories that hold the acpio package")
    parser.add_argument("--repeats", type=int, default=8)
    parser.add_argument("--agent", type=Path, default=HERE / "bench_agent.py")
    parser.add_argument(
        "--floor", action="store_true", help="also run the asyncio floor agent; print ratios"
    )
    parser.add_argument("--protocol", type=int, choices=(1, 2), default=2)
    args = parser.parse_args(argv)
    scenario = args.scenario.split(":")
    sources: list[str] = [*args.sources, FLOOR] if args.floor else list(args.sources)
    runs: dict[str, list[dict[str, object]]] = {src: [] for src in sources}
    for repeat in range(args.repeats):
        order = sources if repeat % 2 == 0 else sources[::-1]
        for src in order:
            runs[src].append(run_once(src, scenario, args.agent, args.protocol))
    width = max(len(src) for src in sources)
    floor = _median(runs[FLOOR], "throughput") if args.floor else None
    for src, done in runs.items():
        cpu = _median(done, "cpu_per_unit_s")
        throughput = _median(done, "throughput")
        line = f"{src:{width}}  agent CPU/unit {cpu * 1e6 if cpu else float('nan'):9.2f} us"
        line += f"  throughput {throughput or float('nan'):11.1f}/s"
        rss = _median(done, "max_rss_bytes")
        if rss is not None:
            line += f"  peak RSS {rss / 2**20:6.1f} MiB"
        p50, p99 = _median(done, "rt_p50_s"), _median(done, "rt_p99_s")
        if p50 is not None and p99 is not None:
            line += f"  p50 {p50 * 1e6:6.0f} us  p99 {p99 * 1e6:6.0f} us"
        if floor and throughput:
            line += f"  {throughput / floor:.2f}x the floor"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
