"""Serving a :class:`~acpio.remote.RemoteApp` with uvicorn (the ``remote`` extra).

How this works: uvicorn parses HTTP/1.1 and WebSocket; acpio writes no HTTP
parser. Its graceful shutdown waits for open responses, and SSE streams never
end on their own, so the server here shuts the app down first (running turns
cancelled and reported, streams ended, WebSockets closed with 1001), then lets
uvicorn finish.
"""

from __future__ import annotations

import gc
import importlib
import logging
import socket
from collections.abc import Callable
from typing import Any

from ._app import RemoteApp

__all__ = ["run_server", "serve_uvicorn", "tune_collector"]

logger = logging.getLogger("acpio.remote")


def _uvicorn() -> Any:
    try:
        return importlib.import_module("uvicorn")
    except ImportError:
        raise RuntimeError(
            "serving needs the `remote` extra: pip install 'acpio[remote]'"
        ) from None


async def serve_uvicorn(
    app: RemoteApp,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    log_level: str = "warning",
    on_ready: Callable[[str, int], None] | None = None,
) -> None:
    """Serve ``app`` with uvicorn on ``host:port`` (loopback by default) until SIGINT or SIGTERM.

    Messages of ``app.limits.max_body_size`` bytes or more close a WebSocket
    (1009). On shutdown every connection's running turns are cancelled and
    reported before the streams close. ``on_ready(host, port)`` is called
    once the socket listens (``port=0`` picks a free port).
    """
    uvicorn = _uvicorn()

    class _Server(uvicorn.Server):  # type: ignore[misc, name-defined]
        async def shutdown(self, sockets: Any = None) -> None:
            await app.aclose()
            await super().shutdown(sockets=sockets)  # pyright: ignore[reportUnknownMemberType]

    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        lifespan="on",
        ws_max_size=app.limits.max_body_size,
        # ACP messages are small JSON: compressing each frame cost a quarter of the
        # server's time when streaming reply chunks (benchmarks/remote.py).
        ws_per_message_deflate=False,
        timeout_graceful_shutdown=int(app.agent_limits.shutdown_grace) + 2,
        proxy_headers=False,
        server_header=False,
    )
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say TCP, and
    # without it a message written right after another waits for a delayed ACK (~40 ms).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(config.backlog)  # connections wait in the backlog until uvicorn accepts them
    server = _Server(config)
    if on_ready is not None:
        bound = sock.getsockname()
        on_ready(str(bound[0]), int(bound[1]))
    with sock:
        await server.serve(sockets=[sock])


def run_server(
    app: RemoteApp,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    on_ready: Callable[[str, int], None] | None = None,
) -> None:
    """Serve ``app`` on ``host:port`` until SIGINT or SIGTERM (uvicorn, on asyncio)."""
    import asyncio  # noqa: PLC0415 - uvicorn runs on asyncio only

    tune_collector()
    asyncio.run(serve_uvicorn(app, host=host, port=port, on_ready=on_ready))


def tune_collector() -> None:
    """Set the cyclic garbage collector for a server process that holds many sessions.

    What was imported and built before serving is frozen (never scanned again),
    and the youngest generation is collected every 7,000 allocations instead of
    700: with 10,000 sessions open, CPython's default thresholds spent about
    40% of the time of setting them up in the collector (benchmarks/remote_scale.py).
    """
    gc.freeze()
    _, second, third = gc.get_threshold()
    gc.set_threshold(7000, second, third)
