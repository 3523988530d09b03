"""Helpers shared by the test modules (importable from any test directory, see conftest.py)."""

from __future__ import annotations

import importlib.util
import os
import select
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import anyio.to_thread

from acpio.rpc import StreamPair

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"

PairMaker = Callable[..., tuple[StreamPair, StreamPair]]
"""The ``make_pair`` fixture (tests/conftest.py): builds connected in-memory stream pairs."""


def load_example(name: str) -> ModuleType:
    """Import ``examples/<name>.py`` once (examples/ is not a package)."""
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return module


def wait_gone(pid: int, timeout: float) -> bool:
    """True once process ``pid`` has terminated (blocks at most ``timeout`` seconds)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        # A pidfd becomes readable when the process has terminated.
        readable, _, _ = select.select([fd], [], [], timeout)
        return bool(readable)
    finally:
        os.close(fd)


async def gone(pid: int, limit: float = 5.0) -> bool:
    """True once process ``pid`` has terminated (waits at most ``limit`` seconds)."""
    return await anyio.to_thread.run_sync(wait_gone, pid, limit)
