"""An agent that remembers a session's prompts in its durable agent state (replica tests).

Every prompt is appended to ``session.agent_state["prompts"]``
(:meth:`acpio.Session.save_agent_state`), and the reply says what it heard and
every prompt the session had before, with the pid of the process that answered:
``heard <text>; before: [<earlier prompts>]; pid <pid>``. A session reopened
in another process (another replica) therefore shows, in its next reply,
whether the state saved by the first process came with it.
"""

from __future__ import annotations

import json
import os

import acpio


class MemoAgent(acpio.Agent):
    """See the module docstring."""

    info = acpio.Implementation(name="memo-agent", version="1.0.0")

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        text = acpio.text_of(prompt)
        state = session.agent_state
        before = list(state["prompts"]) if isinstance(state, dict) else []
        await session.save_agent_state({"prompts": [*before, text]})
        await session.message(f"heard {text}; before: {json.dumps(before)}; pid {os.getpid()}")
        return "end_turn"
