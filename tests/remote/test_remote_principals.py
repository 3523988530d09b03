"""Principals on the remote server: each token holder sees and opens only its own sessions.

A server with a token per principal (``tokens=``, what ``acpio serve --token-file``
reads): alice's session is, to bob, exactly an unknown session, over Streamable
HTTP and over WebSocket, whatever he asks (list, load, resume, prompt, close,
delete, a stream GET), and alice's connection is, to bob, an unknown connection.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets.sync.client

import acpio
from acpio.remote import AuthRequest, RemoteApp

from .inprocess import serving

ALICE = {"Authorization": "Bearer tok-alice-0123456789"}
BOB = {"Authorization": "Bearer tok-bob-0123456789"}
TOKENS = {"tok-alice-0123456789": "alice", "tok-bob-0123456789": "bob"}
JSON = {"Content-Type": "application/json"}
UNKNOWN = "sess_doesnotexist000000000000"


def _init(version: int = 2) -> dict[str, Any]:
    params: dict[str, Any] = {"protocolVersion": version}
    if version == 2:
        params["info"] = {"name": "t", "version": "1"}
    else:
        params["clientCapabilities"] = {}
    return {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}


class Echo(acpio.Agent):
    info = acpio.Implementation(name="echo", version="1")

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        await session.message(acpio.text_of(prompt))
        return "end_turn"


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serving(RemoteApp(Echo, tokens=TOKENS)) as served:
        yield served


# ------------------------------------------------------------------ WebSocket


class Socket:
    def __init__(self, url: str, auth: dict[str, str], version: int = 2) -> None:
        self.socket = websockets.sync.client.connect(
            url.replace("http", "ws", 1), additional_headers=auth, open_timeout=10
        ).__enter__()
        self.next_id = 1
        self.call_raw(_init(version))

    def call_raw(self, message: dict[str, Any]) -> dict[str, Any]:
        self.socket.send(json.dumps(message))
        while True:
            answer: dict[str, Any] = json.loads(self.socket.recv(timeout=10))
            if answer.get("id") == message["id"] and "method" not in answer:
                return answer

    def call(self, method: str, **params: object) -> dict[str, Any]:
        self.next_id += 1
        return self.call_raw(
            {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        )

    def close(self) -> None:
        self.socket.close()


def _as_unknown(answer: dict[str, Any], session_id: str) -> str:
    """The answer with the session id it names replaced, to compare with an unknown one's."""
    answer = {k: v for k, v in answer.items() if k != "id"}
    error = answer.get("error")
    for holder in (answer.get("result"), error.get("data") if isinstance(error, dict) else None):
        if isinstance(holder, dict):  # the WebSocket's cursors (resumable streams) differ
            holder.get("_meta", {}).pop("acp/cursor", None)
    return json.dumps(answer, sort_keys=True).replace(session_id, UNKNOWN)


@pytest.mark.parametrize("version", [1, 2])
def test_over_websocket_anothers_session_is_an_unknown_one(
    url: str, tmp_path: Path, version: int
) -> None:
    cwd = str(tmp_path)
    alice = Socket(url, ALICE, version)
    bob = Socket(url, BOB, version)
    try:
        created = alice.call("session/new", cwd=cwd, mcpServers=[])
        theirs = created["result"]["sessionId"]
        mine = bob.call("session/new", cwd=cwd, mcpServers=[])["result"]["sessionId"]
        listed = {s["sessionId"] for s in bob.call("session/list")["result"]["sessions"]}
        assert mine in listed and theirs not in listed
        reopen = ["session/load"] if version == 1 else ["session/resume"]
        for method in [*reopen, "session/prompt", "session/close", "session/delete"]:
            params: dict[str, object] = {"cwd": cwd, "mcpServers": []}
            if method == "session/prompt":
                params = {"prompt": [{"type": "text", "text": "hi"}]}
            elif method in ("session/close", "session/delete"):
                params = {}
            if version == 1 and method in ("session/close", "session/delete"):
                continue  # v1 has neither
            for_theirs = bob.call(method, sessionId=theirs, **params)
            for_unknown = bob.call(method, sessionId=UNKNOWN, **params)
            assert _as_unknown(for_theirs, theirs) == _as_unknown(for_unknown, UNKNOWN), method
        # Nothing of bob's reached alice's session: it is still hers, whole.
        listed = {s["sessionId"] for s in alice.call("session/list")["result"]["sessions"]}
        assert theirs in listed and mine not in listed
        answer = alice.call(
            "session/prompt", sessionId=theirs, prompt=[{"type": "text", "text": "still mine"}]
        )
        assert "error" not in answer
    finally:
        alice.close()
        bob.close()


# ---------------------------------------------------------------- Streamable HTTP


def _connect(client: httpx.Client, url: str, auth: dict[str, str]) -> dict[str, str]:
    response = client.post(url, json=_init(), headers=auth)
    assert response.status_code == 200
    return {**auth, **JSON, "Acp-Connection-Id": response.headers["acp-connection-id"]}


def _ask(
    client: httpx.Client,
    url: str,
    headers: dict[str, str],
    body: dict[str, Any],
    session: str | None = None,
) -> tuple[int, dict[str, Any] | None]:
    """POST ``body``; the statuses and the answer read from the stream it goes to."""
    stream_headers = {**headers, "Accept": "text/event-stream"}
    post_headers = dict(headers)
    if session is not None:
        stream_headers["Acp-Session-Id"] = session
        post_headers["Acp-Session-Id"] = session
    if body["method"] == "session/load":
        stream_headers.pop("Acp-Session-Id", None)  # answered on the connection's stream
    with client.stream("GET", url, headers=stream_headers) as stream:
        status = client.post(url, json=body, headers=post_headers).status_code
        if stream.status_code != 200:  # a session stream the connection may not open
            return stream.status_code * 1000 + status, None
        if status != 202:
            return status, None
        for line in stream.iter_lines():
            if line.startswith("data: "):
                answer: dict[str, Any] = json.loads(line[6:])
                if answer.get("id") == body["id"]:
                    return status, answer
    raise AssertionError("no answer")


def _request(rid: int, method: str, **params: object) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def test_over_http_anothers_session_is_an_unknown_one(url: str, tmp_path: Path) -> None:
    cwd = str(tmp_path)
    with httpx.Client(timeout=20) as client:
        alice = _connect(client, url, ALICE)
        bob = _connect(client, url, BOB)
        _, created = _ask(client, url, alice, _request(1, "session/new", cwd=cwd, mcpServers=[]))
        assert created is not None
        theirs = created["result"]["sessionId"]
        _, listed = _ask(client, url, bob, _request(2, "session/list"))
        assert listed is not None
        assert theirs not in {s["sessionId"] for s in listed["result"]["sessions"]}
        asks = [
            _request(3, "session/resume", cwd=cwd, mcpServers=[]),
            _request(4, "session/load", cwd=cwd, mcpServers=[]),
            _request(5, "session/prompt", prompt=[{"type": "text", "text": "hi"}]),
            _request(6, "session/close"),
            _request(7, "session/delete"),
        ]
        for body in asks:
            answers = []
            for session_id in (theirs, UNKNOWN):
                ask = {**body, "params": {**body["params"], "sessionId": session_id}}
                status, answer = _ask(client, url, bob, ask, session_id)
                shown = _as_unknown(answer, session_id) if answer is not None else None
                answers.append((status, shown))
            assert answers[0] == answers[1], body["method"]
        # A stream GET of alice's session is bob's like that of an unknown session.
        statuses = []
        for session_id in (theirs, UNKNOWN):
            with client.stream(
                "GET",
                url,
                headers={**bob, "Accept": "text/event-stream", "Acp-Session-Id": session_id},
            ) as stream:
                statuses.append(stream.status_code)
        assert statuses[0] == statuses[1]
        # alice's session is still hers.
        _, listed = _ask(client, url, alice, _request(8, "session/list"))
        assert listed is not None
        assert theirs in {s["sessionId"] for s in listed["result"]["sessions"]}


def test_anothers_connection_is_an_unknown_connection(url: str) -> None:
    with httpx.Client(timeout=20) as client:
        alice = _connect(client, url, ALICE)
        as_bob = {**alice, **BOB}
        unknown = {**as_bob, "Acp-Connection-Id": "nope"}
        for headers in (as_bob, unknown):
            posted = client.post(url, json=_request(1, "session/list"), headers=headers)
            assert (posted.status_code, posted.text) == (404, "Unknown Acp-Connection-Id")
            got = client.get(url, headers={**headers, "Accept": "text/event-stream"})
            assert (got.status_code, got.text) == (404, "Unknown Acp-Connection-Id")
            assert client.delete(url, headers=headers).status_code == 404
        # alice's connection is untouched.
        _, listed = _ask(client, url, alice, _request(2, "session/list"))
        assert listed is not None and "result" in listed


def test_a_wrong_token_is_refused_and_a_shared_token_sees_every_session() -> None:
    with httpx.Client(timeout=20) as client:
        with serving(RemoteApp(Echo, tokens=TOKENS)) as url:
            wrong = client.post(url, json=_init(), headers={"Authorization": "Bearer nope"})
            assert wrong.status_code == 401
        with pytest.raises(ValueError, match="not both"):
            RemoteApp(Echo, token="x", tokens=TOKENS)
        with pytest.raises(ValueError, match="empty"):
            RemoteApp(Echo, tokens={})


def test_authenticate_may_name_the_principal(tmp_path: Path) -> None:
    def authenticate(request: AuthRequest) -> bool | str:
        user = request.headers.get("x-user", "")
        return user if user in ("alice", "bob") else False

    cwd = str(tmp_path)
    with serving(RemoteApp(Echo, authenticate=authenticate)) as url:
        assert httpx.post(url, json=_init(), headers={"X-User": "eve"}).status_code == 401
        alice = Socket(url, {"X-User": "alice"})
        bob = Socket(url, {"X-User": "bob"})
        try:
            theirs = alice.call("session/new", cwd=cwd, mcpServers=[])["result"]["sessionId"]
            assert bob.call("session/list")["result"]["sessions"] == []
            refused = bob.call("session/resume", sessionId=theirs, cwd=cwd, mcpServers=[])
            assert refused["error"]["code"] == -32002
            again = Socket(url, {"X-User": "alice"})
            try:
                listed = again.call("session/list")["result"]["sessions"]
                assert [s["sessionId"] for s in listed] == [theirs]
            finally:
                again.close()
        finally:
            alice.close()
            bob.close()
