"""Shared pytest configuration: every async test runs on asyncio and on trio, and no test
(nor any agent a test starts) writes into the user's home, state, config, cache or data
directories: the whole run gets temporary ones (``HOME`` included), and the run fails if
anything of it appears in the real state locations anyway."""

from __future__ import annotations

import os
import sqlite3
import sys
import tempfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from acpio.rpc import StreamPair, memory_stream_pair


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run each ``@pytest.mark.anyio`` test once per anyio backend."""
    return str(request.param)


# Test modules in sub-directories import the shared helpers of tests/support.py.
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
async def make_pair() -> AsyncIterator[Callable[..., tuple[StreamPair, StreamPair]]]:
    """``memory_stream_pair`` whose four streams are all closed after the test."""
    made: list[StreamPair] = []

    def make(max_buffered_chunks: int = 16) -> tuple[StreamPair, StreamPair]:
        pair = memory_stream_pair(max_buffered_chunks)
        made.extend(pair)
        return pair

    yield make
    for side in made:
        await side.aclose()


@pytest.fixture(autouse=True)
def _isolated_session_store(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Agents the tests run (``acpio.run()`` in subprocesses) keep their sessions in a
    state directory of each test's own, never in the user's (CI runs as root on a
    shared machine), and never see another test's sessions. (Fixtures of a wider scope
    run before this one: they get the run's state directory, set in ``pytest_configure``.)"""
    monkeypatch.delenv("ACPIO_SESSION_STORE", raising=False)
    monkeypatch.setenv("ACPIO_STATE_DIR", os.fspath(tmp_path_factory.mktemp("state")))


# -- the user's directories stay untouched -------------------------------------------------

#: Set for the whole run, so every process a test starts inherits them.
USER_DIRS = ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME")
_ISOLATION = pytest.StashKey[tuple[Path, list[Path], dict[Path, tuple[int, int]]]]()


def _real_state_dirs() -> list[Path]:
    """Where acpio's default store would write without the run's isolation."""
    places = [Path.home() / ".local" / "state"]
    for name in ("XDG_STATE_HOME", "ACPIO_STATE_DIR"):
        value = os.environ.get(name)
        if value and os.path.isabs(value):
            places.append(Path(value))
    return places


def _files(places: list[Path]) -> dict[Path, tuple[int, int]]:
    found: dict[Path, tuple[int, int]] = {}
    for place in places:
        for directory, _, names in os.walk(place):
            for name in names:
                path = Path(directory, name)
                try:
                    stat = path.lstat()
                except OSError:
                    continue
                found[path] = (stat.st_mtime_ns, stat.st_size)
    return found


def pytest_configure(config: pytest.Config) -> None:
    """Point ``HOME``, the XDG directories and ``ACPIO_STATE_DIR`` at a temporary directory
    for the whole run (before any test module is imported), remembering the real state
    files."""
    places = _real_state_dirs()
    before = _files(places)
    root = Path(tempfile.mkdtemp(prefix="acpio-tests-home-")).resolve()
    # HOME too: clients that start agents with a minimal environment (the official Python
    # SDK's spawn_agent_process keeps HOME and PATH, not XDG_* nor ACPIO_*) fall back on it.
    (root / "home").mkdir()
    os.environ["HOME"] = os.fspath(root / "home")
    for name in USER_DIRS:
        (root / name.lower()).mkdir()
        os.environ[name] = os.fspath(root / name.lower())
    os.environ["ACPIO_STATE_DIR"] = os.fspath(root / "acpio-state")
    os.environ.pop("ACPIO_SESSION_STORE", None)
    config.stash[_ISOLATION] = (root, places, before)


def _written_by_this_run(path: Path, roots: list[str]) -> bool:
    """Whether a new or changed file in a real state directory comes from this run: on CI
    (nothing else runs there) any file; elsewhere any file but a session store (other
    processes on the machine may be using one), or a store holding a session whose cwd is
    one of this run's temporary directories."""
    if os.environ.get("CI"):
        return True
    database = path.with_name(path.name.removesuffix("-wal").removesuffix("-shm"))
    if database.name != "sessions.sqlite3":
        return True
    try:
        with sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True) as connection:
            cwds = [row[0] for row in connection.execute("SELECT cwd FROM sessions")]
    except sqlite3.Error:
        return False
    return any(cwd.startswith(root) for cwd in cwds for root in roots)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Fail the run if it wrote into the real state directories (see ``pytest_configure``)."""
    if _ISOLATION not in session.config.stash:
        return
    root, places, before = session.config.stash[_ISOLATION]
    roots = [os.fspath(root)]
    factory = getattr(session.config, "_tmp_path_factory", None)
    if factory is not None:
        roots.append(os.fspath(factory.getbasetemp().resolve()))
    changed = [
        path
        for path, stamp in _files(places).items()
        if before.get(path) != stamp and _written_by_this_run(path, roots)
    ]
    if changed:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.ensure_newline()
            reporter.write_line(
                "FAILED: the tests wrote into the user's state directories: "
                + ", ".join(map(str, sorted(changed))),
                red=True,
            )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# A real PostgreSQL server (started on first use) and a database per test: tests/pg_server.py.
from pg_server import postgres_server as postgres_server  # noqa: E402
from pg_server import postgres_url as postgres_url  # noqa: E402
