"""The ACP session a pydantic-ai tool runs for, and the mark of self-reporting tools."""

from __future__ import annotations

import contextvars
from typing import Final

from pydantic_ai.tools import ToolDefinition

import acpio

__all__ = ["SELF_REPORTING", "current_session", "is_self_reporting", "session_scope"]

#: Tool metadata key: a tool whose metadata has it true reports its own ACP tool call.
SELF_REPORTING: Final = "acpio_self_reporting"

_current: contextvars.ContextVar[acpio.Session | None] = contextvars.ContextVar(
    "acpio_pydantic_ai_session", default=None
)


def current_session() -> acpio.Session:
    """The ACP session whose turn is running this tool (for tools that report on their own).

    :raises RuntimeError: outside a turn served by the pydantic-ai adapter's ``ACPAgent``.
    """
    session = _current.get()
    if session is None:
        raise RuntimeError("no ACP turn is running: this tool is served by acpio's ACPAgent")
    return session


def session_scope(session: acpio.Session) -> contextvars.Token[acpio.Session | None]:
    """Make ``session`` the current one for the turn (reset with the token it returns)."""
    return _current.set(session)


def end_session_scope(token: contextvars.Token[acpio.Session | None]) -> None:
    """Undo :func:`session_scope`."""
    _current.reset(token)


def is_self_reporting(tool_def: ToolDefinition) -> bool:
    """True for tools that open their own ACP tool call (see ``editor_tools``)."""
    return bool((tool_def.metadata or {}).get(SELF_REPORTING))
