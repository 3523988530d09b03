"""The mock client's transport to a remote agent: Streamable HTTP or WebSocket, resumable.

How this works: :class:`RemoteLink` gives the :class:`~acpio.testing.MockClient`
an ordinary :class:`~acpio.rpc.StreamPair`, exactly as a subprocess's stdio
does, so the client, its checks and its views do not know the agent is remote.
Each line the client writes is sent as one message: a ``POST`` (Streamable
HTTP; ``initialize`` opens the connection, a message naming a session opens
that session's SSE stream first, as does the answer to ``session/new`` or
``session/fork``) or one text frame (WebSocket). Each message the server sends
is handed to the client, then its cursor (the SSE ``id:``, or
``_meta["acp/cursor"]`` over WebSocket) becomes the stream's last cursor: the
last message the client took. :meth:`RemoteLink.drop` cuts every stream
without a goodbye (what a network change does) and resumes each from its
cursor (``Last-Event-ID``, ``stream/resume``); a refusal raises
:class:`ResumeFailed`.

HTTP is HTTP/1.1 over one TCP connection per request (``h11``); WebSocket is
``websockets``' protocol layer over an anyio socket, so both run on asyncio and
trio. Both libraries come with ``acpio[remote]``.
"""

from __future__ import annotations

import contextlib
import urllib.parse
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Literal

import anyio
import anyio.abc
import msgspec

from .._errors import INTERNAL_ERROR
from .._rpc.transport import StreamPair, memory_stream_pair
from ._waits import MockClientError

if TYPE_CHECKING:
    import h11
    import websockets.client

__all__ = ("Remote", "RemoteLink", "ResumeFailed")

_CURSOR_KEY: Final = "acp/cursor"
_RESUME_ID: Final = "acpio-resume"
#: WebSocket close codes after which the client resumes: no close frame (1006), and the
#: server's keepalive timing out (1011); any other ends the connection.
_RESUMED_AFTER: Final = frozenset({1006, 1011})
#: The stream name of the connection's own stream in :attr:`RemoteLink.cursors`.
CONNECTION_STREAM: Final = ""


@dataclass(frozen=True, slots=True)
class Remote:
    """A remote agent's ACP endpoint, for a :class:`~acpio.testing.MockClient` to drive.

    ``url`` is the endpoint (``http://127.0.0.1:8765/acp``; ``ws://`` is
    taken too): both transports use the same one. ``transport`` is
    ``"http"`` (Streamable HTTP: POST and SSE streams) or ``"websocket"``.
    ``token`` is sent as ``Authorization: Bearer``; ``headers`` are added to
    every request and to the upgrade. Plain ``http``/``ws`` only, no TLS (a
    test server); a bad URL or transport raises ``ValueError`` at once.
    """

    url: str
    transport: Literal["http", "websocket"] = "http"
    token: str | None = None
    headers: Mapping[str, str] = field(default_factory=lambda: {})

    def __post_init__(self) -> None:
        parts = urllib.parse.urlsplit(self.url)
        if parts.scheme not in ("http", "ws") or not parts.hostname:
            raise ValueError(
                f"expected an http:// or ws:// URL of an ACP endpoint, got {self.url!r}"
            )
        if self.transport not in ("http", "websocket"):
            raise ValueError(f"transport must be 'http' or 'websocket', got {self.transport!r}")


class ResumeFailed(MockClientError):
    """The server refused to resume a stream from its cursor (HTTP 409, ``stream/resume_failed``).

    ``reason`` is the server's (``expired``, ``unknown_cursor``,
    ``unknown_connection``, ``busy``); ``stream`` names the stream (``""``
    for the connection's, else the session id). The client's connection is
    unusable afterwards: reattach the session from a new client with
    ``resume_session`` (``session/resume`` with ``replayFrom``, ``session/load``
    on v1), as the RFD's fallback does.
    """

    def __init__(self, message: str, *, reason: str, stream: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.stream = stream


def _require() -> None:
    try:
        import h11  # noqa: F401, PLC0415 # pyright: ignore[reportUnusedImport]
        import websockets  # noqa: F401, PLC0415 # pyright: ignore[reportUnusedImport]
    except ImportError as exc:
        raise MockClientError(
            "a MockClient on a Remote endpoint needs h11 and websockets: "
            "pip install 'acpio[remote]'"
        ) from exc


class _Envelope(msgspec.Struct):
    id: int | str | None | msgspec.UnsetType = msgspec.UNSET
    method: str | None = None
    params: _SessionRef | None = None


class _SessionRef(msgspec.Struct):
    sessionId: object = None


class _NewSession(msgspec.Struct):
    sessionId: object = None


class _Answer(msgspec.Struct):
    id: int | str | None | msgspec.UnsetType = msgspec.UNSET
    result: _NewSession | None = None


class _Meta(msgspec.Struct):
    cursor: str | None = msgspec.field(default=None, name=_CURSOR_KEY)


class _Holder(msgspec.Struct):
    meta: _Meta | None = msgspec.field(default=None, name="_meta")


class _ErrorHolder(msgspec.Struct):
    data: _Holder | None = None


class _Marked(msgspec.Struct):
    params: _Holder | None = None
    result: _Holder | None = None
    error: _ErrorHolder | None = None


class _FailedParams(msgspec.Struct):
    reason: str = "unknown"


class _Failed(msgspec.Struct):
    params: _FailedParams = msgspec.field(default_factory=_FailedParams)


_FAILED: Final = msgspec.json.Decoder(_Failed)


class _VersionResult(msgspec.Struct):
    protocolVersion: int = 1


class _Initialized(msgspec.Struct):
    result: _VersionResult = msgspec.field(default_factory=_VersionResult)


_VERSION: Final = msgspec.json.Decoder(_Initialized)
_ENVELOPE: Final = msgspec.json.Decoder(_Envelope)
_ANSWER: Final = msgspec.json.Decoder(_Answer)
_MARKED: Final = msgspec.json.Decoder(_Marked)
_ENCODE: Final = msgspec.json.Encoder()


def _message_cursor(line: bytes) -> str | None:
    """``_meta["acp/cursor"]`` of a message received over WebSocket, if it has one."""
    if b'"acp/cursor"' not in line:
        return None
    try:
        marked = _MARKED.decode(line)
    except msgspec.DecodeError:
        return None
    for holder in (marked.params, marked.result, marked.error.data if marked.error else None):
        if holder is not None and holder.meta is not None and holder.meta.cursor is not None:
            return holder.meta.cursor
    return None


def _error_answer(request_id: object, text: str) -> bytes:
    return _ENCODE.encode(
        {"jsonrpc": "2.0", "id": request_id, "error": {"code": INTERNAL_ERROR, "message": text}}
    )


class _HttpResponse:
    """One HTTP/1.1 exchange on its own TCP connection: the status, headers and body."""

    def __init__(self, socket: anyio.abc.SocketStream, parser: h11.Connection) -> None:
        self._socket = socket
        self._parser = parser
        self.status = 0
        self.headers: dict[str, str] = {}

    async def _next_event(self) -> object:
        import h11  # noqa: PLC0415

        while True:
            event = self._parser.next_event()
            if event is not h11.NEED_DATA:
                return event
            try:
                data = await self._socket.receive(1 << 16)
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                data = b""
            self._parser.receive_data(data)

    async def start(self) -> None:
        import h11  # noqa: PLC0415

        event = await self._next_event()
        if not isinstance(event, h11.Response):
            raise MockClientError(f"expected an HTTP response, got {event!r}")
        self.status = event.status_code
        self.headers = {
            bytes(name).decode("latin-1").lower(): bytes(value).decode("latin-1")
            for name, value in event.headers
        }

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body, as it arrives."""
        import h11  # noqa: PLC0415

        while True:
            event = await self._next_event()
            if isinstance(event, h11.Data):
                yield bytes(event.data)
            elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                return

    async def body(self) -> bytes:
        """The whole body."""
        return b"".join([chunk async for chunk in self.chunks()])

    async def aclose(self) -> None:
        """Close the TCP connection (no goodbye: what a dropped network does)."""
        await self._socket.aclose()


class RemoteLink:
    """The mock client's side of a remote connection; keeps the invariant that every
    message the server sent is handed to the client once, in each stream's order, across
    :meth:`drop`.

    :attr:`cursors` maps each stream (``""``: the connection's; a session id:
    that session's over HTTP) to the cursor of the last message the client
    took from it. :attr:`connection_id` is the server's ``Acp-Connection-Id``;
    :attr:`resumes` counts successful resumes.
    """

    def __init__(self, remote: Remote) -> None:
        _require()
        self.remote: Final = remote
        parts = urllib.parse.urlsplit(remote.url)
        self._host = parts.hostname or "127.0.0.1"
        self._port = parts.port or 80
        self._path = parts.path or "/"
        self.connection_id: str | None = None
        self.cursors: dict[str, str] = {}
        self.resumes: int = 0
        #: Of :attr:`resumes`, those after the server closed a socket unexpectedly.
        self.auto_resumes: int = 0
        #: Messages handed to the client so far.
        self.delivered: int = 0
        #: Why the link is unusable (a stream could not be resumed), else ``None``.
        self.broken: str | None = None
        #: The protocol version of the ``initialize`` answer (HTTP), 0 before it.
        self.protocol_version: int = 0
        self._side: StreamPair | None = None
        self._group: anyio.abc.TaskGroup | None = None
        self._readers: dict[str, anyio.CancelScope] = {}
        self._reader_done: dict[str, anyio.Event] = {}
        self._opening_sessions: set[object] = set()
        self._dropping = False
        self._closed = False
        self._ws: _WebSocket | None = None
        self._ws_ready = anyio.Event()

    # -- lifecycle ---------------------------------------------------------------

    async def start(self, group: anyio.abc.TaskGroup) -> StreamPair:
        """Start sending the client's messages; the stream pair the client speaks over."""
        client_side, self._side = memory_stream_pair()
        self._group = group
        if self.remote.transport == "websocket":
            self._ws = await self._open_socket()
            self._ws_ready.set()
            group.start_soon(self._socket_reader, self._ws)
        group.start_soon(self._pump)
        return client_side

    async def aclose(self) -> None:
        """End the connection: ``DELETE`` it (HTTP) or close the socket with 1000."""
        if self._closed:
            return
        self._closed = True
        for scope in self._readers.values():
            scope.cancel()
        if self._ws is not None:
            await self._ws.close()
        elif self.connection_id is not None:
            with contextlib.suppress(OSError, MockClientError, anyio.BrokenResourceError):
                response = await self._request("DELETE", {})
                await response.body()
                await response.aclose()
        if self._side is not None:
            await self._side.aclose()

    def _headers(self) -> dict[str, str]:
        headers = dict(self.remote.headers)
        if self.remote.token is not None:
            headers["authorization"] = f"Bearer {self.remote.token}"
        if self.connection_id is not None:
            headers["acp-connection-id"] = self.connection_id
        return headers

    async def _deliver(self, line: bytes) -> None:
        assert self._side is not None
        await self._side.send.send(line + b"\n")
        self.delivered += 1

    async def _end_of_input(self) -> None:
        """The server ended the connection: the client sees the agent go."""
        if self._side is not None and not self._dropping and not self._closed:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                await self._side.send.aclose()

    # -- the client's messages -----------------------------------------------------

    async def _pump(self) -> None:
        assert self._side is not None
        pending = b""
        while True:
            try:
                chunk = await self._side.receive.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                return
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                if line.strip():
                    await self._send(line)

    async def _send(self, line: bytes) -> None:
        if self.broken is not None:  # a stream could not be resumed: nothing gets through
            with contextlib.suppress(msgspec.DecodeError):
                envelope = _ENVELOPE.decode(line)
                if envelope.method is not None and envelope.id is not msgspec.UNSET:
                    await self._deliver(_error_answer(envelope.id, self.broken))
            return
        if self.remote.transport == "websocket":
            await self._ws_ready.wait()
            assert self._ws is not None
            await self._ws.send_text(line)
            return
        try:
            envelope = _ENVELOPE.decode(line)
        except msgspec.DecodeError:
            envelope = _Envelope()
        session = envelope.params.sessionId if envelope.params is not None else None
        if envelope.method == "initialize" and self.connection_id is None:
            await self._initialize(line, envelope)
            return
        if envelope.method in ("session/new", "session/fork") and envelope.id is not None:
            self._opening_sessions.add(envelope.id)
        headers = self._headers()
        headers["content-type"] = "application/json"
        if isinstance(session, str) and envelope.method is not None:
            headers["acp-session-id"] = session
            self._open_stream(session)
        response = await self._request("POST", headers, line)
        body = await response.body()
        await response.aclose()
        if response.status in (200, 202):
            return
        if envelope.method is not None and envelope.id is not msgspec.UNSET:
            answer = (
                body
                if body.startswith(b"{")
                else _error_answer(
                    envelope.id, f"HTTP {response.status}: {body.decode(errors='replace')}"
                )
            )
            await self._deliver(answer)

    async def _initialize(self, line: bytes, envelope: _Envelope) -> None:
        headers = self._headers()
        headers["content-type"] = "application/json"
        response = await self._request("POST", headers, line)
        body = await response.body()
        await response.aclose()
        if response.status != 200 or "acp-connection-id" not in response.headers:
            text = f"HTTP {response.status}: {body.decode(errors='replace')}"
            await self._deliver(body if body.startswith(b"{") else _error_answer(envelope.id, text))
            return
        self.connection_id = response.headers["acp-connection-id"]
        with contextlib.suppress(msgspec.DecodeError):
            self.protocol_version = _VERSION.decode(body).result.protocolVersion
        await self._deliver(body)
        self._open_stream(CONNECTION_STREAM)

    # -- Streamable HTTP -----------------------------------------------------------

    async def _request(
        self, method: str, headers: Mapping[str, str], body: bytes = b""
    ) -> _HttpResponse:
        import h11  # noqa: PLC0415

        socket = await anyio.connect_tcp(self._host, self._port)
        parser = h11.Connection(h11.CLIENT)
        fields = [("host", f"{self._host}:{self._port}"), *headers.items()]
        if method != "GET":
            fields.append(("content-length", str(len(body))))
        try:
            data = parser.send(h11.Request(method=method, target=self._path, headers=fields))
            if body:
                data = (data or b"") + (parser.send(h11.Data(data=body)) or b"")
            data = (data or b"") + (parser.send(h11.EndOfMessage()) or b"")
            await socket.send(data)
            response = _HttpResponse(socket, parser)
            await response.start()
        except BaseException:
            await socket.aclose()
            raise
        return response

    def _open_stream(self, stream: str, cursor: str | None = None) -> None:
        """Start reading ``stream`` (unless it is read already)."""
        if stream in self._readers or self._closed:
            return
        assert self._group is not None
        scope = self._readers[stream] = anyio.CancelScope()
        done = self._reader_done[stream] = anyio.Event()
        self._group.start_soon(self._read_stream, stream, scope, done, cursor, None)

    async def _read_stream(
        self,
        stream: str,
        scope: anyio.CancelScope,
        done: anyio.Event,
        cursor: str | None,
        opened: _Opened | None,
    ) -> None:
        try:
            with scope:
                headers = self._headers()
                headers["accept"] = "text/event-stream"
                if stream:
                    headers["acp-session-id"] = stream
                if cursor is not None:
                    headers["last-event-id"] = cursor
                response = await self._request("GET", headers)
                try:
                    if opened is not None:
                        opened.status = response.status
                        if response.status != 200:
                            opened.text = (await response.body()).decode(errors="replace")
                        opened.reason = response.headers.get("acp-resume-failed", "")
                        # A resumed v2 session stream has caught up once its state came.
                        if response.status != 200 or not stream or self.protocol_version < 2:
                            opened.event.set()
                    if response.status != 200:
                        return
                    await self._read_events(stream, response, opened)
                finally:
                    await response.aclose()
                if stream == CONNECTION_STREAM:
                    await self._end_of_input()
        finally:
            if opened is not None:
                opened.event.set()
            if self._readers.get(stream) is scope:
                del self._readers[stream]
            done.set()

    async def _read_events(
        self, stream: str, response: _HttpResponse, opened: _Opened | None
    ) -> None:
        pending = b""
        async for chunk in response.chunks():
            pending += chunk
            if b"\n\n" not in pending:
                continue
            *events, pending = pending.split(b"\n\n")
            for event in events:
                event_id: str | None = None
                data: list[bytes] = []
                for field_line in event.split(b"\n"):
                    if field_line.startswith(b"data:"):
                        data.append(field_line[5:].removeprefix(b" "))
                    elif field_line.startswith(b"id:"):
                        event_id = field_line[3:].removeprefix(b" ").decode()
                if not data:
                    continue
                line = b"\n".join(data)
                with anyio.CancelScope(shield=True):  # handed over and noted together
                    await self._deliver(line)
                if event_id is not None:
                    self.cursors[stream] = event_id
                elif opened is not None:  # the state after the replay (it has no cursor)
                    opened.event.set()
                if stream == CONNECTION_STREAM and self._opening_sessions:
                    await self._note_new_session(line)

    async def _note_new_session(self, line: bytes) -> None:
        try:
            answer = _ANSWER.decode(line)
        except msgspec.DecodeError:
            return
        if answer.id is msgspec.UNSET or answer.id not in self._opening_sessions:
            return
        self._opening_sessions.discard(answer.id)
        if answer.result is not None and isinstance(answer.result.sessionId, str):
            self._open_stream(answer.result.sessionId)

    # -- WebSocket -----------------------------------------------------------------

    async def _open_socket(self) -> _WebSocket:
        socket = _WebSocket(self._host, self._port, self._path, self._headers_for_upgrade())
        await socket.connect()
        if self.connection_id is None:
            self.connection_id = socket.response_headers.get("acp-connection-id")
        return socket

    def _headers_for_upgrade(self) -> dict[str, str]:
        headers = dict(self.remote.headers)
        if self.remote.token is not None:
            headers["authorization"] = f"Bearer {self.remote.token}"
        return headers

    async def _socket_reader(self, socket: _WebSocket) -> None:
        scope = self._readers[CONNECTION_STREAM] = anyio.CancelScope()
        done = self._reader_done[CONNECTION_STREAM] = anyio.Event()
        try:
            with scope:
                async for line in socket.messages():
                    with anyio.CancelScope(shield=True):  # handed over and noted together
                        await self._deliver(line)
                    cursor = _message_cursor(line)
                    if cursor is not None:
                        self.cursors[CONNECTION_STREAM] = cursor
        finally:
            if self._readers.get(CONNECTION_STREAM) is scope:
                del self._readers[CONNECTION_STREAM]
            done.set()
        if scope.cancel_called or self._closed or self._dropping:
            return
        if socket.close_code in _RESUMED_AFTER and self.broken is None:
            # Closed by the server without ending the connection (its keepalive ping, queued
            # behind data this client had not read yet, timed out): resume, as the RFD asks.
            self._ws_ready = anyio.Event()
            try:
                await self._resume_socket(self.cursors.get(CONNECTION_STREAM))
            except (ResumeFailed, MockClientError, OSError) as failed:
                self.broken = f"the connection is unusable: {failed}"
                self._ws_ready.set()
            else:
                self.resumes += 1
                self.auto_resumes += 1
                return
        await self._end_of_input()

    # -- dropping and resuming -------------------------------------------------------

    async def drop(self, cursors: Mapping[str, str] | None = None) -> None:
        """Cut every stream without a goodbye, then resume each from its cursor.

        ``cursors`` replaces the cursor of the streams it names (to resume
        from an older one, or a foreign one). Returns once every stream
        resumed (the replay follows on the streams).

        :raises ResumeFailed: when the server refused a stream's cursor.
        """
        if self.broken is not None:
            raise MockClientError(self.broken)
        self._dropping = True
        try:
            streams = list(self._readers)
            for stream in streams:
                self._readers[stream].cancel()
            for stream in streams:
                await self._reader_done[stream].wait()
            # Only now: a reader hands over the message it holds before it stops.
            chosen = {**self.cursors, **(cursors or {})}
            if self._ws is not None:
                self._ws_ready = anyio.Event()
                await self._ws.abort()
                await self._resume_socket(chosen.get(CONNECTION_STREAM))
            else:
                await self._resume_streams(streams, chosen)
        except ResumeFailed as failed:
            self.broken = f"the connection is unusable: {failed}"
            self._ws_ready.set()
            raise
        finally:
            self._dropping = False
        self.resumes += 1

    async def _resume_streams(self, streams: list[str], cursors: Mapping[str, str]) -> None:
        assert self._group is not None
        refused: list[_Opened] = []
        for stream in streams:
            opened = _Opened(stream)
            scope = self._readers[stream] = anyio.CancelScope()
            done = self._reader_done[stream] = anyio.Event()
            self._group.start_soon(
                self._read_stream, stream, scope, done, cursors.get(stream, ""), opened
            )
            await opened.event.wait()
            if opened.status != 200:
                refused.append(opened)
        if refused:
            first = refused[0]
            raise ResumeFailed(
                f"the server refused to resume stream {first.stream!r}: HTTP {first.status} "
                f"{first.text}",
                reason=first.reason or str(first.status),
                stream=first.stream,
            )

    async def _resume_socket(self, cursor: str | None) -> None:
        assert self._group is not None
        socket = await self._open_socket()
        request = {
            "jsonrpc": "2.0",
            "id": _RESUME_ID,
            "method": "stream/resume",
            "params": {"connectionId": self.connection_id, "cursor": cursor},
        }
        await socket.send_text(_ENCODE.encode(request))
        while True:  # the replay and the sessions' states come before the answer
            message = await socket.first_message()
            if message is None or b'"stream/resume_failed"' in message:
                reason = "closed"
                if message is not None:
                    with contextlib.suppress(msgspec.DecodeError):
                        reason = _FAILED.decode(message).params.reason
                await socket.abort()
                raise ResumeFailed(
                    f"the server refused stream/resume: {message!r}",
                    reason=reason,
                    stream=CONNECTION_STREAM,
                )
            if b'"acpio-resume"' in message and _ANSWER.decode(message).id == _RESUME_ID:
                break
            await self._deliver(message)
            cursor = _message_cursor(message)
            if cursor is not None:
                self.cursors[CONNECTION_STREAM] = cursor
        self._ws = socket
        self._ws_ready.set()
        self._group.start_soon(self._socket_reader, socket)


@dataclass(slots=True)
class _Opened:
    stream: str
    status: int = 0
    text: str = ""
    reason: str = ""
    event: anyio.Event = field(default_factory=anyio.Event)


class _WebSocket:
    """A client WebSocket: ``websockets``' protocol layer over an anyio TCP stream."""

    def __init__(self, host: str, port: int, path: str, headers: Mapping[str, str]) -> None:
        self._host = host
        self._port = port
        self._path = path
        self._extra = headers
        self._socket: anyio.abc.SocketStream | None = None
        self._protocol: websockets.client.ClientProtocol | None = None
        self._lock = anyio.Lock()
        self.response_headers: dict[str, str] = {}
        self._parts: list[bytes] = []
        self._ready: list[bytes] = []

    async def connect(self) -> None:
        from websockets.client import ClientProtocol  # noqa: PLC0415
        from websockets.http11 import Response  # noqa: PLC0415
        from websockets.typing import Subprotocol  # noqa: PLC0415
        from websockets.uri import parse_uri  # noqa: PLC0415

        uri = parse_uri(f"ws://{self._host}:{self._port}{self._path}")
        protocol = self._protocol = ClientProtocol(
            uri, subprotocols=[Subprotocol("acp")], max_size=None
        )
        request = protocol.connect()
        for name, value in self._extra.items():
            request.headers[name] = value
        protocol.send_request(request)
        self._socket = await anyio.connect_tcp(self._host, self._port)
        await self._flush()
        while True:
            data = await self._receive()
            protocol.receive_data(data) if data else protocol.receive_eof()
            for event in protocol.events_received():
                if isinstance(event, Response):
                    if event.status_code != 101:
                        await self._socket.aclose()
                        body = (event.body or b"").decode(errors="replace")
                        raise MockClientError(
                            f"the WebSocket upgrade was refused: HTTP {event.status_code} {body}"
                        )
                    self.response_headers = {k.lower(): v for k, v in event.headers.raw_items()}
                    return
            if not data:
                raise MockClientError("the server closed the socket during the WebSocket upgrade")

    async def _receive(self) -> bytes:
        assert self._socket is not None
        try:
            return await self._socket.receive(1 << 16)
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
            return b""

    async def _flush(self) -> None:
        assert self._socket is not None and self._protocol is not None
        async with self._lock:
            data = b"".join(self._protocol.data_to_send())
            if data:
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await self._socket.send(data)

    async def send_text(self, line: bytes) -> None:
        """Send one message as a text frame (nothing once the socket is closing)."""
        from websockets.protocol import State  # noqa: PLC0415

        assert self._protocol is not None
        if self._protocol.state is not State.OPEN:
            return
        self._protocol.send_text(line)
        await self._flush()

    async def _next_batch(self) -> bool:
        """Read from the socket until whole messages arrived; False at its end."""
        from websockets.frames import Frame, Opcode  # noqa: PLC0415

        assert self._protocol is not None
        while not self._ready:
            data = await self._receive()
            if data:
                self._protocol.receive_data(data)
            else:
                self._protocol.receive_eof()
            for frame in self._protocol.events_received():
                if not isinstance(frame, Frame):
                    continue
                if frame.opcode in (Opcode.TEXT, Opcode.CONT, Opcode.BINARY):
                    self._parts.append(bytes(frame.data))
                    if frame.fin:
                        message = b"".join(self._parts)
                        self._parts.clear()
                        if frame.opcode is not Opcode.BINARY:
                            self._ready.append(message)
            await self._flush()  # pongs, and the answer to a close
            if not data and not self._ready:
                return False
        return True

    async def first_message(self) -> bytes | None:
        """The next message (``None`` when the socket ended first)."""
        if not self._ready and not await self._next_batch():
            return None
        return self._ready.pop(0)

    async def messages(self) -> AsyncIterator[bytes]:
        """Every message the server sends, until the socket ends."""
        while self._ready or await self._next_batch():
            batch, self._ready = self._ready, []
            for message in batch:
                yield message

    async def close(self) -> None:
        """Close with 1000 (the client is done: the server ends the connection)."""
        if self._protocol is None or self._socket is None:
            return
        from websockets.frames import CloseCode  # noqa: PLC0415

        with contextlib.suppress(Exception):
            self._protocol.send_close(CloseCode.NORMAL_CLOSURE, "done")
        await self._flush()
        await self._socket.aclose()

    @property
    def close_code(self) -> int:
        """The code of the close frame the server sent; 1006 when it sent none."""
        received = self._protocol.close_rcvd if self._protocol is not None else None
        return received.code if received is not None else 1006

    async def abort(self) -> None:
        """Drop the TCP connection without a close frame (what a network change does)."""
        if self._socket is not None:
            await self._socket.aclose()
