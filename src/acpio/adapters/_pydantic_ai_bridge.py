"""The per-turn bridge between one pydantic-ai run and an ACP session (imports pydantic-ai).

:func:`run_turn` runs the pydantic-ai agent once for a prompt with the
session's history, a :class:`_SessionBridge` capability that turns the run's
events and tool executions into ACP updates, and the session's MCP servers as
toolsets; it keeps what the run said (also when it is cancelled) and saves it
as the session's durable agent state. Only :mod:`acpio.adapters.pydantic_ai`
imports this module, on the first turn, so pydantic-ai's import stays off the
agent's start; the MCP client is imported only for a session that has MCP servers.
"""

from __future__ import annotations

import base64
import functools
import json
import logging
import os
from collections.abc import AsyncIterable, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

import anyio
import anyio.lowlevel
import anyio.to_thread
from msgspec import UnsetType
from pydantic import ValidationError
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai import messages as pai
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import RunCancelled
from pydantic_ai.models import Model
from pydantic_ai.tools import (
    DeferredToolRequests,
    DeferredToolResults,
    RunContext,
    ToolDefinition,
    ToolDenied,
)
from pydantic_ai.toolsets import AbstractToolset

import acpio
from acpio import schema

from ._pydantic_ai_context import Reporting, approval_needed, is_self_reporting
from ._tool_calls import infer_kind, jsonable, locations_of, title_of

if TYPE_CHECKING:
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai.mcp import MCPToolset

__all__ = ["load_history", "mcp_toolsets", "run_turn", "user_prompt_of"]

logger: logging.Logger = logging.getLogger("acpio.adapters.pydantic_ai")

_T = TypeVar("_T")


# ----------------------------------------------------------------- durable state


@functools.cache
def _pydantic_ai_version() -> str:
    try:
        return version("pydantic-ai-slim")
    except PackageNotFoundError:
        return "unknown"


def dump_state(history: Sequence[pai.ModelMessage]) -> dict[str, object]:
    """The session's durable agent state: the message history as pydantic-ai's JSON form."""
    messages: object = pai.ModelMessagesTypeAdapter.dump_python(list(history), mode="json")
    return {"history": messages, "pydantic_ai": _pydantic_ai_version()}


def load_history(state: object) -> list[pai.ModelMessage]:
    """The message history saved by :func:`dump_state` (empty when none was saved).

    A history this pydantic-ai cannot read (saved by a different version whose
    message format changed) is logged and dropped: the session reopens, and the
    model starts over.
    """
    if not isinstance(state, dict):
        return []
    saved = cast("dict[str, object]", state)
    if "history" not in saved:
        return []
    try:
        return list(pai.ModelMessagesTypeAdapter.validate_python(saved["history"]))
    except ValidationError as exc:
        logger.warning(
            "the saved conversation (pydantic-ai %s) cannot be read by pydantic-ai %s; "
            "the model starts without it: %s",
            saved.get("pydantic_ai"),
            _pydantic_ai_version(),
            exc,
        )
        return []


async def _save(session: acpio.Session, history: Sequence[pai.ModelMessage]) -> None:
    try:
        await session.save_agent_state(dump_state(history))
    except acpio.AgentStateError as exc:  # e.g. beyond max_agent_state_bytes: kept in memory
        logger.warning("the conversation of session %s was not saved: %s", session.id, exc)


# ------------------------------------------------------------------------- turns


class Conversation(Protocol):
    """Where a session's message history is kept between turns."""

    history: list[pai.ModelMessage]


async def run_turn(
    reporting: Reporting,
    agent: PydanticAgent[Any, Any],
    session: acpio.Session,
    state: Conversation,
    prompt: Sequence[acpio.ContentBlock],
    *,
    model: Model | str | None,
    instructions: str | None,
    deps: object,
) -> None:
    """Run ``agent`` once on ``prompt``; keep and save the history it leaves, even cancelled."""
    bridge = _SessionBridge(session, reporting)
    try:
        result = await agent.run(
            user_prompt_of(prompt),
            message_history=state.history,
            model=model,
            instructions=instructions,
            deps=deps,
            capabilities=[bridge],
            toolsets=await mcp_toolsets(session.mcp_servers),
        )
        state.history = result.all_messages()
        await _save(session, state.history)
    except anyio.get_cancelled_exc_class() as exc:
        cancelled = RunCancelled.from_cancellation(exc)
        if cancelled is not None:
            state.history = list(cancelled.all_messages())
            with anyio.CancelScope(shield=True):
                await _save(session, state.history)
        raise
    finally:
        await bridge.close_streams()


# --------------------------------------------------------------------- prompt in


def user_prompt_of(prompt: Sequence[acpio.ContentBlock]) -> list[pai.UserContent]:
    """The pydantic-ai user content for an ACP prompt: text, resources, images, audio.

    Text stays text; an embedded text resource becomes text headed by its URI; an
    embedded blob, an image or audio becomes ``BinaryContent`` (the model decides
    what it accepts); a resource link becomes a text line with its name and URI.
    """
    content: list[pai.UserContent] = []
    for block in prompt:
        if isinstance(block, schema.TextContent):
            content.append(block.text)
        elif isinstance(block, schema.ImageContent | schema.AudioContent):
            content.append(pai.BinaryContent(data=_b64(block.data), media_type=block.mime_type))
        elif isinstance(block, schema.EmbeddedResource):
            resource = block.resource
            if isinstance(resource, schema.TextResourceContents):
                content.append(f"Contents of {resource.uri}:\n{resource.text}")
            else:
                mime = resource.mime_type if isinstance(resource.mime_type, str) else None
                content.append(
                    pai.BinaryContent(
                        data=_b64(resource.blob), media_type=mime or "application/octet-stream"
                    )
                )
        elif isinstance(block, schema.ResourceLink):
            content.append(f"Resource {block.name}: {block.uri}")
    return content


def _items(value: list[_T] | None | UnsetType) -> list[_T]:
    return value if isinstance(value, list) else []


def _b64(data: str) -> bytes:
    return base64.b64decode(data)


# ------------------------------------------------------------------- MCP servers


def _mcp_classes() -> tuple[type[StdioTransport], type[MCPToolset]]:
    from fastmcp.client.transports import StdioTransport  # noqa: PLC0415 - only for MCP servers
    from pydantic_ai.mcp import MCPToolset  # noqa: PLC0415 - only for MCP servers

    return StdioTransport, MCPToolset


async def mcp_toolsets(servers: Sequence[schema.McpServer]) -> list[AbstractToolset[Any]]:
    """One pydantic-ai MCP toolset per MCP server the client passed for the session.

    stdio servers are started with their command, arguments and environment;
    http servers are reached at their URL with their headers. Tool names are
    prefixed with the server's name so two servers cannot clash. The MCP client
    (fastmcp, the MCP SDK) is imported for the first session that has servers, in
    a worker thread: the other sessions' turns go on meanwhile.
    """
    if not servers:
        return []
    stdio_transport, mcp_toolset = await anyio.to_thread.run_sync(_mcp_classes)
    toolsets: list[AbstractToolset[Any]] = []
    for server in servers:
        if isinstance(server, schema.McpServerStdio):
            env = {**os.environ, **{v.name: v.value for v in _items(server.env)}}
            # keep_alive=False: the server process ends with the run that started it.
            transport = stdio_transport(
                server.command, _items(server.args), env=env, keep_alive=False
            )
            toolsets.append(mcp_toolset(transport, id=server.name).prefixed(server.name))
        elif isinstance(server, schema.McpServerHttp):
            headers = {h.name: h.value for h in _items(server.headers)}
            toolsets.append(
                mcp_toolset(server.url, id=server.name, headers=headers or None).prefixed(
                    server.name
                )
            )
    return toolsets


# ------------------------------------------------------------------------ bridge


class _SessionBridge(AbstractCapability[Any]):
    """The per-turn capability that turns one pydantic-ai run into ACP updates."""

    def __init__(self, session: acpio.Session, reporting: Reporting) -> None:
        self.session = session
        self.reporting = reporting
        self._stream: acpio.MessageStream | None = None
        self._calls: dict[str, acpio.ToolCallHandle] = {}

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    async def close_streams(self) -> None:
        self._stream = None

    # --- streaming -------------------------------------------------------------

    async def wrap_run_event_stream(
        self, ctx: RunContext[Any], *, stream: AsyncIterable[pai.AgentStreamEvent]
    ) -> AsyncIterable[pai.AgentStreamEvent]:
        async for event in stream:
            if isinstance(event, pai.PartStartEvent):
                part = event.part
                if isinstance(part, pai.TextPart):
                    self._stream = self.session.message_stream()
                    if part.content:
                        await self._stream.write(part.content)
                elif isinstance(part, pai.ThinkingPart):
                    self._stream = self.session.thought_stream()
                    if part.content:
                        await self._stream.write(part.content)
                else:
                    self._stream = None
            elif isinstance(event, pai.PartDeltaEvent):
                delta = event.delta
                if (
                    isinstance(delta, pai.TextPartDelta | pai.ThinkingPartDelta)
                    and self._stream is not None
                    and delta.content_delta
                ):
                    await self._stream.write(delta.content_delta)
            elif isinstance(event, pai.PartEndEvent):
                self._stream = None
            yield event

    async def after_model_request(
        self, ctx: RunContext[Any], *, request_context: Any, response: pai.ModelResponse
    ) -> pai.ModelResponse:
        profile = getattr(ctx.model, "profile", None)
        size = self.reporting.context_window or getattr(profile, "context_window", None)
        if size:
            # What the context holds after this response: its input plus its output.
            used = min(response.usage.input_tokens + response.usage.output_tokens, size)
            await self.session.usage(used, size, cost=_cost(response))
        return response

    # --- tools -----------------------------------------------------------------

    def _handle(self, call: pai.ToolCallPart) -> acpio.ToolCallHandle:
        handle = self._calls.get(call.tool_call_id)
        if handle is None:
            args = call.args_as_dict()
            kind = self.reporting.tool_kinds.get(call.tool_name) or infer_kind(call.tool_name)
            handle = self.session.tool_call(
                title_of(call.tool_name, args),
                kind=kind,
                name=call.tool_name,
                raw_input=args,
                locations=locations_of(args, self.session.cwd),
            )
            self._calls[call.tool_call_id] = handle
        return handle

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: pai.ToolCallPart,
        tool_def: ToolDefinition,
        args: Any,
        handler: Any,
    ) -> Any:
        if is_self_reporting(tool_def):
            return await handler(args)
        handle = self._handle(call)
        result: Any = None  # when the client cancels the call, its block ends early
        async with handle:
            await handle.start()
            result = await handler(args)
            output = jsonable(_return_value(result))
            text = _result_text(output)
            await handle.update(
                content=[schema.Content(content=schema.TextContent(text=text))] if text else None,
                raw_output=output,
            )
        return result

    async def handle_deferred_tool_calls(
        self, ctx: RunContext[Any], *, requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        if not requests.approvals:
            return None
        results = DeferredToolResults()
        for call in requests.approvals:
            if not approval_needed():
                results.approvals[call.tool_call_id] = True
                continue
            handle = self._handle(call)
            await handle.announce()
            outcome = await handle.request_permission(
                acpio.permission.ALL_OPTIONS, remember=f"pydantic-ai tool {call.tool_name}"
            )
            if outcome.cancelled:
                # A cancelled turn raises here; a client that dismissed the prompt is a denial.
                await anyio.lowlevel.checkpoint()
            if outcome.allowed:
                results.approvals[call.tool_call_id] = True
            else:
                message = "The user rejected this tool call."
                await handle.fail(message)
                results.approvals[call.tool_call_id] = ToolDenied(message)
        return results


def _return_value(result: object) -> object:
    return result.return_value if isinstance(result, pai.ToolReturn) else result


def _result_text(output: object) -> str:
    """The tool result as the text an editor shows in the call's card."""
    if output is None:
        return ""
    if isinstance(output, str):
        return output
    return json.dumps(output, ensure_ascii=False, indent=2)


def _cost(response: pai.ModelResponse) -> schema.Cost | None:
    if not response.model_name:
        return None
    try:
        price = response.cost()
    except Exception:  # unknown model or no usage: the protocol's cost is optional
        return None
    return schema.Cost(amount=float(price.total_price), currency="USD")
