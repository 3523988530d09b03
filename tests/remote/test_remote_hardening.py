"""What a hostile or broken client meets before the agent sees anything, on a real server.

Messages nested too deeply and ids of the wrong type are refused with
``-32600`` before they are decoded, and the connection goes on; a GET for a
session nobody knows is 404; a ``Host`` that is not loopback is refused when
serving on loopback; a body that never ends is answered 408.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
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
JSON = {"Content-Type": "application/json"}
#: Nested far deeper than any limit, and deeper than the JSON decoder's recursion can go.
DEEP = "[" * 5000 + "]" * 5000


class Asker(acpio.Agent):
    """Asks the client for permission once per prompt and says what it was told."""

    info = acpio.Implementation(name="asker", version="1")

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        async with session.tool_call("Ask", kind="other") as call:
            outcome = await call.request_permission(acpio.permission.ALLOW_OR_REJECT, title="?")
            await session.message("allowed" if outcome.allowed else "rejected")
        return "end_turn"


def _message(id_: int, method: str, **params: object) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params})


def _until_answer(ws: websockets.sync.client.ClientConnection, id_: object) -> dict[str, Any]:
    while True:
        message = json.loads(ws.recv(timeout=10))
        if "method" not in message and message.get("id") == id_:
            return message  # type: ignore[no-any-return]


@pytest.fixture
def url() -> Iterator[str]:
    with serving(RemoteApp(Asker, limits=RemoteLimits(max_connections=2))) as address:
        yield address


def _connect(client: httpx.Client, url: str) -> dict[str, str]:
    response = client.post(url, json=INIT)
    assert response.status_code == 200, response.text
    return {**JSON, "Acp-Connection-Id": response.headers["acp-connection-id"]}


def test_a_deeply_nested_post_is_refused_before_decoding(url: str) -> None:
    with httpx.Client(timeout=20) as client:
        headers = _connect(client, url)
        for body in (
            DEEP,
            f'{{"jsonrpc":"2.0","id":5,"method":"session/list","params":{{"x":{DEEP}}}}}',
            f'{{"jsonrpc":"2.0","method":"initialize","id":1,"params":{DEEP}}}',
        ):
            refused = client.post(url, content=body.encode(), headers=headers)
            assert refused.status_code == 400, refused.text
            error = refused.json()["error"]
            assert error["code"] == -32600
            assert "nested deeper than the limit of 256 levels" in error["message"]
        # The request's id is read without decoding the rest.
        assert refused.json()["id"] == 1
        # The connection is untouched.
        listed = client.post(url, content=_message(6, "session/list"), headers=headers)
        assert listed.status_code == 202


def test_ids_that_are_neither_integers_nor_strings_are_refused_at_once(url: str) -> None:
    with httpx.Client(timeout=5) as client:
        for id_ in ("1.0", "1.5e3", '{"a":1}', "null", "true", "[1]"):
            body = json.dumps(INIT).replace('"id": 0', f'"id": {id_}')
            refused = client.post(url, content=body.encode(), headers=JSON)
            assert refused.status_code == 400, (id_, refused.text)
            assert refused.json() == {
                "jsonrpc": "2.0",
                "id": None,
                "error": {
                    "code": -32600,
                    "message": "Invalid request: the id must be an integer or a string",
                },
            }
        # None of them took one of the two connection slots.
        _connect(client, url)
        _connect(client, url)


def test_the_websocket_answers_refused_messages_and_goes_on(url: str) -> None:
    with websockets.sync.client.connect(url.replace("http", "ws", 1), open_timeout=10) as ws:
        ws.send(json.dumps(INIT))
        assert "result" in _until_answer(ws, 0)
        ws.send(_message(1, "session/new", cwd="/tmp"))
        session = _until_answer(ws, 1)["result"]["sessionId"]
        ws.send(DEEP)
        assert _until_answer(ws, None)["error"]["code"] == -32600
        deep_prompt = json.loads(
            _message(2, "session/prompt", sessionId=session, prompt=[{"type": "text"}])
        )
        text = json.dumps(deep_prompt).replace('{"type": "text"}', f'{{"type":"text","x":{DEEP}}}')
        ws.send(text)
        assert _until_answer(ws, 2)["error"]["code"] == -32600
        ws.send(json.dumps(INIT).replace('"id": 0', '"id": 1.0'))
        assert _until_answer(ws, None)["error"]["code"] == -32600
        # A client answer nested too deeply fails the agent's request at once.
        ws.send(
            _message(3, "session/prompt", sessionId=session, prompt=[{"type": "text", "text": "q"}])
        )
        while True:
            message = json.loads(ws.recv(timeout=10))
            if message.get("method") == "session/request_permission":
                break
        ws.send(f'{{"jsonrpc":"2.0","id":{json.dumps(message["id"])},"result":{DEEP}}}')
        # The agent's request failed (the permission counts as not given), at once.
        said = []
        while '"state":"idle"' not in (said or [""])[-1]:
            said.append(ws.recv(timeout=10))
        assert any('"rejected"' in text for text in said), said
        # And the connection still serves.
        ws.send(_message(4, "session/list"))
        assert "result" in _until_answer(ws, 4)


def test_a_deep_client_answer_over_http_is_refused_and_fails_the_request(url: str) -> None:
    with httpx.Client(timeout=20) as client:
        headers = _connect(client, url)
        listen = {**headers, "Accept": "text/event-stream"}
        with client.stream("GET", url, headers=listen) as stream:
            client.post(url, content=_message(1, "session/new", cwd="/tmp"), headers=headers)
            session = next(_data(stream))["result"]["sessionId"]
        session_headers = {**headers, "Acp-Session-Id": session}
        with client.stream("GET", url, headers={**listen, "Acp-Session-Id": session}) as stream:
            prompt = _message(
                2, "session/prompt", sessionId=session, prompt=[{"type": "text", "text": "q"}]
            )
            client.post(url, content=prompt.encode(), headers=session_headers)
            events = _data(stream)
            asked = next(m for m in events if m.get("method") == "session/request_permission")
            answer = f'{{"jsonrpc":"2.0","id":{json.dumps(asked["id"])},"result":{DEEP}}}'
            refused = client.post(url, content=answer.encode(), headers=session_headers)
            assert refused.status_code == 400
            assert refused.json()["error"]["code"] == -32600
            # The agent's request failed now, not after its 30 s wait for an answer.
            started = time.monotonic()
            said: list[str] = []
            for message in events:
                said.append(json.dumps(message))
                if message.get("params", {}).get("update", {}).get("state") == "idle":
                    break
            assert time.monotonic() - started < 10
            assert any('"rejected"' in text for text in said), said


def _data(stream: httpx.Response) -> Iterator[dict[str, Any]]:
    for line in stream.iter_lines():
        if line.startswith("data: "):
            yield json.loads(line[6:])


def test_a_stream_for_an_unknown_session_is_404(url: str) -> None:
    with httpx.Client(timeout=20) as client:
        headers = _connect(client, url)
        listen = {**headers, "Accept": "text/event-stream"}
        with client.stream("GET", url, headers={**listen, "Acp-Session-Id": "sess_x"}) as unknown:
            assert unknown.status_code == 404
            assert b"Unknown Acp-Session-Id" in unknown.read()
        with client.stream("GET", url, headers=listen) as stream:
            client.post(url, content=_message(1, "session/new", cwd="/tmp"), headers=headers)
            session = next(_data(stream))["result"]["sessionId"]
        # A session the store keeps may be streamed from another connection before it
        # is loaded there (the TypeScript client opens the stream first).
        other = _connect(client, url)
        with client.stream(
            "GET", url, headers={**other, "Accept": "text/event-stream", "Acp-Session-Id": session}
        ) as stream:
            assert stream.status_code == 200


def test_a_foreign_host_is_refused_on_loopback(url: str) -> None:
    port = url.split(":")[2].split("/", maxsplit=1)[0]
    with httpx.Client(timeout=20) as client:
        for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1.evil.example:{port}"):
            refused = client.post(url, json=INIT, headers={"Host": host})
            assert refused.status_code == 421, host
        for host in (f"localhost:{port}", f"127.0.0.1:{port}", "localhost", f"[::1]:{port}"):
            answer = client.post(url, json=INIT, headers={"Host": host})
            assert answer.status_code == 200, host
            gone = {"Acp-Connection-Id": answer.headers["acp-connection-id"]}
            assert client.delete(url, headers=gone).status_code == 202
    with _raw(url) as sock:
        sock.sendall(
            f"GET /acp HTTP/1.1\r\nHost: evil.example:{port}\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        head = _response_head(sock)
        assert head.startswith(b"HTTP/1.1 421 "), head


def test_named_hosts_are_the_only_ones_accepted_when_given() -> None:
    app = RemoteApp(Asker, allowed_hosts=["agent.example"])
    with serving(app) as url, httpx.Client(timeout=20) as client:
        assert client.post(url, json=INIT, headers={"Host": "agent.example"}).status_code == 200
        assert client.post(url, json=INIT).status_code == 421


def _raw(url: str) -> socket.socket:
    host, port = url.split("//")[1].split("/", maxsplit=1)[0].split(":")
    return socket.create_connection((host, int(port)), timeout=10)


def _response_head(sock: socket.socket) -> bytes:
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = sock.recv(4096)
        if not chunk:
            break
        received += chunk
    return received


@pytest.mark.parametrize(
    "request_head",
    [
        b"Content-Length: 100\r\n\r\n" + b'{"jsonrpc":',
        b"Transfer-Encoding: chunked\r\n\r\n" + b'5\r\n{"jso\r\n',
    ],
    ids=["shorter-than-content-length", "chunked-never-ending"],
)
def test_a_body_that_never_ends_is_answered_408(request_head: bytes) -> None:
    app = RemoteApp(Asker, limits=RemoteLimits(body_timeout=0.5))
    with serving(app) as url, _raw(url) as sock:
        sock.sendall(
            b"POST /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + request_head
        )
        head = _response_head(sock)
        assert head.startswith(b"HTTP/1.1 408 "), head
