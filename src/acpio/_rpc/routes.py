"""Routes: where each outgoing message of a connection goes, known when it is sent.

How this works: a connection over a byte stream (stdio, a pipe) writes every
message to the one stream. A transport that carries a connection over several
streams (the remote transport: one SSE stream per session and one for the
connection, or one WebSocket) instead gives the connection a :class:`Routes`.
The connection then never reads its own output back: whoever sends names the
route at once. An answer goes on the route its request arrived on (the
transport names it when it hands the request over); a session's messages go on
that session's route (:meth:`acpio.rpc.Connection.for_route`);
everything else on the connection's own route, ``None``.

A route is an opaque hashable value of the transport; the connection only
passes it back to :meth:`Routes.out`. Each route's :class:`RouteOut` keeps its
own backpressure: a full route makes its own senders wait, not the others.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["Inbound", "RouteOut", "Routes"]


class RouteOut(Protocol):
    """One route's way to the peer: whole encoded lines (ending in ``\\n``), kept in order.

    ``try_put`` queues a line if that needs no waiting (False: nothing queued;
    the sender then awaits ``put``, which waits for room); ``put_nowait``
    queues a small control message (a ``$/cancel_request``) whatever the room.
    Lines a sender queued on one route reach the peer in that order. Once the
    transport dropped the route (its peer is gone) lines are accepted and
    dropped: the connection learns that the peer is gone from the transport
    (:meth:`acpio.rpc.Connection.end_input`), not from a send.

    A route may also offer ``async def write_queued() -> bool``: write what is
    queued for the peer now, in the caller's task, in order with the
    transport's own writing (True when it wrote). A session calls it when it
    has just queued the end of a turn, so that the end is not held behind the
    other tasks ready to run; a route without it is left to its transport.
    """

    def try_put(self, line: bytes, /) -> bool: ...

    async def put(self, line: bytes, /) -> None: ...

    def put_nowait(self, line: bytes, /) -> bool: ...


class Inbound(Protocol):
    """What a routed connection takes from its transport (the connection implements it).

    ``receive_message`` handles one message exactly as a line read from a
    stream, in the caller's task: the caller keeps the order of what arrives.
    A request's answer goes on ``route``. ``end_input`` says that nothing
    more will arrive (the peer closed). ``asked`` says whether an answer
    with this id answers a request this side sent and is still waiting for,
    and the route that request went on.
    """

    async def receive_message(self, line: bytes, route: object = None, /) -> None: ...

    def end_input(self, reason: str, /) -> None: ...

    def asked(self, request_id: object, /) -> tuple[bool, object]: ...


class Routes(Protocol):
    """The transport of a routed connection: one :class:`RouteOut` per route.

    ``attach`` is called once, when the connection is entered, so that the
    transport can hand it what arrives
    (:meth:`acpio.rpc.Connection.receive_message`).
    """

    def attach(self, connection: Inbound, /) -> None: ...

    def out(self, route: object, /) -> RouteOut: ...
