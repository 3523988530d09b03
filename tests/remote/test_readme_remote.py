"""The "Remote agents" page (docs/remote-agents.md) runs: its command serves, its app
answers, and its two replicas on PostgreSQL fail over (a session of the killed one goes on
in the other)."""

from __future__ import annotations

import json
import re
import shlex
import signal
import sys
import time
from pathlib import Path

import anyio
import httpx
import msgspec
import psycopg
import pytest
import websockets.sync.client

from acpio.remote import RemoteApp

from .server import REPO, served, serving

SECTION = (REPO / "docs" / "remote-agents.md").read_text()
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 2, "info": {"name": "t", "version": "1"}},
}


def _blocks(language: str) -> list[str]:
    return [str(code) for code in re.findall(rf"```{language}\n(.*?)```", SECTION, re.DOTALL)]


def _block(language: str) -> str:
    (code,) = _blocks(language)
    return code


def test_the_serve_command_serves_the_shell_agent() -> None:
    words = shlex.split(_blocks("bash")[0])
    assert words[:4] == ["acpio", "serve", "--listen", "127.0.0.1:8765"]
    target = words[4]
    with served(target) as url:  # the same command on a free port
        response = httpx.post(url, json=INIT, timeout=20)
        assert response.status_code == 200
        assert response.json()["result"]["info"]["name"] == "shell-agent"


@pytest.mark.anyio
async def test_the_asgi_app_block_answers_initialize(tmp_path: Path) -> None:
    namespace: dict[str, object] = {"__name__": "remote_app"}
    exec(compile(_block("python"), "remote_app.py", "exec"), namespace)
    app = namespace["app"]
    assert isinstance(app, RemoteApp)
    sent: list[dict[str, object]] = []
    body = httpx.Request("POST", "http://x/acp", json=INIT).content

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": body}

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/acp",
        "headers": [
            (b"content-type", b"application/json"),
            (b"authorization", b"Bearer change-me"),
        ],
    }
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            app._group = group
            await app(scope, receive, send)
            await app.aclose()
    assert sent[0]["status"] == 200
    assert sys.modules.get("remote_app") is None


def _call(
    socket: websockets.sync.client.ClientConnection, id_: int, method: str, **params: object
) -> tuple[dict[str, object], list[dict[str, object]]]:
    """Send a request; its answer and the notifications that came before it."""
    socket.send(json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}))
    notes: list[dict[str, object]] = []
    while True:
        message = json.loads(socket.recv(timeout=20))
        if message.get("id") == id_:
            assert "result" in message, message
            return message["result"], notes
        notes.append(message)


def _said(notes: list[dict[str, object]], kind: str) -> str:
    updates = [n["params"]["update"] for n in notes if n.get("method") == "session/update"]  # type: ignore[index]
    return "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == kind)


def _replica(socket: websockets.sync.client.ClientConnection) -> None:
    info = {"name": "readme", "version": "1"}
    _call(socket, 0, "initialize", protocolVersion=1, clientCapabilities={}, clientInfo=info)


def test_the_replicas_share_sessions_in_postgresql(postgres_url: str, tmp_path: Path) -> None:
    """The block's two commands (free ports, the tests' database): a session created and
    prompted on the first replica, which is then killed, is reopened on the second with
    its history and prompted on."""
    lines = _blocks("bash")[1].strip().splitlines()
    assert lines[0].startswith("STORE='postgresql://")
    commands = [shlex.split(line) for line in lines[1:]]
    assert len(commands) == 2
    listens = []
    for words in commands:
        assert words[:3] == ["acpio", "serve", "--listen"] and words[-1] == "&"
        listens.append(words[3])
        words[3] = "127.0.0.1:0"
        words[words.index("$STORE")] = postgres_url
    assert listens == ["127.0.0.1:8765", "127.0.0.1:8766"]
    (a_args, b_args) = (words[2:-2] for words in commands)
    with (
        serving(commands[0][-2], *a_args) as (url_a, replica_a),
        serving(commands[1][-2], *b_args) as (url_b, _),
    ):
        with websockets.sync.client.connect(url_a.replace("http", "ws", 1)) as socket:
            _replica(socket)
            new, _ = _call(socket, 1, "session/new", cwd=str(tmp_path), mcpServers=[])
            session_id = new["sessionId"]
            answer, notes = _call(
                socket,
                2,
                "session/prompt",
                sessionId=session_id,
                prompt=[{"type": "text", "text": "said on the first replica"}],
            )
            assert answer["stopReason"] == "end_turn"
            assert _said(notes, "agent_message_chunk") == "said on the first replica"
            deadline = time.monotonic() + 20
            while _committed_reply(postgres_url, session_id) != "said on the first replica":
                assert time.monotonic() < deadline, "the turn was not committed"
                time.sleep(0.05)
            replica_a.send_signal(signal.SIGKILL)
        replica_a.wait(timeout=10)
        with websockets.sync.client.connect(url_b.replace("http", "ws", 1)) as socket:
            _replica(socket)
            _, replay = _call(
                socket, 1, "session/load", sessionId=session_id, cwd=str(tmp_path), mcpServers=[]
            )
            assert _said(replay, "user_message_chunk") == "said on the first replica"
            assert _said(replay, "agent_message_chunk") == "said on the first replica"
            answer, notes = _call(
                socket,
                2,
                "session/prompt",
                sessionId=session_id,
                prompt=[{"type": "text", "text": "and on the second"}],
            )
            assert answer["stopReason"] == "end_turn"
            assert _said(notes, "agent_message_chunk") == "and on the second"
        # The client left: B, still serving, gave the session up (any replica may take it).
        deadline = time.monotonic() + 20
        while _owner(postgres_url, session_id) is not None:
            assert time.monotonic() < deadline, "B kept the session after its client left"
            time.sleep(0.05)


def _committed_reply(url: str, session_id: str) -> str:
    """The agent's reply text as committed so far: the text of the store's rows' message runs
    (``[id, "agent_message_chunk", text, sizes]`` items), not any row that quotes the prompt."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            b"SELECT data FROM acpio_events WHERE session_id = %s ORDER BY seq", (session_id,)
        ).fetchall()
    text = []
    for (data,) in rows:
        for item in msgspec.msgpack.decode(bytes(data)):
            if isinstance(item, list) and len(item) == 4 and item[1] == "agent_message_chunk":
                text.append(item[2])
    return "".join(text)


def _owner(url: str, session_id: str) -> object:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            b"SELECT owner FROM acpio_sessions WHERE id = %s", (session_id,)
        ).fetchall()
    return rows[0][0]
