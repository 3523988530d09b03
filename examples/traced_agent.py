"""An agent whose turns show up as traces: run it with ``ACPIO_OTEL=1`` (see docs/tracing.md).

With ``pip install 'acpio[otel]'`` and the standard OpenTelemetry environment, for example::

    OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 OTEL_SERVICE_NAME=word-counter \\
        python examples/traced_agent.py

each prompt turn is exported as a span ``invoke_agent word-counter``, its tool call as
``execute_tool count_words`` and the question to the user as ``wait_for_user permission``;
a client that sends ``_meta.traceparent`` with the prompt sees them in its own trace.
The agent code has nothing to do with tracing: acpio makes the spans where turns,
tool calls and questions happen. Without the environment nothing of OpenTelemetry
is imported.

Prompts: ``count some words`` counts them (asking first when the text says
``please ask``); ``wait`` starts a tool call that runs until the turn is cancelled.
"""

from __future__ import annotations

import anyio

import acpio


class WordCounter(acpio.Agent):
    """Counts the words of each prompt in a tool call named ``count_words``."""

    info = acpio.Implementation(name="word-counter", version="1.0.0", title="Word counter")

    def model_provider(self, session: acpio.Session) -> str | None:
        # No model answers here; an LLM agent names its provider ("openai", ...).
        return "word-counter"

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        text = acpio.text_of(prompt)
        # ``name`` is what traces show (low cardinality); the title is for the user.
        async with session.tool_call(f"Count the words of {text!r}", name="count_words") as call:
            if text == "wait":
                await anyio.sleep_forever()  # until session/cancel
            if "please ask" in text:
                outcome = await call.request_permission()
                if not outcome.allowed:
                    await call.fail("not allowed")
                    return "end_turn"
            count = len(text.split())
            await call.complete(raw_output={"words": count})
        await session.message(f"{count} words")
        return "end_turn"


if __name__ == "__main__":
    acpio.run(WordCounter())
