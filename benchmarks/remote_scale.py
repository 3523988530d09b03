"""Ten thousand sessions on one process: ``acpio serve`` against the TypeScript SDK's ``AcpServer``.

Usage: ``python benchmarks/remote_scale.py [--connections 1000] [--per-connection 10]
[--turns 1000] [--reply 100] [--repeats 3] [--servers acpio,ts] [--timeout 300]``

Each run starts one fresh server on loopback (acpio: ``acpio serve`` with
``bench_agent.py``, the in-memory store and ``--max-sessions`` raised; TS:
``ts_agent/remote_server.mjs``, the SDK's ``AcpServer`` on Node's http server and
``ws``) and drives it with the same raw client (one asyncio process, ``websockets``,
msgspec), ACP draft v2 over WebSocket:

- setup: ``--connections`` WebSockets opened and initialized at once, each then
  creating ``--per-connection`` sessions one after another; the time until the
  last session exists, and the server's CPU time meanwhile (``/proc``, every thread
  of the process);
- turns: one session of each of ``--turns`` connections prompted ``reply N`` at
  once; each turn's latency (its prompt written to its ``idle`` read), p50 and p90;
- peak RSS: the server's VmHWM (``/proc``; for TS the node process) after all of it.

Runs alternate between the servers (``--repeats`` each); the table shows medians.
Each phase is bounded by ``--timeout`` seconds (a run past it is reported failed).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import resource
import statistics
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import websockets.asyncio.client
from client import _cpu_reader, _vm_hwm  # the measuring client's readers of /proc

HERE = Path(__file__).resolve().parent
AGENT = HERE / "bench_agent.py"
TS_SERVER = HERE / "ts_agent" / "remote_server.mjs"
INIT = {"protocolVersion": 2, "info": {"name": "bench", "version": "1"}}
encode = msgspec.json.encode
decode = msgspec.json.decode


def _raise_file_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the servers inherit it


@contextlib.asynccontextmanager
async def serve(kind: str, sessions: int, connections: int) -> AsyncIterator[tuple[str, int]]:
    """A fresh server; its WebSocket URL and the pid whose memory is measured."""
    if kind == "acpio":
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "acpio._cli",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--max-connections",
            str(connections + 16),
            "--max-sessions",
            str(sessions + 16),
            f"{AGENT}:BenchAgent",
            stderr=asyncio.subprocess.PIPE,
        )
        assert process.stderr is not None
        line = (await process.stderr.readline()).decode()
        url = line.split(" on ", 1)[1].strip()
    else:
        process = await asyncio.create_subprocess_exec(
            "node", str(TS_SERVER), stdout=asyncio.subprocess.PIPE
        )
        assert process.stdout is not None
        port = int((await process.stdout.readline()).decode())
        url = f"http://127.0.0.1:{port}/acp"
    try:
        yield url.replace("http", "ws", 1), process.pid
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        try:
            await asyncio.wait_for(process.wait(), 20)
        except TimeoutError:
            process.kill()
            await process.wait()


class Client:
    """One WebSocket: requests by id, and each session's turn end."""

    def __init__(self, socket: websockets.asyncio.client.ClientConnection) -> None:
        self.socket = socket
        self.answers: dict[int, asyncio.Future[Any]] = {}
        self.idle: dict[str, asyncio.Future[float]] = {}
        self.next_id = 0
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        async for raw in self.socket:
            message = decode(raw)
            if "method" not in message:
                future = self.answers.pop(message.get("id"), None)
                if future is not None and not future.done():
                    if "error" in message:
                        future.set_exception(RuntimeError(str(message["error"])))
                    else:
                        future.set_result(message["result"])
            elif message["method"] == "session/update":
                params = message["params"]
                update = params["update"]
                if update.get("sessionUpdate") == "state_update" and update.get("state") == "idle":
                    ended = self.idle.pop(params["sessionId"], None)
                    if ended is not None:
                        ended.set_result(time.perf_counter())

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        self.next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.answers[self.next_id] = future
        body = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        await self.socket.send(encode(body).decode())
        return await future

    async def turn(self, session: str, text: str) -> float:
        ended: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self.idle[session] = ended
        started = time.perf_counter()
        await self.request(
            "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": text}]}
        )
        return await ended - started

    async def close(self) -> None:
        await self.socket.close()
        self.reader.cancel()


async def _open(url: str, per_connection: int) -> tuple[Client, list[str]]:
    socket = await websockets.asyncio.client.connect(
        url, max_size=None, open_timeout=120, compression=None, ping_interval=None
    )
    client = Client(socket)
    await client.request("initialize", INIT)
    sessions = [
        str((await client.request("session/new", {"cwd": "/tmp", "mcpServers": []}))["sessionId"])
        for _ in range(per_connection)
    ]
    return client, sessions


async def run(kind: str, args: argparse.Namespace) -> dict[str, float]:
    total = args.connections * args.per_connection
    async with serve(kind, total, args.connections) as (url, pid):
        cpu_seconds = _cpu_reader(pid)[1]
        started, cpu_before = time.perf_counter(), cpu_seconds()
        async with asyncio.timeout(args.timeout):
            opened = await asyncio.gather(
                *(_open(url, args.per_connection) for _ in range(args.connections))
            )
        setup = time.perf_counter() - started
        setup_cpu = cpu_seconds() - cpu_before
        if sum(len(sessions) for _, sessions in opened) != total:
            raise RuntimeError("not every session was created")
        chosen = opened[: args.turns]
        text = f"reply {args.reply}"
        async with asyncio.timeout(args.timeout):
            turns = [client.turn(sessions[0], text) for client, sessions in chosen]
            latencies = sorted(await asyncio.gather(*turns))
        peak = _vm_hwm(pid) or 0
        for client, _ in opened:
            await client.close()
    return {
        "setup_s": setup,
        "setup_cpu_s": setup_cpu,
        "peak_mib": peak / 2**20,
        "p50_ms": statistics.median(latencies) * 1000,
        "p90_ms": latencies[int(len(latencies) * 0.9)] * 1000,
        "last_ms": latencies[-1] * 1000,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=1000)
    parser.add_argument("--per-connection", type=int, default=10)
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--reply", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--servers", default="acpio,ts")
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()
    _raise_file_limit()
    kinds = args.servers.split(",")
    results: dict[str, list[dict[str, float]]] = {kind: [] for kind in kinds}
    for repeat in range(args.repeats):
        order = kinds if repeat % 2 == 0 else kinds[::-1]
        for kind in order:
            try:
                figures = await run(kind, args)
            except (TimeoutError, RuntimeError, OSError) as exc:
                print(f"{kind} run {repeat + 1}: failed ({type(exc).__name__}: {exc})")
                continue
            results[kind].append(figures)
            shown = ", ".join(f"{name} {value:.2f}" for name, value in figures.items())
            print(f"{kind} run {repeat + 1}: {shown}", flush=True)
    total = args.connections * args.per_connection
    print(
        f"\n{total:,} sessions over {args.connections:,} WebSockets, {args.turns:,} concurrent "
        f"`reply {args.reply}` turns; medians of {args.repeats}\n"
    )
    print("| server | setup s | setup CPU s | peak RSS MiB | p50 turn ms | p90 turn ms |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for kind, runs in results.items():
        if not runs:
            print(f"| {kind} | failed | | | | |")
            continue

        def med(name: str, runs: list[dict[str, float]] = runs) -> float:
            return statistics.median(r[name] for r in runs)

        print(
            f"| {kind} | {med('setup_s'):.2f} | {med('setup_cpu_s'):.2f} | {med('peak_mib'):.0f} | "
            f"{med('p50_ms'):.0f} | {med('p90_ms'):.0f} |"
        )


if __name__ == "__main__":
    asyncio.run(main())
