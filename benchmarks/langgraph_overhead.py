"""What acpio's LangGraph adapter costs per streamed token.

The same compiled graph (one model node on langchain-core's fake chat model,
streaming N one-word tokens, no network; an ``InMemorySaver`` checkpointer) does
one turn of N tokens two ways, each in a fresh process on asyncio, alternating:

- **bare**: ``graph.astream(..., stream_mode="messages")`` consumed to the end:
  LangGraph token streaming without ACP. The process measures its own CPU time
  around the run and prints it.
- **acp**: the same graph served by ``ACPAgent`` with ``acpio.run`` over real
  stdio pipes, as an editor runs it; every token becomes an ACP
  ``agent_message_chunk``. This script is the client: it sends the prompt, reads
  lines until the turn's idle and reads the agent's CPU clock
  (``clock_getcpuclockid``) just before the prompt and just after the idle. The
  turn includes the adapter's end-of-turn work (the thread exported and saved
  with the session).

Prints the medians per token, the overhead per token and the ratio acp / bare.

    python benchmarks/langgraph_overhead.py [--tokens 20000] [--repeats 5]
"""

# The measuring side imports neither LangGraph nor acpio: each mode imports what it runs.
# ruff: noqa: PLC0415

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "examples"))

from client import _cpu_reader  # noqa: E402  (the measuring client's CPU clock reader)


def make_graph(tokens: int, *, checkpointer: bool) -> Any:
    from collections.abc import Iterator

    from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph_agent import ScriptedChatModel

    class Tokens(ScriptedChatModel):
        def _chunks(self, messages: list[BaseMessage]) -> Iterator[AIMessageChunk]:
            for i in range(tokens):
                yield AIMessageChunk(content=f"w{i} ")

    model = Tokens(script=lambda messages: AIMessage(content=""))

    async def call_model(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"], config)]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", call_model)
    builder.add_edge(START, "model")
    return builder.compile(checkpointer=InMemorySaver() if checkpointer else None)


def run_bare(tokens: int) -> None:
    graph = make_graph(tokens, checkpointer=True)

    async def once() -> tuple[float, int]:
        cpu = time.process_time()
        seen = 0
        config = {"configurable": {"thread_id": "bench"}}
        async for _ in graph.astream(
            {"messages": [("user", "go")]}, config, stream_mode="messages"
        ):
            seen += 1
        return time.process_time() - cpu, seen

    cpu, seen = asyncio.run(once())
    print(json.dumps({"cpu_s": cpu, "seen": seen}))


def run_acp(tokens: int) -> None:
    import acpio
    from acpio.adapters.langgraph import ACPAgent

    acpio.run(ACPAgent(make_graph(tokens, checkpointer=False)))


def _line(message: dict[str, object]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def measure_bare(tokens: int) -> float:
    out = subprocess.run(
        [sys.executable, __file__, "--bare", str(tokens)],
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(out.stdout)
    if result["seen"] < tokens:
        raise RuntimeError(f"the graph streamed {result['seen']} of {tokens} tokens")
    return float(result["cpu_s"])


def measure_acp(tokens: int, state_dir: str) -> float:
    agent = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(tokens)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "ACPIO_STATE_DIR": state_dir},
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

    request(
        1,
        "initialize",
        {"protocolVersion": 2, "info": {"name": "bench", "version": "1"}, "capabilities": {}},
    )
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
    agent.wait(timeout=60)
    if chunks < tokens:
        raise RuntimeError(f"the agent streamed {chunks} of {tokens} chunks")
    return cpu


def main() -> None:
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=20000)
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
    with tempfile.TemporaryDirectory() as state_dir:
        for _ in range(args.repeats):
            bare.append(measure_bare(args.tokens))
            acp.append(measure_acp(args.tokens, state_dir))
    n = args.tokens
    bare_cpu, acp_cpu = statistics.median(bare), statistics.median(acp)
    print(f"bare LangGraph:  {bare_cpu * 1e6 / n:7.1f} us CPU per token")
    print(f"served over ACP: {acp_cpu * 1e6 / n:7.1f} us CPU per token (agent process)")
    print(
        f"overhead {(acp_cpu - bare_cpu) * 1e6 / n:.1f} us per token; acp / bare = "
        f"{acp_cpu / bare_cpu:.2f}x ({n} tokens, {args.repeats} alternating runs, medians)"
    )


if __name__ == "__main__":
    main()
