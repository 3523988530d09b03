"""The server's session limit is exact: a session is counted when admitted, not when answered.

Many WebSocket connections each send many ``session/new`` at once, none waiting
for an answer: exactly ``max_sessions`` succeed, every other one is refused
``-32603``, and the count goes back down as connections close and sessions
are closed.
"""

from __future__ import annotations

import json
import time
from typing import Any

import websockets.sync.client

import acpio
from acpio.remote import RemoteApp, RemoteLimits

from .inprocess import serving

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 2, "info": {"name": "t", "version": "1"}},
}


class Idle(acpio.Agent):
    info = acpio.Implementation(name="idle", version="1")

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        return "end_turn"


def _answers(socket: Any, ids: set[int]) -> dict[int, dict[str, Any]]:
    found: dict[int, dict[str, Any]] = {}
    while ids - found.keys():
        message = json.loads(socket.recv(timeout=20))
        if message.get("id") in ids and "method" not in message:
            found[message["id"]] = message
    return found


def _new_sessions(sockets: list[Any], count: int, first_id: int) -> list[dict[str, Any]]:
    ids = set(range(first_id, first_id + count))
    for socket in sockets:  # everything sent before anything is read
        for rid in ids:
            body = {"jsonrpc": "2.0", "id": rid, "method": "session/new", "params": {"cwd": "/"}}
            socket.send(json.dumps(body))
    return [answer for socket in sockets for answer in _answers(socket, ids).values()]


def _until(check: Any) -> None:
    deadline = time.monotonic() + 10
    while not check():
        assert time.monotonic() < deadline, "the session count did not settle"
        time.sleep(0.02)


def test_concurrent_session_requests_never_pass_the_limit() -> None:
    app = RemoteApp(Idle, limits=RemoteLimits(max_sessions=25))
    with serving(app) as url:
        ws_url = url.replace("http", "ws", 1)
        sockets = [websockets.sync.client.connect(ws_url).__enter__() for _ in range(8)]
        try:
            for socket in sockets:
                socket.send(json.dumps(INIT))
                _answers(socket, {0})
            answers = _new_sessions(sockets, 10, 1)
            created = [a for a in answers if "result" in a]
            refused = [a for a in answers if "error" in a]
            assert len(created) == 25
            assert len(refused) == 80 - 25
            assert {a["error"]["code"] for a in refused} == {-32603}
            assert all("Too many sessions" in a["error"]["message"] for a in refused)
            assert app.registry.sessions == 25
            # Closing a session gives its slot back.
            index = answers.index(created[0])
            owner = sockets[index // 10]
            close = {
                "jsonrpc": "2.0",
                "id": 100,
                "method": "session/close",
                "params": {"sessionId": created[0]["result"]["sessionId"]},
            }
            owner.send(json.dumps(close))
            assert "result" in _answers(owner, {100})[100]
            _until(lambda: app.registry.sessions == 24)
        finally:
            for socket in sockets:
                socket.close()
        # A closed connection gives back every slot it held.
        _until(lambda: app.registry.sessions == 0)
        with websockets.sync.client.connect(ws_url) as again:
            again.send(json.dumps(INIT))
            _answers(again, {0})
            answers = _new_sessions([again], 30, 1)
            assert sum("result" in a for a in answers) == 25
