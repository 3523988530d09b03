"""A pydantic-ai agent served over ACP by acpio's adapter (needs ``acpio[pydantic-ai]``).

The agent can read files, propose edits (shown as a diff, written only when the
user allows), run commands (after asking; the model gets their output), keep a
plan, and use the MCP servers the editor passes. By default
it runs offline on a scripted model, so it works without an API key:

* ``read <path>`` reads a file and summarises it;
* ``write <path>`` + a newline + content proposes that edit;
* ``run <command>`` runs a shell command (after asking) and reports its output;
* ``plan`` shows a three-step plan; anything else is answered with a short thought.

With ``ACPIO_MODEL`` set to a pydantic-ai model name (for example
``openai:gpt-5-mini``, with ``pip install "pydantic-ai-slim[openai]"`` and
``OPENAI_API_KEY`` set), the same agent runs on that model instead.

Run it as ``python examples/pydantic_ai_agent.py`` (ACP over stdio; asyncio).
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaThinkingPart, DeltaToolCall, FunctionModel

import acpio
from acpio.adapters.pydantic_ai import ACPAgent, editor_tools

INSTRUCTIONS = "You are a careful coding assistant working in the user's project."


def _last_user_text(messages: list[ModelMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart):
                    content = part.content
                    return content if isinstance(content, str) else " ".join(map(str, content))
    return ""


async def scripted_model(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[object]:
    """A stand-in for an LLM: decides from the prompt which tool to call, then answers."""
    last = messages[-1]
    returns = [p for p in last.parts if isinstance(p, ToolReturnPart)]
    if returns and isinstance(last, ModelRequest):
        yield {0: DeltaThinkingPart(content="The tool answered; I report back.")}
        for word in f"Done: {returns[0].content}".split(" "):
            yield word + " "
        return
    text = _last_user_text(messages).lstrip()
    first, _, rest = text.partition("\n")
    verb, _, path = first.partition(" ")
    if verb == "read" and path:
        yield {0: DeltaToolCall(name="read_file", json_args=json.dumps({"path": path}))}
    elif verb == "write" and path:
        args = json.dumps({"path": path, "content": rest})
        yield {0: DeltaToolCall(name="write_file", json_args=args)}
    elif verb == "run" and path:
        command = first[len("run ") :]
        yield {0: DeltaToolCall(name="run_command", json_args=json.dumps({"command": command}))}
    elif verb == "plan":
        steps = [
            ("Read the code", "completed"),
            ("Fix the bug", "in_progress"),
            ("Test", "pending"),
        ]
        entries = [{"content": c, "status": s, "priority": "medium"} for c, s in steps]
        yield {0: DeltaToolCall(name="update_plan", json_args=json.dumps({"entries": entries}))}
    else:
        yield {0: DeltaThinkingPart(content="No tool needed for this.")}
        for word in [
            "Try ",
            "`read <path>`, ",
            "`write <path>`, ",
            "`run <command>` ",
            "or ",
            "`plan`.",
        ]:
            yield word


def build_agent() -> ACPAgent:
    """The pydantic-ai agent, with acpio's editor tools, wrapped for ACP."""
    model = os.environ.get("ACPIO_MODEL") or FunctionModel(stream_function=scripted_model)
    agent = Agent(model, instructions=INSTRUCTIONS, toolsets=[editor_tools()])
    return ACPAgent(agent, info=acpio.Implementation(name="pydantic-ai-example", version="1.0.0"))


if __name__ == "__main__":
    acpio.run(build_agent())
