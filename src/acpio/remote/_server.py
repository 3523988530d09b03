"""Serving a :class:`~acpio.remote.RemoteApp` with uvicorn (the ``remote`` extra).

How this works: uvicorn parses HTTP/1.1 and WebSocket; acpio writes no HTTP
parser. Its graceful shutdown waits for open responses, and SSE streams never
end on their own, so the server here shuts the app down first (running turns
cancelled and reported, streams ended, WebSockets closed with 1001), then lets
uvicorn finish. SIGINT and SIGTERM end :func:`serve_uvicorn` normally (uvicorn
would raise the signal again once it has shut down, killing the process
before whoever called it could close its session store).

Before authentication, a client gets little: uvicorn's HTTP protocol is
subclassed so that each socket has ``header_timeout`` seconds to send a
request's headers (from the accept, and again after each response; no
request in progress means the socket is closed), and so that no more than
``max_sockets`` sockets are open (the soft file limit is raised to the hard
one first, and the cap kept below it): a socket accepted past the cap
closes the oldest one not in a request, or itself when every socket is busy.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib
import logging
import signal
import socket
import threading
import time
from collections.abc import Callable, Generator
from typing import Any

from ._app import SEND_TEXTS, RemoteApp

__all__ = ["run_server", "serve_uvicorn", "tune_collector"]

logger = logging.getLogger("acpio.remote")

#: Of the soft file limit, what is kept for everything but client sockets (a quarter, >= 64).
_RESERVED_SHARE = 4
_RESERVED_MIN = 64
#: uvicorn's default backlog: the most connections waiting to be accepted.
_BACKLOG = 2048
#: Seconds between two warnings that sockets were closed for want of room.
_WARN_EVERY = 10.0


def _uvicorn() -> Any:
    try:
        return importlib.import_module("uvicorn")
    except ImportError:
        raise RuntimeError(
            "serving needs the `remote` extra: pip install 'acpio[remote]'"
        ) from None


def raise_file_limit() -> int:
    """Raise this process's soft ``RLIMIT_NOFILE`` to its hard limit; the soft limit after.

    ``0`` where there is no such limit (Windows).
    """
    try:
        import resource  # noqa: PLC0415 - POSIX only
    except ImportError:
        return 0
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != soft:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return 0 if soft == resource.RLIM_INFINITY else int(soft)


def socket_budget(max_sockets: int, file_limit: int) -> tuple[int, int]:
    """The socket cap and the accept backlog that keep client sockets below ``file_limit``.

    asyncio accepts up to a backlog of sockets at each wakeup before any of
    them is seen by a protocol, and an evicted socket's descriptor closes an
    iteration later: so the cap leaves room for three backlogs, and the
    backlog is an eighth of what the reserve leaves (16 to 2048).
    """
    if file_limit <= 0:
        return max_sockets, _BACKLOG
    room = file_limit - max(_RESERVED_MIN, file_limit // _RESERVED_SHARE)
    backlog = max(16, min(_BACKLOG, room // 8))
    return max(1, min(max_sockets, room - 3 * backlog)), backlog


def _http_protocol_base() -> Any:
    """The HTTP protocol class uvicorn's ``auto`` picks (httptools when installed)."""
    try:
        return importlib.import_module("uvicorn.protocols.http.httptools_impl").HttpToolsProtocol
    except ImportError:
        return importlib.import_module("uvicorn.protocols.http.h11_impl").H11Protocol


#: Messages a WebSocket may have waiting for the app before uvicorn stops reading it.
_QUEUED_BEFORE_PAUSE = 2


def _ws_protocol() -> Any:
    """uvicorn's WebSocket protocol (websockets' sans-I/O one, what ``auto`` picks), reading
    on while fewer than ``_QUEUED_BEFORE_PAUSE`` messages wait for the app.

    uvicorn's own stops reading the socket after every message and starts again when
    the app takes it: two ``epoll_ctl`` calls per message, a tenth of the server's CPU
    in a request/answer exchange, where a second message is never waiting. A client
    that sends faster than the agent reads is still held back, two messages in.

    It also offers the :data:`SEND_TEXTS` extension: the messages the agent queued
    together (a permission request and the state updates around it) go out in one
    ``send`` system call, not one each, and without a round trip through ``str``.
    Where that protocol is missing (an older uvicorn), ``auto``.
    """
    try:
        module = importlib.import_module("uvicorn.protocols.websockets.websockets_sansio_impl")
    except ImportError:
        return "auto"
    base: Any = module.WebSocketsSansIOProtocol
    if not hasattr(base, "send_receive_event_to_app"):
        return "auto"

    disconnected: type[Exception] = importlib.import_module(
        "uvicorn.protocols.utils"
    ).ClientDisconnected
    invalid_state: type[Exception] = importlib.import_module("websockets.exceptions").InvalidState

    class ReadsAhead(base):  # type: ignore[misc]
        def handle_connect(self, event: Any) -> None:
            super().handle_connect(event)  # pyright: ignore[reportUnknownMemberType]
            scope: Any = getattr(self, "scope", None)
            if scope is not None:  # accepted: the app runs from the next iteration on
                scope["extensions"][SEND_TEXTS] = {}

        async def send(self, message: Any) -> None:
            if message["type"] != SEND_TEXTS:
                await super().send(message)  # pyright: ignore[reportUnknownMemberType]
                return
            protocol: Any = self
            await protocol.writable.wait()
            if protocol.disconnected:
                raise disconnected()
            if (
                not protocol.handshake_complete
                or protocol.close_sent
                or protocol.initial_response is not None
            ):  # whatever uvicorn does with a message now, message by message
                for text in message["texts"]:
                    await super().send({"type": "websocket.send", "text": text.decode()})  # pyright: ignore[reportUnknownMemberType]
                return
            connection = protocol.conn
            try:
                for text in message["texts"]:
                    connection.send_text(text)
            except invalid_state:
                raise disconnected() from None
            protocol.transport.write(b"".join(connection.data_to_send()))

        def send_receive_event_to_app(self) -> None:
            protocol: Any = self
            paused: bool = protocol.read_paused
            protocol.read_paused = True  # the base pauses reading unless it is paused already
            try:
                super().send_receive_event_to_app()  # pyright: ignore[reportUnknownMemberType]
            finally:
                protocol.read_paused = paused
            if not paused and protocol.queue.qsize() >= _QUEUED_BEFORE_PAUSE:
                protocol.read_paused = True
                protocol.transport.pause_reading()

    return ReadsAhead


class _Sockets:
    """What the guarded protocols of one server share: the cap and the warning clock."""

    def __init__(self, cap: int, header_timeout: float) -> None:
        self.cap = cap
        self.header_timeout = header_timeout
        self.warned_at = -_WARN_EVERY

    def warn(self, text: str, *args: object) -> None:
        now = time.monotonic()
        if now - self.warned_at >= _WARN_EVERY:
            self.warned_at = now
            logger.warning(text, *args)


def _guarded_protocol(base: Any, sockets: _Sockets) -> Any:
    """``base`` (a uvicorn HTTP protocol) with a header deadline and the socket cap."""

    class Guarded(base):  # type: ignore[misc]
        _deadline: asyncio.TimerHandle | None = None
        _accepted = 0.0

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)  # pyright: ignore[reportUnknownMemberType]
            self._accepted = time.monotonic()
            self._arm()
            open_sockets: Any = self.connections
            if len(open_sockets) > sockets.cap:
                self._make_room(open_sockets)

        def _make_room(self, open_sockets: Any) -> None:
            idle = [
                c
                for c in open_sockets
                if isinstance(c, Guarded) and c is not self and c.waiting_for_headers
            ]
            victim = min(idle, key=lambda c: c._accepted) if idle else self
            sockets.warn(
                "%d sockets open (the cap is %d): closing %s",
                len(open_sockets),
                sockets.cap,
                "the oldest one not in a request" if idle else "new ones",
            )
            victim.transport.abort()

        @property
        def waiting_for_headers(self) -> bool:
            """Open, not upgraded, and no request in progress."""
            transport = self.transport
            if transport is None or transport.is_closing() or transport.get_protocol() is not self:
                return False
            cycle = self.cycle
            return cycle is None or bool(cycle.response_complete)

        def _arm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
            self._deadline = asyncio.get_running_loop().call_later(
                sockets.header_timeout, self._headers_late
            )

        def _headers_late(self) -> None:
            self._deadline = None
            if self.waiting_for_headers:
                self.transport.close()

        def on_response_complete(self) -> None:
            self._arm()
            super().on_response_complete()  # pyright: ignore[reportUnknownMemberType]

        def handle_websocket_upgrade(self, *event: Any) -> None:
            # An upgraded socket waits for no headers: its protocol is freed at once.
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None
            super().handle_websocket_upgrade(*event)  # pyright: ignore[reportUnknownMemberType]

        def connection_lost(self, exc: Exception | None) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None
            super().connection_lost(exc)  # pyright: ignore[reportUnknownMemberType]

    return Guarded


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
    reported before the streams close; then this returns (a signal is not
    raised again). ``on_ready(host, port)`` is called once the socket listens
    (``port=0`` picks a free port). The soft file limit is raised to the hard
    one, and ``app.limits`` ``header_timeout`` and ``max_sockets`` are kept
    (see the module doc).
    """
    uvicorn = _uvicorn()
    limits = app.limits
    cap, backlog = socket_budget(limits.max_sockets, raise_file_limit())
    sockets = _Sockets(cap, limits.header_timeout)

    class _Server(uvicorn.Server):  # type: ignore[misc, name-defined]
        async def shutdown(self, sockets: Any = None) -> None:
            await app.aclose()
            await super().shutdown(sockets=sockets)  # pyright: ignore[reportUnknownMemberType]

        @contextlib.contextmanager
        def capture_signals(self) -> Generator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            handled = (signal.SIGINT, signal.SIGTERM)
            previous = {sig: signal.signal(sig, self.handle_exit) for sig in handled}  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
            try:
                yield
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        lifespan="on",
        backlog=backlog,
        http=_guarded_protocol(_http_protocol_base(), sockets),
        ws=_ws_protocol(),
        ws_max_size=limits.max_body_size,
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
    with sock, _known_as_asyncio():
        await server.serve(sockets=[sock])


@contextlib.contextmanager
def _known_as_asyncio() -> Generator[None]:
    """Tell sniffio, where it is installed, that this thread runs asyncio while it serves.

    anyio asks sniffio which library runs on every call that makes a cancel
    scope, an event or a task group, and sniffio otherwise finds out by asking
    asyncio for the current task each time; its thread-local name is the
    answer an event loop gives for its thread (what trio's own run does).
    """
    try:
        sniffio: Any = importlib.import_module("sniffio")
    except ImportError:
        yield
        return
    local = sniffio.thread_local
    if local.name is not None:
        yield
        return
    local.name = "asyncio"
    try:
        yield
    finally:
        local.name = None


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
