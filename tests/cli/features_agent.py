"""A test agent for `acpio inspect`: config options, slash commands and elicitation."""

from __future__ import annotations

import acpio

FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name"},
        "color": {"type": "string", "enum": ["red", "blue"], "default": "blue"},
    },
    "required": ["name"],
}


class FeaturesAgent(acpio.Agent):
    info = acpio.Implementation(name="features-agent", version="1.0.0")
    config_options = (
        acpio.select_option("model", "Model", ["fast", "smart"], category="model"),
        acpio.boolean_option("thinking", "Thinking", category="thought_level"),
    )
    commands = (acpio.command("compact", "Summarize the conversation", hint="focus"),)

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        text = acpio.text_of(prompt)
        if text == "ask":
            result = await session.elicit("Who are you?", FORM)
            await session.message(f"answer: {result.action} {result.content}")
        elif text == "usage":
            await session.usage(1500, 200000, cost=acpio.schema.Cost(amount=0.0123, currency="USD"))
            await session.usage(2500, 200000, cost=acpio.schema.Cost(amount=0.0456, currency="USD"))
            await session.message("used some tokens")
        elif text == "url":
            result = await session.elicit_url("Sign in", "https://example.com/login")
            if result.accepted and result.elicitation_id is not None:
                await session.complete_elicitation(result.elicitation_id)
            await session.message(f"url: {result.action}")
        else:
            await session.message(f"model is {session.config['model']}")
        return "end_turn"

    async def command(self, session: acpio.Session, invocation: acpio.CommandInvocation) -> str:
        await session.config.set("thinking", True)
        await session.message(f"compacting (focus {invocation.input!r})")
        return "end_turn"


if __name__ == "__main__":
    acpio.run(FeaturesAgent())
