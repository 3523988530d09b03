"""Slash commands, and the order of updates sent while a session is being set up."""

from __future__ import annotations

import msgspec
import pytest

import acpio
from acpio import schema
from acpio._features.commands import parse_command
from acpio.testing import MockClient

pytestmark = pytest.mark.anyio

COMPACT = acpio.command("compact", "Summarize the conversation so far")
PLAN = acpio.command("plan", "Make a plan", hint="what to plan")


class CommandAgent(acpio.Agent):
    commands = (COMPACT, PLAN)

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        await session.message(f"prompt: {acpio.text_of(prompt)}")
        return "end_turn"

    async def command(self, session: acpio.Session, invocation: acpio.CommandInvocation) -> str:
        if invocation.name == "plan":
            await session.set_commands([COMPACT])  # /plan is done: offer it no more
        await session.message(f"command {invocation.name} input={invocation.input!r}")
        return "end_turn"


async def test_commands_are_in_the_answer_and_invocations_reach_command() -> None:
    async with MockClient(CommandAgent()) as client:
        session = await client.new_session()
        assert session.view.command_names == ["compact", "plan"]
        (plan,) = [c for c in session.view.available_commands or () if c.name == "plan"]  # type: ignore[union-attr]
        assert isinstance(plan, schema.Command)
        assert plan.input == schema.TextCommandInput(hint="what to plan")
        assert (await session.prompt("/compact")).text == "command compact input=''"
        assert (await session.prompt("/plan  add a\nfeature")).text == (
            "command plan input='add a\\nfeature'"
        )
        assert session.view.command_names == ["compact"]
        # No longer advertised, unknown, or not at the start: plain prompts.
        assert (await session.prompt("/plan again")).text == "prompt: /plan again"
        assert (await session.prompt("/nope")).text == "prompt: /nope"
        assert (await session.prompt("say /compact")).text == "prompt: say /compact"


async def test_default_command_handler_gives_the_prompt_to_prompt() -> None:
    class Plain(acpio.Agent):
        commands = (COMPACT,)

        async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
            invocation = session.parse_command(prompt)
            await session.message(f"{acpio.text_of(prompt)} -> {invocation and invocation.name}")
            return "end_turn"

    async with MockClient(Plain()) as client:
        session = await client.new_session()
        assert (await session.prompt("/compact now")).text == "/compact now -> compact"


def test_parse_command() -> None:
    text = schema.TextContent
    link = schema.ResourceLink(uri="file:///a", name="a")
    invocation = acpio.CommandInvocation
    assert parse_command([text(text="  /plan\tthe thing ")], [PLAN]) == invocation(
        "plan", "the thing ", PLAN, [text(text="  /plan\tthe thing ")]
    )
    found = parse_command([text(text="/compact"), link], [COMPACT])
    assert found is not None and found.prompt[1] == link
    assert parse_command([link, text(text="/compact")], [COMPACT]) is None
    assert parse_command([text(text="/")], [COMPACT]) is None
    assert parse_command([], [COMPACT]) is None


def test_command_names_are_checked() -> None:
    for bad in ("", "two words", "/slash"):
        with pytest.raises(acpio.LocalProtocolError, match="without whitespace"):
            acpio.command(bad, "bad")


async def test_repeated_command_names_are_refused() -> None:
    seen: list[str] = []

    class Twice(acpio.Agent):
        async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> None:
            try:
                await session.set_commands([COMPACT, COMPACT])
            except acpio.LocalProtocolError as exc:
                seen.append(str(exc))

    async with MockClient(Twice()) as client:
        session = await client.new_session()
        await session.prompt("x")
        assert session.view.available_commands is None
    assert seen == ["command 'compact' is advertised twice"]


# --------------------------------------------------------------------------- setup order


class ChattySetupAgent(acpio.Agent):
    """Sends updates from its setup hooks, as many agents do (commands, a greeting)."""

    async def on_new_session(self, session: acpio.Session) -> None:
        await session.set_commands([COMPACT])  # carried by the answer: nothing sent
        await session.message("welcome")
        await session.notice("indexing the project")
        await session.set_commands([COMPACT, PLAN])  # still in setup: in the answer

    async def on_resume_session(self, session: acpio.Session) -> None:
        await session.message("welcome back")

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> None:
        return None


def _agent_lines(client: MockClient) -> list[dict[str, object]]:
    return [
        msgspec.json.decode(entry.data)
        for entry in client.transcript
        if entry.direction == "agent->client"
    ]


async def test_updates_from_on_new_session_follow_the_answer_in_order() -> None:
    async with MockClient(ChattySetupAgent()) as client:
        session = await client.new_session()
        await client.wait_for(lambda: len(session.updates) == 2)
        lines = _agent_lines(client)[1:]  # after the initialize answer
        first = lines[0]
        assert first.get("id") == 2, "the session/new answer comes first"
        result = first["result"]
        assert isinstance(result, dict)
        assert [c["name"] for c in result["availableCommands"]] == ["compact", "plan"]  # type: ignore[index]
        kinds = [line["params"]["update"]["sessionUpdate"] for line in lines[1:]]  # type: ignore[index]
        assert kinds == ["agent_message", "notice"]
        assert session.view.command_names == ["compact", "plan"]
        # The history kept them, in order, for replay.
        replayed = await session.resume(replay=True)
        assert [type(u).__name__ for u in replayed] == ["AgentMessage", "IdleStateUpdate"]


async def test_updates_from_on_resume_session_follow_the_answer() -> None:
    async with MockClient(ChattySetupAgent()) as client:
        session = await client.new_session()
        await client.wait_for(lambda: len(session.updates) == 2)
        before = len(client.transcript)
        replayed = await session.resume(replay=False)
        assert [type(u).__name__ for u in replayed] == ["IdleStateUpdate"]
        await client.wait_for(lambda: session.view.agent_text.endswith("welcome back"))
        lines = [
            msgspec.json.decode(e.data)
            for e in client.transcript[before:]
            if e.direction == "agent->client"
        ]
        kinds = [
            "answer" if "result" in line else line["params"]["update"]["sessionUpdate"]  # type: ignore[index]
            for line in lines
        ]
        assert kinds == ["state_update", "answer", "agent_message"]


async def test_a_failing_setup_hook_sends_nothing_for_the_session() -> None:
    class Broken(acpio.Agent):
        async def on_new_session(self, session: acpio.Session) -> None:
            await session.message("half set up")
            raise RuntimeError("no luck")

    async with MockClient(Broken()) as client:
        with pytest.raises(acpio.RequestError):
            await client.new_session()
        assert not any("session/update" in e.data.decode() for e in client.transcript)


async def test_held_setup_updates_keep_their_order_when_the_writer_is_full() -> None:
    class Flood(acpio.Agent):
        async def on_new_session(self, session: acpio.Session) -> None:
            for index in range(40):
                await session.message(f"{index:02d} " + "x" * 2000)

        async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
            await session.message("live")
            return "end_turn"

    limits = acpio.AgentLimits(write_buffer_size=4096)
    async with MockClient(Flood(), limits=limits) as client:
        session = await client.new_session()
        await client.wait_for(lambda: len(session.updates) == 40)
        result = await session.prompt("go")
        assert result.text == "live"
        lines = _agent_lines(client)[1:]
        assert lines[0].get("id") == 2, "the session/new answer comes first"
        texts = [
            line["params"]["update"]["content"][0]["text"][:2]  # type: ignore[index]
            for line in lines[1:41]
        ]
        assert texts == [f"{index:02d}" for index in range(40)]
