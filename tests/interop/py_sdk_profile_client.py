"""One turn through the official Python SDK client, reporting what the SDK's client state holds.

Usage: ``python py_sdk_profile_client.py --agent FILE --prompt TEXT --choose KIND --result FILE``,
run with an interpreter that has ``agent-client-protocol`` 0.12.1 (``acp``). The agent file
is started with this interpreter; the client advertises the SDK's default capabilities (no
fs, no terminal), answers the permission request with the option of kind KIND, folds every
update with the SDK's own ``acp.contrib.session_state.SessionAccumulator`` and writes its
snapshot as JSON: ``text`` (the reply), ``tool_calls``, ``plan`` and ``permissions`` (the
``toolCall`` and ``options`` of each request), in the shape ``acpio.testing``'s python-sdk
profile lists.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import acp
from acp import schema
from acp.contrib.session_state import SessionAccumulator


class Client:
    """Folds updates with the SDK's accumulator and answers permissions by option kind."""

    def __init__(self, choose: str) -> None:
        self.choose = choose
        self.state = SessionAccumulator()
        self.permissions: list[dict[str, Any]] = []

    def on_connect(self, conn: Any) -> None:
        del conn

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> schema.RequestPermissionResponse:
        self.permissions.append(
            {
                "toolCall": tool_call.model_dump(mode="json", by_alias=True, exclude_none=True),
                "options": [o.model_dump(mode="json", by_alias=True) for o in options],
            }
        )
        option = next((o for o in options if o.kind == self.choose), None)
        if option is None:
            return schema.RequestPermissionResponse(
                outcome=schema.DeniedOutcome(outcome="cancelled")
            )
        return schema.RequestPermissionResponse(
            outcome=schema.AllowedOutcome(outcome="selected", option_id=option.option_id)
        )

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.state.apply(schema.SessionNotification(session_id=session_id, update=update))

    def report(self) -> dict[str, Any]:
        snapshot = self.state.snapshot()
        text = "".join(
            getattr(chunk.content, "text", "") or "" for chunk in snapshot.agent_messages
        )
        calls = [
            {
                "toolCallId": call.tool_call_id,
                "title": call.title,
                "kind": call.kind,
                "status": call.status,
                "content": [
                    item.model_dump(mode="json", by_alias=True, exclude_none=True)
                    for item in call.content or ()
                ],
            }
            for call in snapshot.tool_calls.values()
        ]
        plan = [e.model_dump(mode="json", by_alias=True) for e in snapshot.plan_entries]
        return {"text": text, "tool_calls": calls, "plan": plan, "permissions": self.permissions}


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--agent", type=Path, required=True)
    parser.add_argument("--prompt", required=True)
    parser.add_argument("--choose", required=True)
    parser.add_argument("--result", type=Path, required=True)
    parser.add_argument("--cwd", type=Path, default=None)
    args = parser.parse_args()
    workdir = args.cwd or Path(tempfile.mkdtemp(prefix="acpio-pysdk-profile-"))
    client = Client(args.choose)
    async with acp.spawn_agent_process(client, sys.executable, str(args.agent), cwd=workdir) as (
        conn,
        _process,
    ):
        await asyncio.wait_for(
            conn.initialize(
                protocol_version=acp.PROTOCOL_VERSION,
                client_capabilities=schema.ClientCapabilities(),
            ),
            60,
        )
        session = await asyncio.wait_for(conn.new_session(cwd=str(workdir), mcp_servers=[]), 20)
        await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block(args.prompt)]), 20
        )
    args.result.write_text(json.dumps(client.report(), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
