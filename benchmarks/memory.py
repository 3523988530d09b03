"""Peak RSS of the acpio bench agent on long streams, with the default (SQLite) store.

The scenarios of the history memory targets: one reply of 1,000,000 chunks over
v2 and over v1 (under 80 MiB each), 1,000,000 tool-call text chunks (under 40 MiB)
and 64 MiB of terminal bytes in 64 KiB writes (under 40 MiB). Each source tree (a
directory that holds the ``acpio`` package) runs each scenario ``--repeats`` times,
the trees taking turns (the order reversing every repeat, as in ``compare.py``);
the median of the agent's peak RSS (``VmHWM``, read by ``client.py`` right after
the turn) is printed per tree, with the target.

    git worktree add --detach /tmp/before main
    python benchmarks/memory.py /tmp/before/src src --repeats 3
    ACPIO_SESSION_STORE=memory python benchmarks/memory.py src   # the in-memory store
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence

from compare import HERE, run_once

TERMINAL_TARGET_MIB = 40
TERMINAL = ["terminal", "67108864", "65536"]

# (label, scenario, protocol, target MiB)
SCENARIOS = [
    ("reply 1M chunks, v2", ["reply", "1000000"], 2, 80),
    ("reply 1M chunks, v1", ["reply", "1000000"], 1, 80),
    ("tool-call text 1M chunks", ["notify", "1000000"], 2, 40),
    ("terminal 64 MiB", TERMINAL, 2, TERMINAL_TARGET_MIB),
]


def terminal_peak_mib(src: str = str(HERE.parent / "src"), runs: int = 3) -> float:
    """Median peak RSS (MiB) of the bench agent from ``src`` streaming 64 MiB of terminal bytes
    (the default store, in a temporary state directory: ``client.py`` gives each run one)."""
    peaks: list[float] = []
    for _ in range(runs):
        rss = run_once(src, TERMINAL, HERE / "bench_agent.py", 2).get("max_rss_bytes")
        if not isinstance(rss, int):
            raise RuntimeError("the client did not report the agent's peak RSS")
        peaks.append(rss / 2**20)
    return statistics.median(peaks)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("sources", nargs="+", help="directories that hold the acpio package")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    agent = HERE / "bench_agent.py"
    width = max(len(src) for src in args.sources)
    for label, scenario, protocol, target in SCENARIOS:
        peaks: dict[str, list[float]] = {src: [] for src in args.sources}
        for repeat in range(args.repeats):
            order = args.sources if repeat % 2 == 0 else args.sources[::-1]
            for src in order:
                rss = run_once(src, scenario, agent, protocol).get("max_rss_bytes")
                if isinstance(rss, int):
                    peaks[src].append(rss / 2**20)
        print(f"{label} (target under {target} MiB)")
        for src, values in peaks.items():
            median = statistics.median(values) if values else float("nan")
            spread = f"{min(values):.1f}-{max(values):.1f}" if values else "-"
            print(f"  {src:{width}}  peak RSS {median:6.1f} MiB  ({spread})")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
