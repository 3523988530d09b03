"""The Agent server: initialize and version negotiation, capabilities, auth, extensibility,
serve() over any stream pair and run() over stdio (client gone, SIGTERM, SIGINT)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import anyio.abc
import msgspec
import pytest
from v1_client import v1_client

import acpio
from acpio import schema
from acpio.testing import MockClient

pytestmark = pytest.mark.anyio

CLIENT_INFO = {"name": "test-client", "version": "1.0"}


class Plain(acpio.Agent):
    """Echoes the prompt; records what the server told it."""

    info = acpio.Implementation(name="plain-agent", version="2.3.4", title="Plain")

    def __init__(self) -> None:
        self.initialized: list[schema.InitializeRequest] = []
        self.notifications: list[tuple[str, object]] = []

    async def on_initialize(self, request: schema.InitializeRequest) -> None:
        self.initialized.append(request)

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str | None:
        await session.message(acpio.text_of(prompt) or "(nothing)")
        return None

    async def ext_method(self, method: str, params: msgspec.Raw | None) -> object:
        if method == "_plain/add":
            numbers = msgspec.json.decode(params or b"{}")
            return {"sum": numbers["a"] + numbers["b"]}
        return await super().ext_method(method, params)

    async def ext_notification(self, method: str, params: msgspec.Raw | None) -> None:
        self.notifications.append((method, msgspec.json.decode(params or b"null")))


async def initialize(client: MockClient, params: dict[str, object]) -> object:
    return await client.request("initialize", params)


# --------------------------------------------------------------------------- versions


@pytest.mark.parametrize(("requested", "answered"), [(2, 2), (3, 2), (65535, 2)])
async def test_version_negotiation_answers_the_highest_supported_at_or_below(
    requested: int, answered: int
) -> None:
    agent = Plain()
    async with MockClient(agent, initialize=False) as client:
        result = await initialize(client, {"protocolVersion": requested, "info": CLIENT_INFO})
        assert isinstance(result, dict)
        assert result["protocolVersion"] == answered
        assert agent.initialized[0].protocol_version == requested


async def test_version_0_is_refused_with_the_supported_ones() -> None:
    async with MockClient(Plain(), initialize=False) as client:
        with pytest.raises(acpio.RequestError) as raised:
            await initialize(client, {"protocolVersion": 0, "info": CLIENT_INFO})
        assert raised.value.code == -32022
        assert raised.value.data == {"requested": 0, "supported": [1, 2]}
        # The connection stays usable: the client may retry with a version we support.
        result = await initialize(client, {"protocolVersion": 2, "info": CLIENT_INFO})
        assert isinstance(result, dict) and result["protocolVersion"] == 2


async def test_a_version_1_client_gets_a_v1_connection() -> None:
    # Today's editors speak v1: their initialize has no `info`; they get v1's answer.
    v1_params = {
        "protocolVersion": 1,
        "clientCapabilities": {"fs": {"readTextFile": True}, "terminal": True},
        "clientInfo": {"name": "zed", "version": "0.200"},
    }
    agent = Plain()
    async with v1_client(agent, initialize=False) as client:
        result = await client.request("initialize", v1_params)
        assert isinstance(result, dict)
        assert result["protocolVersion"] == 1
        assert result["agentCapabilities"]["loadSession"] is True
        assert "agentInfo" in result and "info" not in result
        assert agent.client_info == acpio.Implementation(name="zed", version="0.200")
        assert agent.initialized[0].protocol_version == 1


@pytest.mark.parametrize(
    "version",
    ["2", 2.0, 2.5, True, None, -1, 65536, [2], {"v": 2}],
    ids=["string", "float", "fraction", "bool", "null", "negative", "too-big", "list", "object"],
)
async def test_a_version_that_is_not_a_uint16_is_invalid_params(version: object) -> None:
    async with MockClient(Plain(), initialize=False) as client:
        with pytest.raises(acpio.RequestError) as raised:
            await initialize(client, {"protocolVersion": version, "info": CLIENT_INFO})
        assert raised.value.code == -32602
        assert "protocolVersion" in raised.value.message


@pytest.mark.parametrize(
    "params",
    [{}, {"info": CLIENT_INFO}, {"protocolVersion": 2}, {"protocolVersion": 2, "info": {}}],
    ids=["empty", "no-version", "no-info", "info-without-name"],
)
async def test_initialize_without_required_fields_is_invalid_params(
    params: dict[str, object],
) -> None:
    async with MockClient(Plain(), initialize=False) as client:
        with pytest.raises(acpio.RequestError) as raised:
            await initialize(client, params)
        assert raised.value.code == -32602


# --------------------------------------------------------------------------- capabilities


async def test_initialize_response_carries_info_and_object_capabilities() -> None:
    async with MockClient(Plain(), initialize=False) as client:
        result = await initialize(client, {"protocolVersion": 2, "info": CLIENT_INFO})
    assert result == {
        "protocolVersion": 2,
        "info": {"name": "plain-agent", "title": "Plain", "version": "2.3.4"},
        "capabilities": {
            "session": {"mcp": {"stdio": {}}, "delete": {}, "additionalDirectories": {}}
        },
    }


async def test_default_agent_info_has_a_name_and_a_version() -> None:
    class Bare(acpio.Agent):
        async def prompt(
            self, session: acpio.Session, prompt: list[acpio.ContentBlock]
        ) -> str | None:
            return None

    async with MockClient(Bare()) as client:
        assert client.agent_info.name and client.agent_info.version


async def test_prompt_capabilities_are_advertised_as_set() -> None:
    class Seeing(Plain):
        prompt_capabilities = schema.PromptCapabilities(
            image=schema.PromptImageCapabilities(),
            embedded_context=schema.PromptEmbeddedContextCapabilities(),
        )

    async with MockClient(Seeing(), initialize=False) as client:
        result = await initialize(client, {"protocolVersion": 2, "info": CLIENT_INFO})
    assert isinstance(result, dict)
    assert result["capabilities"]["session"]["prompt"] == {"image": {}, "embeddedContext": {}}


async def test_client_info_and_capabilities_are_stored_and_malformed_ones_default() -> None:
    agent = Plain()
    async with MockClient(agent, initialize=False) as client:
        await initialize(
            client,
            {"protocolVersion": 2, "info": CLIENT_INFO, "capabilities": {"elicitation": {}}},
        )
        assert agent.client_info == schema.Implementation(name="test-client", version="1.0")
        assert agent.client_capabilities is not None
        assert agent.client_capabilities.elicitation is not msgspec.UNSET
        # Capabilities the schema cannot read count as none advertised, not as an error.
        await initialize(
            client, {"protocolVersion": 2, "info": CLIENT_INFO, "capabilities": {"auth": 7}}
        )
        assert agent.client_capabilities == schema.ClientCapabilities()


async def test_auth_methods_are_advertised_and_served() -> None:
    class Guarded(Plain):
        auth_methods = (schema.AuthMethodAgent(method_id="token", name="Token"),)

        def __init__(self) -> None:
            super().__init__()
            self.events: list[str] = []

        async def login(self, method_id: str) -> None:
            self.events.append(f"login {method_id}")

        async def logout(self) -> None:
            self.events.append("logout")

    agent = Guarded()
    async with MockClient(agent) as client:
        assert client.initialize_response is not None
        assert [m.method_id for m in client.initialize_response.auth_methods] == ["token"]  # type: ignore[union-attr]
        await client.request("auth/login", {"methodId": "token"})
        with pytest.raises(acpio.RequestError) as raised:
            await client.request("auth/login", {"methodId": "password"})
        assert raised.value.code == -32602
        await client.request("auth/logout", {})
        assert agent.events == ["login token", "logout"]


async def test_auth_methods_are_not_served_unless_advertised() -> None:
    async with MockClient(Plain()) as client:
        assert client.initialize_response is not None
        assert client.initialize_response.auth_methods is msgspec.UNSET
        for method in ("auth/login", "auth/logout"):
            with pytest.raises(acpio.RequestError) as raised:
                await client.request(method, {"methodId": "x"})
            assert raised.value.code == -32601


# --------------------------------------------------------------------------- extensibility


async def test_meta_and_unknown_fields_are_accepted_everywhere(tmp_path: Path) -> None:
    meta = {"_meta": {"vendor.example/trace": "abc"}, "someFutureField": {"x": [1]}}
    agent = Plain()
    async with MockClient(agent, initialize=False) as client:
        await initialize(
            client,
            {
                "protocolVersion": 2,
                "info": {**CLIENT_INFO, **meta},
                "capabilities": {**meta},
                **meta,
            },
        )
        created = await client.request(
            "session/new", {"cwd": os.fspath(tmp_path), "mcpServers": [], **meta}
        )
        assert isinstance(created, dict)
        session_id = created["sessionId"]
        prompt = [{"type": "text", "text": "hello", **meta}]
        accepted = await client.request(
            "session/prompt", {"sessionId": session_id, "prompt": prompt, **meta}
        )
        assert isinstance(accepted, dict) and "messageId" in accepted
        await client.wait_for(
            lambda: session_id in client.sessions and client.sessions[session_id].view.stop_reasons,
            what="the idle",
        )
        session = client.sessions[session_id]
        assert session.view.agent_text == "hello"
        await client.request("session/list", {**meta})
        await client.notify("session/cancel", {"sessionId": session_id, **meta})
        await client.request(
            "session/resume", {"sessionId": session_id, "cwd": os.fspath(tmp_path), **meta}
        )
        await client.request("session/close", {"sessionId": session_id, **meta})
        assert client.violations == []


async def test_unknown_methods_and_notifications() -> None:
    agent = Plain()
    async with MockClient(agent) as client:
        for method in ("_vendor/unknown", "session/fly", "future/method"):
            with pytest.raises(acpio.RequestError) as raised:
                await client.request(method, {})
            assert raised.value.code == -32601
        # Notifications are never answered, whatever they are.
        await client.notify("_vendor/ping", {"n": 1})
        await client.notify("future/notification", {"n": 2})
        await client.notify("session/cancel", {"noSessionId": True})
        assert await client.request("_plain/add", {"a": 2, "b": 3}) == {"sum": 5}
        assert agent.notifications == [("_vendor/ping", {"n": 1})]
        session = await client.new_session()
        assert (await session.prompt("still fine")).text == "still fine"
        assert client.violations == []


# --------------------------------------------------------------------------- serve


async def test_serve_returns_when_the_client_goes_away_and_cancels_work() -> None:
    started = anyio.Event()
    unwound = anyio.Event()

    class Busy(acpio.Agent):
        async def prompt(
            self, session: acpio.Session, prompt: list[acpio.ContentBlock]
        ) -> str | None:
            started.set()
            try:
                await anyio.sleep_forever()
            finally:
                unwound.set()
            return None

    client_side, agent_side = acpio.rpc.memory_stream_pair()
    requests: list[dict[str, object]] = [
        {"protocolVersion": 2, "info": CLIENT_INFO},
        {"cwd": "/tmp", "mcpServers": []},
    ]

    async def send(request_id: int, method: str, params: dict[str, object]) -> None:
        line = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        await client_side.send.send(json.dumps(line).encode() + b"\n")

    received = b""

    async def read_until(marker: bytes) -> None:
        nonlocal received
        while marker not in received:
            received += await client_side.receive.receive()

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(acpio.serve, Busy(), agent_side)
            await send(1, "initialize", requests[0])
            await send(2, "session/new", requests[1])
            await read_until(b'"id":2')
            session_id = json.loads(received.splitlines()[-1])["result"]["sessionId"]
            await send(
                3,
                "session/prompt",
                {"sessionId": session_id, "prompt": [{"type": "text", "text": "x"}]},
            )
            await started.wait()
            # The client closes its side (end of the agent's input) but still reads.
            await client_side.send.aclose()
            with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError):
                while True:
                    received += await client_side.receive.receive()
            await client_side.receive.aclose()
        # serve() returned by itself (the task group could end).
    assert unwound.is_set()
    last = json.loads(received.splitlines()[-1])
    assert last["params"]["update"] == {
        "sessionUpdate": "state_update",
        "state": "idle",
        "stopReason": "cancelled",
    }


# --------------------------------------------------------------------------- run() over stdio

AGENT_SCRIPT = """
import sys
import anyio
import acpio

class Waiter(acpio.Agent):
    info = acpio.Implementation(name="waiter", version="1.0")

    async def prompt(self, session, prompt):
        mode = acpio.text_of(prompt)
        await session.message("started")
        print("a stray print goes to stderr")
        if mode == "hang":
            with anyio.CancelScope(shield=True):
                await anyio.sleep(3600)  # ignores cancellation entirely
        await anyio.sleep_forever()

acpio.run(Waiter(), backend=sys.argv[1], limits=acpio.AgentLimits(shutdown_grace=0.5))
"""


class RawAgent:
    """An agent process spoken to line by line, exactly as an editor would."""

    def __init__(self, process: anyio.abc.Process) -> None:
        self.process = process
        self.lines: list[dict[str, object]] = []
        self._buffer = b""
        self._next_id = 0

    async def send(self, method: str, params: dict[str, object], *, notify: bool = False) -> None:
        message: dict[str, object] = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            self._next_id += 1
            message["id"] = self._next_id
        assert self.process.stdin is not None
        await self.process.stdin.send(json.dumps(message).encode() + b"\n")

    async def read(self) -> dict[str, object] | None:
        assert self.process.stdout is not None
        while b"\n" not in self._buffer:
            try:
                self._buffer += await self.process.stdout.receive()
            except anyio.EndOfStream:
                assert self._buffer == b"", self._buffer  # nothing but whole lines
                return None
        line, self._buffer = self._buffer.split(b"\n", 1)
        message: dict[str, object] = json.loads(line)  # every line on stdout is JSON
        self.lines.append(message)
        return message

    async def read_until(self, predicate: object) -> dict[str, object]:
        while True:
            message = await self.read()
            assert message is not None, "the agent closed stdout early"
            if predicate(message):  # type: ignore[operator]
                return message

    async def read_to_end(self) -> list[dict[str, object]]:
        rest = []
        while (message := await self.read()) is not None:
            rest.append(message)
        return rest

    async def start_turn(self, tmp_path: Path, mode: str) -> str:
        await self.send("initialize", {"protocolVersion": 2, "info": CLIENT_INFO})
        await self.read_until(lambda m: m.get("id") == 1)
        await self.send("session/new", {"cwd": os.fspath(tmp_path), "mcpServers": []})
        created = await self.read_until(lambda m: m.get("id") == 2)
        session_id = created["result"]["sessionId"]  # type: ignore[index]
        await self.send(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": mode}]},
        )
        await self.read_until(lambda m: _update(m).get("sessionUpdate") == "agent_message")
        return str(session_id)


def _update(message: dict[str, object]) -> dict[str, object]:
    params = message.get("params")
    if message.get("method") == "session/update" and isinstance(params, dict):
        return params["update"]  # type: ignore[no-any-return]
    return {}


async def _spawn(tmp_path: Path, backend: str) -> anyio.abc.Process:
    script = tmp_path / "waiter.py"
    script.write_text(textwrap.dedent(AGENT_SCRIPT))
    with (tmp_path / "stderr.txt").open("wb") as stderr:
        # The child keeps its own copy of the file descriptor.
        return await anyio.open_process(
            [sys.executable, os.fspath(script), backend],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            start_new_session=True,
        )


def _last_state(lines: list[dict[str, object]]) -> dict[str, object]:
    states = [_update(m) for m in lines if _update(m).get("sessionUpdate") == "state_update"]
    return states[-1]


@pytest.mark.parametrize(
    ("how", "mode"),
    [
        ("stdin-closed", "wait"),
        ("SIGTERM", "wait"),
        ("SIGINT", "wait"),
        ("stdin-closed", "hang"),
        ("SIGTERM", "hang"),
    ],
)
async def test_run_shuts_down_cleanly_with_a_turn_running(
    tmp_path: Path, how: str, mode: str, anyio_backend: str
) -> None:
    # The agent process runs on the same anyio backend as this test.
    backend = anyio_backend
    process = await _spawn(tmp_path, backend)
    try:
        with anyio.fail_after(15):
            agent = RawAgent(process)
            session_id = await agent.start_turn(tmp_path, mode)
            if how == "stdin-closed":
                assert process.stdin is not None
                await process.stdin.aclose()
            else:
                process.send_signal(getattr(signal, how))
            rest = await agent.read_to_end()
            returncode = await process.wait()
        assert returncode == 0, (tmp_path / "stderr.txt").read_text()
        # The running turn was reported cancelled, as the last word on the session.
        assert rest, "nothing was reported after the shutdown began"
        last = rest[-1]
        assert last["params"]["sessionId"] == session_id  # type: ignore[index]
        assert _update(last) == {
            "sessionUpdate": "state_update",
            "state": "idle",
            "stopReason": "cancelled",
        }
        assert _last_state(agent.lines)["stopReason"] == "cancelled"
        assert "a stray print goes to stderr" in (tmp_path / "stderr.txt").read_text()
    finally:
        if process.returncode is None:
            process.kill()
        with anyio.CancelScope(shield=True):
            await process.aclose()
