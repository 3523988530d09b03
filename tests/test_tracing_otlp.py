"""Traces over the wire: an agent started with ``acpio.run()`` or ``acpio serve`` exports its spans
over OTLP/HTTP to a real receiver, parented to the client's ``traceparent``, on v1 and v2.

The agent is ``examples/traced_agent.py`` in a process of its own, configured only by the
environment (the standard OpenTelemetry variables for stdio, ``ACPIO_OTEL=1`` with an
endpoint for ``acpio serve``). Each run sends two turns: one whose tool call asks for
permission (allowed), and one cancelled while its tool call runs.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import anyio.to_thread
import pytest
import websockets.sync.client
from otlp_receiver import Received, Receiver, otlp_receiver

from acpio.testing import MockClient, PermissionPolicy

REPO = Path(__file__).resolve().parents[1]
AGENT = REPO / "examples" / "traced_agent.py"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with otlp_receiver() as running:
        yield running


def traceparent() -> tuple[str, str, str]:
    """A fresh client trace: (traceparent, trace id, parent span id)."""
    trace_id, span_id = secrets.token_hex(16), secrets.token_hex(8)
    return f"00-{trace_id}-{span_id}-01", trace_id, span_id


def tracing_env(receiver: Receiver, **extra: str) -> dict[str, str]:
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("OTEL_", "ACPIO_OTEL"))
    }
    env.update(
        OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL="http/protobuf",
        OTEL_BSP_SCHEDULE_DELAY="50",
        **extra,
    )
    return env


def of_trace(spans: list[Received], trace_id: str) -> dict[str, Received]:
    return {span.name: span for span in spans if span.trace_id == trace_id}


def check_turns(spans: list[Received], asked: tuple[str, str], cancelled: tuple[str, str]) -> None:
    """The first turn (tool call, permission wait, end_turn) and the cancelled one."""
    trace_id, parent_id = asked
    found = of_trace(spans, trace_id)
    turn = found["invoke_agent word-counter"]
    assert turn.parent_span_id == parent_id  # continues the client's trace
    assert turn.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert turn.attributes["gen_ai.agent.name"] == "word-counter"
    assert turn.attributes["gen_ai.system"] == "word-counter"  # Agent.model_provider
    assert turn.attributes["acpio.stop_reason"] == "end_turn"
    assert str(turn.attributes["gen_ai.conversation.id"]).startswith("sess_")
    call = found["execute_tool count_words"]
    assert call.parent_span_id == turn.span_id
    assert call.attributes["gen_ai.tool.name"] == "count_words"
    assert call.attributes["acpio.tool_call.status"] == "completed"
    wait = found["wait_for_user permission"]
    assert wait.parent_span_id == call.span_id
    assert wait.attributes["acpio.wait.outcome"] == "allow_once"
    assert not (turn.error or call.error or wait.error)

    trace_id, parent_id = cancelled
    found = of_trace(spans, trace_id)
    turn = found["invoke_agent word-counter"]
    assert turn.parent_span_id == parent_id
    assert turn.attributes["acpio.stop_reason"] == "cancelled"
    call = found["execute_tool count_words"]
    assert call.parent_span_id == turn.span_id
    assert call.attributes["acpio.tool_call.status"] == "cancelled"
    assert turn.ended and call.ended


def arrived(*trace_ids: str) -> object:
    def check(spans: list[Received]) -> bool:
        names = [{s.name for s in spans if s.trace_id == trace_id} for trace_id in trace_ids]
        return all("invoke_agent word-counter" in found for found in names)

    return check


@pytest.mark.anyio
@pytest.mark.parametrize("protocol_version", [2, 1])
async def test_run_over_stdio_exports_the_turns(receiver: Receiver, protocol_version: int) -> None:
    env = tracing_env(receiver, OTEL_TRACES_EXPORTER="otlp", OTEL_SERVICE_NAME="counting")
    first, first_trace, first_parent = traceparent()
    second, second_trace, second_parent = traceparent()
    client = MockClient(
        [sys.executable, str(AGENT)],
        env=env,
        policy=PermissionPolicy.allow(),
        protocol_version=protocol_version,
    )
    async with client:
        session = await client.new_session()
        result = await session.prompt("count these please ask", meta={"traceparent": first})
        assert result.text == "4 words"
        turn = await session.start_prompt("wait", meta={"traceparent": second})
        await session.wait_for(
            lambda: any(c.status == "pending" for c in session.view.tool_calls.values()) or None
        )
        await session.cancel()
        assert (await turn.wait()).stop_reason == "cancelled"
    spans = await anyio.to_thread.run_sync(receiver.wait_for, arrived(first_trace, second_trace))
    check_turns(spans, (first_trace, first_parent), (second_trace, second_parent))
    assert receiver.paths and set(receiver.paths) == {"/v1/traces"}
    assert spans[0].resource["service.name"] == "counting"


class Socket:
    """A raw JSON-RPC client over the remote transport's WebSocket."""

    def __init__(self, socket: websockets.sync.client.ClientConnection, version: int) -> None:
        self.socket = socket
        self.version = version
        self.next_id = 0

    def send(self, method: str, params: dict[str, object], *, notify: bool = False) -> int:
        message: dict[str, object] = {"jsonrpc": "2.0", "method": method, "params": params}
        self.next_id += 1
        if not notify:
            message["id"] = self.next_id
        self.socket.send(json.dumps(message))
        return self.next_id

    def until(self, done: object) -> dict[str, object]:
        """Read messages, allowing every permission request, until ``done(message)``."""
        while True:
            message = json.loads(self.socket.recv(timeout=30))
            if message.get("method") == "session/request_permission":
                answer = {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
                self.socket.send(
                    json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": answer})
                )
                continue
            if done(message):  # type: ignore[operator]
                return message


def _update(message: dict[str, object]) -> dict[str, object]:
    params = message.get("params")
    if message.get("method") != "session/update" or not isinstance(params, dict):
        return {}
    return params.get("update", {})  # type: ignore[no-any-return]


def drive_remote(url: str, version: int, first: str, second: str) -> None:
    """Initialize, open a session and run the two turns over a WebSocket."""
    with websockets.sync.client.connect(url.replace("http", "ws", 1), open_timeout=10) as ws:
        client = Socket(ws, version)
        init = (
            {"protocolVersion": 1, "clientCapabilities": {}}
            if version == 1
            else {"protocolVersion": 2, "info": {"name": "test", "version": "1"}}
        )
        asked = client.send("initialize", init)
        client.until(lambda m: m.get("id") == asked)
        asked = client.send("session/new", {"cwd": "/tmp", "mcpServers": []})
        answer = client.until(lambda m: m.get("id") == asked)
        session_id = answer["result"]["sessionId"]  # type: ignore[index]

        def prompt(text: str, parent: str) -> int:
            params = {
                "sessionId": session_id,
                "prompt": [{"type": "text", "text": text}],
                "_meta": {"traceparent": parent},
            }
            return client.send("session/prompt", params)

        def ended(request_id: int) -> object:
            if version == 1:  # v1 answers the prompt at the end of its turn
                return lambda m: m.get("id") == request_id
            return lambda m: _update(m).get("state") == "idle"

        asked = prompt("count these please ask", first)
        client.until(ended(asked))
        asked = prompt("wait", second)
        client.until(lambda m: _update(m).get("sessionUpdate") in ("tool_call", "tool_call_update"))
        client.send("session/cancel", {"sessionId": session_id}, notify=True)
        client.until(ended(asked))


@pytest.mark.parametrize("protocol_version", [2, 1])
def test_acpio_serve_exports_the_turns(
    receiver: Receiver, protocol_version: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from remote.server import served  # noqa: PLC0415 - the remote tests' helper

    for name in [name for name in os.environ if name.startswith("OTEL_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("ACPIO_OTEL", "1")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
    first, first_trace, first_parent = traceparent()
    second, second_trace, second_parent = traceparent()
    with served(f"{AGENT}:WordCounter", "--store", "memory") as url:
        drive_remote(url, protocol_version, first, second)
        # The connection's spans are exported when it ends, while the server goes on.
        spans = receiver.wait_for(arrived(first_trace, second_trace))
    check_turns(spans, (first_trace, first_parent), (second_trace, second_parent))
    assert spans[0].resource["service.name"] == "word-counter"  # the agent's name by default
