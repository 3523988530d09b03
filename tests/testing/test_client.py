"""MockClient against real agents: the example agents in-process, and agents as subprocesses.

Each test drives an agent the way an editor would and checks what the client
reports back (turn results, the rebuilt view, permission records, errors with
the agent's stderr), so these are also end-to-end tests of the agent framework.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import msgspec
import pytest
from support import EXAMPLES, load_example

import acpio
from acpio import schema
from acpio.testing import (
    AgentExitedError,
    AgentTimeoutError,
    ConformanceError,
    MockClient,
    PermissionPolicy,
    PermissionPolicyError,
    PermissionRequest,
    Transcript,
)

pytestmark = pytest.mark.anyio

EchoAgent = load_example("echo_agent").EchoAgent
ShellAgent = load_example("shell_agent").ShellAgent
EditAgent = load_example("edit_agent").EditAgent


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(code)]


# --------------------------------------------------------------------------- echo


async def test_echo_turn_result_and_view() -> None:
    async with MockClient(EchoAgent()) as client:
        assert client.agent_info.name == "echo-agent"
        assert client.initialize_response is not None
        assert client.initialize_response.protocol_version == 2
        session = await client.new_session()
        assert session.cwd is not None and os.path.isabs(session.cwd)
        assert os.path.isdir(session.cwd)

        result = await session.prompt("hello big world")

        assert result.stop_reason == "end_turn"
        assert result.error is None
        assert result.text == "hello big world"
        # The turn starts with the echoed prompt and ends with its idle update.
        first, last = result.updates[0], result.updates[-1]
        assert isinstance(first, schema.UserMessage)
        assert first.message_id == result.message_id
        assert isinstance(last, schema.IdleStateUpdate)
        view = session.view
        assert view.state == "idle"
        assert view.stop_reasons == ["end_turn"]
        assert [m.role for m in view.messages] == ["user", "agent"]
        assert view.message(result.message_id, "user").text == "hello big world"
        assert client.violations == []
    # The default working directory is a temporary directory, removed on exit.
    assert not os.path.exists(session.cwd)


async def test_prompt_accepts_content_blocks_and_turns_keep_their_own_updates() -> None:
    async with MockClient(EchoAgent) as client:
        session = await client.new_session()
        blocks = [schema.TextContent(text="one"), schema.TextContent(text=" two")]
        first = await session.start_prompt(blocks)
        second = await session.start_prompt(["three"])
        second_result = await second.wait()
        first_result = await first.wait()

        assert first_result.text == "one two"
        assert second_result.text == "three"
        assert first.message_id != second.message_id
        # Each result holds only its own turn: no update appears in both.
        assert not {id(u) for u in first_result.updates} & {id(u) for u in second_result.updates}
        assert session.view.stop_reasons == ["end_turn", "end_turn"]


class _GatedAgent(acpio.Agent):
    """Answers each prompt with "answer <prompt>". A prompt starting with "wait" first says
    "working" and blocks until ``release`` is set; "wait shielded" ignores cancellation
    while it blocks, then ends without answering."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.release = anyio.Event()
        self.calls: list[str] = []

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        text = acpio.text_of(prompt)
        self.calls.append(text)
        if text.startswith("wait"):
            await session.message("working")
            self.started.set()
            with anyio.CancelScope(shield=text == "wait shielded"):
                await self.release.wait()
            if text == "wait shielded":
                return "end_turn"
        await session.message(f"answer {text}")
        return "end_turn"


async def test_a_queued_prompt_gets_the_result_of_its_own_turn() -> None:
    agent = _GatedAgent()
    async with MockClient(agent) as client:
        session = await client.new_session()
        first = await session.start_prompt("wait")
        await agent.started.wait()
        second = await session.start_prompt("second")
        # Accepted and echoed at once, but its work runs only after the first turn's idle.
        await session.wait_for(lambda: len(session.view.user_messages) == 2, what="two echoes")
        assert not first.done and not second.done

        agent.release.set()
        second_result = await second.wait()
        first_result = await first.wait()

        assert [m.text for m in first_result.view.agent_messages] == ["working", "answer wait"]
        assert second_result.text == "answer second"
        assert [first_result.stop_reason, second_result.stop_reason] == ["end_turn", "end_turn"]
        # Each turn starts with its own user message, even the one echoed during the other.
        for turn, result in ((first, first_result), (second, second_result)):
            head = result.updates[0]
            assert isinstance(head, schema.UserMessage) and head.message_id == turn.message_id
            assert [m.message_id for m in result.view.user_messages] == [turn.message_id]
        assert not {id(u) for u in first_result.updates} & {id(u) for u in second_result.updates}
        assert client.violations == []


async def test_a_prompt_sent_without_the_turn_api_still_takes_its_turn() -> None:
    agent = _GatedAgent()
    async with MockClient(agent) as client:
        session = await client.new_session()
        params = {"sessionId": session.id, "prompt": [{"type": "text", "text": "wait"}]}
        await client.request("session/prompt", params)
        await agent.started.wait()
        turn = await session.start_prompt("mine")
        agent.release.set()
        result = await turn.wait()
        assert result.text == "answer mine"
        assert session.view.stop_reasons == ["end_turn", "end_turn"]


async def test_cancel_ends_the_queued_turns_and_later_prompts_get_their_own() -> None:
    agent = _GatedAgent()
    async with MockClient(agent) as client:
        session = await client.new_session()
        first = await session.start_prompt("wait shielded")
        await agent.started.wait()
        queued = [await session.start_prompt("second"), await session.start_prompt("third")]
        await session.cancel()
        # Sent after the cancel: echoed before the cancelled turn reports idle, runs after it.
        later = await session.start_prompt("later")
        await session.wait_for(lambda: len(session.view.user_messages) == 4, what="four echoes")
        agent.release.set()

        later_result = await later.wait()
        assert (later_result.stop_reason, later_result.text) == ("end_turn", "answer later")
        assert (await first.wait()).stop_reason == "cancelled"
        for turn in queued:
            result = await turn.wait()  # discarded by the cancel: ended by the cancelled idle
            assert result.stop_reason == "cancelled"
            assert result.text == ""
            assert [m.message_id for m in result.view.user_messages] == [turn.message_id]
        assert agent.calls == ["wait shielded", "later"]
        assert session.view.stop_reasons == ["cancelled", "end_turn"]
        assert client.violations == []


async def test_resume_after_a_cancel_and_after_close_passes_the_checker() -> None:
    agent = _GatedAgent()
    async with MockClient(agent) as client:  # strict: any violation fails the test
        session = await client.new_session()
        turn = await session.start_prompt("wait")
        await agent.started.wait()
        await session.cancel()
        assert (await turn.wait()).stop_reason == "cancelled"
        # The replay repeats the cancelled turn's output: history, not work after the cancel.
        replayed = await session.resume(replay=True)
        assert [m.text for m in session.view.agent_messages] == ["working"]
        assert isinstance(replayed[-1], schema.IdleStateUpdate)

        await session.close()
        await session.resume(replay=True)  # re-activates the closed session
        assert not session.closed
        result = await session.prompt("again")
        assert result.text == "answer again"
        assert client.conformance_report().ok
        assert client.violations == []


async def test_sessions_list_close_and_errors_from_the_agent(tmp_path: Path) -> None:
    async with MockClient(EchoAgent(), cwd=tmp_path) as client:
        session = await client.new_session()
        assert session.cwd == os.fspath(tmp_path)
        listed = await client.list_sessions()
        assert [(s.session_id, s.cwd) for s in listed.sessions] == [(session.id, session.cwd)]

        await session.close()
        with pytest.raises(acpio.RequestError) as raised:
            await session.prompt("after close")
        assert raised.value.code == schema.RESOURCE_NOT_FOUND

        with pytest.raises(acpio.RequestError) as raised:
            await client.new_session("relative/path")
        assert raised.value.code == schema.INVALID_PARAMS


async def test_resume_with_and_without_replay() -> None:
    store = acpio.store.InMemorySessionStore()
    async with MockClient(EchoAgent(), store=store) as client:
        session = await client.new_session()
        await session.prompt("remember me")
        replayed = await session.resume(replay=True)
        assert isinstance(replayed[0], schema.UserMessage)
        assert session.replayed == replayed
        # Every resume ends with a snapshot of the current state: idle, not a new end of work.
        snapshot = replayed[-1]
        assert isinstance(snapshot, schema.IdleStateUpdate)
        assert snapshot.stop_reason in (msgspec.UNSET, None, "end_turn")
        # The view was rebuilt from the replay alone: the conversation appears once.
        assert [m.text for m in session.view.messages] == ["remember me", "remember me"]
        assert session.view.stop_reasons == []  # a snapshot is not a completion
        # Without replay no conversation comes back, only the snapshot; the view stays.
        unreplayed = await session.resume(replay=False)
        assert [type(u) for u in unreplayed] == [schema.IdleStateUpdate]
        assert [m.text for m in session.view.messages] == ["remember me", "remember me"]

    # A new connection (same store) resumes the session by id, with its history.
    async with MockClient(EchoAgent(), store=store) as client:
        assert session.cwd is not None
        resumed = await client.resume_session(session.id, session.cwd)
        assert [m.text for m in resumed.view.messages] == ["remember me", "remember me"]
        result = await resumed.prompt("and again")
        assert result.text == "and again"


async def test_conformance_report_runs_the_end_of_stream_rules() -> None:
    async with MockClient(EchoAgent()) as client:
        session = await client.new_session()
        await session.prompt("all done")
        report = client.conformance_report()
    assert report.ok, report.summary()
    assert "jsonrpc" in report.exercised_rules


async def test_raw_requests_and_notifications() -> None:
    async with MockClient(EchoAgent()) as client:
        with pytest.raises(acpio.RequestError) as raised:
            await client.request("_acme/unknown", {"x": 1})
        assert raised.value.code == schema.METHOD_NOT_FOUND
        await client.notify("_acme/ping", {})
        session = await client.new_session()
        assert (await session.prompt("still fine")).stop_reason == "end_turn"


async def test_initialize_can_be_sent_by_the_test() -> None:
    async with MockClient(EchoAgent(), initialize=False) as client:
        assert client.initialize_response is None
        response = await client.initialize(protocol_version=65535)
        assert response.protocol_version == 2
        with pytest.raises(acpio.RequestError) as raised:
            await client.initialize(protocol_version=0)
        assert raised.value.code == schema.UNSUPPORTED_PROTOCOL_VERSION


async def test_transcript_of_a_connection_round_trips(tmp_path: Path) -> None:
    async with MockClient(EchoAgent()) as client:
        session = await client.new_session()
        await session.prompt("on the wire")
    directions = {entry.direction for entry in client.transcript}
    assert directions == {"client->agent", "agent->client"}
    methods = [entry.method for entry in client.transcript if entry.direction == "client->agent"]
    assert methods[:3] == ["initialize", "session/new", "session/prompt"]
    path = tmp_path / "transcript.jsonl"
    client.transcript.write_jsonl(path)
    assert Transcript.read_jsonl(path) == client.transcript


# --------------------------------------------------------------------------- shell


async def test_shell_allowed_runs_and_streams_output() -> None:
    async with MockClient(ShellAgent(), policy=PermissionPolicy.allow()) as client:
        session = await client.new_session()
        result = await session.prompt("run echo out; echo err >&2")

        assert result.stop_reason == "end_turn"
        (call,) = session.view.tool_calls.values()
        assert call.status == "completed"
        assert call.kind == "execute"
        (terminal_id,) = call.terminal_ids
        terminal = session.view.terminals[terminal_id]
        assert terminal.output == b"out\nerr\n"
        assert terminal.exit_code == 0
        (request,) = client.permission_requests
        assert request.command == "echo out; echo err >&2"
        assert request.tool_call_id == call.id
        assert request.answer == {"outcome": "selected", "optionId": request.option_ids[0]}
        assert request.answered_at is not None and request.answered_at >= request.received_at
        assert not request.cancelled_by_agent


async def test_shell_rejected_never_runs(tmp_path: Path) -> None:
    async with MockClient(ShellAgent(), policy=PermissionPolicy.reject(), cwd=tmp_path) as client:
        session = await client.new_session()
        result = await session.prompt("run touch marker")
        assert result.stop_reason == "end_turn"
        call = await session.wait_for_tool_call(status="failed")
        assert "Permission denied" in call.text
        assert session.view.terminals == {}
    assert not (tmp_path / "marker").exists()


async def test_shell_cancel_while_running() -> None:
    async with MockClient(ShellAgent(), policy=PermissionPolicy.allow()) as client:
        session = await client.new_session()
        turn = await session.start_prompt("run echo started; sleep 60")
        terminal = await session.wait_for_terminal_output(contains=b"started")
        await session.wait_for_state("running")
        await session.cancel()
        result = await turn.wait()

        assert result.stop_reason == "cancelled"
        assert [c.status for c in result.view.tool_calls.values()] == ["cancelled"]
        finished = await session.wait_for_terminal_output(terminal.id, exited=True)
        assert finished.signal is not None or finished.exit_code != 0


async def test_shell_never_answered_request_is_withdrawn_by_the_agent(tmp_path: Path) -> None:
    async with MockClient(ShellAgent(), policy=PermissionPolicy.never(), cwd=tmp_path) as client:
        session = await client.new_session()
        turn = await session.start_prompt("run touch marker")
        request = await session.wait_for_permission_request(pending=True)
        await session.wait_for_state("requires_action")
        assert request.pending
        await session.cancel()
        result = await turn.wait()
        await request.wait_answered()

        assert result.stop_reason == "cancelled"
        assert request.cancelled_by_agent
        assert request.answer == {"outcome": "cancelled"}
        # The client answered the withdrawn request with the cancelled outcome, not an error.
        answers = [
            entry.message
            for entry in client.transcript
            if entry.direction == "client->agent"
            and isinstance(entry.message, dict)
            and "method" not in entry.message
            and entry.message.get("id") == request.request_id
        ]
        assert answers == [
            {"jsonrpc": "2.0", "id": request.request_id, "result": {"outcome": request.answer}}
        ]
    assert not (tmp_path / "marker").exists()


@pytest.mark.parametrize(
    "policy",
    [
        PermissionPolicy.raw({"outcome": "_maybe"}),
        PermissionPolicy.select("an-option-never-offered"),
        PermissionPolicy.raw({"outcome": "selected"}),
    ],
    ids=["unknown-outcome", "unoffered-option", "malformed-selected"],
)
async def test_shell_does_not_treat_odd_answers_as_approval(
    policy: PermissionPolicy, tmp_path: Path
) -> None:
    async with MockClient(ShellAgent(), policy=policy, cwd=tmp_path) as client:
        session = await client.new_session()
        result = await session.prompt("run touch marker")
        assert result.stop_reason == "end_turn"
        assert [c.status for c in session.view.tool_calls.values()] == ["failed"]
    assert not (tmp_path / "marker").exists()


async def test_shell_cancelled_outcome_ends_the_turn_cancelled(tmp_path: Path) -> None:
    policy = PermissionPolicy.cancelled()
    async with MockClient(ShellAgent(), policy=policy, cwd=tmp_path) as client:
        session = await client.new_session()
        result = await session.prompt("run touch marker")
        assert result.stop_reason == "cancelled"
        assert client.permission_requests[0].answer == {"outcome": "cancelled"}
    assert not (tmp_path / "marker").exists()


async def test_scripted_and_callable_policies_drive_successive_requests(tmp_path: Path) -> None:
    seen: list[str | None] = []

    async def decide(request: PermissionRequest) -> PermissionPolicy:
        seen.append(request.command)
        return (
            PermissionPolicy.allow() if request.command == "touch b" else PermissionPolicy.reject()
        )

    scripted = PermissionPolicy.scripted([PermissionPolicy.allow(), PermissionPolicy.reject()])
    async with MockClient(ShellAgent(), policy=scripted, cwd=tmp_path) as client:
        session = await client.new_session()
        assert (await session.prompt("run touch a")).stop_reason == "end_turn"
        assert (await session.prompt("run touch c")).stop_reason == "end_turn"
        client.permission_policy = PermissionPolicy.call(decide)
        await session.prompt("run touch b")
        await session.prompt("run touch d")
        # A plain function works too (sync, returning the outcome object).
        client.permission_policy = PermissionPolicy.call(lambda request: {"outcome": "cancelled"})
        assert (await session.prompt("run touch e")).stop_reason == "cancelled"
    assert seen == ["touch b", "touch d"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]


async def test_scripted_policy_that_runs_out_fails_the_test(tmp_path: Path) -> None:
    client = MockClient(
        ShellAgent(), policy=PermissionPolicy.scripted([PermissionPolicy.allow()]), cwd=tmp_path
    )
    with pytest.raises(PermissionPolicyError, match="all 1 scripted answers were used"):
        async with client:
            session = await client.new_session()
            await session.prompt("run touch a")
            await session.prompt("run touch b")
    # The agent got "cancelled" (never approval) and did not run the second command.
    assert client.permission_requests[1].answer == {"outcome": "cancelled"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]


async def test_policy_error_is_raised_when_the_client_closes(tmp_path: Path) -> None:
    def broken(request: PermissionRequest) -> dict[str, object]:
        raise AssertionError("this test did not expect a permission request")

    with pytest.raises(PermissionPolicyError) as raised:
        async with MockClient(ShellAgent(), policy=broken, cwd=tmp_path) as client:
            session = await client.new_session()
            await session.start_prompt("run touch a")
            # Not awaited: the failure still surfaces when the client closes.
            await client.wait_for(lambda: client.permission_requests, what="a request")
    assert isinstance(raised.value.__cause__, AssertionError)


# --------------------------------------------------------------------------- edit


async def test_edit_write_delete_reject_and_relative_path(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    async with MockClient(EditAgent(), policy=PermissionPolicy.allow(), cwd=tmp_path) as client:
        session = await client.new_session()

        result = await session.prompt(f"write {target}\nfirst line\n")
        assert result.stop_reason == "end_turn"
        assert target.read_bytes() == b"first line\n"
        write = next(iter(result.view.tool_calls.values()))
        assert (write.kind, write.status) == ("edit", "completed")
        assert [loc.path for loc in write.locations] == [os.fspath(target)]
        (diff,) = write.diffs
        (change,) = diff.changes
        assert isinstance(change, schema.AddChange)
        assert change.path == os.fspath(target)

        client.permission_policy = PermissionPolicy.reject()
        await session.prompt(f"write {target}\nrejected\n")
        assert target.read_bytes() == b"first line\n"

        client.permission_policy = PermissionPolicy.allow()
        result = await session.prompt(f"delete {target}")
        delete = next(iter(result.view.tool_calls.values()))
        assert (delete.kind, delete.status) == ("delete", "completed")
        assert not target.exists()

        # A relative path is the session's cwd's (issue 31).
        result = await session.prompt("write notes.txt\nrelative\n")
        relative = next(iter(result.view.tool_calls.values()))
        assert relative.status == "completed"
        assert [loc.path for loc in relative.locations] == [os.fspath(target)]
        assert target.read_bytes() == b"relative\n"
        assert len(client.permission_requests) == 4


# --------------------------------------------------------------------------- small agents


class _OnlyRejectAgent(acpio.Agent):
    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        async with session.tool_call("Risky", kind="execute") as call:
            outcome = await call.request_permission([acpio.permission.REJECT_ONCE])
            await call.fail("denied" if not outcome.allowed else "allowed?!")
        return "end_turn"


async def test_allow_policy_fails_the_test_when_no_allow_option_is_offered() -> None:
    client = MockClient(_OnlyRejectAgent(), policy=PermissionPolicy.allow())
    with pytest.raises(PermissionPolicyError, match="no option of kind allow_once or allow_always"):
        async with client:
            session = await client.new_session()
            await session.prompt("go")
    assert client.permission_requests[0].answer == {"outcome": "cancelled"}


class _GreetingAgent(acpio.Agent):
    async def on_new_session(self, session: acpio.Session) -> None:
        # Sent before the session/new response: the client must not lose it.
        await session.notice("welcome")

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        return "end_turn"


async def test_updates_before_the_session_new_response_are_kept() -> None:
    async with MockClient(_GreetingAgent()) as client:
        session = await client.new_session()
        assert [n.title for n in session.view.notices] == ["welcome"]


class _FailingAgent(acpio.Agent):
    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        raise RuntimeError("model unavailable")


async def test_turn_result_carries_the_error_of_a_failed_turn() -> None:
    async with MockClient(_FailingAgent()) as client:
        session = await client.new_session()
        result = await session.prompt("go")
        assert result.stop_reason == "error"
        assert result.error is not None and "model unavailable" in result.error.message


class _IndexingAgent(acpio.Agent):
    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        async with session.tool_call("Index", kind="search", cancellable=True) as call:
            await call.start()
            await anyio.sleep_forever()
        async with session.tool_call("Summarize", kind="think"):
            pass  # leaving the block normally completes the call
        return "end_turn"


async def test_cancel_one_tool_call_and_the_turn_goes_on() -> None:
    async with MockClient(_IndexingAgent()) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        call = await session.wait_for_tool_call(title="Index", status="in_progress")
        assert call.capabilities is not None
        await session.cancel_tool_call(call.id)
        result = await turn.wait()
        assert result.stop_reason == "end_turn"
        statuses = [(c.title, c.status) for c in session.view.tool_calls.values()]
        assert statuses == [("Index", "cancelled"), ("Summarize", "completed")]
        with pytest.raises(acpio.RequestError) as raised:
            await session.cancel_tool_call(call.id)
        assert raised.value.code == schema.INVALID_PARAMS


async def test_delete_session() -> None:
    async with MockClient(EchoAgent()) as client:
        session = await client.new_session()
        await session.prompt("soon gone")
        await session.delete()
        assert session.closed
        assert (await client.list_sessions()).sessions == []


# --------------------------------------------------------------------------- subprocess


async def test_echo_agent_as_a_subprocess() -> None:
    command = [sys.executable, os.fspath(EXAMPLES / "echo_agent.py")]
    async with MockClient(command) as client:
        assert client.agent_info.name == "echo-agent"
        session = await client.new_session()
        result = await session.prompt("over real pipes")
        assert result.text == "over real pipes"
    # Closing stdin is enough: the agent exits on its own, successfully.
    assert client.returncode == 0


async def test_agent_that_exits_is_reported_with_its_stderr_and_return_code() -> None:
    command = _python("import sys; sys.stderr.write('boom: no API key\\n'); sys.exit(3)")
    with pytest.raises(AgentExitedError) as raised:
        async with MockClient(command):
            pass
    message = str(raised.value)
    assert "boom: no API key" in message
    assert "return code 3" in message


async def test_timeout_shows_stderr_and_the_silent_agent_is_terminated() -> None:
    command = _python(
        """
        import sys, time
        sys.stderr.write('loading model...\\n'); sys.stderr.flush()
        time.sleep(60)
        """
    )
    client = MockClient(command, timeout=0.5, exit_timeout=0.5)
    with pytest.raises(AgentTimeoutError) as raised:
        async with client:
            pass
    assert "waiting for the response to initialize" in str(raised.value)
    assert "loading model..." in str(raised.value)
    # It ignored the end of its input, so it was terminated.
    assert client.returncode == -signal.SIGTERM


async def test_agent_ignoring_sigterm_is_killed() -> None:
    command = _python(
        """
        import signal, sys
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        sys.stderr.write('ready\\n'); sys.stderr.flush()
        signal.pause()
        """
    )
    client = MockClient(command, initialize=False, exit_timeout=0.2)
    async with client:
        await client.wait_for(lambda: b"ready" in client.stderr, what="the agent to start")
    assert client.returncode == -signal.SIGKILL, (client.returncode, bytes(client.stderr))


async def test_stopping_an_agent_never_polls_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # Popen.send_signal (behind process.terminate()/kill()) polls the child first; when
    # that poll reaps a child that just died, asyncio's child watcher loses it and
    # reports 255 instead of the real status. Stopping must signal by pid instead.
    def no_polling_signal(self: subprocess.Popen[bytes], sig: int) -> None:
        raise AssertionError(f"Popen.send_signal({sig}) used to stop the agent")

    monkeypatch.setattr(subprocess.Popen, "send_signal", no_polling_signal)
    command = _python(
        """
        import signal, sys
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        sys.stderr.write('ready\\n'); sys.stderr.flush()
        signal.pause()
        """
    )
    client = MockClient(command, initialize=False, exit_timeout=0.2)
    async with client:
        await client.wait_for(lambda: b"ready" in client.stderr, what="the agent to start")
    assert client.returncode == -signal.SIGKILL


async def test_missing_command_is_a_clear_error() -> None:
    with pytest.raises(acpio.testing.MockClientError, match="could not start the agent"):
        async with MockClient(["/nonexistent/agent-binary"]):
            pass


# --------------------------------------------------------------------------- conformance

_BAD_INITIALIZE = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        # "info" is required in the initialize response: a protocol violation.
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": {"protocolVersion": 2}}
        sys.stdout.write(json.dumps(reply) + "\\n"); sys.stdout.flush()
"""


async def test_strict_mode_fails_on_the_first_violation() -> None:
    with pytest.raises(ConformanceError):
        async with MockClient(_python(_BAD_INITIALIZE), initialize=False) as client:
            await client.request("initialize", {"protocolVersion": 2, "info": _CLIENT_INFO})


async def test_lenient_mode_collects_violations() -> None:
    async with MockClient(_python(_BAD_INITIALIZE), initialize=False, strict=False) as client:
        await client.request("initialize", {"protocolVersion": 2, "info": _CLIENT_INFO})
    assert client.violations
    assert client.failure is None


_CLIENT_INFO = {"name": "test", "version": "1"}


def test_subprocess_command_line_is_split_like_a_shell() -> None:
    client = MockClient(f"{sys.executable} -u 'examples/echo agent.py'")
    assert client.name == f"{sys.executable} -u 'examples/echo agent.py'"
    with pytest.raises(TypeError):
        MockClient([])


def test_pytest_report_shows_transcript_and_stderr(tmp_path: Path) -> None:
    test_file = tmp_path / "test_failing_agent.py"
    test_file.write_text(
        textwrap.dedent(
            f"""
            import sys
            import pytest
            from acpio.testing import MockClient

            COMMAND = [sys.executable, {os.fspath(EXAMPLES / "echo_agent.py")!r}]

            @pytest.mark.anyio
            async def test_fails():
                async with MockClient(COMMAND) as client:
                    session = await client.new_session()
                    result = await session.prompt("visible in the report")
                    assert result.text == "something else"
            """
        )
    )
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", os.fspath(test_file)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "acp transcript (last" in completed.stdout
    assert "visible in the report" in completed.stdout
    assert "acp agent stderr (return code 0)" in completed.stdout


_ASKS_WHEN_TOLD = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        info = {"name": "asker", "version": "1"}
        result = {"protocolVersion": 2, "capabilities": {}, "info": info}
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
    elif message.get("method") == "_acme/ask":
        # A request the client does not serve: the client answers -32601 itself.
        reply = {"jsonrpc": "2.0", "id": "ask-1", "method": "_acme/question", "params": {}}
    else:
        continue
    sys.stdout.write(json.dumps(reply) + "\\n"); sys.stdout.flush()
"""


async def test_lines_the_client_writes_itself_wake_waiters() -> None:
    def answered() -> dict[str, Any] | None:
        for entry in client.transcript:
            message = entry.message
            sent = entry.direction == "client->agent"
            if sent and isinstance(message, dict) and message.get("id") == "ask-1":
                return message
        return None

    async def wait_for_the_answer(*, task_status: anyio.abc.TaskStatus[None]) -> None:
        task_status.started()
        found.append(await client.wait_for(answered, timeout=5, what="the client's answer"))

    found: list[dict[str, Any]] = []
    async with MockClient(_python(_ASKS_WHEN_TOLD)) as client, anyio.create_task_group() as group:
        await group.start(wait_for_the_answer)  # parked: nothing arrives until told
        await client.notify("_acme/ask", {})
    (answer,) = found
    assert answer["error"]["code"] == schema.METHOD_NOT_FOUND


async def test_waits_are_bounded_and_name_what_they_waited_for() -> None:
    async with MockClient(EchoAgent(), timeout=0.2) as client:
        session = await client.new_session()
        with pytest.raises(AgentTimeoutError, match="a tool call"):
            await session.wait_for_tool_call(status="completed")
        with anyio.fail_after(5):
            with pytest.raises(AgentTimeoutError, match="never"):
                await client.wait_for(lambda: False, timeout=0.05, what="never")
