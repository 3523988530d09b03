"""MockClient over ACP v1: a raw v1 agent (no acpio) driven, its view rebuilt as over v2."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from acpio import RequestError, schema
from acpio.testing import MockClient, PermissionPolicy, PermissionRequest
from acpio.testing._v1_client import V1_META_KEY
from acpio.testing._v1_terminals import trim_output

pytestmark = pytest.mark.anyio

AGENT = Path(__file__).with_name("raw_v1_agent.py")


def v1_agent(mode: str = "good") -> list[str]:
    return [sys.executable, str(AGENT), mode]


def v1_client(mode: str = "good", **kwargs: object) -> MockClient:
    return MockClient(v1_agent(mode), protocol_version=1, **kwargs)  # type: ignore[arg-type]


async def test_initialize_sends_the_v1_shape() -> None:
    async with v1_client(client_terminal=True, client_fs=True) as client:
        sent = client.transcript[0].message
        assert isinstance(sent, dict)
        params = sent["params"]
        assert params["protocolVersion"] == 1
        assert params["clientCapabilities"] == {
            "fs": {"readTextFile": True, "writeTextFile": True},
            "terminal": True,
        }
        assert params["clientInfo"]["name"] == "acpio-mock-client"
        assert "info" not in params and "capabilities" not in params
        assert client.agent_info.name == "raw-v1-agent-good"
        assert client.initialize_response is not None
        assert client.initialize_response.protocol_version == 1
        assert client.v1 is not None
        assert isinstance(client.v1.initialize_result, dict)
        assert client.violations == []


async def test_a_turn_ends_with_the_prompt_answer() -> None:
    async with v1_client() as client:
        session = await client.new_session()
        assert session.current_mode_id == "ask"
        result = await session.prompt("hello")
        assert result.stop_reason == "end_turn"
        assert result.text == "Hello world"
        view = session.view
        assert view.state == "idle"
        assert view.stop_reasons == ["end_turn"]
        assert [m.role for m in view.messages] == ["user", "thought", "agent"]
        assert view.user_messages[0].text == "hello"
        assert view.thoughts[0].text == "greeting"
        assert result.message_id == view.user_messages[0].message_id
        again = await session.prompt("again")
        assert again.text == "you said: again"
        assert view.agent_text == "Hello worldyou said: again"
        client.conformance_report()
        assert client.violations == []


async def test_tool_calls_plans_and_session_updates_fold_into_the_view(tmp_path: Path) -> None:
    async with v1_client(cwd=tmp_path) as client:
        session = await client.new_session()
        result = await session.prompt("tool")
        assert result.stop_reason == "end_turn"
        call = session.view.tool_calls["t1"]
        assert call.title == "Edit notes.txt"
        assert call.kind == "edit"
        assert call.status == "completed"
        assert call.text == "edited"  # content replaced whole, not appended
        assert call.raw_input == {"path": "notes.txt"}
        assert call.raw_output == {"ok": True}
        assert [location.path for location in call.locations] == [f"{tmp_path}/notes.txt"]
        [diff] = call.diffs
        assert isinstance(diff.changes[0], schema.ModifyChange)
        assert diff.changes[0].path == f"{tmp_path}/notes.txt"
        assert isinstance(diff.meta, dict)
        assert diff.meta[V1_META_KEY] == {
            "path": f"{tmp_path}/notes.txt",
            "oldText": "old\n",
            "newText": "new\n",
        }
        [plan] = session.view.plans.values()
        assert [entry.content for entry in plan.entries] == ["edit the notes", "review"]
        assert session.view.usage is not None and session.view.usage.used == 120
        assert session.view.available_commands is not None
        [command] = session.view.available_commands
        assert isinstance(command, schema.Command) and command.name == "web"
        assert session.view.config_options is not None
        [option] = session.view.config_options
        assert isinstance(option, schema.SessionConfigSelect) and option.config_id == "model"
        assert session.view.info.title == "Notes"
        assert session.current_mode_id == "code"
        assert result.text == "done"
        client.conformance_report()
        assert client.violations == []


@pytest.mark.parametrize(
    ("policy", "status", "text"),
    [
        (PermissionPolicy.allow(), "completed", "ran"),
        (PermissionPolicy.reject(), "failed", "denied"),
    ],
)
async def test_permission_requests_are_answered_by_the_policy(
    policy: PermissionPolicy, status: str, text: str
) -> None:
    async with v1_client(policy=policy) as client:
        session = await client.new_session()
        result = await session.prompt("ask")
        assert result.stop_reason == "end_turn"
        [request] = client.permission_requests
        assert request.tool_call_id == "run1"
        assert request.title is None and request.command is None
        assert request.option_ids == ["allow", "reject"]
        call = session.view.tool_calls["run1"]
        assert call.status == status and call.text == text
        assert call.title == "Run rm -rf build"
        client.conformance_report()


async def test_cancel_ends_the_turn_cancelled() -> None:
    async with v1_client() as client:
        session = await client.new_session()
        turn = await session.start_prompt("slow")
        await session.wait_for(lambda: "working" in session.view.agent_text)
        assert session.view.state == "running"
        await session.cancel()
        result = await turn.wait()
        assert result.stop_reason == "cancelled"
        assert session.view.state == "idle"
        client.conformance_report()
        assert client.violations == []


async def test_cancel_answers_a_pending_permission_cancelled() -> None:
    async with v1_client(policy=PermissionPolicy.never()) as client:
        session = await client.new_session()
        turn = await session.start_prompt("ask")
        request = await session.wait_for_permission_request(pending=True)
        await session.cancel()
        await request.wait_answered()
        assert request.answer == {"outcome": "cancelled"}
        assert request.cancelled_by_client
        result = await turn.wait()
        assert result.stop_reason == "cancelled"
        assert session.view.tool_calls["run1"].status == "failed"
        client.conformance_report()


async def test_queued_prompts_end_in_order() -> None:
    async with v1_client() as client:
        session = await client.new_session()
        first = await session.start_prompt("one")
        second = await session.start_prompt("two")
        one, two = await first.wait(), await second.wait()
        assert one.text == "you said: one" and two.text == "you said: two"
        assert session.view.stop_reasons == ["end_turn", "end_turn"]


async def test_load_replays_the_history_into_a_fresh_view() -> None:
    async with v1_client() as client:
        session = await client.new_session()
        await session.prompt("hello")
        await session.prompt("tool")
        before = session.view
        assert session.cwd is not None
        loaded = await client.load_session(session.id, session.cwd)
        assert loaded is session
        assert session.view is not before
        assert session.replayed and session.replayed == session.updates[-len(session.replayed) :]
        view = session.view
        assert [m.text for m in view.user_messages] == ["hello", "tool"]
        assert view.agent_text == before.agent_text
        assert view.tool_calls["t1"].status == "completed"
        assert view.tool_calls["t1"].text == "edited"
        client.conformance_report()
        assert client.violations == []


async def test_client_terminal_runs_the_command(tmp_path: Path) -> None:
    async with v1_client(client_terminal=True, cwd=tmp_path) as client:
        session = await client.new_session()
        result = await session.prompt("term")
        assert result.stop_reason == "end_turn"
        call = session.view.tool_calls["term1"]
        [terminal_id] = call.terminal_ids
        terminal = session.view.terminals[terminal_id]
        assert terminal.exited and terminal.exit_code == 0
        assert terminal.cwd == str(tmp_path)
        assert len(terminal.output) <= 40
        assert terminal.output.endswith(b"x" * 20 + b"\n")
        assert call.raw_output == {
            "exit": {"exitCode": 0, "signal": None},
            "truncated": True,
        }
        assert client.v1 is not None
        assert client.v1.terminals.terminals[terminal_id].released
        client.conformance_report()


async def test_without_the_terminal_capability_the_agent_is_told_no() -> None:
    async with v1_client() as client:
        session = await client.new_session()
        result = await session.prompt("term")
        assert result.text == "no terminal"


async def test_client_fs_reads_buffers_first_and_writes_files(tmp_path: Path) -> None:
    on_disk = tmp_path / "a.txt"
    on_disk.write_text("saved")
    unsaved = tmp_path / "b.txt"
    unsaved.write_text("old on disk")
    async with v1_client(client_fs=True, buffers={str(unsaved): "unsaved edit"}) as client:
        session = await client.new_session()
        assert (await session.prompt(f"fs {on_disk}")).text == "read: saved"
        assert (await session.prompt(f"fs {unsaved}")).text == "read: unsaved edit"
        assert (tmp_path / "a.txt.out").read_text() == "SAVED"
        assert (tmp_path / "b.txt.out").read_text() == "UNSAVED EDIT"
        assert client.v1 is not None
        assert client.v1.files_written[f"{on_disk}.out"] == "SAVED"


async def test_fs_is_refused_when_not_offered(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("x")
    async with v1_client() as client:
        session = await client.new_session()
        result = await session.prompt(f"fs {path}")
        assert result.text == "read: "  # the agent got -32601 and carried on
        assert not (tmp_path / "a.txt.out").exists()


def test_trim_output_keeps_the_newest_bytes_at_a_character_boundary() -> None:
    buffer = bytearray("aé€z".encode())  # 1 + 2 + 3 + 1 bytes
    assert not trim_output(buffer, None) and not trim_output(buffer, 7)
    assert trim_output(buffer, 4) and buffer == "€z".encode()
    assert trim_output(buffer, 3)  # the cut falls inside "€": the whole character goes
    assert buffer == b"z"
    assert trim_output(buffer, 0) and buffer == b""


async def test_client_terminals_kill_release_and_refuse_unknown_ids(tmp_path: Path) -> None:
    async with v1_client(client_terminal=True) as client:
        session = await client.new_session(tmp_path)
        assert client.v1 is not None
        terminals = client.v1.terminals
        created = await terminals.serve(
            "terminal/create",
            {
                "sessionId": session.id,
                "command": sys.executable,
                "args": [
                    "-c",
                    "import os, time; print(os.environ['GREETING'], flush=True); time.sleep(30)",
                ],
                "env": [{"name": "GREETING", "value": "hi-from-env"}],
            },
        )
        assert isinstance(created, dict)
        ids = {"sessionId": session.id, "terminalId": created["terminalId"]}
        view = await session.wait_for_terminal_output(contains="hi-from-env\n")
        assert view.cwd == str(tmp_path) and not view.exited
        output = await terminals.serve("terminal/output", ids)
        assert output == {"output": "hi-from-env\n", "truncated": False}
        assert await terminals.serve("terminal/kill", ids) == {}
        status = await terminals.serve("terminal/wait_for_exit", ids)
        assert status == {"exitCode": None, "signal": "SIGKILL"}
        assert view.exited and view.signal == "SIGKILL"
        assert await terminals.serve("terminal/release", ids) == {}
        with pytest.raises(RequestError, match="unknown terminal"):
            await terminals.serve("terminal/output", ids)
        with pytest.raises(RequestError, match="absolute"):
            await terminals.serve(
                "terminal/create", {"sessionId": session.id, "command": "true", "cwd": "rel"}
            )
        # Released while running: the command is killed.
        created = await terminals.serve(
            "terminal/create",
            {
                "sessionId": session.id,
                "command": sys.executable,
                "args": ["-c", "import time; time.sleep(30)"],
            },
        )
        assert isinstance(created, dict)
        terminal = terminals.terminals[str(created["terminalId"])]
        ids = {"sessionId": session.id, "terminalId": terminal.id}
        assert await terminals.serve("terminal/release", ids) == {}
        await terminal.exited.wait()
        assert terminal.signal == "SIGKILL"


def test_a_v1_permission_request_keeps_what_an_acpio_agent_put_in_its_meta() -> None:
    request = PermissionRequest(
        7,
        {
            "sessionId": "s",
            "toolCall": {
                "toolCallId": "c",
                "title": "Run ls",
                "_meta": {"acpio": {"title": "Run `ls`?", "command": "ls"}},
            },
            "options": [],
        },
        0.0,
    )
    assert request.tool_call_id == "c"
    assert request.title == "Run `ls`?" and request.command == "ls"
    plain = PermissionRequest(
        8, {"sessionId": "s", "toolCall": {"toolCallId": "c", "title": "Run ls"}}, 0.0
    )
    assert plain.title == "Run ls" and plain.command is None
