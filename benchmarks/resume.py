"""What resuming a dropped stream costs, against streaming the same chunks live.

Usage: ``python benchmarks/resume.py [--chunks N] [--pairs P] [--transport http|websocket]``

One ``acpio serve`` process serves ``bench_agent.py`` (``reply N``: N message chunks), with a
retention of ``2 N`` messages. The client is the testing kit's remote transport
(:class:`acpio.testing.RemoteLink`, the one ``MockClient(Remote(...))`` speaks over), reading
the raw lines (no views, no checks). Each pair runs, in alternating order:

- **live**: ``reply N`` read to its end;
- **drop**: ``reply N``; once half the chunks arrived the client drops its streams (TCP closed,
  no goodbye) and resumes from its cursors; the server replays what followed.

The figure is the time from the half-way chunk to the end of the turn: in the drop run it
includes the drop, the reconnect, the resume and the replay; in the live run the same chunks
streamed live. Reported: the median over pairs of drop/live, with both medians. Every run checks
that exactly N chunks arrived (a lost or repeated chunk fails the benchmark).
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import msgspec

from acpio.testing import Remote, RemoteLink

HERE = Path(__file__).resolve().parent
AGENT = HERE / "bench_agent.py"
CHUNK = b'"agent_message_chunk"'
IDLE = b'"state":"idle"'


@contextlib.contextmanager
def server(chunks: int) -> Iterator[str]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "acpio._cli",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--retention-messages",
            str(2 * chunks),
            f"{AGENT}:BenchAgent",
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    line = process.stderr.readline()
    try:
        yield line.split(" on ", 1)[1].strip()
    finally:
        process.terminate()
        process.wait()


class Client:
    """Raw lines over the kit's remote link."""

    def __init__(self, link: RemoteLink, group: anyio.abc.TaskGroup) -> None:
        self.link = link
        self.group = group
        self.pending = b""
        self.lines: list[bytes] = []

    async def start(self) -> None:
        self.streams = await self.link.start(self.group)

    async def send(self, message: dict[str, object]) -> None:
        await self.streams.send.send(msgspec.json.encode(message) + b"\n")

    async def line(self) -> bytes:
        while not self.lines:
            self.pending += await self.streams.receive.receive()
            *lines, self.pending = self.pending.split(b"\n")
            self.lines = lines[::-1]
        return self.lines.pop()

    async def answer(self, request_id: int) -> dict[str, object]:
        marker = b'"id":%d,' % request_id
        while True:
            line = await self.line()
            if marker in line:
                answer: dict[str, object] = msgspec.json.decode(line)
                return answer


async def one_run(url: str, transport: str, chunks: int, drop: bool) -> float:
    kind = "http" if transport == "http" else "websocket"
    async with anyio.create_task_group() as group:
        link = RemoteLink(Remote(url, transport=kind))
        client = Client(link, group)
        await client.start()
        await client.send(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {"protocolVersion": 2, "info": {"name": "bench", "version": "1"}},
            }
        )
        await client.answer(0)
        params = {"cwd": str(HERE), "mcpServers": []}
        await client.send({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": params})
        session = client.answer(1)
        result = (await session)["result"]
        assert isinstance(result, dict)
        prompt = {
            "sessionId": result["sessionId"],
            "prompt": [{"type": "text", "text": f"reply {chunks}"}],
        }
        await client.send({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt})
        seen = 0
        started = 0.0
        resumed = anyio.Event()

        async def dropping() -> None:
            await link.drop()
            resumed.set()

        while True:
            line = await client.line()
            if CHUNK in line:
                seen += 1
                if seen == chunks // 2:
                    started = time.perf_counter()
                    if drop:  # from another task: this one goes on reading what arrives
                        group.start_soon(dropping)
            elif IDLE in line and seen:
                break
        elapsed = time.perf_counter() - started
        if drop:
            await resumed.wait()
        if seen != chunks or link.resumes != drop:
            raise SystemExit(f"{transport}: {seen} chunks arrived, not {chunks}")
        await link.aclose()
        group.cancel_scope.cancel()
    return elapsed


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("--transport", choices=["http", "websocket", "both"], default="both")
    args = parser.parse_args()
    transports = ["http", "websocket"] if args.transport == "both" else [args.transport]
    with server(args.chunks) as url:
        print(f"acpio serve {url}; reply {args.chunks}; {args.pairs} interleaved pairs")
        for transport in transports:
            await one_run(url, transport, args.chunks, drop=False)  # warm up
            live: list[float] = []
            dropped: list[float] = []
            for pair in range(args.pairs):
                order = [False, True] if pair % 2 == 0 else [True, False]
                for drop in order:
                    took = await one_run(url, transport, args.chunks, drop)
                    (dropped if drop else live).append(took)
            ratios = [d / v for d, v in zip(dropped, live, strict=True)]
            print(
                f"{transport:>9}: second half live {statistics.median(live) * 1000:7.1f} ms, "
                f"after a drop {statistics.median(dropped) * 1000:7.1f} ms; "
                f"median ratio {statistics.median(ratios):.2f}x "
                f"(range {min(ratios):.2f}-{max(ratios):.2f})"
            )


if __name__ == "__main__":
    anyio.run(main)
