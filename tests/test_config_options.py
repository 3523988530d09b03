"""Session config options: declared, sent in the answers, set by the client, changed by the agent.

Each test drives a real agent through the testing kit's MockClient with strict
conformance checking, and checks the wire where the order or shape matters.
"""

from __future__ import annotations

import contextlib

import anyio
import anyio.lowlevel
import msgspec
import pytest

import acpio
from acpio import schema
from acpio.testing import MockClient

pytestmark = pytest.mark.anyio

MODEL = acpio.select_option(
    "model",
    "Model",
    [("fast", "Fast model"), ("smart", "Smart model")],
    category="model",
)
THINKING = acpio.boolean_option("thinking", "Think harder", category="thought_level")


class ConfiguredAgent(acpio.Agent):
    config_options = (MODEL, THINKING)
    changes: list[tuple[str, str | bool]]

    def __init__(self) -> None:
        self.changes = []

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        config = session.config
        await session.message(f"model={config['model']} thinking={config['thinking']}")
        if acpio.text_of(prompt) == "switch":
            await session.config.set("model", "smart")
        return "end_turn"

    async def set_config_option(
        self, session: acpio.Session, config_id: str, value: str | bool
    ) -> None:
        self.changes.append((config_id, value))
        if config_id == "model" and value == "smart":
            # Changing the model turns thinking on: the answer carries both.
            await session.config.set("thinking", True)
        if config_id == "thinking" and value is False and session.config["model"] == "smart":
            raise acpio.RequestError.invalid_params("the smart model always thinks")


def _results(client: MockClient) -> list[dict[str, object]]:
    """The result objects the agent answered with, in wire order."""
    found = []
    for entry in client.transcript:
        message = msgspec.json.decode(entry.data)
        if entry.direction == "agent->client" and isinstance(message.get("result"), dict):
            found.append(message["result"])
    return found


async def test_options_are_in_the_new_session_answer() -> None:
    async with MockClient(ConfiguredAgent()) as client:
        session = await client.new_session()
        assert session.view.config_values == {"model": "fast", "thinking": False}
        result = next(r for r in _results(client) if "sessionId" in r)
        options = result["configOptions"]
        assert isinstance(options, list)
        (model, thinking) = options
        assert model["configId"] == "model" and model["type"] == "select"
        assert model["category"] == "model" and model["currentValue"] == "fast"
        assert [o["value"] for o in model["options"]] == ["fast", "smart"]
        assert thinking == {
            "type": "boolean",
            "currentValue": False,
            "configId": "thinking",
            "name": "Think harder",
            "category": "thought_level",
        }
        result_turn = await session.prompt("hi")
        assert result_turn.text == "model=fast thinking=False"


async def test_client_sets_an_option_and_gets_the_full_state() -> None:
    agent = ConfiguredAgent()
    async with MockClient(agent) as client:
        session = await client.new_session()
        state = await session.set_config_option("model", "smart")
        assert agent.changes == [("model", "smart")]
        assert {o.config_id: o.current_value for o in state} == {  # type: ignore[union-attr]
            "model": "smart",
            "thinking": True,
        }
        assert session.view.config_values == {"model": "smart", "thinking": True}
        # The answer carries the change made in the hook: no extra update was sent.
        assert not any(isinstance(u, schema.ConfigOptionUpdate) for u in session.updates)
        result = await session.prompt("hi")
        assert result.text == "model=smart thinking=True"
        await client.set_config_option(session.id, "thinking", True)


@pytest.mark.parametrize(
    ("config_id", "value", "expected"),
    [
        ("nope", "fast", "unknown config option 'nope'; this session's options are: model, thi"),
        ("model", "gpt-9", "'gpt-9' is not a value of config option 'model'; choose one of: fa"),
        ("model", True, "config option 'model' is a select"),
        ("thinking", "yes", "config option 'thinking' is a boolean"),
    ],
)
async def test_invalid_values_are_refused_and_change_nothing(
    config_id: str, value: str | bool, expected: str
) -> None:
    agent = ConfiguredAgent()
    async with MockClient(agent) as client:
        session = await client.new_session()
        with pytest.raises(acpio.RequestError) as caught:
            await session.set_config_option(config_id, value)
        assert caught.value.code == -32602
        assert expected in caught.value.message
        assert agent.changes == []
        result = await session.prompt("hi")
        assert result.text == "model=fast thinking=False"


async def test_a_refusing_hook_restores_the_previous_state() -> None:
    async with MockClient(ConfiguredAgent()) as client:
        session = await client.new_session()
        await session.set_config_option("model", "smart")
        with pytest.raises(acpio.RequestError, match="always thinks"):
            await session.set_config_option("thinking", False)
        result = await session.prompt("hi")
        assert result.text == "model=smart thinking=True"


async def test_unknown_value_type_is_refused() -> None:
    async with MockClient(ConfiguredAgent()) as client:
        session = await client.new_session()
        with pytest.raises(acpio.RequestError) as caught:
            await client.request(
                "session/set_config_option",
                {"sessionId": session.id, "configId": "model", "type": "_range", "value": 3},
            )
        assert caught.value.code == -32602
        assert 'use "id" for selects or "boolean" for booleans' in caught.value.message


async def test_unknown_session_is_refused() -> None:
    async with MockClient(ConfiguredAgent()) as client:
        with pytest.raises(acpio.RequestError) as caught:
            await client.set_config_option("sess_missing", "model", "fast")
        assert caught.value.code == -32002


async def test_agent_changes_an_option_itself() -> None:
    async with MockClient(ConfiguredAgent()) as client:
        session = await client.new_session()
        result = await session.prompt("switch")
        updates = [u for u in result.updates if isinstance(u, schema.ConfigOptionUpdate)]
        assert len(updates) == 1
        assert session.view.config_values == {"model": "smart", "thinking": False}
        # Setting the same value again sends nothing.
        await session.prompt("switch")
        assert sum(isinstance(u, schema.ConfigOptionUpdate) for u in session.updates) == 1


class PerSessionAgent(acpio.Agent):
    async def on_new_session(self, session: acpio.Session) -> None:
        # Per session: the options depend on the working directory, say.
        await session.config.replace(
            [acpio.select_option("mode", "Mode", ["ask", "code"], default="code", category="mode")]
        )

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        await session.message(str(session.config["mode"]))
        return "end_turn"


async def test_per_session_options_from_on_new_session_go_in_the_answer() -> None:
    async with MockClient(PerSessionAgent()) as client:
        session = await client.new_session()
        assert session.view.config_values == {"mode": "code"}
        assert session.updates == []  # no update: the answer carried them
        assert (await session.prompt("x")).text == "code"


async def test_options_are_in_the_resume_answer() -> None:
    async with MockClient(ConfiguredAgent()) as client:
        session = await client.new_session()
        await session.set_config_option("model", "smart")
        await session.resume(replay=True)
        assert session.view.config_values == {"model": "smart", "thinking": True}


async def test_agent_without_options_advertises_none() -> None:
    class Plain(acpio.Agent):
        async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> None:
            return None

    async with MockClient(Plain()) as client:
        session = await client.new_session()
        assert session.view.config_options is None
        with pytest.raises(acpio.RequestError) as caught:
            await session.set_config_option("model", "x")
        assert "this session's options are: none" in caught.value.message


def test_declarations_are_checked() -> None:
    with pytest.raises(acpio.LocalProtocolError, match="does not offer"):
        acpio.select_option("model", "Model", ["a", "b"], default="c")
    with pytest.raises(acpio.LocalProtocolError, match="offers no values"):
        acpio.select_option("model", "Model", [])
    with pytest.raises(acpio.LocalProtocolError, match="twice"):
        acpio.select_option("model", "Model", ["a", "a"])
    with pytest.raises(acpio.LocalProtocolError, match="custom values must start with '_'"):
        acpio.boolean_option("x", "X", category="speed")
    assert acpio.boolean_option("x", "X", category="_speed").category == "_speed"
    grouped = acpio.select_option(
        "model",
        "Model",
        [
            schema.SessionConfigSelectGroup(
                group_id="g",
                name="G",
                options=[schema.SessionConfigSelectOption(value="a", name="A")],
            )
        ],
    )
    assert grouped.current_value == "a"


async def test_invalid_declared_options_fail_the_new_session_clearly() -> None:
    class Twice(acpio.Agent):
        config_options = (THINKING, THINKING)

    async with MockClient(Twice()) as client:
        with pytest.raises(acpio.RequestError) as caught:
            await client.new_session()
        assert caught.value.code == -32603
        assert "config option id 'thinking' is declared twice" in caught.value.message


async def test_session_config_is_a_mapping() -> None:
    seen: dict[str, object] = {}

    class Reader(ConfiguredAgent):
        async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
            seen.update(session.config)
            seen["len"] = len(session.config)
            seen["option"] = session.config.option("model").name
            with pytest.raises(acpio.LocalProtocolError, match="choose one of"):
                await session.config.set("model", "nope")
            return "end_turn"

    async with MockClient(Reader()) as client:
        session = await client.new_session()
        await session.prompt("x")
    assert seen == {"model": "fast", "thinking": False, "len": 2, "option": "Model"}


async def test_concurrent_client_changes_are_applied_one_at_a_time() -> None:
    events: list[str] = []

    class Slow(acpio.Agent):
        config_options = (MODEL,)

        async def set_config_option(
            self, session: acpio.Session, config_id: str, value: str | bool
        ) -> None:
            events.append(f"start {value}")
            for _ in range(5):
                await anyio.lowlevel.checkpoint()
            events.append(f"end {value}")
            if value == "smart":
                raise acpio.RequestError.invalid_params("not now")

    async with MockClient(Slow()) as client:
        session = await client.new_session()

        async def change(value: str) -> None:
            with contextlib.suppress(acpio.RequestError):
                await session.set_config_option("model", value)

        async with anyio.create_task_group() as group:
            group.start_soon(change, "smart")
            group.start_soon(change, "fast")
        assert events in (
            ["start smart", "end smart", "start fast", "end fast"],
            ["start fast", "end fast", "start smart", "end smart"],
        )
        # The refused change restored what it replaced, not a stale snapshot.
        state = await session.set_config_option("model", "fast")
        assert [o.current_value for o in state] == ["fast"]  # type: ignore[union-attr]


async def test_config_options_over_v1() -> None:
    agent = ConfiguredAgent()
    async with MockClient(agent, protocol_version=1) as client:
        session = await client.new_session()
        assert session.view.config_values == {"model": "fast", "thinking": False}
        state = await session.set_config_option("model", "smart")
        assert {o.config_id: o.current_value for o in state} == {"model": "smart", "thinking": True}
        assert session.view.config_values == {"model": "smart", "thinking": True}
        result = await session.prompt("switch")
        assert result.text == "model=smart thinking=True"
    assert agent.changes == [("model", "smart")]
