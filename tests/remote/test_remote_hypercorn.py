"""The ASGI app under another server: hypercorn, on asyncio and on trio, over HTTP/2.

The RFD asks Streamable HTTP for HTTP/2; uvicorn speaks HTTP/1.1 only, hypercorn speaks
both (here HTTP/2 over cleartext with prior knowledge, as httpx does with ``http1=False``).
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import httpx
import pytest
from hypercorn.config import Config

import acpio
from acpio.remote import RemoteApp

pytestmark = [
    pytest.mark.anyio,
    # httpx's nested response generators, left early on trio (no async generator hooks),
    # are finalized by the garbage collector: client-side noise, not the server's.
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 2, "info": {"name": "t", "version": "1"}},
}


class Echo(acpio.Agent):
    info = acpio.Implementation(name="echo", version="1")

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        await session.message(acpio.text_of(prompt))
        return "end_turn"


def _serve_function(backend: str) -> Callable[..., Awaitable[Any]]:
    if backend == "trio":
        from hypercorn.trio import serve  # noqa: PLC0415 - the backend's own module

        return serve
    from hypercorn.asyncio import serve  # noqa: PLC0415

    return serve


async def _data(stream: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    async for line in stream.aiter_lines():
        if line.startswith("data: "):
            yield json.loads(line[6:])


async def test_a_turn_over_http2_on_hypercorn(anyio_backend: str) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.loglevel = "WARNING"
    config.graceful_timeout = 2
    app = RemoteApp(Echo)
    stop = anyio.Event()
    url = f"http://127.0.0.1:{port}/acp"
    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            group.start_soon(
                lambda: _serve_function(anyio_backend)(app, config, shutdown_trigger=stop.wait)
            )
            async with httpx.AsyncClient(http1=False, http2=True, timeout=10) as client:
                for _ in range(100):
                    try:
                        answer = await client.post(url, json=INIT)
                        break
                    except httpx.ConnectError:
                        await anyio.sleep(0.05)
                assert answer.http_version == "HTTP/2"
                assert answer.status_code == 200
                headers = {
                    "Acp-Connection-Id": answer.headers["acp-connection-id"],
                    "Content-Type": "application/json",
                }
                listen = {**headers, "Accept": "text/event-stream"}
                async with client.stream("GET", url, headers=listen) as stream:
                    new = {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "session/new",
                        "params": {"cwd": "/tmp"},
                    }
                    assert (await client.post(url, json=new, headers=headers)).status_code == 202
                    async for message in _data(stream):
                        session = message["result"]["sessionId"]
                        break
                session_listen = {**listen, "Acp-Session-Id": session}
                async with client.stream("GET", url, headers=session_listen) as stream:
                    prompt = {
                        "jsonrpc": "2.0",
                        "id": 2,
                        "method": "session/prompt",
                        "params": {
                            "sessionId": session,
                            "prompt": [{"type": "text", "text": "h2!"}],
                        },
                    }
                    posted = await client.post(
                        url, json=prompt, headers={**headers, "Acp-Session-Id": session}
                    )
                    assert posted.status_code == 202
                    text = ""
                    async for message in _data(stream):
                        update = message.get("params", {}).get("update", {})
                        if update.get("sessionUpdate") in ("agent_message", "agent_message_chunk"):
                            content = update["content"]
                            blocks = content if isinstance(content, list) else [content]
                            text += "".join(block.get("text", "") for block in blocks)
                        if (
                            update.get("sessionUpdate") == "state_update"
                            and update.get("state") == "idle"
                        ):
                            break
                    assert text == "h2!"
                assert (await client.delete(url, headers=headers)).status_code == 202
            stop.set()
