"""Runs the benchmark scenarios against acpio and its peers and tabulates the results.

Every agent is driven by the same measuring client (benchmarks/client.py), one
fresh agent process per run, runs interleaved (repeat -> scenario -> agent, the
agent order rotating each repeat) so that a slow phase of the machine hits
every agent alike. Reports medians with min-max, ratios against the TypeScript
SDK and the floor agent, and writes the table plus raw JSON to benchmarks/out/.

    python benchmarks/run.py                        # everything, 5 repeats
    python benchmarks/run.py --quick --repeats 1    # a fast smoke run
    python benchmarks/run.py --agents floor,ts,py --scenarios notify,permission
    python benchmarks/run.py --write-results benchmarks/RESULTS.md

An agent that is not installed (no bench_agent.py yet, no node, setup.sh not
run) is reported as "not available" instead of failing the run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import msgspec
from client import RunResult, Scenario, run_once

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
PEERS_PY = HERE / ".venv-peers" / "bin" / "python"
TS_DIR = HERE / "ts_agent"

FULL = (
    "notify:100000",
    "reply:100000",
    "terminal:67108864:65536",
    "terminal:8388608:1024",
    "permission:5000",
)
QUICK = (
    "notify:10000",
    "reply:10000",
    "terminal:8388608:65536",
    "terminal:1048576:1024",
    "permission:500",
)

BEGIN = "<!-- acpio-bench:begin -->"
END = "<!-- acpio-bench:end -->"


@dataclass
class AgentDef:
    """A benchmarked agent: how to start it and which protocol it speaks."""

    key: str
    label: str
    argv: list[str]
    protocol: int
    missing: str | None = None  # why it cannot run, or None


def _ts_version() -> str | None:
    try:
        meta = json.loads(
            (TS_DIR / "node_modules/@agentclientprotocol/sdk/package.json").read_text()
        )
        return str(meta["version"])
    except (OSError, ValueError, KeyError):
        return None


def _py_sdk_version() -> str | None:
    for site in (HERE / ".venv-peers").glob("lib/python*/site-packages"):
        for dist in site.glob("agent_client_protocol-*.dist-info"):
            return dist.name.removeprefix("agent_client_protocol-").removesuffix(".dist-info")
    return None


def known_agents(python: str = sys.executable) -> dict[str, AgentDef]:
    """The agents run.py and guard.py know, with the reason each one is unavailable."""
    acpio = AgentDef("acpio", "acpio", [python, str(HERE / "bench_agent.py")], 2)
    if not (HERE / "bench_agent.py").is_file():
        acpio.missing = "benchmarks/bench_agent.py does not exist"

    ts_version = _ts_version()
    node = shutil.which("node")
    ts = AgentDef(
        "ts",
        f"TS SDK {ts_version or '?'}",
        [node or "node", str(TS_DIR / "agent.mjs")],
        2,
    )
    if node is None:
        ts.missing = "node is not installed"
    elif ts_version is None:
        ts.missing = "run benchmarks/setup.sh (npm ci in benchmarks/ts_agent)"

    py_version = _py_sdk_version()
    py = AgentDef(
        "py",
        f"Python SDK {py_version or '?'} (v1)",
        [str(PEERS_PY), str(HERE / "official_py_agent.py")],
        1,
    )
    if not PEERS_PY.exists() or py_version is None:
        py.missing = "run benchmarks/setup.sh (benchmarks/.venv-peers)"

    # The same acpio bench agent, driven by a v1 client: the v1 projection at work.
    acpio1 = AgentDef("acpio1", "acpio (v1)", acpio.argv, 1, acpio.missing)
    ts1 = AgentDef(
        "ts1",
        f"TS SDK {ts_version or '?'} (v1)",
        [node or "node", str(TS_DIR / "agent_v1.mjs")],
        1,
        ts.missing,
    )

    floor = AgentDef("floor", "floor (no SDK)", [python, str(HERE / "floor_agent.py")], 2)
    # The same floor agent driven by a v1 client: the same work in v1 terms.
    floor1 = AgentDef("floor1", "floor (no SDK, v1)", floor.argv, 1)
    loop = AgentDef(
        "loop", "asyncio floor (no SDK)", [python, str(HERE / "loop_floor_agent.py")], 2
    )
    return {a.key: a for a in (acpio, ts, py, floor, loop, acpio1, ts1, floor1)}


# -- units ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Units:
    rate: str  # throughput unit
    rate_scale: float
    cpu: str  # CPU per unit of work
    cpu_scale: float


def units_for(scenario: Scenario) -> Units:
    if scenario.kind in ("notify", "reply"):
        return Units("k msgs/s", 1e-3, "µs/msg", 1e6)
    if scenario.kind == "terminal":
        return Units("MiB/s", 1.0, "ms/MiB", 1e3)
    return Units("k rt/s", 1e-3, "µs/rt", 1e6)


def _num(x: float) -> str:
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def _spread(values: Sequence[float], scale: float = 1.0) -> str:
    if not values:
        return "-"
    med = statistics.median(values) * scale
    if len(values) == 1:
        return _num(med)
    return f"{_num(med)} ({_num(min(values) * scale)}-{_num(max(values) * scale)})"


def _ratio(a: float | None, b: float | None) -> str:
    if not a or not b:
        return "-"
    return f"{a / b:.2f}x"


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


# -- running ------------------------------------------------------------------------------


def run_matrix(
    agents: Sequence[AgentDef],
    scenarios: Sequence[Scenario],
    repeats: int,
    timeout: float,
    progress: Callable[[str], None],
) -> list[RunResult]:
    results: list[RunResult] = []
    runnable = [a for a in agents if a.missing is None]
    for rep in range(repeats):
        order = (
            runnable[rep % len(runnable) :] + runnable[: rep % len(runnable)] if runnable else []
        )
        for scenario in scenarios:
            for agent in order:
                r = run_once(
                    agent.argv,
                    scenario,
                    protocol=agent.protocol,
                    agent=agent.key,
                    timeout=timeout,
                )
                results.append(r)
                progress(_progress_line(rep, repeats, scenario, r))
    return results


def _progress_line(rep: int, repeats: int, scenario: Scenario, r: RunResult) -> str:
    head = f"[{rep + 1}/{repeats}] {scenario.label:<32} {r.agent:<6}"
    if not r.ok:
        return f"{head} FAILED: {(r.error or '').splitlines()[0]}"
    u = units_for(scenario)
    assert r.throughput is not None and r.cpu_per_unit_s is not None
    busy = (r.client_cpu_s or 0) / (r.elapsed_s or 1)
    return (
        f"{head} {_num(r.throughput * u.rate_scale):>8} {u.rate:<9}"
        f" cpu {_num(r.cpu_per_unit_s * u.cpu_scale):>7} {u.cpu:<7}"
        f" rss {(r.max_rss_bytes or 0) / 1e6:5.0f} MB  start {r.startup_s or 0:.3f} s"
        f"  client busy {busy:4.0%}"
    )


# -- reporting ------------------------------------------------------------------------------


def _machine() -> str:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    node = shutil.which("node")
    node_version = "not installed"
    if node:
        node_version = subprocess.run(
            [node, "--version"], capture_output=True, text=True, check=False
        ).stdout.strip()
    return (
        f"{cpu}, {os.cpu_count()} cores, Linux {platform.release()}; "
        f"Python {platform.python_version()}, msgspec {msgspec.__version__}, Node {node_version}; "
        f"load average at start {os.getloadavg()[0]:.2f}"
    )


def report(
    agents: Sequence[AgentDef],
    scenarios: Sequence[Scenario],
    results: Sequence[RunResult],
    repeats: int,
) -> str:
    by: dict[tuple[str, str], list[RunResult]] = {}
    for r in results:
        by.setdefault((r.scenario, r.agent), []).append(r)

    lines = [
        f"Run {dt.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}: {repeats} repeat(s), "
        "one fresh agent process per run, runs interleaved.  ",
        f"Machine: {_machine()}.",
        "",
        "Each cell: median (min-max) over the repeats. Throughput counts from sending the "
        "prompt to the end of the turn; agent CPU is the agent's user+system time during the "
        "prompt; RSS is the agent's peak; *client busy* is the measuring client's CPU over the "
        "elapsed time (near 100% means the number is a client-bound lower bound). "
        "Ratios compare medians (throughput; CPU in parentheses, lower is better).",
        "",
    ]
    for scenario in scenarios:
        u = units_for(scenario)
        perm = scenario.kind == "permission"
        lines.append(f"### {scenario.label}")
        lines.append("")
        head = ["agent", u.rate.strip()]
        if perm:
            head += ["p50 µs", "p99 µs"]
        head += [f"agent CPU {u.cpu}", "peak RSS MB", "client busy"]
        head += ["vs TS (same protocol)", "vs Python SDK (v1)", "vs floor (same protocol)"]
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "|".join(["---"] + ["--:"] * (len(head) - 1)) + "|")
        medians: dict[str, tuple[float | None, float | None]] = {}
        for a in agents:
            ok = [r for r in by.get((scenario.key, a.key), []) if r.ok]
            medians[a.key] = (
                _median([r.throughput for r in ok if r.throughput]),
                _median([r.cpu_per_unit_s for r in ok if r.cpu_per_unit_s is not None]),
            )
        for a in agents:
            runs = by.get((scenario.key, a.key), [])
            ok = [r for r in runs if r.ok]
            if a.missing is not None:
                lines.append(
                    f"| {a.label} | not available | " + " | ".join(["-"] * (len(head) - 2)) + " |"
                )
                continue
            if not ok:
                lines.append(
                    f"| {a.label} | failed | " + " | ".join(["-"] * (len(head) - 2)) + " |"
                )
                continue
            rate = _spread([r.throughput for r in ok if r.throughput], u.rate_scale)
            if len(ok) < len(runs):
                rate += f" ({len(runs) - len(ok)} failed)"
            row = [a.label, rate]
            if perm:
                row += [
                    _spread([r.rt_p50_s for r in ok if r.rt_p50_s is not None], 1e6),
                    _spread([r.rt_p99_s for r in ok if r.rt_p99_s is not None], 1e6),
                ]
            busy = [(r.client_cpu_s or 0) / r.elapsed_s for r in ok if r.elapsed_s]
            row += [
                _spread(
                    [r.cpu_per_unit_s for r in ok if r.cpu_per_unit_s is not None], u.cpu_scale
                ),
                _spread([r.max_rss_bytes for r in ok if r.max_rss_bytes], 1e-6),
                f"{statistics.median(busy):.0%}" if busy else "-",
            ]
            mine = medians[a.key]
            # A v1 agent is compared with the TS SDK's v1 agent, a v2 agent with its v2 one.
            v1 = a.protocol == 1
            for ref in (
                "ts1" if v1 else "ts",
                "py",
                "floor1" if v1 and "floor1" in medians else "floor",
            ):
                other = medians.get(ref, (None, None))
                if a.key == ref:
                    row.append("1x")
                    continue
                cell = _ratio(mine[0], other[0])
                cpu = _ratio(mine[1], other[1])
                if cell != "-" and cpu != "-":
                    cell += f" (CPU {cpu})"
                row.append(cell)
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")

    lines.append("### Start-up (spawn → initialize response), all runs")
    lines.append("")
    lines.append("| agent | start-up s | peak RSS MB (all scenarios) |")
    lines.append("|---|--:|--:|")
    for a in agents:
        if a.missing is not None:
            lines.append(f"| {a.label} | not available: {a.missing} | - |")
            continue
        ok = [r for r in results if r.agent == a.key and r.ok]
        lines.append(
            f"| {a.label} | {_spread([r.startup_s for r in ok if r.startup_s is not None])} | "
            f"{_spread([r.max_rss_bytes for r in ok if r.max_rss_bytes], 1e-6)} |"
        )
    lines.append("")

    failures = [r for r in results if not r.ok]
    if failures:
        lines.append("### Failures")
        lines.append("")
        for r in failures:
            first = (r.error or "").splitlines()
            lines.append(f"- {r.agent} {r.scenario}: {first[0] if first else 'unknown error'}")
        lines.append("")
    return "\n".join(lines)


def write_section(path: Path, section: str) -> None:
    """Replaces the generated section of ``path`` (between markers), creating it if needed."""
    block = f"{BEGIN}\n{section.rstrip()}\n{END}\n"
    if path.exists():
        text = path.read_text()
        if BEGIN in text and END in text:
            before, rest = text.split(BEGIN, 1)
            after = rest.split(END, 1)[1].lstrip("\n")
            text = before + block + ("\n" + after if after else "")
        else:
            text = text.rstrip() + "\n\n" + block
    else:
        text = (
            "# Benchmark results\n\n"
            "Generated by `python benchmarks/run.py --write-results benchmarks/RESULTS.md`; "
            "see benchmarks/README.md for what is measured and how.\n\n" + block
        )
    path.write_text(text)


def parse_scenarios(spec: str | None, quick: bool) -> list[Scenario]:
    defaults = [Scenario.parse(s) for s in (QUICK if quick else FULL)]
    if not spec:
        return defaults
    chosen: list[Scenario] = []
    for raw in spec.split(","):
        word = raw.strip()
        if word in ("notify", "reply", "terminal", "permission"):
            chosen += [s for s in defaults if s.kind == word]
        else:
            chosen.append(Scenario.parse(word))
    return chosen


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--agents",
        default="acpio,ts,py,floor,loop,acpio1,ts1,floor1",
        help="comma-separated: acpio,ts,py,floor,loop,acpio1 (acpio over v1),ts1 (TS SDK v1),"
        "floor1 (the floor over v1)",
    )
    parser.add_argument(
        "--scenarios",
        help="comma-separated kinds (notify,reply,terminal,permission) or exact ones such as "
        "notify:1000, terminal:1048576:1024 (default: all, full size)",
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="smaller sizes (about 1/10)")
    parser.add_argument("--timeout", type=float, default=300.0, help="per run, seconds")
    parser.add_argument(
        "--write-results", type=Path, metavar="PATH", help="also write the table into PATH"
    )
    parser.add_argument(
        "--out", type=Path, default=OUT, help="output directory (default benchmarks/out)"
    )
    args = parser.parse_args(argv)

    registry = known_agents()
    keys = [k.strip() for k in args.agents.split(",") if k.strip()]
    unknown = [k for k in keys if k not in registry]
    if unknown:
        parser.error(f"unknown agent(s) {unknown}; known: {sorted(registry)}")
    agents = [registry[k] for k in keys]
    scenarios = parse_scenarios(args.scenarios, args.quick)
    for a in agents:
        if a.missing:
            print(f"{a.key}: not available ({a.missing})", file=sys.stderr)

    results = run_matrix(
        agents,
        scenarios,
        args.repeats,
        args.timeout,
        lambda s: print(s, file=sys.stderr, flush=True),
    )
    table = report(agents, scenarios, results, args.repeats)
    print(table)

    args.out.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    (args.out / f"results-{stamp}.md").write_text(table + "\n")
    (args.out / f"results-{stamp}.json").write_text(
        json.dumps(
            {
                "agents": [asdict(a) for a in agents],
                "scenarios": [s.key for s in scenarios],
                "repeats": args.repeats,
                "results": [asdict(r) for r in results],
            },
            indent=1,
        )
    )
    print(f"\nwrote {args.out / f'results-{stamp}.md'} and .json", file=sys.stderr)
    if args.write_results:
        write_section(args.write_results, table)
        print(f"updated {args.write_results}", file=sys.stderr)
    return 1 if any(not r.ok for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
