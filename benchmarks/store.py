"""The durable session stores against the in-memory store: alternating runs, and their size.

The acpio bench agent (``acpio.run()``) runs each scenario once with
``ACPIO_SESSION_STORE=memory``, once with a fresh SQLite file and once with a
fresh PostgreSQL database, the order rotating every repeat, so a slow phase of
the machine hits each alike; the medians and their ratios are printed (targets:
SQLite at least 0.8x the in-memory store, PostgreSQL at least 0.8x SQLite).
PostgreSQL is a private server this script starts (``initdb``/``pg_ctl`` on a
temporary directory, default settings, as the ``postgres`` user when run as
root) unless ``--postgres URL`` names one (each run gets a database of its
own there); ``--no-postgres`` leaves it out. Then the
store size per 10,000 updates: 10,000 streamed message chunks recorded
in-process (the compressed rows while the session is served, the snapshot and
the file once it was closed), and the file after the bench agent's ``notify
10000`` (10,000 ``tool_call_content_chunk`` s, of which replay keeps the last
1,000) once the agent exited (the WAL is checkpointed into the file on close).

    python benchmarks/store.py                       # notify 100000, both terminals, 6 repeats
    python benchmarks/store.py --quick --repeats 2   # a tenth of the sizes
    python benchmarks/store.py --scenarios notify:20000 --repeats 10
    python benchmarks/store.py --postgres postgresql://user@host/db
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import json
import os
import pwd
import random
import secrets
import shutil
import socket
import sqlite3
import statistics
import string
import subprocess
import sys
import tempfile
import urllib.parse
from collections.abc import Iterator, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
AGENT = HERE / "bench_agent.py"
FULL = ["notify:100000", "terminal:67108864:65536", "terminal:8388608:1024"]
QUICK = ["notify:10000", "terminal:8388608:65536", "terminal:1048576:1024"]


def run_once(scenario: Sequence[str], store: str) -> dict[str, object]:
    """One run of ``client.py`` against the acpio bench agent with ``store`` as its store."""
    env = dict(os.environ, ACPIO_SESSION_STORE=store)
    argv = [sys.executable, str(HERE / "client.py"), "--", sys.executable, str(AGENT), "--"]
    done = subprocess.run([*argv, *scenario], env=env, capture_output=True, text=True, check=False)
    result: dict[str, object] = json.loads(done.stdout)
    if not result.get("ok"):
        raise SystemExit(f"{store}: run failed: {result.get('error')}")
    return result


def _median(runs: list[dict[str, object]], key: str) -> float:
    return statistics.median(float(r[key]) for r in runs)  # type: ignore[arg-type]


KINDS = ("memory", "sqlite", "postgres")


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """A private PostgreSQL server on a temporary directory (loopback, a free port)."""

    def binary(name: str) -> str:
        found = shutil.which(name) or next(
            iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None
        )
        if found is None:
            raise SystemExit(f"{name} not found: install PostgreSQL or pass --no-postgres")
        return found

    root = Path(tempfile.mkdtemp(prefix="acpio-bench-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root
        user = pwd.getpwnam("postgres")
        os.chown(root, user.pw_uid, user.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    data = os.fspath(root / "data")
    subprocess.run(
        [*as_user, binary("initdb"), "-D", data, "-A", "trust", "-U", "acpio"],
        check=True,
        capture_output=True,
    )
    options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1"
    pg_ctl = binary("pg_ctl")
    log = os.fspath(root / "log")
    subprocess.run(
        [*as_user, pg_ctl, "-D", data, "-l", log, "-o", options, "-w", "start"],
        check=True,
        capture_output=True,
    )
    try:
        yield f"postgresql://acpio@127.0.0.1:{port}/postgres"
    finally:
        stop = [*as_user, pg_ctl, "-D", data, "-m", "fast", "stop"]
        subprocess.run(stop, check=False, capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def fresh_databases(server: str, count: int) -> list[str]:
    """``count`` new databases on ``server`` with the store's tables and no session: their
    URLs. Made before the runs, then a checkpoint: creating a database writes a lot, and
    a run must not share the disk with that (a deployment's tables exist already)."""
    import psycopg  # noqa: PLC0415 - the postgres extra

    from acpio.store import PostgresSessionStore  # noqa: PLC0415

    urls: list[str] = []
    with psycopg.connect(server, autocommit=True) as admin:
        for _ in range(count):
            name = f"bench_{secrets.token_hex(6)}"
            admin.execute(f"CREATE DATABASE {name}".encode())
            url = urllib.parse.urlsplit(server)._replace(path=f"/{name}")
            urls.append(urllib.parse.urlunsplit(url))
            PostgresSessionStore(urls[-1]).close()
        with contextlib.suppress(psycopg.Error):  # needs a superuser or pg_checkpoint
            admin.execute(b"CHECKPOINT")
    return urls


def compare(
    scenario: str, repeats: int, work: Path, postgres: str | None
) -> dict[str, tuple[float, float, float]]:
    """Per store: the medians of throughput, agent CPU per unit and start-up."""
    parts = scenario.split(":")
    kinds = [kind for kind in KINDS if kind != "postgres" or postgres is not None]
    runs: dict[str, list[dict[str, object]]] = {kind: [] for kind in kinds}
    databases = fresh_databases(postgres, repeats) if postgres is not None else []
    for repeat in range(repeats):
        order = kinds[repeat % len(kinds) :] + kinds[: repeat % len(kinds)]
        for kind in order:
            if kind == "memory":
                store = "memory"
            elif kind == "sqlite":
                store = str(work / f"{kind}-{repeat}.sqlite3")
            else:
                store = databases[repeat]
            runs[kind].append(run_once(parts, store))
    return {
        kind: (
            _median(found, "throughput"),
            _median(found, "cpu_per_unit_s"),
            _median(found, "startup_s"),
        )
        for kind, found in runs.items()
    }


def store_size(updates: int, work: Path) -> tuple[int, int, int]:
    """The file's bytes after ``notify <updates>``, its snapshot and event row counts."""
    path = work / "size.sqlite3"
    run_once(["notify", str(updates)], str(path))
    wal = Path(f"{path}-wal")
    size = path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
    with sqlite3.connect(path) as conn:
        snapshots = conn.execute("SELECT count(*) FROM snapshots").fetchone()[0]
        events = conn.execute("SELECT count(*) FROM events").fetchone()[0]
    return size, snapshots, events


async def _record_updates(path: Path, updates: int) -> tuple[int, int, int, int]:
    """Record ``updates`` streamed message chunks (100 messages of ``updates / 100``
    chunks of five random words, about 30 bytes of text each) in one session; sizes in
    the file while it is served (rows) and after it was closed (one snapshot)."""
    import acpio  # noqa: PLC0415 - the agent runs need no acpio in this process
    from acpio import schema  # noqa: PLC0415

    rng = random.Random(15)
    # A vocabulary of random words: compresses about as well as prose, not better.
    words = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 9))) for _ in range(500)]
    store = acpio.store.SqliteSessionStore(path)
    record = await store.create("size", "/w", [])
    for index in range(updates):
        text = " ".join(rng.choices(words, k=5)) + " "
        record.history.record(
            schema.AgentMessageChunk(
                message_id=f"msg_{index * 100 // updates:04d}",
                content=schema.TextContent(text=text),
            )
        )
    await store.flush()
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT coalesce(sum(length(data)), 0) FROM events").fetchone()[0]
    file_rows = path.stat().st_size + Path(f"{path}-wal").stat().st_size
    await store.release(record)
    store.close()
    with sqlite3.connect(path) as conn:
        snapshot = conn.execute("SELECT sum(length(data)) FROM snapshots").fetchone()[0]
    return rows, file_rows, snapshot, path.stat().st_size


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scenarios", help="comma-separated, e.g. notify:100000")
    parser.add_argument("--repeats", type=int, default=6)
    parser.add_argument("--quick", action="store_true", help="a tenth of the sizes")
    parser.add_argument("--postgres", help="a PostgreSQL server URL (else one is started)")
    parser.add_argument("--no-postgres", action="store_true", help="SQLite and memory only")
    args = parser.parse_args(argv)
    scenarios = args.scenarios.split(",") if args.scenarios else QUICK if args.quick else FULL
    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="acpio-store-bench-"))
        postgres: str | None = None
        if not args.no_postgres:
            postgres = args.postgres or stack.enter_context(postgres_server())
        work = Path(tmp)
        print(
            "| scenario | in-memory | SQLite | PostgreSQL | SQLite/memory | PostgreSQL/SQLite "
            "| CPU/unit in-memory | CPU/unit SQLite | CPU/unit PostgreSQL "
            "| start-up in-memory | start-up SQLite | start-up PostgreSQL |"
        )
        print("| --- " * 12 + "|")
        for scenario in scenarios:
            medians = compare(scenario, args.repeats, work, postgres)
            notify = scenario.startswith("notify")
            # client.py counts notify in messages and terminals in MiB.
            unit, cpu_unit, cpu_scale = (
                ("msgs/s", "µs/msg", 1e6) if notify else ("MiB/s", "ms/MiB", 1e3)
            )
            absent = (float("nan"),) * 3
            memory, sqlite, pg = (medians.get(kind, absent) for kind in KINDS)
            print(
                f"| {scenario} | {memory[0]:,.0f} {unit} | {sqlite[0]:,.0f} {unit} | "
                f"{pg[0]:,.0f} {unit} | {sqlite[0] / memory[0]:.2f}x | {pg[0] / sqlite[0]:.2f}x | "
                f"{memory[1] * cpu_scale:.2f} {cpu_unit} | {sqlite[1] * cpu_scale:.2f} {cpu_unit} "
                f"| {pg[1] * cpu_scale:.2f} {cpu_unit} | {memory[2] * 1e3:.0f} ms | "
                f"{sqlite[2] * 1e3:.0f} ms | {pg[2] * 1e3:.0f} ms |"
            )
        import anyio  # noqa: PLC0415

        rows, file_rows, snapshot, file_closed = anyio.run(
            _record_updates, work / "chunks.sqlite3", 10_000
        )
        print(
            f"10,000 agent_message_chunks (100 messages): rows {rows:,} bytes (uncompressed) "
            f"(file {file_rows:,} with WAL) while served; snapshot {snapshot:,} bytes, "
            f"file {file_closed:,} bytes after close"
        )
        for updates in (10_000, 100_000):
            size, snapshots, events = store_size(updates, work)
            print(
                f"store size after notify {updates:,}: {size:,} bytes "
                f"({size / (updates / 10_000):,.0f} per 10,000 updates; "
                f"{snapshots} snapshot, {events} event rows)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
