"""Foreground work: one accepted prompt and everything it started.

The current work travels in a context variable (:data:`current_work`), so
handles created while it runs (and tasks it starts) know which turn they
belong to: once the turn was reported idle, nothing of it may reach the client
any more.

A work item moves through these steps, each owned by the session's turn
machine (see :mod:`acpio._session.turn_machine`): accepted (the prompt response is being sent),
``responded`` (the response was queued), ``announced`` (its ``user_message``
was sent), ``started`` (``running`` was sent and the handler runs), an
``outcome`` (the handler returned or failed, or it was abandoned after
ignoring cancellation), ``finished`` (its one ``idle`` was sent), and
``ended`` set. A queued prompt discarded by ``session/cancel`` is announced
but never started; its ``ended`` is set when it is discarded.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio

from .. import schema
from .turn_machine import TurnRecord

if TYPE_CHECKING:
    from .observe import TurnTrace

__all__ = ["Work", "current_work"]


@dataclass(eq=False)
class Work(TurnRecord):
    """One accepted prompt and the foreground work that answers it.

    Its lifecycle fields (:class:`~acpio._session.turn_machine.TurnRecord`) change
    only in the session's :class:`~acpio._session.turn_machine.TurnMachine`;
    what is added here is what runs it.
    """

    prompt: list[schema.ContentBlock] = field(default_factory=lambda: [])
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    #: Set when the handler ended (or never runs): the cancel watchdog waits for it.
    done: anyio.Event = field(default_factory=anyio.Event)
    #: Set once the work's end was reported (or it was discarded, or dropped).
    ended: anyio.Event = field(default_factory=anyio.Event)
    #: How each tool call of the work ends with a status and an optional note unless it
    #: is final already (shielded, never raising): a turn's end closes its open calls.
    tool_call_finishers: list[Callable[[str, str | None], Awaitable[None]]] = field(
        default_factory=lambda: []
    )
    #: The flush of each terminal of the work: its bytes go out before the idle.
    terminal_flushes: list[Callable[[], Awaitable[None]]] = field(default_factory=lambda: [])
    #: The ``_meta`` of the prompt's request (the client's trace context, if any).
    meta: dict[str, object] | None = None
    #: The turn's trace while its session is traced (see :mod:`acpio._session.observe`).
    trace: TurnTrace | None = None


current_work: contextvars.ContextVar[Work | None] = contextvars.ContextVar(
    "acpio_current_work", default=None
)
