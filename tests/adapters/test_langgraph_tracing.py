"""Traces of a LangGraph agent: the turn span names the provider of the model picker's choice."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from support import EXAMPLES
from tracing_support import traced_in_memory

from acpio.adapters.langgraph import ACPAgent, ModelChoice, chosen_model
from acpio.testing import MockClient

sys.path.insert(0, str(EXAMPLES))
from langgraph_agent import ScriptedChatModel

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> Iterator[InMemorySpanExporter]:
    with traced_in_memory(monkeypatch) as (_, exporter):
        yield exporter


async def test_the_turn_reports_the_chosen_models_provider(spans: InMemorySpanExporter) -> None:
    async def answer(state: MessagesState) -> dict[str, object]:
        model = chosen_model()
        return {"messages": [AIMessage(content=f"answered by {type(model).__name__}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    scripted = ScriptedChatModel(script=lambda messages: AIMessage(content="hi"))
    models = [
        ModelChoice("local", "Local", scripted),
        ModelChoice("claude", "Claude", "anthropic:claude-sonnet-4-5"),
    ]
    async with MockClient(ACPAgent(builder.compile(), models=models)) as client:
        session = await client.new_session()
        await session.prompt("hi")
        await session.set_config_option("model", "claude")
        await session.prompt("hi")
    providers = [
        (span.attributes or {}).get("gen_ai.system")
        for span in spans.get_finished_spans()
        if span.name.startswith("invoke_agent")
    ]
    assert providers == [scripted._get_ls_params().get("ls_provider"), "anthropic"]  # pyright: ignore[reportPrivateUsage]
