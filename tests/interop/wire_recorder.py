"""Runs an agent command between a client and the agent, recording every line both ways.

Usage: ``python wire_recorder.py LOG COMMAND...``. Lines from the client to the agent are
appended to LOG as ``> LINE``, lines from the agent as ``< LINE``, as they pass. For tests
that must see exactly what a real client sent (acpx prints only part of it). A SIGTERM or
SIGINT is passed on to the agent; the agent's exit status is the recorder's.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import threading
from typing import IO


def main() -> int:
    log_path, command = sys.argv[1], sys.argv[2:]
    agent = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert agent.stdin is not None and agent.stdout is not None
    lock = threading.Lock()
    log = open(log_path, "ab", buffering=0)  # noqa: SIM115 - open for the whole run

    def record(mark: bytes, line: bytes) -> None:
        with lock:
            log.write(mark + line if line.endswith(b"\n") else mark + line + b"\n")

    def to_agent(source: IO[bytes], sink: IO[bytes]) -> None:
        try:
            for line in source:
                record(b"> ", line)
                sink.write(line)
                sink.flush()
        except (BrokenPipeError, ValueError):
            pass
        finally:
            with contextlib.suppress(BrokenPipeError):
                sink.close()

    def stop(signum: int, _frame: object) -> None:
        agent.send_signal(signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    threading.Thread(target=to_agent, args=(sys.stdin.buffer, agent.stdin), daemon=True).start()
    out = sys.stdout.buffer
    for line in agent.stdout:
        record(b"< ", line)
        try:
            out.write(line)
            out.flush()
        except BrokenPipeError:
            break
    return agent.wait()


if __name__ == "__main__":
    sys.exit(main())
