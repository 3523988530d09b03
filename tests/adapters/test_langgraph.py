"""The LangGraph adapter driven by acpio's MockClient and the example's scripted chat model.

Every test builds a real compiled graph (a ReAct loop with LangGraph's
``ToolNode``, LangChain's ``create_agent``, or a custom ``StateGraph``) on
``ScriptedChatModel`` (langchain-core's ``GenericFakeChatModel`` streaming a
script's reasoning, text and tool calls, no network) and checks what an editor
would show (the rebuilt ``SessionView``) and what the model was given. LangGraph
runs only on asyncio, so these tests run on asyncio; one test shows the clear
error a trio turn gets.
"""

from __future__ import annotations

import operator
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, TypedDict

import anyio
import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import interrupt
from support import EXAMPLES

import acpio
from acpio import schema
from acpio.adapters.langgraph import (
    REJECTED,
    ACPAgent,
    ModeChoice,
    ModelChoice,
    ask_approval,
    chosen_mode,
    chosen_model,
    session_tools,
)
from acpio.testing import MockClient, PermissionPolicy

sys.path.insert(0, str(EXAMPLES))
from langgraph_agent import ScriptedChatModel

pytestmark = pytest.mark.anyio

Script = Callable[[list[BaseMessage]], AIMessage]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _prompts(messages: Sequence[BaseMessage]) -> list[str]:
    return [str(m.content) for m in messages if isinstance(m, HumanMessage)]


def _tool_result(messages: Sequence[BaseMessage]) -> ToolMessage | None:
    last = messages[-1]
    return last if isinstance(last, ToolMessage) else None


def _call(name: str, args: dict[str, Any], call_id: str = "call-1") -> AIMessage:
    return AIMessage(
        content="", tool_calls=[{"name": name, "args": args, "id": call_id, "type": "tool_call"}]
    )


def _call_then_answer(name: str, args: dict[str, Any]) -> Script:
    def script(messages: list[BaseMessage]) -> AIMessage:
        result = _tool_result(messages)
        if result is not None:
            return AIMessage(content=f"tool said: {result.content}")
        return _call(name, args, f"call-{len(_prompts(messages))}")

    return script


def react(model: ScriptedChatModel, tools: Sequence[BaseTool] = ()) -> Any:
    """A ReAct loop as graph authors write it: model node, ``ToolNode``, ``tools_condition``."""

    async def call_model(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        chosen = chosen_model(config) or model
        mode = chosen_mode(config)
        extra = [HumanMessage(content=f"[mode {mode.prompt}]")] if mode and mode.prompt else []
        reply = await chosen.ainvoke([*state["messages"], *extra], config)
        return {"messages": [reply]}

    async def call_tools(state: MessagesState, config: RunnableConfig) -> Any:
        return await ToolNode([*tools, *session_tools(config)]).ainvoke(state, config)

    builder = StateGraph(MessagesState)
    builder.add_node("model", call_model)
    builder.add_node("tools", call_tools)
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    return builder.compile(name="react")


def _replies(view: Any) -> list[str]:
    return [acpio.text_of(m.content) for m in view.messages if m.role == "agent"]


# ------------------------------------------------------------------ conversation


async def test_streams_text_and_reasoning_and_keeps_context() -> None:
    seen: list[list[str]] = []

    def script(messages: list[BaseMessage]) -> AIMessage:
        seen.append(_prompts(messages))
        if len(seen) == 1:
            return AIMessage(
                content="Hello there, friend!",
                additional_kwargs={"reasoning": "The user greets me."},
            )
        return AIMessage(content="You said hello before.")

    agent = ACPAgent(react(ScriptedChatModel(script=script)))
    async with MockClient(agent) as client:
        assert client.agent_info.name == "react"
        session = await client.new_session()
        first = await session.prompt("hello")
        assert first.stop_reason == "end_turn"
        chunks = [
            u for u in first.updates if getattr(u, "session_update", None) == "agent_message_chunk"
        ]
        assert len(chunks) >= 5  # streamed word by word, not sent whole
        thoughts = [m for m in session.view.messages if m.role == "thought"]
        assert [acpio.text_of(m.content) for m in thoughts] == ["The user greets me."]
        await session.prompt("what did I say?")
        assert _replies(session.view) == ["Hello there, friend!", "You said hello before."]
    assert seen[1] == ["hello", "what did I say?"]


async def test_prompt_resources_become_the_human_message() -> None:
    given: list[object] = []

    def script(messages: list[BaseMessage]) -> AIMessage:
        given.append(messages[-1].content)
        return AIMessage(content="ok")

    async with MockClient(ACPAgent(react(ScriptedChatModel(script=script)))) as client:
        session = await client.new_session()
        await session.prompt(
            [
                schema.TextContent(text="look at this"),
                schema.EmbeddedResource(
                    resource=schema.TextResourceContents(uri="file:///a.py", text="x = 1")
                ),
                schema.ResourceLink(name="b.py", uri="file:///b.py"),
            ]
        )
    assert given == ["look at this\nContents of file:///a.py:\nx = 1\nResource b.py: file:///b.py"]


async def test_usage_is_reported_with_the_context_window() -> None:
    model = ScriptedChatModel(script=lambda messages: AIMessage(content="short answer"))
    async with MockClient(ACPAgent(react(model), context_window=1000)) as client:
        session = await client.new_session()
        await session.prompt("hi")
        usage = session.view.usage
        assert usage is not None
        assert usage.size == 1000
        assert 0 < usage.used <= 1000


async def test_a_model_that_raises_ends_the_turn_with_error() -> None:
    def script(messages: list[BaseMessage]) -> AIMessage:
        raise RuntimeError("model backend unavailable")

    async with MockClient(ACPAgent(react(ScriptedChatModel(script=script)))) as client:
        session = await client.new_session()
        result = await session.prompt("hi")
        assert result.stop_reason == "error"
        assert session.view.last_error is not None
        assert "model backend unavailable" in session.view.last_error.message


# ------------------------------------------------------------------------- tools


async def test_tool_call_runs_in_progress_and_completes_with_its_result(tmp_path: Path) -> None:
    statuses_while_running: list[str | None] = []

    @tool
    async def read_notes(path: str) -> str:
        """Read the notes file."""
        # The call shows in_progress while the tool runs (the client sees it before the end).
        await session.wait_for(
            lambda: [c.status for c in session.view.tool_calls.values()] == ["in_progress"],
            what="the call in progress",
        )
        statuses_while_running.append("in_progress")
        return f"contents of {path}"

    model = ScriptedChatModel(script=_call_then_answer("read_notes", {"path": "notes.txt"}))
    async with MockClient(ACPAgent(react(model, [read_notes])), cwd=tmp_path) as client:
        session = await client.new_session()
        result = await session.prompt("read my notes")
        assert result.stop_reason == "end_turn"
        (call,) = session.view.tool_calls.values()
        assert call.status == "completed"
        assert call.kind == "read"
        assert call.name == "read_notes"
        assert call.title == "read_notes(path='notes.txt')"
        assert call.raw_input == {"path": "notes.txt"}
        assert call.raw_output == "contents of notes.txt"
        assert call.text == "contents of notes.txt"
        assert [loc.path for loc in call.locations] == [str(tmp_path / "notes.txt")]
        assert _replies(session.view)[-1] == "tool said: contents of notes.txt"
    assert statuses_while_running == ["in_progress"]


async def test_declared_tool_kind_wins_over_the_inferred_one() -> None:
    @tool
    def frobnicate() -> str:
        """Do a thing."""
        return "done"

    model = ScriptedChatModel(script=_call_then_answer("frobnicate", {}))
    agent = ACPAgent(react(model, [frobnicate]), tool_kinds={"frobnicate": "fetch"})
    async with MockClient(agent) as client:
        session = await client.new_session()
        await session.prompt("go")
        (call,) = session.view.tool_calls.values()
        assert call.kind == "fetch" and call.status == "completed"


async def test_a_tool_that_raises_fails_its_call() -> None:
    @tool
    def explode() -> str:
        """Always fails."""
        raise OSError("disk on fire")

    model = ScriptedChatModel(script=_call_then_answer("explode", {}))
    async with MockClient(ACPAgent(react(model, [explode]))) as client:
        session = await client.new_session()
        result = await session.prompt("go")
        assert result.stop_reason == "error"  # ToolNode lets the error end the run
        (call,) = session.view.tool_calls.values()
        assert call.status == "failed"
        assert "disk on fire" in call.text


# -------------------------------------------------------------------- approvals


def _approval_graph(deleted: list[str], script: Script | None = None) -> Any:
    @tool
    def delete_branch(name: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Delete a git branch (asks first)."""
        if not ask_approval("delete_branch", {"name": name}, tool_call_id=tool_call_id):
            return REJECTED
        deleted.append(name)
        return f"deleted {name}"

    answer = script or _call_then_answer("delete_branch", {"name": "old"})
    return react(ScriptedChatModel(script=answer), [delete_branch])


async def test_allowed_approval_resumes_the_graph_and_runs_the_tool() -> None:
    deleted: list[str] = []
    agent = ACPAgent(_approval_graph(deleted))
    async with MockClient(agent, policy=PermissionPolicy.allow()) as client:
        session = await client.new_session()
        result = await session.prompt("clean up")
        assert result.stop_reason == "end_turn"
        (call,) = session.view.tool_calls.values()
        assert call.status == "completed" and call.kind == "delete"
        assert len(client.permission_requests) == 1
        assert _replies(session.view)[-1] == "tool said: deleted old"
    assert deleted == ["old"]


async def test_rejected_approval_goes_back_to_the_model() -> None:
    deleted: list[str] = []
    agent = ACPAgent(_approval_graph(deleted))
    async with MockClient(agent, policy=PermissionPolicy.reject()) as client:
        session = await client.new_session()
        result = await session.prompt("clean up")
        assert result.stop_reason == "end_turn"
        (call,) = session.view.tool_calls.values()
        assert call.status == "failed"
        assert _replies(session.view)[-1] == f"tool said: {REJECTED}"
    assert deleted == []


async def test_allow_always_is_remembered_per_session() -> None:
    deleted: list[str] = []
    agent = ACPAgent(_approval_graph(deleted))
    async with MockClient(agent, policy=PermissionPolicy.allow("allow_always")) as client:
        session = await client.new_session()
        await session.prompt("clean up")
        await session.prompt("again")
        assert len(client.permission_requests) == 1
        other = await client.new_session()
        await other.prompt("clean up there")
        assert len(client.permission_requests) == 2
    assert deleted == ["old", "old", "old"]


async def test_an_interrupt_of_the_graphs_own_is_a_yes_or_no_question() -> None:
    answers: list[object] = []

    class State(TypedDict):
        messages: Annotated[list[BaseMessage], operator.add]

    def ask(state: State) -> dict[str, Any]:
        answer = interrupt({"question": "Publish the release?"})
        answers.append(answer)
        return {"messages": [AIMessage(content=f"published: {answer}")]}

    builder = StateGraph(State)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    async with MockClient(ACPAgent(builder.compile()), policy=PermissionPolicy.allow()) as client:
        session = await client.new_session()
        result = await session.prompt("release")
        assert result.stop_reason == "end_turn"
        (call,) = session.view.tool_calls.values()
        assert call.title == "Publish the release?" and call.status == "completed"
        assert _replies(session.view) == ["published: True"]
    assert answers == [True]


@pytest.mark.parametrize("interrupt_mode", ["per_call", "batched"])
async def test_create_agent_with_human_in_the_loop_middleware(interrupt_mode: str) -> None:
    deleted: list[str] = []

    @tool
    def delete_branch(name: str) -> str:
        """Delete a git branch."""
        deleted.append(name)
        return f"deleted {name}"

    @tool
    def list_branches() -> str:
        """List the branches."""
        return "main, old"

    def script(messages: list[BaseMessage]) -> AIMessage:
        result = _tool_result(messages)
        if result is not None:
            return AIMessage(content=f"tool said: {result.content}")
        return AIMessage(
            content="",
            tool_calls=[
                {"name": "list_branches", "args": {}, "id": "c1", "type": "tool_call"},
                {"name": "delete_branch", "args": {"name": "old"}, "id": "c2", "type": "tool_call"},
            ],
        )

    graph = create_agent(
        ScriptedChatModel(script=script),
        [delete_branch, list_branches],
        middleware=[
            HumanInTheLoopMiddleware(
                {"delete_branch": True},
                interrupt_mode=interrupt_mode,  # type: ignore[arg-type]
            )
        ],
    )
    async with MockClient(ACPAgent(graph), policy=PermissionPolicy.reject()) as client:
        session = await client.new_session()
        result = await session.prompt("clean up")
        assert result.stop_reason == "end_turn"
        calls = {c.name: c for c in session.view.tool_calls.values()}
        assert set(calls) == {"list_branches", "delete_branch"}
        assert calls["list_branches"].status == "completed"
        assert calls["delete_branch"].status == "failed"
        assert calls["delete_branch"].kind == "delete"
        assert len(client.permission_requests) == 1
    assert deleted == []


# -------------------------------------------------------------------- cancelling


async def test_cancel_mid_stream_ends_cancelled_and_the_next_turn_goes_on() -> None:
    prompts: list[list[str]] = []

    def script(messages: list[BaseMessage]) -> AIMessage:
        prompts.append(_prompts(messages))
        if len(prompts) == 1:
            return AIMessage(content=" ".join(f"w{i}" for i in range(100_000)))
        return AIMessage(content="fine")

    agent = ACPAgent(react(ScriptedChatModel(script=script, delay=0.001)))
    async with MockClient(agent) as client:
        session = await client.new_session()
        turn = await session.start_prompt("tell me a story")
        await session.wait_for(
            lambda: any(
                getattr(u, "session_update", None) == "agent_message_chunk" for u in session.updates
            ),
            what="the first chunk",
        )
        await session.cancel()
        result = await turn.wait()
        assert result.stop_reason == "cancelled"
        second = await session.prompt("go on")
        assert second.stop_reason == "end_turn"
    assert prompts[1] == ["tell me a story", "go on"]


async def test_cancel_mid_tool_cancels_the_call_and_closes_it_for_the_model() -> None:
    running = anyio.Event()
    seen: list[list[BaseMessage]] = []

    @tool
    async def run_slow() -> str:
        """Takes forever."""
        running.set()
        await anyio.sleep_forever()
        return "never"

    def script(messages: list[BaseMessage]) -> AIMessage:
        seen.append(list(messages))
        if len(seen) == 1:
            return _call("run_slow", {})
        return AIMessage(content="ok")

    agent = ACPAgent(react(ScriptedChatModel(script=script), [run_slow]))
    async with MockClient(agent) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        await running.wait()
        await session.cancel()
        result = await turn.wait()
        assert result.stop_reason == "cancelled"
        (call,) = session.view.tool_calls.values()
        assert call.status == "cancelled"
        assert (await session.prompt("next")).stop_reason == "end_turn"
    # The unanswered tool call got a result before the next prompt: models refuse otherwise.
    closing = [m for m in seen[-1] if isinstance(m, ToolMessage)]
    assert [m.tool_call_id for m in closing] == ["call-1"]


async def test_cancel_while_approval_is_pending() -> None:
    deleted: list[str] = []

    def script(messages: list[BaseMessage]) -> AIMessage:
        if len(_prompts(messages)) == 1:
            return _call("delete_branch", {"name": "old"})
        results = [str(m.content) for m in messages if isinstance(m, ToolMessage)]
        return AIMessage(content=f"results: {results}")

    agent = ACPAgent(_approval_graph(deleted, script))
    async with MockClient(agent, policy=PermissionPolicy.never()) as client:
        session = await client.new_session()
        turn = await session.start_prompt("clean up")
        await session.wait_for_permission_request()
        await session.cancel()
        result = await turn.wait()
        assert result.stop_reason == "cancelled"
        (call,) = session.view.tool_calls.values()
        assert call.status == "cancelled"
        # The pending interrupt does not hold the next turn: the call is closed for the model.
        assert (await session.prompt("never mind")).stop_reason == "end_turn"
        closed = "The user cancelled this tool call before it finished."
        assert _replies(session.view)[-1] == f"results: [{closed!r}]"
        assert len(client.permission_requests) == 1
    assert deleted == []


# ------------------------------------------------------------- pickers, commands


async def test_model_and_mode_pickers_take_effect_on_the_next_turn() -> None:
    def answering(text: str) -> ScriptedChatModel:
        return ScriptedChatModel(
            script=lambda messages: AIMessage(content=f"{text} {messages[-1].content}")
        )

    models = [
        ModelChoice("fast", "Fast", answering("fast:")),
        ModelChoice("smart", "Smart", answering("smart:")),
    ]
    modes = [ModeChoice("ask", "Ask"), ModeChoice("review", "Review", "review strictly")]
    agent = ACPAgent(react(answering("default:")), models=models, modes=modes)
    async with MockClient(agent) as client:
        session = await client.new_session()
        assert session.view.config_values == {"model": "fast", "mode": "ask"}
        await session.prompt("hi")
        await session.set_config_option("model", "smart")
        await session.set_config_option("mode", "review")
        await session.prompt("hi again")
        assert _replies(session.view) == ["fast: hi", "smart: [mode review strictly]"]


async def test_slash_commands_are_advertised_and_reach_the_graph() -> None:
    given: list[str] = []

    def script(messages: list[BaseMessage]) -> AIMessage:
        given.append(str(messages[-1].content))
        return AIMessage(content="ok")

    agent = ACPAgent(
        react(ScriptedChatModel(script=script)),
        commands=[acpio.command("review", "Review the diff", hint="focus")],
    )
    async with MockClient(agent) as client:
        session = await client.new_session()
        assert [c.name for c in session.view.available_commands or ()] == ["review"]
        await session.prompt("/review tests")
    assert given == ["/review tests"]


# --------------------------------------------------------------------- MCP tools


MCP_SERVER = textwrap.dedent(
    """
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("calc")

    @server.tool()
    def add(a: int, b: int) -> int:
        \"\"\"Add two numbers.\"\"\"
        return a + b

    server.run("stdio")
    """
)


async def test_session_mcp_servers_become_tools(tmp_path: Path) -> None:
    script_path = tmp_path / "calc_server.py"
    script_path.write_text(MCP_SERVER)
    offered: list[list[str]] = []

    async def call_model(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        offered.append([t.name for t in session_tools(config)])
        result = _tool_result(state["messages"])
        if result is not None:
            return {"messages": [AIMessage(content=f"sum is {result.content}")]}
        return {"messages": [_call("calc_add", {"a": 2, "b": 3})]}

    async def call_tools(state: MessagesState, config: RunnableConfig) -> Any:
        return await ToolNode(session_tools(config)).ainvoke(state, config)

    builder = StateGraph(MessagesState)
    builder.add_node("model", call_model)
    builder.add_node("tools", call_tools)
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")

    server = schema.McpServerStdio(name="calc", command=sys.executable, args=[str(script_path)])
    async with MockClient(ACPAgent(builder.compile())) as client:
        session = await client.new_session(mcp_servers=[server])
        result = await session.prompt("add 2 and 3")
        assert result.stop_reason == "end_turn"
        assert _replies(session.view)[-1] == "sum is 5"
        (call,) = session.view.tool_calls.values()
        assert call.status == "completed" and call.raw_input == {"a": 2, "b": 3}
    assert offered[0] == ["calc_add"]


# ------------------------------------------------------------ state, resume, trio


async def test_a_custom_state_graph_keeps_all_its_channels_across_close_and_resume() -> None:
    class State(TypedDict):
        messages: Annotated[list[BaseMessage], operator.add]
        count: int

    def step(state: State) -> dict[str, Any]:
        count = state.get("count", 0) + 1
        return {"count": count, "messages": [AIMessage(content=f"turn {count}")]}

    builder = StateGraph(State)
    builder.add_node("step", step)
    builder.add_edge(START, "step")
    agent = ACPAgent(builder.compile())
    async with MockClient(agent) as client:
        session = await client.new_session()
        await session.prompt("one")
        await session.close()
        assert agent.checkpointer is not None
        assert not agent.checkpointer.has_thread(session.id)  # closed: out of memory
        await session.resume()
        await session.prompt("two")
        assert _replies(session.view)[-1] == "turn 2"


async def test_resume_keeps_the_conversation() -> None:
    seen: list[list[str]] = []

    def script(messages: list[BaseMessage]) -> AIMessage:
        seen.append(_prompts(messages))
        return AIMessage(content=f"reply {len(seen)}")

    async with MockClient(ACPAgent(react(ScriptedChatModel(script=script)))) as client:
        session = await client.new_session()
        await session.prompt("first")
        await session.close()
        await session.resume()
        await session.prompt("second")
    assert seen[-1] == ["first", "second"]


async def test_a_graph_with_its_own_checkpointer_keeps_it() -> None:
    saver = InMemorySaver()
    model = ScriptedChatModel(script=lambda messages: AIMessage(content="ok"))
    graph = react(model).copy(update={"checkpointer": saver})
    agent = ACPAgent(graph)
    assert agent.checkpointer is None
    async with MockClient(agent) as client:
        session = await client.new_session()
        await session.prompt("hi")
    assert saver.get_tuple({"configurable": {"thread_id": session.id}}) is not None


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_a_trio_turn_says_langgraph_needs_asyncio() -> None:
    model = ScriptedChatModel(script=lambda messages: AIMessage(content="never"))
    async with MockClient(ACPAgent(react(model))) as client:
        session = await client.new_session()
        result = await session.prompt("hi")
        assert result.stop_reason == "error"
        assert session.view.last_error is not None
        assert "only on asyncio" in session.view.last_error.message


# --------------------------------------------------------------------------- v1


async def test_the_same_adapter_serves_a_v1_client(tmp_path: Path) -> None:
    deleted: list[str] = []
    agent = ACPAgent(_approval_graph(deleted))
    async with MockClient(agent, protocol_version=1, policy=PermissionPolicy.allow()) as client:
        session = await client.new_session(cwd=tmp_path)
        result = await session.prompt("clean up")
        assert result.stop_reason == "end_turn"
        (call,) = session.view.tool_calls.values()
        assert call.status == "completed" and call.kind == "delete"
        assert _replies(session.view)[-1] == "tool said: deleted old"
        assert len(client.permission_requests) == 1
    assert deleted == ["old"]


# ------------------------------------------------------------------------ README


async def test_the_readme_agent_asks_before_deleting_a_branch() -> None:
    readme = (Path(__file__).parents[2] / "docs" / "adapters.md").read_text()
    (code,) = [
        part.split("```", 1)[0]
        for part in readme.split("```python\n")[1:]
        if "acpio.adapters.langgraph import ACPAgent" in part.split("```", 1)[0]
    ]
    module: dict[str, Any] = {"__name__": "readme_langgraph"}
    exec(compile(code, "docs/adapters.md", "exec"), module)
    graph = module["build"](
        ScriptedChatModel(script=_call_then_answer("delete_branch", {"name": "old"}))
    )
    async with MockClient(ACPAgent(graph), policy=PermissionPolicy.allow()) as client:
        session = await client.new_session()
        await session.prompt("clean up")
        (call,) = session.view.tool_calls.values()
        assert call.status == "completed" and call.kind == "delete"
        assert len(client.permission_requests) == 1
        assert _replies(session.view) == ["tool said: deleted old"]
