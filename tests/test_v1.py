"""One agent, unchanged, serves ACP v1 clients: the example agents and the v1 projection.

Every message the agent sends here is validated against the vendored official v1
schema by the test client (tests/v1_client.py); both anyio backends.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, ClassVar

import anyio
import anyio.lowlevel
import pytest
from docs_pages import blocks
from hypothesis import given
from hypothesis import strategies as st
from support import load_example
from v1_client import V1Client, View, allow, reject, v1_client

import acpio
from acpio import schema
from acpio._agent import agent_server as _agent_server
from acpio._protocol.peer import Peer
from acpio._session.turn import UNFINISHED_NOTE
from acpio._wire.v1.lenient import definition, matches
from acpio._wire.v1.methods import v1_peer
from acpio._wire.v1.projection import (
    TERMINAL_REFRESH_INTERVAL,
    TERMINAL_TEXT_BYTES,
    V1Projection,
)
from acpio.testing import MockClient

pytestmark = pytest.mark.anyio

echo_agent = load_example("echo_agent")
shell_agent = load_example("shell_agent")
edit_agent = load_example("edit_agent")

V2_ONLY_UPDATES = {
    "user_message",
    "agent_message",
    "agent_thought",
    "state_update",
    "tool_call_content_chunk",
    "terminal_update",
    "terminal_output_chunk",
    "plan_update",
}


def updates_of(client: V1Client) -> list[dict[str, Any]]:
    return [m["params"]["update"] for m in client.messages if m.get("method") == "session/update"]


def no_v2_forms(client: V1Client) -> None:
    kinds = {u["sessionUpdate"] for u in updates_of(client)}
    assert not kinds & V2_ONLY_UPDATES, kinds & V2_ONLY_UPDATES
    for message in client.messages:
        result = message.get("result")
        if isinstance(result, dict):
            assert "messageId" not in result


def answer_index(client: V1Client, result_key: str = "stopReason") -> list[int]:
    return [
        i
        for i, m in enumerate(client.messages)
        if isinstance(m.get("result"), dict) and result_key in m["result"]
    ]


# ------------------------------------------------------------------ negotiation


async def test_initialize_v1_answers_in_v1_shapes_derived_from_the_agent() -> None:
    agent = echo_agent.EchoAgent()
    async with v1_client(agent, initialize=False) as client:
        result = await client.initialize({"fs": {"readTextFile": True}, "terminal": True})
        assert result["protocolVersion"] == 1
        capabilities = result["agentCapabilities"]
        assert capabilities["loadSession"] is True
        assert capabilities["promptCapabilities"] == {
            "image": False,
            "audio": False,
            "embeddedContext": False,
        }
        assert capabilities["mcpCapabilities"] == {"http": False, "sse": False}
        assert {"list", "resume", "close", "delete"} <= set(capabilities["sessionCapabilities"])
        assert result["agentInfo"] == {
            "name": "echo-agent",
            "version": "1.0.0",
            "title": "Echo agent",
        }
        assert result["authMethods"] == []
        assert agent.client_info == acpio.Implementation(name="v1-test-client", version="1.0")


@pytest.mark.parametrize(
    "transports", [(), ("stdio",), ("http",), ("sse",), ("stdio", "http"), ("stdio", "http", "sse")]
)
async def test_v1_advertises_exactly_the_mcp_transports_it_accepts(
    transports: tuple[str, ...], tmp_path: Path
) -> None:
    class Agent(echo_agent.EchoAgent):
        mcp_transports: ClassVar[tuple[str, ...]] = transports

    async with v1_client(Agent(), initialize=False) as client:
        result = await client.initialize()
        advertised = result["agentCapabilities"]["mcpCapabilities"]
        # v1 has flags for http and sse only (stdio is every v1 agent's baseline).
        assert advertised == {"http": "http" in transports, "sse": "sse" in transports}
        assert matches(definition("McpCapabilities"), advertised)
        for transport in ("http", "sse"):
            url = "https://example.com/mcp"
            server = {"type": transport, "name": "s", "url": url, "headers": []}
            params = {"cwd": os.fspath(tmp_path), "mcpServers": [server]}
            try:
                await client.request("session/new", params)
                accepted = True
            except acpio.RequestError:
                accepted = False
            assert accepted is advertised[transport], transport


def test_the_v1_peer_comes_from_client_capabilities() -> None:
    assert v1_peer(None) == Peer(protocol_version=1)
    assert v1_peer({"terminal": "yes", "fs": []}) == Peer(protocol_version=1)
    peer = v1_peer(
        {
            "fs": {"readTextFile": True, "writeTextFile": True},
            "terminal": True,
            "elicitation": {"form": {}},
            "session": {"notices": {}},
            "_meta": {"terminal_output": True},
        }
    )
    assert peer == Peer(
        protocol_version=1,
        terminal=True,
        read_text_file=True,
        write_text_file=True,
        elicitation_form=True,
        notices=True,
        terminal_output=True,
    )


class AuthAgent(acpio.Agent):
    info = acpio.Implementation(name="auth-agent", version="1")
    auth_methods = (schema.AuthMethodAgent(method_id="key", name="API key", description="Paste"),)

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def login(self, method_id: str) -> None:
        self.calls.append(f"login {method_id}")

    async def logout(self) -> None:
        self.calls.append("logout")


async def test_authenticate_and_logout_map_onto_login_and_logout() -> None:
    agent = AuthAgent()
    async with v1_client(agent, initialize=False) as client:
        result = await client.initialize()
        assert result["authMethods"] == [{"id": "key", "name": "API key", "description": "Paste"}]
        assert result["agentCapabilities"]["auth"] == {"logout": {}}
        assert await client.request("authenticate", {"methodId": "key"}) == {}
        with pytest.raises(acpio.RequestError) as raised:
            await client.request("authenticate", {"methodId": "nope"})
        assert raised.value.code == -32602
        assert await client.request("logout", {}) == {}
        # The v2 names are not v1 methods.
        with pytest.raises(acpio.RequestError) as raised:
            await client.request("auth/login", {"methodId": "key"})
        assert raised.value.code == -32601
    assert agent.calls == ["login key", "logout"]


@pytest.mark.parametrize("version", [1, 2])
async def test_requests_before_a_successful_initialize_are_invalid_requests(
    version: int, tmp_path: Path
) -> None:
    async with v1_client(echo_agent.EchoAgent(), initialize=False) as client:
        for method, params in (
            ("session/new", {"cwd": os.fspath(tmp_path), "mcpServers": []}),
            ("session/list", {}),
            ("_vendor/thing", {}),
        ):
            with pytest.raises(acpio.RequestError) as raised:
                await client.request(method, params)
            assert raised.value.code == -32600
        # A failed initialize does not count.
        with pytest.raises(acpio.RequestError):
            await client.request("initialize", {"protocolVersion": 0})
        with pytest.raises(acpio.RequestError) as raised:
            await client.request("session/new", {"cwd": os.fspath(tmp_path), "mcpServers": []})
        assert raised.value.code == -32600
    async with MockClient(echo_agent.EchoAgent(), initialize=False) as v2:
        with pytest.raises(acpio.RequestError) as raised:
            await v2.request("session/new", {"cwd": os.fspath(tmp_path)})
        assert raised.value.code == -32600


async def test_v2_only_methods_are_not_v1_methods(tmp_path: Path) -> None:
    async with v1_client(echo_agent.EchoAgent()) as client:
        session_id = await client.new_session(os.fspath(tmp_path))
        for method in ("tool_call/cancel", "terminal/cancel"):
            with pytest.raises(acpio.RequestError) as raised:
                await client.request(method, {"sessionId": session_id, "toolCallId": "x"})
            assert raised.value.code == -32601
        # session/set_mode is v1's; a session without a mode option has no modes.
        with pytest.raises(acpio.RequestError) as raised:
            await client.request("session/set_mode", {"sessionId": session_id, "modeId": "x"})
        assert raised.value.code == -32602
        assert "no modes" in raised.value.message


# ------------------------------------------------------------------------ turns


async def test_echo_over_v1_answers_at_the_end_of_the_turn(tmp_path: Path) -> None:
    async with v1_client(echo_agent.EchoAgent()) as client:
        session_id = await client.new_session(os.fspath(tmp_path))
        assert await client.prompt(session_id, "hello v1 world") == {"stopReason": "end_turn"}
        assert client.view(session_id).agent_text == "hello v1 world"
        (answer,) = answer_index(client)
        last_update = max(i for i, m in enumerate(client.messages) if m.get("method"))
        assert answer > last_update  # every update of the turn came before its answer
        no_v2_forms(client)


class GateAgent(acpio.Agent):
    """Echoes the prompt; the first turn waits for ``gate`` before it ends."""

    info = acpio.Implementation(name="gate", version="1")

    def __init__(self) -> None:
        self.gate = anyio.Event()

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        await session.message(acpio.text_of(prompt))
        await self.gate.wait()
        return "end_turn"


async def test_queued_prompts_are_answered_each_at_its_own_turn_end(tmp_path: Path) -> None:
    agent = GateAgent()
    async with v1_client(agent) as client:
        session_id = await client.new_session(os.fspath(tmp_path))
        results: list[object] = []

        async def send(text: str) -> None:
            results.append(await client.prompt(session_id, text))

        async with anyio.create_task_group() as group:
            group.start_soon(send, "first turn")
            await client.until(lambda: client.view(session_id).agent_text == "first turn")
            group.start_soon(send, "second turn")
            await client.sent("session/prompt", 2)
            agent.gate.set()
        assert results == [{"stopReason": "end_turn"}] * 2
        assert client.view(session_id).agent_text == "first turnsecond turn"
        # The first answer precedes every update of the second turn.
        first_answer = answer_index(client)[0]
        text_before = "".join(
            m["params"]["update"]["content"]["text"]
            for m in client.messages[:first_answer]
            if m.get("method") == "session/update"
        )
        assert text_before == "first turn"


class SlowAgent(acpio.Agent):
    """Says one thing, then waits to be cancelled."""

    info = acpio.Implementation(name="slow", version="1")

    def __init__(self) -> None:
        self.started = anyio.Event()

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        await session.message("working")
        self.started.set()
        await anyio.sleep_forever()
        return "end_turn"


async def test_cancel_ends_the_turn_cancelled_and_nothing_follows(tmp_path: Path) -> None:
    agent = SlowAgent()
    async with v1_client(agent) as client:
        session_id = await client.new_session(os.fspath(tmp_path))
        results: list[object] = []

        async def send(text: str) -> None:
            results.append(await client.prompt(session_id, text))

        async with anyio.create_task_group() as group:
            group.start_soon(send, "one")
            await agent.started.wait()
            group.start_soon(send, "queued")
            await client.sent("session/prompt", 2)
            await client.connection.notify("session/cancel", {"sessionId": session_id})
        assert results == [{"stopReason": "cancelled"}] * 2
        assert client.view(session_id).agent_text == "working"
        assert max(answer_index(client)) == len(client.messages) - 1
        no_v2_forms(client)


class FailingAgent(acpio.Agent):
    info = acpio.Implementation(name="failing", version="1")

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        await session.message("about to fail")
        raise ValueError("the model is unreachable")


async def test_an_exception_in_prompt_is_an_error_answer_a_person_can_act_on(
    tmp_path: Path,
) -> None:
    async with v1_client(FailingAgent()) as client:
        session_id = await client.new_session(os.fspath(tmp_path))
        with pytest.raises(acpio.RequestError) as raised:
            await client.prompt(session_id, "go")
        assert raised.value.code == -32603
        assert "ValueError: the model is unreachable" in raised.value.message
        assert "send the prompt again" in raised.value.message
        # The session goes on.
        with pytest.raises(acpio.RequestError):
            await client.prompt(session_id, "again")
        assert client.view(session_id).agent_text == "about to failabout to fail"


# ------------------------------------------------------------------- examples


async def test_shell_agent_allowed_command_shows_output_and_exit_code(tmp_path: Path) -> None:
    async with v1_client(shell_agent.ShellAgent(), policy=allow) as client:
        session_id = await client.new_session(os.fspath(tmp_path))
        result = await client.prompt(session_id, "run printf 'one\\ntwo\\n'; exit 3")
        assert result == {"stopReason": "end_turn"}
        (call,) = client.view(session_id).tool_calls.values()
        assert call.status == "failed"
        assert call.fields["kind"] == "execute"
        text = "\n".join(call.texts)
        assert "one\ntwo\n" in text and "exit code 3" in text
        assert "The command failed (exit code 3)." in text
        assert call.fields["rawOutput"] == {"exitCode": 3, "signal": None}
        (request,) = client.permission_requests
        assert request["sessionId"] == session_id
        assert request["toolCall"]["toolCallId"] == call.fields["toolCallId"]
        assert request["toolCall"]["_meta"]["acpio"]["command"] == "printf 'one\\ntwo\\n'; exit 3"
        # What a v1 client shows: the call's title, kind and raw input (issue 31).
        assert request["toolCall"]["title"] == "Run `printf 'one\\ntwo\\n'; exit 3`"
        assert request["toolCall"]["kind"] == "execute"
        assert request["toolCall"]["rawInput"] == {"command": "printf 'one\\ntwo\\n'; exit 3"}
        assert [o["kind"] for o in request["options"]] == ["allow_once", "reject_once"]
        kinds = [u["sessionUpdate"] for u in updates_of(client)]
        assert kinds[0] == "tool_call" and kinds.count("tool_call") == 1
        no_v2_forms(client)


async def test_shell_agent_rejected_command_never_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    async with v1_client(shell_agent.ShellAgent(), policy=reject) as client:
        session_id = await client.new_session(os.fspath(tmp_path))
        result = await client.prompt(session_id, f"run touch {marker}")
        assert result == {"stopReason": "end_turn"}
        (call,) = client.view(session_id).tool_calls.values()
        assert call.status == "failed"
        assert call.texts == ["Permission denied: the command was not run."]
        # The final status and the final content in one update (issue 31): a client
        # that shows the last update of a call sees both.
        last = [u for u in updates_of(client) if u["sessionUpdate"] == "tool_call_update"][-1]
        assert last["status"] == "failed"
        assert last["content"] == [
            {
                "type": "content",
                "content": {"type": "text", "text": "Permission denied: the command was not run."},
            }
        ]
        assert [u.get("status") for u in updates_of(client)][1:] == ["failed"]
    assert not marker.exists()


async def test_shell_agent_cancel_kills_the_command_and_ends_cancelled(tmp_path: Path) -> None:
    async with v1_client(shell_agent.ShellAgent(), policy=allow) as client:
        session_id = await client.new_session(os.fspath(tmp_path))
        started = anyio.Event()
        client.on_permission = started.set
        results: list[object] = []

        async def send() -> None:
            results.append(await client.prompt(session_id, "run sleep 30"))

        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                group.start_soon(send)
                await started.wait()
                # Wait until the process runs (its tool call is in progress).
                await client.until(
                    lambda: any(
                        c.status == "in_progress"
                        for c in client.view(session_id).tool_calls.values()
                    )
                )
                await client.connection.notify("session/cancel", {"sessionId": session_id})
        assert results == [{"stopReason": "cancelled"}]
        (call,) = client.view(session_id).tool_calls.values()
        assert call.status == "failed"  # v1 has no "cancelled": the nearest value
        assert call.fields["_meta"]["acpio"]["status"] == "cancelled"


async def test_edit_agent_shows_a_v1_diff_and_writes_only_when_allowed(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("old line\n")
    async with v1_client(edit_agent.EditAgent(), policy=allow) as client:
        session_id = await client.new_session(os.fspath(tmp_path))
        await client.prompt(session_id, f"write {path}\nnew line\n")
        (call,) = client.view(session_id).tool_calls.values()
        assert call.status == "completed"
        assert call.fields["content"] == [
            {"type": "diff", "path": str(path), "oldText": "old line\n", "newText": "new line\n"}
        ]
        assert call.fields["locations"] == [{"path": str(path)}]
        (request,) = client.permission_requests
        assert request["toolCall"]["toolCallId"] == call.fields["toolCallId"]
        # The edit's title with its real path, its kind and raw input (issue 31).
        assert request["toolCall"]["title"] == f"Edit {path}"
        assert request["toolCall"]["kind"] == "edit"
        assert request["toolCall"]["rawInput"] == {"path": str(path)}
    assert path.read_text() == "new line\n"
    async with v1_client(edit_agent.EditAgent(), policy=reject) as client:
        session_id = await client.new_session(os.fspath(tmp_path))
        await client.prompt(session_id, f"delete {path}")
        (call,) = client.view(session_id).tool_calls.values()
        assert call.status == "failed"
        assert call.fields["content"][0] == {
            "type": "diff",
            "path": str(path),
            "oldText": "new line\n",
            "newText": "",
        }
    assert path.exists()


async def test_binary_edits_show_a_clear_text_item(tmp_path: Path) -> None:
    path = tmp_path / "blob.bin"
    path.write_bytes(b"\x00\x01")
    async with v1_client(edit_agent.EditAgent(), policy=reject) as client:
        session_id = await client.new_session(os.fspath(tmp_path))
        await client.prompt(session_id, f"delete {path}")
        (call,) = client.view(session_id).tool_calls.values()
        assert call.texts[0] == f"Binary file, delete {path}: there is no text diff to show."


# ------------------------------------------------------------------ sessions


async def test_session_load_replays_the_history_in_v1_form_before_its_answer(
    tmp_path: Path,
) -> None:
    async with v1_client(shell_agent.ShellAgent(), policy=allow) as client:
        session_id = await client.new_session(os.fspath(tmp_path))
        await client.prompt(session_id, "run echo replayed")
        live = client.view(session_id)
        before = len(client.messages)
        assert await client.load_session(session_id, os.fspath(tmp_path)) == {}
        loaded = client.view(session_id)
        replay = client.messages[before:]
        assert "result" in replay[-1] and all("method" in m for m in replay[:-1])
        assert loaded.user_text == "run echo replayed"
        assert loaded.tool_calls.keys() == live.tool_calls.keys()
        for call_id, call in loaded.tool_calls.items():
            assert call.fields == live.tool_calls[call_id].fields
        no_v2_forms(client)


async def test_list_resume_close_delete_in_v1_shapes(tmp_path: Path) -> None:
    async with v1_client(echo_agent.EchoAgent()) as client:
        cwd = os.fspath(tmp_path)
        session_id = await client.new_session(cwd)
        listed = await client.request("session/list", {})
        assert [s["sessionId"] for s in listed["sessions"]] == [session_id]
        assert listed["sessions"][0]["cwd"] == cwd
        assert await client.request("session/close", {"sessionId": session_id}) == {}
        assert (
            await client.request(
                "session/resume", {"sessionId": session_id, "cwd": cwd, "mcpServers": []}
            )
            == {}
        )
        assert await client.prompt(session_id, "back") == {"stopReason": "end_turn"}
        assert await client.request("session/delete", {"sessionId": session_id}) == {}
        assert (await client.request("session/list", {}))["sessions"] == []


async def test_v1_stdio_mcp_servers_are_accepted(tmp_path: Path) -> None:
    class Recorder(acpio.Agent):
        servers: ClassVar[list[schema.McpServer]] = []

        async def on_new_session(self, session: acpio.Session) -> None:
            Recorder.servers = session.mcp_servers

    server = {"name": "files", "command": "/usr/bin/env", "args": ["true"], "env": []}
    async with v1_client(Recorder()) as client:
        await client.request("session/new", {"cwd": os.fspath(tmp_path), "mcpServers": [server]})
    (recorded,) = Recorder.servers
    assert isinstance(recorded, schema.McpServerStdio)
    assert recorded.command == "/usr/bin/env"


# ---------------------------------------------------------------- projection


class ReportingAgent(acpio.Agent):
    """Exercises the projection: chunks, custom values, plans, usage, notices, thoughts."""

    info = acpio.Implementation(name="reporting", version="1")
    chunks: ClassVar[list[str]] = [f"chunk {i} " + "x" * (i % 7) for i in range(200)]

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        await session.thought("thinking")
        await session.plan(
            [
                schema.PlanEntry(content="a", priority="high", status="in_progress"),
                schema.PlanEntry(content="b", priority="low", status="cancelled"),
            ]
        )
        await session.usage(10, 100)
        await session.notice("heads up")
        async with session.tool_call("Stream", kind="_vendor_kind") as call:
            for chunk in self.chunks:
                await call.append_text(chunk)
            await call.update(status="_paused_by_vendor")
        return "_vendor_stop"


async def test_streamed_content_is_coalesced_and_ends_equal_to_the_v2_view(
    tmp_path: Path,
) -> None:
    async with v1_client(ReportingAgent()) as client:
        session_id = await client.new_session(os.fspath(tmp_path))
        result = await client.prompt(session_id, "go")
        assert result == {
            "stopReason": "end_turn",
            "_meta": {"acpio": {"stopReason": "_vendor_stop"}},
        }
        view = client.view(session_id)
    async with MockClient(ReportingAgent()) as v2:
        v2_session = await v2.new_session(os.fspath(tmp_path))
        await v2_session.prompt("go")
        (v2_call,) = v2_session.view.tool_calls.values()
    (call,) = view.tool_calls.values()
    assert call.texts == ReportingAgent.chunks
    assert "".join(call.texts) == v2_call.text
    assert call.status == "completed"
    assert call.fields["kind"] == "other"
    assert view.thought_text == "thinking"
    assert view.plan == [
        {"content": "a", "priority": "high", "status": "in_progress"},
        {
            # v1 has no `cancelled`: not done, so `pending`, and the text says why.
            "content": "b (cancelled)",
            "priority": "low",
            "status": "pending",
            "_meta": {"acpio": {"status": "cancelled"}},
        },
    ]
    kinds = [u["sessionUpdate"] for u in view.updates]
    assert "usage_update" in kinds
    assert "notice" not in kinds  # not advertised by this client
    # Coalescing: the content of N chunks costs O(total bytes), in O(log N) sends.
    content_sends = [u for u in view.updates if "content" in u]
    final_size = len(schema.encode(call.fields["content"]))
    sent = sum(len(schema.encode(u["content"])) for u in content_sends)
    assert sent <= 3 * final_size
    assert len(content_sends) <= 12
    metas = [u.get("_meta", {}).get("acpio", {}) for u in view.updates]
    assert {"kind": "_vendor_kind"} in metas
    assert any(m.get("status") == "_paused_by_vendor" for m in metas)


async def test_notices_reach_clients_that_advertise_them(tmp_path: Path) -> None:
    capabilities = {"session": {"notices": {}}}
    async with v1_client(ReportingAgent(), capabilities=capabilities) as client:
        session_id = await client.new_session(os.fspath(tmp_path))
        await client.prompt(session_id, "go")
        notices = [u for u in client.view(session_id).updates if u["sessionUpdate"] == "notice"]
        assert notices == [{"sessionUpdate": "notice", "severity": "info", "title": "heads up"}]


class TerminalAgent(acpio.Agent):
    """Feeds an agent-side terminal by hand."""

    info = acpio.Implementation(name="terminal", version="1")

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        async with session.tool_call("Build", kind="execute") as call:
            terminal = await call.terminal(command="make")
            await terminal.write(b"compiling \xe2\x9c\x93\n")
            await terminal.write(b"bad byte \xff\n")
            await terminal.exit(2)
            await call.complete()
        return "end_turn"


async def test_agent_side_terminal_output_is_tool_call_text(tmp_path: Path) -> None:
    async with v1_client(TerminalAgent()) as client:
        session_id = await client.new_session(os.fspath(tmp_path))
        await client.prompt(session_id, "go")
        (call,) = client.view(session_id).tool_calls.values()
        assert call.texts == ["$ make\n```\ncompiling \u2713\nbad byte \ufffd\n```\nexit code 2"]


async def test_a_replay_shows_agent_side_terminals_as_the_live_turn_did(tmp_path: Path) -> None:
    # Issue 24: the session/load replay sent {"type": "terminal"} items of an agent-side
    # terminal to a client without the terminal capability, which cannot show them.
    async with v1_client(TerminalAgent(), capabilities={"terminal": False}) as client:
        session_id = await client.new_session(os.fspath(tmp_path))
        await client.prompt(session_id, "go")
        (live,) = client.view(session_id).tool_calls.values()
        before = len(client.messages)
        await client.load_session(session_id, os.fspath(tmp_path))
        items = [
            item
            for message in client.messages
            if message.get("method") == "session/update"
            for item in message["params"]["update"].get("content") or []
            if isinstance(item, dict)
        ]
        assert items and not [item for item in items if item.get("type") == "terminal"]
        (loaded,) = client.view(session_id).tool_calls.values()
        assert loaded.texts == live.texts
        assert len(client.messages) > before


async def test_zed_terminal_meta_convention_when_advertised(tmp_path: Path) -> None:
    capabilities = {"terminal": False, "_meta": {"terminal_output": True}}
    async with v1_client(TerminalAgent(), capabilities=capabilities) as client:
        session_id = await client.new_session(os.fspath(tmp_path))
        await client.prompt(session_id, "go")
        view = client.view(session_id)
        (call,) = view.tool_calls.values()
        terminal_id = call.fields["content"][0]["terminalId"]
        metas = [u["_meta"] for u in view.updates if "_meta" in u]
        assert metas[0]["terminal_info"]["terminal_id"] == terminal_id
        outputs = "".join(m["terminal_output"]["data"] for m in metas if "terminal_output" in m)
        assert outputs == "compiling \u2713\nbad byte \ufffd\n"
        exits = [m["terminal_exit"] for m in metas if "terminal_exit" in m]
        assert exits == [{"terminal_id": terminal_id, "exit_code": 2, "signal": None}]


def test_terminal_refreshes_are_rate_limited_and_bounded() -> None:
    projection = V1Projection("s", Peer(protocol_version=1))
    call = schema.ToolCallUpdate(tool_call_id="c", title="t")
    projection.project(call, now=0.0)
    projection.project(schema.TerminalUpdate(terminal_id="t", command="yes"), now=0.0)
    chunk = schema.ToolCallContentChunk(tool_call_id="c", content=schema.Terminal(terminal_id="t"))
    assert len(projection.project(chunk, now=0.0)) == 1
    sends = 0
    step = TERMINAL_REFRESH_INTERVAL / 10
    for i in range(1000):  # 1000 writes over 100 refresh intervals: at most one refresh each
        sends += len(projection.terminal_output("t", b"y\n" * 100, now=1.0 + i * step))
    assert sends <= 101
    due = projection.due()
    assert due is not None
    (update,) = projection.flush_due(due)
    (item,) = _json(update)["content"]
    text = item["content"]["text"]
    assert f"[{1000 * 200 - TERMINAL_TEXT_BYTES} earlier bytes of output not shown]" in text
    assert len(text.encode()) < TERMINAL_TEXT_BYTES + 200
    assert projection.due() is None


def test_permission_options_v1_lacks_are_never_shown_as_approval() -> None:
    projection = V1Projection("s", Peer(protocol_version=1))
    request = schema.RequestPermissionRequest(
        session_id="s",
        title="Run it?",
        subject=schema.CommandPermissionSubject(command="ls", cwd="/tmp"),
        options=[
            schema.PermissionOption(option_id="yes", name="Yes", kind="allow_once"),
            schema.PermissionOption(option_id="vendor", name="Sandbox", kind="_sandbox"),
        ],
    )
    params = projection.permission_request(request)
    assert params["options"] == [
        {"optionId": "yes", "name": "Yes", "kind": "allow_once"},
        {
            "optionId": "vendor",
            "name": "Sandbox",
            "kind": "reject_once",
            "_meta": {"acpio": {"kind": "_sandbox"}},
        },
    ]
    tool_call = params["toolCall"]
    assert isinstance(tool_call, dict)
    assert tool_call["kind"] == "execute" and tool_call["rawInput"] == {
        "command": "ls",
        "cwd": "/tmp",
    }


def _json(update: object) -> Any:
    """A projection's update as the client receives it (content arrays are pre-encoded)."""
    return json.loads(schema.encode(update))


def test_view_helper_rejects_a_second_tool_call_report() -> None:
    view = View()
    view.apply({"sessionUpdate": "tool_call", "toolCallId": "a", "title": "x"})
    with pytest.raises(AssertionError):
        view.apply({"sessionUpdate": "tool_call", "toolCallId": "a", "title": "x"})


def test_interleaved_patches_and_chunks_stay_linear() -> None:
    projection = V1Projection("s", Peer(protocol_version=1))
    projection.project(schema.ToolCallUpdate(tool_call_id="c", title="t"), now=0.0)
    sent = 0
    for i in range(500):
        chunk = schema.ToolCallContentChunk(
            tool_call_id="c",
            content=schema.Content(content=schema.TextContent(text=f"line {i}\n")),
        )
        patch = schema.ToolCallUpdate(tool_call_id="c", title=f"step {i}", status="in_progress")
        for update in (*projection.project(chunk, now=0.0), *projection.project(patch, now=0.0)):
            if "content" in update:
                sent += len(schema.encode(update["content"]))
    (final,) = projection.project(
        schema.ToolCallUpdate(tool_call_id="c", status="completed"), now=0.0
    )
    content = _json(final)["content"]
    assert isinstance(content, list) and len(content) == 500
    final_size = len(schema.encode(content))
    assert sent + final_size <= 3 * final_size


def test_readme_editor_snippets_are_json_that_launch_an_example() -> None:
    found = [block.code for block in blocks("docs/editors.md", "json")]
    assert len(found) == 2
    for block in found:
        (server,) = json.loads(block)["agent_servers"].values()
        assert server["args"][0].endswith("examples/shell_agent.py")
        assert (Path(__file__).resolve().parents[1] / "examples/shell_agent.py").exists()


def test_ended_calls_release_their_content() -> None:
    projection = V1Projection("s", Peer(protocol_version=1))
    projection.project(schema.ToolCallUpdate(tool_call_id="c", title="t"), now=0.0)
    projection.project(schema.TerminalUpdate(terminal_id="t", command="x"), now=0.0)
    item = schema.Content(content=schema.TextContent(text="kept by the client"))
    terminal = schema.Terminal(terminal_id="t")
    for content in (item, terminal):
        chunk = schema.ToolCallContentChunk(tool_call_id="c", content=content)
        projection.project(chunk, now=0.0)
    exit_status = schema.TerminalExitStatus(exit_code=0)
    projection.project(schema.TerminalUpdate(terminal_id="t", exit_status=exit_status), now=1.0)
    (final,) = projection.project(
        schema.ToolCallUpdate(tool_call_id="c", status="completed"), now=1.0
    )
    assert final == {"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "completed"}
    late = schema.ToolCallContentChunk(tool_call_id="c", content=item)
    assert projection.project(late, now=2.0) == []
    assert projection._calls["c"].content == [] and "t" not in projection._terminals


async def test_commands_of_a_new_session_follow_its_v1_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = _agent_server.AgentServer.new_session
    command = schema.Command(name="plan", description="Make a plan")

    async def with_commands(self: Any, request: Any, context: Any) -> object:
        response = await original(self, request, context)
        assert isinstance(response, schema.NewSessionResponse)
        response.available_commands = [command]
        return response

    monkeypatch.setattr(_agent_server.AgentServer, "new_session", with_commands)
    # The v2 answer carries commands once an agent declares some; stand in for that here.
    async with v1_client(echo_agent.EchoAgent()) as client:
        session_id = await client.new_session(os.fspath(tmp_path))
        await client.until(lambda: bool(client.view(session_id).updates))
        assert client.view(session_id).updates == [
            {
                "sessionUpdate": "available_commands_update",
                "availableCommands": [{"name": "plan", "description": "Make a plan"}],
            }
        ]
        answer = next(i for i, m in enumerate(client.messages) if "result" in m and m["id"] == 2)
        update = next(i for i, m in enumerate(client.messages) if m.get("method"))
        assert answer < update


async def test_cancelling_the_prompt_request_cancels_its_turn(tmp_path: Path) -> None:
    agent = SlowAgent()
    async with v1_client(agent) as client:
        session_id = await client.new_session(os.fspath(tmp_path))
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as group:
                group.start_soon(client.prompt, session_id, "one")
                await agent.started.wait()
                scope.cancel()  # the client's connection sends $/cancel_request
        # The turn ended: the session takes the next prompt, whose work starts afresh.
        agent.started = anyio.Event()
        async with anyio.create_task_group() as group:
            group.start_soon(client.prompt, session_id, "two")
            await agent.started.wait()
            await client.connection.notify("session/cancel", {"sessionId": session_id})
        cancel_answers = [m for m in client.messages if m.get("error", {}).get("code") == -32800]
        assert len(cancel_answers) == 1
        answer = client.messages.index(cancel_answers[0])

        def chunks(messages: list[dict[str, Any]]) -> int:
            return sum(m.get("method") == "session/update" for m in messages)

        # Turn one said its one thing before its answer; only turn two speaks after it.
        assert chunks(client.messages[:answer]) == 1
        assert chunks(client.messages[answer:]) == 1
        assert client.messages[-1]["result"] == {"stopReason": "cancelled"}


@given(texts=st.lists(st.text(), min_size=1, max_size=40))
def test_the_text_chunk_path_projects_what_the_general_path_does(texts: list[str]) -> None:
    fast = V1Projection("s", Peer(protocol_version=1))
    general = V1Projection("s", Peer(protocol_version=1))
    for projection in (fast, general):
        projection.project(schema.ToolCallUpdate(tool_call_id="c", title="t"), now=0.0)
    for text in texts:
        chunk = schema.ToolCallContentChunk(
            tool_call_id="c", content=schema.Content(content=schema.TextContent(text=text))
        )
        assert _json(fast.text_chunk("c", text)) == _json(general.project(chunk, now=0.0))
    end = schema.ToolCallUpdate(tool_call_id="c", status="completed")
    assert _json(fast.project(end, now=0.0)) == _json(general.project(end, now=0.0))


class ForgetfulAgent(acpio.Agent):
    """Opens a tool call without ``async with`` and never finishes it."""

    info = acpio.Implementation(name="forgetful", version="1")

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        await session.tool_call("Look around", kind="read")
        return "end_turn"


async def test_a_tool_call_left_open_ends_failed_with_a_note_on_both_versions(
    tmp_path: Path,
) -> None:
    # Issue 31: it would stay pending in the editor forever.
    async with v1_client(ForgetfulAgent()) as client:
        session_id = await client.new_session(os.fspath(tmp_path))
        assert await client.prompt(session_id, "go") == {"stopReason": "end_turn"}
        (call,) = client.view(session_id).tool_calls.values()
        updates = [u for u in updates_of(client) if u["sessionUpdate"] == "tool_call_update"]
    assert call.status == "failed"
    assert call.texts == [UNFINISHED_NOTE]
    assert len(updates) == 1  # the note and the status in one update
    async with MockClient(ForgetfulAgent()) as v2:
        session = await v2.new_session(os.fspath(tmp_path))
        await session.prompt("go")
        (v2_call,) = session.view.tool_calls.values()
        report = v2.conformance_report()
    assert v2_call.status == "failed" and v2_call.text == UNFINISHED_NOTE
    assert report.ok, report.summary()


class CommandsAgent(echo_agent.EchoAgent):
    """The echo agent with a slash command, which says hello when a session is reopened."""

    commands = (acpio.command("plan", "Make a plan"),)

    async def on_resume_session(self, session: acpio.Session) -> None:
        await session.message("welcome back")


async def test_a_v1_load_sends_everything_before_its_answer(tmp_path: Path) -> None:
    # ACP-LOAD-002 (issue 31): the replay, what the agent says while reopening and the
    # commands all come before the session/load answer.
    async with v1_client(CommandsAgent()) as client:
        session_id = await client.new_session(os.fspath(tmp_path))
        await client.prompt(session_id, "hello")
        start = len(client.messages)
        answer = await client.load_session(session_id, os.fspath(tmp_path))
        assert "sessionId" not in answer or answer["sessionId"] == session_id
        loaded = client.messages[start:]
        (answer_at,) = [i for i, m in enumerate(loaded) if "result" in m]
        before = [m["params"]["update"] for m in loaded[:answer_at] if m.get("method")]
        after = [m for m in loaded[answer_at + 1 :] if m.get("method") == "session/update"]
    kinds = [u["sessionUpdate"] for u in before]
    assert "user_message_chunk" in kinds and "agent_message_chunk" in kinds  # the replay
    assert kinds[-1] == "available_commands_update"
    assert before[-1]["availableCommands"] == [{"name": "plan", "description": "Make a plan"}]
    assert any(u.get("content", {}).get("text") == "welcome back" for u in before)
    assert after == []
