"""Fresh identifiers for messages, sessions, tool calls and terminals."""

from __future__ import annotations

import uuid

__all__ = ["new_id"]


def new_id(prefix: str) -> str:
    """A fresh identifier, unique within the process (``prefix_`` + 32 hex digits)."""
    return f"{prefix}_{uuid.uuid4().hex}"
