"""A session reopened from a second connection to the same ``acpio serve`` (what the
affinity cookie gives a client that reconnects) stays served by the store when the first
connection ends: what it records afterwards is kept, in SQLite and in PostgreSQL.

The first connection's end used to release the session in the store although the second
still served it: its later updates were never written, and on PostgreSQL any replica
could take the session from a live owner.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import websockets.sync.client

from .server import EXAMPLES, serving

ECHO = f"{EXAMPLES}/echo_agent.py:EchoAgent"
Socket = websockets.sync.client.ClientConnection


def _call(socket: Socket, id_: int, method: str, **params: object) -> list[dict[str, object]]:
    """Send a request; the notifications that came before its answer."""
    socket.send(json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}))
    notes: list[dict[str, object]] = []
    while True:
        message = json.loads(socket.recv(timeout=20))
        if message.get("id") == id_:
            assert "result" in message, message
            notes.append(message["result"])
            return notes
        notes.append(message)


@contextlib.contextmanager
def _open(url: str) -> Iterator[Socket]:
    with websockets.sync.client.connect(url.replace("http", "ws", 1), open_timeout=10) as socket:
        info = {"name": "t", "version": "1"}
        _call(socket, 0, "initialize", protocolVersion=1, clientCapabilities={}, clientInfo=info)
        yield socket


def _prompt(socket: Socket, id_: int, session_id: str, text: str) -> None:
    prompt = [{"type": "text", "text": text}]
    answer = _call(socket, id_, "session/prompt", sessionId=session_id, prompt=prompt)[-1]
    assert answer["stopReason"] == "end_turn"


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_the_first_connection_ending_does_not_release_a_reopened_session(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    store = (
        str(tmp_path / "sessions.db")
        if kind == "sqlite"
        else str(request.getfixturevalue("postgres_url"))
    )
    cwd = str(tmp_path)
    with serving(ECHO, "--store", store) as (url, _), _open(url) as first:
        session_id = str(_call(first, 1, "session/new", cwd=cwd, mcpServers=[])[-1]["sessionId"])
        _prompt(first, 2, session_id, "alpha")
        with _open(url) as second:
            _call(second, 1, "session/load", sessionId=session_id, cwd=cwd, mcpServers=[])
            first.close()  # the client gave up its first connection
            _prompt(second, 2, session_id, "bravo")
    # Stopped (SIGTERM: the store writes what it holds); a new process replays the session.
    with serving(ECHO, "--store", store) as (url, _), _open(url) as again:
        replay = _call(again, 1, "session/load", sessionId=session_id, cwd=cwd, mcpServers=[])
    said = [
        note["params"]["update"]["content"]["text"]  # type: ignore[index]
        for note in replay
        if note.get("method") == "session/update"
        and note["params"]["update"]["sessionUpdate"] == "user_message_chunk"  # type: ignore[index]
    ]
    assert said == ["alpha", "bravo"]
