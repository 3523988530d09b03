"""An agent for the session store tests, run with ``acpio.run()`` (its default store).

``python tests/store_agent.py [asyncio|trio]``. Prompts: ``rich`` (one of every
kind of history: messages, a thought, tool calls with streamed and whole
content, terminals, plans, usage, session info), ``pid`` (answers its pid),
``count <tag> <n>`` (n messages), ``stream`` (streams message chunks until
cancelled or killed), ``chunks <n> <poisoned>`` (n message chunks, the one at
index ``poisoned`` with a ``_meta`` integer msgpack cannot hold), ``hang`` (a
tool call in progress, then waits until cancelled or killed).
"""

from __future__ import annotations

import os
import sys

import anyio
from msgspec import UNSET

import acpio
from acpio import schema


async def rich_turn(session: acpio.Session) -> None:
    await session.message("hello, here is the plan")
    thought = session.thought_stream()
    for word in ("thinking ", "it ", "over"):
        await thought.write(word)
    await session.plan(
        [schema.PlanEntry(content="look", priority="high", status="in_progress")],
        plan_id="main",
    )
    async with session.tool_call(
        "Run `ls`", kind="execute", raw_input={"command": "ls", "n": 1.5, "u": "\u00e9\u2603"}
    ) as call:
        await call.append_text("one ")
        await call.append_text('two "quoted"\n')
        terminal = await call.terminal(command="ls -la")
        await terminal.write(b"total 0\n\xff\xfe raw bytes\r\n")
        await terminal.write(b"x" * 5000)
        await terminal.exit(2)
        await call.update(raw_output={"ok": False}, meta={"k": 1, "drop": None})
    call = await session.tool_call("Broken", kind="read", locations=["/tmp/a.txt"])
    await call.fail("it broke")
    standalone = await session.terminal(command="make")
    await standalone.write(b"building\n")
    await standalone.snapshot(b"replaced\n")
    await standalone.write(b"done\n")
    await standalone.exit(signal="SIGTERM")
    await session.plan(
        [
            schema.PlanEntry(content="look", priority="high", status="completed"),
            schema.PlanEntry(content="tell", priority="low", status="pending"),
        ],
        plan_id="main",
    )
    stream = session.message_stream()
    await stream.write("streamed ")
    await stream.write("answer")
    await session.usage(120, 1000, cost=schema.Cost(amount=0.25, currency="USD"))
    await session.send(schema.SessionInfoUpdate(title="A rich session"))
    await session.notice("not history")


class StoreAgent(acpio.Agent):
    """See the module docstring."""

    info = acpio.Implementation(name="store-agent", version="1.0.0")

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str | None:
        command = acpio.text_of(prompt).split()
        if command[0] == "rich":
            await rich_turn(session)
        elif command[0] == "pid":
            await session.message(str(os.getpid()))
        elif command[0] == "count":
            for index in range(int(command[2])):
                await session.message(f"{command[1]}-{index}")
        elif command[0] == "chunks":
            for index in range(int(command[1])):
                meta = {"n": 10**30} if index == int(command[2]) else UNSET
                text = schema.TextContent(text=f"<{index}>", meta=meta)
                await session.send(schema.AgentMessageChunk(message_id="chunks", content=text))
        elif command[0] == "hang":
            call = await session.tool_call("Long job", kind="execute", tool_call_id="long")
            await call.update(status="in_progress")
            await call.append_text("working")
            await anyio.sleep_forever()
        elif command[0] == "stream":
            stream = session.message_stream("streamed")
            index = 0
            while True:
                await stream.write(f"<{index}>")
                index += 1
                await anyio.sleep(0.001)
        return None


if __name__ == "__main__":
    acpio.run(StoreAgent(), backend=sys.argv[1] if len(sys.argv) > 1 else "asyncio")
