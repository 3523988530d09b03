"""examples/echo_agent.py, in-process and as the real subprocess an editor would launch."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import anyio
import anyio.abc
import pytest

from acpio import schema
from acpio.testing import MockClient

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[1]
ECHO = REPO / "examples" / "echo_agent.py"
COMMAND = [sys.executable, os.fspath(ECHO)]


def _load_echo() -> ModuleType:
    spec = importlib.util.spec_from_file_location("echo_agent_under_test", ECHO)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EchoAgent = _load_echo().EchoAgent


async def test_echo_streams_the_prompt_back_word_by_word() -> None:
    async with MockClient(EchoAgent()) as client:
        assert client.agent_info.name == "echo-agent"
        session = await client.new_session()
        result = await session.prompt("hello big world")
        assert (result.stop_reason, result.text) == ("end_turn", "hello big world")
        chunks = [u for u in result.updates if isinstance(u, schema.AgentMessageChunk)]
        assert [c.content.text for c in chunks] == ["hello", " big", " world"]  # type: ignore[union-attr]
        assert len({c.message_id for c in chunks}) == 1
        assert isinstance(result.updates[0], schema.UserMessage)
        assert result.updates[0].message_id == result.message_id
        assert client.violations == []


async def test_echo_without_text_says_so() -> None:
    link = schema.ResourceLink(name="notes", uri="file:///tmp/notes.txt")
    async with MockClient(EchoAgent()) as client:
        session = await client.new_session()
        result = await session.prompt([link])
        assert result.text == "(the prompt had no text)"


async def test_echo_can_be_cancelled_mid_stream() -> None:
    words = [f"w{i}" for i in range(100_000)]
    async with MockClient(EchoAgent()) as client:
        session = await client.new_session()
        turn = await session.start_prompt(" ".join(words))
        await session.wait_for(lambda: session.view.agent_messages, what="the first chunk")
        await session.cancel()
        result = await turn.wait()
        await client.list_sessions()
        assert result.stop_reason == "cancelled"
        streamed = result.text.split(" ")
        assert 0 < len(streamed) < len(words)
        assert streamed == words[: len(streamed)]
        assert isinstance(session.updates[-1], schema.IdleStateUpdate)
        assert client.violations == []


async def test_echo_as_a_subprocess_passes_the_conformance_checker(tmp_path: Path) -> None:
    async with MockClient(COMMAND, cwd=tmp_path) as client:
        assert client.initialize_response is not None
        assert client.initialize_response.protocol_version == 2
        session = await client.new_session()
        first = await session.prompt("one two")
        assert first.text == "one two"
        # Two prompts at once: the second is queued and runs after the first's idle.
        await session.start_prompt("three")
        await session.start_prompt("four")
        await session.wait_for(lambda: len(session.view.stop_reasons) == 3, what="three idles")
        assert [m.text for m in session.view.agent_messages] == ["one two", "three", "four"]
        other = await client.new_session()
        await other.resume(replay=True)
        assert other.view.messages == []
        live = [(m.role, m.message_id, m.text) for m in session.view.messages]
        await session.resume(replay=True)
        assert [(m.role, m.message_id, m.text) for m in session.view.messages] == live
        assert len(live) == 6
        await session.close()
        assert client.violations == []
    assert client.returncode == 0


# --------------------------------------------------------------------------- raw process


async def _start(tmp_path: Path) -> anyio.abc.Process:
    with (tmp_path / "stderr.txt").open("wb") as stderr:
        return await anyio.open_process(
            COMMAND,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            start_new_session=True,
        )


async def _exchange(process: anyio.abc.Process, lines: list[bytes]) -> list[object]:
    """Write ``lines``, close stdin, and read everything until the agent exits."""
    assert process.stdin is not None and process.stdout is not None
    for line in lines:
        await process.stdin.send(line + b"\n")
    await process.stdin.aclose()
    output = b""
    async for chunk in process.stdout:
        output += chunk
    assert output == b"" or output.endswith(b"\n")
    # Transport hygiene: every line on stdout is one JSON-RPC message.
    return [json.loads(line) for line in output.splitlines()]


async def test_echo_exits_0_soon_after_stdin_closes(tmp_path: Path) -> None:
    init = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": 2, "info": {"name": "c", "version": "1"}},
        }
    ).encode()
    process = await _start(tmp_path)
    try:
        with anyio.fail_after(10):
            messages = await _exchange(process, [init])
            returncode = await process.wait()
        assert returncode == 0, (tmp_path / "stderr.txt").read_text()
        assert messages == [
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {
                    "protocolVersion": 2,
                    "info": {"name": "echo-agent", "title": "Echo agent", "version": "1.0.0"},
                    "capabilities": {
                        "session": {
                            "mcp": {"stdio": {}},
                            "delete": {},
                            "additionalDirectories": {},
                        }
                    },
                },
            }
        ]
    finally:
        if process.returncode is None:
            process.kill()
        with anyio.CancelScope(shield=True):
            await process.aclose()


async def test_echo_answers_json_rpc_probes(tmp_path: Path) -> None:
    def request(request_id: object, method: str, params: object) -> dict[str, object]:
        return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}

    info = {"name": "probe", "version": "1"}
    probes = [
        b"{not json",
        b"[]",
        json.dumps(request(1, "initialize", {"protocolVersion": 0, "info": info})).encode(),
        json.dumps(request(2, "initialize", {"protocolVersion": 65535, "info": info})).encode(),
        json.dumps(request(3, "initialize", {"protocolVersion": "2", "info": info})).encode(),
        json.dumps(request(4, "_probe/unknown", {})).encode(),
        json.dumps({"jsonrpc": "2.0", "method": "_probe/notice", "params": {}}).encode(),
        json.dumps({"jsonrpc": "2.0", "method": "probe/unknown_notification"}).encode(),
        json.dumps(
            [
                request(5, "session/new", {"cwd": "relative", "mcpServers": []}),
                {"jsonrpc": "2.0", "method": "_probe/in_batch", "params": {}},
                request(6, "session/list", {"_meta": {"x": 1}, "unknownField": True}),
            ]
        ).encode(),
        json.dumps([{"jsonrpc": "2.0", "method": "_only/notifications"}]).encode(),
        json.dumps(
            request(
                7,
                "session/prompt",
                {"sessionId": "nope", "prompt": [{"type": "text", "text": "x"}]},
            )
        ).encode(),
    ]
    process = await _start(tmp_path)
    try:
        with anyio.fail_after(10):
            answers = await _exchange(process, probes)
            assert await process.wait() == 0
    finally:
        if process.returncode is None:
            process.kill()
        with anyio.CancelScope(shield=True):
            await process.aclose()

    singles = {a["id"]: a for a in answers if isinstance(a, dict) and a.get("id") is not None}
    nulls = [a for a in answers if isinstance(a, dict) and a.get("id") is None]
    batches = [a for a in answers if isinstance(a, list)]
    assert sorted(a["error"]["code"] for a in nulls) == [-32700, -32600]
    assert singles[1]["error"]["code"] == -32022
    assert singles[1]["error"]["data"] == {"requested": 0, "supported": [1, 2]}
    assert singles[2]["result"]["protocolVersion"] == 2
    assert singles[3]["error"]["code"] == -32602
    assert singles[4]["error"]["code"] == -32601
    assert singles[7]["error"] == {
        "code": -32002,
        "message": "Session not found: nope",
        "data": {"sessionId": "nope"},
    }
    # One array answers the batch's requests (not its notification); the
    # notification-only batch gets no answer at all.
    (batch,) = batches
    by_id = {a["id"]: a for a in batch}
    assert sorted(by_id) == [5, 6]
    assert by_id[5]["error"]["code"] == -32602
    assert by_id[6]["result"] == {"sessions": []}
    assert len(answers) == len(nulls) + len(singles) + 1
