"""A pydantic-ai agent served over ACP by acpio's adapter (needs ``acpio[pydantic-ai]``).

The agent can read files, propose edits (shown as a diff, written only when the
user allows), run commands (after asking; the model gets their output), keep a
plan, count a file's words, delete a file (after asking), and use the MCP
servers the editor passes. Its session has two pickers: the model, and the mode
("Ask": tools that change something ask first; "Code": they run without asking).
The conversation and both picks survive a restart of the agent. By default it
runs offline on scripted models, so it works without an API key:

* ``read <path>`` reads a file and summarises it;
* ``write <path>`` + a newline + content proposes that edit;
* ``run <command>`` runs a shell command (after asking) and reports its output;
* ``count <path>`` counts a file's words; ``delete <path>`` deletes it (after asking);
* ``plan`` shows a three-step plan;
* ``recall`` answers with what the model sees: its name, the mode, every prompt so far;
* anything else is answered with a short thought.

With ``ACPIO_MODEL`` set to a pydantic-ai model name (for example
``openai:gpt-5-mini``, with ``pip install "pydantic-ai-slim[openai]"`` and
``OPENAI_API_KEY`` set), that model is the picker's first choice.

Run it as ``python examples/pydantic_ai_agent.py`` (ACP over stdio; asyncio).
pydantic-ai is imported only inside ``build_agent``, which the adapter runs in a
thread while the editor initializes: the agent answers ``initialize`` at once.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING

import acpio
from acpio.adapters.pydantic_ai import (
    ACPAgent,
    ModeChoice,
    ModelChoice,
    current_session,
    editor_tools,
)

if TYPE_CHECKING:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage
    from pydantic_ai.models import Model
    from pydantic_ai.models.function import AgentInfo

INSTRUCTIONS = "You are a careful coding assistant working in the user's project."

MODES = [
    ModeChoice("ask", "Ask", "Mode: ask. Ask before changing anything."),
    ModeChoice("code", "Code", "Mode: code. Make the changes directly.", auto_approve=True),
]


def _user_texts(messages: list[ModelMessage]) -> list[str]:
    from pydantic_ai.messages import ModelRequest, UserPromptPart  # noqa: PLC0415 - off the start

    texts: list[str] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart):
                    content = part.content
                    texts.append(
                        content if isinstance(content, str) else " ".join(map(str, content))
                    )
    return texts


def _mode_seen(messages: list[ModelMessage]) -> str:
    from pydantic_ai.messages import ModelRequest  # noqa: PLC0415 - off the start

    last = messages[-1]
    instructions = last.instructions if isinstance(last, ModelRequest) else None
    for line in (instructions or "").splitlines():
        if line.startswith("Mode: "):
            return line.removeprefix("Mode: ").split(".")[0]
    return "none"


def scripted_model(name: str) -> Model:
    """A stand-in for an LLM: decides from the prompt which tool to call, then answers."""
    from pydantic_ai.messages import ModelRequest, ToolReturnPart  # noqa: PLC0415 - off the start
    from pydantic_ai.models.function import DeltaThinkingPart, DeltaToolCall, FunctionModel  # noqa: PLC0415 - off the start

    def call(tool: str, **args: object) -> dict[int, DeltaToolCall]:
        return {0: DeltaToolCall(name=tool, json_args=json.dumps(args))}

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[object]:
        last = messages[-1]
        returns = [p for p in last.parts if isinstance(p, ToolReturnPart)]
        if returns and isinstance(last, ModelRequest):
            yield {0: DeltaThinkingPart(content="The tool answered; I report back.")}
            for word in f"Done: {returns[0].model_response_str()}".split(" "):
                yield word + " "
            return
        texts = _user_texts(messages)
        first, _, rest = (texts[-1] if texts else "").lstrip().partition("\n")
        verb, _, argument = first.partition(" ")
        if verb == "read" and argument:
            yield call("read_file", path=argument)
        elif verb == "write" and argument:
            yield call("write_file", path=argument, content=rest)
        elif verb == "run" and argument:
            yield call("run_command", command=argument)
        elif verb == "count" and argument:
            yield call("count_words", path=argument)
        elif verb == "delete" and argument:
            yield call("delete_file", path=argument)
        elif verb == "plan":
            steps = [
                ("Read the code", "completed"),
                ("Fix the bug", "in_progress"),
                ("Test", "pending"),
            ]
            entries = [{"content": c, "status": s, "priority": "medium"} for c, s in steps]
            yield call("update_plan", entries=entries)
        elif verb == "recall":
            seen = {"model": name, "mode": _mode_seen(messages), "prompts": texts}
            yield json.dumps(seen)
        else:
            yield {0: DeltaThinkingPart(content="No tool needed for this.")}
            for word in [
                "Try ",
                "`read <path>`, ",
                "`run <command>`, ",
                "`count <path>` ",
                "or ",
                "`plan`.",
            ]:
                yield word

    return FunctionModel(stream_function=stream, model_name=name)


def count_words(path: str) -> str:
    """Count the words of a text file of the project.

    Args:
        path: The file's path, relative to the project directory.
    """
    target = Path(current_session().cwd, path)
    return f"{target.name} has {len(target.read_text(errors='replace').split())} words."


def delete_file(path: str) -> str:
    """Delete a file of the project (the user approves it first, except in Code mode).

    Args:
        path: The file's path, relative to the project directory.
    """
    target = Path(current_session().cwd, path)
    target.unlink()
    return f"Deleted {target.name}."


def build_agent() -> Agent[None, str]:
    """The pydantic-ai agent, with acpio's editor tools and two tools of its own."""
    from pydantic_ai import Agent  # noqa: PLC0415 - off the start

    agent = Agent(instructions=INSTRUCTIONS, toolsets=[editor_tools()])
    agent.tool_plain(count_words)
    agent.tool_plain(requires_approval=True)(delete_file)
    return agent


def model_choices() -> list[ModelChoice]:
    """The model picker: ``$ACPIO_MODEL`` first when set, then two scripted models."""
    choices: list[ModelChoice] = []
    if os.environ.get("ACPIO_MODEL"):
        choices.append(ModelChoice("env", os.environ["ACPIO_MODEL"], os.environ["ACPIO_MODEL"]))

    def scripted(name: str) -> Callable[[], Model]:
        return lambda: scripted_model(name)

    choices.append(ModelChoice("scripted", "Scripted", scripted("scripted")))
    choices.append(ModelChoice("scripted-2", "Scripted (second)", scripted("scripted-2")))
    return choices


def build() -> ACPAgent[None]:
    """The ACP agent: the pydantic-ai agent is built in a thread once the editor connects."""
    return ACPAgent(
        build_agent,
        info=acpio.Implementation(name="pydantic-ai-example", version="1.0.0"),
        models=model_choices(),
        modes=MODES,
    )


if __name__ == "__main__":
    acpio.run(build())
