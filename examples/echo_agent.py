"""The smallest useful ACP agent: it streams the prompt's text back to the client.

Run it as ``python examples/echo_agent.py``; it speaks ACP (draft v2) over
stdin and stdout, so any ACP client can launch it. Everything protocol-shaped
is done by acpio: ``initialize`` (version negotiation, capabilities),
sessions (new, list, resume with replay, close), the prompt lifecycle
(``{messageId}`` at once, ``user_message``, ``running``, then exactly one
``idle`` with the stop reason), queued prompts and cancellation. The agent
only answers prompts.
"""

from __future__ import annotations

import anyio.lowlevel

import acpio


class EchoAgent(acpio.Agent):
    """Replies to every prompt with the same text, streamed word by word."""

    # The protocol requires a name and a version in the initialize response.
    info = acpio.Implementation(name="echo-agent", version="1.0.0", title="Echo agent")

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        # A prompt is a list of content blocks; text_of joins its text blocks.
        text = acpio.text_of(prompt) or "(the prompt had no text)"
        # A message stream sends agent_message_chunk updates that share one messageId,
        # so the client shows them as a single growing message.
        stream = session.message_stream()
        for index, word in enumerate(text.split(" ")):
            await stream.write(word if index == 0 else " " + word)
            # Sending returns at once while the client keeps up, so yield here:
            # session/cancel interrupts the turn at this point, and acpio then
            # reports it cancelled (nothing of it is sent after that).
            await anyio.lowlevel.checkpoint()
        # The stop reason of the turn; acpio sends it on the final idle state_update.
        return "end_turn"


if __name__ == "__main__":
    acpio.run(EchoAgent())
