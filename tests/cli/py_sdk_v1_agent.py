"""An ACP v1 agent built on the official Python SDK (agent-client-protocol 0.12.1, ``acp``).

For ``acpio check``'s tests: an agent that serves only v1, as every agent on that SDK does.
``python py_sdk_v1_agent.py latest`` answers ``initialize`` with the SDK's protocol version
(1) whatever was asked, as the SDK's ``examples/agent.py`` does; ``echo`` answers with the
requested version, as its ``examples/echo_agent.py`` does (so a draft v2 ``initialize`` gets
``protocolVersion: 2`` in v1's shape); ``refuse`` answers any other version than 1 with
error -32022. A prompt is answered with ``you said: TEXT`` after
half a second of work that ``session/cancel`` stops.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import acp
from acp import schema

MODE = sys.argv[1] if len(sys.argv) > 1 else "latest"
WORK_SECONDS = 0.5


class SdkAgent:
    """A v1 agent in the SDK's style: one method per ACP method."""

    def __init__(self) -> None:
        self._conn: Any = None
        self._sessions = 0
        self._cancelled: dict[str, asyncio.Event] = {}

    def on_connect(self, conn: Any) -> None:
        self._conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> schema.InitializeResponse:
        if MODE == "refuse" and protocol_version != acp.PROTOCOL_VERSION:
            data = {"requested": protocol_version, "supported": [acp.PROTOCOL_VERSION]}
            raise acp.RequestError(-32022, "Unsupported protocol version", data)
        return schema.InitializeResponse(
            protocol_version=protocol_version if MODE == "echo" else acp.PROTOCOL_VERSION,
            agent_info=schema.Implementation(name="py-sdk-v1-agent", version="0.12.1"),
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> schema.NewSessionResponse:
        self._sessions += 1
        return schema.NewSessionResponse(session_id=f"sdk-{self._sessions}")

    async def prompt(
        self, session_id: str, prompt: list[Any], **kwargs: Any
    ) -> schema.PromptResponse:
        cancelled = self._cancelled[session_id] = asyncio.Event()
        text = "".join(getattr(block, "text", "") for block in prompt)
        await self._conn.session_update(
            session_id, acp.update_agent_message_text(f"you said: {text}")
        )
        try:
            await asyncio.wait_for(cancelled.wait(), WORK_SECONDS)
        except TimeoutError:
            return schema.PromptResponse(stop_reason="end_turn")
        return schema.PromptResponse(stop_reason="cancelled")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        if session_id in self._cancelled:
            self._cancelled[session_id].set()


if __name__ == "__main__":
    asyncio.run(acp.run_agent(SdkAgent()))  # type: ignore[arg-type]
