"""How long an agent takes from spawn to its ``initialize`` answer, as an editor waits for it.

Each run spawns the agent as a fresh process (stdio pipes, a temporary state
directory so no real store is touched), writes one ``initialize`` request at once
and measures the wall time until the answer's line arrives; the process is then
closed (stdin EOF) and reaped. The figure is the median of ``--runs`` starts per
agent; the agents are measured in alternation so a busy machine weighs on all alike.

    python benchmarks/startup.py                 # pydantic-ai example vs echo example
    python benchmarks/startup.py --runs 21
    python benchmarks/startup.py --agent examples/llm_agent.py

Plain Python (no acpio in the measuring side).
"""

from __future__ import annotations

import argparse
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11, help="process starts per agent")
    parser.add_argument(
        "--agent", action="append", help="an agent script (repeatable; default: the two examples)"
    )
    args = parser.parse_args()
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
