"""How long an agent takes from spawn to its ``initialize`` answer, as an editor waits for it.

Each run spawns the agent as a fresh process (stdio pipes, a temporary state
directory so no real store is touched), writes one ``initialize`` request at once
and measures the wall time until the answer's line arrives; the process is then
closed (stdin EOF) and reaped. The figure is the median of ``--runs`` starts per
agent; the agents are measured in alternation so a busy machine weighs on all alike.

    python benchmarks/startup.py                 # pydantic-ai example vs echo example
    python benchmarks/startup.py --runs 21
    python benchmarks/startup.py --agent examples/llm_agent.py
    python benchmarks/startup.py --import-cost     # what `import acpio` adds (guard.py checks it)

``--import-cost`` measures what ``import acpio`` adds to ``import anyio, msgspec``
(the two dependencies an agent loads anyway): CPU seconds (user + system, the
kernel's accounting of each finished child) of ``python -c "import anyio,
msgspec"`` and of the same with ``acpio``, started in turn, the median of the
pairwise differences. The checkout's ``src`` is compiled first and the children
run without ``PYTHONDONTWRITEBYTECODE``, so they read bytecode as an installed
package does. The target (:data:`IMPORT_TARGET_MS`): import only what the first
``initialize`` needs.

Plain Python (no acpio in the measuring side).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_AGENTS = ("examples/pydantic_ai_agent.py", "examples/echo_agent.py")
INITIALIZE = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": {}},
        }
    )
    + "\n"
).encode()


def one_start(agent: Path, state_dir: str) -> float:
    """Seconds from spawn to the ``initialize`` answer's line."""
    env = {**os.environ, "ACPIO_STATE_DIR": state_dir, "XDG_STATE_HOME": state_dir}
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, str(agent)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=REPO,
        env=env,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(INITIALIZE)
        process.stdin.flush()
        line = process.stdout.readline()
        elapsed = time.perf_counter() - started
        answer = json.loads(line)
        if answer.get("id") != 0 or "result" not in answer:
            raise RuntimeError(f"{agent.name} answered initialize with {line!r}")
        process.stdin.close()
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return elapsed


IMPORT_TARGET_MS = 60.0
BASE_IMPORT = "import anyio, msgspec"
ACPIO_IMPORT = "import anyio, msgspec, acpio"


def _child_cpu(code: str, env: dict[str, str]) -> float:
    """CPU seconds (user + system) of one ``python -c code``, as the kernel accounts them."""
    process = subprocess.Popen([sys.executable, "-c", code], env=env, cwd=REPO)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"python -c {code!r} exited with {process.returncode}")
    return usage.ru_utime + usage.ru_stime


def import_cost(runs: int = 21) -> tuple[float, float, float]:
    """Seconds of CPU: median ``import anyio, msgspec``, median with ``acpio``, and the median
    of the pairwise differences (what ``import acpio`` adds), over ``runs`` pairs."""
    src = REPO / "src"
    compileall.compile_dir(src / "acpio", quiet=1)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), os.environ.get("PYTHONPATH")]))
    for code in (BASE_IMPORT, ACPIO_IMPORT):  # warm the page cache, write what is missing
        _child_cpu(code, env)
    base: list[float] = []
    full: list[float] = []
    for turn in range(runs):
        order = (BASE_IMPORT, ACPIO_IMPORT) if turn % 2 == 0 else (ACPIO_IMPORT, BASE_IMPORT)
        for code in order:
            (base if code == BASE_IMPORT else full).append(_child_cpu(code, env))
    added = statistics.median(f - b for f, b in zip(full, base, strict=True))
    return statistics.median(base), statistics.median(full), added


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11, help="process starts per agent")
    parser.add_argument(
        "--agent", action="append", help="an agent script (repeatable; default: the two examples)"
    )
    parser.add_argument(
        "--import-cost",
        action="store_true",
        help="what `import acpio` adds to `import anyio, msgspec` (guard.py: at most 60 ms)",
    )
    args = parser.parse_args()
    if args.import_cost:
        base, full, added = import_cost(args.runs)
        print(
            f"import anyio, msgspec: {base * 1000:.0f} ms CPU; with acpio: {full * 1000:.0f} ms; "
            f"acpio adds {added * 1000:.0f} ms (median of {args.runs} pairs; "
            f"target {IMPORT_TARGET_MS:.0f} ms)"
        )
        return 0 if added * 1000 <= IMPORT_TARGET_MS else 1
    agents = [REPO / a for a in (args.agent or DEFAULT_AGENTS)]
    times: dict[Path, list[float]] = {agent: [] for agent in agents}
    with tempfile.TemporaryDirectory(prefix="acpio-startup-") as state_dir:
        for agent in agents:  # a first, unmeasured start writes the bytecode caches
            one_start(agent, state_dir)
        for _ in range(args.runs):
            for agent in agents:
                times[agent].append(one_start(agent, state_dir))
    for agent, runs in times.items():
        shown = agent.relative_to(REPO) if agent.is_relative_to(REPO) else agent
        print(
            f"{shown}: median {statistics.median(runs) * 1000:.0f} ms"
            f" (min {min(runs) * 1000:.0f}, max {max(runs) * 1000:.0f}, {len(runs)} starts)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
