"""Shared pytest configuration: every async test runs on asyncio and on trio."""

from __future__ import annotations

import os
import sys
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
    shared machine), and never see another test's sessions."""
    monkeypatch.delenv("ACPIO_SESSION_STORE", raising=False)
    monkeypatch.setenv("ACPIO_STATE_DIR", os.fspath(tmp_path_factory.mktemp("state")))


# A real PostgreSQL server (started on first use) and a database per test: tests/pg_server.py.
from pg_server import postgres_server as postgres_server  # noqa: E402
from pg_server import postgres_url as postgres_url  # noqa: E402
