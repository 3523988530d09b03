"""The pydantic-ai adapter driven by acpio's MockClient and pydantic-ai's FunctionModel.

Every test scripts the model with a streaming ``FunctionModel`` (text, thinking and
tool calls, no network) and checks what an editor would show (the rebuilt
``SessionView``) and what the model saw (the messages it was given). pydantic-ai
runs only on asyncio, so these tests run on asyncio; one test shows the clear
error a trio turn gets.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaThinkingPart, DeltaToolCall, FunctionModel
from pydantic_ai.tools import RunContext

import acpio
from acpio import schema
from acpio.adapters.pydantic_ai import ACPAgent, ModeChoice, ModelChoice, editor_tools, infer_kind
from acpio.testing import MockClient, PermissionPolicy

pytestmark = pytest.mark.anyio

Script = Callable[[list[ModelMessage], AgentInfo], AsyncIterator[object]]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _tool_returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    last = messages[-1]
    if not isinstance(last, ModelRequest):
        return []
    return [p for p in last.parts if isinstance(p, ToolReturnPart)]


def _user_texts(messages: list[ModelMessage]) -> list[str]:
    texts: list[str] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart):
                    content = [part.content] if isinstance(part.content, str) else part.content
                    texts.extend(c for c in content if isinstance(c, str))
    return texts


def _statuses(updates: list[schema.SessionUpdate], call_id: str) -> list[str]:
    """The statuses a tool call went through, in the order the client was told them."""
    seen: list[str] = []
    for update in updates:
        if isinstance(update, schema.ToolCallUpdate) and update.tool_call_id == call_id:
            status = update.status if isinstance(update.status, str) else None
            if status is not None and (not seen or seen[-1] != status):
                seen.append(status)
    return seen


def _model(script: Script) -> FunctionModel:
    return FunctionModel(stream_function=script)  # type: ignore[arg-type]


# ------------------------------------------------------------------ conversation


async def test_streams_text_and_thinking_and_keeps_context() -> None:
    seen: list[list[str]] = []

    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[object]:
        seen.append(_user_texts(messages))
        if len(seen) == 1:
            yield {0: DeltaThinkingPart(content="The user greets me.")}
            yield "Hello!"
        else:
            for word in ["You ", "said ", "hello ", "before."]:
                yield word

    agent = Agent(_model(script), name="chat")
    async with MockClient(ACPAgent(agent)) as client:
        assert client.agent_info.name == "chat"
        session = await client.new_session()
        first = await session.prompt("hello")
        assert first.stop_reason == "end_turn"
        thoughts = [m for m in session.view.messages if m.role == "thought"]
        assert [acpio.text_of(m.content) for m in thoughts] == ["The user greets me."]

        second = await session.prompt("what did I say?")
        assert second.stop_reason == "end_turn"
        replies = [m for m in session.view.messages if m.role == "agent"]
        assert acpio.text_of(replies[-1].content) == "You said hello before."
    # The second request carried the first turn: the conversation has context.
    assert seen[1] == ["hello", "what did I say?"]


async def test_prompt_resources_become_user_content() -> None:
    given: list[object] = []

    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[object]:
        request = messages[-1]
        assert isinstance(request, ModelRequest)
        given.extend(p.content for p in request.parts if isinstance(p, UserPromptPart))
        yield "ok"

    async with MockClient(ACPAgent(Agent(_model(script)))) as client:
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
    assert given == [
        ["look at this", "Contents of file:///a.py:\nx = 1", "Resource b.py: file:///b.py"]
    ]


async def test_usage_is_reported_with_the_context_window() -> None:
    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[object]:
        yield "short answer"

    async with MockClient(ACPAgent(Agent(_model(script)), context_window=1000)) as client:
        session = await client.new_session()
        await session.prompt("hi")
        usage = session.view.usage
        assert usage is not None
        assert usage.size == 1000
        assert 0 < usage.used <= 1000


# ------------------------------------------------------------------------- tools


def _call_then_answer(tool: str, args: str) -> Script:
    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[object]:
        returns = _tool_returns(messages)
        if returns:
            yield f"tool said: {returns[0].content}"
        else:
            yield {0: DeltaToolCall(name=tool, json_args=args, tool_call_id="call-1")}

    return script


async def test_tool_call_is_reported_with_kind_input_locations_and_output(tmp_path: Path) -> None:
    agent = Agent(_model(_call_then_answer("read_notes", '{"path": "notes.txt"}')))

    @agent.tool_plain
    def read_notes(path: str) -> str:
        """Read the notes file."""
        return f"contents of {path}"

    async with MockClient(ACPAgent(agent), cwd=tmp_path) as client:
        session = await client.new_session()
        result = await session.prompt("read my notes")
        assert result.stop_reason == "end_turn"
        (call,) = session.view.tool_calls.values()
        assert call.status == "completed"
        assert call.kind == "read"
        assert call.name == "read_notes"
        assert call.raw_input == {"path": "notes.txt"}
        assert call.raw_output == "contents of notes.txt"
        assert acpio.text_of([c.content for c in call.content]) == "contents of notes.txt"
        assert _statuses(session.updates, call.id) == ["pending", "in_progress", "completed"]
        assert [loc.path for loc in call.locations] == [str(tmp_path / "notes.txt")]
        replies = [m for m in session.view.messages if m.role == "agent"]
        assert acpio.text_of(replies[-1].content) == "tool said: contents of notes.txt"


async def test_declared_tool_kind_wins_over_the_inferred_one() -> None:
    agent = Agent(_model(_call_then_answer("frobnicate", "{}")))

    @agent.tool_plain
    def frobnicate() -> str:
        """Do a thing."""
        return "done"

    async with MockClient(ACPAgent(agent, tool_kinds={"frobnicate": "fetch"})) as client:
        session = await client.new_session()
        await session.prompt("go")
        (call,) = session.view.tool_calls.values()
        assert call.kind == "fetch"


async def test_a_tool_that_raises_fails_its_call_and_the_turn() -> None:
    agent = Agent(_model(_call_then_answer("explode", "{}")))

    @agent.tool_plain
    def explode() -> str:
        """Always fails."""
        raise OSError("disk on fire")

    async with MockClient(ACPAgent(agent)) as client:
        session = await client.new_session()
        result = await session.prompt("go")
        assert result.stop_reason == "error"
        (call,) = session.view.tool_calls.values()
        assert call.status == "failed"
        assert "disk on fire" in call.text


async def test_a_model_that_raises_ends_the_turn_with_error() -> None:
    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[object]:
        yield "partial "
        raise RuntimeError("model backend unavailable")

    async with MockClient(ACPAgent(Agent(_model(script)))) as client:
        session = await client.new_session()
        result = await session.prompt("hi")
        assert result.stop_reason == "error"
        assert session.view.last_error is not None
        assert "model backend unavailable" in session.view.last_error.message


# -------------------------------------------------------------------- approvals


def _approval_agent(calls: list[str]) -> Agent[None, str]:
    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[object]:
        returns = _tool_returns(messages)
        if returns:
            yield f"result: {returns[0].content}"
        else:
            yield {0: DeltaToolCall(name="delete_branch", json_args='{"name": "old"}')}

    agent = Agent(_model(script))

    @agent.tool_plain(requires_approval=True)
    def delete_branch(name: str) -> str:
        """Delete a git branch."""
        calls.append(name)
        return f"deleted {name}"

    return agent


async def test_allowed_approval_runs_the_tool() -> None:
    calls: list[str] = []
    async with MockClient(ACPAgent(_approval_agent(calls)), policy=PermissionPolicy.allow()) as c:
        session = await c.new_session()
        result = await session.prompt("clean up")
        assert result.stop_reason == "end_turn"
        (call,) = session.view.tool_calls.values()
        assert call.status == "completed" and call.kind == "delete"
        assert len(c.permission_requests) == 1
    assert calls == ["old"]


async def test_rejected_approval_goes_back_to_the_model() -> None:
    calls: list[str] = []
    async with MockClient(ACPAgent(_approval_agent(calls)), policy=PermissionPolicy.reject()) as c:
        session = await c.new_session()
        result = await session.prompt("clean up")
        assert result.stop_reason == "end_turn"
        (call,) = session.view.tool_calls.values()
        assert call.status == "failed"
        replies = [m for m in session.view.messages if m.role == "agent"]
        assert acpio.text_of(replies[-1].content) == "result: The user rejected this tool call."
    assert calls == []


async def test_allow_always_is_remembered_per_session() -> None:
    calls: list[str] = []
    agent = ACPAgent(_approval_agent(calls))
    async with MockClient(agent, policy=PermissionPolicy.allow("allow_always")) as client:
        session = await client.new_session()
        await session.prompt("clean up")
        await session.prompt("again")
        assert len(client.permission_requests) == 1
        other = await client.new_session()
        await other.prompt("clean up there")
        assert len(client.permission_requests) == 2
    assert calls == ["old", "old", "old"]


# -------------------------------------------------------------------- cancelling


async def test_cancel_mid_stream_ends_cancelled_and_keeps_what_was_said() -> None:
    started = anyio.Event()
    prompts: list[list[str]] = []

    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[object]:
        prompts.append(_user_texts(messages))
        if len(prompts) == 1:
            yield "I was saying "
            started.set()
            await anyio.sleep_forever()
        yield "fine"

    agent = ACPAgent(Agent(_model(script)))
    async with MockClient(agent) as client:
        session = await client.new_session()
        turn = await session.start_prompt("tell me a story")
        await started.wait()
        await session.cancel()
        result = await turn.wait()
        assert result.stop_reason == "cancelled"
        # Closed and reopened: the cancelled turn comes back from the durable state.
        await session.close()
        await session.resume()
        await session.prompt("go on")
    assert prompts[1] == ["tell me a story", "go on"]


async def test_cancel_mid_tool_cancels_the_call() -> None:
    running = anyio.Event()

    agent = Agent(_model(_call_then_answer("run_slow", "{}")))

    @agent.tool_plain
    async def run_slow() -> str:
        """Takes forever."""
        running.set()
        await anyio.sleep_forever()
        return "never"

    async with MockClient(ACPAgent(agent)) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        await running.wait()
        await session.cancel()
        result = await turn.wait()
        assert result.stop_reason == "cancelled"
        (call,) = session.view.tool_calls.values()
        assert call.status == "cancelled"


async def test_cancel_while_approval_is_pending() -> None:
    calls: list[str] = []
    agent = ACPAgent(_approval_agent(calls))
    async with MockClient(agent, policy=PermissionPolicy.never()) as client:
        session = await client.new_session()
        turn = await session.start_prompt("clean up")
        await session.wait_for_permission_request()
        await session.cancel()
        result = await turn.wait()
        assert result.stop_reason == "cancelled"
        (call,) = session.view.tool_calls.values()
        assert call.status == "cancelled"
    assert calls == []


# ------------------------------------------------------------------------ models


async def test_model_and_mode_pickers_take_effect_on_the_next_turn() -> None:
    instructions_seen: list[str | None] = []

    def answering(text: str) -> FunctionModel:
        async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[object]:
            request = messages[-1]
            assert isinstance(request, ModelRequest)
            instructions_seen.append(request.instructions)
            yield text

        return _model(script)

    models = [
        ModelChoice("fast", "Fast", answering("from fast")),
        ModelChoice("smart", "Smart", answering("from smart")),
    ]
    modes = [ModeChoice("ask", "Ask"), ModeChoice("review", "Review", "Review the code strictly.")]
    adapter = ACPAgent(Agent(answering("unused")), models=models, modes=modes)
    async with MockClient(adapter) as client:
        session = await client.new_session()
        assert session.view.config_values == {"model": "fast", "mode": "ask"}
        await session.prompt("hi")
        await session.set_config_option("model", "smart")
        await session.set_config_option("mode", "review")
        await session.prompt("hi again")
        replies = [acpio.text_of(m.content) for m in session.view.messages if m.role == "agent"]
    assert replies == ["from fast", "from smart"]
    assert instructions_seen[0] is None
    assert instructions_seen[1] is not None and "Review the code strictly." in instructions_seen[1]


# ------------------------------------------------------------------------ kinds


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("read_file", "read"),
        ("write_file", "edit"),
        ("delete_branch", "delete"),
        ("run_command", "execute"),
        ("grep", "search"),
        ("fetch_url", "fetch"),
        ("rename_symbol", "move"),
        ("frobnicate", "other"),
    ],
)
def test_infer_kind(name: str, kind: str) -> None:
    assert infer_kind(name) == kind


# --------------------------------------------------------------------- MCP tools


MCP_SERVER = textwrap.dedent(
    """
    try:
        from mcp.server.mcpserver import MCPServer
    except ImportError:  # the MCP SDK 1.x that older pydantic-ai versions install
        from mcp.server.fastmcp import FastMCP as MCPServer

    import os, sys
    if len(sys.argv) > 1:  # where the test learns this server's pid
        with open(sys.argv[1], "w") as pid_file:
            pid_file.write(str(os.getpid()))

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

    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[object]:
        returns = _tool_returns(messages)
        if returns:
            yield f"sum is {returns[0].content}"
        else:
            assert "calc_add" in [t.name for t in info.function_tools]
            yield {0: DeltaToolCall(name="calc_add", json_args='{"a": 2, "b": 3}')}

    pid_path = tmp_path / "server.pid"
    server = schema.McpServerStdio(
        name="calc", command=sys.executable, args=[str(script_path), str(pid_path)]
    )
    async with MockClient(ACPAgent(Agent(_model(script)))) as client:
        session = await client.new_session(mcp_servers=[server])
        result = await session.prompt("add 2 and 3")
        assert result.stop_reason == "end_turn"
        # The server process ended with the turn that started it (and was reaped).
        with pytest.raises(ProcessLookupError):
            os.kill(int(pid_path.read_text()), 0)
        replies = [acpio.text_of(m.content) for m in session.view.messages if m.role == "agent"]
        assert replies[-1] == "sum is 5"
        (call,) = session.view.tool_calls.values()
        assert call.status == "completed" and call.raw_input == {"a": 2, "b": 3}


# ----------------------------------------------------------------- editor tools


def _calls_then_answer(*calls: tuple[str, str]) -> Script:
    """Call each tool in turn (one per model response), then answer with the last result."""

    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[object]:
        done = sum(1 for m in messages if isinstance(m, ModelRequest) and _tool_returns([m]))
        if done < len(calls):
            name, args = calls[done]
            yield {0: DeltaToolCall(name=name, json_args=args, tool_call_id=f"call-{done}")}
        else:
            yield f"last result: {_tool_returns(messages)[0].content}"

    return script


async def test_read_file_shows_the_location_and_returns_the_text(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    agent = Agent(
        _model(_calls_then_answer(("read_file", '{"path": "a.txt"}'))), toolsets=[editor_tools()]
    )
    async with MockClient(ACPAgent(agent), cwd=tmp_path) as client:
        session = await client.new_session()
        await session.prompt("read a.txt")
        (call,) = session.view.tool_calls.values()
        assert call.kind == "read" and call.status == "completed"
        assert [loc.path for loc in call.locations] == [str(tmp_path / "a.txt")]
        replies = [acpio.text_of(m.content) for m in session.view.messages if m.role == "agent"]
        assert replies[-1] == "last result: alpha\n"


async def test_write_file_shows_the_diff_before_asking(tmp_path: Path) -> None:
    target = tmp_path / "b.txt"
    target.write_text("old\n")
    agent = Agent(
        _model(_calls_then_answer(("write_file", '{"path": "b.txt", "content": "new\\n"}'))),
        toolsets=[editor_tools()],
    )
    diffs_when_asked: list[object] = []

    async def decide(request: object) -> dict[str, object]:
        view = session.view
        diffs_when_asked.extend(d for c in view.tool_calls.values() for d in c.diffs)
        options = request.params["options"]  # type: ignore[attr-defined]
        return {"outcome": "selected", "optionId": options[0]["optionId"]}

    async with MockClient(ACPAgent(agent), cwd=tmp_path, policy=PermissionPolicy.call(decide)) as c:
        session = await c.new_session()
        await session.prompt("update b")
        (call,) = session.view.tool_calls.values()
        assert call.kind == "edit" and call.status == "completed"
    assert len(diffs_when_asked) == 1
    assert target.read_text() == "new\n"


async def test_rejected_write_is_told_to_the_model(tmp_path: Path) -> None:
    target = tmp_path / "c.txt"
    target.write_text("keep\n")
    agent = Agent(
        _model(_calls_then_answer(("write_file", '{"path": "c.txt", "content": "x"}'))),
        toolsets=[editor_tools()],
    )
    async with MockClient(ACPAgent(agent), cwd=tmp_path, policy=PermissionPolicy.reject()) as c:
        session = await c.new_session()
        result = await session.prompt("overwrite c")
        assert result.stop_reason == "end_turn"
        (call,) = session.view.tool_calls.values()
        assert call.status == "failed"
        replies = [acpio.text_of(m.content) for m in session.view.messages if m.role == "agent"]
        assert "rejected" in replies[-1]
    assert target.read_text() == "keep\n"


async def test_update_plan_shows_the_plan() -> None:
    plan = (
        '{"entries": [{"content": "read", "status": "completed", "priority": "high"},'
        ' {"content": "fix", "status": "in_progress", "priority": "medium"}]}'
    )
    agent = Agent(_model(_calls_then_answer(("update_plan", plan))), toolsets=[editor_tools()])
    async with MockClient(ACPAgent(agent)) as client:
        session = await client.new_session()
        await session.prompt("plan it")
        assert not session.view.tool_calls
        (shown,) = session.view.plans.values()
        assert [(e.content, e.status, e.priority) for e in shown.entries] == [
            ("read", "completed", "high"),
            ("fix", "in_progress", "medium"),
        ]


# ------------------------------------------------------------------ resume, trio


async def test_resume_replays_and_keeps_the_conversation() -> None:
    seen: list[list[str]] = []

    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[object]:
        seen.append(_user_texts(messages))
        yield f"reply {len(seen)}"

    async with MockClient(ACPAgent(Agent(_model(script)))) as client:
        session = await client.new_session()
        await session.prompt("first")
        await session.close()
        replayed = await session.resume()
        assert any(getattr(u, "session_update", None) == "agent_message" for u in replayed) or [
            acpio.text_of(m.content) for m in session.view.messages if m.role == "agent"
        ] == ["reply 1"]
        await session.prompt("second")
    assert seen[-1] == ["first", "second"]


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_a_trio_turn_says_pydantic_ai_needs_asyncio() -> None:
    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[object]:
        yield "never"

    async with MockClient(ACPAgent(Agent(_model(script)))) as client:
        session = await client.new_session()
        result = await session.prompt("hi")
        assert result.stop_reason == "error"
        assert session.view.last_error is not None
        assert "only on asyncio" in session.view.last_error.message


async def test_run_command_shows_a_terminal_and_gives_the_output_to_the_model(
    tmp_path: Path,
) -> None:
    agent = Agent(
        _model(_calls_then_answer(("run_command", '{"command": "echo from-shell; exit 4"}'))),
        toolsets=[editor_tools()],
    )
    async with MockClient(ACPAgent(agent), cwd=tmp_path, policy=PermissionPolicy.allow()) as c:
        session = await c.new_session()
        result = await session.prompt("run it")
        assert result.stop_reason == "end_turn"
        (call,) = session.view.tool_calls.values()
        assert call.kind == "execute" and call.status == "failed"
        (terminal_id,) = call.terminal_ids
        terminal = session.view.terminals[terminal_id]
        assert terminal.output == b"from-shell\n"
        replies = [acpio.text_of(m.content) for m in session.view.messages if m.role == "agent"]
        assert "finished with exit code 4" in replies[-1]
        assert "from-shell" in replies[-1]


async def test_rejected_command_does_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    agent = Agent(
        _model(_calls_then_answer(("run_command", f'{{"command": "touch {marker}"}}'))),
        toolsets=[editor_tools()],
    )
    async with MockClient(ACPAgent(agent), cwd=tmp_path, policy=PermissionPolicy.reject()) as c:
        session = await c.new_session()
        await session.prompt("run it")
        replies = [acpio.text_of(m.content) for m in session.view.messages if m.role == "agent"]
        assert "rejected" in replies[-1]
    assert not marker.exists()


async def test_write_outside_the_project_is_refused_and_told_to_the_model(tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    agent = Agent(
        _model(_calls_then_answer(("write_file", f'{{"path": "{outside}", "content": "x"}}'))),
        toolsets=[editor_tools()],
    )
    async with MockClient(ACPAgent(agent), cwd=tmp_path, policy=PermissionPolicy.allow()) as c:
        session = await c.new_session()
        await session.prompt("write outside")
        (call,) = session.view.tool_calls.values()
        assert call.status == "failed"
        assert not c.permission_requests
        replies = [acpio.text_of(m.content) for m in session.view.messages if m.role == "agent"]
        assert "refused" in replies[-1]
    assert not outside.exists()


# --------------------------------------------------------------------------- v1


async def test_the_same_adapter_serves_a_v1_client(tmp_path: Path) -> None:
    calls: list[str] = []
    agent = ACPAgent(_approval_agent(calls))
    async with MockClient(agent, protocol_version=1, policy=PermissionPolicy.allow()) as client:
        session = await client.new_session(cwd=tmp_path)
        result = await session.prompt("clean up")
        assert result.stop_reason == "end_turn"
        (call,) = session.view.tool_calls.values()
        assert call.status == "completed" and call.kind == "delete"
        replies = [acpio.text_of(m.content) for m in session.view.messages if m.role == "agent"]
        assert replies[-1] == "result: deleted old"
        assert len(client.permission_requests) == 1
    assert calls == ["old"]


# ------------------------------------------------------- tool progress and content


async def test_an_approved_tool_is_in_progress_only_after_the_approval() -> None:
    calls: list[str] = []
    asked_while: list[str] = []

    async def decide(request: object) -> dict[str, object]:
        (call,) = session.view.tool_calls.values()
        asked_while.append(call.status)
        options = request.params["options"]  # type: ignore[attr-defined]
        return {"outcome": "selected", "optionId": options[0]["optionId"]}

    adapter = ACPAgent(_approval_agent(calls))
    async with MockClient(adapter, policy=PermissionPolicy.call(decide)) as client:
        session = await client.new_session()
        await session.prompt("clean up")
        (call,) = session.view.tool_calls.values()
        assert _statuses(session.updates, call.id) == ["pending", "in_progress", "completed"]
        assert acpio.text_of([c.content for c in call.content]) == "deleted old"
    assert asked_while == ["pending"]
    assert calls == ["old"]


async def test_a_structured_result_is_shown_as_json_text_and_raw_output() -> None:
    agent = Agent(_model(_call_then_answer("get_stats", "{}")))

    @agent.tool_plain
    def get_stats() -> dict[str, int]:
        """Project statistics."""
        return {"files": 3, "lines": 120}

    async with MockClient(ACPAgent(agent)) as client:
        session = await client.new_session()
        await session.prompt("stats?")
        (call,) = session.view.tool_calls.values()
        assert call.raw_output == {"files": 3, "lines": 120}
        shown = acpio.text_of([c.content for c in call.content])
        assert json.loads(shown) == {"files": 3, "lines": 120}


async def test_auto_approve_mode_runs_approval_tools_without_asking() -> None:
    calls: list[str] = []
    modes = [ModeChoice("ask", "Ask"), ModeChoice("code", "Code", auto_approve=True)]
    adapter = ACPAgent(_approval_agent(calls), modes=modes)
    async with MockClient(adapter, policy=PermissionPolicy.reject()) as client:
        session = await client.new_session()
        await session.prompt("clean up")  # asks, and the user rejects
        await session.set_config_option("mode", "code")
        await session.prompt("clean up again")
        assert len(client.permission_requests) == 1
        statuses = [c.status for c in session.view.tool_calls.values()]
        assert statuses == ["failed", "completed"]
    assert calls == ["old"]


async def test_auto_approve_mode_writes_with_editor_tools_without_asking(tmp_path: Path) -> None:
    agent = Agent(
        _model(_calls_then_answer(("write_file", '{"path": "d.txt", "content": "new\\n"}'))),
        toolsets=[editor_tools()],
    )
    adapter = ACPAgent(agent, modes=[ModeChoice("code", "Code", auto_approve=True)])
    async with MockClient(adapter, cwd=tmp_path, policy=PermissionPolicy.reject()) as client:
        session = await client.new_session()
        await session.prompt("write d")
        assert not client.permission_requests
        (call,) = session.view.tool_calls.values()
        assert call.status == "completed" and call.diffs
    assert (tmp_path / "d.txt").read_text() == "new\n"


# -------------------------------------------------------------------------- deps


@dataclass
class Project:
    name: str


def _deps_agent() -> Agent[Project, str]:
    agent = Agent(_model(_call_then_answer("project_name", "{}")), deps_type=Project)

    @agent.tool
    def project_name(ctx: RunContext[Project]) -> str:
        """The project's name."""
        return ctx.deps.name

    return agent


async def test_deps_value_reaches_the_tools() -> None:
    async with MockClient(ACPAgent(_deps_agent(), deps=Project("acpio"))) as client:
        session = await client.new_session()
        await session.prompt("name?")
        replies = [acpio.text_of(m.content) for m in session.view.messages if m.role == "agent"]
    assert replies == ["tool said: acpio"]


async def test_deps_factory_makes_one_value_per_session(tmp_path: Path) -> None:
    made: list[str] = []

    async def per_session(session: acpio.Session) -> Project:
        made.append(session.id)
        return Project(Path(session.cwd).name)

    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    adapter = ACPAgent(_deps_agent(), deps_factory=per_session)
    async with MockClient(adapter) as client:
        first = await client.new_session(cwd=tmp_path / "one")
        second = await client.new_session(cwd=tmp_path / "two")
        await first.prompt("name?")
        await first.prompt("again?")
        await second.prompt("name?")
        said = [
            acpio.text_of(m.content)
            for s in (first, second)
            for m in s.view.messages
            if m.role == "agent"
        ]
    assert said == ["tool said: one", "tool said: one", "tool said: two"]
    assert made == [first.id, second.id]


def test_an_agent_with_deps_type_needs_deps() -> None:
    with pytest.raises(ValueError, match="deps_type=Project"):
        ACPAgent(_deps_agent())
    with pytest.raises(ValueError, match="not both"):
        ACPAgent(_deps_agent(), deps=Project("a"), deps_factory=lambda s: Project("b"))


# ---------------------------------------------------------- built off the start


async def test_an_agent_factory_is_built_once_and_serves_every_session() -> None:
    built: list[int] = []

    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[object]:
        yield "built"

    def build() -> Agent[None, str]:
        built.append(1)
        return Agent(_model(script))

    async with MockClient(ACPAgent(build)) as client:
        for _ in range(2):
            session = await client.new_session()
            result = await session.prompt("hi")
            assert result.stop_reason == "end_turn"
    assert built == [1]


async def test_initialize_and_session_new_do_not_wait_for_the_agent_factory() -> None:
    release = threading.Event()
    started = threading.Event()

    async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[object]:
        yield "ready"

    def build() -> Agent[None, str]:
        started.set()
        release.wait(30)  # a slow pydantic-ai import, held until the test lets it go
        return Agent(_model(script))

    models = [ModelChoice("scripted", "Scripted", lambda: _model(script))]
    async with MockClient(ACPAgent(build, models=models)) as client:
        # initialize was answered and the build started in its thread, still held.
        assert started.wait(30) and not release.is_set()
        session = await client.new_session()
        assert session.view.config_values == {"model": "scripted"}
        turn = await session.start_prompt("hi")  # this turn waits for the build
        release.set()
        result = await turn.wait()
        assert result.stop_reason == "end_turn"
        assert acpio.text_of(session.view.agent_messages[-1].content) == "ready"


async def test_a_failing_agent_factory_ends_the_turn_with_its_error() -> None:
    def build() -> Agent[None, str]:
        raise ImportError("no module named 'pydantic_ai_extra'")

    async with MockClient(ACPAgent(build)) as client:
        session = await client.new_session()
        result = await session.prompt("hi")
        assert result.stop_reason == "error"
        assert session.view.last_error is not None
        assert "pydantic_ai_extra" in session.view.last_error.message


IMPORTS_PROBE = textwrap.dedent(
    """
    import sys, anyio
    import acpio.adapters.pydantic_ai as adapter
    print(sorted(m for m in ("pydantic_ai", "mcp", "fastmcp") if m in sys.modules))

    from pydantic_ai import Agent
    from pydantic_ai.models.test import TestModel
    from acpio.testing import MockClient

    async def main():
        if sys.argv[1] == "adapter":
            async with MockClient(adapter.ACPAgent(Agent(TestModel()))) as client:
                session = await client.new_session()
                await session.prompt("hi")
        else:  # what pydantic-ai imports by itself for a run
            await Agent(TestModel()).run("hi")
        print(sorted(m for m in ("mcp", "fastmcp") if m in sys.modules))

    anyio.run(main)
    """
)


def _probe(mode: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", IMPORTS_PROBE, mode], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_pydantic_ai_and_mcp_are_imported_only_when_used() -> None:
    after_import, after_turn = _probe("adapter")
    assert after_import == "[]"
    # No MCP beyond what pydantic-ai imports for any run: nothing in recent versions
    # (pydantic-ai-slim 2.26 imports the MCP client for every run by itself).
    assert after_turn == _probe("plain")[1]
