"""Whether an agent is traced, read from the environment; OpenTelemetry only when it is.

How this works: :func:`agent_tracer` reads the environment once per served
connection (a few ``os.environ`` lookups). Tracing is on with ``ACPIO_OTEL=1``,
or with the standard OpenTelemetry environment that asks for traces
(``OTEL_TRACES_EXPORTER`` other than ``none``, or an OTLP endpoint); ``ACPIO_OTEL=0``
and ``OTEL_SDK_DISABLED=true`` turn it off. Only then is :mod:`acpio._agent.otel`
imported (the ``otel`` extra), which sets up the process's tracer provider once and
gives each session a :class:`~acpio._session.observe.SessionObserver`. With
tracing off nothing of OpenTelemetry is imported and sessions have no observer.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Final, Protocol

if TYPE_CHECKING:
    from .._session.observe import SessionObserver
    from .agent import Agent
    from .session import Session

__all__ = ["AgentTracer", "agent_tracer", "tracing_requested"]

logger = logging.getLogger(__name__)

_ON: Final = frozenset({"1", "true", "yes", "on"})
_OFF: Final = frozenset({"0", "false", "no", "off", ""})
_warned = False


class AgentTracer(Protocol):
    """Traces the sessions of one served agent (see :mod:`acpio._session.observe`)."""

    def session(self, session: Session) -> SessionObserver:
        """The observer of ``session``'s turns."""
        ...

    def flush(self) -> None:
        """Export what was recorded so far (blocking: call it from a thread)."""
        ...


def tracing_requested() -> tuple[bool, bool]:
    """(whether traces are asked for, whether ``ACPIO_OTEL`` asked for them explicitly).

    :raises ValueError: for an ``ACPIO_OTEL`` that is neither on (``1``, ``true``)
        nor off (``0``, ``false``).
    """
    explicit = os.environ.get("ACPIO_OTEL")
    if explicit is not None:
        value = explicit.strip().lower()
        if value in _ON:
            return True, True
        if value in _OFF:
            return False, False
        raise ValueError(f"ACPIO_OTEL must be 1 (trace) or 0 (do not), got {explicit!r}")
    environ = os.environ
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False, False
    exporter = environ.get("OTEL_TRACES_EXPORTER")
    if exporter is not None:
        return exporter.strip().lower() not in ("", "none"), False
    asked = bool(
        environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        or environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    )
    return asked, False


def agent_tracer(agent: Agent) -> AgentTracer | None:
    """The tracer of ``agent``'s sessions, or None when tracing is off (nothing imported).

    :raises ImportError: when ``ACPIO_OTEL=1`` but the ``otel`` extra is not
        installed (the standard OpenTelemetry environment alone only logs a
        warning then: it may be meant for other programs).
    :raises ValueError: for an ``ACPIO_OTEL`` or an exporter setting acpio cannot honour.
    """
    global _warned  # noqa: PLW0603 - one warning per process
    asked, explicit = tracing_requested()
    if not asked:
        return None
    try:
        from . import otel  # noqa: PLC0415 - OpenTelemetry only when traces are asked for
    except ImportError as exc:
        if explicit:
            raise ImportError(
                f"ACPIO_OTEL=1 asks for traces, but OpenTelemetry is missing ({exc}); "
                "install the otel extra: pip install 'acpio[otel]'"
            ) from exc
        if not _warned:
            _warned = True
            logger.warning(
                "the OpenTelemetry environment asks for traces, but acpio's otel extra is "
                "not installed (%s); serving without traces: pip install 'acpio[otel]'",
                exc,
            )
        return None
    return otel.OtelTracer(agent)
