"""Traces of a pydantic-ai agent: the turn span names the model's provider, and the spans
pydantic-ai makes itself (its agent run, model requests) nest under the turn's span.

pydantic-ai is instrumented with a tracer provider of the test's own; acpio's tracer is
pointed at the same provider (the process's global provider is left alone).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai import Agent
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.models.test import TestModel
from tracing_support import traced_in_memory

from acpio.adapters.pydantic_ai import ACPAgent
from acpio.testing import MockClient

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def provider(
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    with traced_in_memory(monkeypatch) as pair:
        yield pair


def _ancestors(span: ReadableSpan, spans: list[ReadableSpan]) -> list[str]:
    by_id = {s.context.span_id: s for s in spans if s.context is not None}
    names: list[str] = []
    while span.parent is not None and span.parent.span_id in by_id:
        span = by_id[span.parent.span_id]
        names.append(span.name)
    return names


async def test_the_model_calls_nest_under_the_turn(
    provider: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    tracer_provider, exporter = provider

    agent = Agent(
        TestModel(custom_output_text="done"),
        name="helper",
        capabilities=[Instrumentation(InstrumentationSettings(tracer_provider=tracer_provider))],
    )

    @agent.tool_plain
    def word_count(text: str) -> int:
        return len(text.split())

    async with MockClient(ACPAgent(agent)) as client:
        session = await client.new_session()
        result = await session.prompt("count")
        assert result.stop_reason == "end_turn"
    spans = list(exporter.get_finished_spans())
    (turn,) = [s for s in spans if s.name == "invoke_agent helper" and s.parent is None]
    assert turn.attributes is not None
    assert turn.attributes["gen_ai.system"] == "test"  # pydantic-ai's name of the provider
    # pydantic-ai's own spans (its run, each model request) are in the turn's trace, below it.
    own = [s for s in spans if s is not turn and s.name.startswith(("chat", "invoke_agent"))]
    assert any(s.name.startswith("chat") for s in own)
    assert own and all(turn.name in _ancestors(s, spans) for s in own)
    # pydantic-ai traces its tool executions itself: acpio adds its status to that span
    # instead of making a second one.
    (call,) = [s for s in spans if s.name == "execute_tool word_count"]
    assert call.instrumentation_scope is not None
    assert call.instrumentation_scope.name == "pydantic-ai"
    assert call.attributes is not None
    assert call.attributes["acpio.tool_call.status"] == "completed"
    assert "acpio.tool_call.id" in call.attributes
