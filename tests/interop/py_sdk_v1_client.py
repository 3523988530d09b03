"""Drives acpio's example agents with the official Python SDK's protocol v1 client.

Usage: ``python py_sdk_v1_client.py --examples DIR --result FILE``, run with an interpreter
that has ``agent-client-protocol`` 0.12.1 installed (it imports as ``acp``). Each scenario
spawns ``<this interpreter> DIR/<agent>.py`` with ``acp.spawn_agent_process`` and talks to it
only through the SDK's ``ClientSideConnection`` (pydantic models for every message in both
directions). The client advertises no terminal and no file system, so the agent must show
command output as tool-call content. The result file lists each scenario's failures; any
error the SDK logs (a message it could not parse, a handler that raised) is a failure too.
Exit status 0 when every scenario passed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import acp
from acp import schema

TURN_LIMIT_S = 20.0
# Starting an agent (its imports) on a loaded machine can take many seconds.
STARTUP_LIMIT_S = 60.0
CANCEL_LIMIT_S = 3.0


class _Errors(logging.Handler):
    """Collects every warning or error the SDK logs while a scenario runs."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(f"{record.name}: {record.getMessage()}")


class RecordingClient:
    """A v1 client that records updates and answers permissions by the scenario's choice."""

    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.permissions: list[Any] = []
        self.choose_kind: str | None = None
        self.permission_asked = asyncio.Event()
        self.running = asyncio.Event()

    def on_connect(self, conn: Any) -> None:
        del conn

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> schema.RequestPermissionResponse:
        self.permissions.append(tool_call)
        self.permission_asked.set()
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
        if getattr(update, "status", None) == "in_progress":
            self.running.set()

    def tool_calls(self) -> dict[str, dict[str, Any]]:
        """The tool calls as the client rebuilds them (v1: updates replace whole fields)."""
        calls: dict[str, dict[str, Any]] = {}
        for update in self.updates:
            data = update.model_dump(by_alias=True, exclude_unset=True)
            kind = data.get("sessionUpdate")
            if kind == "tool_call":
                calls[data["toolCallId"]] = data
            elif kind == "tool_call_update":
                calls.setdefault(data["toolCallId"], {}).update(data)
        return calls

    def message_text(self) -> str:
        parts = []
        for update in self.updates:
            data = update.model_dump(by_alias=True, exclude_unset=True)
            content = data.get("content")
            if data.get("sessionUpdate") == "agent_message_chunk" and isinstance(content, dict):
                parts.append(content.get("text", ""))
        return "".join(parts)


def _content_text(call: dict[str, Any]) -> str:
    texts = []
    for item in call.get("content") or []:
        if item.get("type") == "content" and item.get("content", {}).get("type") == "text":
            texts.append(item["content"]["text"])
    return "\n".join(texts)


class Scenario:
    def __init__(self, name: str, agent: str, body: Callable[[Run], Awaitable[None]]) -> None:
        self.name = name
        self.agent = agent
        self.body = body


class Run:
    """One scenario's connection, client and failures."""

    def __init__(self, conn: Any, client: RecordingClient, session: Any, workdir: Path) -> None:
        self.conn = conn
        self.client = client
        self.session = session  # the session/new answer
        self.session_id: str = session.session_id
        self.workdir = workdir
        self.failures: list[str] = []

    def expect(self, condition: object, message: str) -> None:
        if not condition:
            self.failures.append(message)

    async def prompt(self, text: str) -> Any:
        return await asyncio.wait_for(
            self.conn.prompt(session_id=self.session_id, prompt=[acp.text_block(text)]),
            TURN_LIMIT_S,
        )

    def only_call(self) -> dict[str, Any]:
        calls = list(self.client.tool_calls().values())
        self.expect(len(calls) == 1, f"expected one tool call, saw {len(calls)}")
        return calls[0] if calls else {}


async def echo_reply(run: Run) -> None:
    answer = await run.prompt("hello from the Python SDK")
    run.expect(answer.stop_reason == "end_turn", f"stopReason {answer.stop_reason}")
    text = run.client.message_text()
    run.expect("hello from the Python SDK" in text, f"message was {text!r}")


async def shell_allowed(run: Run) -> None:
    run.client.choose_kind = "allow_once"
    answer = await run.prompt("run echo py-sdk-output")
    run.expect(answer.stop_reason == "end_turn", f"stopReason {answer.stop_reason}")
    call = run.only_call()
    run.expect(call.get("status") == "completed", f"status {call.get('status')}")
    run.expect("py-sdk-output" in _content_text(call), f"content {_content_text(call)!r}")


async def shell_rejected(run: Run) -> None:
    run.client.choose_kind = "reject_once"
    marker = run.workdir / "must-not-exist"
    answer = await run.prompt(f"run touch {marker}")
    run.expect(answer.stop_reason == "end_turn", f"stopReason {answer.stop_reason}")
    run.expect(run.only_call().get("status") == "failed", "a rejected call did not fail")
    run.expect(not marker.exists(), "the rejected command ran")
    # What the SDK hands the client's permission handler names the command.
    (asked,) = run.client.permissions
    run.expect(asked.title == f"Run `touch {marker}`", f"permission title {asked.title!r}")
    run.expect(asked.kind == "execute", f"permission kind {asked.kind!r}")
    run.expect(asked.raw_input == {"command": f"touch {marker}"}, f"rawInput {asked.raw_input!r}")


async def shell_cancel(run: Run) -> None:
    run.client.choose_kind = "allow_once"
    turn = asyncio.ensure_future(run.prompt("run sleep 39"))
    await asyncio.wait_for(run.client.running.wait(), TURN_LIMIT_S)
    await asyncio.sleep(0.1)
    started = time.monotonic()
    await run.conn.cancel(session_id=run.session_id)
    answer = await asyncio.wait_for(turn, CANCEL_LIMIT_S)
    run.expect(answer.stop_reason == "cancelled", f"stopReason {answer.stop_reason}")
    run.expect(time.monotonic() - started < CANCEL_LIMIT_S, "cancel took too long")


async def edit_with_diff(run: Run) -> None:
    target = run.workdir / "notes.txt"
    target.write_text("before\n")
    run.client.choose_kind = "allow_once"
    answer = await run.prompt(f"write {target}\nafter\n")
    run.expect(answer.stop_reason == "end_turn", f"stopReason {answer.stop_reason}")
    call = run.only_call()
    diffs = [item for item in call.get("content") or [] if item.get("type") == "diff"]
    run.expect(len(diffs) == 1, f"diff items {diffs!r}")
    if diffs:
        run.expect(
            diffs[0].get("path") == str(target.resolve()), f"diff path {diffs[0].get('path')}"
        )
        run.expect(diffs[0].get("oldText") == "before\n", f"oldText {diffs[0].get('oldText')!r}")
        run.expect(diffs[0].get("newText") == "after\n", f"newText {diffs[0].get('newText')!r}")
    run.expect(target.read_text() == "after\n", "the allowed edit was not written")
    (asked,) = run.client.permissions
    run.expect(asked.title == f"Edit {target.resolve()}", f"permission title {asked.title!r}")
    run.expect(asked.kind == "edit", f"permission kind {asked.kind!r}")


def _values(options: Any) -> dict[str, Any]:
    """Config option id -> current value, from the SDK's models."""
    values = {}
    for option in options or []:
        data = option.model_dump(by_alias=True) if hasattr(option, "model_dump") else option
        data = data.get("root", data) if isinstance(data, dict) else data
        values[data["id"]] = data["currentValue"]
    return values


async def _until(condition: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + TURN_LIMIT_S
    while not condition():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


async def pickers(run: Run) -> None:
    """The llm agent's model and mode pickers, set as the SDK sends them (a value id has no
    `type`), and its mode selector (`modes`, session/set_mode, current_mode_update)."""
    modes = run.session.modes
    run.expect(modes is not None, "session/new answered no modes")
    if modes is not None:
        run.expect(modes.current_mode_id == "code", f"currentModeId {modes.current_mode_id}")
        ids = [mode.id for mode in modes.available_modes]
        run.expect(ids == ["code", "ask"], f"availableModes {ids}")
    answer = await run.conn.set_config_option(
        config_id="model", session_id=run.session_id, value="scripted-terse"
    )
    values = _values(answer.config_options)
    run.expect(values.get("model") == "scripted-terse", f"config after set: {values}")
    await run.prompt("hello")
    text = run.client.message_text()
    run.expect(text.startswith("[scripted-terse]"), f"the model did not change: {text!r}")
    await run.conn.set_session_mode(session_id=run.session_id, mode_id="ask")

    def config_updates() -> list[dict[str, Any]]:
        return [
            data
            for data in (u.model_dump(by_alias=True) for u in run.client.updates)
            if data.get("sessionUpdate") == "config_option_update"
        ]

    run.expect(
        await _until(
            lambda: any(_values(u["configOptions"]).get("mode") == "ask" for u in config_updates())
        ),
        "no config_option_update with mode ask after session/set_mode",
    )
    marker = run.workdir / "must-not-exist"
    await run.prompt(f"run touch {marker}")
    run.expect(not marker.exists(), "a command ran in ask mode")
    run.expect("no tool named 'run_command'" in run.client.message_text(), "ask mode had tools")
    try:
        await run.conn.set_session_mode(session_id=run.session_id, mode_id="fly")
        run.expect(False, "an unknown mode was accepted")
    except acp.RequestError as exc:
        run.expect(exc.code == -32602, f"unknown mode answered {exc.code}")
        run.expect("code" in str(exc) and "ask" in str(exc), f"unknown mode message {exc}")
    await run.conn.set_config_option(config_id="mode", session_id=run.session_id, value="code")

    def mode_updates() -> list[str]:
        return [
            u.current_mode_id
            for u in run.client.updates
            if getattr(u, "session_update", None) == "current_mode_update"
        ]

    run.expect(await _until(lambda: mode_updates() == ["code"]), f"mode updates {mode_updates()}")


SCENARIOS = (
    Scenario("py_echo_reply", "echo_agent", echo_reply),
    Scenario("py_shell_allowed", "shell_agent", shell_allowed),
    Scenario("py_shell_rejected", "shell_agent", shell_rejected),
    Scenario("py_shell_cancel", "shell_agent", shell_cancel),
    Scenario("py_edit_with_diff", "edit_agent", edit_with_diff),
    Scenario("py_pickers", "llm_agent", pickers),
)


async def run_scenario(scenario: Scenario, examples: Path) -> dict[str, object]:
    errors = _Errors()
    logging.getLogger().addHandler(errors)
    failures: list[str] = []
    workdir = Path(tempfile.mkdtemp(prefix="acpio-pysdk-"))
    client = RecordingClient()
    exit_code: int | None = None
    try:
        async with acp.spawn_agent_process(
            client, sys.executable, str(examples / f"{scenario.agent}.py"), cwd=workdir
        ) as (conn, process):
            init = await asyncio.wait_for(
                conn.initialize(
                    protocol_version=acp.PROTOCOL_VERSION,
                    client_capabilities=schema.ClientCapabilities(
                        fs=schema.FileSystemCapabilities(
                            read_text_file=False, write_text_file=False
                        ),
                        terminal=False,
                    ),
                    client_info=schema.Implementation(name="acpio-pysdk-interop", version="1.0"),
                ),
                STARTUP_LIMIT_S,
            )
            if init.protocol_version != 1:
                failures.append(f"initialize answered protocolVersion {init.protocol_version}")
            session = await asyncio.wait_for(
                conn.new_session(cwd=str(workdir), mcp_servers=[]), TURN_LIMIT_S
            )
            run = Run(conn, client, session, workdir)
            await scenario.body(run)
            seen = len(client.updates)
            await asyncio.sleep(0.2)
            run.expect(len(client.updates) == seen, "updates arrived after the last turn ended")
            failures.extend(run.failures)
            assert process.stdin is not None
            process.stdin.close()
            exit_code = await asyncio.wait_for(process.wait(), 3.0)
    except Exception as exc:  # a scenario that aborts is reported, never raised
        failures.append(f"scenario aborted: {type(exc).__name__}: {exc}")
    finally:
        logging.getLogger().removeHandler(errors)
    if exit_code not in (0, None):
        failures.append(f"agent exited with {exit_code}")
    failures.extend(f"SDK logged: {record}" for record in errors.records)
    return {"name": scenario.name, "agent": scenario.agent, "failures": failures}


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--examples", type=Path, required=True)
    parser.add_argument("--result", type=Path, required=True)
    args = parser.parse_args()
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    results = [await run_scenario(s, args.examples.resolve()) for s in SCENARIOS]
    args.result.write_text(json.dumps({"scenarios": results}, indent=1))
    failed = [r for r in results if r["failures"]]
    for result in failed:
        print(f"{result['name']}: {result['failures']}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
