"""HAProxy for the tests: the configuration ``docs/remote.md`` shows, on loopback.

The fixture :func:`haproxy` gives a test a function that starts a real ``haproxy``
(Debian's package; ``.ci/run`` installs it when missing) in front of the given
replicas, with the configuration block of ``docs/remote.md`` as a reader would copy
it: only its ``bind`` address and its ``server`` addresses are replaced. The
listening socket is made here (a free loopback port) and handed to HAProxy as an
inherited descriptor (``bind fd@N``), so it accepts connections from the moment it is
returned, before HAProxy even runs: nothing waits for HAProxy to come up, and no other
process can take the port in between. Every HAProxy started is stopped (SIGTERM, then
SIGKILL) when the test ends.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from docs_pages import blocks

__all__ = ["Balancer", "doc_config", "haproxy", "placed"]

_BIND = re.compile(r"^(\s*bind\s+)\S+", re.MULTILINE)
_SERVER = re.compile(r"^(\s*server\s+\S+\s+)\S+", re.MULTILINE)


def doc_config() -> str:
    """The one ``haproxy`` block of ``docs/remote.md``, verbatim."""
    (block,) = blocks("docs/remote.md", "haproxy")
    return block.code


def placed(config: str, bind: str, servers: Sequence[str]) -> str:
    """``config`` listening on ``bind`` and sending to ``servers`` (``host:port``, in the
    order of its ``server`` lines): it must have exactly one ``bind`` line and one
    ``server`` line per server."""
    binds, lines = _BIND.findall(config), _SERVER.findall(config)
    assert len(binds) == 1, f"the configuration has {len(binds)} bind lines, not 1"
    assert len(lines) == len(servers), f"{len(lines)} server lines for {len(servers)} servers"
    addresses = iter(servers)
    config = _BIND.sub(lambda m: m.group(1) + bind, config)
    return _SERVER.sub(lambda m: m.group(1) + next(addresses), config)


def _binary() -> str:
    found = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/sbin")
    if found is None:
        pytest.fail(
            "haproxy was not found (on PATH or in /usr/sbin): the load balancer tests run a "
            "real one; install it (Debian: apt-get install -y haproxy, which .ci/run does)",
            pytrace=False,
        )
    return found


@dataclass
class Balancer:
    """A running HAProxy: ``url`` is its address (``http://127.0.0.1:PORT``)."""

    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        """What HAProxy wrote so far (its warnings, alerts and exit reasons)."""
        return self.log.read_text(errors="replace")


@pytest.fixture
def haproxy() -> Iterator[Callable[[Sequence[str]], Balancer]]:
    """``start(servers)``: a running HAProxy, configured as ``docs/remote.md`` shows, in
    front of ``servers`` (``host:port``); every one started is stopped at teardown."""
    binary = _binary()
    root = Path(tempfile.mkdtemp(prefix="acpio-haproxy-"))
    started: list[Balancer] = []

    def start(servers: Sequence[str]) -> Balancer:
        with socket.socket() as listener:
            listener.bind(("127.0.0.1", 0))
            listener.listen(128)
            fd = listener.fileno()
            config = root / f"haproxy-{len(started)}.cfg"
            config.write_text(placed(doc_config(), f"fd@{fd}", servers), encoding="utf-8")
            check = subprocess.run(
                [binary, "-c", "-f", os.fspath(config)],
                pass_fds=(fd,),
                capture_output=True,
                text=True,
                check=False,
            )
            assert check.returncode == 0, f"haproxy -c refused the configuration: {check}"
            log = root / f"haproxy-{len(started)}.log"
            with log.open("wb") as out:
                process = subprocess.Popen(
                    [binary, "-db", "-f", os.fspath(config)],
                    pass_fds=(fd,),
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )
            port = listener.getsockname()[1]
        # HAProxy holds the socket now; closing ours makes a dead HAProxy refuse clients.
        balancer = Balancer(f"http://127.0.0.1:{port}", process, log)
        started.append(balancer)
        return balancer

    try:
        yield start
    finally:
        for balancer in started:
            if balancer.process.poll() is None:
                balancer.process.send_signal(signal.SIGTERM)
            try:
                balancer.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                balancer.process.kill()
                balancer.process.wait()
        shutil.rmtree(root, ignore_errors=True)
