"""What a session tells an observer (traces): its turns, their tool calls and waits for the user.

How this works: a session whose agent is traced holds a :class:`SessionObserver`
(``Turns.observer``; ``None`` when tracing is off, so the cost then is one
attribute check per turn, tool call and question to the user). When a turn's
handler starts, the observer makes the turn's :class:`TurnTrace`, kept on its
:class:`~acpio._session.work.Work`; the tool calls and waits of that work hang
their :class:`SpanTrace` on it. The core never imports OpenTelemetry: the one
implementation (``acpio._agent.otel``, the ``otel`` extra) is behind these
protocols, chosen when the agent starts (``acpio._agent.tracing``).

Every trace a turn started ends when the turn ends (its ``idle`` went out, or
the session dropped the work): :meth:`TurnTrace.end` ends what is still open.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

__all__ = ["Restore", "SessionObserver", "SpanTrace", "TurnTrace"]

#: Undoes :meth:`TurnTrace.enter` (or :meth:`SpanTrace.enter`): the context before it is current.
Restore = Callable[[], None]


class SpanTrace(Protocol):
    """One tool call or wait for the user within a turn; ends at most once."""

    def enter(self) -> Restore:
        """Make this the current trace context of the calling task (nested spans parent here)."""
        ...

    def end(self, status: str, error_type: str | None = None) -> None:
        """End with ``status`` (a tool call's final status, a wait's outcome); an
        ``error_type`` marks it failed. Later calls do nothing."""
        ...


class TurnTrace(Protocol):
    """The trace of one prompt turn; what it started ends with it."""

    def enter(self) -> Restore:
        """Make the turn the current trace context of the calling task (the handler's)."""
        ...

    def tool_call(self, tool_call_id: str, name: str) -> SpanTrace:
        """A tool call of the turn started (``name``: low cardinality, never a title)."""
        ...

    def wait(self, kind: str, parent: SpanTrace | None, tool_call_id: str | None) -> SpanTrace:
        """The turn waits for the user (``kind``: ``permission``, ``elicitation``)."""
        ...

    def failed(self, error: BaseException) -> None:
        """The handler raised ``error``: the turn ends failed."""
        ...

    def end(self, stop_reason: str) -> None:
        """The turn ended with ``stop_reason``; every trace it started and did not end ends now."""
        ...


class SessionObserver(Protocol):
    """Makes the trace of each turn of one session."""

    def turn(self, meta: Mapping[str, object] | None) -> TurnTrace:
        """A turn's handler starts; ``meta`` is its ``session/prompt`` ``_meta`` (W3C trace
        context in ``traceparent``/``tracestate``, continued when present)."""
        ...
