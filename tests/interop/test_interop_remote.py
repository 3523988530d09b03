"""Remote interoperability: the official TypeScript SDK's HTTP and WebSocket clients against
``acpio serve``.

``remote_client.mjs`` drives ``examples/echo_agent.py`` and ``examples/shell_agent.py``,
each served by a real ``acpio serve`` process (uvicorn on a free loopback port, a bearer
token required), through ``createHttpStream`` and ``createWebSocketStream`` of
``@agentclientprotocol/sdk`` 2.4.0, over ACP v1 and draft v2: echo, permission allowed and
rejected, cancel while a permission is pending, two sessions on one connection, and
reconnect (a new connection, 409 until the session is reattached, then
``session/load`` or ``session/resume``).

Failover between replicas: two ``acpio serve`` processes on one real PostgreSQL
(``tests/pg_server.py``) serve ``tests/remote/memo_agent.py``, which keeps every
prompt in its durable agent state. The SDK client runs a turn on replica A; A is
killed (SIGKILL) once that turn is committed, or stopped (SIGSTOP: alive, its lease
running); the same client reopens the session on replica B, gets the replay of A's
turn, and prompts on there, the agent answering with the prompt A saw.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "remote"))

from server import EXAMPLES, served, serving  # noqa: E402

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


MEMO_AGENT = f"{HERE.parent / 'remote' / 'memo_agent.py'}:MemoAgent"


def _committed(url: str, session_id: str, part: bytes) -> bool:
    """Whether a committed event row of the session, and its saved agent state, hold
    ``part``."""
    with psycopg.connect(url) as conn:
        events = conn.execute(
            b"SELECT data FROM acpio_events WHERE session_id = %s", (session_id,)
        ).fetchall()
        states = conn.execute(
            b"SELECT state FROM acpio_agent_states WHERE session_id = %s", (session_id,)
        ).fetchall()
    return any(part in bytes(row[0]) for row in events) and any(
        row[0] is not None and b"first words" in bytes(row[0]) for row in states
    )


def _wait(condition: Callable[[], bool], what: str, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {seconds} s"
        time.sleep(0.05)


@pytest.mark.parametrize(
    ("transport", "protocol", "death"),
    [
        ("http", 1, "kill"),
        ("http", 2, "kill"),
        ("ws", 1, "kill"),
        ("ws", 2, "kill"),
        ("http", 2, "stop"),
        ("ws", 1, "stop"),
    ],
)
def test_sdk_client_fails_over_to_another_replica(
    transport: str, protocol: int, death: str, postgres_url: str, tmp_path: Path
) -> None:
    """kill: A dies by SIGKILL after a committed turn; B, on the same machine, sees the
    owner is a gone process and takes the session over at once, although the lease (60 s)
    still runs. stop: A is alive but stopped; B refuses the session with ``retryAfter``
    until A's lease (2 s) runs out, then takes it over."""
    node = _node()
    lease = 60 if death == "kill" else 2
    store = f"{postgres_url}?acpio_lease={lease}&acpio_flush_interval=0.2"
    result = tmp_path / "result.json"
    workdir = tmp_path / "work"
    workdir.mkdir()
    args = ("--store", store, "--affinity-cookie", "acp_affinity")
    with (
        serving(MEMO_AGENT, *args, token=TOKEN) as (url_a, replica_a),
        serving(MEMO_AGENT, *args, token=TOKEN) as (url_b, replica_b),
    ):
        client = subprocess.Popen(
            [
                node,
                *_websocket_flags(node),
                "--no-warnings",
                str(PROGRAM),
                "--replica-a",
                url_a,
                "--replica-b",
                url_b,
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
                *(["--expect-refusal"] if death == "stop" else []),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert client.stdin is not None and client.stdout is not None
        try:
            seen: list[str] = []
            for line in client.stdout:
                seen.append(line)
                if line.startswith("FAILOVER-READY"):
                    break
            ready = seen[-1].split() if seen else []
            assert ready[:1] == ["FAILOVER-READY"], "".join(seen) + client.communicate()[1]
            session_id, pid = ready[1], int(ready[2])
            assert pid == replica_a.pid  # the agent runs in the serve process
            # The turn's end wakes A's writer: the kill comes after that commit.
            _wait(lambda: _committed(postgres_url, session_id, f"pid {pid}".encode()), "A's flush")
            if death == "kill":
                replica_a.send_signal(signal.SIGKILL)
                assert replica_a.wait(timeout=10) == -signal.SIGKILL
            else:
                os.kill(pid, signal.SIGSTOP)
            client.stdin.write("GO\n")
            client.stdin.flush()
            out, err = client.communicate(timeout=120)
        finally:
            if client.poll() is None:
                client.kill()
                client.wait()
        assert replica_b.poll() is None
    output = "".join(seen) + out + err
    assert result.is_file(), output
    outcomes = {entry["name"]: entry for entry in json.loads(result.read_text())}
    assert set(outcomes) == {"failover"}, output
    assert outcomes["failover"]["ok"], json.dumps(outcomes["failover"]["failures"], indent=2)
    assert client.returncode == 0, output
    with psycopg.connect(postgres_url) as conn:
        row = conn.execute(b"SELECT owner, fence FROM acpio_sessions").fetchall()
    # Created by A (fence 1), taken over by B (2); B gave it up when its client left, or
    # when it stopped.
    assert [(owner, fence) for owner, fence in row] == [(None, 2)]


@pytest.mark.parametrize("protocol", [1, 2])
@pytest.mark.parametrize("transport", ["http", "ws"])
def test_sdk_client_sees_its_turn_cancelled_when_the_server_stops(
    transport: str, protocol: int, tmp_path: Path
) -> None:
    """SIGTERM while a turn waits on a permission: the SDK client gets the turn ended
    ``cancelled`` (the v1 prompt's answer, the v2 idle state) and its tool call
    cancelled; ``acpio serve`` closes its store and exits 0."""
    node = _node()
    store = tmp_path / "sessions.db"
    with serving(f"{EXAMPLES}/shell_agent.py:ShellAgent", "--store", str(store), token=TOKEN) as (
        url,
        server,
    ):
        client = subprocess.Popen(
            [
                node,
                *_websocket_flags(node),
                "--no-warnings",
                str(PROGRAM),
                "--shutdown",
                url,
                "--transport",
                transport,
                "--protocol",
                str(protocol),
                "--token",
                TOKEN,
                "--workdir",
                str(tmp_path),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert client.stdout is not None
        try:
            seen: list[str] = []
            for line in client.stdout:
                seen.append(line)
                if line.startswith("SHUTDOWN-READY"):
                    break
            assert seen[-1:] == ["SHUTDOWN-READY\n"], "".join(seen) + client.communicate()[1]
            server.send_signal(signal.SIGTERM)
            out, err = client.communicate(timeout=60)
            assert client.returncode == 0, "".join(seen) + out + err
            assert server.wait(timeout=30) == 0
        finally:
            if client.poll() is None:
                client.kill()
                client.wait()
    wal = store.with_name(store.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0
