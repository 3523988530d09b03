"""Memory of one idle session: bytes per ``session/new`` that never prompted, in one process.

The acpio bench agent (``bench_agent.py``) is served with :func:`acpio.serve` over
:func:`acpio.rpc.memory_stream_pair` with the in-memory store; a raw client in the
same process sends ``initialize`` (v1 or v2) and then opens ``--sessions`` sessions
(5,000 by default), answers read and dropped. A few warm-up sessions go first (lazy
imports, the method table, caches), then:

- **RSS**: the process's resident set growth (``/proc/self/statm``) over the N
  sessions, divided by N, with tracemalloc off: what a server pays per idle session;
- **tracemalloc**: the difference of two snapshots around the N sessions, divided
  by N (Python allocations only, no allocator overhead), and with ``--top K`` the K
  allocation sites (file:line) that grew most, per session.

Each measurement runs in a fresh interpreter; ``--repeats`` of them per source tree
(a directory that holds the ``acpio`` package, first on ``PYTHONPATH``) and
protocol, the trees taking turns; the medians are printed.

    git worktree add --detach /tmp/before main
    python benchmarks/session_memory.py /tmp/before/src src --repeats 3 --top 15
    python benchmarks/session_memory.py src --sessions 10000 --protocol 2
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
WARMUP = 50


def _rss() -> int:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


async def _measure(protocol: int, sessions: int, trace: bool, top: int) -> dict[str, object]:
    """Open ``sessions`` idle sessions on one in-process connection; their memory per session."""
    import tracemalloc  # noqa: PLC0415

    import anyio  # noqa: PLC0415
    import msgspec  # noqa: PLC0415

    import acpio  # noqa: PLC0415
    from acpio._store.history import InMemorySessionStore  # noqa: PLC0415

    sys.path.insert(0, str(HERE))
    from bench_agent import BenchAgent  # noqa: PLC0415

    client, agent_side = acpio.rpc.memory_stream_pair()
    decoder = msgspec.json.Decoder()
    pending = b""
    next_id = 0

    async def request(method: str, params: dict[str, object]) -> dict[str, object]:
        nonlocal pending, next_id
        next_id += 1
        line = {"jsonrpc": "2.0", "id": next_id, "method": method, "params": params}
        await client.send.send(msgspec.json.encode(line) + b"\n")
        while True:
            while b"\n" in pending:
                raw, _, pending = pending.partition(b"\n")
                message = decoder.decode(raw)
                if message.get("id") == next_id:
                    if "error" in message:
                        raise RuntimeError(f"{method}: {message['error']}")
                    result: dict[str, object] = message["result"]
                    return result
            pending += await client.receive.receive()

    if protocol == 1:
        init: dict[str, object] = {"protocolVersion": 1, "clientCapabilities": {}}
    else:
        init = {"protocolVersion": 2, "info": {"name": "session-memory", "version": "1"}}
    new: dict[str, object] = {"cwd": "/tmp", "mcpServers": []}
    # Every session stays active: the store keeps them all (none is evictable anyway).
    store = InMemorySessionStore(max_records=sessions + WARMUP + 1)
    limits = acpio.AgentLimits(max_sessions=sessions + WARMUP + 1)
    out: dict[str, object] = {}
    async with anyio.create_task_group() as group:
        group.start_soon(lambda: acpio.serve(BenchAgent(), agent_side, store=store, limits=limits))
        await request("initialize", init)
        for _ in range(WARMUP):
            await request("session/new", new)
        gc.collect()
        if trace:
            tracemalloc.start()
            before = tracemalloc.take_snapshot()
        rss_before = _rss()
        for _ in range(sessions):
            await request("session/new", new)
        pending = b""
        gc.collect()
        if trace:
            after = tracemalloc.take_snapshot()
            tracemalloc.stop()
            stats = after.compare_to(before, "lineno")
            out["traced"] = sum(s.size_diff for s in stats) / sessions
            out["sites"] = [
                [f"{s.traceback[0].filename}:{s.traceback[0].lineno}", s.size_diff / sessions]
                for s in stats[:top]
            ]
        else:
            out["rss"] = (_rss() - rss_before) / sessions
        await client.send.aclose()
        group.cancel_scope.cancel()
    return out


def _run(src: str, protocol: int, sessions: int, trace: bool, top: int) -> dict[str, object]:
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))
    )
    argv = [sys.executable, __file__, "--child", str(protocol), str(sessions), str(int(trace))]
    done = subprocess.run([*argv, str(top)], env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{src}: run failed:\n{done.stderr}")
    result: dict[str, object] = json.loads(done.stdout)
    return result


def _short(filename: str) -> str:
    marker = f"{os.sep}acpio{os.sep}"
    if marker in filename:
        return "acpio/" + filename.rsplit(marker, 1)[1]
    return os.sep.join(Path(filename).parts[-2:])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("sources", nargs="*", default=[str(HERE.parent / "src")])
    parser.add_argument("--sessions", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--protocol", type=int, choices=(1, 2), action="append")
    parser.add_argument("--top", type=int, default=0, help="allocation sites to show")
    parser.add_argument("--child", nargs=4, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        import anyio  # noqa: PLC0415

        protocol, sessions, trace, top = args.child
        result = anyio.run(_measure, protocol, sessions, bool(trace), top)
        print(json.dumps(result))
        return 0
    width = max(len(src) for src in args.sources)
    for protocol in args.protocol or [2, 1]:
        rss: dict[str, list[float]] = {src: [] for src in args.sources}
        traced: dict[str, list[float]] = {src: [] for src in args.sources}
        sites: dict[str, dict[str, list[float]]] = {src: {} for src in args.sources}
        for repeat in range(args.repeats):
            order = args.sources if repeat % 2 == 0 else args.sources[::-1]
            for src in order:
                rss[src].append(float(_run(src, protocol, args.sessions, False, 0)["rss"]))  # type: ignore[arg-type]
                result = _run(src, protocol, args.sessions, True, args.top)
                traced[src].append(float(result["traced"]))  # type: ignore[arg-type]
                for site, size in result.get("sites", []):  # type: ignore[attr-defined]
                    sites[src].setdefault(site, []).append(size)
        print(f"ACP v{protocol}, {args.sessions} idle sessions, medians of {args.repeats}")
        for src in args.sources:
            print(
                f"  {src:{width}}  RSS {statistics.median(rss[src]):7.0f} B/session"
                f"  ({min(rss[src]):.0f}-{max(rss[src]):.0f})"
                f"  tracemalloc {statistics.median(traced[src]):7.0f} B/session"
            )
            ranked = sorted(sites[src].items(), key=lambda kv: -statistics.median(kv[1]))
            for site, sizes in ranked[: args.top]:
                print(f"      {statistics.median(sizes):7.0f}  {_short(site)}")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
