"""Permission requests: options, outcomes, session state, cancellation and remembering.

The rule under test everywhere: only a selected option that was offered in
that very request, of an ``allow_*`` kind, is approval. Everything else (a
rejection, a cancellation, a custom or malformed answer, an error, an option
id that was never offered) is not. Tests run a real agent through the testing
kit's MockClient with strict conformance checking.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

import anyio
import msgspec
import pytest

import acpio
from acpio import schema
from acpio.permission import (
    ALL_OPTIONS,
    ALLOW_ALWAYS,
    ALLOW_ONCE,
    ALLOW_OR_REJECT,
    REJECT_ALWAYS,
    REJECT_ONCE,
    Outcome,
    interpret_outcome,
    option,
)
from acpio.store import InMemoryHistory, InMemorySessionStore, SessionRecord
from acpio.testing import MockClient, PermissionPolicy, PermissionRequest

pytestmark = pytest.mark.anyio

Body = Callable[[acpio.Session], Awaitable[str | None]]
JsonObject = dict[str, object]


class Scripted(acpio.Agent):
    """An agent whose prompt handler is the test's coroutine."""

    def __init__(self, body: Body) -> None:
        self.body = body

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str | None:
        return await self.body(session)


def agent_messages(client: MockClient) -> list[JsonObject]:
    """Every message the agent sent, parsed, in order."""
    found: list[JsonObject] = []
    for message in client.transcript.messages("agent->client"):
        assert isinstance(message, dict)
        found.append(message)
    return found


def states(client: MockClient) -> list[object]:
    """The ``state`` of every state_update the agent sent, in order."""
    found: list[object] = []
    for message in agent_messages(client):
        params = message.get("params")
        if message.get("method") == "session/update" and isinstance(params, dict):
            update = params["update"]
            assert isinstance(update, dict)
            if update["sessionUpdate"] == "state_update":
                found.append(update["state"])
    return found


async def ask_once(
    policy: PermissionPolicy | Callable[[PermissionRequest], Mapping[str, object]],
    options: tuple[schema.PermissionOption, ...] = ALLOW_OR_REJECT,
) -> tuple[Outcome, MockClient]:
    """Run one permission request through a call; returns the outcome and the closed client."""
    outcomes: list[Outcome] = []

    async def body(session: acpio.Session) -> None:
        async with session.tool_call("Run tests", kind="execute") as call:
            outcomes.append(await call.request_permission(options))

    async with MockClient(Scripted(body), policy=policy) as client:
        session = await client.new_session()
        await session.prompt("go")
    return outcomes[0], client


# --------------------------------------------------------------------------- options


def test_presets_and_custom_options() -> None:
    assert [(o.option_id, o.kind) for o in ALL_OPTIONS] == [
        ("allow_once", "allow_once"),
        ("allow_always", "allow_always"),
        ("reject_once", "reject_once"),
        ("reject_always", "reject_always"),
    ]
    assert ALLOW_OR_REJECT == (ALLOW_ONCE, REJECT_ONCE)
    custom = option("sandbox", "Run in a sandbox", "_sandboxed")
    assert (custom.option_id, custom.name, custom.kind) == (
        "sandbox",
        "Run in a sandbox",
        "_sandboxed",
    )
    with pytest.raises(acpio.LocalProtocolError, match="'maybe'"):
        option("m", "Maybe", "maybe")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ((), "at least one option"),
        ((ALLOW_ONCE, option("allow_once", "Again", "reject_once")), "offered twice"),
        (
            (schema.PermissionOption(option_id="x", name="X", kind="allow_sometimes"),),
            "'allow_sometimes'",
        ),
    ],
)
async def test_invalid_options_are_refused_before_anything_is_sent(
    options: tuple[schema.PermissionOption, ...], message: str
) -> None:
    errors: list[str] = []

    async def body(session: acpio.Session) -> None:
        call = session.tool_call("t", tool_call_id="c")
        try:
            await call.request_permission(options)
        except acpio.LocalProtocolError as exc:
            errors.append(str(exc))

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        await session.prompt("go")

    assert len(errors) == 1 and message in errors[0]
    assert client.permission_requests == []
    # Not even the call was announced: the error came first.
    assert "c" not in session.view.tool_calls


# --------------------------------------------------------------------------- outcomes


def test_interpret_outcome_only_trusts_offered_options() -> None:
    offered = [ALLOW_ONCE, REJECT_ONCE, option("x", "Custom", "_custom")]
    selected = interpret_outcome(schema.SelectedPermissionOutcome(option_id="allow_once"), offered)
    assert (selected.kind, selected.option_id, selected.option_kind) == (
        "selected",
        "allow_once",
        "allow_once",
    )
    assert selected.allowed and not selected.cancelled
    assert selected.raw == {"outcome": "selected", "optionId": "allow_once"}

    never_offered = interpret_outcome(
        schema.SelectedPermissionOutcome(option_id="allow_always"), offered
    )
    assert never_offered.kind == "unknown"
    assert never_offered.option_id is None and never_offered.option_kind is None
    assert not never_offered.allowed
    assert never_offered.raw == {"outcome": "selected", "optionId": "allow_always"}

    custom = interpret_outcome(schema.SelectedPermissionOutcome(option_id="x"), offered)
    assert custom.kind == "selected" and custom.option_kind == "_custom" and not custom.allowed

    # A cancelled answer acpio reads is the client's own: the prompt was dismissed.
    dismissed = interpret_outcome(schema.CancelledPermissionOutcome(), offered)
    assert dismissed.dismissed and not dismissed.allowed
    assert not dismissed.cancelled and not dismissed.rejected


@pytest.mark.parametrize(
    ("policy", "kind", "option_id", "allowed"),
    [
        (PermissionPolicy.allow(), "selected", "allow_once", True),
        (PermissionPolicy.allow("allow_always"), "selected", "allow_always", True),
        (PermissionPolicy.reject(), "selected", "reject_once", False),
        (PermissionPolicy.reject("reject_always"), "selected", "reject_always", False),
        (PermissionPolicy.cancelled(), "dismissed", None, False),
        # An id that was never offered, even one that looks like approval, is not a choice.
        (PermissionPolicy.select("yes"), "unknown", None, False),
        (PermissionPolicy.select("ALLOW_ONCE"), "unknown", None, False),
        # Custom and future outcomes are kept raw and never approval.
        (PermissionPolicy.raw({"outcome": "_approved_by_admin"}), "unknown", None, False),
        (
            PermissionPolicy.raw({"outcome": "approved", "optionId": "allow_once"}),
            "unknown",
            None,
            False,
        ),
        # Malformed: "selected" without an optionId.
        (PermissionPolicy.raw({"outcome": "selected"}), "unknown", None, False),
        (PermissionPolicy.raw({"outcome": "selected", "optionId": 1}), "unknown", None, False),
    ],
)
async def test_outcomes(
    policy: PermissionPolicy, kind: str, option_id: str | None, allowed: bool
) -> None:
    outcome, _ = await ask_once(policy, ALL_OPTIONS)

    assert outcome.kind == kind
    assert outcome.option_id == option_id
    assert outcome.allowed is allowed
    assert not outcome.remembered


async def test_unknown_outcomes_keep_the_raw_answer() -> None:
    outcome, _ = await ask_once(PermissionPolicy.raw({"outcome": "_later", "when": 3}))
    assert outcome.kind == "unknown"
    assert outcome.raw == {"outcome": "_later", "when": 3}


class _RefusingClient:
    """A bare client connection that answers every permission request with an error."""

    def __init__(self) -> None:
        self.idle = anyio.Event()

    async def on_request(
        self, method: str, params: msgspec.Raw | None, context: acpio.rpc.RequestContext
    ) -> object:
        raise acpio.RequestError(-32000, "no UI available")

    async def on_notification(self, method: str, params: msgspec.Raw | None) -> None:
        assert params is not None
        update = schema.decode(params, schema.UpdateSessionNotification).update
        if isinstance(update, schema.IdleStateUpdate):
            self.idle.set()


async def test_an_error_answer_is_not_approval(tmp_path: Path) -> None:
    outcomes: list[Outcome] = []

    async def body(session: acpio.Session) -> None:
        async with session.tool_call("t") as call:
            outcomes.append(await call.request_permission())

    client_side, agent_side = acpio.rpc.memory_stream_pair()
    handler = _RefusingClient()
    raw = msgspec.json.decode
    async with anyio.create_task_group() as group:
        group.start_soon(acpio.serve, Scripted(body), agent_side)
        async with acpio.rpc.Connection(client_side, handler, encode=schema.encode) as connection:
            await connection.request(
                "initialize", {"protocolVersion": 2, "info": {"name": "c", "version": "1"}}, raw
            )
            new = await connection.request(
                "session/new", {"cwd": str(tmp_path), "mcpServers": []}, raw
            )
            assert isinstance(new, dict)
            prompt = [{"type": "text", "text": "go"}]
            await connection.request(
                "session/prompt", {"sessionId": new["sessionId"], "prompt": prompt}, raw
            )
            with anyio.fail_after(10):
                await handler.idle.wait()

    assert outcomes[0].kind == "unknown" and not outcomes[0].allowed
    assert outcomes[0].raw == {"error": {"code": -32000, "message": "no UI available"}}


# ------------------------------------------------------------------- the request on the wire


async def test_tool_call_subject_title_and_description() -> None:
    async def body(session: acpio.Session) -> None:
        async with session.tool_call("Edit main.rs", kind="edit", tool_call_id="c") as call:
            await call.request_permission()
            await call.request_permission(
                [ALLOW_ONCE], title="Approve file edit?", description="Allow editing src/main.rs?"
            )

    async with MockClient(Scripted(body), policy=PermissionPolicy.allow()) as client:
        session = await client.new_session()
        await session.prompt("go")
        first, second = (r.params for r in client.permission_requests)

    assert first == {
        "sessionId": session.id,
        "title": "Edit main.rs",
        "subject": {"type": "tool_call", "toolCall": {"toolCallId": "c"}},
        "options": [
            {"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"},
            {"optionId": "reject_once", "name": "Reject", "kind": "reject_once"},
        ],
    }
    assert second["title"] == "Approve file edit?"
    assert second["description"] == "Allow editing src/main.rs?"
    assert second["options"] == [
        {"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"}
    ]


async def test_command_subject(tmp_path: Path) -> None:
    errors: list[str] = []

    async def body(session: acpio.Session) -> None:
        async with session.tool_call("Run tests", kind="execute", tool_call_id="c") as call:
            await call.request_permission(command="cargo test")
            await call.request_permission(
                command="make", cwd=str(tmp_path), terminal_id="term_1", title="Run make?"
            )
            try:
                await call.request_permission(command="make", cwd="build")
            except acpio.LocalProtocolError as exc:
                errors.append(str(exc))

    async with MockClient(Scripted(body), policy=PermissionPolicy.allow()) as client:
        session = await client.new_session()
        await session.prompt("go")
        first, second = (r.params["subject"] for r in client.permission_requests)

    assert first == {
        "type": "command",
        "command": "cargo test",
        "cwd": session.cwd,
        "toolCallId": "c",
    }
    assert second == {
        "type": "command",
        "command": "make",
        "cwd": str(tmp_path),
        "toolCallId": "c",
        "terminalId": "term_1",
    }
    assert len(errors) == 1 and "absolute" in errors[0]
    assert len(client.permission_requests) == 2


# --------------------------------------------------------------------------- session state


async def test_requires_action_while_pending_then_running() -> None:
    answer = anyio.Event()

    async def decide(request: PermissionRequest) -> Mapping[str, object]:
        await answer.wait()
        return {"outcome": "selected", "optionId": "allow_once"}

    async def body(session: acpio.Session) -> None:
        async with session.tool_call("t") as call:
            await call.request_permission()
            await session.message("done")

    async with MockClient(Scripted(body), policy=decide) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        await session.wait_for_state("requires_action")
        request = await session.wait_for_permission_request(pending=True)
        assert request.pending
        answer.set()
        result = await turn.wait()
        messages = agent_messages(client)

    assert states(client) == ["running", "requires_action", "running", "idle"]
    assert result.stop_reason == "end_turn"
    # requires_action is reported before the request, running after its answer.
    methods = [
        m.get("method") or "response"
        for m in messages
        if m.get("method") != "session/update"
        or m["params"]["update"]["sessionUpdate"] == "state_update"  # type: ignore[index]
    ]
    assert methods[-5:] == [
        "session/update",
        "session/update",
        "session/request_permission",
        "session/update",
        "session/update",
    ]


async def test_answering_one_of_two_pending_requests_resumes_running() -> None:
    # The schema: "agents MUST report running when progress resumes"; the task
    # whose request was answered resumes at once, so its updates follow running
    # even though the other request is still pending (the strict client checks it).
    gates = {"first": anyio.Event(), "second": anyio.Event()}
    seen_states: list[str] = []

    async def decide(request: PermissionRequest) -> Mapping[str, object]:
        assert request.title is not None
        await gates[request.title].wait()
        return {"outcome": "selected", "optionId": "allow_once"}

    async def ask(session: acpio.Session, title: str) -> None:
        async with session.tool_call(title, tool_call_id=title) as call:
            await call.request_permission(title=title)

    async def body(session: acpio.Session) -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(ask, session, "first")
            group.start_soon(ask, session, "second")

    async with MockClient(Scripted(body), policy=decide) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        await client.wait_for(lambda: len(client.permission_requests) == 2)
        seen_states.append(session.view.state)
        gates["first"].set()
        await session.wait_for_tool_call("first", status="completed")
        seen_states.append(session.view.state)
        (second,) = [r for r in client.permission_requests if r.title == "second"]
        assert second.pending
        gates["second"].set()
        await turn.wait()

    assert seen_states == ["requires_action", "running"]
    assert states(client) == ["running", "requires_action", "running", "idle"]
    assert client.violations == []


# --------------------------------------------------------------------------- cancellation


async def test_session_cancel_abandons_a_pending_request() -> None:
    outcomes: list[Outcome] = []

    async def body(session: acpio.Session) -> None:
        async with session.tool_call("t", tool_call_id="c") as call:
            outcomes.append(await call.request_permission())
            # Never reached: the cancellation is raised by request_permission itself.
            await session.message("cleaning up")

    async with MockClient(Scripted(body), policy=PermissionPolicy.never()) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        request = await session.wait_for_permission_request(pending=True)
        await session.cancel()
        result = await turn.wait()
        await request.wait_answered()
        messages = agent_messages(client)

    assert result.stop_reason == "cancelled"
    assert outcomes == []
    assert "cleaning up" not in result.text
    assert request.cancelled_by_agent
    cancels = [m for m in messages if m.get("method") == "$/cancel_request"]
    assert cancels == [
        {
            "jsonrpc": "2.0",
            "method": "$/cancel_request",
            "params": {"requestId": request.request_id},
        }
    ]
    # Cancelled work does not go back to running; the call ends cancelled before idle.
    assert states(client) == ["running", "requires_action", "idle"]
    assert session.view.tool_calls["c"].status == "cancelled"
    assert client.violations == []


async def test_a_late_answer_is_ignored_without_error(caplog: pytest.LogCaptureFixture) -> None:
    release = anyio.Event()
    outcomes: list[Outcome] = []

    async def late(request: PermissionRequest) -> Mapping[str, object]:
        # Answer "allow" only after the agent abandoned the request.
        with anyio.CancelScope(shield=True):
            await release.wait()
        return {"outcome": "selected", "optionId": "allow_once"}

    async def body(session: acpio.Session) -> None:
        async with session.tool_call("t") as call:
            outcomes.append(await call.request_permission())

    caplog.set_level(logging.DEBUG, logger="acpio")
    async with MockClient(Scripted(body), policy=late) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        request = await session.wait_for_permission_request(pending=True)
        await session.cancel()
        result = await turn.wait()
        release.set()
        await request.wait_answered()
        # The agent still serves the session normally afterwards.
        outcomes.clear()
        client.permission_policy = PermissionPolicy.reject()
        second = await session.prompt("again")

    assert result.stop_reason == "cancelled"
    assert request.answer == {"outcome": "selected", "optionId": "allow_once"}
    assert second.stop_reason == "end_turn"
    assert [o.kind for o in outcomes] == ["selected"] and not outcomes[0].allowed
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


async def test_tool_call_cancel_abandons_the_calls_request_and_the_turn_goes_on() -> None:
    outcomes: list[Outcome] = []

    async def body(session: acpio.Session) -> str:
        async with session.tool_call("t", tool_call_id="c", cancellable=True) as call:
            outcomes.append(await call.request_permission())
            await anyio.sleep_forever()
        await session.message("after the call")
        return "end_turn"

    async with MockClient(Scripted(body), policy=PermissionPolicy.never()) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        request = await session.wait_for_permission_request(pending=True)
        await session.cancel_tool_call("c")
        result = await turn.wait()

    assert result.stop_reason == "end_turn"
    assert result.text == "after the call"
    # Raised inside the block, which swallowed it: the code after the request never ran.
    assert outcomes == []
    assert request.cancelled_by_agent
    assert session.view.tool_calls["c"].status == "cancelled"
    # The turn continued: back to running after the abandoned request.
    assert states(client) == ["running", "requires_action", "running", "idle"]


async def test_tool_call_cancel_abandons_the_request_of_a_call_without_a_block() -> None:
    outcomes: list[Outcome] = []

    async def body(session: acpio.Session) -> None:
        call = await session.tool_call("t", tool_call_id="c", cancellable=True)
        outcomes.append(await call.request_permission())

    async with MockClient(Scripted(body), policy=PermissionPolicy.never()) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        request = await session.wait_for_permission_request(pending=True)
        await session.cancel_tool_call("c")
        result = await turn.wait()

    assert result.stop_reason == "end_turn"
    assert [o.kind for o in outcomes] == ["cancelled"]
    assert request.cancelled_by_agent
    assert session.view.tool_calls["c"].status == "cancelled"
    assert session.view.tool_calls["c"].capabilities is None


# --------------------------------------------------------------------------- remembering


async def test_always_answers_are_remembered_per_key() -> None:
    outcomes: list[tuple[str, Outcome]] = []

    async def body(session: acpio.Session) -> None:
        for key in ("ls", "ls", "rm", "rm", "ls"):
            async with session.tool_call(f"Run {key}") as call:
                outcome = await call.request_permission(ALL_OPTIONS, command=key, remember=key)
                outcomes.append((key, outcome))
        # An "always" answer also covers a later request that offers only the "once" kinds.
        async with session.tool_call("Run ls") as call:
            outcomes.append(("ls", await call.request_permission(ALLOW_OR_REJECT, remember="ls")))

    policy = PermissionPolicy.scripted(
        [PermissionPolicy.allow("allow_always"), PermissionPolicy.reject("reject_always")]
    )
    async with MockClient(Scripted(body), policy=policy) as client:
        session = await client.new_session()
        await session.prompt("go")
        asked = [r.command for r in client.permission_requests]

    assert asked == ["ls", "rm"]
    assert [(k, o.option_id, o.allowed, o.remembered) for k, o in outcomes] == [
        ("ls", "allow_always", True, False),
        ("ls", "allow_always", True, True),
        ("rm", "reject_always", False, False),
        ("rm", "reject_always", False, True),
        ("ls", "allow_always", True, True),
        ("ls", "allow_once", True, True),
    ]


async def test_once_answers_and_requests_without_a_key_are_not_remembered() -> None:
    outcomes: list[Outcome] = []

    async def body(session: acpio.Session) -> None:
        async with session.tool_call("t") as call:
            for _ in range(2):
                outcomes.append(await call.request_permission(ALL_OPTIONS, remember="once"))
            for _ in range(2):
                outcomes.append(await call.request_permission(ALL_OPTIONS))
            outcomes.append(
                await call.request_permission([ALLOW_ALWAYS, REJECT_ONCE], remember="a")
            )
            # "Always allow" was remembered, but no allow option is offered now: ask.
            outcomes.append(
                await call.request_permission([REJECT_ONCE, REJECT_ALWAYS], remember="a")
            )

    policy = PermissionPolicy.scripted(
        [
            PermissionPolicy.allow("allow_once"),
            PermissionPolicy.allow("allow_once"),
            PermissionPolicy.allow("allow_always"),
            PermissionPolicy.allow("allow_always"),
            PermissionPolicy.allow("allow_always"),
            PermissionPolicy.reject("reject_once"),
        ]
    )
    async with MockClient(Scripted(body), policy=policy) as client:
        session = await client.new_session()
        await session.prompt("go")

    assert len(client.permission_requests) == 6
    assert not any(o.remembered for o in outcomes)
    assert [o.option_id for o in outcomes] == [
        "allow_once",
        "allow_once",
        "allow_always",
        "allow_always",
        "allow_always",
        "reject_once",
    ]


# ------------------------------------------------------------------ asking again


async def test_a_request_asked_again_follows_every_change_of_what_it_asks() -> None:
    # The same prompt in a loop is sent from its encoded form: each request must
    # still be exactly what the general path makes of that call's arguments.
    go = option("go", "Go", "allow_once")
    tagged = schema.PermissionOption(
        option_id="tagged", name="Tagged", kind="allow_once", meta={"n": 1}
    )
    outcomes: list[Outcome] = []

    async def body(session: acpio.Session) -> None:
        async with session.tool_call("Run tests", tool_call_id="c") as call:
            for options in ([ALLOW_ONCE, REJECT_ONCE], [ALLOW_ONCE, REJECT_ONCE], ALLOW_OR_REJECT):
                outcomes.append(await call.request_permission(options))
            outcomes.append(await call.request_permission([go]))
            go.name = "Go now"  # the same object, changed: the next request shows it
            outcomes.append(await call.request_permission([go]))
            outcomes.append(await call.request_permission([go], title="Sure?"))
            outcomes.append(await call.request_permission([go], title="Sure?", description="d"))
            await call.update(title="Run all tests")
            outcomes.append(await call.request_permission([go]))
            tagged.meta = {"n": True}  # equal to {"n": 1} in Python, not on the wire
            outcomes.append(await call.request_permission([tagged]))
            outcomes.append(await call.request_permission([tagged]))

    def answer(request: PermissionRequest) -> Mapping[str, object]:
        return {"outcome": "selected", "optionId": "allow_once"}

    async with MockClient(Scripted(body), policy=answer) as client:
        session = await client.new_session()
        await session.prompt("go")
        sent = [(r.request_id, r.params) for r in client.permission_requests]

    def params(title: str, options: list[JsonObject], **extra: object) -> JsonObject:
        return {
            "sessionId": session.id,
            "title": title,
            **extra,
            "subject": {"type": "tool_call", "toolCall": {"toolCallId": "c"}},
            "options": options,
        }

    allow_reject = [
        {"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"},
        {"optionId": "reject_once", "name": "Reject", "kind": "reject_once"},
    ]
    go_now = [{"optionId": "go", "name": "Go now", "kind": "allow_once"}]
    assert [p for _, p in sent] == [
        params("Run tests", allow_reject),
        params("Run tests", allow_reject),
        params("Run tests", allow_reject),
        params("Run tests", [{"optionId": "go", "name": "Go", "kind": "allow_once"}]),
        params("Run tests", go_now),
        params("Sure?", go_now),
        params("Sure?", go_now, description="d"),
        params("Run all tests", go_now),
        params(
            "Run all tests",
            [{**go_now[0], "optionId": "tagged", "name": "Tagged", "_meta": {"n": True}}],
        ),
        params(
            "Run all tests",
            [{**go_now[0], "optionId": "tagged", "name": "Tagged", "_meta": {"n": True}}],
        ),
    ]
    ids = [request_id for request_id, _ in sent]
    assert len(set(ids)) == len(ids)
    # Each answer is read against the options of its own request.
    assert [o.allowed for o in outcomes] == [True, True, True] + [False] * 7
    assert [o.kind for o in outcomes[3:]] == ["unknown"] * 7


async def test_state_updates_are_live_state_not_history() -> None:
    recorded: list[str] = []

    class Recording(InMemoryHistory):
        def record(self, update: schema.SessionUpdate) -> None:
            recorded.append(type(update).__name__)
            super().record(update)

    class Store(InMemorySessionStore):
        async def create(
            self, session_id: str, cwd: str, additional_directories: list[str]
        ) -> SessionRecord:
            record = await super().create(session_id, cwd, additional_directories)
            record.history = Recording()
            return record

    async def body(session: acpio.Session) -> None:
        async with session.tool_call("t") as call:
            await call.request_permission()

    async with MockClient(Scripted(body), policy=PermissionPolicy.allow(), store=Store()) as client:
        session = await client.new_session()
        await session.prompt("go")
        sent_states = states(client)

    assert sent_states == ["running", "requires_action", "running", "idle"]
    assert "RunningStateUpdate" not in recorded
    assert "RequiresActionStateUpdate" not in recorded
    assert "IdleStateUpdate" in recorded
