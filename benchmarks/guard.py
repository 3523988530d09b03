"""CI regression guard: acpio's throughput must stay above a fraction of the floor's.

A few seconds in total: a short notify run, a short reply run (on v2 and on
v1) and a short terminal run with 1 KiB writes, each against the acpio bench
agent and the floor agent (pure Python, no SDK, over the same protocol version),
and a short permission run against the acpio bench agent and the asyncio
floor agent (the least an event-loop agent costs per round trip), each pair in
the same invocation, interleaved, ``--repeats`` runs each: acpio's best run
against the floor's median run. Two absolute targets
follow: what ``import acpio`` adds to ``import anyio, msgspec`` (CPU, median of
``--import-runs`` interleaved pairs, ``startup.py``), and the peak RSS of the
acpio bench agent streaming 64 MiB of terminal bytes (median of three runs,
``memory.py``). Comparing with
a floor measured on the same machine a moment earlier makes the check
independent of how fast the CI machine is. acpio's best run keeps a noisy
neighbour that slowed acpio from failing the check; the floor's median keeps one
floor run that came out several times faster than its others (seen on CI: 49k
round trips a second against its usual 15k) from failing it. The default ratios are generous on
purpose: this catches a regression by a large factor (an accidental per-message
flush, an O(n^2) buffer, a lost batching path), not a few percent.

    python benchmarks/guard.py                         # exit 1 when a check fails
    python benchmarks/guard.py --notify-ratio 0.25 --reply-ratio 0.3 --permission-ratio 0.4

The last line is a summary ``N passed, N failed``.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence

from client import RunResult, Scenario, run_once
from memory import TERMINAL_TARGET_MIB, terminal_peak_mib
from run import known_agents, units_for
from startup import IMPORT_TARGET_MS, import_cost


def _best(runs: Sequence[RunResult]) -> RunResult | None:
    ok = [r for r in runs if r.ok and r.throughput]
    return max(ok, key=lambda r: r.throughput or 0.0) if ok else None


def _median(runs: Sequence[RunResult]) -> RunResult | None:
    """The middle run by throughput (the lower middle one of an even count)."""
    ok = sorted((r for r in runs if r.ok and r.throughput), key=lambda r: r.throughput or 0.0)
    return ok[(len(ok) - 1) // 2] if ok else None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--notify-ratio", type=float, default=0.2, help="minimum acpio/floor (default 0.2)"
    )
    parser.add_argument(
        "--reply-ratio",
        type=float,
        default=0.15,
        help="minimum acpio/floor for reply chunks, v2 and v1 (default 0.15)",
    )
    parser.add_argument(
        "--terminal-ratio", type=float, default=0.3, help="minimum acpio/floor (default 0.3)"
    )
    parser.add_argument(
        "--permission-ratio",
        type=float,
        default=0.2,
        help="minimum acpio/asyncio floor (default 0.2; round trips are the noisiest figure)",
    )
    parser.add_argument("--notify-count", type=int, default=20000)
    parser.add_argument("--reply-count", type=int, default=20000)
    parser.add_argument("--permission-count", type=int, default=2000)
    parser.add_argument(
        "--terminal-bytes", type=int, default=2 << 20, help="total bytes, written 1 KiB at a time"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--import-runs", type=int, default=21, help="pairs for the import cost")
    parser.add_argument("--timeout", type=float, default=60.0, help="per run, seconds")
    parser.add_argument(
        "--candidate",
        help="command of the agent to check instead of benchmarks/bench_agent.py",
    )
    args = parser.parse_args(argv)

    agents = known_agents()
    if args.candidate:
        cand_argv, cand_missing = shlex.split(args.candidate), None
    else:
        cand_argv, cand_missing = agents["acpio"].argv, agents["acpio"].missing

    checks = [
        (Scenario("notify", count=args.notify_count), args.notify_ratio, "floor"),
        (Scenario("reply", count=args.reply_count), args.reply_ratio, "floor"),
        (Scenario("reply", count=args.reply_count), args.reply_ratio, "floor1"),
        (
            Scenario("terminal", total_bytes=args.terminal_bytes, chunk=1024),
            args.terminal_ratio,
            "floor",
        ),
        (Scenario("permission", count=args.permission_count), args.permission_ratio, "loop"),
    ]
    passed = failed = 0
    for scenario, minimum, reference in checks:
        floor = agents[reference]
        protocol = floor.protocol
        name = f"{scenario.label}: acpio >= {minimum:.2f}x {floor.label}"
        if protocol == 1:
            name = f"{scenario.label} (v1): acpio >= {minimum:.2f}x {floor.label}"
        if cand_missing is not None:
            print(f"FAIL {name}: acpio bench agent not available ({cand_missing})")
            failed += 1
            continue
        runs: dict[str, list[RunResult]] = {"acpio": [], "floor": []}
        for rep in range(args.repeats):
            order = [("acpio", cand_argv), ("floor", floor.argv)]
            for key, cmd in order if rep % 2 == 0 else order[::-1]:
                runs[key].append(
                    run_once(cmd, scenario, protocol=protocol, agent=key, timeout=args.timeout)
                )
        best_a, best_f = _best(runs["acpio"]), _median(runs["floor"])
        if best_a is None or best_f is None:
            broken = "acpio" if best_a is None else "floor"
            errors = [r.error for r in runs[broken] if r.error]
            print(f"FAIL {name}: every {broken} run failed: {errors[0] if errors else '?'}")
            failed += 1
            continue
        bad = [r for r in runs["acpio"] if not r.ok]
        u = units_for(scenario)
        rate_a, rate_f = best_a.throughput or 0.0, best_f.throughput or 1.0
        ratio = rate_a / rate_f
        detail = (
            f"acpio {rate_a * u.rate_scale:,.1f} {u.rate} = {ratio:.2f}x "
            f"{floor.label} {rate_f * u.rate_scale:,.1f} {u.rate} (minimum {minimum:.2f}x)"
        )
        if bad:
            print(f"FAIL {name}: {len(bad)} acpio run(s) broke the contract: {bad[0].error}")
            failed += 1
        elif ratio < minimum:
            print(f"FAIL {name}: {detail}")
            failed += 1
        else:
            print(f"PASS {name}: {detail}")
            passed += 1
    _, _, added = import_cost(args.import_runs)
    name = f"import acpio adds <= {IMPORT_TARGET_MS:.0f} ms CPU to import anyio, msgspec"
    verdict = "PASS" if added * 1000 <= IMPORT_TARGET_MS else "FAIL"
    print(f"{verdict} {name}: {added * 1000:.0f} ms (median of {args.import_runs} pairs)")
    passed, failed = (passed + 1, failed) if verdict == "PASS" else (passed, failed + 1)
    peak = terminal_peak_mib()
    name = f"64 MiB of terminal bytes stream in under {TERMINAL_TARGET_MIB} MiB peak RSS"
    verdict = "PASS" if peak < TERMINAL_TARGET_MIB else "FAIL"
    print(f"{verdict} {name}: {peak:.1f} MiB (median of 3 runs)")
    passed, failed = (passed + 1, failed) if verdict == "PASS" else (passed, failed + 1)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
