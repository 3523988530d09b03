"""What one wire version gives a connection, and what its method table may use of the server.

How this works: ``initialize`` picks the :class:`Wire` of the negotiated version
once (``acpio._wire.v2.V2_WIRE``, or ``acpio._wire.v1.V1_WIRE`` for a v1 client),
and from then on the connection asks it, never the version:

* :meth:`Wire.methods`: the method table requests are looked up in;
* :meth:`Wire.encoding`: each new session's
  :class:`~acpio._session.encoding.SessionEncoding`;
* :meth:`Wire.host`: who runs the session's commands and serves its files
  (:class:`~acpio._handles.host.CommandHost`: the agent, or a client that runs
  terminals);
* :attr:`Wire.withdraws_requests`: whether a request the agent gives up is
  withdrawn with ``$/cancel_request`` (else abandoned).

A method table is written against :class:`ServerView`, the agent server as its
methods see it, so the wire layer never imports the agent layer above it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import ClassVar, Protocol, TypeVar

import anyio.abc
import msgspec

from .. import schema
from .._features.config import ConfigState
from .._handles.host import CommandHost
from .._limits import SessionLimits
from .._protocol.peer import Peer
from .._rpc.connection import RequestContext
from .._session.encoding import SessionEncoding
from .._session.turn import Turns
from .._session.updates import UpdatePath
from .._store.history import SessionRecord

__all__ = [
    "AgentView",
    "CoreView",
    "Handler",
    "MethodTable",
    "ServerView",
    "ServedSession",
    "Wire",
]

T = TypeVar("T")

#: A request handler: the params (``None`` when absent) and the request's context in,
#: the result to answer with out (:class:`~acpio.RequestError` for an error answer).
Handler = Callable[[msgspec.Raw | None, RequestContext], Awaitable[object]]


class MethodTable(Protocol):
    """The requests and notifications of one wire version, by method name."""

    def get(self, method: str) -> Handler | None:
        """The handler of request ``method`` (``None``: not a method of this version)."""
        ...

    def notification_params(self, method: str, params: msgspec.Raw | None) -> msgspec.Raw | None:
        """Notification ``method``'s params as this version says to read them."""
        ...


class AgentView(Protocol):
    """The agent (:class:`acpio.Agent`) as a method table sees it."""

    client_info: schema.Implementation | None
    client_capabilities: schema.ClientCapabilities | None

    @property
    def info(self) -> schema.Implementation:
        """The agent's name and version."""
        ...

    #: The sign-in methods the agent offers (``None``: no sign-in).
    auth_methods: ClassVar[Sequence[schema.AuthMethod] | None]
    #: The MCP transports the agent accepts.
    mcp_transports: ClassVar[Collection[str]]


class ServedSession(Protocol):
    """A session (:class:`acpio.Session`) as a method table sees it."""

    @property
    def id(self) -> str:
        """The ``sessionId``."""
        ...

    @property
    def limits(self) -> SessionLimits:
        """The session's limits."""
        ...

    async def send(self, update: schema.SessionUpdate) -> None:
        """Send one update through the session's update path."""
        ...

    async def cancel(self) -> None:
        """Cancel the session's foreground work."""
        ...


class CoreView(Protocol):
    """The library's side of a session (``SessionCore``) as a method table sees it."""

    @property
    def session(self) -> ServedSession:
        """The session's facade."""
        ...

    @property
    def updates(self) -> UpdatePath:
        """The session's update path."""
        ...

    @property
    def turns(self) -> Turns:
        """The session's turns."""
        ...

    @property
    def config(self) -> ConfigState:
        """The session's config options."""
        ...

    @property
    def task_group(self) -> anyio.abc.TaskGroup:
        """The task group the session's work runs in."""
        ...


class ServerView(Protocol):
    """The agent server as a method table sees it: the v2 handlers and the sessions."""

    peer: Peer

    @property
    def agent(self) -> AgentView:
        """The agent served."""
        ...

    @property
    def sessions(self) -> Mapping[str, ServedSession]:
        """The active sessions, by id."""
        ...

    @property
    def cores(self) -> Mapping[str, CoreView]:
        """The library's side of each active session, by the same id."""
        ...

    @property
    def records(self) -> Mapping[str, SessionRecord]:
        """The store records of the active sessions, by the same id."""
        ...

    @property
    def v2_requests(self) -> Mapping[str, Handler]:
        """The handlers of the current version's requests, by method."""
        ...

    async def initialize(self, params: msgspec.Raw | None, context: RequestContext, /) -> object:
        """The ``initialize`` handler (which negotiates the version)."""
        ...

    def capabilities(self) -> schema.AgentCapabilities:
        """The agent's capabilities."""
        ...

    async def new_session(
        self, request: schema.NewSessionRequest, context: RequestContext, /
    ) -> schema.NewSessionResponse:
        """``session/new`` of params already decoded."""
        ...

    async def resume_session(
        self, request: schema.ResumeSessionRequest, context: RequestContext, /
    ) -> schema.ResumeSessionResponse:
        """``session/resume`` of params already decoded (``replayFrom`` start: a replay)."""
        ...

    async def set_config_option(
        self, request: schema.SetSessionConfigOptionRequest, /
    ) -> schema.SetSessionConfigOptionResponse:
        """``session/set_config_option`` of params already decoded."""
        ...

    def offered_auth_methods(self) -> list[schema.AuthMethod]:
        """The sign-in methods offered to this connection's client."""
        ...

    def check_auth_method(self, method: str) -> None:
        """:raises RequestError: when the agent does not offer ``method``."""
        ...

    def decode(self, raw: msgspec.Raw | None, type_: type[T]) -> T:
        """Decode params (:raises RequestError: ``-32602`` naming the field)."""
        ...

    def active(self, session_id: str) -> ServedSession:
        """The active session (:raises RequestError: ``-32002`` when there is none)."""
        ...


class Wire(Protocol):
    """One wire version: what a connection that negotiated it is given (see the module doc)."""

    @property
    def withdraws_requests(self) -> bool:
        """Whether the client takes ``$/cancel_request`` for a request the agent gives up."""
        ...

    def methods(self, server: ServerView) -> MethodTable:
        """The method table of a connection served by ``server``."""
        ...

    def encoding(self, session_id: str, peer: Peer) -> SessionEncoding:
        """The encoding of a new session of a connection to ``peer``."""
        ...

    def host(self, peer: Peer) -> CommandHost:
        """Who runs the commands and serves the files of a session of ``peer``'s connection."""
        ...
