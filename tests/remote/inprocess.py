"""A :class:`~acpio.remote.RemoteApp` served by uvicorn in a thread, on a free loopback port."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Iterator

import uvicorn

from acpio.remote import RemoteApp


@contextlib.contextmanager
def serving(app: RemoteApp) -> Iterator[str]:
    """Serve ``app`` until the block ends; yield its ``/acp`` URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, lifespan="on", log_level="warning", timeout_graceful_shutdown=3)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])))
    thread.start()
    try:
        for _ in range(500):
            if server.started:
                break
            threading.Event().wait(0.01)
        assert server.started, "uvicorn did not start"
        yield f"http://127.0.0.1:{port}/acp"
    finally:
        server.should_exit = True
        thread.join(timeout=20)
        sock.close()
