"""The worst case of the nesting check: how long one message can hold up a connection.

A line at the size limit (32 MiB by default) made of arrays nested just under
the depth limit (256) is legal, so it passes the check and is decoded; the
check (``acpio._rpc.scan._too_deep``) looks at every byte of it. This prints

- the CPU time of the check alone on a few hostile shapes of that size;
- the hold-up over real pipes: the echo agent gets the hostile line, then a
  small request; the time until the small request is answered, against the
  same for a line of the same size that needs no depth check (one long
  string). The difference is what the depth check costs a connection.

    python benchmarks/nesting.py            # 32 MiB, a few seconds
    python benchmarks/nesting.py --mib 8
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from acpio._limits import DEFAULT_MAX_MESSAGE_SIZE, DEFAULT_MAX_NESTING_DEPTH
from acpio._rpc.scan import _too_deep

HERE = Path(__file__).resolve().parent
ECHO_AGENT = HERE.parent / "examples" / "echo_agent.py"
ENVELOPE = b'{"jsonrpc":"2.0","id":"big","method":"_nothing","params":{"a":['
CLOSE = b"]}}"


def fill(size: int, unit: bytes, last: bytes = b"1") -> bytes:
    """A request line of about ``size`` bytes whose ``params.a`` repeats ``unit``."""
    count = (size - len(ENVELOPE) - len(CLOSE) - len(last) - 1) // (len(unit) + 1)
    return ENVELOPE + (unit + b",") * count + last + CLOSE


def shapes(size: int) -> dict[str, bytes]:
    depth = DEFAULT_MAX_NESTING_DEPTH - 3  # the envelope, params and "a" take three levels
    chain = b"[" * depth + b"]" * depth
    return {
        "chains nested 253 deep (legal)": fill(size, chain),
        "[] repeated (legal)": fill(size, b"[" + b"[]" * 200 + b"]"),
        "strings full of brackets (legal)": fill(size, b'"[[[[\\"{{{{",[[]]'),
        "too deep at the very end": fill(size, chain, b"[" * (depth + 1) + b"]" * (depth + 1)),
        "one string (no check needed)": ENVELOPE + b'"' + b"x" * (size - 80) + b'"' + CLOSE,
    }


def best_of(repeats: int, work: Callable[[], object]) -> float:
    """The least CPU time ``work`` took (the machine's load shows less in CPU time)."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        work()
        times.append(time.process_time() - start)
    return min(times)


def hold_up(line: bytes, repeats: int) -> float:
    """Seconds from writing ``line`` to the echo agent until a request behind it is answered."""
    process = subprocess.Popen(
        [sys.executable, str(ECHO_AGENT)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout

    def call(request_id: object, method: str, params: object) -> None:
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        stdin.write(json.dumps(message).encode() + b"\n")
        stdin.flush()

    def answer(request_id: object) -> None:
        while json.loads(stdout.readline()).get("id") != request_id:
            pass

    try:
        call(0, "initialize", {"protocolVersion": 2, "clientCapabilities": {}})
        answer(0)
        times = []
        for attempt in range(repeats):
            after = f"after-{attempt}"
            start = time.perf_counter()

            def send(after: str = after) -> None:
                stdin.write(line + b"\n")
                call(after, "session/list", {})

            writer = threading.Thread(target=send)
            writer.start()
            answer(after)
            times.append(time.perf_counter() - start)
            writer.join()
        return statistics.median(times)
    finally:
        stdin.close()
        process.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=float, default=DEFAULT_MAX_MESSAGE_SIZE / 2**20 - 0.01)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    size = int(args.mib * 2**20)
    lines = shapes(size)
    print(f"line size {size / 2**20:.2f} MiB, depth limit {DEFAULT_MAX_NESTING_DEPTH}")
    print(f"\nthe check alone, CPU time (best of {args.repeats}):")
    limit = DEFAULT_MAX_NESTING_DEPTH
    for name, line in lines.items():
        seconds = best_of(args.repeats, lambda line=line: _too_deep(line, limit))
        print(f"  {name:36} {seconds:7.3f} s  -> too deep: {_too_deep(line, limit)}")
    print(f"\nhold-up over pipes, echo agent (median of {args.repeats}):")
    baseline = hold_up(lines["one string (no check needed)"], args.repeats)
    print(f"  {'one string (no check needed)':36} {baseline:7.3f} s")
    for name in ("chains nested 253 deep (legal)", "[] repeated (legal)"):
        seconds = hold_up(lines[name], args.repeats)
        print(f"  {name:36} {seconds:7.3f} s  (+{seconds - baseline:.3f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
