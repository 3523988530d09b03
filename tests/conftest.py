"""Shared pytest configuration: every async test runs on asyncio and on trio."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run each ``@pytest.mark.anyio`` test once per anyio backend."""
    return str(request.param)


# Test modules in sub-directories import the shared helpers of tests/support.py.
sys.path.insert(0, str(Path(__file__).parent))
