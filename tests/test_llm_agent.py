"""``examples/llm_agent.py`` over the testing kit: tools in, their output back to the model.

The agent's scripted model answers with what each tool returned, so what a test
reads in the answer is what reached the model. Every test runs on asyncio and
trio, the client checks every message (schema and protocol rules).
"""

from __future__ import annotations

import io
import json
import sys
import urllib.request
from collections.abc import AsyncGenerator, Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
from support import gone, load_example

import acpio
from acpio import schema
from acpio.testing import MockClient, PermissionPolicy, PermissionRequest, SessionView

pytestmark = pytest.mark.anyio

example = load_example("llm_agent")
LlmAgent = example.LlmAgent
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "llm_agent.py"
MCP_SERVERS = Path(__file__).with_name("mcp") / "mcp_servers.py"


def update_types(updates: list[schema.SessionUpdate]) -> set[str]:
    return {type(update).__name__ for update in updates}


async def test_a_turn_with_every_builtin_tool_feeds_the_results_back(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    (tmp_path / "old.txt").write_text("one\n")
    views: list[SessionView] = []
    seen_at_permission: dict[str, list[schema.Diff]] = {}

    def decide(request: PermissionRequest) -> PermissionPolicy:
        # What the editor shows while the user decides (the diff, if any).
        call = views[0].tool_calls[str(request.tool_call_id)]
        seen_at_permission[call.kind] = list(call.diffs)
        return PermissionPolicy.allow()

    async with MockClient(LlmAgent(), policy=PermissionPolicy.call(decide)) as client:
        session = await client.new_session(cwd=tmp_path)
        views.append(session.view)
        result = await session.prompt(
            "read notes.txt\nrun echo out; echo err >&2; exit 3\nwrite old.txt two"
        )

    assert result.stop_reason == "end_turn"
    # The answer is the model's own, made from the tool results it was given.
    assert result.text == (
        f"[scripted] - read_file: alpha\nbeta\n"
        f"- run_command: exit code 3\nout\nerr\n"
        f"- write_file: Edit {tmp_path}/old.txt: done."
    )
    read, run, write = session.view.tool_calls.values()
    assert (read.kind, read.status, read.text) == ("read", "completed", "alpha\nbeta\n")
    assert [location.path for location in read.locations] == [f"{tmp_path}/notes.txt"]
    assert (run.kind, run.status) == ("execute", "failed")  # exit code 3
    assert session.view.terminals[run.terminal_ids[0]].output == b"out\nerr\n"
    assert (write.kind, write.status) == ("edit", "completed")
    assert (tmp_path / "old.txt").read_text() == "two\n"
    # The diff was on screen before the permission request; the command asked with itself.
    (diff,) = seen_at_permission["edit"]
    (change,) = diff.changes
    assert isinstance(change, schema.ModifyChange) and change.path == f"{tmp_path}/old.txt"
    assert isinstance(diff.patch, schema.DiffPatch)
    assert "-one\n+two\n" in diff.patch.text
    assert [r.command for r in client.permission_requests] == [
        "echo out; echo err >&2; exit 3",
        None,
    ]
    # The reply and the reasoning were streamed; the plan ends with every step done.
    assert {"AgentMessageChunk", "AgentThoughtChunk"} <= update_types(result.updates)
    assert [m.text for m in session.view.thoughts] == ["The user wants 3 step(s). "]
    plan = session.view.plans["plan"].entries
    assert [(e.content, e.status) for e in plan] == [
        ("Read notes.txt", "completed"),
        ("Run echo out; echo err >&2; exit 3", "completed"),
        ("Write old.txt", "completed"),
    ]
    assert session.view.usage is not None and session.view.usage.used > 0


async def test_rejections_run_nothing_and_the_model_is_told(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("original\n")
    async with MockClient(LlmAgent(), policy=PermissionPolicy.reject()) as client:
        session = await client.new_session(cwd=tmp_path)
        result = await session.prompt("run touch marker\nwrite keep.txt changed")
        # The next turn goes on from there.
        again = await session.prompt("read keep.txt")
    assert result.stop_reason == "end_turn"
    assert "run_command: The user did not allow this command" in result.text
    assert "write_file: The user rejected this edit" in result.text
    assert [c.status for c in result.view.tool_calls.values()] == ["failed", "failed"]
    assert not (tmp_path / "marker").exists()
    assert (tmp_path / "keep.txt").read_text() == "original\n"
    assert again.text == "[scripted] - read_file: original"


async def test_a_tool_that_fails_is_a_failed_call_and_an_error_for_the_model(
    tmp_path: Path,
) -> None:
    (tmp_path / "proj").mkdir()
    (tmp_path / "secret.txt").write_text("no\n")
    async with MockClient(LlmAgent()) as client:
        session = await client.new_session(cwd=tmp_path / "proj")
        result = await session.prompt("read ../secret.txt\nread missing.txt\nuse nothing {}")
    assert result.stop_reason == "end_turn"
    lines = result.text.splitlines()
    # session.read_file's refusals: sentences naming the path and why (issue 31).
    assert lines[0].startswith(
        f"[scripted] - read_file: Error: Refused: {tmp_path}/proj/../secret.txt (really "
        f"{tmp_path}/secret.txt) is outside the session's directories"
    ), lines[0]
    assert lines[1] == (
        f"- read_file: Error: Cannot read {tmp_path}/proj/missing.txt: there is no such file."
    )
    assert lines[2] == "- nothing: Error: there is no tool named 'nothing'."
    assert [c.status for c in result.view.tool_calls.values()] == ["failed", "failed"]


async def test_cancel_during_a_command_ends_the_turn_cancelled(tmp_path: Path) -> None:
    async with MockClient(LlmAgent(), policy=PermissionPolicy.allow()) as client:
        session = await client.new_session(cwd=tmp_path)
        turn = await session.start_prompt("run echo started; sleep 60\nread never.txt")
        await session.wait_for_terminal_output(contains=b"started")
        await session.cancel()
        result = await turn.wait()
        assert result.stop_reason == "cancelled"
        (call,) = result.view.tool_calls.values()
        assert call.status == "cancelled"
        terminal = session.view.terminals[call.terminal_ids[0]]
        assert terminal.exited and terminal.exit_code is None  # killed by a signal
        # The history got an answer for the cancelled tool use: the next turn runs.
        (tmp_path / "after.txt").write_text("fine\n")
        after = await session.prompt("read after.txt")
    assert after.text == "[scripted] - read_file: fine"


async def test_cancel_while_asking_ends_the_call_cancelled(tmp_path: Path) -> None:
    async with MockClient(LlmAgent(), policy=PermissionPolicy.never()) as client:
        session = await client.new_session(cwd=tmp_path)
        turn = await session.start_prompt("run touch marker")
        await session.wait_for_permission_request()
        await session.cancel()
        result = await turn.wait()
    assert result.stop_reason == "cancelled"
    assert [c.status for c in result.view.tool_calls.values()] == ["cancelled"]
    assert not (tmp_path / "marker").exists()


async def test_the_model_picker_switches_the_model_of_the_next_turn(tmp_path: Path) -> None:
    async with MockClient(LlmAgent()) as client:
        session = await client.new_session(cwd=tmp_path)
        assert session.view.config_options is not None
        picker, mode = session.view.config_options
        assert isinstance(picker, schema.SessionConfigSelect)
        assert picker.category == "model"
        assert isinstance(mode, schema.SessionConfigSelect) and mode.category == "mode"
        assert session.view.config_values == {"model": "scripted", "mode": "code"}
        first = await session.prompt("hello")
        await session.set_config_option("model", "scripted-terse")
        second = await session.prompt("hello")
    assert first.text.startswith("[scripted] You said: hello")
    assert second.text.startswith("[scripted-terse] You said: hello")
    assert first.view.thoughts and not second.view.thoughts  # terse does not think aloud


@pytest.mark.parametrize("version", [2, 1])
async def test_ask_mode_offers_the_model_no_tool_that_changes_anything(
    tmp_path: Path, version: int
) -> None:
    marker = tmp_path / "marker"
    async with MockClient(LlmAgent(), protocol_version=version) as client:
        session = await client.new_session(cwd=tmp_path)
        if version == 1:  # a v1 editor's mode selector
            assert session.available_modes == {"code": "Code", "ask": "Ask"}
            assert session.current_mode_id == "code"
            await session.set_mode("ask")
        else:
            await session.set_config_option("mode", "ask")
        result = await session.prompt(f"run touch {marker}")
        # (On v1 the options follow set_mode's answer in a config_option_update.)
        assert session.view.config_values == {"model": "scripted", "mode": "ask"}
    assert "no tool named 'run_command'" in result.text
    assert not marker.exists()


async def test_compact_replaces_the_history_with_the_models_summary(tmp_path: Path) -> None:
    async with MockClient(LlmAgent()) as client:
        session = await client.new_session(cwd=tmp_path)
        assert session.view.command_names == ["compact"]
        await session.prompt("first")
        before = await session.prompt("second")
        compacted = await session.prompt("/compact the names")
        after = await session.prompt("third")
    assert before.text == "[scripted] You said: second (4 messages in context)"
    assert compacted.text == "Compacted 4 messages into a summary."
    (compaction,) = session.view.compactions.values()
    assert compaction.status == "completed"
    summary = "".join(b.text for b in compaction.summary if isinstance(b, schema.TextContent))
    assert summary == "4 messages; the user asked: first; second."
    # System prompt, the summary, and the new prompt: the model sees 3 messages.
    assert after.text == "[scripted] You said: third (3 messages in context)"


async def test_the_example_runs_as_a_subprocess(
    tmp_path: Path, acp_client_factory: Callable[..., MockClient]
) -> None:
    (tmp_path / "notes.txt").write_text("over stdio\n")
    command = [sys.executable, str(EXAMPLE)]
    async with acp_client_factory(command, policy=PermissionPolicy.allow()) as client:
        session = await client.new_session(cwd=tmp_path)
        result = await session.prompt("read notes.txt\nrun printf done")
        assert client.violations == []
    assert result.text == "[scripted] - read_file: over stdio\n- run_command: exit code 0\ndone"
    assert client.returncode == 0  # it exits once stdin closes


class ModelOfOurOwn:
    """A model as a user plugs one in: any object with a name and a stream()."""

    name = "ours"

    async def stream(
        self, messages: Sequence[Any], tools: Sequence[Any]
    ) -> AsyncGenerator[object, None]:
        if messages[-1].role == "user":
            assert [t.name for t in tools] == [
                "update_plan",
                "read_file",
                "run_command",
                "write_file",
            ]
            # What a real model may send: a status outside ACP's, a missing argument.
            yield example.ToolUse("t1", "update_plan", {"steps": [{"step": "a", "status": "done"}]})
            yield example.ToolUse("t2", "run_command", {})
        else:
            yield example.TextDelta(" | ".join(m.content for m in messages if m.role == "tool"))


async def test_a_model_of_our_own_and_its_mistakes_do_not_end_the_turn(tmp_path: Path) -> None:
    class OurAgent(LlmAgent):  # type: ignore[misc,valid-type]
        models: ClassVar[dict[str, Any]] = {"ours": ModelOfOurOwn()}
        config_options = (acpio.select_option("model", "Model", ["ours"], category="model"),)

    async with MockClient(OurAgent()) as client:
        session = await client.new_session(cwd=tmp_path)
        result = await session.prompt("go")
    assert result.stop_reason == "end_turn"
    assert result.text == "The plan is shown to the user. | Error: 'command'"
    assert [(e.content, e.status) for e in session.view.plans["plan"].entries] == [("a", "pending")]


# ------------------------------------------------- the real provider, without a network


def test_a_streamed_chat_completion_becomes_model_events() -> None:
    parser = example.ChatStreamParser()
    lines = [
        {"choices": [{"delta": {"role": "assistant", "reasoning_content": "Think"}}]},
        {"choices": [{"delta": {"content": "Let me "}}]},
        {"choices": [{"delta": {"content": "look."}}]},
        {"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "call_a", "function": {
            "name": "read_file", "arguments": '{"pa'}}]}}]},
        {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {
            "arguments": 'th": "a.txt"}'}}]}}]},
        {"choices": [{"delta": {"tool_calls": [{"index": 1, "id": "call_b", "function": {
            "name": "run_command", "arguments": "not json"}}]}}]},
    ]  # fmt: skip
    events = []
    for line in [b": keep-alive\n", *(b"data: " + json.dumps(x).encode() for x in lines)]:
        events.extend(parser.feed(line))
    assert not parser.done
    assert parser.feed(b"data: [DONE]\n") == []
    assert parser.done
    assert events == [
        example.ThoughtDelta("Think"),
        example.TextDelta("Let me "),
        example.TextDelta("look."),
    ]
    assert parser.finish() == [
        example.ToolUse("call_a", "read_file", {"path": "a.txt"}),
        example.ToolUse("call_b", "run_command", {"_unparsed": "not json"}),
    ]


def test_the_conversation_in_the_chat_completions_shape() -> None:
    use = example.ToolUse("call_a", "read_file", {"path": "a.txt"})
    messages = [
        example.Message("user", "read a.txt"),
        example.Message("assistant", "", tool_uses=[use]),
        example.Message("tool", "alpha", tool_use_id="call_a", name="read_file"),
    ]
    assert [example.chat_message(m) for m in messages] == [
        {"role": "user", "content": "read a.txt"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "call_a", "type": "function",
            "function": {"name": "read_file", "arguments": '{"path": "a.txt"}'}}]},
        {"role": "tool", "tool_call_id": "call_a", "content": "alpha"},
    ]  # fmt: skip


async def test_a_chat_completions_model_through_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The HTTP exchange is canned (no network); the model class, the loop and the agent are real.
    (tmp_path / "a.txt").write_text("alpha\n")
    sent: list[dict[str, Any]] = []

    def urlopen(request: urllib.request.Request, timeout: float) -> io.BytesIO:
        assert isinstance(request.data, bytes)
        sent.append({"url": request.full_url, "auth": request.get_header("Authorization")})
        body = json.loads(request.data)
        sent[-1]["body"] = body
        if len(sent) == 1:
            delta: dict[str, Any] = {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_1",
                        "function": {
                            "name": "read_file",
                            "arguments": json.dumps({"path": "a.txt"}),
                        },
                    }
                ]
            }
        else:
            delta = {"content": f"It says {body['messages'][-1]['content']!r}."}
        chunks = [{"choices": [{"delta": {"reasoning_content": "Hmm."}}]},
                  {"choices": [{"delta": delta}]}]  # fmt: skip
        return io.BytesIO(b"".join(b"data: %s\n\n" % json.dumps(c).encode() for c in chunks))

    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    real = example.default_models({"ACPIO_LLM_API_KEY": "sk-test", "ACPIO_LLM_MODELS": "m1"})

    class RealAgent(LlmAgent):  # type: ignore[misc,valid-type]
        models: ClassVar[dict[str, Any]] = real
        config_options = (acpio.select_option("model", "Model", list(real), category="model"),)

    async with MockClient(RealAgent()) as client:
        session = await client.new_session(cwd=tmp_path)
        result = await session.prompt("what is in a.txt?")
    assert result.text == "It says 'alpha\\n'."
    assert [m.text for m in result.view.thoughts] == ["Hmm.", "Hmm."]
    (call,) = result.view.tool_calls.values()
    assert (call.kind, call.status) == ("read", "completed")
    assert [(s["url"], s["auth"]) for s in sent] == [
        ("https://api.openai.com/v1/chat/completions", "Bearer sk-test")
    ] * 2
    first, second = (s["body"] for s in sent)
    assert (first["model"], first["stream"]) == ("m1", True)
    assert [t["function"]["name"] for t in first["tools"]] == [
        "update_plan", "read_file", "run_command", "write_file"
    ]  # fmt: skip
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "tool"]
    assert second["messages"][3] == {"role": "tool", "tool_call_id": "call_1", "content": "alpha\n"}


def test_real_models_join_the_picker_first_when_configured() -> None:
    environ = {
        "ACPIO_LLM_API_KEY": "k",
        "ACPIO_LLM_BASE_URL": "http://localhost:11434/v1/",
        "ACPIO_LLM_MODELS": "llama3, qwen",
    }
    models = example.default_models(environ)
    assert list(models) == ["llama3", "qwen", "scripted", "scripted-terse"]
    assert models["qwen"].url == "http://localhost:11434/v1/chat/completions"
    assert list(example.default_models({})) == ["scripted", "scripted-terse"]


# ------------------------------------------------------------------ MCP


async def test_mcp_tools_of_a_real_stdio_server_are_tools_of_the_model(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    server = schema.McpServerStdio(
        name="calc",
        command=sys.executable,
        args=[str(MCP_SERVERS), "stdio"],
        env=[schema.EnvVariable(name="ACPIO_TEST_PIDFILE", value=str(pidfile))],
    )
    async with MockClient(LlmAgent()) as client:
        session = await client.new_session(cwd=tmp_path, mcp_servers=[server])
        result = await session.prompt('use add {"a": 2, "b": 3}\nuse broken {"message": "nope"}')
        # The connection stays for the session: a second turn uses the same server.
        again = await session.prompt('use add {"a": 40, "b": 2}')
        (pid,) = [int(line) for line in pidfile.read_text().split()]
        await session.close()
        assert await gone(pid, 10.0)  # closed with its session
    assert result.stop_reason == "end_turn"
    lines = result.text.splitlines()
    assert lines[0] == "[scripted] - calc__add: 5"
    assert lines[1].startswith("- calc__broken: ") and "nope" in lines[1]
    add, broken = result.view.tool_calls.values()
    assert (add.title, add.status, add.text, add.raw_input) == (
        "add (calc)",
        "completed",
        "5",
        {"a": 2, "b": 3},
    )
    assert broken.status == "failed"  # the tool's own error, for the model to read
    assert again.text == "[scripted] - calc__add: 42"


async def test_cancel_during_an_mcp_call_keeps_the_server(tmp_path: Path) -> None:
    server = schema.McpServerStdio(
        name="calc", command=sys.executable, args=[str(MCP_SERVERS), "stdio"]
    )
    async with MockClient(LlmAgent()) as client:
        session = await client.new_session(cwd=tmp_path, mcp_servers=[server])
        turn = await session.start_prompt("use hang {}")
        await session.wait_for_tool_call(status="in_progress")
        await session.cancel()
        result = await turn.wait()
        after = await session.prompt('use add {"a": 1, "b": 1}')
    assert result.stop_reason == "cancelled"
    assert [c.status for c in result.view.tool_calls.values()] == ["cancelled"]
    assert after.text == "[scripted] - calc__add: 2"


async def test_an_mcp_server_that_fails_to_start_is_a_warning_and_the_agent_goes_on(
    tmp_path: Path,
) -> None:
    dead = schema.McpServerStdio(
        name="dead", command=sys.executable, args=[str(MCP_SERVERS), "crash-at-start"]
    )
    (tmp_path / "a.txt").write_text("still here\n")
    async with MockClient(LlmAgent()) as client:
        session = await client.new_session(cwd=tmp_path, mcp_servers=[dead])
        result = await session.prompt("read a.txt")
        again = await session.prompt("read a.txt")
    assert result.text == again.text == "[scripted] - read_file: still here"
    (notice,) = session.view.notices  # once, not every turn
    assert (notice.severity, notice.title) == ("warning", "MCP server dead is unavailable")


# ------------------------------------------------------------------ ACP v1


@pytest.mark.parametrize("client_terminal", [True, False], ids=["client-terminal", "no-terminal"])
async def test_the_same_agent_over_acp_v1(client_terminal: bool, tmp_path: Path) -> None:
    # Agent code never sees the version: on v1 the command runs in the editor's terminal
    # when the client offers one, else here with its output in the call.
    (tmp_path / "notes.txt").write_text("alpha\n")
    (tmp_path / "old.txt").write_text("one\n")
    policy = PermissionPolicy.allow()
    options: dict[str, Any] = {"client_terminal": client_terminal, "policy": policy}
    async with MockClient(LlmAgent(), protocol_version=1, **options) as client:
        session = await client.new_session(cwd=tmp_path)
        result = await session.prompt("read notes.txt\nrun echo hi\nwrite old.txt two")
        assert client.violations == []
    assert result.text == (
        f"[scripted] - read_file: alpha\n- run_command: exit code 0\nhi\n"
        f"- write_file: Edit {tmp_path}/old.txt: done."
    )
    calls = result.view.tool_calls.values()
    assert [(c.kind, c.status) for c in calls] == [
        ("read", "completed"),
        ("execute", "completed"),
        ("edit", "completed"),
    ]
    assert (tmp_path / "old.txt").read_text() == "two\n"
