"""A LangGraph agent served over ACP by acpio's adapter (needs only ``acpio[langgraph]``).

The graph is a ReAct loop built with ``StateGraph``: a model node (the chosen
model, bound to the graph's tools and the session's MCP tools) and a tool node.
Its tools: ``read_file`` (a file of the editor's project) and ``delete_file``,
which asks the user first (:func:`acpio.adapters.langgraph.ask_approval`).

It runs offline on :class:`ScriptedChatModel`, langchain-core's
``GenericFakeChatModel`` taught to stream reasoning, text, tool calls and usage
from a script that reads the conversation:

* ``read <path>`` and ``delete <path>`` call those tools, then report the result;
* ``story`` (or the ``/story`` command) streams a long story, slowly, until cancelled;
* anything else is answered with a short thought and the conversation so far
  (every earlier prompt the model was given: a reopened session remembers).

Run it as ``python examples/langgraph_agent.py`` (ACP over stdio; asyncio). Its
sessions are kept in acpio's default session store, so an editor can reopen
them after the agent restarted.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, InjectedToolCallId, tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import Field

import acpio
from acpio.adapters.langgraph import (
    ACPAgent,
    ModeChoice,
    ModelChoice,
    ask_approval,
    chosen_mode,
    chosen_model,
    session_tools,
)

Script = Callable[[list[BaseMessage]], AIMessage]


class ScriptedChatModel(GenericFakeChatModel):
    """langchain-core's fake chat model, answering from ``script`` and streaming everything.

    ``script`` gets the messages the model is given and returns the reply; the
    reply streams as reasoning chunks (``additional_kwargs["reasoning"]``), one
    chunk per word of its text, a chunk with its tool calls and a last chunk
    with its usage. ``delay`` seconds pass before each chunk.
    """

    messages: Iterator[AIMessage | str] = Field(default_factory=lambda: iter(()))
    script: Script
    delay: float = 0.0

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        """The script decides which tools to call: binding changes nothing."""
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.script(messages))])

    def _chunks(self, messages: list[BaseMessage]) -> Iterator[AIMessageChunk]:
        reply = self.script(messages)
        reasoning = reply.additional_kwargs.get("reasoning")
        if isinstance(reasoning, str):
            for word in re.split(r"(\s)", reasoning):
                yield AIMessageChunk(content=[{"type": "reasoning", "reasoning": word}])
        if isinstance(reply.content, str) and reply.content:
            for word in re.split(r"(\s)", reply.content):
                if word:
                    yield AIMessageChunk(content=word)
        if reply.tool_calls:
            yield AIMessageChunk(
                content="",
                tool_call_chunks=[
                    {
                        "name": call["name"],
                        "args": json.dumps(call["args"]),
                        "id": call["id"],
                        "index": index,
                        "type": "tool_call_chunk",
                    }
                    for index, call in enumerate(reply.tool_calls)
                ],
            )
        prompt_tokens = sum(len(str(m.content).split()) for m in messages)
        output_tokens = len(str(reply.content).split()) + len(reply.tool_calls)
        yield AIMessageChunk(
            content="",
            usage_metadata={
                "input_tokens": prompt_tokens,
                "output_tokens": output_tokens,
                "total_tokens": prompt_tokens + output_tokens,
            },
        )

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for chunk in self._chunks(messages):
            yield ChatGenerationChunk(message=chunk)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        for chunk in self._chunks(messages):
            if self.delay:
                await asyncio.sleep(self.delay)
            yield ChatGenerationChunk(message=chunk)


# ------------------------------------------------------------------------ script


def _prompts(messages: list[BaseMessage]) -> list[str]:
    return [str(m.content) for m in messages if isinstance(m, HumanMessage)]


def scripted_reply(messages: list[BaseMessage]) -> AIMessage:
    """A stand-in for an LLM: picks a tool from the prompt, then reports its result."""
    last = messages[-1]
    if isinstance(last, ToolMessage):
        return AIMessage(content=f"Done: {last.content}")
    prompts = _prompts(messages)
    text = prompts[-1].strip() if prompts else ""
    verb, _, argument = text.partition(" ")
    turn = len(prompts)
    if verb in ("read", "delete") and argument:
        name = "read_file" if verb == "read" else "delete_file"
        call = {"name": name, "args": {"path": argument}, "id": f"call-{turn}", "type": "tool_call"}
        return AIMessage(content="", tool_calls=[call])
    if verb in ("story", "/story"):
        words = " ".join(f"word{i}" for i in range(2000))
        return AIMessage(content=f"Once upon a time {words}")
    system = [m for m in messages if isinstance(m, SystemMessage)]
    mode = f" [{system[0].content}]" if system else ""
    earlier = " | ".join(prompts[:-1]) or "nothing"
    return AIMessage(
        content=f"You said: {text}. Before that: {earlier}.{mode}",
        additional_kwargs={"reasoning": "The user wrote to me; I answer."},
    )


# ------------------------------------------------------------------------- tools


def _project_path(path: str, config: RunnableConfig) -> Path:
    cwd = (config.get("configurable") or {}).get("cwd") or os.getcwd()
    return Path(cwd, path)


@tool
def read_file(path: str, config: RunnableConfig) -> str:
    """Read a text file of the user's project."""
    return _project_path(path, config).read_text()


@tool
def delete_file(
    path: str, config: RunnableConfig, tool_call_id: Annotated[str, InjectedToolCallId]
) -> str:
    """Delete a file of the user's project (asks the user first)."""
    if not ask_approval("delete_file", {"path": path}, tool_call_id=tool_call_id):
        return f"The user did not allow deleting {path}."
    _project_path(path, config).unlink()
    return f"deleted {path}"


TOOLS: list[BaseTool] = [read_file, delete_file]


# ------------------------------------------------------------------------- graph


def build_graph(model: ScriptedChatModel) -> Any:
    """The ReAct loop: the model node, then the tools it called, until it answers."""

    async def call_model(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        chosen = chosen_model(config) or model
        bound = chosen.bind_tools([*TOOLS, *session_tools(config)])
        mode = chosen_mode(config)
        system = [SystemMessage(content=mode.prompt)] if mode and mode.prompt else []
        return {"messages": [await bound.ainvoke([*system, *state["messages"]], config)]}

    async def call_tools(state: MessagesState, config: RunnableConfig) -> Any:
        return await ToolNode([*TOOLS, *session_tools(config)]).ainvoke(state, config)

    builder = StateGraph(MessagesState)
    builder.add_node("model", call_model)
    builder.add_node("tools", call_tools)
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    return builder.compile(name="langgraph-example")


def build_agent(delay: float = 0.0) -> ACPAgent:
    """The example graph, wrapped for ACP, with model and mode pickers and one command."""
    fast = ScriptedChatModel(script=scripted_reply, delay=delay)
    slow = ScriptedChatModel(script=scripted_reply, delay=max(delay, 0.01))
    return ACPAgent(
        build_graph(fast),
        info=acpio.Implementation(name="langgraph-example", version="1.0.0"),
        models=[ModelChoice("fast", "Fast", fast), ModelChoice("slow", "Slow", slow)],
        modes=[ModeChoice("ask", "Ask"), ModeChoice("code", "Code", "mode: code")],
        commands=[acpio.command("story", "Tell a long story")],
        context_window=8192,
    )


if __name__ == "__main__":
    acpio.run(build_agent(delay=float(os.environ.get("ACPIO_EXAMPLE_DELAY", "0.005"))))
