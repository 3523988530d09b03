"""Server CPU per unit of work, remotely: ``acpio serve`` trees against the TS ``AcpServer``.

Usage: ``python benchmarks/remote_cpu.py [TREE ...] [--no-ts] [--ts-requests-only]
[--repeats 5] [--permissions 10000] [--chunks 20000] [--warmup N] [--timeout 120]
[--scenarios permission:ws,notify:ws,notify:http,reply:ws,reply:http]``

Each TREE is a directory holding the ``acpio`` package (``src`` of a checkout), put
first on ``PYTHONPATH`` of ``acpio serve`` (``bench_agent.py``, the in-memory store,
uvicorn, this interpreter); the TypeScript SDK's ``AcpServer``
(``ts_agent/remote_server.mjs``: Node's http server and ``ws``, the same bench
prompts) runs beside them. No TREE: the acpio this interpreter imports.
``--ts-requests-only`` adds the same TS server answering ``permission N`` with the
requests alone (no tool call, no ``requires_action``/``running`` states: what
``ts_agent/agent.mjs`` sends over stdio), on the permission scenarios.

One run is one fresh server on loopback and every scenario against it, each on a
fresh client connection: ``initialize``, ``session/new``, a warm-up turn of the
same kind in its own session, then the measured turn in a new session. The
warm-up is as long as the measured turn unless ``--warmup`` says otherwise: Node's
JIT takes thousands of round trips to reach its steady cost (the TS server's CPU
per permission round trip falls from about 500 us after 200 to 150 us after
10,000), and a server that has been up a while is warm. The servers take turns,
the order reversed every repeat, so a busy phase of the shared machine falls on
each alike.

Scenarios (``KIND:TRANSPORT``):

- ``permission``: ``permission N`` (N = ``--permissions``), N sequential
  ``session/request_permission`` round trips; the client answers each with the
  ``allow`` option as soon as it is decoded. Both servers send the same messages:
  a tool call, then per round trip ``requires_action``, the request (its subject
  the tool call) and ``running``;
- ``reply`` / ``notify``: ``reply N`` (agent message chunks) or ``notify N``
  (tool-call text chunks), N = ``--chunks``;
- transports: ``ws`` (one WebSocket) or ``http`` (Streamable HTTP: ``initialize``
  POSTed, its ``Acp-Connection-Id``; SSE GET streams for the connection and, with
  ``Acp-Session-Id``, for the session, opened before the session's first POST;
  every message a POST, as the TS SDK's HTTP client sends them).

The metric is the server process's CPU time (user + system, all threads: its
process CPU-time clock, ``/proc/PID/stat`` where that clock is unavailable, plus
that of any live child process) consumed from just before the prompt is sent to
the decoded ``idle`` state that ends the turn, divided by N: microseconds of
server CPU per permission round trip or per chunk. Wall time per unit over the
same interval, the messages and bytes the client received per unit, and the load
average at the start of each run are reported alongside. The client is one raw
asyncio program (``websockets``, ``httpx``, msgspec), identical for all servers;
it checks every turn: the prompt answered, exactly N chunks or N permission
requests, the turn ended ``idle``. Each phase is bounded by ``--timeout`` seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import msgspec
import remote  # benchmarks/remote.py: the client link this benchmark's links extend
import websockets.asyncio.client
from client import _cpu_reader  # the measuring client's CPU clock reader

HERE = Path(__file__).resolve().parent
AGENT = HERE / "bench_agent.py"
TS_SERVER = HERE / "ts_agent" / "remote_server.mjs"
TS = "ts"
TS_REQUESTS_ONLY = "ts-requests-only"
INIT = {"protocolVersion": 2, "info": {"name": "bench", "version": "1"}}
ALLOW = {"outcome": {"outcome": "selected", "optionId": "allow"}}
SCENARIOS = (
    "permission:ws",
    "notify:ws",
    "notify:http",
    "reply:ws",
    "reply:http",
)
CHUNK_KINDS = {"reply": "agent_message_chunk", "notify": "tool_call_content_chunk"}
encode = msgspec.json.encode
decode = msgspec.json.decode


# --- the server's CPU ----------------------------------------------------------------------


def _descendants(pid: int) -> list[int]:
    """``pid`` and its live descendants (``/proc/PID/task/*/children``)."""
    found, queue = [], [pid]
    while queue:
        current = queue.pop()
        found.append(current)
        with contextlib.suppress(OSError):
            for task in Path(f"/proc/{current}/task").iterdir():
                with contextlib.suppress(OSError):
                    queue.extend(int(child) for child in (task / "children").read_text().split())
    return found


class ServerCpu:
    """The CPU time of a server process and its children, read at the start and the end."""

    def __init__(self, pid: int) -> None:
        self.readers = [_cpu_reader(each)[1] for each in _descendants(pid)]

    def now(self) -> float:
        return sum(read() for read in self.readers)


# --- servers --------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def serve(server: str, limit: float) -> AsyncIterator[tuple[str, int]]:
    """A fresh server on loopback (``ts`` or an acpio tree): its ``/acp`` URL and pid."""
    with tempfile.TemporaryFile() as log:
        if server in (TS, TS_REQUESTS_ONLY):
            argv = ["node", str(TS_SERVER)]
            env = dict(os.environ)
            if server == TS_REQUESTS_ONLY:
                env["BENCH_PERMISSION"] = "requests-only"
        else:
            argv = [sys.executable, "-m", "acpio._cli", "serve", "--listen", "127.0.0.1:0"]
            argv += ["--max-connections", "1000", "--store", "memory", f"{AGENT}:BenchAgent"]
            path = [server] if server else []
            env = dict(
                os.environ, PYTHONPATH=os.pathsep.join([*path, os.environ.get("PYTHONPATH", "")])
            )
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdout=asyncio.subprocess.PIPE,
            stderr=log,
            stdin=asyncio.subprocess.DEVNULL,
            env=env,
        )
        try:
            async with asyncio.timeout(limit):
                url = await _listening(server, process, log)
            yield url, process.pid
        finally:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
            try:
                await asyncio.wait_for(process.wait(), 20)
            except TimeoutError:
                process.kill()
                await process.wait()


async def _listening(server: str, process: asyncio.subprocess.Process, log: Any) -> str:
    if server in (TS, TS_REQUESTS_ONLY):
        assert process.stdout is not None
        line = (await process.stdout.readline()).decode().strip()
        if not line:
            raise RuntimeError(f"node exited: {_tail(log)}")
        return f"http://127.0.0.1:{int(line)}/acp"
    while True:  # acpio serve names its URL on stderr: "acpio serve: AGENT on URL"
        log.seek(0)
        for line in log.read().decode(errors="replace").splitlines():
            if line.startswith("acpio serve:") and " on " in line:
                return line.rsplit(" on ", 1)[1].strip()
        if process.returncode is not None:
            raise RuntimeError(f"acpio serve exited {process.returncode}: {_tail(log)}")
        await asyncio.sleep(0.05)


def _tail(log: Any) -> str:
    log.seek(0)
    return log.read().decode(errors="replace")[-2000:]


# --- client links ---------------------------------------------------------------------------


class Link(remote.Link):
    """:class:`remote.Link` (messages out with their session, in, requests), counting the
    bytes received."""

    received_bytes = 0


class WsLink(Link):
    def __init__(self, socket: websockets.asyncio.client.ClientConnection) -> None:
        self.socket = socket

    async def send(self, message: dict[str, Any], session: str | None = None) -> None:
        await self.socket.send(encode(message).decode())

    async def recv(self) -> dict[str, Any]:
        raw = await self.socket.recv()
        self.received_bytes += len(raw)
        return decode(raw)  # type: ignore[no-any-return]

    async def close(self) -> None:
        await self.socket.close()


class HttpLink(Link):
    def __init__(self, url: str) -> None:
        # TCP_NODELAY, as browsers and Node's fetch set it: without it small POSTs wait
        # for delayed ACKs.
        nodelay = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
        limits = httpx.Limits(max_connections=16, max_keepalive_connections=16)
        transport = httpx.AsyncHTTPTransport(socket_options=nodelay, limits=limits)
        self.client = httpx.AsyncClient(timeout=None, transport=transport)
        self.url = url
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.connection_id = ""
        self.tasks: list[asyncio.Task[None]] = []

    async def initialize(self) -> Any:
        body = encode({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
        response = await self.client.post(
            self.url, content=body, headers={"Content-Type": "application/json"}
        )
        response.raise_for_status()
        self.connection_id = response.headers["acp-connection-id"]
        await self._listen(None)
        return decode(response.content)["result"]

    async def _listen(self, session: str | None) -> None:
        headers = {"Accept": "text/event-stream", "Acp-Connection-Id": self.connection_id}
        if session is not None:
            headers["Acp-Session-Id"] = session
        opened: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        async def read() -> None:
            try:
                async with self.client.stream("GET", self.url, headers=headers) as stream:
                    stream.raise_for_status()
                    opened.set_result(None)
                    async for line in stream.aiter_lines():
                        if line.startswith("data:"):
                            self.received_bytes += len(line)
                            await self.queue.put(decode(line[5:]))
            except Exception as exc:
                if not opened.done():
                    opened.set_exception(exc)
                raise

        self.tasks.append(asyncio.create_task(read()))
        await opened

    async def open_session(self, session: str) -> None:
        await self._listen(session)

    async def send(self, message: dict[str, Any], session: str | None = None) -> None:
        headers = {"Content-Type": "application/json", "Acp-Connection-Id": self.connection_id}
        if session is not None:
            headers["Acp-Session-Id"] = session
        response = await self.client.post(self.url, content=encode(message), headers=headers)
        response.raise_for_status()

    async def recv(self) -> dict[str, Any]:
        return await self.queue.get()

    async def close(self) -> None:
        with contextlib.suppress(httpx.HTTPError):
            await self.client.delete(self.url, headers={"Acp-Connection-Id": self.connection_id})
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        await self.client.aclose()


async def open_link(transport: str, url: str) -> Link:
    if transport == "ws":
        link: Link = WsLink(
            await websockets.asyncio.client.connect(
                url.replace("http", "ws", 1),
                max_size=None,
                compression=None,
                ping_interval=None,
                open_timeout=30,
            )
        )
        result = await link.request(0, "initialize", INIT)
    else:
        http = HttpLink(url)
        result = await http.initialize()
        link = http
    if result["protocolVersion"] != 2:
        raise RuntimeError(f"initialize answered {result}")
    return link


async def new_session(link: Link, rid: int) -> str:
    session = str(
        (await link.request(rid, "session/new", {"cwd": "/tmp", "mcpServers": []}))["sessionId"]
    )
    await link.open_session(session)
    return session


# --- one turn -------------------------------------------------------------------------------


@dataclass
class Turn:
    """What the client saw of one turn."""

    units: int = 0
    messages: int = 0
    kinds: dict[str, int] = field(default_factory=dict)


async def turn(link: Link, session: str, kind: str, count: int, rid: int) -> Turn:
    """Prompt ``KIND COUNT`` and read to the turn's ``idle``; checks the turn's shape."""
    prompt = {"sessionId": session, "prompt": [{"type": "text", "text": f"{kind} {count}"}]}
    await link.send(
        {"jsonrpc": "2.0", "id": rid, "method": "session/prompt", "params": prompt}, session
    )
    seen = Turn()
    answered = False
    unit = CHUNK_KINDS.get(kind)
    while True:
        message = await link.recv()
        seen.messages += 1
        method = message.get("method")
        if method == "session/request_permission":
            seen.kinds[method] = seen.kinds.get(method, 0) + 1
            seen.units += 1
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": ALLOW}
            await link.send(answer, session)
        elif method == "session/update":
            update = message["params"]["update"]
            name = str(update.get("sessionUpdate"))
            if name == "state_update":
                name = f"state {update.get('state')}"
            seen.kinds[name] = seen.kinds.get(name, 0) + 1
            if name == unit:
                seen.units += 1
            elif name == "state idle":
                break
        elif message.get("id") == rid:
            if "error" in message:
                raise RuntimeError(f"prompt refused: {message['error']}")
            answered = True
            seen.kinds["prompt answer"] = 1
    if not answered:
        raise RuntimeError("the turn ended before its prompt was answered")
    if seen.units != count:
        raise RuntimeError(f"{kind} {count}: {seen.units} units arrived")
    return seen


@dataclass
class Figures:
    cpu_us: float
    wall_us: float
    messages: float
    bytes: float
    kinds: dict[str, int]


async def scenario(url: str, pid: int, name: str, args: argparse.Namespace) -> Figures:
    """One scenario (``KIND:TRANSPORT``) on a fresh connection: warm-up turn, then measured turn."""
    kind, transport = name.split(":")
    count = args.permissions if kind == "permission" else args.chunks
    async with asyncio.timeout(args.timeout):
        link = await open_link(transport, url)
    try:
        async with asyncio.timeout(args.timeout):
            await turn(link, await new_session(link, 1), kind, args.warmup or count, 2)
            session = await new_session(link, 3)
        cpu = ServerCpu(pid)
        before_bytes = link.received_bytes
        async with asyncio.timeout(args.timeout):
            cpu_start, wall_start = cpu.now(), time.perf_counter()
            seen = await turn(link, session, kind, count, 4)
            wall, used = time.perf_counter() - wall_start, cpu.now() - cpu_start
    finally:
        async with asyncio.timeout(args.timeout):
            await link.close()
    return Figures(
        cpu_us=used / count * 1e6,
        wall_us=wall / count * 1e6,
        messages=seen.messages / count,
        bytes=(link.received_bytes - before_bytes) / count,
        kinds=seen.kinds,
    )


# --- the runs and the table -----------------------------------------------------------------


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _label(server: str) -> str:
    if server == TS_REQUESTS_ONLY:
        return "TS AcpServer, requests only"
    return "TS AcpServer" if server == TS else f"acpio {server or '(installed)'}"


def _stats(values: list[float]) -> str:
    return f"{statistics.median(values):,.1f} ({min(values):,.1f}-{max(values):,.1f})"


@dataclass
class Bench:
    """The servers and scenarios of an invocation, and what its runs gave."""

    args: argparse.Namespace
    servers: list[str]
    scenarios: list[str]
    results: dict[tuple[str, str], list[Figures]] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    loads: list[str] = field(default_factory=list)

    async def run(self, server: str, repeat: int) -> None:
        """One fresh server, every scenario against it."""
        self.loads.append(_load())
        try:
            async with serve(server, self.args.timeout) as (url, pid):
                for name in self.scenarios:
                    if server == TS_REQUESTS_ONLY and not name.startswith("permission:"):
                        continue  # the same server as TS but for `permission N`
                    figures = await scenario(url, pid, name, self.args)
                    self.results.setdefault((server, name), []).append(figures)
                    print(
                        f"run {repeat + 1} {_label(server)} {name}: "
                        f"{figures.cpu_us:.1f} us CPU/unit, {figures.wall_us:.1f} us wall/unit, "
                        f"{figures.messages:.2f} msgs/unit, load {self.loads[-1]}",
                        flush=True,
                    )
        except (
            TimeoutError,
            RuntimeError,
            OSError,
            httpx.HTTPError,
            websockets.WebSocketException,
        ) as exc:
            failure = f"run {repeat + 1} {_label(server)}: failed ({type(exc).__name__}: {exc})"
            self.failures.append(failure)
            print(failure, flush=True)

    def report(self) -> None:
        """The table of medians, the ratios, the messages of a turn, the failures."""
        args = self.args
        print(
            f"\nServer CPU per unit, medians of {args.repeats} interleaved runs (min-max); "
            f"permission N = {args.permissions:,}, chunks N = {args.chunks:,}; "
            f"load average at run starts {min(self.loads)} .. {max(self.loads)}\n"
        )
        print(
            "| scenario | server | server CPU us/unit | wall us/unit | msgs/unit | bytes/unit "
            "| CPU vs TS | CPU vs first |"
        )
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        first = self.servers[0]
        for name in self.scenarios:
            ts_cpu = self._median_cpu(TS, name)
            first_cpu = self._median_cpu(first, name)
            for server in self.servers:
                runs = self.results.get((server, name))
                if not runs:
                    if server != TS_REQUESTS_ONLY or name.startswith("permission:"):
                        print(f"| {name} | {_label(server)} | failed | | | | | |")
                    continue
                cpu = statistics.median(r.cpu_us for r in runs)
                acpio = server not in (TS, TS_REQUESTS_ONLY)
                vs_ts = f"{cpu / ts_cpu:.2f}x" if ts_cpu and acpio else ""
                vs_first = (
                    f"{cpu / first_cpu:.2f}x" if first_cpu and acpio and server != first else ""
                )
                messages = statistics.median(r.messages for r in runs)
                size = statistics.median(r.bytes for r in runs)
                print(
                    f"| {name} | {_label(server)} | {_stats([r.cpu_us for r in runs])} | "
                    f"{_stats([r.wall_us for r in runs])} | {messages:.2f} | {size:,.0f} | "
                    f"{vs_ts} | {vs_first} |"
                )
        print("\nMessages the client received in one measured turn (last run of each):")
        for (server, name), runs in self.results.items():
            shown = ", ".join(f"{k} {v}" for k, v in sorted(runs[-1].kinds.items()))
            print(f"- {name} {_label(server)}: {shown}")
        for failure in self.failures:
            print(failure)

    def _median_cpu(self, server: str, name: str) -> float | None:
        runs = self.results.get((server, name))
        return statistics.median(r.cpu_us for r in runs) if runs else None


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("trees", nargs="*", help="directories that hold the acpio package")
    parser.add_argument("--no-ts", action="store_true", help="leave out the TypeScript server")
    parser.add_argument(
        "--ts-requests-only",
        action="store_true",
        help="also the TS server sending only the permission requests (no tool call or states)",
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--permissions", type=int, default=10000)
    parser.add_argument("--chunks", type=int, default=20000)
    parser.add_argument(
        "--warmup", type=int, help="units of the warm-up turn (default: as many as measured)"
    )
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per phase")
    args = parser.parse_args()
    for name in args.scenarios.split(","):
        kind, _, transport = name.partition(":")
        if kind not in ("permission", *CHUNK_KINDS) or transport not in ("ws", "http"):
            parser.error(f"unknown scenario {name!r} (KIND:TRANSPORT, e.g. permission:ws)")
    for tree in args.trees:
        if not (Path(tree) / "acpio" / "__init__.py").is_file():
            parser.error(f"{tree}: no acpio package there")
    if not args.no_ts and not (TS_SERVER.parent / "node_modules" / "ws").is_dir():
        parser.error("no benchmarks/ts_agent/node_modules: run benchmarks/setup.sh (or --no-ts)")
    for name in ("repeats", "permissions", "chunks", "warmup"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    return args


async def main() -> int:
    args = _arguments()
    servers = [str(Path(tree).resolve()) for tree in args.trees] or [""]
    if not args.no_ts:
        servers.append(TS)
        if args.ts_requests_only:
            servers.append(TS_REQUESTS_ONLY)
    bench = Bench(args, servers, args.scenarios.split(","))
    for repeat in range(args.repeats):
        for server in servers if repeat % 2 == 0 else servers[::-1]:
            await bench.run(server, repeat)
    bench.report()
    return 1 if bench.failures else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
