"""The README's "Remote agents" section runs: its command serves, its app answers."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import anyio
import httpx
import pytest

from acpio.remote import RemoteApp

from .server import REPO, served

README = (REPO / "README.md").read_text()
SECTION = README.split("## Remote agents", 1)[1].split("\n## ", 1)[0]
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 2, "info": {"name": "t", "version": "1"}},
}


def _block(language: str) -> str:
    (code,) = re.findall(rf"```{language}\n(.*?)```", SECTION, re.DOTALL)
    return str(code)


def test_the_serve_command_serves_the_shell_agent() -> None:
    words = shlex.split(_block("bash"))
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
