"""Serve a ``pydantic_ai.Agent`` as an ACP agent (the ``acpio[pydantic-ai]`` extra).

How this works: :class:`ACPAgent` is an :class:`acpio.Agent` whose turn runs the
pydantic-ai agent once, with the session's pydantic-ai message history and a
capability (:class:`_SessionBridge`) that pydantic-ai calls for every event and
every tool execution of the run, in the turn's own task:

- text and thinking parts stream as ACP message and thought chunks (one message
  per part), usage after every model response becomes a ``usage_update``;
- every tool execution runs inside an acpio :class:`~acpio.ToolCallHandle`
  (title, kind, ``rawInput``, path ``locations``, ``rawOutput``, final status
  from the result or the exception), so cancellation and errors finish the call
  as acpio always does;
- a tool registered with ``requires_approval=True`` is deferred by pydantic-ai;
  the bridge asks the user with ``session/request_permission`` (allow or reject,
  once or always; "always" is remembered per session and per tool) and hands
  pydantic-ai the approval, or a denial the model reads as a rejection;
- tools from :class:`EditorTools` report their own tool calls (diffs, live
  terminals) and are left alone by the bridge.

``session/cancel`` cancels the turn's task, and so the pydantic-ai run; what the
run completed (including the partial response) stays in the history, with
unanswered tool calls closed out by pydantic-ai before the next request. The
session's MCP servers become MCP toolsets of each run (opened at the start of a
turn, closed at its end, so no server outlives the session). pydantic-ai runs on
asyncio only: a turn on trio ends with an error that says so.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import os
from collections.abc import AsyncIterable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any, ClassVar, Final

import anyio
import anyio.lowlevel
from fastmcp.client.transports import StdioTransport
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai import messages as pai
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import RunCancelled
from pydantic_ai.mcp import MCPToolset
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
from acpio._json import as_list

from ._pydantic_ai_context import (
    SELF_REPORTING,
    current_session,
    end_session_scope,
    is_self_reporting,
    session_scope,
)
from ._pydantic_ai_tools import PlanItem, editor_tools

__all__ = [
    "SELF_REPORTING",
    "ACPAgent",
    "ModeChoice",
    "ModelChoice",
    "PlanItem",
    "current_session",
    "editor_tools",
    "infer_kind",
    "is_self_reporting",
]

logger: logging.Logger = logging.getLogger(__name__)

#: Argument names whose string values are file paths (shown as tool-call locations).
PATH_ARGUMENTS: Final = frozenset(
    {"path", "file", "file_path", "filepath", "filename", "paths", "files", "target", "source"}
)
_TITLE_LIMIT: Final = 100
_KIND_WORDS: Final = (
    ("delete", ("delete", "remove", "unlink", "rm")),
    ("move", ("move", "rename", "mv")),
    ("edit", ("write", "edit", "patch", "replace", "create", "update", "append", "save")),
    ("execute", ("run", "exec", "execute", "shell", "bash", "command", "terminal")),
    ("search", ("search", "grep", "find", "glob", "query", "lookup")),
    ("fetch", ("fetch", "http", "download", "url", "web", "browse")),
    ("read", ("read", "view", "open", "cat", "get", "list", "ls", "load", "show")),
    ("think", ("think", "reason", "plan")),
)


def infer_kind(tool_name: str) -> str:
    """The ACP tool kind a tool's name suggests (``read_file`` -> ``read``), else ``other``.

    The name is split on ``_``, ``-`` and ``.``; the first kind one of whose words
    appears wins, in the order delete, move, edit, execute, search, fetch, read, think.
    """
    words = set(tool_name.lower().replace("-", "_").replace(".", "_").split("_"))
    for kind, keys in _KIND_WORDS:
        if words.intersection(keys):
            return kind
    return "other"


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """One value of the model picker: ``id`` on the wire, ``name`` shown, ``model`` run."""

    id: str
    name: str
    model: Model | str
    description: str | None = None


@dataclass(frozen=True, slots=True)
class ModeChoice:
    """One value of the mode picker: ``id`` on the wire, ``name`` shown, ``instructions`` added.

    The chosen mode's ``instructions`` are given to the model on top of the
    agent's own (``None``: none added).
    """

    id: str
    name: str
    instructions: str | None = None
    description: str | None = None


MODEL_OPTION: Final = "model"
MODE_OPTION: Final = "mode"


@dataclass
class _SessionState:
    """What the adapter keeps per ACP session between turns."""

    history: list[pai.ModelMessage] = field(default_factory=list[pai.ModelMessage])


class ACPAgent(acpio.Agent):
    """Serves one ``pydantic_ai.Agent`` over ACP; each session keeps its own conversation.

    ``models`` and ``modes`` (optional) become the session's ``model`` and
    ``mode`` config options (ACP pickers): the first choice is the default, and a
    change takes effect on the session's next turn (the model runs it; the mode's
    instructions are added to the agent's). ``tool_kinds`` maps tool names to ACP
    kinds where :func:`infer_kind` guesses wrong. ``context_window`` is the size
    reported in ``usage_update``; without it the model profile's size is used, and
    no usage is reported when neither is known.
    """

    # pydantic-ai connects to stdio and streamable-HTTP MCP servers (see mcp_toolsets).
    mcp_transports: ClassVar[Collection[str]] = ("stdio", "http")

    def __init__(
        self,
        agent: PydanticAgent[None, Any],
        *,
        info: acpio.Implementation | None = None,
        models: Sequence[ModelChoice] = (),
        modes: Sequence[ModeChoice] = (),
        tool_kinds: Mapping[str, str] | None = None,
        context_window: int | None = None,
    ) -> None:
        super().__init__()
        self.agent: Final = agent
        self.info: acpio.Implementation = info or acpio.Implementation(
            name=agent.name or "pydantic-ai-agent", version=_version()
        )
        self.models: Final = tuple(models)
        self.modes: Final = tuple(modes)
        self.tool_kinds: Final = dict(tool_kinds or {})
        self.context_window: Final = context_window
        self._sessions: dict[str, _SessionState] = {}
        for choices in (self.models, self.modes):
            if len({choice.id for choice in choices}) != len(choices):
                raise ValueError("model and mode choices need distinct ids")

    # ------------------------------------------------------------------ sessions

    def _state(self, session_id: str) -> _SessionState:
        state = self._sessions.get(session_id)
        if state is None:
            state = _SessionState()
            self._sessions[session_id] = state
        return state

    def history(self, session_id: str) -> list[pai.ModelMessage]:
        """The pydantic-ai message history of a session (what the model sees next turn)."""
        return list(self._state(session_id).history)

    def _pickers(self) -> list[schema.SessionConfigOption]:
        pickers: list[schema.SessionConfigOption] = []
        if self.models:
            pickers.append(
                acpio.select_option(
                    MODEL_OPTION,
                    "Model",
                    [(c.id, c.name) for c in self.models],
                    category="model",
                )
            )
        if self.modes:
            pickers.append(
                acpio.select_option(
                    MODE_OPTION, "Mode", [(c.id, c.name) for c in self.modes], category="mode"
                )
            )
        return pickers

    async def on_new_session(self, session: acpio.Session) -> None:
        """Give the session the model and mode pickers (sent in the ``session/new`` answer)."""
        if self.models or self.modes:
            await session.config.replace([*session.config.options, *self._pickers()])

    async def on_resume_session(self, session: acpio.Session) -> None:
        """A session rebuilt in a new process gets the pickers again (at their defaults)."""
        if (self.models or self.modes) and MODEL_OPTION not in session.config.ids:
            await session.config.replace([*session.config.options, *self._pickers()])

    def _chosen(self, session: acpio.Session) -> tuple[Model | str | None, str | None]:
        config = session.config
        model = mode = None
        if MODEL_OPTION in config.ids:
            model = next(c.model for c in self.models if c.id == config[MODEL_OPTION])
        if MODE_OPTION in config.ids:
            mode = next(c.instructions for c in self.modes if c.id == config[MODE_OPTION])
        return model, mode

    async def on_close_session(self, session: acpio.Session) -> None:
        """Nothing stays open between turns; the conversation is kept for a later resume."""

    # ---------------------------------------------------------------------- turns

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        """Run the pydantic-ai agent on the prompt, reporting everything through ``session``."""
        if not _on_asyncio():
            raise RuntimeError("pydantic-ai runs only on asyncio; serve this agent with asyncio")
        state = self._state(session.id)
        model, mode_instructions = self._chosen(session)
        bridge = _SessionBridge(session, self)
        token = session_scope(session)
        try:
            result = await self.agent.run(
                user_prompt_of(prompt),
                message_history=state.history,
                model=model,
                instructions=mode_instructions,
                capabilities=[bridge],
                toolsets=mcp_toolsets(session.mcp_servers),
            )
            state.history = result.all_messages()
        except anyio.get_cancelled_exc_class() as exc:
            cancelled = RunCancelled.from_cancellation(exc)
            if cancelled is not None:
                state.history = list(cancelled.all_messages())
            raise
        finally:
            end_session_scope(token)
            await bridge.close_streams()
        return "end_turn"


def _on_asyncio() -> bool:
    # Only an asyncio task has a current asyncio task (not trio, nor trio-asyncio's trio
    # side); anyio no longer ships sniffio, so ask asyncio itself.
    try:
        return asyncio.current_task() is not None
    except RuntimeError:  # no running asyncio loop
        return False


def _version() -> str:
    try:
        return version("acpio")
    except PackageNotFoundError:  # run from a source tree without metadata
        return "0"


# ---------------------------------------------------------------------- prompt in


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


def _list(value: object) -> list[Any]:
    items: list[Any] = as_list(value) or []
    return items


def _b64(data: str) -> bytes:
    return base64.b64decode(data)


# ------------------------------------------------------------------- MCP servers


def mcp_toolsets(servers: Sequence[schema.McpServer]) -> list[AbstractToolset[None]]:
    """One pydantic-ai MCP toolset per MCP server the client passed for the session.

    stdio servers are started with their command, arguments and environment;
    http servers are reached at their URL with their headers. Tool names are
    prefixed with the server's name so two servers cannot clash.
    """
    toolsets: list[AbstractToolset[None]] = []
    for server in servers:
        if isinstance(server, schema.McpServerStdio):
            env = {**os.environ, **{v.name: v.value for v in _list(server.env)}}
            transport = StdioTransport(server.command, _list(server.args), env=env)
            toolsets.append(MCPToolset(transport, id=server.name).prefixed(server.name))
        elif isinstance(server, schema.McpServerHttp):
            headers = {h.name: h.value for h in _list(server.headers)}
            toolsets.append(
                MCPToolset(server.url, id=server.name, headers=headers or None).prefixed(
                    server.name
                )
            )
    return toolsets


# ------------------------------------------------------------------------ bridge


class _SessionBridge(AbstractCapability[None]):
    """The per-turn capability that turns one pydantic-ai run into ACP updates."""

    def __init__(self, session: acpio.Session, owner: ACPAgent) -> None:
        self.session = session
        self.owner = owner
        self._stream: acpio.MessageStream | None = None
        self._calls: dict[str, acpio.ToolCallHandle] = {}

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    async def close_streams(self) -> None:
        self._stream = None

    # --- streaming -------------------------------------------------------------

    async def wrap_run_event_stream(
        self, ctx: RunContext[None], *, stream: AsyncIterable[pai.AgentStreamEvent]
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
        self, ctx: RunContext[None], *, request_context: Any, response: pai.ModelResponse
    ) -> pai.ModelResponse:
        profile = getattr(ctx.model, "profile", None)
        size = self.owner.context_window or getattr(profile, "context_window", None)
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
            kind = self.owner.tool_kinds.get(call.tool_name) or infer_kind(call.tool_name)
            handle = self.session.tool_call(
                _title(call.tool_name, args),
                kind=kind,
                name=call.tool_name,
                raw_input=args,
                locations=_locations(args, self.session.cwd),
            )
            self._calls[call.tool_call_id] = handle
        return handle

    async def wrap_tool_execute(
        self,
        ctx: RunContext[None],
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
            result = await handler(args)
            await handle.update(raw_output=_jsonable(result))
        return result

    async def handle_deferred_tool_calls(
        self, ctx: RunContext[None], *, requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        if not requests.approvals:
            return None
        results = DeferredToolResults()
        for call in requests.approvals:
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


def _title(name: str, args: Mapping[str, object]) -> str:
    shown = ", ".join(f"{key}={value!r}" for key, value in args.items())
    title = f"{name}({shown})"
    return title if len(title) <= _TITLE_LIMIT else title[: _TITLE_LIMIT - 1] + "…"


def _locations(args: Mapping[str, object], cwd: str) -> list[str] | None:
    found: list[str] = []
    for key, value in args.items():
        if key.lower() not in PATH_ARGUMENTS:
            continue
        for item in as_list(value) or [value]:
            if isinstance(item, str) and item:
                found.append(os.path.normpath(os.path.join(cwd, item)))
    return found or None


def _jsonable(value: object) -> object:
    try:
        return schema.to_builtins(value)
    except TypeError:
        return repr(value)


def _cost(response: pai.ModelResponse) -> schema.Cost | None:
    if not response.model_name:
        return None
    try:
        price = response.cost()
    except Exception:  # unknown model or no usage: the protocol's cost is optional
        return None
    return schema.Cost(amount=float(price.total_price), currency="USD")
