"""The ASGI application called directly, on both anyio backends (no server in between).

uvicorn runs on asyncio only; these show the app itself is written with anyio, so an
ASGI server on trio can serve it too.
"""

from __future__ import annotations

import json
from collections.abc import MutableMapping
from typing import Any

import anyio
import anyio.lowlevel
import pytest

import acpio
from acpio.remote import AuthRequest, RemoteApp, RemoteLimits

pytestmark = pytest.mark.anyio

INIT = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "initialize",
        "params": {"protocolVersion": 2, "info": {"name": "t", "version": "1"}},
    }
).encode()


class Echo(acpio.Agent):
    info = acpio.Implementation(name="echo", version="1")

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        await session.message(acpio.text_of(prompt))
        return "end_turn"


async def _post(
    app: RemoteApp, body: bytes, headers: list[tuple[bytes, bytes]]
) -> tuple[int, dict[bytes, bytes], bytes]:
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> MutableMapping[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/acp",
        "headers": [(b"content-type", b"application/json"), *headers],
    }
    await app(scope, receive, send)
    start = sent[0]
    return start["status"], dict(start["headers"]), b"".join(m.get("body", b"") for m in sent[1:])


async def test_initialize_then_limits_then_shutdown() -> None:
    app = RemoteApp(Echo, limits=RemoteLimits(max_connections=1), token="t0k")
    auth = [(b"authorization", b"Bearer t0k")]
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            app._group = group  # what the ASGI lifespan does
            status, headers, body = await _post(app, INIT, auth)
            assert status == 200
            assert json.loads(body)["id"] == 7
            assert headers[b"acp-connection-id"]
            full, retry, _ = await _post(app, INIT, auth)
            assert full == 503 and retry[b"retry-after"]
            refused, _, _ = await _post(app, INIT, [])
            assert refused == 401
            await app.aclose()
            assert not app.registry.connections
            closed, _, _ = await _post(app, INIT, auth)
            assert closed == 503


async def test_the_authentication_hook_sees_every_request() -> None:
    seen: list[AuthRequest] = []

    async def authenticate(request: AuthRequest) -> bool:
        seen.append(request)
        await anyio.lowlevel.checkpoint()
        return request.headers.get("x-api-key") == "k1"

    app = RemoteApp(Echo, authenticate=authenticate, affinity_cookie="route")
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            app._group = group
            refused, headers, _ = await _post(app, INIT, [(b"x-api-key", b"nope")])
            assert refused == 401
            assert headers[b"www-authenticate"] == b"Bearer"
            status, headers, _ = await _post(app, INIT, [(b"x-api-key", b"k1")])
            assert status == 200
            assert headers[b"set-cookie"].startswith(b"route=")
            await app.aclose()
    assert [r.headers.get("x-api-key") for r in seen] == ["nope", "k1"]
    assert all(r.method == "POST" and r.path == "/acp" for r in seen)
