"""The acpio bench agent: the benchmark contract (benchmarks/README.md) written with acpio.

It uses the SDK the way an agent author would: a ToolCallHandle for ``notify``,
a MessageStream for ``reply``, a TerminalHandle for ``terminal``,
``request_permission`` for ``permission``.
"""

from __future__ import annotations

from collections.abc import Iterator

import acpio

PATTERN = bytes(range(256))


def _pattern(total: int, chunk: int) -> Iterator[memoryview]:
    """The writes of ``terminal BYTES CHUNK``: ``bytes(range(256))`` repeated, CHUNK at a time.

    Views into one block (no copy, like ``Buffer.subarray`` in the TypeScript
    agent), so the agent's memory does not grow with BYTES.
    """
    block = memoryview(PATTERN * (chunk // len(PATTERN) + 2))
    offset = 0
    while offset < total:
        size = min(chunk, total - offset)
        start = offset % len(PATTERN)
        yield block[start : start + size]
        offset += size


class BenchAgent(acpio.Agent):
    """Answers ``notify N``, ``reply N``, ``terminal BYTES CHUNK`` and ``permission N`` prompts."""

    info = acpio.Implementation(name="acpio-bench-agent", version=acpio.__version__)

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        words = acpio.text_of(prompt).split()
        if words[0] == "notify":
            call = await session.tool_call("bench", tool_call_id="bench")
            for i in range(int(words[1])):
                await call.append_text(f"chunk {i}")
            await call.complete()
        elif words[0] == "reply":
            stream = session.message_stream()
            for i in range(int(words[1])):
                await stream.write(f"chunk {i}")
        elif words[0] == "terminal":
            # Shown in a tool call, as agents show a command's output (v1 can show it only so).
            call = await session.tool_call("bench", tool_call_id="bench", kind="execute")
            terminal = await call.terminal(terminal_id="t1", command="bench")
            for data in _pattern(int(words[1]), int(words[2])):
                await terminal.write(data)
            await terminal.exit(0)
            await call.complete()
        elif words[0] == "permission":
            call = await session.tool_call("bench", tool_call_id="bench")
            option = acpio.permission.option("allow", "Allow", "allow_once")
            for _ in range(int(words[1])):
                outcome = await call.request_permission([option], title="bench")
                assert outcome.allowed
            await call.complete()
        return "end_turn"


if __name__ == "__main__":
    acpio.run(BenchAgent())
