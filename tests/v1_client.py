"""A minimal ACP v1 client for tests: drives an agent in-process, validates every message.

Every message the agent sends is checked against the vendored official v1 schema
(``acpio/schema/v1/schema.json``) with ``jsonschema``: notifications and
requests by method, responses by the method of the request they answer. The
client keeps what a v1 editor would show: per session the agent's text, and
the tool calls with v1's patch rules (``content`` replaced whole).
"""

from __future__ import annotations

import functools
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import anyio
import anyio.lowlevel
import msgspec
from jsonschema import Draft202012Validator

import acpio
from acpio.rpc import Connection, RequestContext, memory_stream_pair

_SCHEMA: dict[str, Any] = json.loads(
    resources.files("acpio.schema").joinpath("v1/schema.json").read_text()
)
_DEFS: dict[str, Any] = _SCHEMA["$defs"]

# Agent -> client messages and the definition their params (or result) must match.
_NOTIFICATIONS = {"session/update": "SessionNotification"}
_REQUESTS = {
    "session/request_permission": "RequestPermissionRequest",
    "fs/read_text_file": "ReadTextFileRequest",
    "fs/write_text_file": "WriteTextFileRequest",
    "terminal/create": "CreateTerminalRequest",
    "terminal/output": "TerminalOutputRequest",
    "terminal/wait_for_exit": "WaitForTerminalExitRequest",
    "terminal/kill": "KillTerminalRequest",
    "terminal/release": "ReleaseTerminalRequest",
    "elicitation/create": "CreateElicitationRequest",
}
_RESULTS = {
    "initialize": "InitializeResponse",
    "authenticate": "AuthenticateResponse",
    "logout": "LogoutResponse",
    "session/new": "NewSessionResponse",
    "session/load": "LoadSessionResponse",
    "session/list": "ListSessionsResponse",
    "session/resume": "ResumeSessionResponse",
    "session/close": "CloseSessionResponse",
    "session/delete": "DeleteSessionResponse",
    "session/prompt": "PromptResponse",
    "session/set_config_option": "SetSessionConfigOptionResponse",
    "session/set_mode": "SetSessionModeResponse",
}


@functools.cache
def validator(definition: str) -> Draft202012Validator:
    """A validator of one v1 definition (references resolve inside the vendored schema)."""
    return Draft202012Validator({"$ref": f"#/$defs/{definition}", "$defs": _DEFS})


def check(definition: str, instance: object) -> None:
    """Raise ``AssertionError`` naming the first error when ``instance`` is not valid."""
    errors = sorted(validator(definition).iter_errors(instance), key=lambda e: list(e.path))
    if errors:
        raise AssertionError(
            f"not a valid v1 {definition}: {errors[0].message} at {list(errors[0].path)}\n"
            f"{json.dumps(instance)[:2000]}"
        )


@dataclass
class ToolCall:
    """A tool call as a v1 client holds it."""

    fields: dict[str, Any] = field(default_factory=dict)
    reports: int = 0

    @property
    def status(self) -> str:
        return str(self.fields.get("status", "pending"))

    @property
    def texts(self) -> list[str]:
        return [
            item["content"]["text"]
            for item in self.fields.get("content") or []
            if item.get("type") == "content" and item["content"].get("type") == "text"
        ]


@dataclass
class View:
    """What a v1 client shows for one session."""

    agent_text: str = ""
    thought_text: str = ""
    user_text: str = ""
    tool_calls: dict[str, ToolCall] = field(default_factory=dict)
    plan: list[dict[str, Any]] = field(default_factory=list)
    updates: list[dict[str, Any]] = field(default_factory=list)

    def apply(self, update: dict[str, Any]) -> None:
        self.updates.append(update)
        kind = update["sessionUpdate"]
        if kind in ("agent_message_chunk", "agent_thought_chunk", "user_message_chunk"):
            text = update["content"].get("text", "")
            if kind == "agent_message_chunk":
                self.agent_text += text
            elif kind == "agent_thought_chunk":
                self.thought_text += text
            else:
                self.user_text += text
        elif kind == "tool_call":
            assert update["toolCallId"] not in self.tool_calls, "tool_call sent twice"
            call = self.tool_calls[update["toolCallId"]] = ToolCall()
            call.fields = {k: v for k, v in update.items() if k != "sessionUpdate"}
            call.reports = 1
        elif kind == "tool_call_update":
            assert update["toolCallId"] in self.tool_calls, "tool_call_update before tool_call"
            call = self.tool_calls[update["toolCallId"]]
            call.reports += 1
            for key, value in update.items():
                if key != "sessionUpdate" and value is not None:
                    call.fields[key] = value
        elif kind == "plan":
            self.plan = update["entries"]


PermissionPolicy = Callable[[dict[str, Any]], dict[str, Any]]


def allow(params: dict[str, Any]) -> dict[str, Any]:
    """Select the first offered allow option."""
    for option in params["options"]:
        if option["kind"].startswith("allow"):
            return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}
    return {"outcome": {"outcome": "cancelled"}}


def reject(params: dict[str, Any]) -> dict[str, Any]:
    """Select the first offered reject option."""
    for option in params["options"]:
        if option["kind"].startswith("reject"):
            return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}
    return {"outcome": {"outcome": "cancelled"}}


class V1Client:
    """The client side of one v1 connection (use :func:`v1_client`)."""

    def __init__(self, connection: Connection, policy: PermissionPolicy) -> None:
        self.connection = connection
        self.policy = policy
        self.views: dict[str, View] = {}
        self.messages: list[dict[str, Any]] = []  # everything the agent sent, in order
        self.permission_requests: list[dict[str, Any]] = []
        # Scripted answers to other requests of the agent (terminal/*, fs/*), by method.
        self.answers: dict[str, Callable[[Any], Any]] = {}
        self._methods: dict[object, str] = {}
        self.on_permission: Callable[[], None] | None = None
        self._changed = anyio.Event()

    def view(self, session_id: str) -> View:
        return self.views.setdefault(session_id, View())

    # the wire tap: every message, validated
    def tap(self, direction: str, raw: bytes) -> None:
        message = json.loads(raw)
        if direction == "out":
            if "method" in message and "id" in message:
                self._methods[message["id"]] = message["method"]
            return
        self.messages.append(message)
        assert message.get("jsonrpc") == "2.0"
        method = message.get("method")
        if method is not None:
            table = _REQUESTS if "id" in message else _NOTIFICATIONS
            assert method in table, f"the agent sent {method!r}, not a v1 client method"
            check(table[method], message.get("params"))
        elif "result" in message:
            check(_RESULTS[self._methods[message["id"]]], message["result"])
        else:
            error = message["error"]
            assert isinstance(error["code"], int) and isinstance(error["message"], str)

    # the client's handler
    async def on_request(
        self, method: str, params: msgspec.Raw | None, context: RequestContext
    ) -> object:
        body = msgspec.json.decode(params) if params is not None else {}
        if method == "session/request_permission":
            self.permission_requests.append(body)
            if self.on_permission is not None:
                self.on_permission()
            return self.policy(body)
        answer = self.answers.get(method)
        if answer is not None:
            return answer(body)
        raise acpio.RequestError.method_not_found(method)

    async def on_notification(self, method: str, params: msgspec.Raw | None) -> None:
        if method == "session/update" and params is not None:
            body = msgspec.json.decode(params)
            self.view(body["sessionId"]).apply(body["update"])
            self._changed.set()

    async def until(self, predicate: Callable[[], bool]) -> None:
        """Wait until ``predicate()`` holds (checked after each update received)."""
        while not predicate():
            changed = self._changed = anyio.Event()
            await changed.wait()

    async def sent(self, method: str, count: int) -> None:
        """Wait until ``count`` requests of ``method`` were written to the agent."""
        while list(self._methods.values()).count(method) < count:
            await anyio.lowlevel.checkpoint()

    # requests
    async def request(self, method: str, params: dict[str, Any]) -> Any:
        return await self.connection.request(method, params, msgspec.json.decode)

    async def initialize(self, capabilities: dict[str, Any] | None = None) -> Any:
        params: dict[str, Any] = {
            "protocolVersion": 1,
            "clientInfo": {"name": "v1-test-client", "version": "1.0"},
        }
        if capabilities is not None:
            params["clientCapabilities"] = capabilities
        return await self.request("initialize", params)

    async def new_session(self, cwd: str) -> str:
        result = await self.request("session/new", {"cwd": cwd, "mcpServers": []})
        return str(result["sessionId"])

    async def load_session(self, session_id: str, cwd: str) -> Any:
        """``session/load`` into a fresh view, as an editor reopening a thread."""
        self.views[session_id] = View()
        return await self.request(
            "session/load", {"sessionId": session_id, "cwd": cwd, "mcpServers": []}
        )

    async def prompt(self, session_id: str, text: str) -> Any:
        return await self.request(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]},
        )


class _Handler:
    def __init__(self) -> None:
        self.client: V1Client | None = None

    def tap(self, direction: str, raw: bytes) -> None:
        assert self.client is not None
        self.client.tap(direction, raw)

    async def on_request(
        self, method: str, params: msgspec.Raw | None, context: RequestContext
    ) -> object:
        assert self.client is not None
        return await self.client.on_request(method, params, context)

    async def on_notification(self, method: str, params: msgspec.Raw | None) -> None:
        assert self.client is not None
        await self.client.on_notification(method, params)


@asynccontextmanager
async def v1_client(
    agent: acpio.Agent,
    *,
    policy: PermissionPolicy = allow,
    initialize: bool = True,
    capabilities: dict[str, Any] | None = None,
) -> AsyncIterator[V1Client]:
    """Serve ``agent`` in-process and connect a v1 client to it (initialized unless told)."""
    client_side, agent_side = memory_stream_pair(64)
    handler = _Handler()
    async with anyio.create_task_group() as group:
        group.start_soon(acpio.serve, agent, agent_side)
        connection = Connection(
            client_side, handler, encode=msgspec.json.encode, on_raw_message=handler.tap
        )
        async with connection:
            client = V1Client(connection, policy)
            handler.client = client
            if initialize:
                await client.initialize(capabilities)
            yield client
        await agent_side.aclose()
