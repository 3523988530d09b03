"""``acpio serve`` against slow and idle sockets, and on SIGTERM: a real process, real clients.

Sockets that never finish their headers are closed after ``--header-timeout``;
more idle sockets than the cap (kept below the file limit, whose soft value
is raised to the hard one) never keep a client with the right token from an
answer; SIGTERM cancels running turns and reports them, closes the store and
exits 0.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets.exceptions
import websockets.sync.client

from .server import EXAMPLES, REPO

TOKEN = "socket-test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 2, "info": {"name": "t", "version": "1"}},
}


@contextlib.contextmanager
def _serve(
    *extra: str, file_limit: tuple[int, int] | None = None, target: str = "echo_agent.py:EchoAgent"
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    def limit() -> None:
        if file_limit is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, file_limit)

    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "acpio._cli",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--token-env",
            "ACPIO_TEST_TOKEN",
            *extra,
            f"{EXAMPLES}/{target}",
        ],
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={**os.environ, "ACPIO_TEST_TOKEN": TOKEN},
        preexec_fn=limit,  # noqa: PLW1509 - only setrlimit, before exec
    )
    assert process.stderr is not None
    try:
        line = process.stderr.readline()
        assert " on " in line, line + process.stderr.read()
        yield process, line.split(" on ", 1)[1].strip()
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        process.stderr.close()


def _address(url: str) -> tuple[str, int]:
    host, port = url.split("//")[1].split("/", 1)[0].split(":")
    return host, int(port)


def _closed_by_server(sock: socket.socket, trickle: bytes = b"") -> bool:
    """Whether the server closes ``sock`` within 20 s (sending ``trickle`` a byte at a time)."""
    deadline = time.monotonic() + 20
    sock.settimeout(0.2)
    sent = 0
    while time.monotonic() < deadline:
        try:
            if sent < len(trickle):
                sock.send(trickle[sent : sent + 1])
                sent += 1
            if sock.recv(4096) == b"":
                return True
        except TimeoutError:
            continue
        except OSError:  # reset
            return True
    return False


@pytest.mark.parametrize(
    "trickle",
    [b"", b"POST /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 500],
    ids=["silent", "headers-a-byte-at-a-time"],
)
def test_a_socket_that_sends_no_whole_headers_is_closed(trickle: bytes) -> None:
    # The silent socket meets the default deadline (10 s), the trickling one a shorter one.
    with _serve(*(("--header-timeout", "1") if trickle else ())) as (_, url):
        with socket.create_connection(_address(url), timeout=10) as sock:
            assert _closed_by_server(sock, trickle)
        # A kept-alive socket gets the same time again after each response.
        with httpx.Client(timeout=20) as client:
            assert client.post(url, json=INIT, headers=AUTH).status_code == 200


def test_idle_sockets_past_the_cap_leave_room_for_a_real_client() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    low = (200, 240) if hard == resource.RLIM_INFINITY or hard >= 240 else (hard - 40, hard)
    with _serve(file_limit=low) as (process, url):
        # The soft limit was raised to the hard one.
        assert resource.prlimit(process.pid, resource.RLIMIT_NOFILE)[0] == low[1]
        idle = []
        try:
            for _ in range(low[1] + 60):
                idle.append(socket.create_connection(_address(url), timeout=10))
            with httpx.Client(timeout=20) as client:
                answer = client.post(url, json=INIT, headers=AUTH)
                assert answer.status_code == 200
                assert answer.json()["result"]["protocolVersion"] == 2
        finally:
            for sock in idle:
                sock.close()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
        assert process.stderr is not None
        errors = process.stderr.read()
    assert "Traceback" not in errors
    assert "Too many open files" not in errors
    # One warning for the whole flood, not one per socket.
    assert errors.count("sockets open") <= 2, errors
    del soft


def _call(ws: websockets.sync.client.ClientConnection, id_: int, method: str, **params: Any) -> Any:
    ws.send(json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}))
    while True:
        message = json.loads(ws.recv(timeout=10))
        if message.get("id") == id_ and "method" not in message:
            return message["result"]


V1_INIT = {
    "protocolVersion": 1,
    "clientCapabilities": {},
    "clientInfo": {"name": "t", "version": "1"},
}


@pytest.mark.parametrize("version", [1, 2])
def test_sigterm_reports_the_turn_closes_the_store_and_exits_0(
    version: int, tmp_path: Path
) -> None:
    store = tmp_path / "sessions.db"
    with _serve("--store", str(store), target="shell_agent.py:ShellAgent") as (process, url):
        with websockets.sync.client.connect(
            url.replace("http", "ws", 1), additional_headers=AUTH, open_timeout=10
        ) as ws:
            if version == 1:
                _call(ws, 0, "initialize", **V1_INIT)
            else:
                _call(ws, 0, "initialize", **INIT["params"])  # type: ignore[arg-type]
            session = _call(ws, 1, "session/new", cwd=str(REPO), mcpServers=[])["sessionId"]
            prompt = [{"type": "text", "text": "run echo hi"}]
            ws.send(
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": 2,
                        "method": "session/prompt",
                        "params": {"sessionId": session, "prompt": prompt},
                    }
                )
            )
            seen: list[dict[str, Any]] = []
            while seen[-1:] == [] or seen[-1].get("method") != "session/request_permission":
                seen.append(json.loads(ws.recv(timeout=10)))
            process.send_signal(signal.SIGTERM)
            with contextlib.suppress(websockets.exceptions.ConnectionClosedOK):
                while True:
                    seen.append(json.loads(ws.recv(timeout=10)))
        assert process.wait(timeout=30) == 0
    updates = [m["params"]["update"] for m in seen if m.get("method") == "session/update"]
    calls = [u for u in updates if u["sessionUpdate"] in ("tool_call", "tool_call_update")]
    answer = next(m for m in seen if m.get("id") == 2 and "method" not in m)
    if version == 1:
        del answer["result"]["_meta"]["acp/cursor"]  # the WebSocket's cursor (resumable streams)
        assert answer["result"].pop("_meta") == {}
        assert answer == {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "cancelled"}}, seen
        # v1 has no cancelled status: the nearest, with the real one beside it.
        assert calls[-1]["status"] == "failed"
        assert calls[-1]["_meta"]["acpio"]["status"] == "cancelled"
    else:
        assert "result" in answer
        assert calls[-1]["status"] == "cancelled"
        assert updates[-1] == {
            "sessionUpdate": "state_update",
            "state": "idle",
            "stopReason": "cancelled",
        }
    # The store was closed: its write-ahead log checkpointed away, the session given up.
    wal = store.with_name(store.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    with sqlite3.connect(store) as db:
        owner = db.execute("SELECT owner_pid FROM sessions WHERE id = ?", (session,)).fetchone()
    assert owner == (None,)
