"""Drives examples/signin_agent.py through sign-in with the official Python SDK's v1 client.

Usage: ``python py_sdk_signin_client.py AGENT.py STATE_DIR``, run with an interpreter that has
``agent-client-protocol`` 0.12.1 installed (it imports as ``acp``). The client announces
terminal sign-in the way shipping editors and the ACP registry's verifier do, with
``clientCapabilities._meta["terminal-auth"]``, and then does what an editor does: its
``session/new`` is refused ``auth_required``, so it runs the offered terminal method (the
agent's command plus the method's ``args``, typing the key), calls ``authenticate``, opens a
session, prompts, logs out and sees ``auth_required`` again. Prints one JSON object: the list
of failures (empty when the flow worked). Exit status 0 when it did, 1 otherwise.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from typing import Any

import acp
from acp import schema

LIMIT_S = 60.0
KEY = "sk-from-the-terminal-5150"


class Client:
    """Records the agent's message text; asks no permission in this flow."""

    def __init__(self) -> None:
        self.text: list[str] = []

    def on_connect(self, conn: Any) -> None:
        del conn

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        content = getattr(update, "content", None)
        if getattr(update, "session_update", None) == "agent_message_chunk" and content:
            self.text.append(getattr(content, "text", ""))

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise acp.RequestError.method_not_found("session/request_permission")


async def _refused(call: Any, failures: list[str], what: str) -> None:
    try:
        await asyncio.wait_for(call, LIMIT_S)
    except acp.RequestError as exc:
        if exc.code != -32000:
            failures.append(f"{what}: answered {exc.code} {exc}, expected -32000")
        return
    failures.append(f"{what}: succeeded before sign-in")


async def _terminal_sign_in(agent: str, args: list[str], env: dict[str, str]) -> int:
    """What the editor does with a terminal method: the agent's command plus ``args``."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        agent,
        *args,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    await asyncio.wait_for(process.communicate(KEY.encode() + b"\n"), LIMIT_S)
    return process.returncode if process.returncode is not None else -1


async def main(agent: str, state: str) -> list[str]:
    failures: list[str] = []
    env = {k: v for k, v in os.environ.items() if k != "SIGNIN_AGENT_API_KEY"}
    env["ACPIO_STATE_DIR"] = state
    workdir = tempfile.mkdtemp(prefix="acpio-signin-")
    client = Client()
    async with acp.spawn_agent_process(client, sys.executable, agent, env=env, cwd=workdir) as (
        conn,
        process,
    ):
        init = await asyncio.wait_for(
            conn.initialize(
                protocol_version=1,
                client_capabilities=schema.ClientCapabilities(
                    terminal=True, field_meta={"terminal_output": True, "terminal-auth": True}
                ),
                client_info=schema.Implementation(name="acpio-signin-interop", version="1.0"),
            ),
            LIMIT_S,
        )
        methods = [m.model_dump(by_alias=True, exclude_none=True) for m in init.auth_methods or []]
        terminal = [m for m in methods if m.get("type") == "terminal"]
        if len(terminal) != 1:
            return [f"expected one terminal method, got {methods}"]
        method = terminal[0]
        legacy = (method.get("_meta") or {}).get("terminal-auth")
        if not isinstance(legacy, dict) or legacy.get("args", [])[-1:] != method["args"]:
            failures.append(f"no launch descriptor in _meta['terminal-auth']: {method}")
        await _refused(conn.new_session(cwd=workdir, mcp_servers=[]), failures, "session/new")
        code = await _terminal_sign_in(agent, list(method["args"]), env)
        if code != 0:
            return [*failures, f"terminal sign-in exited with {code}"]
        await asyncio.wait_for(conn.authenticate(method_id=method["id"]), LIMIT_S)
        session = await asyncio.wait_for(conn.new_session(cwd=workdir, mcp_servers=[]), LIMIT_S)
        answer = await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block("hello")]),
            LIMIT_S,
        )
        if answer.stop_reason != "end_turn":
            failures.append(f"prompt ended {answer.stop_reason}")
        text = "".join(client.text)
        if text != f"(key ...{KEY[-4:]}) You said: hello":
            failures.append(f"the agent answered {text!r}")
        await asyncio.wait_for(conn._conn.send_request("logout", {}), LIMIT_S)
        await _refused(
            conn.new_session(cwd=workdir, mcp_servers=[]), failures, "session/new after logout"
        )
        assert process.stdin is not None
        process.stdin.close()
        await asyncio.wait_for(process.wait(), 5.0)
    return failures


if __name__ == "__main__":
    found = asyncio.run(main(sys.argv[1], sys.argv[2]))
    print(json.dumps({"failures": found}))
    sys.exit(1 if found else 0)
