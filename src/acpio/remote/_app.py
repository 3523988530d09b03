"""The ASGI application of the remote transport: one ``/acp`` endpoint, HTTP and WebSocket.

How this works: :class:`RemoteApp` is a plain ASGI callable. Every request
(and every WebSocket upgrade) is authenticated and its ``Origin`` checked
first. Streamable HTTP:

- ``POST`` with ``initialize`` and no ``Acp-Connection-Id`` opens a
  connection (:class:`~acpio.remote._connection.RemoteConnection`) and is
  answered 200 with the agent's answer and the new ``Acp-Connection-Id``;
- any other ``POST`` is forwarded to the connection's agent and answered 202;
  the agent's messages reach the client on SSE streams;
- ``GET`` with ``Accept: text/event-stream`` opens the connection's stream,
  or with ``Acp-Session-Id`` a session's stream (404 for a session neither
  this connection nor the store knows, 409 when it already has a reader);
- ``DELETE`` closes the connection (202).

A WebSocket upgrade on the same path carries the same messages, one per text
frame, both ways; the first must be ``initialize``. Every message from a
client is checked (nesting depth, id) before anything decodes it
(:func:`~acpio.remote._connection.read_client_message`): a refused one is
answered ``-32600`` (HTTP 400), and a WebSocket goes on with the next. Connections run in a task
group that the ASGI lifespan owns (or, for a server without lifespan, in the
task of the request that opened them).
"""

from __future__ import annotations

import contextlib
import functools
import hmac
import inspect
import ipaddress
import logging
import secrets
from collections.abc import Awaitable, Callable, Collection, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, Final

import anyio
import anyio.abc
import anyio.lowlevel
import msgspec

from .._agent.agent import Agent
from .._errors import INTERNAL_ERROR, INVALID_REQUEST
from .._limits import AgentLimits, RemoteLimits
from .._store.history import InMemorySessionStore, SessionStore
from ._connection import (
    NEEDS_ATTACHED,
    SESSION_SCOPED,
    ClientMessage,
    ConnectionRegistry,
    MessageRefused,
    Outbox,
    RemoteConnection,
    ResumeRefused,
    error_line,
    read_client_message,
)

__all__ = ["AgentSource", "AuthRequest", "RemoteApp"]

logger = logging.getLogger("acpio.remote")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

#: An agent class (instantiated per connection), a zero-argument factory, or one shared agent.
AgentSource = type[Agent] | Callable[[], Agent] | Agent

CONNECTION_HEADER: Final = "acp-connection-id"
SESSION_HEADER: Final = "acp-session-id"
_EVENT_STREAM: Final = "text/event-stream"
_LIMITED_METHODS: Final = frozenset(
    {"session/new", "session/load", "session/resume", "session/fork"}
)
_SUBPROTOCOL: Final = "acp"
#: The ASGI extension of ``acpio serve``'s WebSocket protocol (``acpio.remote._server``): a
#: ``{"type": SEND_TEXTS, "texts": [bytes, ...]}`` message sends each text (UTF-8 JSON) as
#: one text message, all of them in one write to the socket.
SEND_TEXTS: Final = "acpio.websocket.send_texts"
#: Close codes of a client that ended its socket on purpose (no resume follows).
_CLEAN_CLOSE: Final = frozenset({1000, 1001})
#: The close code after ``stream/resume_failed`` (409, as over HTTP).
_RESUME_FAILED_CLOSE: Final = 4409
#: How long a GET waits for the stream's previous reader to be seen leaving before 409.
_TAKEOVER_WAIT: Final = 2.0


@dataclass(frozen=True, slots=True)
class AuthRequest:
    """What an authentication hook sees of a request (or a WebSocket upgrade).

    ``headers`` maps lower-case names to values (repeated headers joined
    with ``", "``); ``client`` is the peer's ``(host, port)`` when known.
    """

    method: str
    path: str
    headers: Mapping[str, str]
    client: tuple[str, int] | None


#: An authentication hook's verdict: refused (``False``), accepted without a principal
#: (``True``), or accepted as the principal a non-empty string names.
Verdict = bool | str
Authenticate = Callable[[AuthRequest], Verdict | Awaitable[Verdict]]


def _headers(scope: Scope) -> dict[str, str]:
    headers: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", ()):
        name = bytes(raw_name).decode("latin-1").lower()
        value = bytes(raw_value).decode("latin-1")
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return headers


async def _respond(
    send: Send,
    status: int,
    body: bytes = b"",
    *,
    content_type: str = "text/plain; charset=utf-8",
    headers: Collection[tuple[bytes, bytes]] = (),
) -> None:
    response_headers = [*headers]
    if body:
        response_headers.append((b"content-type", content_type.encode()))
    response_headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": response_headers})
    await send({"type": "http.response.body", "body": body})


def _is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _host_name(host: str) -> str:
    """The name in a ``Host`` header, without its port (``[::1]:80`` gives ``::1``)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].partition("]")[0]
    return host.rpartition(":")[0] if host.count(":") == 1 else host


class _Refused(Exception):
    def __init__(self, status: int, text: str, headers: Collection[tuple[bytes, bytes]] = ()):
        super().__init__(text)
        self.status = status
        self.text = text
        self.headers = headers


class RemoteApp:
    """Serves an :class:`~acpio.Agent` remotely: an ASGI app for one ``/acp`` endpoint.

    ``agent`` is an :class:`~acpio.Agent` subclass or a zero-argument
    factory, called once per connection (or one agent instance, shared).
    Every request and WebSocket upgrade must pass ``token`` (as
    ``Authorization: Bearer <token>``) when one is set, or one of ``tokens``
    (a bearer token to the principal it names, :func:`read_token_file`), then
    ``authenticate`` when one is given (401 otherwise); ``authenticate`` may
    name the request's principal by returning a non-empty string (it replaces
    the token's). A connection belongs to the principal that opened it
    (another principal's requests on it are answered as for an unknown
    connection), and so do the sessions it creates: its agent sees only its
    principal's sessions in ``store``, another principal's session is answered
    exactly as an unknown one. Without a principal (``token``, no
    authentication, ``authenticate`` returning ``True``) a connection sees
    every session. A request with an ``Origin`` header
    must name one of ``allowed_origins`` (403 otherwise), so a web page
    cannot drive the agent unless allowed. ``affinity_cookie`` names a cookie
    set on ``initialize`` and the upgrade, for load balancers that route a
    connection's requests to one process. Sessions live in ``store`` (shared
    by the connections, so a client can reattach from a new connection);
    ``agent_limits`` bound each connection's agent and ``limits`` the server
    (:class:`~acpio.remote.RemoteLimits`).

    ``allowed_hosts`` names the ``Host`` header values (without port)
    accepted; by default, when the server listens on a loopback address
    (the ASGI scope's ``server``), only loopback names (``localhost``,
    ``127.0.0.1``, ``::1``) are, so a web page whose name resolves to
    loopback (DNS rebinding) is refused (421). ``"*"`` accepts any.
    """

    def __init__(
        self,
        agent: AgentSource,
        *,
        store: SessionStore | None = None,
        token: str | None = None,
        tokens: Mapping[str, str] | None = None,
        authenticate: Authenticate | None = None,
        allowed_origins: Collection[str] = (),
        affinity_cookie: str | None = None,
        limits: RemoteLimits | None = None,
        agent_limits: AgentLimits | None = None,
        path: str = "/acp",
        allowed_hosts: Collection[str] | None = None,
    ) -> None:
        self._agent_source = agent
        self.limits: RemoteLimits = limits or RemoteLimits()
        self.agent_limits: AgentLimits = agent_limits or AgentLimits()
        self.store: SessionStore = store or InMemorySessionStore(self.agent_limits.history)
        if token is not None and tokens is not None:
            raise ValueError(
                "give either token (one shared token, no principals) or tokens "
                "(a token per principal), not both"
            )
        if tokens is not None and not tokens:
            raise ValueError("tokens is empty: no principal could connect")
        self._token = token.encode() if token is not None else None
        self._tokens = (
            [(key.encode(), principal) for key, principal in tokens.items()]
            if tokens is not None
            else None
        )
        self._authenticate = authenticate
        self._origins = frozenset(o.rstrip("/").lower() for o in allowed_origins)
        self._affinity = affinity_cookie
        self._hosts = (
            None if allowed_hosts is None else frozenset(h.strip().lower() for h in allowed_hosts)
        )
        self._affinity_value = secrets.token_urlsafe(12)
        self.path = path
        self.registry: ConnectionRegistry = ConnectionRegistry(self.limits)
        self._group: anyio.abc.TaskGroup | None = None
        self._shutting_down = False

    # -- ASGI --------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The ASGI entry point (``http``, ``websocket`` and ``lifespan`` scopes)."""
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "http":
            await self._http(scope, receive, send)
        elif kind == "websocket":
            await self._websocket(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        message = await receive()
        if message["type"] != "lifespan.startup":
            return
        async with anyio.create_task_group() as group:
            self._group = group
            await send({"type": "lifespan.startup.complete"})
            while (await receive())["type"] != "lifespan.shutdown":
                pass
            await self.aclose()
            group.cancel_scope.cancel()
        self._group = None
        await send({"type": "lifespan.shutdown.complete"})

    async def aclose(self, grace: float | None = None) -> None:
        """Shut down: every connection's running turns are cancelled and reported, streams end.

        Waits at most ``grace`` seconds (default: the agent limits'
        ``shutdown_grace`` plus one) for the connections to finish.
        """
        self._shutting_down = True
        connections = list(self.registry.connections.values())
        for connection in connections:
            await connection.close("server shutting down", graceful=True)
        with anyio.move_on_after(
            grace if grace is not None else self.agent_limits.shutdown_grace + 1
        ):
            for connection in connections:
                await connection.wait_finished()

    # -- checks common to HTTP and WebSocket -------------------------------------

    def _host_allowed(self, scope: Scope, headers: Mapping[str, str]) -> bool:
        given = headers.get("host")
        if self._hosts is None:
            server = scope.get("server")
            if given is None or not server or not _is_loopback(str(server[0])):
                return True
            return _is_loopback(_host_name(given))
        if "*" in self._hosts:
            return True
        return given is not None and _host_name(given) in self._hosts

    async def _check_access(self, scope: Scope, headers: Mapping[str, str]) -> str | None:
        """Refuse what may not pass; the request's principal (``None``: none)."""
        if not self._host_allowed(scope, headers):
            raise _Refused(421, f"Host {headers.get('host', '')!r} is not served here")
        origin = headers.get("origin")
        if origin is not None and origin.rstrip("/").lower() not in self._origins:
            raise _Refused(403, f"Origin {origin!r} is not allowed")
        principal: str | None = None
        if self._token is not None or self._tokens is not None:
            given = headers.get("authorization", "")
            scheme, _, credentials = given.partition(" ")
            presented = credentials.strip().encode()
            known = False
            if self._token is not None:
                known = hmac.compare_digest(presented, self._token)
            else:
                for key, owner in self._tokens or ():
                    # Every token compared: the time taken does not say which one matched.
                    if hmac.compare_digest(presented, key):
                        known, principal = True, owner
            if scheme.lower() != "bearer" or not known:
                raise _Refused(
                    401, "Missing or wrong bearer token", [(b"www-authenticate", b"Bearer")]
                )
        if self._authenticate is not None:
            client = scope.get("client")
            request = AuthRequest(
                method=scope.get("method", "GET"),
                path=scope.get("path", ""),
                headers=headers,
                client=(client[0], client[1]) if client else None,
            )
            verdict = self._authenticate(request)
            if inspect.isawaitable(verdict):
                verdict = await verdict
            if not verdict:
                raise _Refused(401, "Not authorized", [(b"www-authenticate", b"Bearer")])
            if isinstance(verdict, str):
                principal = verdict
        return principal

    def _new_agent(self) -> Agent:
        source = self._agent_source
        if isinstance(source, Agent):
            return source
        agent: Any = source()
        if not isinstance(agent, Agent):
            raise TypeError(
                f"the agent factory returned {type(agent).__name__}, not an acpio.Agent"
            )
        return agent

    def _check_room(self) -> None:
        if self._shutting_down:
            raise _Refused(503, "The server is shutting down")
        if self.registry.full:
            raise _Refused(
                503,
                f"Too many connections (limit {self.limits.max_connections}); try again later",
                [(b"retry-after", b"5")],
            )

    def _new_connection(
        self, transport: str, principal: str | None, connection_id: str | None = None
    ) -> RemoteConnection:
        self._check_room()
        connection = RemoteConnection(
            self._new_agent(),
            "http" if transport == "http" else "websocket",
            store=self.store,
            agent_limits=self.agent_limits,
            limits=self.limits,
            registry=self.registry,
            principal=principal,
            connection_id=connection_id,
        )
        self.registry.add(connection)
        return connection

    def _cookie_headers(self) -> list[tuple[bytes, bytes]]:
        if self._affinity is None:
            return []
        cookie = f"{self._affinity}={self._affinity_value}; Path=/; HttpOnly; SameSite=Strict"
        return [(b"set-cookie", cookie.encode())]

    # -- Streamable HTTP -----------------------------------------------------------

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("path") != self.path:
            await _respond(send, 404, b"Not found: the ACP endpoint is " + self.path.encode())
            return
        headers = _headers(scope)
        method = scope.get("method", "GET")
        try:
            principal = await self._check_access(scope, headers)
            if method == "POST":
                await self._post(receive, send, headers, principal)
            elif method == "GET":
                await self._get(receive, send, headers, principal)
            elif method == "DELETE":
                await self._delete(send, headers, principal)
            else:
                await _respond(
                    send, 405, b"Method not allowed", headers=[(b"allow", b"GET, POST, DELETE")]
                )
        except _Refused as refused:
            await _respond(send, refused.status, refused.text.encode(), headers=refused.headers)

    def _connection(self, headers: Mapping[str, str], principal: str | None) -> RemoteConnection:
        connection_id = headers.get(CONNECTION_HEADER)
        if not connection_id:
            raise _Refused(400, "Missing Acp-Connection-Id")
        connection = self.registry.get(connection_id)
        if (
            connection is None
            or connection.transport != "http"
            or connection.principal != principal
        ):
            raise _Refused(404, "Unknown Acp-Connection-Id")
        return connection

    async def _read_body(self, receive: Receive, headers: Mapping[str, str]) -> bytes:
        limit = self.limits.max_body_size
        declared = headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise _Refused(413, f"Body too large (limit {limit} bytes)")
        timeout = self.limits.body_timeout
        with anyio.move_on_after(timeout):
            return await self._receive_body(receive, limit)
        raise _Refused(
            408, f"Request body not received within {timeout:g}s", [(b"connection", b"close")]
        )

    @staticmethod
    async def _receive_body(receive: Receive, limit: int) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _Refused(499, "Client disconnected")
            chunk = bytes(message.get("body", b""))
            size += len(chunk)
            if size > limit:
                raise _Refused(413, f"Body too large (limit {limit} bytes)")
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def _post(
        self, receive: Receive, send: Send, headers: Mapping[str, str], principal: str | None
    ) -> None:
        content_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if content_type != "application/json":
            raise _Refused(415, "Content-Type must be application/json")
        body = await self._read_body(receive, headers)
        try:
            message = read_client_message(body, self.agent_limits.max_nesting_depth)
        except MessageRefused as refused:
            if refused.agent_error is not None:
                # An answer to the agent's request: that request fails now.
                connection = self.registry.get(headers.get(CONNECTION_HEADER) or "")
                if connection is not None and connection.transport == "http":
                    with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                        await connection.fail_client_answer(refused.agent_error)
            await _respond(send, 400, refused.line, content_type="application/json")
            return
        if message.method == "initialize" and message.is_request:
            if headers.get(CONNECTION_HEADER):
                raise _Refused(400, "initialize is not allowed on an existing connection")
            await self._initialize(send, message, body, principal)
            return
        connection = self._connection(headers, principal)
        connection.active_requests += 1
        try:
            await self._forward(connection, message, body, headers)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise _Refused(404, "Unknown Acp-Connection-Id (the connection closed)") from None
        finally:
            connection.active_requests -= 1
        await _respond(send, 202)

    async def _initialize(
        self, send: Send, message: ClientMessage, body: bytes, principal: str | None
    ) -> None:
        connection = self._new_connection("http", principal)
        if self._group is not None:
            self._group.start_soon(connection.run)
            await self._answer_initialize(send, connection, message, body)
            return
        async with anyio.create_task_group() as group:
            group.start_soon(connection.run)
            await self._answer_initialize(send, connection, message, body)

    async def _answer_initialize(
        self, send: Send, connection: RemoteConnection, message: ClientMessage, body: bytes
    ) -> None:
        answer = await connection.initialize(message, body)
        if answer is None:
            await connection.close("initialize failed", discard=True)
            await _respond(
                send,
                500,
                error_line(message.id, INTERNAL_ERROR, "The agent closed during initialize"),  # type: ignore[arg-type]
                content_type="application/json",
            )
            return
        connection.last_activity = anyio.current_time()
        await _respond(
            send,
            200,
            answer,
            content_type="application/json",
            headers=[(b"acp-connection-id", connection.id.encode()), *self._cookie_headers()],
        )

    async def _forward(
        self,
        connection: RemoteConnection,
        message: ClientMessage,
        body: bytes,
        headers: Mapping[str, str],
    ) -> None:
        header_session = headers.get(SESSION_HEADER) or None
        if message.is_response:
            asked, route = connection.response_route(message)
            if asked and route is not None and header_session not in (None, route):
                raise _Refused(400, "Acp-Session-Id does not match the request this answers")
            await connection.send_line(body)
            return
        params_session = message.session_id
        needs_header = message.method in SESSION_SCOPED or params_session is not None
        if needs_header and header_session is None:
            raise _Refused(400, "Missing Acp-Session-Id")
        if header_session is not None and params_session not in (None, header_session):
            raise _Refused(400, "Acp-Session-Id does not match params.sessionId")
        route = header_session
        if (
            message.method in NEEDS_ATTACHED
            and route is not None
            and route not in connection.attached
        ):
            raise _Refused(
                409,
                f"Session {route!r} is not attached to this connection; "
                "reattach it with session/load or session/resume",
            )
        reserved = None
        if message.method in _LIMITED_METHODS and message.is_request:
            reserved = connection.admit_session(message)
            if reserved is False:
                connection.answer_locally(
                    message,
                    route if message.method != "session/load" else None,
                    INTERNAL_ERROR,
                    f"Too many sessions on this server (limit {self.limits.max_sessions}); "
                    "close one first",
                )
                return
        await connection.send_line(body, connection.answer_route(message, route, reserved=reserved))

    async def _get(
        self, receive: Receive, send: Send, headers: Mapping[str, str], principal: str | None
    ) -> None:
        if _EVENT_STREAM not in headers.get("accept", "").lower():
            raise _Refused(406, "Accept must include text/event-stream")
        cursor = headers.get("last-event-id")
        try:
            connection = self._connection(headers, principal)
        except _Refused as refused:
            if cursor is None or refused.status != 404:
                raise
            # The RFD: a cursor of a connection the server no longer has is refused 409.
            raise _resume_refused(
                ResumeRefused("unknown_connection", "this server has no such connection")
            ) from None
        session_id = headers.get(SESSION_HEADER) or None
        if session_id is None:
            outbox = connection.connection_stream
        else:
            if not await self._session_known(connection, session_id):
                raise _Refused(404, "Unknown Acp-Session-Id")
            if session_id not in connection.session_streams and len(
                connection.session_streams
            ) >= connection_stream_limit(self):
                raise _Refused(429, "Too many session streams on this connection")
            outbox = connection.session_stream(session_id)
        if cursor is not None:
            outbox.drop_reader()  # the client resumes: the stream it left is gone for it
        if not await outbox.acquire_within(_TAKEOVER_WAIT):
            if cursor is not None:
                raise _resume_refused(ResumeRefused("busy", "this stream already has a reader"))
            raise _Refused(409, "This stream already has a reader")
        try:
            after_replay: Callable[[], list[bytes]] | None = None
            if cursor is not None:
                try:
                    outbox.rewind(cursor)
                except ResumeRefused as refused:
                    raise _resume_refused(refused) from None
                sessions = [session_id] if session_id else []
                after_replay = functools.partial(connection.state_lines, sessions)
            await self._stream(receive, send, connection, outbox, after_replay)
        finally:
            outbox.release()
            connection.last_activity = anyio.current_time()

    async def _session_known(self, connection: RemoteConnection, session_id: str) -> bool:
        """Whether this connection attached the session or holds its stream, or the store has it."""
        if session_id in connection.session_streams or session_id in connection.attached:
            return True
        # A client opens a session's stream before it loads or resumes the session.
        # Only the connection's principal's sessions exist for it (another's is unknown).
        try:
            principal = connection.principal
            records = await (
                self.store.list(principal=principal) if principal is not None else self.store.list()
            )
        except Exception:
            logger.exception("the session store could not list sessions")
            raise _Refused(503, "The session store is unavailable") from None
        return any(record.session_id == session_id for record in records)

    async def _stream(
        self,
        receive: Receive,
        send: Send,
        connection: RemoteConnection,
        outbox: Outbox,
        after_replay: Callable[[], list[bytes]] | None = None,
    ) -> None:
        """Send the stream's messages as SSE events (``id:`` their cursors) until it ends.

        ``after_replay``, for a stream resumed from a cursor, gives what is sent
        (without ids) after what is queued at that moment, before live delivery:
        the sessions' states as of the last message replayed.
        """
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"text/event-stream"),
                    (b"cache-control", b"no-cache"),
                    (b"x-accel-buffering", b"no"),
                ],
            }
        )
        keepalive = self.limits.keepalive_interval
        events = _sse_events if self.limits.resumable else _sse_events_without_ids
        async with anyio.create_task_group() as group:

            async def watch_disconnect() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                group.cancel_scope.cancel()

            group.start_soon(watch_disconnect)
            outbox.reader_scope = group.cancel_scope
            if after_replay is not None:
                first, batch = outbox.take_now()
                body = events(outbox.tag, first, batch) + b"".join(
                    b"data: " + line + b"\n\n" for line in after_replay()
                )
                if body:
                    await send({"type": "http.response.body", "body": body, "more_body": True})
            while True:
                taken: tuple[int, list[bytes]] | None = (0, [])
                with anyio.move_on_after(keepalive):
                    taken = await outbox.take_numbered()
                if taken is None:
                    break
                body = events(outbox.tag, *taken) if taken[1] else b":\n\n"
                await send({"type": "http.response.body", "body": body, "more_body": True})
                # A server may take sends to a client gone without waiting: let the
                # disconnect be seen before taking more (what stays is kept to resume).
                await anyio.lowlevel.checkpoint()
            group.cancel_scope.cancel()
        await send({"type": "http.response.body", "body": b""})

    async def _delete(self, send: Send, headers: Mapping[str, str], principal: str | None) -> None:
        connection = self._connection(headers, principal)
        await connection.close("closed by the client", discard=True)
        await _respond(send, 202)

    # -- WebSocket -------------------------------------------------------------------

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        first = await receive()
        if first["type"] != "websocket.connect":
            return
        headers = _headers(scope)
        if scope.get("path") != self.path:
            await self._refuse_upgrade(scope, send, _Refused(404, "Not found"))
            return
        try:
            principal = await self._check_access(scope, headers)
            self._check_room()
        except _Refused as refused:
            await self._refuse_upgrade(scope, send, refused)
            return
        connection_id = secrets.token_urlsafe(24)
        offered = [p.strip() for p in headers.get("sec-websocket-protocol", "").split(",")]
        accept: dict[str, Any] = {
            "type": "websocket.accept",
            "headers": [(b"acp-connection-id", connection_id.encode()), *self._cookie_headers()],
        }
        if _SUBPROTOCOL in offered:
            accept["subprotocol"] = _SUBPROTOCOL
        await send(accept)
        del headers, accept, offered, first  # not kept for the socket's lifetime
        socket = _Socket(send, batches=SEND_TEXTS in scope.get("extensions", {}))
        frame = await receive()
        if frame["type"] == "websocket.disconnect":
            return
        resume = _resume_request(frame)
        if resume is not None:  # the socket resumes another connection's stream
            await self._resume_socket(receive, socket, principal, resume)
            return
        try:
            connection = self._new_connection("websocket", principal, connection_id)
        except _Refused as refused:
            await socket.close(1013, refused.text)
            return
        connection.connection_stream.acquire()
        connection.socket_attached()
        if self._group is not None:  # the connection outlives this socket: the lifespan owns it
            self._group.start_soon(connection.run)
            ended = await self._attach_socket(receive, socket, connection, None, first=frame)
            self._group.start_soon(self._linger, connection, *ended)
            return
        async with anyio.create_task_group() as group:
            group.start_soon(connection.run)
            ended = await self._attach_socket(receive, socket, connection, None, first=frame)
            await self._linger(connection, *ended)
            group.cancel_scope.cancel()

    async def _linger(self, connection: RemoteConnection, clean: bool, generation: int) -> None:
        """After the first socket ended: close the connection, or keep it for a resume
        (:meth:`_after_socket`); return once it finished."""
        if await self._after_socket(connection, clean, generation):
            await connection.wait_finished()  # a socket that resumed it now serves it
            return
        with anyio.move_on_after(self.agent_limits.shutdown_grace + 1):
            await connection.wait_finished()

    async def _resume_socket(
        self, receive: Receive, socket: _Socket, principal: str | None, resume: _Resume
    ) -> None:
        """Attach this socket to the connection ``resume`` names, replaying after its cursor,
        or answer ``stream/resume_failed`` and close the socket."""
        try:
            connection = await self._take_over(resume, principal)
        except ResumeRefused as refused:
            failed = {"reason": refused.reason, "message": refused.text}
            await socket.send_text(
                msgspec.json.encode(
                    {"jsonrpc": "2.0", "method": "stream/resume_failed", "params": failed}
                ).decode()
            )
            await socket.close(_RESUME_FAILED_CLOSE, f"stream/resume failed: {refused.reason}")
            return
        connection.socket_attached()
        # The replay, then each session's state, then the answer: the client knows it has
        # caught up when the answer arrives (and the live messages follow).
        request_id = resume.request_id

        def after_replay() -> list[bytes]:
            lines = connection.state_lines(sorted(connection.attached))
            if request_id is not None:
                answer: dict[str, object] = {"jsonrpc": "2.0", "id": request_id, "result": {}}
                lines.append(msgspec.json.encode(answer))
            return lines

        ended = await self._attach_socket(receive, socket, connection, after_replay)
        if self._group is not None:
            self._group.start_soon(self._after_socket, connection, *ended)
        else:
            await self._after_socket(connection, *ended)

    async def _take_over(self, resume: _Resume, principal: str | None) -> RemoteConnection:
        """The connection ``resume`` names, its stream acquired and rewound to the cursor.

        :raises ResumeRefused: when it cannot be resumed (its stream is then not held).
        """
        connection = self.registry.get(resume.connection_id)
        if (
            connection is None
            or connection.transport != "websocket"
            or connection.principal != principal
        ):
            raise ResumeRefused("unknown_connection", "this server has no such connection")
        outbox = connection.connection_stream
        outbox.drop_reader()  # the client resumes: the socket it left is gone for it
        if not await outbox.acquire_within(_TAKEOVER_WAIT):
            raise ResumeRefused("busy", "another socket still serves this connection")
        try:
            outbox.rewind(resume.cursor or "")  # none: the client processed no message
        except ResumeRefused:
            outbox.release()
            raise
        return connection

    async def _attach_socket(
        self,
        receive: Receive,
        socket: _Socket,
        connection: RemoteConnection,
        after_replay: Callable[[], list[bytes]] | None,
        *,
        first: Message | None = None,
    ) -> tuple[bool, int]:
        """Serve the connection on this socket (its stream acquired) until either ends, or
        a socket that resumes takes it over; whether the client closed the socket (a close
        frame, not a drop), and the connection's socket generation of this socket."""
        outbox = connection.connection_stream
        generation = connection.socket_generation
        clean = False
        try:
            async with anyio.create_task_group() as group:
                outbox.reader_scope = group.cancel_scope
                group.start_soon(self._socket_output, socket, connection, after_replay)
                clean = await self._socket_input(
                    receive, socket, connection, first, initialized=first is None
                )
                socket.gone = True
                group.cancel_scope.cancel()
        finally:
            outbox.release()
        return clean, generation

    async def _after_socket(
        self, connection: RemoteConnection, clean: bool, generation: int
    ) -> bool:
        """After the socket of ``generation`` ended: close the connection, unless it dropped
        and the client may resume it. True when another socket resumed it (that one serves
        it now)."""
        if connection.socket_generation != generation and not connection.closing:
            return True  # taken over by a socket that resumed
        if clean or connection.closing or not self.limits.resumable:
            await connection.close("the client closed the WebSocket", discard=True)
            return False
        with anyio.move_on_after(self.limits.retention_seconds):
            await connection.wait_socket_attached(generation)
            return not connection.closing
        await connection.close("no stream/resume within the retention", discard=True)
        return False

    async def _refuse_upgrade(self, scope: Scope, send: Send, refused: _Refused) -> None:
        if "websocket.http.response" in scope.get("extensions", {}) or {}:
            body = refused.text.encode()
            await send(
                {
                    "type": "websocket.http.response.start",
                    "status": refused.status,
                    "headers": [
                        (b"content-type", b"text/plain; charset=utf-8"),
                        (b"content-length", str(len(body)).encode()),
                        *refused.headers,
                    ],
                }
            )
            await send({"type": "websocket.http.response.body", "body": body})
            return
        await send({"type": "websocket.close", "code": 1008, "reason": refused.text[:120]})

    async def _socket_input(
        self,
        receive: Receive,
        socket: _Socket,
        connection: RemoteConnection,
        first: Message | None,
        *,
        initialized: bool,
    ) -> bool:
        """Forward the socket's messages to the agent until it ends; True when the client
        closed it with a close frame (1000 or 1001), False when it dropped or was refused."""
        limit = self.limits.max_body_size
        depth = self.agent_limits.max_nesting_depth
        while True:
            reserved: bool | None = None
            if first is not None:
                message, first = first, None
            else:
                message = await receive()
            if message["type"] == "websocket.disconnect":
                return message.get("code", 1005) in _CLEAN_CLOSE
            text = message.get("text")
            data = text.encode() if text is not None else None
            if data is None:
                continue  # binary frames carry no ACP message
            if len(data) > limit:
                await socket.close(1009, "message too large")
                return True
            try:
                envelope = read_client_message(data, depth)
            except MessageRefused as refused:
                if refused.answered:
                    connection.deliver(None, refused.line)
                if refused.agent_error is not None and initialized:
                    try:
                        await connection.fail_client_answer(refused.agent_error)
                    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                        return True
                continue
            if connection.closing and envelope.is_request:
                connection.answer_locally(
                    envelope, None, INTERNAL_ERROR, "The connection is closing"
                )
                continue
            if not initialized:
                if not (envelope.method == "initialize" and envelope.is_request):
                    if envelope.is_request:
                        connection.answer_locally(
                            envelope, None, INVALID_REQUEST, "The first message must be initialize"
                        )
                    continue
                initialized = True
            elif envelope.method in _LIMITED_METHODS and envelope.is_request:
                reserved = connection.admit_session(envelope)
                if reserved is False:
                    connection.answer_locally(
                        envelope,
                        None,
                        INTERNAL_ERROR,
                        f"Too many sessions on this server (limit {self.limits.max_sessions}); "
                        "close one first",
                    )
                    continue
            answer_route = connection.answer_route(envelope, envelope.session_id, reserved=reserved)
            try:
                await connection.send_line(data, answer_route)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return True

    async def _socket_output(
        self,
        socket: _Socket,
        connection: RemoteConnection,
        after_replay: Callable[[], list[bytes]] | None,
    ) -> None:
        outbox = connection.connection_stream
        if after_replay is not None:  # resumed: the replay, the states, the answer, then live
            replay = outbox.take_now()[1]
            await socket.send_lines([*replay, *after_replay()])  # states as of the last replayed
        # From now on a sender may write what is queued itself (Outbox.write_queued).
        outbox.writer = socket.send_lines
        try:
            while not socket.gone:  # a socket gone takes nothing more: it stays to resume from
                batch = await outbox.take_to_write()
                if batch is None:
                    break
                try:
                    await socket.send_lines(batch)
                finally:
                    outbox.done_writing()
        finally:
            if outbox.writer == socket.send_lines:
                outbox.writer = None
        if socket.gone:
            return
        reason = connection.close_reason or "connection closed"
        code = {"server shutting down": 1001, "output stalled": 1008}.get(reason, 1000)
        await socket.close(code, reason)


class _Socket:
    """The sending side of an accepted WebSocket; quiet once the client is gone."""

    def __init__(self, send: Send, *, batches: bool = False) -> None:
        self._send = send
        self.gone = False
        #: The server takes several messages in one ASGI message (:data:`SEND_TEXTS`).
        self._batches = batches

    async def send_text(self, text: str) -> None:
        if self.gone:
            return
        try:
            await self._send({"type": "websocket.send", "text": text})
        except OSError:  # the client went away (uvicorn's ClientDisconnected)
            self.gone = True

    async def send_lines(self, lines: list[bytes]) -> None:
        """Send each line (UTF-8 JSON text) as one text message, in order."""
        send = self._send
        try:
            if self._batches:
                if not self.gone:
                    message: Any = {"type": SEND_TEXTS, "texts": lines}
                    await send(message)
                return
            for line in lines:
                if self.gone:
                    return
                await send({"type": "websocket.send", "text": line.decode()})
        except OSError:  # the client went away (uvicorn's ClientDisconnected)
            self.gone = True

    async def close(self, code: int, reason: str) -> None:
        if self.gone:
            return
        self.gone = True
        with contextlib.suppress(OSError):
            await self._send({"type": "websocket.close", "code": code, "reason": reason[:120]})


class _Resume(msgspec.Struct):
    """A ``stream/resume`` request: the connection to resume and the last cursor processed."""

    connection_id: str
    cursor: str | None
    request_id: int | str | None


class _ResumeParams(msgspec.Struct, rename="camel"):
    connection_id: str
    cursor: str | None = None


class _ResumeMessage(msgspec.Struct):
    method: str
    params: _ResumeParams
    id: int | str | None = None


_RESUME: Final = msgspec.json.Decoder(_ResumeMessage)


def _resume_request(frame: Message) -> _Resume | None:
    """The ``stream/resume`` request in a socket's first frame, if it is one."""
    text = frame.get("text") if frame["type"] == "websocket.receive" else None
    if not isinstance(text, str) or '"stream/resume"' not in text:
        return None
    try:
        message = _RESUME.decode(text)
    except msgspec.DecodeError:
        return None
    if message.method != "stream/resume":
        return None
    return _Resume(message.params.connection_id, message.params.cursor, message.id)


def _sse_events(tag: str, first: int, batch: list[bytes]) -> bytes:
    """SSE events for ``batch``, each with its cursor as ``id:`` (``first`` numbers the first)."""
    prefix = b"id: " + tag.encode() + b"."
    parts: list[bytes] = []
    for sequence, line in enumerate(batch, first):
        parts += (prefix, str(sequence).encode(), b"\ndata: ", line, b"\n\n")
    return b"".join(parts)


def _sse_events_without_ids(tag: str, first: int, batch: list[bytes]) -> bytes:
    """SSE events for ``batch`` without ids (resuming is off)."""
    del tag, first
    return b"".join(b"data: " + line + b"\n\n" for line in batch)


def _resume_refused(refused: ResumeRefused) -> _Refused:
    """The RFD's answer to a ``Last-Event-ID`` that cannot be resumed: 409, the reason first."""
    return _Refused(409, str(refused), [(b"acp-resume-failed", refused.reason.encode())])


def connection_stream_limit(app: RemoteApp) -> int:
    """How many session streams one connection may have: its agent's session bound, plus slack."""
    return app.agent_limits.max_sessions + 16
