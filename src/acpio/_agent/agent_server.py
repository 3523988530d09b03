"""The server that speaks ACP for an :class:`~acpio.Agent`: one handler per method.

How this works: :class:`AgentServer` is the connection's message handler.
It decodes each method's params into the generated types (a mismatch is
``-32602`` naming the field), keeps the active sessions, and implements
initialize, authentication, the session methods, cancellation and the
tool-call/terminal cancel methods, so an agent author only writes
:meth:`Agent.prompt`. Sessions run their foreground work in a task group
that outlives individual requests; :meth:`AgentServer.shutdown` cancels it
all when the client goes away.

Protocol versions: ``initialize`` negotiates the version (1 for a v1
client, else the highest supported one at or below the client's), checked on
its own before the rest of the params, since a v1 client's params look
different. The negotiated version's wire object (:mod:`acpio._wire`:
``V2_WIRE``, or ``V1_WIRE``, loaded with the first v1 client) gives the method
table requests are looked up in, each session's encoding and who runs its
commands. Until an ``initialize`` succeeded, every other request is refused
with ``-32600``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Collection, Iterator, Mapping
from typing import TYPE_CHECKING, Final, TypeVar, cast

import anyio
import anyio.abc
import msgspec
from msgspec import UNSET, UnsetType

from .. import schema
from .._errors import AgentStateError, LocalProtocolError, RequestError
from .._features.commands import parse_command
from .._features.config import set_from_client
from .._features.mcp_transports import check_mcp_servers, mcp_capabilities
from .._json import get_field
from .._limits import SessionLimits, check_count
from .._protocol.ids import new_id
from .._protocol.paths import is_absolute
from .._protocol.peer import Peer
from .._rpc.connection import Connection, RequestContext
from .._session.updates import ClientConnection
from .._store.history import SessionRecord, SessionStore, end_open_tool_calls
from .._wire.v2 import V2_WIRE
from .._wire.wire import Handler, MethodTable, Wire
from .auth import offered_methods
from .durable import decode_agent_state, encode_agent_state
from .session import PromptHandler, Session, SessionCore, create_session

if TYPE_CHECKING:
    from .._limits import AgentLimits
    from .agent import Agent
    from .tracing import AgentTracer

__all__ = ["AgentServer", "prompt_handler"]

logger = logging.getLogger(__name__)

SUPPORTED_PROTOCOL_VERSIONS: Final = (1, 2)
V2_PROTOCOL_VERSIONS: Final = (2,)
MAX_PROTOCOL_VERSION: Final = 65535  # ProtocolVersion is a uint16
LIST_PAGE_SIZE: Final = 100
MAX_CURSOR_DIGITS: Final = 9  # a cursor is an offset this agent gave out
T = TypeVar("T")


class _VersionProbe(msgspec.Struct, rename="camel"):
    """The one field of ``initialize`` that must be understood before the rest."""

    protocol_version: object = UNSET


class _InitializeParams(msgspec.Struct, rename="camel"):
    """``initialize`` with the client capabilities kept raw (they default when malformed)."""

    protocol_version: int
    info: schema.Implementation
    capabilities: msgspec.Raw | UnsetType = UNSET


_decode_probe = msgspec.json.Decoder(_VersionProbe).decode


def _decode_as(raw: msgspec.Raw | None, type_: object) -> object:
    try:
        decoded: object = schema.decode(raw if raw is not None else b"{}", type_)
    except msgspec.ValidationError as exc:
        raise RequestError.invalid_params(str(exc)) from None
    except msgspec.DecodeError as exc:  # pragma: no cover - the envelope already parsed
        raise RequestError.invalid_params(str(exc)) from None
    return decoded


def _decode(raw: msgspec.Raw | None, type_: type[T]) -> T:
    """Decode params into ``type_`` (:raises RequestError: ``-32602`` naming the field)."""
    return cast("T", _decode_as(raw, type_))


def _decode_config_request(raw: msgspec.Raw | None) -> schema.SetSessionConfigOptionRequest:
    """``session/set_config_option`` params (a union, so not a ``type[T]``)."""
    return cast(
        "schema.SetSessionConfigOptionRequest",
        _decode_as(raw, schema.SetSessionConfigOptionRequest),
    )


def _require_absolute_param(path: str, field_name: str) -> None:
    if not is_absolute(path):
        raise RequestError.invalid_params(f"`{field_name}` must be an absolute path, got {path!r}")


def _same_path(a: str, b: str) -> bool:
    return os.path.normpath(a) == os.path.normpath(b)


class AgentServer:
    """The connection's message handler for one agent (see the module docstring)."""

    def __init__(
        self,
        agent: Agent,
        work_group: anyio.abc.TaskGroup,
        store: SessionStore,
        limits: AgentLimits,
    ) -> None:
        self.agent = agent
        self._prompt_handler: Final = prompt_handler(agent)  # one for every session
        self.work_group = work_group
        self.store = store
        self.limits = limits
        self.sessions: dict[str, Session] = {}
        #: Traces each session's turns (``serve`` sets it when tracing is on).
        self.tracer: AgentTracer | None = None
        #: The library's side of each session in :attr:`sessions`, by the same id.
        self.cores: dict[str, SessionCore] = {}
        self.records: dict[str, SessionRecord] = {}  # of the sessions in self.sessions
        self.protocol_version: int = SUPPORTED_PROTOCOL_VERSIONS[-1]
        self.peer = Peer()
        self._connection: Connection | None = None
        self._initialized = False
        #: The v2 handlers, from the table built once for every connection.
        self.v2_requests: Final = _V2Handlers(self)
        #: The negotiated version's wire object (the current one until initialize).
        self.wire: Wire = V2_WIRE
        # The negotiated version's method table.
        self._requests: MethodTable = V2_WIRE.methods(self)

    decode = staticmethod(_decode)

    @property
    def connection(self) -> Connection:
        assert self._connection is not None
        return self._connection

    def bind(self, connection: Connection) -> None:
        self._connection = connection

    # ------------------------------------------------------------ dispatching

    async def on_request(
        self, method: str, params: msgspec.Raw | None, context: RequestContext
    ) -> object:
        if not self._initialized and method != "initialize":
            raise RequestError.invalid_request(
                f"{method} before a successful initialize; send initialize first"
            )
        handler = self._requests.get(method)
        if handler is not None:
            return await handler(params, context)
        if method.startswith("_"):
            return await self.agent.ext_method(method, params)
        raise RequestError.method_not_found(method)

    async def on_notification(self, method: str, params: msgspec.Raw | None) -> None:
        params = self._requests.notification_params(method, params)
        if method == "session/cancel":
            try:
                request = _decode(params, schema.CancelSessionNotification)
            except RequestError as exc:
                logger.warning("ignoring malformed session/cancel: %s", exc.message)
                return
            session = self.sessions.get(request.session_id)
            if session is None:
                logger.warning("session/cancel for unknown session %s", request.session_id)
                return
            # Prompts received before this cancel are cancelled too, even those whose
            # request handler has not run yet (requests run in tasks, notifications inline).
            self.cores[session.id].turns.cancel_received_through(self.connection.received)
            await session.cancel()
        elif method.startswith("_"):
            await self.agent.ext_notification(method, params)
        else:
            logger.debug("ignoring unknown notification %s", method)

    # ---------------------------------------------------------------- methods

    async def initialize(self, params: msgspec.Raw | None, _: RequestContext) -> object:
        raw = params if params is not None else msgspec.Raw(b"{}")
        # The version decides everything else (an older client's params look
        # different), so it is checked first and on its own.
        try:
            requested = _decode_probe(raw).protocol_version
        except msgspec.DecodeError as exc:
            raise RequestError.invalid_params(str(exc)) from None
        if requested is UNSET:
            raise RequestError.invalid_params("Object missing required field `protocolVersion`")
        if type(requested) is not int or not 0 <= requested <= MAX_PROTOCOL_VERSION:
            raise RequestError.invalid_params(
                "`protocolVersion` must be an integer from 0 to 65535, "
                f"got {schema.encode(requested).decode()}"
            )
        if requested == 1:
            return await self._initialize_v1(raw)
        supported = [v for v in V2_PROTOCOL_VERSIONS if v <= requested]
        if not supported:
            raise RequestError.unsupported_protocol_version(
                requested, list(SUPPORTED_PROTOCOL_VERSIONS)
            )
        parsed = _decode(raw, _InitializeParams)
        capabilities = schema.ClientCapabilities()
        if isinstance(parsed.capabilities, msgspec.Raw):
            try:
                capabilities = schema.decode(parsed.capabilities, schema.ClientCapabilities)
            except msgspec.ValidationError as exc:
                # The schema says malformed capabilities count as none advertised.
                logger.warning("ignoring malformed client capabilities: %s", exc)
        request = schema.InitializeRequest(
            protocol_version=requested, info=parsed.info, capabilities=capabilities
        )
        self.protocol_version = max(supported)
        self.peer = Peer.from_v2(self.protocol_version, capabilities)
        self._use(V2_WIRE)
        agent = self.agent
        agent.client_info = request.info
        agent.client_capabilities = capabilities
        await agent.on_initialize(request)
        self._initialized = True
        return schema.InitializeResponse(
            protocol_version=self.protocol_version,
            info=agent.info,
            capabilities=self.capabilities(),
            auth_methods=self.offered_auth_methods() or UNSET,
        )

    async def _initialize_v1(self, raw: msgspec.Raw) -> object:
        """A v1 client: the v1 method table, the peer from ``clientCapabilities``."""
        # The v1 wire (and the vendored v1 schema) loads with the first v1 client.
        from .._wire.v1 import V1_WIRE  # noqa: PLC0415

        methods = V1_WIRE.methods(self)
        response = methods.initialize(raw)
        self.protocol_version = 1
        self._use(V1_WIRE, methods)
        agent = self.agent
        await agent.on_initialize(
            schema.InitializeRequest(
                protocol_version=1,
                info=agent.client_info or schema.Implementation(name="", version=""),
                capabilities=agent.client_capabilities or schema.ClientCapabilities(),
            )
        )
        self._initialized = True
        return response

    def _use(self, wire: Wire, methods: MethodTable | None = None) -> None:
        """Serve the rest of the connection as ``wire`` says (``methods``: its table, if made)."""
        self.wire = wire
        self._requests = methods if methods is not None else wire.methods(self)
        self.connection.withdraws_requests = wire.withdraws_requests

    def offered_auth_methods(self) -> list[schema.AuthMethod]:
        """The sign-in methods offered to this connection's client."""
        return offered_methods(self.agent.auth_methods, self.peer)

    def capabilities(self) -> schema.AgentCapabilities:
        prompt = self.agent.prompt_capabilities
        return schema.AgentCapabilities(
            session=schema.SessionCapabilities(
                prompt=prompt if prompt is not None else UNSET,
                mcp=mcp_capabilities(self.agent.mcp_transports),
                delete=schema.SessionDeleteCapabilities(),
                additional_directories=schema.SessionAdditionalDirectoriesCapabilities(),
            )
        )

    def check_auth_method(self, method: str) -> None:
        if not self.agent.auth_methods:
            # Without advertised methods the client must not call auth/*.
            raise RequestError.method_not_found(method)

    async def _login(self, params: msgspec.Raw | None, _: RequestContext) -> object:
        self.check_auth_method("auth/login")
        request = _decode(params, schema.LoginAuthRequest)
        offered = [
            m.method_id
            for m in self.agent.auth_methods or ()
            if not isinstance(m, schema.UnknownVariant)
        ]
        if request.method_id not in offered:
            raise RequestError.invalid_params(
                f"unknown auth method {request.method_id!r}; offered: {offered}"
            )
        method = next(
            m
            for m in self.agent.auth_methods or ()
            if not isinstance(m, schema.UnknownVariant) and m.method_id == request.method_id
        )
        if isinstance(method, schema.AuthMethodTerminal):
            # Clients run terminal methods in a terminal; one that asks here afterwards is
            # told whether that run signed the user in.
            if not await self.agent.signed_in():
                raise RequestError.auth_required(_terminal_hint(method))
            return schema.LoginAuthResponse()
        await self.agent.login(request.method_id)
        return schema.LoginAuthResponse()

    async def check_signed_in(self) -> None:
        """:raises RequestError: ``auth_required`` while the agent asks for sign-in; the
        message names every way to sign in (a terminal method with its arguments, also
        for a client it is not offered to: its user can still run it by hand)."""
        agent = self.agent
        if agent.auth_methods and not await agent.signed_in():
            ways = [
                _how_to_sign_in(m)
                for m in agent.auth_methods
                if not isinstance(m, schema.UnknownVariant)
            ]
            raise RequestError.auth_required(
                "Authentication required: sign in first (" + "; ".join(ways) + ")"
            )

    async def _logout(self, params: msgspec.Raw | None, _: RequestContext) -> object:
        self.check_auth_method("auth/logout")
        _decode(params, schema.LogoutAuthRequest)
        await self.agent.logout()
        return schema.LogoutAuthResponse()

    def _make_session(
        self, record: SessionRecord, mcp_servers: list[schema.McpServer]
    ) -> SessionCore:
        if len(self.sessions) >= self.limits.max_sessions:
            raise RequestError.internal_error(
                f"Too many active sessions (limit {self.limits.max_sessions}); close one first"
            )
        # The session's own route (the connection itself but on a routed transport).
        connection: ClientConnection = self.connection.for_route(record.session_id)
        core = create_session(
            record.session_id,
            record.cwd,
            connection=connection,
            task_group=self.work_group,
            history=record.history,
            prompt_handler=self._prompt_handler,
            additional_directories=record.additional_directories,
            mcp_servers=mcp_servers,
            limits=self.limits.session,
            peer=self.peer,
            wire=self.wire,
        )
        session = core.session
        if self.tracer is not None:
            core.turns.observer = self.tracer.session(session)
        core.durable.bind(record, self.store, self.agent.agent_state_version)
        try:
            core.setup_features(self.agent.config_options, self.agent.commands)
        except LocalProtocolError as exc:
            message = f"the agent's session setup is invalid: {exc}"
            raise RequestError.internal_error(message) from exc
        self.sessions[session.id] = session
        self.cores[session.id] = core
        self.records[session.id] = record
        record.connections += 1
        record.active = True
        return core

    async def _new_session(self, params: msgspec.Raw | None, context: RequestContext) -> object:
        return await self.new_session(_decode(params, schema.NewSessionRequest), context)

    async def new_session(
        self, request: schema.NewSessionRequest, context: RequestContext
    ) -> schema.NewSessionResponse:
        """``session/new`` of decoded params (each wire version decodes its own)."""
        await self.check_signed_in()
        _check_setup_lists(request.additional_directories, request.mcp_servers, self.limits.session)
        _require_absolute_param(request.cwd, "cwd")
        directories = _directories(request.additional_directories)
        mcp_servers = _mcp_servers(request.mcp_servers, self.agent.mcp_transports)
        session_id = new_id("sess")
        record = await self.store.create(session_id, request.cwd, directories)
        try:
            core = self._make_session(record, mcp_servers)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self.store.delete(session_id)
            raise
        session = core.session
        # Updates the hook sends go out right after the answer (editors drop earlier ones).
        core.updates.hold_setup()
        try:
            await self.agent.on_new_session(session)
        except BaseException:
            self.sessions.pop(session_id, None)
            self.cores.pop(session_id, None)
            self.records.pop(session_id, None)
            with anyio.CancelScope(shield=True):
                await self.store.delete(session_id)
            raise
        context.after_response(core.updates.release_setup)
        return schema.NewSessionResponse(
            session_id=session_id,
            config_options=core.config.answer_field(),
            available_commands=session.commands or UNSET,
        )

    async def _list_sessions(self, params: msgspec.Raw | None, _: RequestContext) -> object:
        request = _decode(params, schema.ListSessionsRequest)
        records = await self.store.list()
        if isinstance(request.cwd, str):
            _require_absolute_param(request.cwd, "cwd")
            cwd = request.cwd
            records = [r for r in records if _same_path(r.cwd, cwd)]
        start = 0
        if isinstance(request.cursor, str):
            cursor = request.cursor
            # ASCII digits only: str.isdigit() also takes "²", which int() refuses.
            if not (cursor.isascii() and cursor.isdigit() and len(cursor) <= MAX_CURSOR_DIGITS):
                shown = cursor if len(cursor) <= 40 else cursor[:40] + "..."
                raise RequestError.invalid_params(
                    f"unknown cursor {shown!r}; pass the nextCursor of an earlier "
                    "session/list answer, or none for the first page"
                )
            start = int(cursor)
        page = records[start : start + LIST_PAGE_SIZE]
        more = start + LIST_PAGE_SIZE < len(records)
        return schema.ListSessionsResponse(
            sessions=[
                schema.SessionInfo(
                    session_id=r.session_id,
                    cwd=r.cwd,
                    additional_directories=r.additional_directories or UNSET,
                    title=r.title if r.title is not None else UNSET,
                    updated_at=r.updated_at,
                )
                for r in page
            ],
            next_cursor=str(start + LIST_PAGE_SIZE) if more else UNSET,
        )

    async def _resume_session(self, params: msgspec.Raw | None, context: RequestContext) -> object:
        return await self.resume_session(_decode(params, schema.ResumeSessionRequest), context)

    async def resume_session(
        self, request: schema.ResumeSessionRequest, context: RequestContext
    ) -> schema.ResumeSessionResponse:
        """``session/resume`` of decoded params (each wire version decodes its own)."""
        await self.check_signed_in()
        _check_setup_lists(request.additional_directories, request.mcp_servers, self.limits.session)
        _require_absolute_param(request.cwd, "cwd")
        directories = _directories(request.additional_directories)
        mcp_servers = _mcp_servers(request.mcp_servers, self.agent.mcp_transports)
        replay = request.replay_from
        if (
            replay is not UNSET
            and replay is not None
            and not isinstance(replay, schema.ReplayFromStart)
        ):
            raise RequestError.invalid_params(
                f"unsupported replayFrom cursor {schema.to_builtins(replay)!r}; "
                'this agent supports {"type": "start"}'
            )
        record: SessionRecord | None
        session = self.sessions.get(request.session_id)
        if session is not None and not session.closed:
            record = self.records[session.id]  # served here already: no store round trip
        else:
            record = await self.store.get(request.session_id)
        if record is None:
            raise RequestError.session_not_found(request.session_id)
        if not _same_path(record.cwd, request.cwd):
            if not record.active:
                await self.store.release(record)  # taken up by get(), not served after all
            raise RequestError.invalid_params(
                f"`cwd` {request.cwd!r} differs from the session's working directory {record.cwd!r}"
            )
        session = self.sessions.get(request.session_id)
        if session is not None and session.closed:
            # Closing: the close (sent first) finishes first, then the session comes back.
            with anyio.CancelScope(shield=True):
                await session.close()
                await self._forget(session)
            session = None
            # Released by the close: taken up again, the way any other resume takes it.
            again = await self.store.get(request.session_id)
            if again is None:
                raise RequestError.session_not_found(request.session_id)
            record = again
        core = self.cores[session.id] if session is not None else None
        if session is None or core is None:
            if not record.active:
                # No handle of this session lives: a tool call still open in its history
                # (its process was killed mid-turn) can never end, so it is ended here.
                end_open_tool_calls(record.history)
            core = self._make_session(record, mcp_servers)
            session = core.session
            await self._restore_agent_state(core, record)
        # The request's lists are complete: omitted or empty means none.
        session.additional_directories = directories
        session.mcp_servers = mcp_servers
        record.additional_directories = list(directories)
        await core.resume(replay=isinstance(replay, schema.ReplayFromStart))
        core.updates.hold_setup()
        durable = core.durable
        durable.restoring = True  # the hook declares the options; the saved values come after
        try:
            await self.agent.on_resume_session(session)
        except BaseException:
            durable.restoring = False
            core.updates.release_setup()
            raise
        durable.restoring = False
        if record.config_values:
            core.config.restore(record.config_values)
            await durable.save_config()  # without the values dropped, if any
        context.after_response(core.updates.release_setup)
        return schema.ResumeSessionResponse(
            config_options=core.config.answer_field(),
            available_commands=session.commands or UNSET,
        )

    async def _restore_agent_state(self, core: SessionCore, record: SessionRecord) -> None:
        """Give a reopened session the agent state its store kept, migrated when it was
        saved with another ``agent_state_version``.

        :raises RequestError: ``-32603`` when the state cannot be read or the agent
            refuses to migrate it (the session is not served then).
        """
        stored = record.agent_state
        if stored is None:
            return
        session = core.session
        stored_version = record.agent_state_version
        current = self.agent.agent_state_version
        try:
            value = decode_agent_state(stored)
            if stored_version == current:
                core.durable.value = value
                return
            migrated = await self.agent.migrate_agent_state(session, stored_version, value)
            encoded = encode_agent_state(migrated, session.limits.max_agent_state_bytes)
            await core.durable.put_encoded(encoded, current)
        except BaseException as exc:
            with anyio.CancelScope(shield=True):
                await session.close()
                await self._forget(session)
            if not isinstance(exc, AgentStateError):
                raise
            data = {
                "sessionId": session.id,
                "storedVersion": stored_version,
                "agentStateVersion": current,
            }
            if stored_version == current:
                raise RequestError.internal_error(
                    f"Cannot reopen session {session.id}: {exc}", data
                ) from None
            raise RequestError.internal_error(
                f"Cannot reopen session {session.id}: its stored agent state has version "
                f"{stored_version} and this agent's agent_state_version is {current}; "
                f"Agent.migrate_agent_state did not convert it: {exc}",
                data,
            ) from None

    async def _set_config_option(self, params: msgspec.Raw | None, _: RequestContext) -> object:
        return await self.set_config_option(_decode_config_request(params))

    async def set_config_option(
        self, request: schema.SetSessionConfigOptionRequest
    ) -> schema.SetSessionConfigOptionResponse:
        """``session/set_config_option`` of decoded params (each wire version decodes its own)."""
        session_id: object = (
            request.raw.get("sessionId")
            if isinstance(request, schema.UnknownVariant)
            else request.session_id
        )
        session = self.active(str(session_id))
        core = self.cores[session.id]
        return await set_from_client(
            core.config,
            request,
            lambda config_id, value: self.agent.set_config_option(session, config_id, value),
        )

    async def _close_session(self, params: msgspec.Raw | None, _: RequestContext) -> object:
        request = _decode(params, schema.CloseSessionRequest)
        session = self.sessions.get(request.session_id)
        if session is None:
            # Closing a session that does not exist or is not active succeeds.
            return schema.CloseSessionResponse()
        first = not session.closed
        with anyio.CancelScope(shield=True):
            # A second close of a closing session answers only once its work ended.
            await session.close()
        if first:
            with anyio.CancelScope(shield=True):
                await self._forget(session)
            await self.agent.on_close_session(session)
        return schema.CloseSessionResponse()

    async def _delete_session(self, params: msgspec.Raw | None, _: RequestContext) -> object:
        request = _decode(params, schema.DeleteSessionRequest)
        session = self.sessions.get(request.session_id)
        if session is not None:
            with anyio.CancelScope(shield=True):
                await session.close()
                await self._forget(session)
        # Deleting a session that is gone or never existed succeeds silently (the
        # session-delete page: SHOULD), as closing one does.
        await self.store.delete(request.session_id)
        return schema.DeleteSessionResponse()

    async def _prompt(self, params: msgspec.Raw | None, context: RequestContext) -> object:
        request = _decode(params, schema.PromptRequest)
        session = self.active(request.session_id)
        if not request.prompt:
            raise RequestError.invalid_params("`prompt` must not be empty")
        turns = self.cores[session.id].turns
        work = turns.accept_prompt(
            list(request.prompt), meta=request.meta if isinstance(request.meta, dict) else None
        )
        record = self.records.get(session.id)
        if record is not None:
            record.touch()
        if turns.cancelled_by_earlier_cancel(context.sequence):
            # The client cancelled after sending this prompt, before it was accepted here.
            await session.cancel()
        # Nothing below may fail or wait: the prompt is inserted, its response goes next.
        context.after_response(lambda: turns.prompt_responded(work))
        return schema.PromptResponse(message_id=work.message_id)

    async def _cancel_tool_call(self, params: msgspec.Raw | None, _: RequestContext) -> object:
        request = _decode(params, schema.CancelToolCallRequest)
        session = self.active(request.session_id)
        handle = session.tool_call_handle(request.tool_call_id)
        if handle is None:
            raise RequestError.invalid_params(f"unknown tool call {request.tool_call_id!r}")
        if handle.final:
            raise RequestError.invalid_params(
                f"tool call {request.tool_call_id!r} already ended ({handle.status})"
            )
        if not handle.cancellable:
            raise RequestError.invalid_params(
                f"tool call {request.tool_call_id!r} does not advertise cancellation"
            )
        handle.request_cancel()
        return schema.CancelToolCallResponse()

    async def _cancel_terminal(self, params: msgspec.Raw | None, _: RequestContext) -> object:
        request = _decode(params, schema.CancelTerminalRequest)
        session = self.active(request.session_id)
        terminal = session.terminal_handle(request.terminal_id)
        if terminal is None:
            raise RequestError.invalid_params(f"unknown terminal {request.terminal_id!r}")
        if not terminal.cancellable or terminal.exit_status is not None:
            raise RequestError.invalid_params(
                f"terminal {request.terminal_id!r} is not cancellable"
                + (" (it already exited)" if terminal.exit_status is not None else "")
            )
        if not terminal.request_cancel():
            raise RequestError.invalid_params(
                f"terminal {request.terminal_id!r} has no running process to cancel"
            )
        return schema.CancelTerminalResponse()

    async def _forget(self, session: Session) -> None:
        # A resume during the close may already have put a fresh session in its place.
        if self.sessions.get(session.id) is session:
            del self.sessions[session.id]
            self.cores.pop(session.id, None)
            record = self.records.pop(session.id, None)
            if record is not None:
                record.connections -= 1
                if record.connections <= 0:  # no other connection reopened it meanwhile
                    record.active = False
                    await self.store.release(record)

    def active(self, session_id: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None or session.closed:
            raise RequestError.session_not_found(session_id)
        return session

    # --------------------------------------------------------------- shutdown

    async def shutdown(self) -> None:
        """Cancel every session's work; what has not unwound within the grace is abandoned.

        Either way each running turn reports its ``idle`` with ``cancelled``
        (while the client may still read it).
        """
        sessions = list(self.sessions.values())
        for session in sessions:
            await session.cancel()
        with anyio.move_on_after(self.limits.shutdown_grace):
            for session in sessions:
                await session.wait_idle()
        for session in sessions:
            core = self.cores.get(session.id)
            if core is not None and core.session is session:
                core.turns.abandon()
        with anyio.move_on_after(1.0):
            for session in sessions:
                await session.wait_idle()
        # What the sessions recorded is kept (a durable store flushes it now).
        with anyio.move_on_after(self.limits.shutdown_grace):
            for session in sessions:
                try:
                    await self._forget(session)
                except Exception:  # the store failed: the other sessions are kept still
                    logger.exception("the store could not keep session %s", session.id)


#: The v2 method table, built once for every connection: each method's handler, a
#: method of :class:`AgentServer` found by name when a request comes.
_V2_TABLE: Final = {
    "initialize": "initialize",
    "auth/login": "_login",
    "auth/logout": "_logout",
    "session/new": "_new_session",
    "session/list": "_list_sessions",
    "session/resume": "_resume_session",
    "session/close": "_close_session",
    "session/delete": "_delete_session",
    "session/prompt": "_prompt",
    "tool_call/cancel": "_cancel_tool_call",
    "terminal/cancel": "_cancel_terminal",
    "session/set_config_option": "_set_config_option",
}


class _V2Handlers(Mapping[str, Handler]):
    """One server's v2 handlers: the shared table, each handler bound when it is looked up."""

    __slots__ = ("_server",)

    def __init__(self, server: AgentServer) -> None:
        self._server = server

    def __getitem__(self, method: str) -> Handler:
        handler: Handler = getattr(self._server, _V2_TABLE[method])
        return handler

    def __iter__(self) -> Iterator[str]:
        return iter(_V2_TABLE)

    def __len__(self) -> int:
        return len(_V2_TABLE)


def prompt_handler(agent: Agent) -> PromptHandler:
    """The session's prompt handler: a command to :meth:`Agent.command`, the rest to ``prompt``."""

    async def handle(session: Session, prompt: list[schema.ContentBlock]) -> object:
        commands = session.commands
        invocation = parse_command(prompt, commands) if commands else None
        if invocation is not None:
            return await agent.command(session, invocation)
        return await agent.prompt(session, prompt)

    return handle


def _list_or_empty(value: list[T] | UnsetType | None) -> list[T]:
    return list(value) if isinstance(value, list) else []


def _how_to_sign_in(method: schema.AuthMethodAgent | schema.AuthMethodTerminal) -> str:
    if isinstance(method, schema.AuthMethodAgent):
        return f"{method.name!r}: auth/login with methodId {method.method_id!r}"
    args = " ".join(method.args) if isinstance(method.args, list) else ""
    env = (
        " ".join(f"{v.name}={v.value}" for v in method.env) if isinstance(method.env, list) else ""
    )
    how = " ".join(part for part in (env, "<the agent's command>", args) if part)
    return f"{method.name!r}: run `{how}` in a terminal"


def _terminal_hint(method: schema.AuthMethodTerminal) -> str:
    return f"Authentication required: sign in outside ACP first ({_how_to_sign_in(method)})"


def _directories(value: list[str] | UnsetType | None) -> list[str]:
    directories = _list_or_empty(value)
    for path in directories:
        _require_absolute_param(path, "additionalDirectories")
    return directories


def _check_setup_lists(
    directories: list[str] | UnsetType | None,
    servers: list[schema.McpServer] | UnsetType | None,
    limits: SessionLimits,
) -> None:
    """Refuse session setup lists beyond the session limits (``-32602`` naming the limit)."""
    directories = _list_or_empty(directories)
    check_count(
        "additionalDirectories",
        len(directories),
        limits.max_additional_directories,
        "max_additional_directories",
    )
    servers = _list_or_empty(servers)
    check_count("mcpServers", len(servers), limits.max_mcp_servers, "max_mcp_servers")
    for index, server in enumerate(servers):
        raw: object = getattr(server, "raw", None)  # a transport the schema does not know
        for name in ("args", "env", "headers"):
            items = getattr(server, name, None) if raw is None else get_field(raw, name)
            if isinstance(items, list):
                check_count(
                    f"mcpServers[{index}].{name}",
                    len(cast("list[object]", items)),
                    limits.max_mcp_server_items,
                    "max_mcp_server_items",
                )


def _mcp_servers(
    value: list[schema.McpServer] | UnsetType | None, transports: Collection[str]
) -> list[schema.McpServer]:
    servers = _list_or_empty(value)
    check_mcp_servers(servers, transports)
    return servers
