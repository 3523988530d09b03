"""The remote transport against bad input, missing credentials and limits, on a real server.

Each test starts ``acpio serve`` (uvicorn, a free loopback port, a bearer token) and
speaks HTTP to it with httpx, and WebSocket with the ``websockets`` client. A client
that behaves keeps working while others send garbage.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
import websockets.exceptions
import websockets.sync.client

from .server import EXAMPLES, served

TOKEN = "test-token-123"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
JSON = {"Content-Type": "application/json", **AUTH}
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 2, "info": {"name": "t", "version": "1"}},
}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with served(
        f"{EXAMPLES}/echo_agent.py:EchoAgent",
        "--max-body-size",
        "65536",
        "--affinity-cookie",
        "acp_route",
        "--allow-origin",
        "https://editor.example",
        token=TOKEN,
    ) as address:
        yield address


def _initialize(client: httpx.Client, url: str) -> str:
    response = client.post(url, json=INIT, headers=AUTH)
    assert response.status_code == 200, response.text
    assert response.json()["result"]["protocolVersion"] == 2
    return response.headers["acp-connection-id"]


def _events(stream: httpx.Response) -> Iterator[dict[str, object]]:
    for line in stream.iter_lines():
        if line.startswith("data: "):
            yield json.loads(line[6:])


def test_a_whole_turn_over_post_and_sse(url: str, tmp_path: object) -> None:
    with httpx.Client(timeout=20) as client:
        connection = _initialize(client, url)
        assert client.cookies.get("acp_route"), "the affinity cookie was not set"
        headers = {**JSON, "Acp-Connection-Id": connection}
        with client.stream(
            "GET", url, headers={**headers, "Accept": "text/event-stream"}
        ) as conn_stream:
            assert conn_stream.status_code == 200
            answer = client.post(
                url,
                json={
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "session/new",
                    "params": {"cwd": "/tmp"},
                },
                headers=headers,
            )
            assert answer.status_code == 202
            created = next(_events(conn_stream))
            session = created["result"]["sessionId"]  # type: ignore[index]
        session_headers = {**headers, "Acp-Session-Id": session, "Accept": "text/event-stream"}
        with client.stream("GET", url, headers=session_headers) as stream:
            prompt = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/prompt",
                "params": {"sessionId": session, "prompt": [{"type": "text", "text": "hi there"}]},
            }
            assert client.post(url, json=prompt, headers=session_headers).status_code == 202
            text = ""
            for event in _events(stream):
                update = event.get("params", {}).get("update", {})  # type: ignore[union-attr]
                if update.get("sessionUpdate") == "agent_message_chunk":
                    text += update["content"]["text"]
                if update.get("sessionUpdate") == "state_update" and update.get("state") == "idle":
                    break
            assert text == "hi there"
        assert client.delete(url, headers=headers).status_code == 202
        gone = client.post(url, json={"jsonrpc": "2.0", "method": "x"}, headers=headers)
        assert gone.status_code == 404


def test_bad_input_is_answered_and_others_go_on(url: str) -> None:
    with httpx.Client(timeout=20) as good, httpx.Client(timeout=20) as bad:
        connection = _initialize(good, url)
        headers = {**JSON, "Acp-Connection-Id": connection}
        invalid = bad.post(url, content=b"{not json", headers=headers)
        assert invalid.status_code == 400
        assert invalid.json()["error"]["code"] == -32700
        batch = bad.post(url, content=b"[1,2]", headers=headers)
        assert batch.status_code == 400
        assert batch.json()["error"]["code"] == -32600
        unknown = bad.post(
            url,
            json={"jsonrpc": "2.0", "method": "x"},
            headers={**JSON, "Acp-Connection-Id": "nope"},
        )
        assert unknown.status_code == 404
        assert (
            bad.post(url, json={"jsonrpc": "2.0", "method": "x"}, headers=JSON).status_code == 400
        )
        not_attached = bad.post(
            url,
            json={
                "jsonrpc": "2.0",
                "id": 9,
                "method": "session/prompt",
                "params": {"sessionId": "never-made", "prompt": []},
            },
            headers={**headers, "Acp-Session-Id": "never-made"},
        )
        assert not_attached.status_code == 409
        assert "session/load" in not_attached.text
        missing_session = bad.post(
            url,
            json={
                "jsonrpc": "2.0",
                "id": 9,
                "method": "session/prompt",
                "params": {"sessionId": "s"},
            },
            headers=headers,
        )
        assert missing_session.status_code == 400
        too_big = bad.post(url, content=b" " * 70_000 + b"{}", headers=headers)
        assert too_big.status_code == 413
        assert bad.post(url, content=b"{}", headers={**AUTH}).status_code == 415
        assert bad.get(url, headers={**headers, "Accept": "text/html"}).status_code == 406
        assert bad.put(url, headers=headers).status_code == 405
        second_init = bad.post(url, json=INIT, headers=headers)
        assert second_init.status_code == 400
        # The well-behaved client's connection still works.
        answer = good.post(
            url,
            json={"jsonrpc": "2.0", "id": 1, "method": "session/list", "params": {}},
            headers=headers,
        )
        assert answer.status_code == 202


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"}],
    ids=["missing", "wrong", "not-bearer"],
)
def test_requests_without_the_token_are_refused(url: str, headers: dict[str, str]) -> None:
    response = httpx.post(url, json=INIT, headers=headers, timeout=20)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    ws_url = url.replace("http", "ws", 1)
    with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
        websockets.sync.client.connect(ws_url, additional_headers=headers, open_timeout=10)
    assert refused.value.response.status_code == 401


def test_foreign_origins_are_refused(url: str) -> None:
    foreign = httpx.post(url, json=INIT, headers={**AUTH, "Origin": "https://evil.example"})
    assert foreign.status_code == 403
    allowed = httpx.post(url, json=INIT, headers={**AUTH, "Origin": "https://editor.example"})
    assert allowed.status_code == 200
    with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
        websockets.sync.client.connect(
            url.replace("http", "ws", 1),
            additional_headers={**AUTH, "Origin": "https://evil.example"},
            open_timeout=10,
        )
    assert refused.value.response.status_code == 403


def test_websocket_carries_the_same_messages(url: str) -> None:
    with websockets.sync.client.connect(
        url.replace("http", "ws", 1), additional_headers=AUTH, open_timeout=10
    ) as socket:
        assert socket.response.headers["acp-connection-id"]
        socket.send("{oops")
        assert json.loads(socket.recv(timeout=10))["error"]["code"] == -32700
        socket.send(json.dumps(INIT))
        assert json.loads(socket.recv(timeout=10))["result"]["protocolVersion"] == 2
        socket.send(
            json.dumps(
                {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/tmp"}}
            )
        )
        assert "sessionId" in json.loads(socket.recv(timeout=10))["result"]
    with websockets.sync.client.connect(
        url.replace("http", "ws", 1), additional_headers=AUTH, open_timeout=10
    ) as socket:
        socket.send(" " * 70_000)
        with pytest.raises(websockets.exceptions.ConnectionClosed) as closed:
            socket.recv(timeout=10)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
