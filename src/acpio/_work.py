"""Foreground work: one accepted prompt and everything it started.

The current work travels in a context variable, so handles created while it
runs (and tasks it starts) know which turn they belong to: once the turn was
reported idle, nothing of it may reach the client any more.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio

from . import schema

if TYPE_CHECKING:
    from ._terminal import TerminalHandle
    from ._tool_call import ToolCallHandle

__all__ = ["_Work", "_current_work"]


@dataclass(eq=False)
class _Work:
    """One accepted prompt and the foreground work that answers it."""

    message_id: str
    prompt: list[schema.ContentBlock]
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    done: anyio.Event = field(default_factory=anyio.Event)
    finished: bool = False
    cancel_requested: bool = False
    tool_calls: list[ToolCallHandle] = field(default_factory=list)
    terminals: list[TerminalHandle] = field(default_factory=list)


_current_work: contextvars.ContextVar[_Work | None] = contextvars.ContextVar(
    "acpio_current_work", default=None
)
