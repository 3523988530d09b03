"""An agent whose long reply never ends on its own: the replica serving it dies mid-reply.

Every prompt is appended to ``session.agent_state["prompts"]`` (the durable state a
replica that takes the session over gets). A prompt ``long reply N`` is answered with
a streamed message of ``N`` chunks ``part <i> of pid <pid>; `` (one messageId, numbered
from 0), after which the turn waits and never ends: the test kills the serving process
in the middle of that turn, at whatever point of the stream it chooses. Any other prompt
is answered at once with one message ``heard <text>; before: <earlier prompts as JSON>;
pid <pid>``, so a reply on another replica shows whether the state came with the
session.
"""

from __future__ import annotations

import json
import os

import anyio

import acpio

LONG = "long reply "


def part(index: int, pid: int) -> str:
    """The text of chunk ``index`` of a long reply streamed by process ``pid``."""
    return f"part {index} of pid {pid}; "


class LongReplyAgent(acpio.Agent):
    """See the module docstring."""

    info = acpio.Implementation(name="long-reply-agent", version="1.0.0")

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        text = acpio.text_of(prompt)
        state = session.agent_state
        before = list(state["prompts"]) if isinstance(state, dict) else []
        await session.save_agent_state({"prompts": [*before, text]})
        if text.startswith(LONG):
            stream = session.message_stream()
            for index in range(int(text.removeprefix(LONG))):
                await stream.write(part(index, os.getpid()))
            await anyio.sleep_forever()  # the rest of the reply never comes
        await session.message(f"heard {text}; before: {json.dumps(before)}; pid {os.getpid()}")
        return "end_turn"
