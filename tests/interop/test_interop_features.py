"""Interoperability of config options, slash commands and elicitation with the official
TypeScript SDK's v2 client (``features_client.mjs``, the SDK pinned in package.json).

The agent is ``tests/cli/features_agent.py``; the Node program checks the
answers and updates against the SDK's own validators. Like the other interop
tests, a missing Node or ``node_modules`` fails with the command to install
them (``npm ci --prefix tests/interop``) instead of skipping.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PROGRAM = HERE / "features_client.mjs"
AGENT = HERE.parent / "cli" / "features_agent.py"
SDK = HERE / "node_modules" / "@agentclientprotocol" / "sdk"


def test_features_with_the_typescript_sdk_client() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed; it runs the TypeScript SDK's client")
    if not SDK.is_dir():
        pytest.fail(f"{SDK} is missing; run `npm ci --prefix tests/interop` in the repository")
    completed = subprocess.run(
        [node, str(PROGRAM), "--python", sys.executable, "--agent", str(AGENT)],
        capture_output=True,
        text=True,
        cwd=HERE,
        timeout=300,
        check=False,
    )
    lines = completed.stdout.strip().splitlines()
    assert lines, f"no result from the Node program; stderr:\n{completed.stderr}"
    result = json.loads(lines[-1])
    assert result["ok"], "\n".join(result["failures"]) + "\n" + completed.stderr[-4000:]
    assert completed.returncode == 0
    assert "choose one of: fast, smart" in result["notes"]["invalidValueMessage"]
