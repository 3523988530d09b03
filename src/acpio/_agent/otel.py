"""OpenTelemetry spans for an agent's turns, tool calls and waits (the ``otel`` extra).

How this works: :class:`OtelTracer` is the one implementation of
:mod:`acpio._session.observe`. Each prompt turn is a span ``invoke_agent {agent
name}`` (kind ``INTERNAL``), continuing the client's W3C trace context from the
prompt's ``_meta`` (``traceparent``, ``tracestate``, ``baggage``, through the
configured propagators) or starting a trace of its own; it is the current
context while the agent's handler runs, so the spans of model calls that
pydantic-ai or LangChain make nest under it. Each tool call is a child span
``execute_tool {gen_ai.tool.name}`` (current inside its ``async with`` block),
each wait for the user a child span ``wait_for_user {kind}`` (the GenAI
conventions name none; see docs/tracing.md). A turn's end ends every span it
started that is still open.

The GenAI conventions are in Development: by default the attributes follow
their v1.36.0 form (the provider in ``gen_ai.system``), as the conventions ask of
instrumentations until their users opt in; with ``gen_ai_latest_experimental``
in ``OTEL_SEMCONV_STABILITY_OPT_IN`` the latest form (``gen_ai.provider.name``).

The process's tracer provider is set up once, when the first agent is traced:
an application's own SDK provider is used as it is; otherwise one is made from
the standard environment (``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``,
``OTEL_TRACES_EXPORTER``, ``OTEL_EXPORTER_OTLP_*``; the service name defaults to
the agent's name) and made global, so other libraries' spans go to the same place.
"""

from __future__ import annotations

try:
    import opentelemetry.trace
except ImportError as exc:  # pragma: no cover - acpio._agent.tracing imports this only guarded
    raise ImportError(
        f"acpio's traces need the otel extra: pip install 'acpio[otel]' ({exc})"
    ) from exc

import logging
import os
import sys
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from opentelemetry import context as otel_context
from opentelemetry import propagate
from opentelemetry.context import Context
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
    SpanExporter,
)
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from .._session.observe import Restore, SessionObserver, SpanTrace, TurnTrace

if TYPE_CHECKING:
    from .agent import Agent
    from .session import Session

__all__ = ["OtelTracer", "latest_conventions"]

logger = logging.getLogger(__name__)

#: The W3C trace context keys ACP reserves in ``_meta``.
TRACE_KEYS: Final = ("traceparent", "tracestate", "baggage")
INTERNAL: Final = SpanKind.INTERNAL
#: The provider a plain agent reports when it names none (the conventions' fallback).
OTHER: Final = "_OTHER"

_setup_lock = threading.Lock()
_tracer: Tracer | None = None


def latest_conventions() -> bool:
    """Whether ``OTEL_SEMCONV_STABILITY_OPT_IN`` asks for the latest GenAI conventions."""
    values = os.environ.get("OTEL_SEMCONV_STABILITY_OPT_IN", "")
    return "gen_ai_latest_experimental" in {value.strip() for value in values.split(",")}


def _exporters() -> list[tuple[SpanExporter, bool]]:
    """The exporters ``OTEL_TRACES_EXPORTER`` names, each with whether it is batched.

    :raises ValueError: for an exporter or OTLP protocol acpio does not ship.
    """
    names = os.environ.get("OTEL_TRACES_EXPORTER", "otlp")
    exporters: list[tuple[SpanExporter, bool]] = []
    for name in (part.strip().lower() for part in names.split(",")):
        if name in ("", "none"):
            continue
        if name == "console":
            # stdout carries the protocol: spans printed go to stderr.
            exporters.append((ConsoleSpanExporter(out=sys.stderr), False))
        elif name == "otlp":
            protocol = os.environ.get(
                "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
                os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
            ).strip()
            if protocol != "http/protobuf":
                raise ValueError(
                    f"acpio[otel] exports OTLP over http/protobuf, not {protocol!r}: set "
                    "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf, or configure a tracer "
                    "provider of your own with that exporter before the agent starts"
                )
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # noqa: PLC0415
                OTLPSpanExporter,
            )

            exporters.append((OTLPSpanExporter(), True))
        else:
            raise ValueError(
                f"OTEL_TRACES_EXPORTER names {name!r}; acpio[otel] ships otlp "
                "(http/protobuf), console (to stderr) and none"
            )
    return exporters


def _process_tracer(service_name: str) -> Tracer:
    """The tracer of acpio's spans, the process's provider set up on first use."""
    global _tracer  # noqa: PLW0603 - one provider per process
    with _setup_lock:
        if _tracer is not None:
            return _tracer
        provider = opentelemetry.trace.get_tracer_provider()
        if not isinstance(provider, TracerProvider):
            # Nobody configured the SDK: make the provider the environment describes.
            resource = Resource.create()
            if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
                resource = resource.merge(Resource({SERVICE_NAME: service_name}))
            sdk = TracerProvider(resource=resource)
            for exporter, batched in _exporters():
                processor = (
                    BatchSpanProcessor(exporter) if batched else SimpleSpanProcessor(exporter)
                )
                sdk.add_span_processor(processor)
            opentelemetry.trace.set_tracer_provider(sdk)
            provider = opentelemetry.trace.get_tracer_provider()
        _tracer = provider.get_tracer("acpio", _version())
        return _tracer


def _version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415

    try:
        return version("acpio")
    except PackageNotFoundError:  # pragma: no cover - a source tree without metadata
        return None


class OtelTracer:
    """Traces one agent's sessions with OpenTelemetry (see the module doc)."""

    def __init__(self, agent: Agent) -> None:
        self.agent: Final = agent
        self.tracer: Final = _process_tracer(agent.info.name)
        self.latest: Final = latest_conventions()
        #: Where the provider goes: ``gen_ai.provider.name`` (latest) or ``gen_ai.system``.
        self.provider_key: Final = "gen_ai.provider.name" if self.latest else "gen_ai.system"

    def session(self, session: Session) -> SessionObserver:
        """The observer of ``session``'s turns."""
        return _SessionSpans(self, session)

    def flush(self) -> None:
        """Export the finished spans now (blocking)."""
        provider = opentelemetry.trace.get_tracer_provider()
        force_flush = getattr(provider, "force_flush", None)
        if callable(force_flush):
            force_flush()


class _SessionSpans:
    """Makes the span of each turn of one session."""

    def __init__(self, tracer: OtelTracer, session: Session) -> None:
        self.tracer = tracer
        self.session = session

    def turn(self, meta: Mapping[str, object] | None) -> TurnTrace:
        owner = self.tracer
        agent = owner.agent
        carrier = (
            {key: value for key in TRACE_KEYS if isinstance(value := meta.get(key), str)}
            if meta
            else None
        )
        # An empty base: a turn without the client's context starts a trace of its own.
        parent = propagate.extract(carrier, context=Context()) if carrier else Context()
        try:
            provider = agent.model_provider(self.session) or OTHER
        except Exception:
            logger.exception("Agent.model_provider failed; the turn's span reports %s", OTHER)
            provider = OTHER
        name = agent.info.name
        attributes: dict[str, str] = {
            "gen_ai.operation.name": "invoke_agent",
            owner.provider_key: provider,
            "gen_ai.agent.name": name,
            "gen_ai.conversation.id": self.session.id,
        }
        if owner.latest:
            attributes["gen_ai.agent.version"] = agent.info.version
        span = owner.tracer.start_span(
            f"invoke_agent {name}", context=parent, kind=INTERNAL, attributes=attributes
        )
        return _TurnSpan(owner.tracer, span, self.session.id)


def _enter(span: Span) -> Restore:
    token = otel_context.attach(opentelemetry.trace.set_span_in_context(span))
    return lambda: otel_context.detach(token)


class _TurnSpan:
    """The span of one turn and the spans it started that are still open."""

    def __init__(self, tracer: Tracer, span: Span, session_id: str) -> None:
        self.tracer = tracer
        self.span = span
        self.session_id = session_id
        self.context = opentelemetry.trace.set_span_in_context(span)
        self.open: dict[int, _ChildSpan] = {}
        self.error_type: str | None = None
        self.ended = False

    def enter(self) -> Restore:
        return _enter(self.span)

    def tool_call(self, tool_call_id: str, name: str) -> SpanTrace:
        span_name = f"execute_tool {name}"
        current = opentelemetry.trace.get_current_span()
        if current.is_recording() and getattr(current, "name", None) == span_name:
            # The framework traces this very execution (pydantic-ai does): one span, not two.
            return _JoinedSpan(current, tool_call_id)
        span = self.tracer.start_span(
            span_name,
            context=self.context,
            kind=INTERNAL,
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "gen_ai.tool.call.id": tool_call_id,
            },
        )
        return self._child(span, "acpio.tool_call.status")

    def wait(self, kind: str, parent: SpanTrace | None, tool_call_id: str | None) -> SpanTrace:
        attributes = {"acpio.wait.kind": kind, "gen_ai.conversation.id": self.session_id}
        if tool_call_id is not None:
            attributes["gen_ai.tool.call.id"] = tool_call_id
        if parent is None:
            # Asked inside a tool call's block: the wait is that call's.
            current = opentelemetry.trace.get_current_span()
            parent = next((c for c in self.open.values() if c.span is current), None)
        context = (
            parent.context
            if isinstance(parent, _ChildSpan | _JoinedSpan) and not parent.ended
            else None
        )
        span = self.tracer.start_span(
            f"wait_for_user {kind}",
            context=context or self.context,
            kind=INTERNAL,
            attributes=attributes,
        )
        return self._child(span, "acpio.wait.outcome")

    def _child(self, span: Span, status_key: str) -> _ChildSpan:
        child = _ChildSpan(self, span, status_key)
        if self.ended:  # a late call of work that outlived its turn: nothing stays open
            child.end("unfinished")
        else:
            self.open[id(child)] = child
        return child

    def failed(self, error: BaseException) -> None:
        self.error_type = type(error).__qualname__
        self.span.record_exception(error)

    def end(self, stop_reason: str) -> None:
        if self.ended:
            return
        self.ended = True
        # Waits first: they may be children of tool calls.
        for child in sorted(self.open.values(), key=lambda c: c.status_key != "acpio.wait.outcome"):
            if stop_reason == "cancelled":
                child.end("cancelled")
            elif stop_reason == "error":
                child.end("unfinished", "_OTHER")
            else:
                child.end("unfinished")
        span = self.span
        span.set_attribute("gen_ai.response.finish_reasons", [stop_reason])
        span.set_attribute("acpio.stop_reason", stop_reason)
        if stop_reason == "error" or self.error_type is not None:
            error_type = self.error_type or OTHER
            span.set_attribute("error.type", error_type)
            span.set_status(Status(StatusCode.ERROR, error_type))
        span.end()


class _ChildSpan:
    """A tool call's or a wait's span; ends once."""

    def __init__(self, turn: _TurnSpan, span: Span, status_key: str) -> None:
        self.turn = turn
        self.span = span
        self.status_key = status_key
        self.context = opentelemetry.trace.set_span_in_context(span)
        self.ended = False

    def enter(self) -> Restore:
        return _enter(self.span)

    def end(self, status: str, error_type: str | None = None) -> None:
        if self.ended:
            return
        self.ended = True
        self.turn.open.pop(id(self), None)
        span = self.span
        span.set_attribute(self.status_key, status)
        if error_type is not None:
            span.set_attribute("error.type", error_type)
            span.set_status(Status(StatusCode.ERROR, error_type))
        span.end()


class _JoinedSpan:
    """A framework's own ``execute_tool`` span of the call: acpio adds to it, never ends it."""

    def __init__(self, span: Span, tool_call_id: str) -> None:
        self.span = span
        self.context = opentelemetry.trace.set_span_in_context(span)
        self.ended = False
        span.set_attribute("acpio.tool_call.id", tool_call_id)

    def enter(self) -> Restore:
        return _enter(self.span)

    def end(self, status: str, error_type: str | None = None) -> None:
        if not self.ended and self.span.is_recording():
            self.span.set_attribute("acpio.tool_call.status", status)
        self.ended = True
