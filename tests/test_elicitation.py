"""Elicitation: form and URL mode, typed answers, requires_action, cancellation, refusal."""

from __future__ import annotations

import anyio
import msgspec
import pytest

import acpio
from acpio import schema
from acpio.testing import ElicitationPolicy, MockClient

pytestmark = pytest.mark.anyio

FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name"},
        "age": {"type": "integer", "minimum": 0},
        "color": {"type": "string", "enum": ["red", "blue"], "default": "blue"},
        "subscribe": {"type": "boolean"},
    },
    "required": ["name"],
}


class FormAgent(acpio.Agent):
    results: list[acpio.ElicitationResult]

    def __init__(self) -> None:
        self.results = []

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        async with session.tool_call("Set up the project", kind="other") as call:
            result = await session.elicit("Tell me about you", FORM, tool_call=call)
            self.results.append(result)
            if not result.accepted:
                await call.fail("no answer")
                return "end_turn"
            await session.message(f"hello {result.content['name']}")
        return "end_turn"


async def test_accepted_form_gives_the_values() -> None:
    agent = FormAgent()
    policy = ElicitationPolicy.accept({"name": "Ada", "age": 36})
    async with MockClient(agent, elicitation=policy) as client:
        session = await client.new_session()
        result = await session.prompt("go")
        assert result.text == "hello Ada"
        (request,) = client.elicitation_requests
        assert request.mode == "form"
        assert request.session_id == session.id
        assert request.tool_call_id == next(iter(session.view.tool_calls))
        assert request.fields == ["name", "age", "color", "subscribe"]
        assert request.answer == {
            "action": "accept",
            "content": {"color": "blue", "name": "Ada", "age": 36},
        }
    (answer,) = agent.results
    assert answer.accepted and not answer.declined and not answer.dismissed
    assert answer.content == {"color": "blue", "name": "Ada", "age": 36}


async def test_requires_action_while_pending() -> None:
    async with MockClient(FormAgent(), elicitation=ElicitationPolicy.never()) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        request = await client.wait_for_elicitation_request(pending=True)
        await session.wait_for_state("requires_action")
        client.elicitation_policy = ElicitationPolicy.decline()
        await session.cancel()
        result = await turn.wait()
        assert result.stop_reason == "cancelled"
        await request.wait_answered()
        assert request.cancelled_by_agent


@pytest.mark.parametrize(
    ("policy", "action"),
    [(ElicitationPolicy.decline(), "decline"), (ElicitationPolicy.dismiss(), "cancel")],
)
async def test_declined_and_dismissed(policy: ElicitationPolicy, action: str) -> None:
    agent = FormAgent()
    async with MockClient(agent, elicitation=policy) as client:
        session = await client.new_session()
        result = await session.prompt("go")
        assert result.stop_reason == "end_turn"
        states = [u.state for u in result.updates if isinstance(u, schema.StateUpdate)]  # type: ignore[attr-defined]
        assert states == ["running", "requires_action", "running", "idle"]
        (call,) = session.view.tool_calls.values()
        assert call.status == "failed"
    (answer,) = agent.results
    assert answer.action == action
    assert answer.declined == (action == "decline")
    assert answer.dismissed == (action == "cancel")
    assert answer.content == {}


async def test_unknown_action_is_none_of_the_known_ones() -> None:
    agent = FormAgent()
    async with MockClient(agent, elicitation=ElicitationPolicy.raw({"action": "_later"})) as client:
        session = await client.new_session()
        await session.prompt("go")
    (answer,) = agent.results
    assert answer.action == "_later"
    assert not (answer.accepted or answer.declined or answer.dismissed)


async def test_cancel_while_pending_ends_the_tool_call_cancelled() -> None:
    agent = FormAgent()
    async with MockClient(agent, elicitation=ElicitationPolicy.never()) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        request = await client.wait_for_elicitation_request(pending=True)
        await session.cancel()
        result = await turn.wait()
        assert result.stop_reason == "cancelled"
        (call,) = session.view.tool_calls.values()
        assert call.status == "cancelled"
        await request.wait_answered()
        assert request.cancelled_by_agent and request.answer is None
        cancels = [
            msgspec.json.decode(e.data)
            for e in client.transcript
            if e.direction == "agent->client" and e.method == "$/cancel_request"
        ]
        assert [c["params"] for c in cancels] == [{"requestId": request.request_id}]
    assert agent.results == []  # the wait raised the cancellation: no result


async def test_wrong_values_from_the_client_are_a_remote_protocol_error() -> None:
    errors: list[str] = []

    class Checking(acpio.Agent):
        async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> None:
            try:
                await session.elicit("Tell me", FORM)
            except acpio.RemoteProtocolError as exc:
                errors.append(str(exc))

    answers = [
        {"action": "accept", "content": {"age": 3}},
        {"action": "accept", "content": {"name": "x", "age": "old"}},
        {"action": "accept", "content": {"name": "x", "age": True}},
        {"action": "accept", "content": {"name": "x", "color": "green"}},
    ]
    policy = ElicitationPolicy.scripted([ElicitationPolicy.raw(a) for a in answers])
    async with MockClient(Checking(), elicitation=policy) as client:
        session = await client.new_session()
        for _ in answers:
            await session.prompt("go")
    assert errors == [
        "the client accepted the elicitation without the required field 'name'",
        "the client's value for 'age' should be an integer, got 'old'",
        "the client's value for 'age' should be an integer, got True",
        "the client's value 'green' for 'color' is not one of ['red', 'blue']",
    ]


class UrlAgent(acpio.Agent):
    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        result = await session.elicit_url(
            "Sign in to continue", "https://example.com/login", elicitation_id="login-1"
        )
        if result.accepted:
            assert result.elicitation_id == "login-1"
            await session.complete_elicitation(result.elicitation_id)
            await session.message("signed in")
        return "end_turn"


async def test_url_mode_and_completion() -> None:
    async with MockClient(UrlAgent(), elicitation=ElicitationPolicy.accept()) as client:
        session = await client.new_session()
        result = await session.prompt("go")
        assert result.text == "signed in"
        (request,) = client.elicitation_requests
        assert request.mode == "url"
        assert request.url == "https://example.com/login"
        assert request.elicitation_id == "login-1"
        assert request.answer == {"action": "accept"}
        await client.wait_for(lambda: request.completed)


async def test_refused_when_the_client_did_not_advertise_it() -> None:
    errors: list[str] = []

    class Asking(acpio.Agent):
        async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> None:
            assert not session.can_elicit("form") and not session.can_elicit("url")
            for ask in (
                session.elicit("Tell me", FORM),
                session.elicit_url("Sign in", "https://example.com"),
            ):
                try:
                    await ask
                except acpio.ElicitationUnsupported as exc:
                    errors.append(str(exc))

    async with MockClient(Asking()) as client:  # advertises no elicitation
        session = await client.new_session()
        assert (await session.prompt("go")).stop_reason == "end_turn"
        assert not any(e.method == "elicitation/create" for e in client.transcript)
    assert [e.split(" (")[0] for e in errors] == [
        "the client did not advertise form elicitation",
        "the client did not advertise URL elicitation",
    ]


async def test_only_the_advertised_mode_is_used() -> None:
    form_only = schema.ClientCapabilities(
        elicitation=schema.ElicitationCapabilities(form=schema.ElicitationFormCapabilities())
    )
    outcomes: list[str] = []

    class Both(acpio.Agent):
        async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> None:
            outcomes.append((await session.elicit("Name?", FORM)).action)
            try:
                await session.elicit_url("Sign in", "https://example.com")
            except acpio.ElicitationUnsupported:
                outcomes.append("url refused")

    policy = ElicitationPolicy.accept({"name": "Ada"})
    async with MockClient(Both(), elicitation=policy, capabilities=form_only) as client:
        session = await client.new_session()
        await session.prompt("go")
    assert outcomes == ["accept", "url refused"]


async def test_invalid_schema_is_refused_locally() -> None:
    errors: list[str] = []

    class Bad(acpio.Agent):
        async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> None:
            try:
                await session.elicit("?", {"type": "object", "properties": {"x": {"type": 3}}})
            except acpio.LocalProtocolError as exc:
                errors.append(str(exc))

    async with MockClient(Bad(), elicitation=ElicitationPolicy.accept()) as client:
        session = await client.new_session()
        await session.prompt("go")
        assert client.elicitation_requests == []
    assert len(errors) == 1 and errors[0].startswith("the requested schema is not")


async def test_required_fields_must_be_defined() -> None:
    errors: list[str] = []

    class Bad(acpio.Agent):
        async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> None:
            try:
                form = {"properties": {"a": {"type": "string"}}, "required": ["b"]}
                await session.elicit("?", form)
            except acpio.LocalProtocolError as exc:
                errors.append(str(exc))

    async with MockClient(Bad(), elicitation=ElicitationPolicy.accept()) as client:
        session = await client.new_session()
        await session.prompt("go")
    assert errors == ["the requested schema requires ['b'], which are not among its properties (a)"]


async def test_policy_call_and_typed_schema() -> None:
    requested = schema.ElicitationSchema(
        properties={"ok": schema.BooleanPropertySchema(title="OK?")}, required=["ok"]
    )
    got: list[dict[str, object]] = []

    class Typed(acpio.Agent):
        async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> None:
            got.append((await session.elicit("OK?", requested)).content)

    def decide(request: object) -> dict[str, object]:
        return {"action": "accept", "content": {"ok": True}}

    async with MockClient(Typed(), elicitation=ElicitationPolicy.call(decide)) as client:
        session = await client.new_session()
        await session.prompt("go")
    assert got == [{"ok": True}]


async def test_tool_call_cancel_while_pending_ends_only_that_call() -> None:
    class Cancellable(acpio.Agent):
        async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
            async with session.tool_call("Ask", kind="other", cancellable=True) as call:
                await session.elicit("Name?", FORM, tool_call=call)
            await session.message(f"after: {call.status}")
            return "end_turn"

    async with MockClient(Cancellable(), elicitation=ElicitationPolicy.never()) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        request = await client.wait_for_elicitation_request(pending=True)
        assert request.tool_call_id is not None
        await session.cancel_tool_call(request.tool_call_id)
        result = await turn.wait()
        assert result.stop_reason == "end_turn"
        assert result.text == "after: cancelled"
        await request.wait_answered()
        assert request.cancelled_by_agent


async def test_two_pending_elicitations_report_requires_action_once() -> None:
    class Two(acpio.Agent):
        async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> None:
            async with anyio.create_task_group() as group:
                group.start_soon(session.elicit, "one?", FORM)
                group.start_soon(session.elicit, "two?", FORM)

    policy = ElicitationPolicy.never()
    async with MockClient(Two(), elicitation=policy) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        first = await client.wait_for_elicitation_request(pending=True)
        second = await client.wait_for_elicitation_request(pending=True)
        await session.cancel()
        result = await turn.wait()
        assert result.stop_reason == "cancelled"
        states = [u.state for u in result.updates if isinstance(u, schema.StateUpdate)]  # type: ignore[attr-defined]
        assert states == ["running", "requires_action", "idle"]
        await first.wait_answered()
        await second.wait_answered()
        assert first.cancelled_by_agent and second.cancelled_by_agent


async def test_an_unannounced_tool_call_is_announced_before_the_question() -> None:
    class Early(acpio.Agent):
        async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> None:
            call = session.tool_call("Configure", kind="other")  # not sent yet
            await session.elicit("Name?", FORM, tool_call=call)
            await call.complete()

    policy = ElicitationPolicy.accept({"name": "Ada"})
    async with MockClient(Early(), elicitation=policy) as client:
        session = await client.new_session()
        await session.prompt("go")
        methods = [
            (e.method, (e.message or {}).get("params", {}).get("update", {}).get("sessionUpdate"))  # type: ignore[union-attr]
            for e in client.transcript
            if e.direction == "agent->client" and e.method is not None
        ]
        first_call = methods.index(("session/update", "tool_call_update"))
        assert first_call < methods.index(("elicitation/create", None))
        (call,) = session.view.tool_calls.values()
        assert call.status == "completed"
