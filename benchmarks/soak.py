"""Soak test: many sessions on one connection for a while; nothing lost, nothing leaked.

One in-process agent serves ``--sessions`` sessions over one connection to
acpio's ``MockClient``. Every session runs turns back to back for
``--seconds``: each turn opens a tool call, asks permission (the client
allows), streams text chunks into the call and bytes into its terminal
(every ``--process-every``-th turn through a real process), streams a
message, and completes. The agent keeps a ledger of what it sent.

Afterwards:

* what the client reconstructed (``session.view``) must match the ledger
  exactly: tool calls, final statuses, content chunks, terminal bytes (by
  hash) and exit codes, message text, one idle per turn;
* once every session is closed and the client is gone, memory allocated
  during the run and still alive (tracemalloc), file descriptors, event-loop
  tasks and child processes must be back at their starting level.

The figures are printed; the exit status is 1 when a check fails.

    python benchmarks/soak.py                      # 50 sessions, 2 rounds, 20 s in all
    python benchmarks/soak.py --sessions 200 --seconds 60 --backend trio
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import hashlib
import os
import sys
import time
import tracemalloc
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio

import acpio
from acpio.testing import MockClient, PermissionPolicy

KIB = 1024
PATTERN = bytes(range(256)) * 20  # every byte value, sliced at varying offsets
#: What may stay allocated after everything closed (interned strings, caches, the ledger).
RETAINED_LIMIT = 2 * 1024 * 1024


@dataclass
class CallRecord:
    status: str = "pending"
    chunks: int = 0
    text: str = ""
    terminal_bytes: int = 0
    terminal_hash: str = ""
    exit_code: int | None = None


@dataclass
class Ledger:
    turns: int = 0
    calls: dict[str, CallRecord] = field(default_factory=dict)
    message_text: list[str] = field(default_factory=list)


class SoakAgent(acpio.Agent):
    """Streams tool-call chunks, terminal bytes and a message per turn, after permission."""

    info = acpio.Implementation(name="soak-agent", version="1.0.0")

    def __init__(self, *, chunks: int, terminal_writes: int, process_every: int) -> None:
        self.chunks = chunks
        self.terminal_writes = terminal_writes
        self.process_every = process_every
        self.ledgers: dict[str, Ledger] = {}

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        ledger = self.ledgers.setdefault(session.id, Ledger())
        turn = ledger.turns
        ledger.turns += 1
        record = CallRecord()
        async with session.tool_call(f"step {turn}", kind="execute") as call:
            ledger.calls[call.id] = record
            outcome = await call.request_permission(acpio.permission.ALLOW_OR_REJECT)
            if not outcome.allowed:
                record.status = "failed"
                await call.fail("not allowed")
                return "end_turn"
            await call.start()
            terminal = await call.terminal(command=f"step {turn}")
            digest = hashlib.sha256()
            if self.process_every and turn % self.process_every == 0:
                status = await terminal.run_shell(f"printf 'process %s\\n' {turn}")
                expected = f"process {turn}\n".encode()
                digest.update(expected)
                record.terminal_bytes += len(expected)
                record.exit_code = status.exit_code
            else:
                for index in range(self.terminal_writes):
                    # Sizes vary from 1 byte to 4 KiB; every byte value occurs.
                    size = 1 + (turn * 7919 + index * 104729) % (4 * KIB)
                    start = (turn + index) % 256
                    data = PATTERN[start : start + size]
                    await terminal.write(data)
                    digest.update(data)
                    record.terminal_bytes += size
                await terminal.exit(0)
                record.exit_code = 0
            record.terminal_hash = digest.hexdigest()
            for index in range(self.chunks):
                text = f"[{turn}:{index}]"
                await call.append_text(text)
                record.chunks += 1
                record.text += text
            await call.complete()
            record.status = "completed"
        stream = session.message_stream()
        words = [f"turn {turn}", " of ", session.id[-6:]]
        for word in words:
            await stream.write(word)
        ledger.message_text.append("".join(words))
        return "end_turn"


@dataclass
class Figures:
    sessions: int = 0
    seconds: float = 0.0
    turns: int = 0
    permission_requests: int = 0
    messages: int = 0
    terminal_bytes: int = 0
    mismatches: list[str] = field(default_factory=list)
    rss_start: int = 0
    rss_peak: int = 0
    rss_end: int = 0
    retained: int = 0
    fds: tuple[int, int] = (0, 0)
    tasks: tuple[int, int] = (0, 0)
    children: tuple[int, int] = (0, 0)
    rounds: list[tuple[int, int]] = field(default_factory=list)  # (RSS KiB, retained bytes)


def _status_kib(field_name: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field_name + ":"):
            return int(line.split()[1])
    return 0


def _trim_heap() -> None:
    """Hand freed heap memory back to the OS (glibc), so that RSS shows what is still used."""
    # Not glibc: RSS then keeps freed pages.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def _fd_count() -> int:
    return len(os.listdir("/proc/self/fd"))


def _children() -> int:
    count = 0
    for task in os.listdir("/proc/self/task"):
        with contextlib.suppress(FileNotFoundError):
            count += len(Path(f"/proc/self/task/{task}/children").read_text().split())
    return count


def verify(agent: SoakAgent, client: MockClient, figures: Figures) -> None:
    """Compare what the client reconstructed with what the agent says it sent."""
    for session_id, ledger in agent.ledgers.items():
        session = client.sessions[session_id]
        view = session.view
        if set(view.tool_calls) != set(ledger.calls):
            figures.mismatches.append(f"{session_id}: tool call ids differ")
            continue
        for call_id, record in ledger.calls.items():
            call = view.tool_calls[call_id]
            problems = []
            if call.status != record.status:
                problems.append(f"status {call.status} != {record.status}")
            texts = [item for item in call.content if isinstance(item, acpio.schema.Content)]
            if len(texts) != record.chunks or call.text != record.text:
                problems.append(f"{len(texts)} chunks != {record.chunks}")
            (terminal_id,) = call.terminal_ids
            terminal = view.terminals[terminal_id]
            output = terminal.output
            if len(output) != record.terminal_bytes:
                problems.append(f"{len(output)} terminal bytes != {record.terminal_bytes}")
            elif hashlib.sha256(output).hexdigest() != record.terminal_hash:
                problems.append("terminal bytes differ")
            if terminal.exit_code != record.exit_code:
                problems.append(f"exit code {terminal.exit_code} != {record.exit_code}")
            if problems:
                figures.mismatches.append(f"{session_id} {call_id}: {'; '.join(problems)}")
            figures.terminal_bytes += len(output)
        texts = [m.text for m in view.agent_messages]
        if texts != ledger.message_text:
            figures.mismatches.append(f"{session_id}: messages differ")
        idles = [
            u
            for u in session.updates
            if isinstance(u, acpio.schema.IdleStateUpdate) and isinstance(u.stop_reason, str)
        ]
        if len(idles) != ledger.turns or any(u.stop_reason != "end_turn" for u in idles):
            figures.mismatches.append(f"{session_id}: {len(idles)} idles for {ledger.turns} turns")
        figures.turns += ledger.turns
    figures.permission_requests = len(client.permission_requests)
    if figures.permission_requests != figures.turns:
        figures.mismatches.append(
            f"{figures.permission_requests} permission requests for {figures.turns} turns"
        )
    figures.messages = len(client.transcript)


async def soak_once(args: argparse.Namespace, seconds: float, sessions: int) -> Figures:
    figures = Figures(sessions=sessions, seconds=seconds)
    agent = SoakAgent(
        chunks=args.chunks, terminal_writes=args.terminal_writes, process_every=args.process_every
    )
    limits = acpio.AgentLimits(max_sessions=max(sessions, 1000))
    client = MockClient(agent, policy=PermissionPolicy.allow(), timeout=120.0, limits=limits)
    async with client:
        opened = [await client.new_session(cwd="/tmp") for _ in range(sessions)]
        deadline = time.monotonic() + seconds

        async def run(session: object) -> None:
            while time.monotonic() < deadline:
                await session.prompt("go")  # type: ignore[attr-defined]

        started = time.monotonic()
        async with anyio.create_task_group() as group:
            for session in opened:
                group.start_soon(run, session)
        figures.seconds = time.monotonic() - started
        verify(agent, client, figures)
        for session in opened:
            await session.close()
    return figures


async def main_async(args: argparse.Namespace) -> Figures:
    # A short warm-up first: imports, caches and lazily built decoders are not leaks.
    await soak_once(args, 0.5, 2)
    gc.collect()
    _trim_heap()
    fds_before, tasks_before, children_before = (
        _fd_count(),
        len(anyio.get_running_tasks()),
        _children(),
    )
    total = Figures(sessions=args.sessions, rss_start=_status_kib("VmRSS"))
    if args.tracemalloc:
        tracemalloc.start()
    for _ in range(args.rounds):
        # Every round opens fresh sessions and closes them all: what one round leaves
        # behind would show as growth from round to round.
        figures = await soak_once(args, args.seconds / args.rounds, args.sessions)
        gc.collect()
        _trim_heap()
        total.seconds += figures.seconds
        total.turns += figures.turns
        total.permission_requests += figures.permission_requests
        total.messages += figures.messages
        total.terminal_bytes += figures.terminal_bytes
        total.mismatches += figures.mismatches
        retained = tracemalloc.get_traced_memory()[0] if args.tracemalloc else 0
        total.rounds.append((_status_kib("VmRSS"), retained))
    if args.tracemalloc:
        total.retained = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
    total.rss_peak = _status_kib("VmHWM")
    total.rss_end = _status_kib("VmRSS")
    total.fds = (fds_before, _fd_count())
    total.tasks = (tasks_before, len(anyio.get_running_tasks()))
    total.children = (children_before, _children())
    return total


def report(figures: Figures, args: argparse.Namespace) -> int:
    failures = list(figures.mismatches)
    if args.tracemalloc and figures.retained > RETAINED_LIMIT:
        failures.append(f"{figures.retained} bytes allocated during the run are still alive")
    for name, (before, after) in (
        ("file descriptors", figures.fds),
        ("tasks", figures.tasks),
        ("child processes", figures.children),
    ):
        if after > before:
            failures.append(f"{name}: {before} before, {after} after")
    per_second = figures.turns / figures.seconds if figures.seconds else 0.0
    print(
        f"soak: {figures.sessions} sessions on one connection, {args.rounds} round(s), "
        f"{figures.seconds:.1f} s, backend {args.backend}, "
        f"tracemalloc {'on' if args.tracemalloc else 'off'}"
    )
    print(
        f"  turns (each: permission + tool call + terminal + message): {figures.turns} "
        f"({per_second:.0f}/s)"
    )
    print(f"  permission requests answered: {figures.permission_requests}")
    print(
        f"  messages on the wire: {figures.messages} "
        f"({figures.messages / figures.seconds if figures.seconds else 0:.0f}/s)"
    )
    print(f"  terminal bytes verified: {figures.terminal_bytes / 1024 / 1024:.1f} MiB")
    print(
        f"  state matches the agent's ledger: {'yes' if not figures.mismatches else 'NO'}"
        f" ({len(figures.mismatches)} mismatches)"
    )
    print(
        f"  RSS: start {figures.rss_start / 1024:.1f} MiB, peak {figures.rss_peak / 1024:.1f} "
        f"MiB, end {figures.rss_end / 1024:.1f} MiB (all sessions closed, client gone)"
    )
    if args.tracemalloc:
        print(
            f"  allocated during the run and still alive: {figures.retained / 1024:.1f} KiB "
            f"(limit {RETAINED_LIMIT // 1024} KiB)"
        )
    for index, (rss, retained) in enumerate(figures.rounds, 1):
        alive = f", still alive {retained / 1024:.1f} KiB" if args.tracemalloc else ""
        print(f"  after round {index} (its sessions closed): RSS {rss / 1024:.1f} MiB{alive}")
    print(f"  file descriptors: {figures.fds[0]} before, {figures.fds[1]} after")
    print(f"  event-loop tasks: {figures.tasks[0]} before, {figures.tasks[1]} after")
    print(f"  child processes: {figures.children[0]} before, {figures.children[1]} after")
    for failure in failures[:20]:
        print(f"  FAIL: {failure}")
    print("soak: " + ("FAILED" if failures else "passed"))
    return 1 if failures else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=20.0, help="in total, over all rounds")
    parser.add_argument(
        "--rounds", type=int, default=2, help="rounds of fresh sessions, all closed after each"
    )
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    parser.add_argument("--chunks", type=int, default=20, help="tool-call text chunks per turn")
    parser.add_argument(
        "--terminal-writes", type=int, default=20, help="terminal writes per turn (1 B to 4 KiB)"
    )
    parser.add_argument(
        "--process-every",
        type=int,
        default=10,
        help="every Nth turn runs a real process (0: never)",
    )
    parser.add_argument(
        "--no-tracemalloc",
        dest="tracemalloc",
        action="store_false",
        help="skip tracemalloc (faster; memory is then judged by RSS only)",
    )
    args = parser.parse_args(argv)
    figures = anyio.run(main_async, args, backend=args.backend)
    return report(figures, args)


if __name__ == "__main__":
    sys.exit(main())
