"""A real PostgreSQL server for the tests: ``initdb`` and ``pg_ctl`` on a temporary directory.

The session-scoped fixture :func:`postgres_server` starts one private server
(loopback only, a free port, trust authentication for the ``acpio`` role) from
the machine's PostgreSQL binaries, the first time a test asks for it, and
stops it when the tests end. PostgreSQL refuses to run as root, so as root
(CI) the server runs as the ``postgres`` user the Debian package creates
(``runuser``). :func:`postgres_url` gives each test a database of its own.
Missing binaries fail the tests that need them, loudly: ``.ci/run`` installs
the Debian ``postgresql`` package when ``initdb`` is missing.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["postgres_server", "postgres_url"]


def _binary(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if candidates:
        return candidates[-1]
    pytest.fail(
        f"PostgreSQL's {name} was not found (on PATH or in /usr/lib/postgresql/*/bin): the "
        "PostgreSQL store tests need a real server; install it (Debian: apt-get install -y "
        "postgresql, which .ci/run does)",
        pytrace=False,
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The URL of a running PostgreSQL server (database ``postgres``, role ``acpio``)."""
    initdb, pg_ctl = _binary("initdb"), _binary("pg_ctl")
    as_user: list[str] = []
    root = Path(tempfile.mkdtemp(prefix="acpio-pg-"))
    if os.geteuid() == 0:
        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            pytest.fail(
                "running as root, PostgreSQL needs another user: no 'postgres' user "
                "(the Debian postgresql package creates it)",
                pytrace=False,
            )
        os.chown(root, user.pw_uid, user.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    data, log = root / "data", root / "log"
    port = _free_port()
    subprocess.run(
        [*as_user, initdb, "-D", os.fspath(data), "-A", "trust", "-U", "acpio", "-E", "UTF8"],
        check=True,
        capture_output=True,
    )
    options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
    start = [pg_ctl, "-D", os.fspath(data), "-l", os.fspath(log), "-o", options, "-w", "start"]
    started = subprocess.run(
        [*as_user, *start],
        capture_output=True,
        text=True,
        check=False,
    )
    if started.returncode != 0:
        with contextlib.suppress(OSError):
            started.stdout += log.read_text()
        shutil.rmtree(root, ignore_errors=True)
        pytest.fail(f"PostgreSQL did not start: {started.stdout}{started.stderr}", pytrace=False)
    try:
        yield f"postgresql://acpio@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [*as_user, pg_ctl, "-D", os.fspath(data), "-m", "fast", "-w", "stop"],
            capture_output=True,
            check=False,
        )
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """A fresh database of this test's own on the tests' server (dropped afterwards)."""
    import psycopg  # noqa: PLC0415 - the postgres extra

    name = f"t_{secrets.token_hex(6)}"
    with psycopg.connect(postgres_server, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    try:
        yield postgres_server.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(postgres_server, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
