"""Serve a compiled LangGraph graph as an ACP agent (the ``acpio[langgraph]`` extra).

How this works: :class:`ACPAgent` is an :class:`acpio.Agent` whose turn runs the
graph once on the prompt (a ``HumanMessage`` added to the ``messages`` channel),
in the turn's own task, with the session id as LangGraph's ``thread_id``:

- ``graph.astream(stream_mode=["messages", "updates"])``: the model's tokens
  stream as ACP message chunks and its reasoning (``reasoning``/``thinking``
  content blocks, ``reasoning_content``) as thought chunks, one message per model
  message; each AI message's tool calls become acpio
  :class:`~acpio.ToolCallHandle` objects (title, kind, ``rawInput``, path
  ``locations``), and its ``usage_metadata`` a ``usage_update`` when the context
  window is known;
- a LangChain callback handler in the run's config follows every tool: it marks
  the call ``in_progress`` when the tool starts and gives it the tool's result as
  content (``completed``) or its error (``failed``);
- an interrupt (LangGraph's human in the loop) becomes a permission request on
  the tool call it is about, and the answer resumes the graph
  (``Command(resume=...)``) in the same turn: LangChain's ``tool_approval``
  interrupts (``HumanInTheLoopMiddleware``, ``per_call``) and batched
  ``action_requests``, this module's :func:`ask_approval`, and any other
  interrupt (answered ``True`` or ``False``);
- ``session/cancel`` cancels the turn's task and so the graph run (LangGraph
  cancels its running nodes); every tool call still open ends ``cancelled``, as
  acpio ends them for any cancelled turn.

The conversation is the graph's state, checkpointed by a
:class:`~acpio.adapters._langgraph_checkpoint.SessionCheckpointer` (LangGraph's
``InMemorySaver``) that the adapter gives a graph compiled without one. At the
end of every turn the session's thread (its latest checkpoint, with any pending
interrupt) is saved with ``Session.save_agent_state``; a session reopened in a
new process (``session/load``, ``session/resume``) gets it back before its next
turn. A checkpointer rather than the bare message list, because only the
checkpoint keeps every channel of a custom ``StateGraph`` and LangGraph's own
record of a pending interrupt. A graph compiled with its own checkpointer keeps
using it, and that checkpointer owns durability.

The session's MCP servers (through :mod:`acpio.mcp`) become LangChain tools the
graph finds with :func:`session_tools`; the model and mode pickers' choices are
in the run's config (:func:`chosen_model`, :func:`chosen_mode`). LangGraph runs
on asyncio only: a turn on trio ends with an error that says so.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import AsyncIterator, Collection, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any, ClassVar, Final, cast
from uuid import UUID

import anyio
import anyio.lowlevel
from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.config import get_config
from langgraph.errors import GraphBubbleUp
from langgraph.pregel import Pregel  # pyright: ignore[reportMissingTypeStubs]
from langgraph.types import Command, Interrupt, interrupt

import acpio
import acpio.mcp
from acpio import schema

from ._langgraph_checkpoint import SessionCheckpointer
from ._tool_calls import infer_kind, jsonable, locations_of, title_of

__all__ = [
    "ACPAgent",
    "ModeChoice",
    "ModelChoice",
    "REJECTED",
    "ask_approval",
    "chosen_mode",
    "chosen_model",
    "infer_kind",
    "session_tools",
]

logger: logging.Logger = logging.getLogger(__name__)

MODEL_OPTION: Final = "model"
MODE_OPTION: Final = "mode"
#: What the model reads, as the tool's result, when the user rejected a tool call.
REJECTED: Final = "The user rejected this tool call."
_CANCELLED: Final = "The user cancelled this tool call before it finished."
# Keys of the run's ``configurable``: the pickers' choices and the session's MCP tools.
_CHOICES_KEY: Final = "acpio_choices"
_TOOLS_KEY: Final = "acpio_session_tools"


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """One value of the model picker: ``id`` on the wire, ``name`` shown, ``model`` run.

    The graph reads the chosen one with :func:`chosen_model` (``model`` is
    whatever the graph needs: a chat model, a model name).
    """

    id: str
    name: str
    model: Any = None
    description: str | None = None


@dataclass(frozen=True, slots=True)
class ModeChoice:
    """One value of the mode picker: ``id`` on the wire, ``name`` shown, ``prompt`` added.

    The graph reads the chosen one with :func:`chosen_mode` (``prompt``, for
    example, as extra instructions for the model).
    """

    id: str
    name: str
    prompt: str | None = None
    description: str | None = None


def _configurable(config: RunnableConfig | None) -> Mapping[str, Any]:
    if config is None:
        config = get_config()
    return config.get("configurable") or {}


def chosen_model(config: RunnableConfig | None = None) -> Any:
    """The ``model`` of the session's chosen :class:`ModelChoice` (``None`` without a picker).

    ``config`` is a node's config; without it, LangGraph's current one
    (``langgraph.config.get_config()``, inside a node or a tool).
    """
    choice = _configurable(config).get(_CHOICES_KEY, {}).get(MODEL_OPTION)
    return choice.model if isinstance(choice, ModelChoice) else None


def chosen_mode(config: RunnableConfig | None = None) -> ModeChoice | None:
    """The session's chosen :class:`ModeChoice` (``None`` without a mode picker)."""
    choice = _configurable(config).get(_CHOICES_KEY, {}).get(MODE_OPTION)
    return choice if isinstance(choice, ModeChoice) else None


def session_tools(config: RunnableConfig | None = None) -> list[BaseTool]:
    """The tools of the session's MCP servers, for this turn (``[]`` when it has none).

    Each MCP tool is a LangChain tool named ``<server>_<tool>``; bind them to the
    model and run them in the graph's tool node next to the graph's own tools.
    """
    tools: object = _configurable(config).get(_TOOLS_KEY, [])
    return list(cast("list[BaseTool]", tools)) if isinstance(tools, list) else []


def ask_approval(
    name: str,
    args: Mapping[str, Any],
    *,
    tool_call_id: str | None = None,
    description: str | None = None,
) -> bool:
    """Ask the user whether tool ``name`` may run with ``args``; True when allowed.

    Call it inside a node or a tool of a graph served by :class:`ACPAgent`: it
    interrupts the graph (``langgraph.types.interrupt``) with a ``tool_approval``
    value, which the adapter turns into an ACP permission request on that tool
    call; the user's answer resumes the graph and is returned here. Give the
    model's ``tool_call_id`` when known (``InjectedToolCallId``); without it the
    call is found by name and arguments.
    """
    value = {
        "type": "tool_approval",
        "tool_call_id": tool_call_id,
        "name": name,
        "args": dict(args),
        "description": description or f"Run {name}?",
    }
    decision = interrupt(value)
    return (
        isinstance(decision, Mapping)
        and cast("Mapping[str, object]", decision).get("type") == "approve"
    )


class ACPAgent(acpio.Agent):
    """Serves one compiled LangGraph graph over ACP; each session is one graph thread.

    The graph takes a ``messages`` channel (LangGraph's ``MessagesState``,
    ``create_agent``, ``create_react_agent``): each prompt is added to it as a
    ``HumanMessage``; override :meth:`graph_input` for another shape. ``config``
    is merged into every run's config (``recursion_limit``, your own
    ``configurable`` keys). ``models`` and ``modes`` become the session's
    ``model`` and ``mode`` config options (the first choice is the default; the
    graph reads the choice with :func:`chosen_model`/:func:`chosen_mode`).
    ``commands`` are the slash commands the sessions advertise (a command's
    prompt reaches the graph as it was typed). ``tool_kinds`` maps tool names to
    ACP kinds where :func:`infer_kind` guesses wrong. ``context_window`` is the
    size reported in ``usage_update`` (no usage is reported without it).
    """

    # acpio.mcp connects to stdio and streamable-HTTP MCP servers.
    mcp_transports: ClassVar[Collection[str]] = ("stdio", "http")

    def __init__(
        self,
        graph: Pregel[Any, Any, Any, Any],
        *,
        info: acpio.Implementation | None = None,
        config: RunnableConfig | None = None,
        models: Sequence[ModelChoice] = (),
        modes: Sequence[ModeChoice] = (),
        commands: Sequence[schema.AvailableCommand] = (),
        tool_kinds: Mapping[str, str] | None = None,
        context_window: int | None = None,
    ) -> None:
        super().__init__()
        saver: object = getattr(graph, "checkpointer", None)
        self.checkpointer: Final[SessionCheckpointer | None] = (
            None if isinstance(saver, BaseCheckpointSaver) else SessionCheckpointer()
        )
        if self.checkpointer is not None:
            graph = graph.copy(update={"checkpointer": self.checkpointer})
        self.graph: Final = graph
        self.info: acpio.Implementation = info or acpio.Implementation(
            name=graph.name or "langgraph-agent", version=_version()
        )
        self.config: Final[RunnableConfig] = config or {}
        self.models: Final = tuple(models)
        self.modes: Final = tuple(modes)
        self.slash_commands: Final = tuple(commands)
        self.tool_kinds: Final = dict(tool_kinds or {})
        self.context_window: Final = context_window
        for choices in (self.models, self.modes):
            if len({choice.id for choice in choices}) != len(choices):
                raise ValueError("model and mode choices need distinct ids")

    # ------------------------------------------------------------------ sessions

    def _pickers(self) -> dict[str, schema.SessionConfigOption]:
        pickers: dict[str, schema.SessionConfigOption] = {}
        if self.models:
            pickers[MODEL_OPTION] = acpio.select_option(
                MODEL_OPTION,
                "Model",
                [(c.id, c.name) for c in self.models],
                category="model",
            )
        if self.modes:
            pickers[MODE_OPTION] = acpio.select_option(
                MODE_OPTION, "Mode", [(c.id, c.name) for c in self.modes], category="mode"
            )
        return pickers

    async def _declare(self, session: acpio.Session) -> None:
        ids = session.config.ids
        missing = [option for key, option in self._pickers().items() if key not in ids]
        if missing:
            await session.config.replace([*session.config.options, *missing])
        if self.slash_commands and not session.commands:
            await session.set_commands(self.slash_commands)

    def model_provider(self, session: acpio.Session) -> str | None:
        """The provider of the model picker's choice, for traces (``None`` without a picker).

        A LangChain chat model names it (``ls_provider``: ``openai``, ``anthropic``,
        ...); a ``"provider:model"`` name by its prefix. Without a picker acpio cannot
        see which model the graph calls: override this to name it.
        """
        if MODEL_OPTION not in session.config.ids:
            return None
        choice = next((c for c in self.models if c.id == session.config[MODEL_OPTION]), None)
        model: object = choice.model if choice is not None else None
        if isinstance(model, str):
            return model.partition(":")[0] if ":" in model else None
        params_of: object = getattr(model, "_get_ls_params", None)
        if not callable(params_of):
            return None
        params: object = params_of()
        provider = (
            cast("Mapping[str, object]", params).get("ls_provider")
            if isinstance(params, Mapping)
            else None
        )
        return provider if isinstance(provider, str) else None

    async def on_new_session(self, session: acpio.Session) -> None:
        """Give the session the model and mode pickers and the slash commands."""
        await self._declare(session)

    async def on_resume_session(self, session: acpio.Session) -> None:
        """A reopened session gets its pickers and commands again and its graph thread back."""
        await self._declare(session)
        await self._restore(session)

    async def on_close_session(self, session: acpio.Session) -> None:
        """The thread leaves memory; it was saved with the session at its last turn's end."""
        if self.checkpointer is not None:
            await self.checkpointer.adelete_thread(session.id)

    async def _restore(self, session: acpio.Session) -> None:
        saver = self.checkpointer
        if saver is None or saver.has_thread(session.id):
            return
        state = session.agent_state
        if state is not None:
            await saver.import_thread(session.id, state)

    async def _save(self, session: acpio.Session) -> None:
        if self.checkpointer is None:
            return
        state = await self.checkpointer.compact_thread(session.id)
        if state is not None:
            await session.save_agent_state(state)

    def run_config(self, session: acpio.Session, tools: Sequence[BaseTool] = ()) -> RunnableConfig:
        """The config of the session's next run: its thread, ``cwd``, choices and MCP tools."""
        config = self.config
        choices: dict[str, ModelChoice | ModeChoice] = {}
        for option, options in ((MODEL_OPTION, self.models), (MODE_OPTION, self.modes)):
            if option in session.config.ids:
                value = session.config[option]
                choices[option] = next(c for c in options if c.id == value)
        configurable: dict[str, Any] = {
            **(config.get("configurable") or {}),
            "thread_id": session.id,
            "cwd": session.cwd,
            _CHOICES_KEY: choices,
            _TOOLS_KEY: list(tools),
        }
        for option, choice in choices.items():
            configurable[option] = choice.id
        return {**config, "configurable": configurable}

    # ---------------------------------------------------------------------- turns

    def graph_input(self, session: acpio.Session, message: HumanMessage) -> Any:
        """The graph's input for one prompt: ``{"messages": [message]}`` by default."""
        return {"messages": [message]}

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        """Run the graph on the prompt, reporting everything through ``session``."""
        if not _on_asyncio():
            raise RuntimeError("LangGraph runs only on asyncio; serve this agent with asyncio")
        await self._restore(session)
        tools = await _mcp_tools(session) if session.mcp_servers else []
        config = self.run_config(session, tools)
        turn = _Turn(session, self)
        config["callbacks"] = [*_callbacks(self.config), turn]
        try:
            closing = await self._unanswered_tool_calls(config)
            graph_input: Any = self.graph_input(
                session, HumanMessage(content=human_content(prompt))
            )
            if closing and isinstance(graph_input, dict) and "messages" in graph_input:
                fields = cast("dict[str, Any]", graph_input)
                messages = cast("list[AnyMessage]", fields["messages"])
                graph_input = {**fields, "messages": [*closing, *messages]}
            while True:
                interrupts = await turn.run(graph_input, config)
                if not interrupts:
                    break
                graph_input = Command(resume=await turn.answer(interrupts))
        finally:
            with anyio.CancelScope(shield=True):
                await self._save(session)
        return "end_turn"

    async def _unanswered_tool_calls(self, config: RunnableConfig) -> list[ToolMessage]:
        """Results for tool calls a cancelled turn left without one (models refuse those)."""
        snapshot = await self.graph.aget_state(config)
        values: object = snapshot.values
        found = (
            cast("dict[str, object]", values).get("messages") if isinstance(values, dict) else None
        )
        if not isinstance(found, list) or not found:
            return []
        messages = cast("list[object]", found)
        answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
        closing: list[ToolMessage] = []
        for message in messages:
            if isinstance(message, AIMessage):
                for call in message.tool_calls:
                    if call["id"] and call["id"] not in answered:
                        closing.append(
                            ToolMessage(
                                content=_CANCELLED,
                                tool_call_id=call["id"],
                                name=call["name"],
                                status="error",
                            )
                        )
        return closing


def _on_asyncio() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # trio, for one, runs no asyncio loop
        return False
    return True


def _callbacks(config: RunnableConfig) -> list[Any]:
    given: object = config.get("callbacks")
    return list(given) if isinstance(given, list) else []  # pyright: ignore[reportUnknownArgumentType]


def _version() -> str:
    try:
        return version("acpio")
    except PackageNotFoundError:  # run from a source tree without metadata
        return "0"


# ---------------------------------------------------------------------- prompt in


def human_content(prompt: Sequence[acpio.ContentBlock]) -> str | list[str | dict[str, Any]]:
    """The content of the ``HumanMessage`` for an ACP prompt (LangChain's standard blocks).

    Text stays text (one string when the prompt is only text); an embedded text
    resource becomes text headed by its URI; an image, audio or embedded blob
    becomes an ``image``/``audio``/``file`` block with base64 data (the model
    decides what it accepts); a resource link becomes a text line with its name
    and URI.
    """
    blocks: list[dict[str, Any]] = []
    for block in prompt:
        if isinstance(block, schema.TextContent):
            blocks.append({"type": "text", "text": block.text})
        elif isinstance(block, schema.ImageContent):
            blocks.append({"type": "image", "base64": block.data, "mime_type": block.mime_type})
        elif isinstance(block, schema.AudioContent):
            blocks.append({"type": "audio", "base64": block.data, "mime_type": block.mime_type})
        elif isinstance(block, schema.EmbeddedResource):
            resource = block.resource
            if isinstance(resource, schema.TextResourceContents):
                blocks.append(
                    {"type": "text", "text": f"Contents of {resource.uri}:\n{resource.text}"}
                )
            else:
                mime = resource.mime_type if isinstance(resource.mime_type, str) else None
                base64.b64decode(resource.blob, validate=True)  # a bad blob fails the turn here
                blocks.append(
                    {
                        "type": "file",
                        "base64": resource.blob,
                        "mime_type": mime or "application/octet-stream",
                    }
                )
        elif isinstance(block, schema.ResourceLink):
            blocks.append({"type": "text", "text": f"Resource {block.name}: {block.uri}"})
    if all(b["type"] == "text" for b in blocks):
        return "\n".join(b["text"] for b in blocks)
    return list[str | dict[str, Any]](blocks)


# ----------------------------------------------------------------- message parts


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    if isinstance(content, list):
        for block in cast("list[object]", content):
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                fields = cast("dict[str, object]", block)
                text = fields.get("text")
                if fields.get("type") == "text" and isinstance(text, str):
                    parts.append(text)
    return "".join(parts)


def _parts(message: BaseMessage) -> list[tuple[bool, str]]:
    """``(is_thought, text)`` of a model message or chunk, in order."""
    found: list[tuple[bool, str]] = []
    reasoning: object = message.additional_kwargs.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning:
        found.append((True, reasoning))
    content = cast("object", message.content)
    if isinstance(content, str):
        if content:
            found.append((False, content))
        return found
    if isinstance(content, list):
        for block in cast("list[object]", content):
            if isinstance(block, str):
                if block:
                    found.append((False, block))
                continue
            if not isinstance(block, dict):
                continue
            fields = cast("dict[str, object]", block)
            kind = fields.get("type")
            text: object = None
            if kind == "text":
                text = fields.get("text")
            elif kind in ("reasoning", "thinking"):
                text = fields.get(str(kind))
            if isinstance(text, str) and text:
                found.append((kind != "text", text))
    return found


# ------------------------------------------------------------------------- turns


@dataclass
class _Call:
    """One model tool call of the turn and its ACP tool call."""

    name: str
    args: dict[str, Any]
    handle: acpio.ToolCallHandle
    decided: bool = False


class _Turn(AsyncCallbackHandler):
    """One turn: streams the graph's messages, reports its tool calls, answers interrupts."""

    run_inline = True  # tool callbacks run in the tool's own task, in order

    # Only tool events (``ignore_agent``) matter here: LangChain skips this handler for the
    # rest, the model's tokens included (they arrive through the graph's stream).
    @property
    def ignore_llm(self) -> bool:
        """Not called for model events."""
        return True

    @property
    def ignore_chat_model(self) -> bool:
        """Not called when a chat model starts."""
        return True

    @property
    def ignore_chain(self) -> bool:
        """Not called for graph nodes and runnables."""
        return True

    @property
    def ignore_retriever(self) -> bool:
        """Not called for retrievers."""
        return True

    @property
    def ignore_retry(self) -> bool:
        """Not called for retries."""
        return True

    @property
    def ignore_custom_event(self) -> bool:
        """Not called for custom events."""
        return True

    def __init__(self, session: acpio.Session, owner: ACPAgent) -> None:
        super().__init__()
        self.session = session
        self.owner = owner
        self._calls: dict[str, _Call] = {}
        self._runs: dict[UUID, _Call] = {}
        self._message_id: str | None = None
        self._text: acpio.MessageStream | None = None
        self._thought: acpio.MessageStream | None = None

    async def run(self, graph_input: Any, config: RunnableConfig) -> list[Interrupt[Any]]:
        """Run the graph to its end or its interrupts; returns the interrupts."""
        interrupts: list[Interrupt[Any]] = []
        graph: Any = self.owner.graph
        stream: AsyncIterator[Any] = graph.astream(
            graph_input, config, stream_mode=["messages", "updates"]
        )
        async with aclosing(cast("Any", stream)) as parts:
            async for mode, data in parts:
                if mode == "messages":
                    await self._message(data[0])
                elif isinstance(data, dict):
                    interrupts.extend(await self._update(cast("dict[str, Any]", data)))
        self._message_id = self._text = self._thought = None
        return interrupts

    # --- streamed messages --------------------------------------------------------

    async def _message(self, message: BaseMessage) -> None:
        if isinstance(message, ToolMessage):
            call = self._calls.get(message.tool_call_id)
            if call is not None:
                await self._finish(call, message)
            return
        if not isinstance(message, AIMessage):
            return
        if message.id != self._message_id or message.id is None:
            self._message_id = message.id
            self._text = self._thought = None
        for thought, text in _parts(message):
            if thought:
                if self._thought is None:
                    self._thought = self.session.thought_stream()
                await self._thought.write(text)
            else:
                if self._text is None:
                    self._text = self.session.message_stream()
                await self._text.write(text)

    async def _update(self, data: dict[str, Any]) -> list[Interrupt[Any]]:
        found: list[Interrupt[Any]] = []
        for node, output in data.items():
            if node == "__interrupt__":
                for item in cast("Sequence[object]", output):
                    if isinstance(item, Interrupt):
                        found.append(item)  # pyright: ignore[reportUnknownArgumentType]
                continue
            for message in _messages_of(output):
                if isinstance(message, AIMessage):
                    for call in message.tool_calls:
                        await self._call(call["id"], call["name"], call["args"])
                    await self._usage(message)
        return found

    async def _usage(self, message: AIMessage) -> None:
        usage = message.usage_metadata
        size = self.owner.context_window
        if usage is not None and size:
            used = min(usage["input_tokens"] + usage["output_tokens"], size)
            await self.session.usage(used, size)

    # --- tool calls ----------------------------------------------------------------

    async def _call(self, call_id: str | None, name: str, args: Mapping[str, Any] | None) -> _Call:
        arguments = dict(args or {})
        call = self._calls.get(call_id) if call_id else self._find(name, arguments)
        if call is None:
            kind = self.owner.tool_kinds.get(name) or infer_kind(name)
            handle = self.session.tool_call(
                title_of(name, arguments),
                kind=kind,
                name=name,
                raw_input=jsonable(arguments),
                locations=locations_of(arguments, self.session.cwd),
            )
            call = _Call(name, arguments, handle)
            self._calls[call_id or handle.id] = call
            await handle.announce()
        return call

    def _find(self, name: str, args: Mapping[str, Any]) -> _Call | None:
        for call in self._calls.values():
            if call.name == name and call.args == args and not (call.handle.final or call.decided):
                return call
        return None

    async def _finish(self, call: _Call, result: object) -> None:
        handle = call.handle
        if handle.final:
            return
        if isinstance(result, ToolMessage):
            text = _text_of(result.content)
            content = [schema.Content(content=schema.TextContent(text=text))] if text else []
            if result.status == "error":
                await handle.fail(text or None, raw_output=jsonable(result.content))
            else:
                await handle.complete(content, raw_output=jsonable(result.content))
        else:
            await handle.complete(raw_output=jsonable(result))

    async def on_tool_start(
        self,
        serialized: dict[str, Any],
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        inputs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """A tool starts: its call (found, or reported now) becomes ``in_progress``."""
        call_id: object = kwargs.get("tool_call_id")
        name = str(serialized.get("name") or kwargs.get("name") or "tool")
        call = await self._call(call_id if isinstance(call_id, str) else None, name, inputs)
        self._runs[run_id] = call
        if call.handle.status != "in_progress" and not call.handle.final:
            await call.handle.start()

    async def on_tool_end(
        self,
        output: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        """A tool returned: its result is the call's content, ``completed`` (or ``failed``)."""
        call = self._runs.pop(run_id, None)
        if call is not None:
            await self._finish(call, output)

    async def on_tool_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        """A tool raised: the call fails with the error (an interrupt is not an error)."""
        call = self._runs.pop(run_id, None)
        if call is not None and not isinstance(error, GraphBubbleUp) and not call.handle.final:
            await call.handle.fail(f"{type(error).__name__}: {error}")

    # --- interrupts ------------------------------------------------------------------

    async def answer(self, interrupts: Sequence[Interrupt[Any]]) -> Any:
        """The resume value for the graph's interrupts, each answered by the user."""
        answers = {item.id: await self._answer(item.value) for item in interrupts}
        if len(interrupts) == 1:
            return answers[interrupts[0].id]
        return answers

    async def _answer(self, value: object) -> object:
        if isinstance(value, Mapping):
            fields = cast("Mapping[str, Any]", value)
            if fields.get("type") == "tool_approval" and isinstance(fields.get("name"), str):
                allowed = await self._approve(
                    fields.get("tool_call_id"), fields["name"], fields.get("args")
                )
                return {"type": "approve"} if allowed else {"type": "reject", "message": REJECTED}
            requests = fields.get("action_requests")
            if isinstance(requests, list):
                decisions: list[dict[str, str]] = []
                for request in cast("list[Mapping[str, Any]]", requests):
                    allowed = await self._approve(None, str(request["name"]), request.get("args"))
                    decisions.append(
                        {"type": "approve"} if allowed else {"type": "reject", "message": REJECTED}
                    )
                return {"decisions": decisions}
        return await self._approve_other(value)  # pyright: ignore[reportUnknownArgumentType]

    async def _approve(self, call_id: object, name: str, args: object) -> bool:
        arguments: Mapping[str, Any] = (
            cast("Mapping[str, Any]", args) if isinstance(args, Mapping) else {}
        )
        call = await self._call(call_id if isinstance(call_id, str) else None, name, arguments)
        call.decided = True
        outcome = await call.handle.request_permission(
            acpio.permission.ALL_OPTIONS, remember=f"langgraph tool {name}"
        )
        if outcome.cancelled:
            # A cancelled turn raises here; a client that dismissed the prompt is a denial.
            await anyio.lowlevel.checkpoint()
        if not outcome.allowed:
            await call.handle.fail(REJECTED)
        return outcome.allowed

    async def _approve_other(self, value: object) -> bool:
        """An interrupt of the graph's own: asked as a yes/no question on a tool call."""
        shown: object = value
        question = value if isinstance(value, str) else None
        if isinstance(value, Mapping):
            for key in ("question", "description", "message"):
                text = cast("Mapping[str, object]", value).get(key)
                if isinstance(text, str):
                    question = text
                    break
        title = question or f"Continue? {value!r}"
        handle = self.session.tool_call(
            title if len(title) <= 100 else title[:99] + "…",
            kind="other",
            raw_input=jsonable(shown),
        )
        await handle.announce()
        outcome = await handle.request_permission(acpio.permission.ALL_OPTIONS)
        if outcome.cancelled:
            await anyio.lowlevel.checkpoint()
        if outcome.allowed:
            await handle.complete()
        else:
            await handle.fail(REJECTED)
        return outcome.allowed


def _messages_of(output: object) -> list[object]:
    """The messages a node's update adds to the ``messages`` channel."""
    if isinstance(output, Mapping):
        messages: object = cast("Mapping[str, object]", output).get("messages")
        if isinstance(messages, list):
            return list(cast("list[object]", messages))
        if isinstance(messages, BaseMessage):
            return [messages]
    return []


# ------------------------------------------------------------------- MCP servers


async def _mcp_tools(session: acpio.Session) -> list[BaseTool]:
    """One LangChain tool per tool of the session's MCP servers (``<server>_<tool>``)."""
    servers = await acpio.mcp.connect(session)
    for name, error in servers.errors.items():
        logger.warning("MCP server %s of session %s is unavailable: %s", name, session.id, error)
    tools: list[BaseTool] = []
    for tool in await servers.list_tools():
        tools.append(_mcp_tool(servers, tool))
    return tools


def _mcp_tool(servers: acpio.mcp.McpServers, tool: acpio.mcp.McpTool) -> BaseTool:
    async def call(**arguments: Any) -> str:
        result = await servers.call_tool(tool, arguments)
        if result.is_error:
            raise ToolException(result.text)
        return result.text

    return StructuredTool(
        name=f"{tool.server}_{tool.name}",
        description=tool.description or tool.title or tool.name,
        args_schema=tool.input_schema,
        coroutine=call,
        handle_tool_error=True,
    )
