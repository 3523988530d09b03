"""Fresh identifiers for messages, sessions, tool calls and terminals.

How this works: every identifier holds 128 bits from the operating system's
random source (``os.urandom``), as a version 4 UUID does, so identifiers made
by other processes (replicas sharing a store) never collide either. The bits
are read 4 KiB at a time rather than 16 bytes per identifier: on a virtual
machine one ``getrandom`` system call cost as much as the rest of opening a
session. A child process made by ``fork`` starts with a pool of its own.
"""

from __future__ import annotations

import os
import threading

__all__ = ["new_id"]

_ID_BYTES = 16
_POOL_BYTES = 4096

_lock = threading.Lock()
_pool = b""
_taken = 0


def _forget_pool() -> None:
    """In a forked child: never hand out the bits the parent hands out too."""
    global _pool, _taken, _lock  # noqa: PLW0603 - the module's one pool
    _lock = threading.Lock()
    _pool = b""
    _taken = 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def new_id(prefix: str) -> str:
    """A fresh identifier, unique across processes (``prefix_`` + 32 hex digits of 128
    random bits)."""
    global _pool, _taken  # noqa: PLW0603 - the module's one pool
    with _lock:
        start = _taken
        if start + _ID_BYTES > len(_pool):
            _pool = os.urandom(_POOL_BYTES)
            start = 0
        _taken = start + _ID_BYTES
        bits = _pool[start : start + _ID_BYTES]
    return f"{prefix}_{bits.hex()}"
