"""Nothing guarded runs or writes without an allow option offered in that very request.

The example agents (``examples/shell_agent.py`` runs a command,
``examples/edit_agent.py`` writes or deletes a file) are driven with every
answer that is not approval: rejected, cancelled, an unknown or malformed
outcome, an error, an option id that was never offered or was offered by
another request, an answer to a request that was already withdrawn,
duplicate answers, and answers sent before the request existed. The proof
is on disk: the marker file, the written file, the deleted file.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from reliability_agents import ScriptAgent
from reliability_kit import EXAMPLES, WAIT, Json, WireClient, allow_answer, served

import acpio
from acpio.testing import MockClient, PermissionPolicy

sys.path.insert(0, str(EXAMPLES))
from edit_agent import EditAgent
from shell_agent import ShellAgent

pytestmark = pytest.mark.anyio

NOT_APPROVAL: dict[str, PermissionPolicy] = {
    "rejected": PermissionPolicy.reject(),
    "cancelled": PermissionPolicy.cancelled(),
    "unknown outcome": PermissionPolicy.raw({"outcome": "_maybe"}),
    "future outcome": PermissionPolicy.raw({"outcome": "approved"}),
    "selected without an option": PermissionPolicy.raw({"outcome": "selected"}),
    "option id of another type": PermissionPolicy.raw({"outcome": "selected", "optionId": 1}),
    "never offered": PermissionPolicy.select("allow_always"),
    "offered id in another case": PermissionPolicy.select("ALLOW_ONCE"),
    "offered id with a space": PermissionPolicy.select("allow_once "),
    "empty option id": PermissionPolicy.select(""),
}


def guarded_actions(tmp_path: Path) -> list[tuple[type[acpio.Agent], str, Path, bool]]:
    """(agent, prompt, path, whether the path exists afterwards when nothing ran)."""
    existing = tmp_path / "keep.txt"
    existing.write_text("original\n")
    return [
        (ShellAgent, f"run touch {tmp_path / 'marker'}", tmp_path / "marker", False),
        (EditAgent, f"write {tmp_path / 'new.txt'}\nhello\n", tmp_path / "new.txt", False),
        (EditAgent, f"write {existing}\nreplaced\n", existing, True),
        (EditAgent, f"delete {existing}", existing, True),
    ]


@pytest.mark.parametrize("answer", list(NOT_APPROVAL), ids=list(NOT_APPROVAL))
async def test_no_approval_means_nothing_runs_or_changes(answer: str, tmp_path: Path) -> None:
    for agent, prompt, path, existed in guarded_actions(tmp_path):
        async with MockClient(agent, policy=NOT_APPROVAL[answer], strict=False) as client:
            session = await client.new_session(cwd=tmp_path)
            result = await session.prompt(prompt)
            # A dismissed prompt may end the turn as cancelled; it never completes the call.
            assert result.stop_reason in ("end_turn", "cancelled")
            assert [c.status for c in session.view.tool_calls.values()][-1] in (
                "failed",
                "cancelled",
            )
            (request,) = client.permission_requests
            assert request.answer is not None
        assert path.exists() is existed, (agent.__name__, prompt)
        if existed:
            assert path.read_text() == "original\n"


async def test_allowed_runs_exactly_what_was_shown(tmp_path: Path) -> None:
    # The positive control: the subject shows the exact command and directory that run.
    async with MockClient(ShellAgent, policy=PermissionPolicy.allow()) as client:
        session = await client.new_session(cwd=tmp_path)
        await session.prompt("run echo shown >> log.txt")
        (request,) = client.permission_requests
        assert request.subject == {
            "type": "command",
            "command": "echo shown >> log.txt",
            "cwd": str(tmp_path),
            "toolCallId": next(iter(session.view.tool_calls)),
        }
    assert (tmp_path / "log.txt").read_text() == "shown\n"


async def ask(client: WireClient, session_id: str, marker: Path) -> Json:
    """Prompt ``guarded`` and return its permission request."""
    await client.prompt(session_id, f"guarded {marker}")
    return await client.wait_permission_request()


async def test_an_option_offered_by_another_request_is_not_approval(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    agent = ScriptAgent()
    async with served(agent) as state:
        client = state.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            session_id = await client.new_session(tmp_path)
            first = await ask(client, session_id, marker)
            await client.respond(first["id"], allow_answer(first))
            await client.wait_idle(session_id)
            assert marker.read_text() == "ran\n"
            second = await ask(client, session_id, marker)
            # The first request's allow option, answered to the second request.
            await client.respond(second["id"], allow_answer(first))
            await client.wait_idle(session_id)
    assert marker.read_text() == "ran\n"
    assert agent.sent[session_id].outcomes == ["allowed", "unknown"]


async def test_an_answer_after_the_request_was_withdrawn_is_ignored(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    agent = ScriptAgent()
    async with served(agent) as state:
        client = state.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            session_id = await client.new_session(tmp_path)
            request = await ask(client, session_id, marker)
            await client.notify("session/cancel", {"sessionId": session_id})
            withdrawn = await client.claim(lambda m: m.get("method") == "$/cancel_request")
            assert withdrawn["params"]["requestId"] == request["id"]
            assert (await client.wait_idle(session_id))["stopReason"] == "cancelled"
            # Too late: the allow answer arrives after the request was cancelled.
            await client.respond(request["id"], allow_answer(request))
            # The next turn asks again; the stale answer was not kept for it.
            second = await ask(client, session_id, marker)
            await client.respond(second["id"], {"outcome": {"outcome": "cancelled"}})
            await client.wait_idle(session_id)
    assert not marker.exists()
    # The cancelled turn never got an outcome (the cancellation was raised); the
    # second request was dismissed by the client.
    assert agent.sent[session_id].outcomes == ["dismissed"]


async def test_a_tool_call_cancelled_while_asking_never_runs(tmp_path: Path) -> None:
    async with MockClient(ShellAgent, policy=PermissionPolicy.never()) as client:
        session = await client.new_session(cwd=tmp_path)
        turn = await session.start_prompt(f"run touch {tmp_path / 'marker'}")
        request = await session.wait_for_permission_request(pending=True)
        assert request.tool_call_id is not None
        await session.cancel_tool_call(request.tool_call_id)
        await request.wait_answered()
        result = await turn.wait()
        assert result.stop_reason == "end_turn"
        assert [c.status for c in session.view.tool_calls.values()] == ["cancelled"]
    assert not (tmp_path / "marker").exists()


@pytest.mark.parametrize(
    ("answers", "runs"),
    [
        (["reject", "allow"], 0),
        (["cancelled", "allow"], 0),
        (["garbage", "allow"], 0),
        (["allow", "allow"], 1),
        (["allow", "reject"], 1),
    ],
)
async def test_duplicate_answers_count_once_the_first(
    answers: list[str], runs: int, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    async with served(ScriptAgent()) as state:
        client = state.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            session_id = await client.new_session(tmp_path)
            request = await ask(client, session_id, marker)
            for answer in answers:
                if answer == "allow":
                    result = allow_answer(request)
                elif answer == "reject":
                    result = allow_answer(request, "reject_once")
                elif answer == "cancelled":
                    result = {"outcome": {"outcome": "cancelled"}}
                else:
                    result = {"outcome": None}
                await client.respond(request["id"], result)
            await client.wait_idle(session_id)
            assert await client.call("_echo", ["alive"]) == ["alive"]
    assert (marker.read_text().count("ran") if marker.exists() else 0) == runs


async def test_an_answer_sent_before_the_request_existed_is_ignored(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    agent = ScriptAgent()
    async with served(agent) as state:
        client = state.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            session_id = await client.new_session(tmp_path)
            first = await ask(client, session_id, marker)
            # Guess the id and the option of the next request, and "allow" it early.
            guess = first["id"] + 1
            early = {"outcome": {"outcome": "selected", "optionId": f"allow-{agent.requests + 1}"}}
            await client.respond(guess, early)
            await client.respond(first["id"], allow_answer(first, "reject_once"))
            await client.wait_idle(session_id)
            second = await ask(client, session_id, marker)
            assert second["id"] == guess
            offered = [o["optionId"] for o in second["params"]["options"]]
            assert early["outcome"]["optionId"] in offered
            # The early answer was not taken: the agent still waits for a real one.
            assert agent.sent[session_id].outcomes == ["selected"]
            await client.respond(second["id"], allow_answer(second, "reject_once"))
            await client.wait_idle(session_id)
    assert not marker.exists()
    assert agent.sent[session_id].outcomes == ["selected", "selected"]


async def test_error_answers_and_malformed_results_are_not_approval(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    malformed: list[Json] = [
        None,
        [],
        "allow_once",
        {},
        {"outcome": "selected"},
        {"outcome": {"outcome": "selected", "optionId": None}},
        {"outcome": {"outcome": "selected", "optionId": ["allow-1"]}},
        {"outcome": {"optionId": "allow-1"}},
    ]
    agent = ScriptAgent()
    async with served(agent) as state:
        client = state.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            session_id = await client.new_session(tmp_path)
            for result in malformed:
                request = await ask(client, session_id, marker)
                await client.respond(request["id"], result)
                await client.wait_idle(session_id)
            request = await ask(client, session_id, marker)
            await client.send(
                {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32603, "message": "no"}}
            )
            await client.wait_idle(session_id)
            # Answers the decoder cannot even read still end the wait (never as approval).
            for raw in (
                b'{"jsonrpc":"2.0","id":%d,"error":{"code":1e400,"message":"x"}}',
                b'{"jsonrpc":"2.0","id":%d,"result":{"outcome":{"outcome":"selected",'
                b'"optionId":"\\ud800"}}}',
                b'{"jsonrpc":"2.0","id":%d,"result":{"outcome":' + b"[" * 300 + b"]" * 300 + b"}}",
            ):
                request = await ask(client, session_id, marker)
                await client.send(raw % request["id"] + b"\n")
                await client.wait_idle(session_id)
    assert not marker.exists()
    assert "allowed" not in agent.sent[session_id].outcomes
    assert len(agent.sent[session_id].outcomes) == len(malformed) + 4
