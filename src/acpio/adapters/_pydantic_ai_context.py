"""What the adapter and its per-turn bridge share: the ACP session a pydantic-ai tool
runs for, the mark of self-reporting tools, and how a turn reports (:class:`Reporting`).

No pydantic-ai import at run time: the adapter's start stays light. The bridge
(``_pydantic_ai_bridge.py``) imports this module, never the adapter's own, so the
two stay apart: the adapter imports the bridge, on its first turn.
"""

from __future__ import annotations

import contextvars
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import acpio

if TYPE_CHECKING:
    from pydantic_ai.tools import ToolDefinition

__all__ = [
    "SELF_REPORTING",
    "Reporting",
    "approval_needed",
    "current_session",
    "is_self_reporting",
    "session_scope",
]

#: Tool metadata key: a tool whose metadata has it true reports its own ACP tool call.
SELF_REPORTING: Final = "acpio_self_reporting"


@dataclass(frozen=True, slots=True)
class Reporting:
    """How a turn reports what pydantic-ai does: one per ``ACPAgent``, given to each turn.

    ``tool_kinds`` maps tool names to ACP kinds where the name's guess is wrong;
    ``context_window`` is the size ``usage_update`` reports (``None``: the model
    profile's, and no usage when neither is known).
    """

    tool_kinds: Mapping[str, str]
    context_window: int | None


_Scope = tuple[acpio.Session, bool]

_current: contextvars.ContextVar[_Scope | None] = contextvars.ContextVar(
    "acpio_pydantic_ai_session", default=None
)


def current_session() -> acpio.Session:
    """The ACP session whose turn is running this tool (for tools that report on their own).

    Call it inside a tool function (or anything it calls) while the adapter's
    ``ACPAgent`` runs a turn: the session is the one of that turn (a contextvar,
    so concurrent sessions each see their own), and the tool can send what it
    likes through it (``session.tool_call(...)`` with diffs or a terminal,
    ``session.plan(...)``, ``session.request_permission(...)``). Mark such a
    toolset with ``metadata={SELF_REPORTING: True}`` so the adapter does not
    report a second tool call for it.

    :raises RuntimeError: outside a turn served by the pydantic-ai adapter's ``ACPAgent``.
    """
    scope = _current.get()
    if scope is None:
        raise RuntimeError("no ACP turn is running: this tool is served by acpio's ACPAgent")
    return scope[0]


def approval_needed() -> bool:
    """False when the turn's mode approves tools without asking (``ModeChoice.auto_approve``)."""
    scope = _current.get()
    return scope is None or not scope[1]


def session_scope(
    session: acpio.Session, *, auto_approve: bool = False
) -> contextvars.Token[_Scope | None]:
    """Make ``session`` the current one for the turn (reset with the token it returns)."""
    return _current.set((session, auto_approve))


def end_session_scope(token: contextvars.Token[_Scope | None]) -> None:
    """Undo :func:`session_scope`."""
    _current.reset(token)


def is_self_reporting(tool_def: ToolDefinition) -> bool:
    """True for tools that open their own ACP tool call (see ``editor_tools``)."""
    return bool((tool_def.metadata or {}).get(SELF_REPORTING))
