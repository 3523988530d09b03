"""SessionView: config options and slash commands from the session answers and the updates."""

from __future__ import annotations

import msgspec
import pytest

import acpio
from acpio import schema
from acpio.testing import MockClient, SessionView

pytestmark = pytest.mark.anyio

MODEL = acpio.select_option("model", "Model", ["a", "b"])
COMPACT = acpio.command("compact", "Compact")


def test_setup_answer_then_updates() -> None:
    view = SessionView("s")
    view.apply_setup([MODEL], [COMPACT])
    assert view.config_values == {"model": "a"}
    assert view.command_names == ["compact"]
    newer = schema.ConfigOptionUpdate(config_options=[acpio.boolean_option("t", "T")])
    view.apply(newer)
    assert view.config_values == {"t": False}
    # An answer read after a newer update (held updates arrive right after it) keeps the update.
    view.apply_setup([MODEL], msgspec.UNSET, later=[newer])
    assert view.config_values == {"t": False}
    assert view.available_commands is None
    view.apply(schema.AvailableCommandsUpdate(available_commands=[COMPACT]))
    assert view.command_names == ["compact"]


async def test_view_shows_config_commands_plans_and_usage() -> None:
    class Reporting(acpio.Agent):
        config_options = (MODEL,)

        async def on_new_session(self, session: acpio.Session) -> None:
            await session.set_commands([COMPACT])
            await session.plan(
                [schema.PlanEntry(content="look", priority="high", status="pending")]
            )

        async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> None:
            await session.config.set("model", "b")
            await session.set_commands([])
            await session.usage(10, 100)

    async with MockClient(Reporting()) as client:
        session = await client.new_session()
        await client.wait_for(lambda: session.view.plans)
        assert session.view.command_names == ["compact"]
        assert [e.content for e in session.view.plans["plan"].entries] == ["look"]
        await session.prompt("go")
        view = session.view
        assert view.config_values == {"model": "b"}
        assert view.command_names == []
        assert view.usage is not None and (view.usage.used, view.usage.size) == (10, 100)
