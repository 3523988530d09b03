"""Remote interoperability: the official TypeScript SDK's HTTP and WebSocket clients against
``acpio serve``.

``remote_client.mjs`` drives ``examples/echo_agent.py`` and ``examples/shell_agent.py``,
each served by a real ``acpio serve`` process (uvicorn on a free loopback port, a bearer
token required), through ``createHttpStream`` and ``createWebSocketStream`` of
``@agentclientprotocol/sdk`` 2.4.0, over ACP v1 and draft v2: echo, permission allowed and
rejected, cancel while a permission is pending, two sessions on one connection, and
reconnect (a new connection, 409 until the session is reattached, then
``session/load`` or ``session/resume``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "remote"))

from server import EXAMPLES, served  # noqa: E402

PROGRAM = HERE / "remote_client.mjs"
SCENARIOS = ("echo", "permission_allow", "permission_reject", "cancel", "two_sessions", "reconnect")
TOKEN = "interop-secret-token"


def _websocket_flags(node: str) -> list[str]:
    """Node 20 has a WebSocket client only behind a flag; later versions have it built in."""
    probe = [node, "-e", "process.exit(typeof WebSocket === 'function' ? 0 : 1)"]
    built_in = subprocess.run(probe, capture_output=True, check=False).returncode == 0
    return [] if built_in else ["--experimental-websocket"]


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.fail(
            "Node.js (`node`) is not on PATH; the remote interop test needs it", pytrace=False
        )
    if not (HERE / "node_modules" / "@agentclientprotocol" / "sdk" / "package.json").is_file():
        pytest.fail("run `npm ci --prefix tests/interop` first", pytrace=False)
    return node


@pytest.mark.parametrize("protocol", [1, 2])
@pytest.mark.parametrize("transport", ["http", "ws"])
def test_sdk_remote_clients(transport: str, protocol: int, tmp_path: Path) -> None:
    node = _node()
    result = tmp_path / "result.json"
    workdir = tmp_path / "work"
    workdir.mkdir()
    cookie = ("--affinity-cookie", "acp_affinity")
    with (
        # The echo agent keeps its sessions in SQLite: reconnecting reads them back from it.
        served(
            f"{EXAMPLES}/echo_agent.py:EchoAgent",
            *cookie,
            "--store",
            str(tmp_path / "sessions.db"),
            token=TOKEN,
        ) as echo,
        served(f"{EXAMPLES}/shell_agent.py:ShellAgent", *cookie, token=TOKEN) as shell,
    ):
        completed = subprocess.run(
            [
                node,
                *_websocket_flags(node),
                "--no-warnings",
                str(PROGRAM),
                "--echo",
                echo,
                "--shell",
                shell,
                "--transport",
                transport,
                "--protocol",
                str(protocol),
                "--token",
                TOKEN,
                "--workdir",
                str(workdir),
                "--result",
                str(result),
            ],
            capture_output=True,
            text=True,
            timeout=400,
            check=False,
        )
    assert result.is_file(), completed.stdout + completed.stderr
    outcomes = {entry["name"]: entry for entry in json.loads(result.read_text())}
    assert set(outcomes) == set(SCENARIOS), completed.stdout + completed.stderr
    failed = {name: entry["failures"] for name, entry in outcomes.items() if not entry["ok"]}
    assert not failed, json.dumps(failed, indent=2)
    assert completed.returncode == 0, completed.stdout + completed.stderr
