"""The sign-in example with a real v1 client: the official Python SDK (``agent-client-protocol``
0.12.1) announces terminal sign-in by ``_meta["terminal-auth"]``, is refused ``auth_required``,
runs the terminal method, authenticates, prompts and logs out (``py_sdk_signin_client.py``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
