"""The remote transport against stdio: same agent (bench_agent.py), same scenarios, one client.

Usage: ``python benchmarks/remote.py [--chunks N] [--permissions N] [--idle N]
[--sessions N] [--per-connection K] [--repeats R]``

- reply-chunk streaming: ``notify N`` (N text chunks in one tool call), chunks per second,
  over stdio, WebSocket and Streamable HTTP (SSE);
- permission round trips: ``permission N``, round trips per second, same three transports;
- memory: the server's RSS growth per idle initialized WebSocket connection and per idle
  session (``session/new``), from ``/proc/PID/status``;
- scale: N sessions over WebSocket on one ``acpio serve`` process (K per connection), one
  ``notify 20`` turn each, all at once: every turn must end ``idle``; wall time and the
  server's peak RSS (VmHWM).

The client is one asyncio program (msgspec for JSON, ``websockets`` and ``httpx``), the
server ``acpio serve`` (uvicorn) on loopback; the stdio agent is ``bench_agent.py`` run by
the same interpreter. Figures depend on the machine: compare transports within one run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import socket
import statistics
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import msgspec
import websockets.asyncio.client

HERE = Path(__file__).resolve().parent
AGENT = HERE / "bench_agent.py"
INIT = {"protocolVersion": 2, "info": {"name": "bench", "version": "1"}}
ALLOW = {"outcome": {"outcome": "selected", "optionId": "allow"}}
encode = msgspec.json.encode
decode = msgspec.json.decode


def _rss(pid: int, field: str = "VmRSS") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} for {pid}")


class Link:
    """One client connection: send messages, receive them (any stream) in order of arrival."""

    async def send(self, message: dict[str, Any], session: str | None = None) -> None:
        raise NotImplementedError

    async def recv(self) -> dict[str, Any]:
        raise NotImplementedError

    async def open_session(self, session: str) -> None:
        """Start receiving a session's messages (Streamable HTTP only)."""

    async def close(self) -> None:
        raise NotImplementedError

    async def request(self, rid: int, method: str, params: Any, session: str | None = None) -> Any:
        await self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}, session)
        while True:
            message = await self.recv()
            if message.get("id") == rid and "method" not in message:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]


class StdioLink(Link):
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def send(self, message: dict[str, Any], session: str | None = None) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(encode(message) + b"\n")
        await self.process.stdin.drain()

    async def recv(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = await self.process.stdout.readline()
        if not line:
            raise EOFError
        return decode(line)  # type: ignore[no-any-return]

    async def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        await self.process.wait()


class WsLink(Link):
    def __init__(self, socket: websockets.asyncio.client.ClientConnection) -> None:
        self.socket = socket

    async def send(self, message: dict[str, Any], session: str | None = None) -> None:
        await self.socket.send(encode(message).decode())

    async def recv(self) -> dict[str, Any]:
        return decode(await self.socket.recv())  # type: ignore[no-any-return]

    async def close(self) -> None:
        await self.socket.close()


class HttpLink(Link):
    def __init__(self, client: httpx.AsyncClient, url: str) -> None:
        self.client = client
        self.url = url
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.connection_id = ""
        self.tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        body = encode({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
        response = await self.client.post(
            self.url, content=body, headers={"Content-Type": "application/json"}
        )
        self.connection_id = response.headers["acp-connection-id"]
        await self.queue.put(decode(response.content))
        await self._listen(None)

    async def _listen(self, session: str | None) -> None:
        headers = {"Accept": "text/event-stream", "Acp-Connection-Id": self.connection_id}
        if session is not None:
            headers["Acp-Session-Id"] = session
        opened = asyncio.Event()

        async def read() -> None:
            async with self.client.stream("GET", self.url, headers=headers) as stream:
                opened.set()
                async for line in stream.aiter_lines():
                    if line.startswith("data: "):
                        await self.queue.put(decode(line[6:]))

        self.tasks.append(asyncio.create_task(read()))
        await opened.wait()

    async def open_session(self, session: str) -> None:
        await self._listen(session)

    async def send(self, message: dict[str, Any], session: str | None = None) -> None:
        if message.get("method") == "initialize":
            return  # sent by start()
        headers = {"Content-Type": "application/json", "Acp-Connection-Id": self.connection_id}
        if session is not None:
            headers["Acp-Session-Id"] = session
        await self.client.post(self.url, content=encode(message), headers=headers)

    async def recv(self) -> dict[str, Any]:
        return await self.queue.get()

    async def close(self) -> None:
        await self.client.delete(self.url, headers={"Acp-Connection-Id": self.connection_id})
        for task in self.tasks:
            task.cancel()


@contextlib.asynccontextmanager
async def server() -> AsyncIterator[tuple[str, int]]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "acpio._cli",
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--max-connections",
        "100000",
        f"{AGENT}:BenchAgent",
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    line = (await process.stderr.readline()).decode()
    url = line.split(" on ", 1)[1].strip()
    try:
        yield url, process.pid
    finally:
        process.terminate()
        await process.wait()


async def open_link(kind: str, url: str) -> Link:
    if kind == "stdio":
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            str(AGENT),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=64 * 1024 * 1024,
            env={**os.environ, "ACPIO_SESSION_STORE": ":memory:"},
        )
        link: Link = StdioLink(process)
    elif kind == "ws":
        link = WsLink(
            await websockets.asyncio.client.connect(
                url.replace("http", "ws", 1), max_size=None, open_timeout=30
            )
        )
    else:
        # TCP_NODELAY, as browsers and Node's fetch set it: without it httpx's small POSTs
        # wait for delayed ACKs.
        nodelay = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
        transport = httpx.AsyncHTTPTransport(socket_options=nodelay)
        http = HttpLink(httpx.AsyncClient(timeout=60, transport=transport), url)
        await http.start()
        link = http
    result = await link.request(0, "initialize", INIT)
    assert result["protocolVersion"] == 2
    return link


async def new_session(link: Link, rid: int) -> str:
    session = (await link.request(rid, "session/new", {"cwd": "/tmp"}))["sessionId"]
    await link.open_session(session)
    return str(session)


async def turn(link: Link, session: str, text: str, rid: int) -> tuple[int, int]:
    """Run one prompt to its idle; the (chunks, permission round trips) it took."""
    await link.send(
        {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "session/prompt",
            "params": {"sessionId": session, "prompt": [{"type": "text", "text": text}]},
        },
        session,
    )
    chunks = permissions = 0
    while True:
        message = await link.recv()
        method = message.get("method")
        if method == "session/request_permission":
            permissions += 1
            await link.send({"jsonrpc": "2.0", "id": message["id"], "result": ALLOW}, session)
        elif method == "session/update":
            update = message["params"]["update"]
            kind = update.get("sessionUpdate")
            if kind == "state_update":
                if update.get("state") == "idle":
                    return chunks, permissions
            else:
                chunks += 1  # the tool call's text chunks (and its two status updates)


async def rate(kind: str, url: str, text: str, per: str, repeats: int) -> float:
    figures = []
    for _ in range(repeats):
        link = await open_link(kind, url)
        # bench_agent.py uses one tool call id per session: one turn per session.
        await turn(
            link, await new_session(link, 1), text.split(maxsplit=1)[0] + " 10", 2
        )  # warm up
        session = await new_session(link, 4)
        started = time.perf_counter()
        chunks, permissions = await turn(link, session, text, 3)
        elapsed = time.perf_counter() - started
        figures.append((chunks if per == "chunks" else permissions) / elapsed)
        await link.close()
    return statistics.median(figures)


async def memory(url: str, pid: int, count: int) -> tuple[float, float]:
    await asyncio.sleep(0.5)
    base = _rss(pid)
    links = [await open_link("ws", url) for _ in range(count)]
    await asyncio.sleep(0.5)
    per_connection = (_rss(pid) - base) / count
    before = _rss(pid)
    link = links[0]
    for i in range(count):
        await new_session(link, 10 + i)
    await asyncio.sleep(0.5)
    per_session = (_rss(pid) - before) / count
    for each in links:
        await each.close()
    return per_connection, per_session


async def scale(url: str, pid: int, sessions: int, per_connection: int) -> tuple[float, int, int]:
    connections = (sessions + per_connection - 1) // per_connection
    links = await asyncio.gather(*(open_link("ws", url) for _ in range(connections)))
    plans = []
    for index, link in enumerate(links):
        count = min(per_connection, sessions - index * per_connection)
        ids = [await new_session(link, 10 + i) for i in range(count)]
        plans.append((link, ids))

    async def drive(link: Link, ids: list[str]) -> int:
        # Prompts of one connection go out together; each turn ends with its own idle.
        for i, session in enumerate(ids):
            await link.send(
                {
                    "jsonrpc": "2.0",
                    "id": 1000 + i,
                    "method": "session/prompt",
                    "params": {
                        "sessionId": session,
                        "prompt": [{"type": "text", "text": "notify 20"}],
                    },
                }
            )
        ended = 0
        while ended < len(ids):
            message = await link.recv()
            if message.get("method") == "session/update":
                update = message["params"]["update"]
                if update.get("sessionUpdate") == "state_update" and update.get("state") == "idle":
                    ended += 1
        return ended

    started = time.perf_counter()
    ended = sum(await asyncio.gather(*(drive(link, ids) for link, ids in plans)))
    elapsed = time.perf_counter() - started
    peak = _rss(pid, "VmHWM")
    for link, _ in plans:
        await link.close()
    return elapsed, ended, peak


async def rates_and_memory(args: argparse.Namespace) -> None:
    async with server() as (url, pid):
        print(f"server {url} (pid {pid}); medians of {args.repeats}")
        for name, text, per in (
            ("reply chunks/s", f"notify {args.chunks}", "chunks"),
            ("permission round trips/s", f"permission {args.permissions}", "permissions"),
        ):
            figures = {
                kind: await rate(kind, url, text, per, args.repeats)
                for kind in ("stdio", "ws", "http")
            }
            shown = ", ".join(
                f"{kind} {value:,.0f} ({value / figures['stdio']:.2f}x)"
                for kind, value in figures.items()
            )
            print(f"{name}: {shown}")
        per_connection, per_session = await memory(url, pid, args.idle)
        print(
            f"memory: {per_connection / 1024:.1f} KiB per idle WebSocket connection, "
            f"{per_session / 1024:.1f} KiB per idle session ({args.idle} of each)"
        )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--permissions", type=int, default=2_000)
    parser.add_argument("--idle", type=int, default=200)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--per-connection", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scale-only", action="store_true", help="only the N-sessions run")
    args = parser.parse_args()
    if not args.scale_only:
        await rates_and_memory(args)
    async with server() as (url, pid):
        elapsed, ended, peak = await scale(url, pid, args.sessions, args.per_connection)
        print(
            f"scale: {args.sessions} sessions over WebSocket ({args.per_connection} per "
            f"connection), one turn each: {ended} turns ended idle in {elapsed:.2f}s; "
            f"server peak RSS {peak / 2**20:.0f} MiB"
        )


if __name__ == "__main__":
    asyncio.run(main())
