"""Interoperability over ACP v1: the example agents driven by real, shipping v1 clients.

Three clients, each as its users run it:

- the official TypeScript SDK's v1 client (``client()`` from ``@agentclientprotocol/sdk``
  2.4.0, ``interop_v1_client.mjs``) with real ``terminal/*`` and ``fs/*`` handlers, so the
  shell agent's commands run in the client's terminal as in an editor;
- the official Python SDK's client (``agent-client-protocol`` 0.12.1,
  ``py_sdk_v1_client.py``), which advertises no terminal: output must arrive as content;
- the ``acpx`` command-line client (npm, 0.19.1), run as a user runs it.

Every line an agent writes to the TypeScript client is also validated here against the
official v1 schema (vendored in ``acpio/schema/v1``). Node, ``node_modules`` (``npm ci
--prefix tests/interop``) and the Python SDK (the ``dev`` extra) are installed by
``scripts/test.sh``; when one is missing the tests fail with that explanation.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import acpio

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
EXAMPLES = REPO / "examples"
TIMEOUT_S = 300
V1_SCHEMA = Path(acpio.__file__).parent / "schema" / "v1" / "schema.json"

TS_SCENARIOS = (
    "echo_reply",
    "shell_allowed_client_terminal",
    "shell_allowed_no_client_terminal",
    "shell_rejected",
    "shell_cancel_while_running",
    "shell_cancel_no_client_terminal",
    "edit_write_with_diff",
    "edit_rejected",
)


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed; scripts/test.sh installs the interop prerequisites")
    if not (HERE / "node_modules" / "@agentclientprotocol" / "sdk").is_dir():
        pytest.fail("tests/interop/node_modules is missing; run `npm ci --prefix tests/interop`")
    return node


@cache
def _validators() -> dict[str, jsonschema.protocols.Validator]:
    schema = json.loads(V1_SCHEMA.read_text())
    cls = jsonschema.validators.validator_for(schema)
    return {
        kind: cls({"$ref": f"#/$defs/{kind}", "$defs": schema["$defs"]})
        for kind in ("AgentRequest", "AgentNotification", "AgentResponse")
    }


def _schema_problems(lines: list[str]) -> list[str]:
    problems = []
    for number, line in enumerate(lines, 1):
        message = json.loads(line)
        if "method" in message:
            kind = "AgentRequest" if "id" in message else "AgentNotification"
        else:
            kind = "AgentResponse"
        for error in _validators()[kind].iter_errors(message):
            problems.append(f"line {number} is not a valid v1 {kind}: {error.message[:300]}")
    return problems


@pytest.mark.parametrize("scenario", TS_SCENARIOS)
def test_typescript_sdk_v1_client(scenario: str, tmp_path: Path) -> None:
    result_file = tmp_path / "result.json"
    completed = subprocess.run(
        [
            _node(),
            str(HERE / "interop_v1_client.mjs"),
            "--python",
            sys.executable,
            "--examples",
            str(EXAMPLES),
            "--result",
            str(result_file),
            "--only",
            scenario,
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert result_file.exists(), completed.stderr
    (outcome,) = json.loads(result_file.read_text())["scenarios"]
    problems = outcome["failures"] + _schema_problems(outcome["lines"])
    assert not problems, f"{problems}\nagent stderr:\n{outcome['stderr']}"
    assert completed.returncode == 0, completed.stderr


def test_python_sdk_v1_client(tmp_path: Path) -> None:
    result_file = tmp_path / "result.json"
    completed = subprocess.run(
        [
            sys.executable,
            str(HERE / "py_sdk_v1_client.py"),
            "--examples",
            str(EXAMPLES),
            "--result",
            str(result_file),
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert result_file.exists(), completed.stderr
    scenarios = json.loads(result_file.read_text())["scenarios"]
    assert [s["name"] for s in scenarios] == [
        "py_echo_reply",
        "py_shell_allowed",
        "py_shell_rejected",
        "py_shell_cancel",
        "py_edit_with_diff",
        "py_pickers",
    ]
    failures = {s["name"]: s["failures"] for s in scenarios if s["failures"]}
    assert not failures, f"{failures}\n{completed.stderr[-4000:]}"
    assert completed.returncode == 0, completed.stderr[-4000:]


def _acpx(
    tmp_path: Path,
    agent: str,
    *args: str,
    timeout: float = 60,
    allow: tuple[int, ...] = (),
    command: str | None = None,
) -> list[dict[str, Any]]:
    """Run acpx as a user would, with its JSON output: the raw JSON-RPC messages it saw.

    acpx prints both directions without saying which; error answers other than the
    codes in ``allow`` fail the test. ``command`` runs the agent instead of the example.
    """
    _node()
    acpx = HERE / "node_modules" / ".bin" / "acpx"
    command = command or f"{sys.executable} {EXAMPLES / agent}.py"
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    completed = subprocess.run(
        [str(acpx), "--agent", command, "--cwd", str(tmp_path), "--format", "json", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
        cwd=tmp_path,
    )
    messages = []
    for line in completed.stdout.splitlines():
        if line.startswith("{"):
            messages.append(json.loads(line))
    assert messages, f"acpx printed no messages (exit {completed.returncode}):\n{completed.stderr}"
    errors = [m for m in messages if "error" in m and m["error"].get("code") not in allow]
    assert not errors, errors
    return messages


def _updates(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m["params"]["update"] for m in messages if m.get("method") == "session/update"]


def _prompt_answer(messages: list[dict[str, Any]]) -> dict[str, Any]:
    # Ids of both directions mix in acpx's output: the prompt's answer is the one
    # result that carries a stop reason.
    (answer,) = [
        m for m in messages if isinstance(m.get("result"), dict) and "stopReason" in m["result"]
    ]
    result: dict[str, Any] = answer["result"]
    return result


def test_acpx_echo_reply(tmp_path: Path) -> None:
    messages = _acpx(tmp_path, "echo_agent", "exec", "hello from acpx")
    text = "".join(
        u["content"]["text"]
        for u in _updates(messages)
        if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert "hello from acpx" in text
    assert _prompt_answer(messages) == {"stopReason": "end_turn"}


def test_acpx_shell_allowed_runs_in_acpx_terminal(tmp_path: Path) -> None:
    messages = _acpx(tmp_path, "shell_agent", "--approve-all", "exec", "run echo acpx-output")
    assert any(m.get("method") == "terminal/create" for m in messages), messages
    updates = _updates(messages)
    final = [u for u in updates if u["sessionUpdate"] in ("tool_call", "tool_call_update")]
    assert final[0]["sessionUpdate"] == "tool_call"
    assert [u.get("status") for u in final if "status" in u][-1] == "completed"
    outputs = [m for m in messages if "result" in m and "output" in (m["result"] or {})]
    assert any("acpx-output" in m["result"]["output"] for m in outputs), outputs
    assert _prompt_answer(messages) == {"stopReason": "end_turn"}


def test_acpx_shell_rejected(tmp_path: Path) -> None:
    marker = tmp_path / "must-not-exist"
    messages = _acpx(tmp_path, "shell_agent", "--deny-all", "exec", f"run touch {marker}")
    assert not marker.exists()
    assert not any(m.get("method") == "terminal/create" for m in messages)
    statuses = [u.get("status") for u in _updates(messages) if "status" in u]
    assert statuses[-1] == "failed"


def test_acpx_edit_with_diff(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("before\n")
    # acpx trims the prompt text it is given, so the new content ends without a newline.
    messages = _acpx(tmp_path, "edit_agent", "--approve-all", "exec", f"write {target}\nafter")
    diffs = [
        item
        for u in _updates(messages)
        for item in u.get("content") or []
        if item.get("type") == "diff"
    ]
    assert diffs and diffs[0]["newText"] == "after" and diffs[0]["oldText"] == "before\n"
    assert target.read_text() == "after"


def test_acpx_timeout_ends_the_turn_and_leaves_no_process(tmp_path: Path) -> None:
    # On its --timeout acpx stops the turn its own way (it kills the terminal it runs,
    # or cancels the request): either way the turn ends, nothing keeps running.
    started = time.monotonic()
    messages = _acpx(
        tmp_path,
        "shell_agent",
        "--approve-all",
        "--timeout",
        "2",
        "exec",
        "run sleep 41",
        allow=(-32070, -32800),  # acpx's own timeout; a cancelled request
    )
    elapsed = time.monotonic() - started
    assert any(m.get("method") == "terminal/create" for m in messages)
    ended = [
        m
        for m in messages
        if (isinstance(m.get("result"), dict) and "stopReason" in m["result"])
        or m.get("error", {}).get("code") == -32800
    ]
    assert ended, "the turn was never answered"
    assert elapsed < 2 + 3 + 10  # acpx's own timeout, our 3 s, and start-up under load
    left = subprocess.run(["pgrep", "-f", "sleep 41"], capture_output=True, text=True, check=False)
    assert left.stdout.strip() == "", f"processes left: {left.stdout}"


def _wire(log: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """What the recorder saw: the client's messages, the agent's messages."""
    sent, received = [], []
    for line in log.read_text().splitlines():
        (sent if line.startswith("> ") else received).append(json.loads(line[2:]))
    return sent, received


def _requests_and_answers(log: Path) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """Each request the client sent, in order, with the answer it got (``None`` if none).

    acpx starts the agent again for every command, so request ids repeat across the
    log: an answer belongs to the request of its id sent last on the same connection
    (a connection starts with ``initialize``)."""
    pairs: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
    pending: dict[object, int] = {}
    for line in log.read_text().splitlines():
        message = json.loads(line[2:])
        if line.startswith("> "):
            if "id" in message and "method" in message:
                if message["method"] == "initialize":
                    pending.clear()
                pending[message["id"]] = len(pairs)
                pairs.append((message, None))
        elif "id" in message and "method" not in message and message["id"] in pending:
            index = pending.pop(message["id"])
            pairs[index] = (pairs[index][0], message)
    return pairs


def test_acpx_set_and_set_mode_drive_the_llm_agents_pickers(tmp_path: Path) -> None:
    # acpx sends session/set_config_option without `type` (a value id, as v1 says) and
    # session/set_mode; the llm agent's model and mode pickers take both.
    wire = tmp_path / "wire.log"
    agent = (
        f"{sys.executable} {HERE / 'wire_recorder.py'} {wire} "
        f"{sys.executable} {EXAMPLES / 'llm_agent.py'}"
    )
    marker = tmp_path / "must-not-exist"
    try:
        _acpx(tmp_path, "", "sessions", "new", command=agent)
        _acpx(tmp_path, "", "set", "model", "scripted-terse", command=agent)
        _acpx(tmp_path, "", "set", "mode", "ask", command=agent)
        _acpx(tmp_path, "", "set-mode", "code", command=agent)
        _acpx(tmp_path, "", "set-mode", "ask", command=agent)
        messages = _acpx(
            tmp_path, "", "--approve-all", "prompt", f"run touch {marker}", command=agent
        )
    finally:
        subprocess.run(
            [
                str(HERE / "node_modules" / ".bin" / "acpx"),
                "--agent",
                agent,
                "--cwd",
                str(tmp_path),
                "sessions",
                "close",
            ],
            capture_output=True,
            timeout=60,
            check=False,
            env={**os.environ, "HOME": str(tmp_path / "home")},
            cwd=tmp_path,
        )
    text = "".join(
        u["content"]["text"]
        for u in _updates(messages)
        if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert text.startswith("[scripted-terse]") and "no tool named 'run_command'" in text, text
    assert not marker.exists()
    pairs = _requests_and_answers(wire)
    configs = [(r, a) for r, a in pairs if r["method"] == "session/set_config_option"]
    # acpx starts the agent for each command, resumes the session and sets again every
    # value it was told to keep, before the command's own request.
    assert {(r["params"]["configId"], r["params"]["value"]) for r, _ in configs} == {
        ("model", "scripted-terse"),
        ("mode", "ask"),
    }
    assert not [r for r, _ in configs if "type" in r["params"]]  # what acpx really sends
    modes = [(r, a) for r, a in pairs if r["method"] == "session/set_mode"]
    assert [r["params"]["modeId"] for r, _ in modes] == ["code", "ask"]
    for _, answer in configs + modes:
        assert answer is not None and "result" in answer, answer
    new = next(a for r, a in pairs if r["method"] == "session/new")
    assert new is not None and new["result"]["modes"]["currentModeId"] == "code"
    # The agent keeps the chosen values with the session: the last restart's resume
    # answer shows them before acpx sends them again.
    resumed = [a for r, a in pairs if r["method"] == "session/resume"]
    assert resumed[-1] is not None
    assert resumed[-1]["result"]["modes"]["currentModeId"] == "ask"
    left = subprocess.run(["pgrep", "-f", str(wire)], capture_output=True, text=True, check=False)
    assert left.stdout.strip() == "", f"processes left: {left.stdout}"
