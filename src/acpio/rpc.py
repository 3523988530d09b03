"""The JSON-RPC layer under an agent: connections, message handlers and byte streams.

An agent written as ``class MyAgent(acpio.Agent)`` and started with
:func:`acpio.run` never needs this module: :func:`acpio.run` opens stdin and
stdout, and :func:`acpio.serve` takes the :class:`StreamPair` to serve over.
What lives here is for code that speaks JSON-RPC itself (a client, a proxy, a
test harness) or brings its own transport:

- :class:`Connection`: one JSON-RPC 2.0 connection over a :class:`StreamPair`,
  usable from either side (requests, notifications, cancellation, limits);
- :class:`MessageHandler`: what a connection dispatches incoming requests and
  notifications to, and :class:`RequestContext`, what a request handler knows
  about the request it serves;
- :class:`StreamPair` and where one comes from: :func:`stdio_streams` (this
  process's stdin and stdout) and :func:`memory_stream_pair` (two connected
  in-memory ends, for tests and embedding);
- :class:`Routes`, :class:`RouteOut` and :class:`Inbound`: a transport that
  carries one connection over several streams (the remote transport: a stream
  per session) gives the connection its routes instead of a stream pair, and
  :class:`RouteView` is one route of such a connection.

The errors a connection raises (:class:`acpio.RequestError`,
:class:`acpio.ConnectionClosed`, :class:`acpio.RemoteProtocolError`,
:class:`acpio.LocalProtocolError`) stay at the top level: agent code meets
them too. The connection's default limits are those of :class:`acpio.AgentLimits`.
"""

from ._rpc.connection import Connection as Connection
from ._rpc.connection import RouteView as RouteView
from ._rpc.handler import MessageHandler as MessageHandler
from ._rpc.handler import RequestContext as RequestContext
from ._rpc.routes import Inbound as Inbound
from ._rpc.routes import RouteOut as RouteOut
from ._rpc.routes import Routes as Routes
from ._rpc.transport import StreamPair as StreamPair
from ._rpc.transport import memory_stream_pair as memory_stream_pair
from ._rpc.transport import stdio_streams as stdio_streams

__all__ = (
    "Connection",
    "Inbound",
    "MessageHandler",
    "RequestContext",
    "RouteOut",
    "RouteView",
    "Routes",
    "StreamPair",
    "memory_stream_pair",
    "stdio_streams",
)
