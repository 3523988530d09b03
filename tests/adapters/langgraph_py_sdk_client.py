"""Drives examples/langgraph_agent.py with the official Python SDK's protocol v1 client.

Usage: ``python langgraph_py_sdk_client.py --example FILE --workdir DIR --result FILE``,
with an interpreter that has ``agent-client-protocol`` 0.12.1 (``acp``). Each scenario
spawns the example with ``acp.spawn_agent_process`` (its session store in ``DIR``: the
environment's ``ACPIO_STATE_DIR``/``XDG_STATE_HOME`` point there) and talks to it only
through the SDK's ``ClientSideConnection``. Scenarios: a streamed reply; a tool run after
approval; a tool refused after rejection; a story cancelled mid-stream; and a restart: the
model picked with the SDK's ``set_config_option`` (no ``type``) and the mode with
``set_session_mode``, a turn, SIGKILL once the store holds it, a new process,
``session/load`` whose answer names the picks (``modes.currentModeId`` too), and a turn
whose reply shows the earlier prompts and the mode were given to the model again. The
result file lists each scenario's failures (an error the SDK logs is one). Exit status 0
when every scenario passed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sqlite3
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import acp
from acp import schema

TURN_LIMIT_S = 60.0


class _Errors(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(f"{record.name}: {record.getMessage()}")


class RecordingClient:
    """Records updates; answers permission requests with the option of ``choose_kind``."""

    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.permissions: list[Any] = []
        self.choose_kind: str | None = None
        self.streaming = asyncio.Event()

    def on_connect(self, conn: Any) -> None:
        del conn

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> schema.RequestPermissionResponse:
        self.permissions.append(tool_call)
        option = next((o for o in options if o.kind == self.choose_kind), None)
        if option is None:
            return schema.RequestPermissionResponse(
                outcome=schema.DeniedOutcome(outcome="cancelled")
            )
        return schema.RequestPermissionResponse(
            outcome=schema.AllowedOutcome(outcome="selected", option_id=option.option_id)
        )

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)
        if getattr(update, "session_update", None) == "agent_message_chunk":
            self.streaming.set()

    def chunks(self) -> list[str]:
        texts = []
        for update in self.updates:
            data = update.model_dump(by_alias=True, exclude_unset=True)
            content = data.get("content")
            if data.get("sessionUpdate") == "agent_message_chunk" and isinstance(content, dict):
                texts.append(content.get("text", ""))
        return texts

    def tool_calls(self) -> dict[str, dict[str, Any]]:
        calls: dict[str, dict[str, Any]] = {}
        for update in self.updates:
            data = update.model_dump(by_alias=True, exclude_unset=True)
            if data.get("sessionUpdate") == "tool_call":
                calls[data["toolCallId"]] = data
            elif data.get("sessionUpdate") == "tool_call_update":
                calls.setdefault(data["toolCallId"], {}).update(data)
        return calls


class Run:
    def __init__(self, example: Path, workdir: Path) -> None:
        self.example = example
        self.workdir = workdir
        self.failures: list[str] = []

    def expect(self, condition: object, message: str) -> None:
        if not condition:
            self.failures.append(message)

    def spawn(self, client: RecordingClient) -> Any:
        # The whole environment: the SDK's default keeps HOME and PATH only, not the
        # ACPIO_STATE_DIR and XDG_STATE_HOME that put the store in the test's directory.
        return acp.spawn_agent_process(
            client, sys.executable, str(self.example), cwd=self.workdir, env=dict(os.environ)
        )

    async def start(self, conn: Any) -> None:
        init = await asyncio.wait_for(
            conn.initialize(
                protocol_version=acp.PROTOCOL_VERSION,
                client_capabilities=schema.ClientCapabilities(),
                client_info=schema.Implementation(name="acpio-langgraph-test", version="1.0"),
            ),
            TURN_LIMIT_S,
        )
        self.expect(init.protocol_version == 1, f"protocolVersion {init.protocol_version}")

    async def new_session(self, conn: Any) -> str:
        answer = await asyncio.wait_for(
            conn.new_session(cwd=str(self.workdir), mcp_servers=[]), TURN_LIMIT_S
        )
        return str(answer.session_id)

    async def prompt(self, conn: Any, session_id: str, text: str) -> Any:
        return await asyncio.wait_for(
            conn.prompt(session_id=session_id, prompt=[acp.text_block(text)]), TURN_LIMIT_S
        )


async def streamed_reply(run: Run) -> None:
    client = RecordingClient()
    async with run.spawn(client) as (conn, _process):
        await run.start(conn)
        session_id = await run.new_session(conn)
        answer = await run.prompt(conn, session_id, "hello from v1")
        run.expect(answer.stop_reason == "end_turn", f"stopReason {answer.stop_reason}")
        chunks = client.chunks()
        run.expect(len(chunks) > 1, f"the reply came in {len(chunks)} chunks, not streamed")
        text = "".join(chunks)
        run.expect(text.startswith("You said: hello from v1."), f"reply {text!r}")


async def approval(run: Run, choose: str) -> None:
    target = run.workdir / f"{choose}.txt"
    target.write_text("data\n")
    client = RecordingClient()
    client.choose_kind = choose
    async with run.spawn(client) as (conn, _process):
        await run.start(conn)
        session_id = await run.new_session(conn)
        answer = await run.prompt(conn, session_id, f"delete {target.name}")
        run.expect(answer.stop_reason == "end_turn", f"stopReason {answer.stop_reason}")
        run.expect(len(client.permissions) == 1, f"{len(client.permissions)} permission requests")
        calls = list(client.tool_calls().values())
        status = calls[0].get("status") if len(calls) == 1 else calls
        if choose == "allow_once":
            run.expect(status == "completed", f"tool call {status}")
            run.expect(not target.exists(), "the allowed delete did not run")
        else:
            run.expect(status == "failed", f"tool call {status}")
            run.expect(target.exists(), "the rejected delete ran")


async def allowed(run: Run) -> None:
    await approval(run, "allow_once")


async def rejected(run: Run) -> None:
    await approval(run, "reject_once")


async def cancel_mid_stream(run: Run) -> None:
    client = RecordingClient()
    async with run.spawn(client) as (conn, _process):
        await run.start(conn)
        session_id = await run.new_session(conn)
        turn = asyncio.ensure_future(run.prompt(conn, session_id, "story"))
        await asyncio.wait_for(client.streaming.wait(), TURN_LIMIT_S)
        await conn.cancel(session_id=session_id)
        answer = await asyncio.wait_for(turn, 10.0)
        run.expect(answer.stop_reason == "cancelled", f"stopReason {answer.stop_reason}")
        streamed = len(client.chunks())
        run.expect(streamed < 4000, f"{streamed} chunks: the story ran to its end")
        after = await run.prompt(conn, session_id, "still there?")
        run.expect(after.stop_reason == "end_turn", f"after cancel: {after.stop_reason}")


def _stored(state_dir: Path, session_id: str) -> tuple[bool, dict[str, object]] | None:
    """Whether the store file holds the session's agent state, and its config values
    (None: no row)."""
    files = list(state_dir.rglob("*.sqlite3"))
    if not files:
        return None
    with sqlite3.connect(files[0]) as conn:
        row = conn.execute(
            "SELECT state, config_values FROM agent_states WHERE session_id = ?", (session_id,)
        ).fetchone()
    return None if row is None else (row[0] is not None, json.loads(row[1]))


async def _until_stored(state_dir: Path, session_id: str, values: dict[str, object]) -> None:
    """Wait (bounded) until the file holds a state and ``values``: the store's writer
    commits off the event loop, and SIGKILL loses what it has not committed."""
    for _ in range(1000):
        if _stored(state_dir, session_id) == (True, values):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(
        f"the store never held a state and {values}: {_stored(state_dir, session_id)}"
    )


async def restart_and_load(run: Run) -> None:
    picks = {"model": "slow", "mode": "code"}
    client = RecordingClient()
    async with run.spawn(client) as (conn, process):
        await run.start(conn)
        created = await asyncio.wait_for(
            conn.new_session(cwd=str(run.workdir), mcp_servers=[]), TURN_LIMIT_S
        )
        session_id = str(created.session_id)
        # The mode picker (a config option of category mode) is v1's modes.
        modes = created.modes
        run.expect(
            modes is not None
            and modes.current_mode_id == "ask"
            and [m.id for m in modes.available_modes] == ["ask", "code"],
            f"session/new modes {modes}",
        )
        # The SDK's own calls: set_config_option sends no `type`; the mode goes by set_mode.
        await asyncio.wait_for(
            conn.set_config_option(config_id="model", session_id=session_id, value="slow"),
            TURN_LIMIT_S,
        )
        await asyncio.wait_for(
            conn.set_session_mode(session_id=session_id, mode_id="code"), TURN_LIMIT_S
        )
        await run.prompt(conn, session_id, "remember the apples")
        await _until_stored(Path(os.environ["ACPIO_STATE_DIR"]), session_id, picks)
        process.kill()  # SIGKILL: no clean shutdown
        await process.wait()
    client = RecordingClient()
    async with run.spawn(client) as (conn, _process):
        await run.start(conn)
        loaded = await asyncio.wait_for(
            conn.load_session(cwd=str(run.workdir), session_id=session_id, mcp_servers=[]),
            TURN_LIMIT_S,
        )
        values = {o.id: o.current_value for o in loaded.config_options or []}
        run.expect(values == picks, f"session/load configOptions {values}")
        mode = loaded.modes.current_mode_id if loaded.modes is not None else None
        run.expect(mode == "code", f"session/load modes.currentModeId {mode}")
        replayed = "".join(client.chunks())
        run.expect("remember the apples" in replayed, f"replay {replayed!r}")
        before = len(client.chunks())
        await run.prompt(conn, session_id, "what did I say?")
        text = "".join(client.chunks()[before:])
        # The model of the new process is given the earlier prompt and the restored mode.
        run.expect(
            text == "You said: what did I say?. Before that: remember the apples. [mode: code]",
            f"the model was not given them: {text!r}",
        )


SCENARIOS: dict[str, Callable[[Run], Awaitable[None]]] = {
    "streamed_reply": streamed_reply,
    "allowed": allowed,
    "rejected": rejected,
    "cancel_mid_stream": cancel_mid_stream,
    "restart_and_load": restart_and_load,
}


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--example", type=Path, required=True)
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--result", type=Path, required=True)
    args = parser.parse_args()
    results: dict[str, list[str]] = {}
    for name, body in SCENARIOS.items():
        errors = _Errors()
        logging.getLogger().addHandler(errors)
        run = Run(args.example.resolve(), args.workdir.resolve())
        try:
            await body(run)
        except Exception as exc:  # a scenario that aborts is reported, never raised
            run.failures.append(f"aborted: {type(exc).__name__}: {exc}")
        finally:
            logging.getLogger().removeHandler(errors)
        results[name] = run.failures + [f"SDK logged: {r}" for r in errors.records]
    args.result.write_text(json.dumps(results, indent=1))
    return 1 if any(results.values()) else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
