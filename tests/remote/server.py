"""Start ``acpio serve`` as a real process on a free loopback port (for the remote tests)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
_READY = re.compile(r"on (http://\S+/acp)")


@contextlib.contextmanager
def served(
    target: str, *extra: str, token: str | None = None, cwd: Path | None = None
) -> Iterator[str]:
    """Run ``acpio serve --listen 127.0.0.1:0 ... target``; yield its URL; stop it with SIGTERM."""
    with serving(target, *extra, token=token, cwd=cwd) as (url, _process):
        yield url


@contextlib.contextmanager
def serving(
    target: str, *extra: str, token: str | None = None, cwd: Path | None = None
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """:func:`served`, yielding the process too (to kill or stop it); a stopped process is
    continued before it is terminated."""
    env = dict(os.environ)
    args = [sys.executable, "-m", "acpio._cli", "serve", "--listen", "127.0.0.1:0", *extra]
    if token is not None:
        env["ACPIO_TEST_TOKEN"] = token
        args += ["--token-env", "ACPIO_TEST_TOKEN"]
    process = subprocess.Popen(
        [*args, target], stderr=subprocess.PIPE, text=True, env=env, cwd=cwd or REPO
    )
    assert process.stderr is not None
    try:
        deadline = time.monotonic() + 30
        url = None
        seen = []
        while url is None and time.monotonic() < deadline:
            line = process.stderr.readline()
            if not line:
                break
            seen.append(line)
            match = _READY.search(line)
            if match:
                url = match.group(1)
        assert url is not None, f"acpio serve did not start: {''.join(seen)}"
        yield url, process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGCONT)
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stderr.close()
