"""An agent with durable state for the restart tests, run with ``acpio.run()``.

``python tests/state_agent.py [asyncio|trio]``. Its SQLite store is the file
``ACPIO_SESSION_STORE`` names, with a flush interval of an hour: only a turn's
end (or a config change) makes the writer commit, which the tests rely on. A
``postgresql://`` URL there opens the PostgreSQL store instead (the tests give
it ``acpio_flush_interval=3600``).
``STATE_AGENT_VERSION`` sets its ``agent_state_version`` (default 1);
``STATE_AGENT_MIGRATE=1`` makes it migrate older states (it refuses otherwise).
``STATE_AGENT_MODES=1`` gives it a second option, ``mode`` (category ``mode``: v1's
modes), whose value ``recall`` answers too.

Prompts: ``remember <word>`` (appends the word to the saved list), ``recall``
(answers the state and the model as JSON), ``pid`` (answers its pid). On
resume it reports, as a message, the state it found before its hook returned.
"""

from __future__ import annotations

import os
import sys

import msgspec

import acpio
from acpio.store import SqliteSessionStore, open_session_store


class StateAgent(acpio.Agent):
    """See the module docstring."""

    info = acpio.Implementation(name="state-agent", version="1.0.0")
    config_options = (
        acpio.select_option("model", "Model", ["fast", "smart", "huge"]),
        *(
            [acpio.select_option("mode", "Mode", ["ask", "code"], category="mode")]
            if os.environ.get("STATE_AGENT_MODES") == "1"
            else []
        ),
    )
    agent_state_version = int(os.environ.get("STATE_AGENT_VERSION", "1"))

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str | None:
        command = acpio.text_of(prompt).split()
        if command[0] == "remember":
            state = session.agent_state
            words = list(state["words"]) if isinstance(state, dict) else []
            await session.save_agent_state({"words": [*words, command[1]]})
        elif command[0] == "recall":
            answer = {"state": session.agent_state, "model": session.config["model"]}
            if "mode" in session.config:
                answer["mode"] = session.config["mode"]
            await session.message(msgspec.json.encode(answer).decode())
        elif command[0] == "pid":
            await session.message(str(os.getpid()))
        return None

    async def on_resume_session(self, session: acpio.Session) -> None:
        seen = msgspec.json.encode({"resumed_with": session.agent_state}).decode()
        await session.message(seen)

    async def migrate_agent_state(
        self, session: acpio.Session, version: int, state: object
    ) -> object:
        if os.environ.get("STATE_AGENT_MIGRATE") != "1":
            return await super().migrate_agent_state(session, version, state)
        assert isinstance(state, dict)
        return {"words": state["words"], "migrated_from": version}


if __name__ == "__main__":
    where = os.environ["ACPIO_SESSION_STORE"]
    store = (
        open_session_store(where)
        if where.startswith("postgresql://")
        else SqliteSessionStore(where, flush_interval=3600.0)
    )
    try:
        acpio.run(
            StateAgent(), store=store, backend=sys.argv[1] if len(sys.argv) > 1 else "asyncio"
        )
    finally:
        store.close()
