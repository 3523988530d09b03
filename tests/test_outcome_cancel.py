"""Cancellation while a permission request waits, Outcome names, reused ids, enum values.

The code under test is the plain one from the README: ``if not
outcome.allowed: await call.fail(...)``. When the turn (``session/cancel``)
or the call (``tool_call/cancel``) is cancelled while the request waits, that
code must still end the call ``cancelled``, never ``failed``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

import acpio
from acpio import schema
from acpio.testing import MockClient, PermissionPolicy

pytestmark = pytest.mark.anyio

Body = Callable[[acpio.Session], Awaitable[str | None]]


class Scripted(acpio.Agent):
    """An agent whose prompt handler is the test's coroutine."""

    def __init__(self, body: Body) -> None:
        self.body = body

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str | None:
        return await self.body(session)


def readme_body(*, cancellable: bool, seen: list[acpio.Outcome]) -> Body:
    async def body(session: acpio.Session) -> str:
        async with session.tool_call(
            "Run `ls`", kind="execute", tool_call_id="c", cancellable=cancellable
        ) as call:
            outcome = await call.request_permission(acpio.permission.ALLOW_OR_REJECT)
            seen.append(outcome)
            if not outcome.allowed:
                await call.fail("Permission denied")
                return "end_turn"
            await call.append_text("ran")
        return "end_turn"

    return body


def texts(session_view_call: object) -> list[str]:
    return [
        item["content"]["text"]
        for item in getattr(session_view_call, "content", [])
        if isinstance(item, dict) and item.get("type") == "content"
    ]


async def test_turn_cancel_while_asking_ends_the_readme_call_cancelled() -> None:
    seen: list[acpio.Outcome] = []
    agent = Scripted(readme_body(cancellable=False, seen=seen))
    async with MockClient(agent, policy=PermissionPolicy.never()) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        request = await session.wait_for_permission_request(pending=True)
        await session.cancel()
        result = await turn.wait()
        await request.wait_answered()
    assert result.stop_reason == "cancelled"
    assert seen == []  # request_permission raised the cancellation
    call = session.view.tool_calls["c"]
    assert call.status == "cancelled"
    assert "Permission denied" not in str(call.content)
    assert request.cancelled_by_agent
    assert client.violations == []


async def test_tool_call_cancel_while_asking_ends_the_readme_call_cancelled() -> None:
    seen: list[acpio.Outcome] = []
    agent = Scripted(readme_body(cancellable=True, seen=seen))
    async with MockClient(agent, policy=PermissionPolicy.never()) as client:
        session = await client.new_session()
        turn = await session.start_prompt("go")
        request = await session.wait_for_permission_request(pending=True)
        await session.cancel_tool_call("c")
        result = await turn.wait()
        await request.wait_answered()
    # Only the call was cancelled: the turn ends normally, after the block.
    assert result.stop_reason == "end_turn"
    assert seen == []
    call = session.view.tool_calls["c"]
    assert call.status == "cancelled"
    assert "Permission denied" not in str(call.content)
    assert request.cancelled_by_agent
    assert client.violations == []


async def test_an_allow_that_races_session_cancel_is_never_acted_on() -> None:
    seen: list[acpio.Outcome] = []
    holder: list[object] = []

    async def cancel_then_allow(request: object) -> dict[str, object]:
        # session/cancel goes out first, the allow answer right behind it.
        await holder[0].cancel()  # type: ignore[attr-defined]
        return {"outcome": "selected", "optionId": "allow_once"}

    agent = Scripted(readme_body(cancellable=False, seen=seen))
    policy = PermissionPolicy.call(cancel_then_allow)
    async with MockClient(agent, policy=policy, strict=False) as client:
        session = await client.new_session()
        holder.append(session)
        result = await session.prompt("go")
    assert result.stop_reason == "cancelled"
    assert seen == []  # neither returned nor acted on
    assert session.view.tool_calls["c"].status == "cancelled"
    assert "ran" not in str(session.view.tool_calls["c"].content)


@pytest.mark.parametrize(
    ("policy", "name"),
    [
        (PermissionPolicy.allow(), "allowed"),
        (PermissionPolicy.reject(), "rejected"),
        (PermissionPolicy.reject("reject_always"), "rejected"),
        (PermissionPolicy.cancelled(), "dismissed"),
        (PermissionPolicy.raw({"outcome": "_later"}), None),
        (PermissionPolicy.select("nope"), None),
    ],
)
async def test_outcome_names_tell_the_answers_apart(
    policy: PermissionPolicy, name: str | None
) -> None:
    seen: list[acpio.Outcome] = []

    async def body(session: acpio.Session) -> None:
        async with session.tool_call("t") as call:
            seen.append(await call.request_permission(acpio.permission.ALL_OPTIONS))

    async with MockClient(Scripted(body), policy=policy) as client:
        session = await client.new_session()
        await session.prompt("go")
    (outcome,) = seen
    flags = {
        "allowed": outcome.allowed,
        "rejected": outcome.rejected,
        "dismissed": outcome.dismissed,
        "cancelled": outcome.cancelled,
    }
    assert [key for key, value in flags.items() if value] == ([name] if name else [])


async def test_the_readme_code_fails_a_dismissed_call_and_a_rejected_one() -> None:
    for policy in (PermissionPolicy.cancelled(), PermissionPolicy.reject()):
        seen: list[acpio.Outcome] = []
        async with MockClient(
            Scripted(readme_body(cancellable=True, seen=seen)), policy=policy
        ) as c:
            session = await c.new_session()
            result = await session.prompt("go")
        assert result.stop_reason == "end_turn"
        assert session.view.tool_calls["c"].status == "failed"
        assert not seen[0].allowed and not seen[0].cancelled


# ------------------------------------------------------------------------- reused ids


async def test_a_reused_tool_call_id_is_refused_even_after_the_call_ended() -> None:
    errors: list[str] = []

    async def body(session: acpio.Session) -> None:
        async with session.tool_call("first", tool_call_id="c"):
            pass
        try:
            session.tool_call("again", tool_call_id="c")
        except acpio.LocalProtocolError as exc:
            errors.append(str(exc))
        # The explicit way back to an existing call.
        call = session.reattach_tool_call("c")
        assert call.status == "completed"
        await call.update(title="first, renamed")
        with pytest.raises(acpio.LocalProtocolError):
            await call.update(status="pending")
        with pytest.raises(acpio.LocalProtocolError):
            session.reattach_tool_call("never")

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        result = await session.prompt("go")
    assert result.stop_reason == "end_turn"
    assert "'c'" in errors[0] and "completed" in errors[0] and "reattach_tool_call" in errors[0]
    call = session.view.tool_calls["c"]
    assert (call.status, call.title) == ("completed", "first, renamed")


async def test_a_reused_tool_call_id_of_an_open_call_is_refused_before_anything_is_sent() -> None:
    async def body(session: acpio.Session) -> None:
        first = await session.tool_call("first", tool_call_id="c")
        with pytest.raises(acpio.LocalProtocolError, match="already used"):
            await session.tool_call("second", tool_call_id="c")
        # Two handles made before either was announced: the second announce is refused.
        one, two = (
            session.tool_call("one", tool_call_id="d"),
            session.tool_call("two", tool_call_id="d"),
        )
        await one
        with pytest.raises(acpio.LocalProtocolError, match="already used"):
            await two
        await first.complete()

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        await session.prompt("go")
    assert [c.title for c in session.view.tool_calls.values()] == ["first", "one"]


# ----------------------------------------------------------------------- enum values


async def test_every_enum_value_the_agent_sends_is_checked_before_the_wire() -> None:
    errors: list[str] = []

    async def attempt(action: Awaitable[object]) -> None:
        try:
            await action
        except acpio.LocalProtocolError as exc:
            errors.append(str(exc))

    async def body(session: acpio.Session) -> None:
        entry = schema.PlanEntry
        await attempt(session.plan([entry(content="x", priority="urgent", status="pending")]))
        await attempt(session.plan([entry(content="x", priority="high", status="done")]))
        await attempt(session.send(schema.ToolCallUpdate(tool_call_id="t", kind="bogus")))
        await attempt(session.send(schema.ToolCallUpdate(tool_call_id="t", status="later")))
        await attempt(session.notice("n", severity="fatal"))
        annotated = schema.TextContent(text="x", annotations=schema.Annotations(audience=["bot"]))
        await attempt(session.message(annotated))
        await attempt(session.send(schema.AgentMessageChunk(message_id="m", content=annotated)))
        # Custom values start with "_" and pass.
        await session.plan([entry(content="ok", priority="_urgent", status="_done")])
        await session.notice("n", severity="_fatal")
        await session.message(
            schema.TextContent(text="y", annotations=schema.Annotations(audience=["_bot"]))
        )

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        result = await session.prompt("go")
    assert result.stop_reason == "end_turn"
    for fragment in ("'urgent'", "'done'", "'bogus'", "'later'", "'fatal'", "'bot'", "'bot'"):
        assert any(fragment in error for error in errors), fragment
    assert len(errors) == 7
    assert all("custom values must start with '_'" in error for error in errors)
    # Nothing invalid reached the client; the custom values did.
    (plan,) = session.view.plans.values()
    assert [e.priority for e in plan.entries] == ["_urgent"]
    assert client.violations == []


async def test_an_invalid_stop_reason_is_an_error_turn() -> None:
    async def body(session: acpio.Session) -> str:
        return "finished"

    async with MockClient(Scripted(body)) as client:
        session = await client.new_session()
        result = await session.prompt("go")
    assert result.stop_reason == "error"


async def test_client_values_echoed_back_are_not_the_agents_to_check() -> None:
    # The user_message repeats the client's prompt as it came, even with odd values.
    async def body(session: acpio.Session) -> None:
        await session.message("ok")

    async with MockClient(Scripted(body), strict=False) as client:
        session = await client.new_session()
        prompt = [schema.TextContent(text="hi", annotations=schema.Annotations(audience=["robot"]))]
        result = await session.prompt(prompt)
    assert result.stop_reason == "end_turn"
    assert result.text == "ok"
