"""Traces in process: the spans of turns, tool calls and waits, read from the SDK's memory exporter.

The agent is served by the mock client over v2 and v1 with ``ACPIO_OTEL=1``; acpio's
tracer is pointed at a provider of the test's own (the process's global provider is
left alone), so every span acpio ends lands in an ``InMemorySpanExporter``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator

import anyio
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import ConsoleSpanExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from tracing_support import traced_in_memory

import acpio
from acpio._agent import otel, tracing
from acpio.testing import ElicitationPolicy, MockClient, PermissionPolicy

pytestmark = pytest.mark.anyio

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"
ELICITING = acpio.schema.ClientCapabilities(
    elicitation=acpio.schema.ElicitationCapabilities(
        form=acpio.schema.ElicitationFormCapabilities()
    )
)


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> Iterator[InMemorySpanExporter]:
    with traced_in_memory(monkeypatch) as (_, exporter):
        yield exporter


def by_name(exporter: InMemorySpanExporter) -> dict[str, ReadableSpan]:
    return {span.name: span for span in exporter.get_finished_spans()}


class ToolAgent(acpio.Agent):
    info = acpio.Implementation(name="tool-agent", version="1.2.3")

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        text = prompt[0].text if isinstance(prompt[0], acpio.schema.TextContent) else ""
        async with session.tool_call("Run `ls`", kind="execute") as call:
            # A span made inside the block (by the test's provider) is the tool call's child.
            tracer = otel._tracer  # pyright: ignore[reportPrivateUsage]
            assert tracer is not None
            with tracer.start_as_current_span("inside the tool"):
                pass
            if text == "ask":
                outcome = await call.request_permission()
                if not outcome.allowed:
                    await call.fail("refused")
                    return "end_turn"
            if text == "fail":
                raise RuntimeError("the tool broke")
        async with session.tool_call("Read notes", name="read_notes"):
            pass
        if text == "hang":
            await anyio.sleep_forever()
        if text == "crash":
            raise ValueError("the model said no")
        return "end_turn"


@pytest.mark.parametrize("protocol_version", [2, 1])
async def test_a_turn_is_an_invoke_agent_span_with_its_tool_calls(
    spans: InMemorySpanExporter, protocol_version: int
) -> None:
    async with MockClient(ToolAgent(), protocol_version=protocol_version) as client:
        session = await client.new_session()
        result = await session.prompt("go", meta={"traceparent": TRACEPARENT})
        assert result.stop_reason == "end_turn"
    found = by_name(spans)
    turn = found["invoke_agent tool-agent"]
    assert turn.kind is SpanKind.INTERNAL
    assert dict(turn.attributes or {}) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.system": "_OTHER",
        "gen_ai.agent.name": "tool-agent",
        "gen_ai.conversation.id": session.id,
        "gen_ai.response.finish_reasons": ("end_turn",),
        "acpio.stop_reason": "end_turn",
    }
    # The turn continues the client's trace.
    assert turn.context is not None and turn.parent is not None
    assert format(turn.context.trace_id, "032x") == TRACE_ID
    assert format(turn.parent.span_id, "016x") == PARENT_ID
    assert turn.parent.is_remote
    assert turn.status.status_code is StatusCode.UNSET
    # A tool call without a name is named from its kind, never by its title.
    execute = found["execute_tool execute"]
    read = found["execute_tool read_notes"]
    for call in (execute, read):
        assert call.parent is not None and call.parent.span_id == turn.context.span_id
        assert call.attributes is not None
        assert call.attributes["gen_ai.operation.name"] == "execute_tool"
        assert call.attributes["acpio.tool_call.status"] == "completed"
        assert str(call.attributes["gen_ai.tool.call.id"]) in session.view.tool_calls
    assert execute.context is not None
    inside = found["inside the tool"]
    assert inside.parent is not None and inside.parent.span_id == execute.context.span_id


async def test_without_traceparent_a_turn_starts_its_own_trace(
    spans: InMemorySpanExporter,
) -> None:
    async with MockClient(ToolAgent()) as client:
        session = await client.new_session()
        await session.prompt("go")
        await session.prompt("go", meta={"traceparent": "not a trace context", "other": 1})
    turns = [span for span in spans.get_finished_spans() if span.name.startswith("invoke_agent")]
    assert len(turns) == 2
    assert all(span.parent is None for span in turns)
    assert len({span.context.trace_id for span in turns if span.context is not None}) == 2


async def test_latest_conventions_on_opt_in(
    spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "http, gen_ai_latest_experimental")
    async with MockClient(ToolAgent()) as client:
        session = await client.new_session()
        await session.prompt("go")
    attributes = dict(by_name(spans)["invoke_agent tool-agent"].attributes or {})
    assert attributes["gen_ai.provider.name"] == "_OTHER"
    assert attributes["gen_ai.agent.version"] == "1.2.3"
    assert "gen_ai.system" not in attributes


@pytest.mark.parametrize("protocol_version", [2, 1])
async def test_a_permission_wait_is_a_span_of_its_tool_call(
    spans: InMemorySpanExporter, protocol_version: int
) -> None:
    client = MockClient(
        ToolAgent(), protocol_version=protocol_version, policy=PermissionPolicy.reject()
    )
    async with client:
        session = await client.new_session()
        await session.prompt("ask")
    found = by_name(spans)
    wait = found["wait_for_user permission"]
    execute = found["execute_tool execute"]
    assert execute.context is not None and wait.parent is not None
    assert wait.parent.span_id == execute.context.span_id
    assert wait.attributes is not None
    assert wait.attributes["acpio.wait.kind"] == "permission"
    assert wait.attributes["acpio.wait.outcome"] == "reject_once"
    assert wait.attributes["gen_ai.tool.call.id"] == execute.attributes["gen_ai.tool.call.id"]  # type: ignore[index]
    assert execute.attributes is not None
    assert execute.attributes["acpio.tool_call.status"] == "failed"
    assert execute.status.status_code is StatusCode.ERROR
    assert execute.attributes["error.type"] == "_OTHER"


async def test_a_failed_tool_and_turn_carry_the_error(spans: InMemorySpanExporter) -> None:
    async with MockClient(ToolAgent()) as client:
        session = await client.new_session()
        result = await session.prompt("fail")
        assert result.stop_reason == "error"
    found = by_name(spans)
    execute = found["execute_tool execute"]
    assert execute.status.status_code is StatusCode.ERROR
    assert execute.attributes is not None and execute.attributes["error.type"] == "RuntimeError"
    turn = found["invoke_agent tool-agent"]
    assert turn.status.status_code is StatusCode.ERROR
    assert turn.attributes is not None and turn.attributes["error.type"] == "RuntimeError"
    assert turn.attributes["acpio.stop_reason"] == "error"
    assert [event.name for event in turn.events] == ["exception"]


async def test_cancel_ends_every_span_of_the_turn(spans: InMemorySpanExporter) -> None:
    async with MockClient(ToolAgent()) as client:
        session = await client.new_session()
        turn = await session.start_prompt("hang")
        await session.wait_for(lambda: len(session.view.tool_calls) == 2 or None)
        await session.cancel()
        result = await turn.wait()
        assert result.stop_reason == "cancelled"
    found = by_name(spans)
    span = found["invoke_agent tool-agent"]
    assert span.attributes is not None and span.attributes["acpio.stop_reason"] == "cancelled"
    assert span.status.status_code is StatusCode.UNSET
    assert span.end_time is not None


class WaitingAgent(acpio.Agent):
    info = acpio.Implementation(name="waiting", version="1")

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        call = await session.tool_call("Deploy", kind="execute", name="deploy")
        await session.elicit("Which region?", {"type": "object", "properties": {}})
        await call.request_permission()
        return "end_turn"


async def test_cancel_during_a_wait_ends_the_wait_and_the_open_tool_call(
    spans: InMemorySpanExporter,
) -> None:
    client = MockClient(
        WaitingAgent(),
        policy=PermissionPolicy.never(),
        elicitation=ElicitationPolicy.accept({}),
        capabilities=ELICITING,
    )
    async with client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        await client.wait_for_permission_request()
        await session.cancel()
        assert (await turn.wait()).stop_reason == "cancelled"
    found = by_name(spans)
    elicitation = found["wait_for_user elicitation"]
    assert elicitation.attributes is not None
    assert elicitation.attributes["acpio.wait.outcome"] == "accept"
    wait = found["wait_for_user permission"]
    assert wait.attributes is not None and wait.attributes["acpio.wait.outcome"] == "cancelled"
    deploy = found["execute_tool deploy"]
    assert deploy.attributes is not None
    assert deploy.attributes["acpio.tool_call.status"] == "cancelled"
    turn_span = found["invoke_agent waiting"]
    assert turn_span.end_time is not None and wait.end_time is not None
    assert wait.end_time <= turn_span.end_time


class AskingAgent(acpio.Agent):
    info = acpio.Implementation(name="asking", version="1")

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        async with session.tool_call("Set up", name="setup") as call:
            await session.elicit("Name?", {"type": "object", "properties": {}}, tool_call=call)
        await session.elicit("Anything else?", {"type": "object", "properties": {}})
        return "end_turn"


async def test_an_elicitation_is_a_span_of_the_tool_call_it_is_asked_in(
    spans: InMemorySpanExporter,
) -> None:
    policy = ElicitationPolicy.decline()
    async with MockClient(AskingAgent(), elicitation=policy, capabilities=ELICITING) as client:
        session = await client.new_session()
        await session.prompt("go")
    finished = spans.get_finished_spans()
    call = by_name(spans)["execute_tool setup"]
    turn = by_name(spans)["invoke_agent asking"]
    waits = [s for s in finished if s.name == "wait_for_user elicitation"]
    assert [s.parent.span_id if s.parent else None for s in waits] == [
        call.context.span_id if call.context else None,
        turn.context.span_id if turn.context else None,
    ]
    assert waits[0].attributes is not None
    assert waits[0].attributes["gen_ai.tool.call.id"] == call.attributes["gen_ai.tool.call.id"]  # type: ignore[index]
    assert waits[0].attributes["acpio.wait.outcome"] == "decline"


async def test_tracing_off_leaves_sessions_unobserved(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ACPIO_OTEL", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    assert tracing.agent_tracer(ToolAgent()) is None
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "none")
    assert tracing.agent_tracer(ToolAgent()) is None
    monkeypatch.setenv("ACPIO_OTEL", "maybe")
    with pytest.raises(ValueError, match="ACPIO_OTEL must be 1"):
        tracing.agent_tracer(ToolAgent())


def test_the_environment_asks_for_traces(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ACPIO_OTEL", "OTEL_TRACES_EXPORTER", "OTEL_SDK_DISABLED"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    assert tracing.tracing_requested() == (True, False)
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    assert tracing.tracing_requested() == (False, False)
    monkeypatch.setenv("ACPIO_OTEL", "1")
    assert tracing.tracing_requested() == (True, True)
    monkeypatch.setenv("ACPIO_OTEL", "0")
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "otlp")
    assert tracing.tracing_requested() == (False, False)


def test_an_exporter_acpio_cannot_honour_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "otlp")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    with pytest.raises(ValueError, match="http/protobuf"):
        otel._exporters()  # pyright: ignore[reportPrivateUsage]
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "zipkin")
    with pytest.raises(ValueError, match="zipkin"):
        otel._exporters()  # pyright: ignore[reportPrivateUsage]


def test_untraced_agents_import_nothing_of_opentelemetry() -> None:
    # A fresh interpreter: this one has OpenTelemetry loaded by the tests above.
    script = textwrap.dedent(
        """
        import sys
        import anyio
        import acpio
        from acpio.testing import MockClient

        class Echo(acpio.Agent):
            async def prompt(self, session, prompt):
                async with session.tool_call("Echo", name="echo"):
                    await session.message(acpio.text_of(prompt))
                return "end_turn"

        async def main():
            async with MockClient(Echo()) as client:
                session = await client.new_session()
                assert (await session.prompt("hi")).text == "hi"

        anyio.run(main)
        print(sorted(m for m in sys.modules if m.startswith("opentelemetry")))
        """
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "ACPIO_OTEL"))}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


def test_console_spans_go_to_stderr_never_stdout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console, otlp")
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_PROTOCOL", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", raising=False)
    (console, batched), (otlp, otlp_batched) = otel._exporters()  # pyright: ignore[reportPrivateUsage]
    assert isinstance(console, ConsoleSpanExporter) and not batched
    assert console.out is sys.stderr  # stdout carries the protocol
    assert isinstance(otlp, OTLPSpanExporter) and otlp_batched
