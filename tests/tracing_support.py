"""acpio's tracer pointed at an in-memory exporter for one test: the tracing tests read the
spans it finished without an OTLP receiver and without touching the global tracer provider."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from acpio._agent import otel


@contextlib.contextmanager
def traced_in_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    """Tracing on (``ACPIO_OTEL=1``, the conventions' default form) with acpio's spans going
    to the exporter yielded beside its provider; the provider is shut down afterwards."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setenv("ACPIO_OTEL", "1")
    monkeypatch.delenv("OTEL_SEMCONV_STABILITY_OPT_IN", raising=False)
    monkeypatch.setattr(otel, "_tracer", provider.get_tracer("acpio"))
    try:
        yield provider, exporter
    finally:
        provider.shutdown()
