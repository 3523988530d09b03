"""Every kind of update the agent sends passes the one check of enum values.

The kinds are enumerated from the generated schema (every variant of
``SessionUpdate``): each is either one that can hold no enum value at all (as
the schema's annotations say, and as this file says by hand, so the two must
agree) or one with enum values, for which every public API that sends it is
given a bad value and must raise ``LocalProtocolError`` before anything of it
is on the wire. The streaming fast paths (a reply's or a tool call's text, a
terminal's bytes) send pre-encoded lines of update shapes proven free of enum
values when their module is imported; a turn that uses them all shows that
they send only those shapes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import msgspec
import pytest

import acpio
from acpio import schema
from acpio._protocol import values
from acpio._protocol.values import can_hold_enums, check_frame, check_update
from acpio.schema import _generated as generated
from acpio.testing import MockClient

pytestmark = pytest.mark.anyio

BAD = "no-such-value"
Scenario = Callable[[acpio.Session], Awaitable[object]]

VARIANTS = sorted(
    (
        cls
        for cls in vars(generated).values()
        if isinstance(cls, type)
        and issubclass(cls, msgspec.Struct)
        and issubclass(cls, generated._SessionUpdateBase)  # pyright: ignore[reportPrivateUsage]
    ),
    key=lambda cls: cls.__name__,
)


def bad_text() -> schema.TextContent:
    # ``audience`` is a list of the closed enum Role.
    return schema.TextContent(text="x", annotations=schema.Annotations(audience=[BAD]))


async def _call(session: acpio.Session) -> acpio.ToolCallHandle:
    return await session.tool_call("t", kind="read")


async def _update_kind(session: acpio.Session) -> None:
    await (await _call(session)).update(kind=BAD)


async def _update_status(session: acpio.Session) -> None:
    await (await _call(session)).update(status=BAD)


async def _update_content(session: acpio.Session) -> None:
    await (await _call(session)).update(content=[schema.Content(content=bad_text())])


async def _append(session: acpio.Session) -> None:
    await (await _call(session)).append(schema.Content(content=bad_text()))


async def _tool_call_kind(session: acpio.Session) -> None:
    await session.tool_call("t", kind=BAD)


async def _tool_call_status(session: acpio.Session) -> None:
    await session.tool_call("t", status=BAD)


async def _config_category(session: acpio.Session) -> None:
    option = schema.SessionConfigBoolean(config_id="x", name="X", current_value=False, category=BAD)
    await session.config.replace([option])


def _plan_entry(**fields: str) -> schema.PlanEntry:
    return schema.PlanEntry(**{"content": "c", "priority": "low", "status": "pending", **fields})


#: Per kind of update: the public APIs that take its enum values (each given a bad one),
#: or None for a kind that can hold no enum value.
PATHS: dict[str, list[Scenario] | None] = {
    "AgentMessage": [
        lambda s: s.message(bad_text()),
        lambda s: s.send(schema.AgentMessage(message_id="m", content=[bad_text()])),
    ],
    "AgentMessageChunk": [
        lambda s: s.message_stream().write(bad_text()),
        lambda s: s.send(schema.AgentMessageChunk(message_id="m", content=bad_text())),
    ],
    "AgentThought": [lambda s: s.thought(bad_text())],
    "AgentThoughtChunk": [lambda s: s.thought_stream().write(bad_text())],
    "AvailableCommandsUpdate": None,
    "CompactionSummaryChunk": [
        lambda s: s.send(schema.CompactionSummaryChunk(compaction_id="c", content=bad_text()))
    ],
    "CompactionUpdate": [
        lambda s: s.send(schema.CompactionUpdate(compaction_id="c", status=BAD)),
    ],
    "ConfigOptionUpdate": [
        _config_category,
        lambda s: s.send(
            schema.ConfigOptionUpdate(
                config_options=[
                    schema.SessionConfigBoolean(
                        config_id="x", name="X", current_value=False, category=BAD
                    )
                ]
            )
        ),
    ],
    "IdleStateUpdate": [lambda s: s.send(schema.IdleStateUpdate(stop_reason=BAD))],
    "Notice": [lambda s: s.notice("n", severity=BAD)],
    "PlanUpdate": [
        lambda s: s.plan([_plan_entry(priority=BAD)]),
        lambda s: s.plan([_plan_entry(status=BAD)]),
    ],
    "RequiresActionStateUpdate": None,
    "RunningStateUpdate": None,
    "SessionInfoUpdate": None,
    "TerminalOutputChunk": None,
    "TerminalUpdate": None,
    "ToolCallContentChunk": [_append],
    "ToolCallUpdate": [
        _tool_call_kind,
        _tool_call_status,
        _update_kind,
        _update_status,
        _update_content,
        lambda s: s.send(schema.ToolCallUpdate(tool_call_id="t", kind=BAD)),
    ],
    "UsageUpdate": None,
    "UserMessage": [lambda s: s.send(schema.UserMessage(message_id="m", content=[bad_text()]))],
    "UserMessageChunk": [
        lambda s: s.send(schema.UserMessageChunk(message_id="m", content=bad_text()))
    ],
}

SCENARIOS = [
    pytest.param(scenario, id=f"{kind}-{index}")
    for kind, scenarios in PATHS.items()
    for index, scenario in enumerate(scenarios or ())
]


def test_every_kind_of_update_of_the_schema_is_listed() -> None:
    assert sorted(PATHS) == [cls.__name__ for cls in VARIANTS]


@pytest.mark.parametrize("cls", VARIANTS, ids=lambda cls: cls.__name__)
def test_the_kinds_without_enum_values_are_those_the_schema_says(cls: type) -> None:
    assert can_hold_enums(cls) is (PATHS[cls.__name__] is not None)


class Scripted(acpio.Agent):
    def __init__(self, body: Scenario) -> None:
        self.body = body
        self.raised: list[acpio.LocalProtocolError] = []

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        try:
            await self.body(session)
        except acpio.LocalProtocolError as exc:
            self.raised.append(exc)
        return "end_turn"


@pytest.mark.parametrize("scenario", SCENARIOS)
async def test_a_bad_value_raises_before_anything_is_on_the_wire(scenario: Scenario) -> None:
    agent = Scripted(scenario)
    async with MockClient(agent) as client:
        session = await client.new_session()
        await session.prompt("go")
        wire = client.transcript.to_jsonl()
    assert len(agent.raised) == 1
    assert BAD in str(agent.raised[0])
    assert BAD.encode() not in wire


# ------------------------------------------------------------------ fast paths

FAST_KINDS = {"agent_message_chunk", "agent_thought_chunk", "tool_call_content_chunk"}


async def _fast_paths(session: acpio.Session) -> None:
    await session.message_stream().write("reply")
    await session.thought_stream().write("thinking")
    call = await session.tool_call("t", kind="read")
    await call.append_text("text")
    terminal = await session.terminal(command="true")
    await terminal.write(b"bytes")
    await terminal.flush()
    await call.complete()


async def test_the_fast_paths_send_only_shapes_proven_free_of_enum_values() -> None:
    async with MockClient(Scripted(_fast_paths)) as client:
        session = await client.new_session()
        await session.prompt("go")
        sent = [
            schema.decode(msgspec.json.encode(m["params"]["update"]), schema.SessionUpdate)  # type: ignore[index, call-overload]
            for m in client.transcript.messages("agent->client", method="session/update")
        ]
    proven = values._proven_frames  # pyright: ignore[reportPrivateUsage]
    fast = [u for u in sent if type(u) in proven]
    assert {type(u) for u in fast} == {
        schema.AgentMessageChunk,
        schema.AgentThoughtChunk,
        schema.ToolCallContentChunk,
        schema.TerminalOutputChunk,
    }
    for update in fast:
        check_update(update)


def test_a_frame_with_an_enum_value_or_spliced_into_an_enum_field_is_refused() -> None:
    with pytest.raises(acpio.LocalProtocolError, match="holds enum values"):
        check_frame(schema.ToolCallUpdate(tool_call_id="", kind="read", title=""), ("title",))
    with pytest.raises(acpio.LocalProtocolError, match="is an enum field"):
        check_frame(schema.ToolCallUpdate(tool_call_id="", kind=""), ("kind",))
    with pytest.raises(acpio.LocalProtocolError, match="not a string"):
        check_frame(schema.UsageUpdate(used=0, size=0), ("used",))
    text = schema.AgentMessageChunk(message_id="", content=bad_text())
    with pytest.raises(acpio.LocalProtocolError, match="holds enum values"):
        check_frame(text, ("content", "text"))


def test_an_enum_free_kind_costs_one_lookup() -> None:
    update = schema.TerminalOutputChunk(terminal_id="t", data="")
    check_update(update)
    assert values._holds_enums[schema.TerminalOutputChunk] is False  # pyright: ignore[reportPrivateUsage]
