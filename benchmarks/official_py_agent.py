"""Bench agent written with the official Python ACP SDK (``agent-client-protocol``).

That SDK speaks protocol v1 only (0.12.1 is the latest release), so this agent
does the bench contract in v1 terms, written the way the SDK's own examples
write an agent (an ``acp.Agent`` subclass, ``run_agent``, the ``acp.helpers``
update builders, ``conn.session_update``/``conn.request_permission``):

- the turn ends with the ``session/prompt`` response ``{stopReason}`` (v1 has
  no ``messageId`` response, no ``user_message`` echo and no ``state_update``);
- ``notify N``: ``tool_call`` (id/title "bench"), then N ``tool_call_update``
  whose content holds the one item ``chunk <i>`` (v1 has no append-only
  ``tool_call_content_chunk``: a v1 client replaces the content each time),
  then a final ``tool_call_update`` with status ``completed``;
- ``reply N``: N ``agent_message_chunk`` updates of one text block ``chunk <i>``
  (``update_agent_message(text_block(...))``, as the SDK's example agent streams);
- ``terminal BYTES CHUNK``: v1 has no display-only terminal (its terminals are
  processes the *client* runs), so each write is one ``tool_call_update`` whose
  content is a text block holding the write's bytes as base64 (the same
  encoding as v2's ``terminal_output_chunk``), then ``completed``;
- ``permission N``: N v1 ``session/request_permission`` requests with
  ``toolCall: {toolCallId: "bench", title: "bench"}`` and one ``allow_once``
  option, each awaited.

Runs in benchmarks/.venv-peers (see setup.sh), never in acpio's environment.
"""

from __future__ import annotations

import asyncio
import base64
import uuid
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    Agent,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    run_agent,
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message,
    update_tool_call,
)
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    Implementation,
    PermissionOption,
    ToolCallUpdate,
)

PATTERN = bytes(range(256))


class BenchAgent(Agent):
    _conn: Client

    def __init__(self) -> None:
        self._sessions: set[str] = set()

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(),
            agent_info=Implementation(name="acpio-bench-official-py", version="1.0.0"),
        )

    async def new_session(
        self, cwd: str, mcp_servers: Any = None, **kwargs: Any
    ) -> NewSessionResponse:
        session_id = uuid.uuid4().hex
        self._sessions.add(session_id)
        return NewSessionResponse(session_id=session_id)

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        text = " ".join(getattr(block, "text", "") for block in prompt)
        kind, *args = text.split()
        nums = [int(a) for a in args]
        conn = self._conn
        if kind == "notify":
            await conn.session_update(session_id, start_tool_call("bench", "bench"))
            for i in range(nums[0]):
                update = update_tool_call("bench", content=[tool_content(text_block(f"chunk {i}"))])
                await conn.session_update(session_id, update)
            await conn.session_update(session_id, update_tool_call("bench", status="completed"))
        elif kind == "reply":
            for i in range(nums[0]):
                await conn.session_update(
                    session_id, update_agent_message(text_block(f"chunk {i}"))
                )
        elif kind == "terminal":
            total, size = nums
            rep = memoryview(PATTERN * (size // 256 + 2))  # views, as in the other agents
            await conn.session_update(session_id, start_tool_call("bench", "bench", kind="execute"))
            for off in range(0, total, size):
                start = off & 255
                data = base64.b64encode(rep[start : start + min(size, total - off)]).decode("ascii")
                update = update_tool_call("bench", content=[tool_content(text_block(data))])
                await conn.session_update(session_id, update)
            await conn.session_update(session_id, update_tool_call("bench", status="completed"))
        elif kind == "permission":
            options = [PermissionOption(option_id="allow", name="Allow", kind="allow_once")]
            for i in range(nums[0]):
                response = await conn.request_permission(
                    session_id=session_id,
                    tool_call=ToolCallUpdate(tool_call_id="bench", title="bench"),
                    options=options,
                )
                outcome = response.outcome
                if getattr(outcome, "option_id", None) != "allow":
                    raise RuntimeError(f"permission {i} not granted: {outcome!r}")
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        pass


async def main() -> None:
    await run_agent(BenchAgent())


if __name__ == "__main__":
    asyncio.run(main())
