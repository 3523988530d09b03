"""What acpio's pydantic-ai adapter costs per streamed text delta.

The same pydantic-ai agent (a ``FunctionModel`` streaming N one-word deltas, no
network) does one turn of N deltas two ways, each in a fresh process on asyncio,
alternating:

- **bare**: ``agent.run(..., event_stream_handler=...)`` with a handler that
  consumes every event: pydantic-ai streaming without ACP. The process measures
  its own CPU time around the run and prints it.
- **acp**: the same agent served by ``ACPAgent`` with ``acpio.run`` over real
  stdio pipes, as an editor runs it; every delta becomes an ACP
  ``agent_message_chunk``. This script is the client: it sends the prompt, reads
  lines until the turn's idle ``state_update`` and reads the agent's CPU clock
  (``clock_getcpuclockid``) just before the prompt and just after the idle.

Prints the medians per delta, the overhead per delta and the ratio acp / bare.

    python benchmarks/pydantic_ai_overhead.py [--deltas 20000] [--repeats 5]
"""

# The measuring side imports neither pydantic-ai nor acpio: each mode imports what it runs.
# ruff: noqa: PLC0415

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterable, AsyncIterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from client import _cpu_reader  # noqa: E402  (the measuring client's CPU clock reader)


def make_agent(deltas: int) -> object:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        for i in range(deltas):
            yield f"w{i} "

    return Agent(FunctionModel(stream_function=stream))


def run_bare(deltas: int) -> None:
    from pydantic_ai.messages import AgentStreamEvent
    from pydantic_ai.tools import RunContext

    agent = make_agent(deltas)

    async def consume(ctx: RunContext[None], events: AsyncIterable[AgentStreamEvent]) -> None:
        async for _ in events:
            pass

    async def once() -> float:
        cpu = time.process_time()
        await agent.run("go", event_stream_handler=consume)  # type: ignore[attr-defined]
        return time.process_time() - cpu

    print(json.dumps({"cpu_s": asyncio.run(once())}))


def run_acp(deltas: int) -> None:
    import acpio
    from acpio.adapters.pydantic_ai import ACPAgent

    acpio.run(ACPAgent(make_agent(deltas)))  # type: ignore[arg-type]


def _line(message: dict[str, object]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def measure_bare(deltas: int) -> float:
    out = subprocess.run(
        [sys.executable, __file__, "--bare", str(deltas)],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(json.loads(out.stdout)["cpu_s"])


def measure_acp(deltas: int) -> float:
    agent = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(deltas)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert agent.stdin is not None and agent.stdout is not None
    _, cpu_of = _cpu_reader(agent.pid)
    stdin, stdout = agent.stdin, agent.stdout

    def request(rid: int, method: str, params: dict[str, object]) -> bytes:
        stdin.write(_line({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}))
        stdin.flush()
        marker = f'"id": {rid},'.encode()
        compact = f'"id":{rid},'.encode()
        while True:
            line = stdout.readline()
            if not line:
                raise RuntimeError(f"the agent exited during {method}")
            if marker in line or compact in line:
                return line

    request(1, "initialize", {"protocolVersion": 2})
    session = json.loads(request(2, "session/new", {"cwd": str(HERE), "mcpServers": []}))
    session_id = session["result"]["sessionId"]
    before = cpu_of()
    prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
    stdin.write(_line({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt}))
    stdin.flush()
    chunks = 0
    for line in stdout:
        if b'"agent_message_chunk"' in line:
            chunks += 1
        elif b'"stopReason"' in line:
            break
    cpu = cpu_of() - before
    stdin.close()
    agent.wait(timeout=30)
    if chunks < 1:
        raise RuntimeError("the agent streamed no message chunks")
    return cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deltas", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--bare", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare is not None:
        run_bare(args.bare)
        return
    if args.serve is not None:
        run_acp(args.serve)
        return
    bare: list[float] = []
    acp: list[float] = []
    for _ in range(args.repeats):
        bare.append(measure_bare(args.deltas))
        acp.append(measure_acp(args.deltas))
    n = args.deltas
    bare_cpu, acp_cpu = statistics.median(bare), statistics.median(acp)
    print(f"bare pydantic-ai: {bare_cpu * 1e6 / n:7.1f} us CPU per delta")
    print(f"served over ACP:  {acp_cpu * 1e6 / n:7.1f} us CPU per delta (agent process)")
    print(
        f"overhead {(acp_cpu - bare_cpu) * 1e6 / n:.1f} us per delta; acp / bare = "
        f"{acp_cpu / bare_cpu:.2f}x ({n} deltas, {args.repeats} alternating runs, medians)"
    )


if __name__ == "__main__":
    main()
