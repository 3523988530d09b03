"""The sign-in example with real v1 clients: the official Python SDK (``agent-client-protocol``
0.12.1) announces terminal sign-in by ``_meta["terminal-auth"]``, is refused ``auth_required``,
runs the terminal method, authenticates, prompts and logs out (``py_sdk_signin_client.py``);
acpx, which announces none, is refused with a message that says what to run, and served
once the user ran it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parents[1] / "examples" / "signin_agent.py"


def test_python_sdk_v1_client_signs_in_through_the_terminal_method(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, str(HERE / "py_sdk_signin_client.py"), str(EXAMPLE), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert json.loads(completed.stdout) == {"failures": []}
    # Signed out at the end: the stored key is gone.
    assert not (tmp_path / "signin-agent" / "api-key").exists()


def _acpx_exec(tmp_path: Path, state: Path, prompt: str) -> tuple[int, list[dict[str, Any]]]:
    """``acpx exec`` on the example (acpx 0.19 announces no terminal sign-in): its exit
    status and the JSON-RPC messages it printed."""
    if shutil.which("node") is None:
        pytest.fail("node is not installed; scripts/test.sh installs the interop prerequisites")
    acpx = HERE / "node_modules" / ".bin" / "acpx"
    env = {**os.environ, "HOME": str(tmp_path / "home"), "ACPIO_STATE_DIR": str(state)}
    env.pop("SIGNIN_AGENT_API_KEY", None)
    agent = f"{sys.executable} {EXAMPLE}"
    completed = subprocess.run(
        [str(acpx), "--agent", agent, "--cwd", str(tmp_path), "--format", "json", "exec", prompt],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
        cwd=tmp_path,
    )
    lines = completed.stdout.splitlines()
    return completed.returncode, [json.loads(line) for line in lines if line.startswith("{")]


def test_acpx_is_refused_until_the_terminal_sign_in_stored_a_key(tmp_path: Path) -> None:
    state = tmp_path / "state"
    code, messages = _acpx_exec(tmp_path, state, "hello")
    assert code != 0
    (error,) = [m["error"] for m in messages if "error" in m]
    assert error["code"] == -32000
    assert "run `<the agent's command> --login` in a terminal" in error["message"]
    # The user does what the message says; acpx then gets its answer.
    signed = subprocess.run(
        [sys.executable, str(EXAMPLE), "--login"],
        input="sk-acpx-7777\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "ACPIO_STATE_DIR": str(state)},
    )
    assert signed.returncode == 0, signed.stderr
    code, messages = _acpx_exec(tmp_path, state, "hello")
    assert code == 0, messages
    texts = [
        m["params"]["update"]["content"]["text"]
        for m in messages
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    ]
    assert "".join(texts) == "(key ...7777) You said: hello"
