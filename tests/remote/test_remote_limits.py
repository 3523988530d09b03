"""Limits of the remote server, each reached with its answer while other clients go on."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import websockets.exceptions
import websockets.sync.client

import acpio
from acpio.remote import RemoteApp, RemoteLimits

from .inprocess import serving
from .server import EXAMPLES, REPO

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 2, "info": {"name": "t", "version": "1"}},
}
JSON = {"Content-Type": "application/json"}


class Chatty(acpio.Agent):
    """Streams as much text as the prompt asks for (in 64 KiB chunks)."""

    info = acpio.Implementation(name="chatty", version="1")

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        stream = session.message_stream()
        for _ in range(int(acpio.text_of(prompt))):
            await stream.write("x" * 65536)
        return "end_turn"


def _connect(client: httpx.Client, url: str) -> dict[str, str]:
    response = client.post(url, json=INIT)
    assert response.status_code == 200
    return {**JSON, "Acp-Connection-Id": response.headers["acp-connection-id"]}


def _new_session(client: httpx.Client, url: str, headers: dict[str, str]) -> str:
    with client.stream("GET", url, headers={**headers, "Accept": "text/event-stream"}) as stream:
        body = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/tmp"}}
        assert client.post(url, json=body, headers=headers).status_code == 202
        for line in stream.iter_lines():
            if line.startswith("data: "):
                return str(json.loads(line[6:])["result"]["sessionId"])
    raise AssertionError("no session/new answer")


def _prompt(
    client: httpx.Client,
    url: str,
    headers: dict[str, str],
    session: str,
    text: str,
    *,
    rid: int = 2,
) -> int:
    body = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": text}]},
    }
    return client.post(url, json=body, headers={**headers, "Acp-Session-Id": session}).status_code


def test_a_stalled_reader_closes_only_its_connection() -> None:
    limits = RemoteLimits(max_buffered_bytes=256 * 1024, stall_timeout=1.0)
    with serving(RemoteApp(Chatty, limits=limits)) as url, httpx.Client(timeout=20) as client:
        stalled = _connect(client, url)
        session = _new_session(client, url, stalled)
        # 16 MiB for a session stream nobody opens: it fills, then stalls.
        assert _prompt(client, url, stalled, session, "256") == 202
        healthy = _connect(client, url)
        other = _new_session(client, url, healthy)
        headers = {**healthy, "Acp-Session-Id": other, "Accept": "text/event-stream"}
        with client.stream("GET", url, headers=headers) as stream:
            assert _prompt(client, url, healthy, other, "2") == 202
            for line in stream.iter_lines():
                if '"idle"' in line:
                    break
        deadline = time.monotonic() + 10
        status = 202
        while status != 404 and time.monotonic() < deadline:
            time.sleep(0.2)
            status = client.post(
                url, json={"jsonrpc": "2.0", "method": "x"}, headers=stalled
            ).status_code
        assert status == 404


def test_an_idle_connection_is_closed() -> None:
    limits = RemoteLimits(idle_timeout=0.5)
    with serving(RemoteApp(Chatty, limits=limits)) as url, httpx.Client(timeout=20) as client:
        headers = _connect(client, url)
        time.sleep(2.0)
        gone = client.post(url, json={"jsonrpc": "2.0", "method": "x"}, headers=headers)
        assert gone.status_code == 404


def test_the_process_session_limit_answers_with_an_error() -> None:
    limits = RemoteLimits(max_sessions=1)
    with serving(RemoteApp(Chatty, limits=limits)) as url, httpx.Client(timeout=20) as client:
        headers = _connect(client, url)
        _new_session(client, url, headers)
        with client.stream(
            "GET", url, headers={**headers, "Accept": "text/event-stream"}
        ) as stream:
            body = {"jsonrpc": "2.0", "id": 5, "method": "session/new", "params": {"cwd": "/tmp"}}
            assert client.post(url, json=body, headers=headers).status_code == 202
            for line in stream.iter_lines():
                if line.startswith("data: "):
                    answer = json.loads(line[6:])
                    break
        assert answer["id"] == 5
        assert answer["error"]["code"] == -32603
        assert "Too many sessions" in answer["error"]["message"]


def test_the_connection_limit_answers_503() -> None:
    app = RemoteApp(Chatty, limits=RemoteLimits(max_connections=1))
    with serving(app) as url, httpx.Client(timeout=20) as client:
        _connect(client, url)
        refused = client.post(url, json=INIT)
        assert refused.status_code == 503
        assert refused.headers["retry-after"]


def _served_shell() -> Iterator[tuple[subprocess.Popen[str], str]]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "acpio._cli",
            "serve",
            "--listen",
            "127.0.0.1:0",
            f"{EXAMPLES}/shell_agent.py:ShellAgent",
        ],
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    assert process.stderr is not None
    line = process.stderr.readline()
    url = line.split(" on ", 1)[1].strip()
    try:
        yield process, url
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        process.stderr.close()


def test_sigterm_cancels_and_reports_running_turns() -> None:
    for process, url in _served_shell():
        with websockets.sync.client.connect(url.replace("http", "ws", 1), open_timeout=10) as ws:
            ws.send(json.dumps(INIT))
            json.loads(ws.recv(timeout=10))
            ws.send(
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "session/new",
                        "params": {"cwd": str(REPO)},
                    }
                )
            )
            session = json.loads(ws.recv(timeout=10))["result"]["sessionId"]
            ws.send(
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": 2,
                        "method": "session/prompt",
                        "params": {
                            "sessionId": session,
                            "prompt": [{"type": "text", "text": "run echo hi"}],
                        },
                    }
                )
            )
            while "session/request_permission" not in (message := ws.recv(timeout=10)):
                pass
            os.kill(process.pid, signal.SIGTERM)
            seen = []
            try:
                while True:
                    seen.append(json.loads(ws.recv(timeout=10)))
            except websockets.exceptions.ConnectionClosed as closed:
                assert closed.rcvd is not None and closed.rcvd.code == 1001
            states = [
                m["params"]["update"]
                for m in seen
                if m.get("method") == "session/update"
                and m["params"]["update"].get("sessionUpdate") == "state_update"
            ]
            assert states and states[-1]["state"] == "idle", seen
            assert states[-1]["stopReason"] == "cancelled"
        # serve_uvicorn returns after the shutdown (uvicorn would raise the signal again).
        assert process.wait(timeout=20) == 0
        del message


class Big(acpio.Agent):
    """Answers with one message as long as the prompt asks for."""

    info = acpio.Implementation(name="big", version="1")

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        await session.message("y" * int(acpio.text_of(prompt)))
        return "end_turn"


def test_a_message_larger_than_a_read_arrives_whole() -> None:
    size = 3 * 1024 * 1024 + 17  # more than the router's 1 MiB reads
    with (
        serving(RemoteApp(Big)) as url,
        websockets.sync.client.connect(
            url.replace("http", "ws", 1), max_size=None, open_timeout=10
        ) as ws,
    ):
        ws.send(json.dumps(INIT))
        ws.recv(timeout=10)
        ws.send(
            json.dumps(
                {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/tmp"}}
            )
        )
        session = json.loads(ws.recv(timeout=10))["result"]["sessionId"]
        ws.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "session/prompt",
                    "params": {
                        "sessionId": session,
                        "prompt": [{"type": "text", "text": str(size)}],
                    },
                }
            )
        )
        text = ""
        while True:
            message = json.loads(ws.recv(timeout=20))
            update = message.get("params", {}).get("update", {})
            if update.get("sessionUpdate") in ("agent_message", "agent_message_chunk"):
                content = update["content"]
                blocks = content if isinstance(content, list) else [content]
                text += "".join(block.get("text", "") for block in blocks)
            if update.get("sessionUpdate") == "state_update" and update.get("state") == "idle":
                break
        assert text == "y" * size


def test_a_slow_reader_holds_back_its_own_session_only() -> None:
    limits = RemoteLimits(max_buffered_bytes=256 * 1024, stall_timeout=60.0)
    with serving(RemoteApp(Chatty, limits=limits)) as url, httpx.Client(timeout=30) as client:
        headers = _connect(client, url)
        slow = _new_session(client, url, headers)
        fast = _new_session(client, url, headers)
        # 4 MiB for a session whose stream is not read yet: its gate closes at 256 KiB.
        assert _prompt(client, url, headers, slow, "64") == 202
        time.sleep(0.5)
        fast_listen = {**headers, "Acp-Session-Id": fast, "Accept": "text/event-stream"}
        with client.stream("GET", url, headers=fast_listen) as stream:
            assert _prompt(client, url, headers, fast, "2", rid=3) == 202
            for line in stream.iter_lines():
                if '"idle"' in line:
                    assert '"end_turn"' in line
                    break  # the other session's turn ended while the slow one waits
        slow_listen = {**headers, "Acp-Session-Id": slow, "Accept": "text/event-stream"}
        received = 0
        with client.stream("GET", url, headers=slow_listen) as stream:
            for line in stream.iter_lines():
                if line.startswith("data: "):
                    update = json.loads(line[6:]).get("params", {}).get("update", {})
                    if update.get("sessionUpdate") == "agent_message_chunk":
                        received += len(update["content"]["text"])
                    if update.get("state") == "idle":
                        assert update["stopReason"] == "end_turn"
                        break
        assert received == 64 * 65536  # nothing of the held-back session was lost
