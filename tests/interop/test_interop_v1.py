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
import select
import shutil
import signal
import sqlite3
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
    env: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Run acpx as a user would, with its JSON output: the raw JSON-RPC messages it saw.

    acpx prints both directions without saying which; error answers other than the
    codes in ``allow`` fail the test. ``command`` runs the agent instead of the example;
    ``env`` is added to the environment acpx (and so the agent) runs in.
    """
    _node()
    acpx = HERE / "node_modules" / ".bin" / "acpx"
    command = command or f"{sys.executable} {EXAMPLES / agent}.py"
    env = {**os.environ, "HOME": str(tmp_path / "home"), **(env or {})}
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
    # v1 has no $/cancel_request: the exit watcher is given up without one (acpx would
    # print it into the user's transcript).
    assert not [m for m in messages if m.get("method") == "$/cancel_request"]


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


def _lives(log: Path) -> list[list[tuple[str, dict[str, Any]]]]:
    """The wire, one list per agent process (each starts with acpx's ``initialize``)."""
    lives: list[list[tuple[str, dict[str, Any]]]] = []
    for line in log.read_text().splitlines():
        message = json.loads(line[2:])
        if line.startswith("> ") and message.get("method") == "initialize":
            lives.append([])
        lives[-1].append((line[:1], message))
    return lives


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
    sent, _received = _wire(wire)
    configs = [m for m in sent if m.get("method") == "session/set_config_option"]
    # acpx starts the agent for each command, resumes the session and sets again every
    # value it was told to keep, before the command's own request.
    assert {(m["params"]["configId"], m["params"]["value"]) for m in configs} == {
        ("model", "scripted-terse"),
        ("mode", "ask"),
    }
    assert not [m for m in configs if "type" in m["params"]]  # what acpx really sends
    modes = [m for m in sent if m.get("method") == "session/set_mode"]
    assert [m["params"]["modeId"] for m in modes] == ["code", "ask"]
    # Each command has its own agent process, whose request ids start again at 0.
    for life in _lives(wire):
        answers = {m["id"]: m for d, m in life if d == "<" and "id" in m and "method" not in m}
        for request in (m for d, m in life if d == ">" and m in configs + modes):
            assert "result" in answers[request["id"]], answers[request["id"]]
    first = _lives(wire)[0]
    (request,) = [m for d, m in first if d == ">" and m.get("method") == "session/new"]
    (new,) = [m for d, m in first if d == "<" and m.get("id") == request["id"]]
    assert new["result"]["modes"]["currentModeId"] == "code"
    # The agent keeps the chosen values with the session: the last process's resume
    # answer shows them before acpx sends any again.
    last = _lives(wire)[-1]
    (request,) = [m for d, m in last if d == ">" and m.get("method") == "session/resume"]
    (resumed,) = [m for d, m in last if d == "<" and m.get("id") == request["id"]]
    assert resumed["result"]["modes"]["currentModeId"] == "ask"
    left = subprocess.run(["pgrep", "-f", str(wire)], capture_output=True, text=True, check=False)
    assert left.stdout.strip() == "", f"processes left: {left.stdout}"


# ------------------------------------------- pydantic-ai example: acpx, SIGKILL between commands


def _stored(state_dir: Path) -> tuple[str, dict[str, object]] | None:
    """The pydantic-ai example's saved conversation (JSON text) and config values, if any."""
    files = list(state_dir.rglob("*.sqlite3"))
    if not files:
        return None
    with sqlite3.connect(files[0]) as conn:
        row = conn.execute("SELECT state, config_values FROM agent_states").fetchone()
    if row is None or row[0] is None:
        return None
    return bytes(row[0]).decode(), json.loads(row[1])


def _kill_agent_once_stored(
    wire: Path, state_dir: Path, prompt: str, values: dict[str, object]
) -> None:
    """SIGKILL the agent acpx keeps running, once its store holds ``prompt`` and ``values``
    (its writer commits off the event loop: the file is polled)."""
    deadline = time.monotonic() + 30
    while True:
        found = _stored(state_dir)
        if found is not None and prompt in found[0] and found[1] == values:
            break
        has_prompt = found is not None and prompt in found[0]
        assert time.monotonic() < deadline, (
            f"the store never held {prompt!r} and {values}: values "
            f"{found[1] if found else None}, prompt stored: {has_prompt}"
        )
        time.sleep(0.02)
    recorders = subprocess.run(
        ["pgrep", "-f", str(wire)], capture_output=True, text=True, check=False
    ).stdout.split()
    agents = [
        pid
        for recorder in recorders
        for pid in subprocess.run(
            ["pgrep", "-P", recorder], capture_output=True, text=True, check=False
        ).stdout.split()
    ]
    assert len(agents) == 1, f"expected the one agent acpx keeps running: {agents}"
    os.kill(int(agents[0]), signal.SIGKILL)
    while subprocess.run(["pgrep", "-f", str(wire)], capture_output=True, check=False).stdout:
        assert time.monotonic() < deadline, "the killed agent's recorder did not end"
        time.sleep(0.02)


def _reopen_answer(life: list[tuple[str, dict[str, Any]]]) -> tuple[str, dict[str, Any]]:
    """The method acpx reopened the session with in this process, and the agent's answer."""
    (request,) = [
        m for d, m in life if d == ">" and m.get("method") in ("session/resume", "session/load")
    ]
    (answer,) = [
        m for d, m in life if d == "<" and m.get("id") == request["id"] and "method" not in m
    ]
    return request["method"], answer["result"]


def test_acpx_pydantic_ai_example_remembers_across_sigkills(tmp_path: Path) -> None:
    # acpx starts the agent again for each command (here: after a SIGKILL of the one it
    # kept) and reopens the session; then it sends again the model it was told to keep.
    # What the agent itself remembered is its answer to the reopening, sent before that.
    (tmp_path / "notes.txt").write_text("one two three four\n")
    wire = tmp_path / "wire.log"
    state_dir = tmp_path / "state"
    env = {"ACPIO_STATE_DIR": str(state_dir), "XDG_STATE_HOME": str(tmp_path / "xdg")}
    agent = (
        f"{sys.executable} {HERE / 'wire_recorder.py'} {wire} "
        f"{sys.executable} {EXAMPLES / 'pydantic_ai_agent.py'}"
    )
    picks = {"model": "scripted-2", "mode": "code"}

    def acpx(*args: str) -> list[dict[str, Any]]:
        return _acpx(tmp_path, "", *args, command=agent, env=env)

    try:
        acpx("sessions", "new")
        acpx("prompt", "hello there")
        _kill_agent_once_stored(
            wire, state_dir, "hello there", {"model": "scripted", "mode": "ask"}
        )
        acpx("set", "model", "scripted-2")
        _kill_agent_once_stored(
            wire, state_dir, "hello there", {"model": "scripted-2", "mode": "ask"}
        )
        acpx("set-mode", "code")
        _kill_agent_once_stored(wire, state_dir, "hello there", picks)
        counted = acpx("prompt", "count notes.txt")
        _kill_agent_once_stored(wire, state_dir, "count notes.txt", picks)
        recall = acpx("prompt", "recall")
    finally:
        subprocess.run(
            [
                str(HERE / "node_modules" / ".bin" / "acpx"),
                *("--agent", agent, "--cwd", str(tmp_path), "sessions", "close"),
            ],
            capture_output=True,
            timeout=60,
            check=False,
            env={**os.environ, "HOME": str(tmp_path / "home"), **env},
            cwd=tmp_path,
        )
    statuses = [u.get("status") for u in _updates(counted) if "toolCallId" in u]
    assert "in_progress" in statuses and statuses[-1] == "completed", statuses
    reply = "".join(
        u["content"]["text"]
        for u in _updates(recall)
        if u["sessionUpdate"] == "agent_message_chunk"
    )
    # Nothing but the agent's store carried the prompts over: acpx sends only the new one.
    assert json.loads(reply) == {
        "model": "scripted-2",
        "mode": "code",
        "prompts": ["hello there", "count notes.txt", "recall"],
    }
    lives = _lives(wire)
    assert len(lives) == 6  # sessions new, then one agent process for each command
    expected = [
        {"model": "scripted", "mode": "ask"},  # prompt "hello there"
        {"model": "scripted", "mode": "ask"},  # set model
        {"model": "scripted-2", "mode": "ask"},  # set-mode
        picks,  # prompt "count notes.txt"
        picks,  # prompt "recall"
    ]
    for life, values in zip(lives[1:], expected, strict=True):
        method, answer = _reopen_answer(life)
        # acpio offers session/resume on v1, which acpx prefers to session/load.
        assert method == "session/resume"
        assert {o["id"]: o["currentValue"] for o in answer["configOptions"]} == values
        assert answer["modes"]["currentModeId"] == values["mode"]
    sent = [m for life in lives for d, m in life if d == ">"]
    # acpx sends the mode only with set-mode: the reopened agents kept "code" themselves.
    assert [m["params"]["modeId"] for m in sent if m.get("method") == "session/set_mode"] == [
        "code"
    ]
    left = subprocess.run(["pgrep", "-f", str(wire)], capture_output=True, text=True, check=False)
    assert left.stdout.strip() == "", f"processes left: {left.stdout}"


def _acpx_prompt_on_a_tty(tmp_path: Path, agent: str, prompt: str) -> str:
    """Run acpx on a terminal as a person does, answer its permission question "n", and
    return what it wrote to the terminal up to and including the question."""
    _node()
    acpx = HERE / "node_modules" / ".bin" / "acpx"
    env = {**os.environ, "HOME": str(tmp_path / "home"), "NO_COLOR": "1"}
    leader, follower = os.openpty()
    process = subprocess.Popen(
        [
            str(acpx),
            "--agent",
            f"{sys.executable} {EXAMPLES / agent}.py",
            *("--cwd", str(tmp_path), "exec", prompt),
        ],
        stdin=follower,
        stdout=subprocess.DEVNULL,
        stderr=follower,
        env=env,
        cwd=tmp_path,
    )
    os.close(follower)
    seen = b""
    deadline = time.monotonic() + 60
    try:
        while b"(y/N)" not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 1.0)
            if ready:
                try:
                    seen += os.read(leader, 4096)
                except OSError:  # the terminal closed: acpx ended
                    break
        if b"(y/N)" in seen:
            os.write(leader, b"n\r")
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(leader)
    return seen.decode("utf-8", "replace")


def test_acpx_asks_with_the_command_and_the_edit_title(tmp_path: Path) -> None:
    # acpx's question is "Allow <toolCall.title> [<toolCall.kind>]? (y/N)": on v1 the
    # request names what the user approves (issue 31), not "Allow tool [other]?".
    marker = tmp_path / "must-not-exist"
    shown = _acpx_prompt_on_a_tty(tmp_path, "shell_agent", f"run touch {marker}")
    assert f"Allow Run `touch {marker}` [execute]? (y/N)" in shown, shown
    assert not marker.exists()
    target = tmp_path / "notes.txt"
    target.write_text("before\n")
    shown = _acpx_prompt_on_a_tty(tmp_path, "edit_agent", f"write {target}\nafter")
    assert f"Allow Edit {target.resolve()} [edit]? (y/N)" in shown, shown
    assert target.read_text() == "before\n"
