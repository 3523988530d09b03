"""The pydantic-ai example survives a restart: the model sees the earlier turns and the picks.

examples/pydantic_ai_agent.py runs as editors run it, a subprocess over stdio,
with its SQLite session store in the test's temporary directory
(``ACPIO_STATE_DIR`` and ``XDG_STATE_HOME`` point there, never at the user's
home). A first process is prompted twice, its model and mode are changed (v1: the
SDK's own ``set_config_option``, which sends no ``type``, and ``set_session_mode``),
and once the store file holds all that it is killed with SIGKILL. A second
process reopens the session, with v2 ``session/resume`` (acpio's MockClient) or
with v1 ``session/load`` (the official Python SDK's client,
``agent-client-protocol`` 0.12.1): its answer already names the picks (v2
``configOptions``; v1 ``configOptions`` and ``modes.currentModeId``), sent by the
new process from its store alone. It is then prompted ``recall``: the example's
scripted model answers with what it was given (its own name, the mode its
instructions name, every user prompt of the conversation), so the test checks
what the model saw.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import sys
from pathlib import Path
from typing import Any

import acp
import anyio
import pytest
from acp import schema as acp_schema
from support import EXAMPLES

import acpio
from acpio.testing import MockClient, PermissionPolicy

pytestmark = pytest.mark.anyio

COMMAND = [sys.executable, str(EXAMPLES / "pydantic_ai_agent.py")]
PICKS = {"model": "scripted-2", "mode": "code"}
TURN_LIMIT_S = 30.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # pydantic-ai, and the official SDK's client, run on asyncio only


def env_for(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "ACPIO_STATE_DIR": os.fspath(tmp_path / "state"),
        "XDG_STATE_HOME": os.fspath(tmp_path / "xdg-state"),
    }


def stored(tmp_path: Path, session_id: str) -> tuple[str, dict[str, object]] | None:
    """The saved conversation's JSON text and config values, read as another process would."""
    files = list((tmp_path / "state").rglob("*.sqlite3"))
    if not files:
        return None
    with sqlite3.connect(files[0]) as conn:
        row = conn.execute(
            "SELECT state, config_values FROM agent_states WHERE session_id = ?", (session_id,)
        ).fetchone()
    if row is None or row[0] is None:
        return None
    return bytes(row[0]).decode(), json.loads(row[1])


async def wait_until_stored(tmp_path: Path, session_id: str, last_prompt: str) -> None:
    """Wait (bounded) until the file holds the last turn and the picks (SIGKILL loses nothing)."""
    # Another process's commit has no event to wait on: the file is polled.
    for _ in range(1000):
        found = stored(tmp_path, session_id)
        if found is not None and last_prompt in found[0] and found[1] == PICKS:
            return
        await anyio.sleep(0.01)
    raise AssertionError(
        f"the store never held the session's state: {stored(tmp_path, session_id)}"
    )


def answer_values(client: MockClient, method: str) -> dict[str, object]:
    """The config values in the agent's answer to the (only) ``method`` request, as sent."""
    (request,) = client.transcript.messages("client->agent", method=method)
    assert isinstance(request, dict)
    for message in client.transcript.messages("agent->client"):
        if isinstance(message, dict) and message.get("id") == request["id"]:
            result = message["result"]
            assert isinstance(result, dict)
            return {o["configId"]: o["currentValue"] for o in result["configOptions"]}
    raise AssertionError(f"{method} was not answered")


def recalled(text: str) -> dict[str, object]:
    seen: dict[str, object] = json.loads(text)
    return seen


# ------------------------------------------------------------------ v2, MockClient


async def first_life_v2(tmp_path: Path) -> str:
    async with MockClient(COMMAND, env=env_for(tmp_path), cwd=tmp_path, strict=False) as client:
        session = await client.new_session()
        assert session.view.config_values == {"model": "scripted", "mode": "ask"}
        await session.prompt("hello there")
        await session.set_config_option("model", "scripted-2")
        await session.set_config_option("mode", "code")
        await session.prompt("remember the blue door")
        await wait_until_stored(tmp_path, session.id, "remember the blue door")
        assert client.pid is not None
        os.kill(client.pid, signal.SIGKILL)
    assert client.returncode == -signal.SIGKILL
    return session.id


async def test_v2_resume_after_sigkill_gives_the_model_its_conversation(tmp_path: Path) -> None:
    session_id = await first_life_v2(tmp_path)
    (tmp_path / "junk.txt").write_text("x\n")
    policy = PermissionPolicy.reject()
    async with MockClient(COMMAND, env=env_for(tmp_path), cwd=tmp_path, policy=policy) as client:
        session = await client.resume_session(session_id, tmp_path)
        assert answer_values(client, "session/resume") == PICKS
        replayed = [acpio.text_of(m.content) for m in session.view.messages if m.role == "user"]
        assert replayed == ["hello there", "remember the blue door"]
        assert session.view.config_values == PICKS
        await session.prompt("recall")
        reply = acpio.text_of(session.view.agent_messages[-1].content)
        assert recalled(reply) == {
            "model": "scripted-2",
            "mode": "code",
            "prompts": ["hello there", "remember the blue door", "recall"],
        }
        # The restored "code" mode acts too: the tool that asks in "ask" mode runs unasked.
        await session.prompt("delete junk.txt")
        assert not client.permission_requests
    assert not (tmp_path / "junk.txt").exists()


# ------------------------------------------------- v1, the official Python SDK


class RecordingClient:
    """A v1 client (the official SDK's interface) that keeps every update."""

    def __init__(self) -> None:
        self.updates: list[Any] = []

    def on_connect(self, conn: Any) -> None:
        del conn

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> acp_schema.RequestPermissionResponse:
        return acp_schema.RequestPermissionResponse(
            outcome=acp_schema.DeniedOutcome(outcome="cancelled")
        )

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update.model_dump(by_alias=True, exclude_unset=True))

    def texts(self, kind: str) -> str:
        return "".join(
            u["content"].get("text", "")
            for u in self.updates
            if u.get("sessionUpdate") == kind and isinstance(u.get("content"), dict)
        )


async def initialize(conn: Any) -> None:
    await asyncio.wait_for(
        conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=acp_schema.ClientCapabilities(),
            client_info=acp_schema.Implementation(name="acpio-pai-restart", version="1.0"),
        ),
        TURN_LIMIT_S,
    )


async def prompt(conn: Any, session_id: str, text: str) -> Any:
    return await asyncio.wait_for(
        conn.prompt(session_id=session_id, prompt=[acp.text_block(text)]), TURN_LIMIT_S
    )


async def test_v1_load_after_sigkill_gives_the_model_its_conversation(tmp_path: Path) -> None:
    env = env_for(tmp_path)
    (tmp_path / "notes.txt").write_text("one two three\n")
    first = RecordingClient()
    async with acp.spawn_agent_process(first, *COMMAND, env=env, cwd=tmp_path) as (conn, process):
        await initialize(conn)
        created = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        session_id = created.session_id
        assert created.modes is not None and created.modes.current_mode_id == "ask"
        assert [m.id for m in created.modes.available_modes] == ["ask", "code"]
        await prompt(conn, session_id, "hello there")
        # The SDK's own calls: set_config_option sends no `type`; the mode goes by set_mode.
        answer = await asyncio.wait_for(
            conn.set_config_option(config_id="model", session_id=session_id, value="scripted-2"),
            10,
        )
        assert {o.id: o.current_value for o in answer.config_options} == {
            "model": "scripted-2",
            "mode": "ask",
        }
        await asyncio.wait_for(conn.set_session_mode(session_id=session_id, mode_id="code"), 10)
        count = await prompt(conn, session_id, "count notes.txt")
        assert count.stop_reason == "end_turn"
        statuses = [u.get("status") for u in first.updates if "toolCallId" in u]
        assert "in_progress" in statuses and statuses[-1] == "completed"
        answer = await prompt(conn, session_id, "remember the blue door")
        assert answer.stop_reason == "end_turn"
        # The mode change reached the client as the update its selector needs.
        assert any(
            u.get("sessionUpdate") == "config_option_update"
            and {o["id"]: o["currentValue"] for o in u["configOptions"]} == PICKS
            for u in first.updates
        )
        await wait_until_stored(tmp_path, session_id, "remember the blue door")
        process.kill()
        assert await process.wait() == -signal.SIGKILL

    second = RecordingClient()
    async with acp.spawn_agent_process(second, *COMMAND, env=env, cwd=tmp_path) as (conn, process):
        await initialize(conn)
        loaded = await conn.load_session(cwd=str(tmp_path), session_id=session_id, mcp_servers=[])
        values = {o.id: o.current_value for o in loaded.config_options or []}
        assert values == PICKS
        assert loaded.modes is not None and loaded.modes.current_mode_id == "code"
        assert second.texts("user_message_chunk") == (
            "hello therecount notes.txtremember the blue door"
        )
        replayed = len(second.updates)
        await prompt(conn, session_id, "recall")
        reply = "".join(
            u["content"]["text"]
            for u in second.updates[replayed:]
            if u.get("sessionUpdate") == "agent_message_chunk"
        )
        assert recalled(reply) == {
            "model": "scripted-2",
            "mode": "code",
            "prompts": ["hello there", "count notes.txt", "remember the blue door", "recall"],
        }
        assert process.stdin is not None
        process.stdin.close()
        assert await asyncio.wait_for(process.wait(), TURN_LIMIT_S) == 0
