"""The Agent base class and the server that speaks ACP for it.

How this works: :func:`serve` wires an :class:`Agent` to a
:class:`~acpio._connection.Connection`. :class:`_AgentServer` is the
connection's message handler: it decodes each method's params into the
generated types (a mismatch is ``-32602`` naming the field), keeps the
active sessions, and implements initialize, the session methods, cancellation
and the tool-call/terminal cancel methods, so an agent author only writes
:meth:`Agent.prompt`. Foreground work runs in a task group that outlives
individual requests; when the client goes away every session is cancelled,
processes are killed, and :func:`serve` returns.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import ClassVar, Final, TypeVar

import anyio
import anyio.abc
import msgspec
from msgspec import UNSET, UnsetType

from . import schema
from ._connection import Connection, RequestContext
from ._errors import RequestError
from ._history import InMemorySessionStore, SessionRecord, SessionStore
from ._ids import new_id
from ._paths import is_absolute
from ._session import Session, SessionLimits
from ._terminal import kill_all_processes
from ._transport import StreamPair, stdio_streams

__all__ = ["Agent", "AgentLimits", "run", "serve"]

logger = logging.getLogger(__name__)

SUPPORTED_PROTOCOL_VERSIONS: Final = (2,)
LIST_PAGE_SIZE: Final = 100
T = TypeVar("T")


class AgentLimits(msgspec.Struct, kw_only=True):
    """Limits of one agent connection; each is reached with a clear error, never memory growth.

    ``max_message_size`` bytes per incoming line (``-32600`` beyond),
    ``max_concurrent_requests`` incoming requests in flight (``-32603``
    beyond), ``max_sessions`` active sessions (``-32603`` beyond),
    ``write_buffer_size`` bytes queued for a client that does not read
    (senders wait beyond), plus the per-session limits of
    :class:`~acpio.SessionLimits`. ``shutdown_grace`` is how long work may
    take to unwind when the client disconnects.
    """

    max_message_size: int = 32 * 1024 * 1024
    max_concurrent_requests: int = 1024
    max_sessions: int = 1000
    write_buffer_size: int = 1024 * 1024
    shutdown_grace: float = 2.0
    session: SessionLimits = msgspec.field(default_factory=SessionLimits)


class Agent:
    """Base class of an ACP agent: override :meth:`prompt`, optionally the hooks.

    Set ``info`` (name and version are required by the protocol) and
    ``prompt_capabilities`` if the agent accepts images, audio or embedded
    context. The SDK implements initialize, sessions (new, list, resume with
    replay, close, delete), the prompt lifecycle and cancellation.
    """

    info: ClassVar[schema.Implementation] = schema.Implementation(
        name="acpio-agent", version="0.0.0"
    )
    prompt_capabilities: ClassVar[schema.PromptCapabilities | None] = None
    auth_methods: ClassVar[list[schema.AuthMethod] | None] = None

    client_info: schema.Implementation | None = None
    client_capabilities: schema.ClientCapabilities | None = None

    async def prompt(self, session: Session, prompt: list[schema.ContentBlock]) -> str | None:
        """Do the work for one user prompt; return a stop reason (``end_turn`` if ``None``).

        Runs as the session's foreground work after the prompt was accepted
        and ``running`` was reported. Cancellation (``session/cancel``) arrives
        as anyio cancellation; the SDK reports ``cancelled`` for you. An
        exception ends the turn with stop reason ``error``.
        """
        raise NotImplementedError("override Agent.prompt to answer prompts")

    async def on_initialize(self, request: schema.InitializeRequest) -> None:
        """Called once the client initialized (its info and capabilities are stored)."""

    async def on_new_session(self, session: Session) -> None:
        """Called when a session is created, before ``session/new`` is answered."""

    async def on_resume_session(self, session: Session) -> None:
        """Called when a session is resumed, before ``session/resume`` is answered."""

    async def on_close_session(self, session: Session) -> None:
        """Called after a session was closed (its work is cancelled by then)."""

    async def ext_method(self, method: str, params: msgspec.Raw | None) -> object:
        """Handle a ``_``-prefixed extension request; the default answers ``-32601``."""
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: msgspec.Raw | None) -> None:
        """Handle a ``_``-prefixed extension notification; ignored by default."""


def _decode(raw: msgspec.Raw | None, type_: type[T]) -> T:
    try:
        return schema.decode(raw if raw is not None else b"{}", type_)
    except msgspec.ValidationError as exc:
        raise RequestError.invalid_params(str(exc)) from None
    except msgspec.DecodeError as exc:  # pragma: no cover - the envelope already parsed
        raise RequestError.invalid_params(str(exc)) from None


def _require_absolute_param(path: str, field_name: str) -> None:
    if not is_absolute(path):
        raise RequestError.invalid_params(f"`{field_name}` must be an absolute path, got {path!r}")


class _AgentServer:
    """The connection's message handler for one agent (see the module docstring)."""

    def __init__(
        self,
        agent: Agent,
        work_group: anyio.abc.TaskGroup,
        store: SessionStore,
        limits: AgentLimits,
    ) -> None:
        self.agent = agent
        self.work_group = work_group
        self.store = store
        self.limits = limits
        self.sessions: dict[str, Session] = {}
        self._connection: Connection | None = None
        self._requests: dict[str, Callable[[msgspec.Raw | None, RequestContext], Awaitable[object]]]
        self._requests = {
            "initialize": self._initialize,
            "session/new": self._new_session,
            "session/list": self._list_sessions,
            "session/resume": self._resume_session,
            "session/close": self._close_session,
            "session/delete": self._delete_session,
            "session/prompt": self._prompt,
            "tool_call/cancel": self._cancel_tool_call,
            "terminal/cancel": self._cancel_terminal,
        }

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
        handler = self._requests.get(method)
        if handler is not None:
            return await handler(params, context)
        if method.startswith("_"):
            return await self.agent.ext_method(method, params)
        raise RequestError.method_not_found(method)

    async def on_notification(self, method: str, params: msgspec.Raw | None) -> None:
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
            await session.cancel()
        elif method.startswith("_"):
            await self.agent.ext_notification(method, params)
        else:
            logger.debug("ignoring unknown notification %s", method)

    # ---------------------------------------------------------------- methods

    async def _initialize(self, params: msgspec.Raw | None, _: RequestContext) -> object:
        request = _decode(params, schema.InitializeRequest)
        requested = request.protocol_version
        supported = [v for v in SUPPORTED_PROTOCOL_VERSIONS if v <= requested]
        if not supported:
            raise RequestError.unsupported_protocol_version(
                requested, list(SUPPORTED_PROTOCOL_VERSIONS)
            )
        self.agent.client_info = request.info
        capabilities = request.capabilities
        self.agent.client_capabilities = (
            capabilities if isinstance(capabilities, schema.ClientCapabilities) else None
        )
        await self.agent.on_initialize(request)
        agent = self.agent
        return schema.InitializeResponse(
            protocol_version=max(supported),
            info=agent.info,
            capabilities=schema.AgentCapabilities(
                session=schema.SessionCapabilities(
                    prompt=(
                        agent.prompt_capabilities
                        if agent.prompt_capabilities is not None
                        else UNSET
                    ),
                    delete=schema.SessionDeleteCapabilities(),
                    additional_directories=schema.SessionAdditionalDirectoriesCapabilities(),
                )
            ),
            auth_methods=agent.auth_methods if agent.auth_methods else UNSET,
        )

    def _make_session(self, record: SessionRecord, mcp_servers: list[schema.McpServer]) -> Session:
        if len(self.sessions) >= self.limits.max_sessions:
            raise RequestError.internal_error(
                f"Too many active sessions (limit {self.limits.max_sessions}); close one first"
            )
        session = Session(
            record.session_id,
            record.cwd,
            connection=self.connection,
            task_group=self.work_group,
            history=record.history,
            prompt_handler=self.agent.prompt,
            additional_directories=record.additional_directories,
            mcp_servers=mcp_servers,
            limits=self.limits.session,
        )
        self.sessions[session.id] = session
        return session

    async def _new_session(self, params: msgspec.Raw | None, _: RequestContext) -> object:
        request = _decode(params, schema.NewSessionRequest)
        _require_absolute_param(request.cwd, "cwd")
        directories = _directories(request.additional_directories)
        session_id = new_id("sess")
        record = self.store.create(session_id, request.cwd, directories)
        session = self._make_session(record, _list_or_empty(request.mcp_servers))
        try:
            await self.agent.on_new_session(session)
        except BaseException:
            self.sessions.pop(session_id, None)
            self.store.delete(session_id)
            raise
        return schema.NewSessionResponse(session_id=session_id)

    async def _list_sessions(self, params: msgspec.Raw | None, _: RequestContext) -> object:
        request = _decode(params, schema.ListSessionsRequest)
        records = self.store.list()
        if isinstance(request.cwd, str):
            _require_absolute_param(request.cwd, "cwd")
            records = [r for r in records if r.cwd == request.cwd]
        start = 0
        if isinstance(request.cursor, str):
            if not request.cursor.isdigit():
                raise RequestError.invalid_params(f"unknown cursor {request.cursor!r}")
            start = int(request.cursor)
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

    async def _resume_session(self, params: msgspec.Raw | None, _: RequestContext) -> object:
        request = _decode(params, schema.ResumeSessionRequest)
        _require_absolute_param(request.cwd, "cwd")
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
        record = self.store.get(request.session_id)
        if record is None:
            raise RequestError.session_not_found(request.session_id)
        if os.path.normpath(record.cwd) != os.path.normpath(request.cwd):
            raise RequestError.invalid_params(
                f"`cwd` {request.cwd!r} differs from the session's working directory {record.cwd!r}"
            )
        session = self.sessions.get(request.session_id)
        if session is None:
            session = self._make_session(record, _list_or_empty(request.mcp_servers))
        if request.additional_directories:
            session.additional_directories = _directories(request.additional_directories)
        if isinstance(replay, schema.ReplayFromStart):
            for update in list(record.history.replay()):
                await session.send_replayed(update)
        await self.agent.on_resume_session(session)
        return schema.ResumeSessionResponse()

    async def _close_session(self, params: msgspec.Raw | None, _: RequestContext) -> object:
        request = _decode(params, schema.CloseSessionRequest)
        session = self._active(request.session_id)
        with anyio.CancelScope(shield=True):
            await session.close()
        self.sessions.pop(session.id, None)
        await self.agent.on_close_session(session)
        return schema.CloseSessionResponse()

    async def _delete_session(self, params: msgspec.Raw | None, _: RequestContext) -> object:
        request = _decode(params, schema.DeleteSessionRequest)
        session = self.sessions.pop(request.session_id, None)
        if session is not None:
            with anyio.CancelScope(shield=True):
                await session.close()
        if not self.store.delete(request.session_id) and session is None:
            raise RequestError.session_not_found(request.session_id)
        return schema.DeleteSessionResponse()

    async def _prompt(self, params: msgspec.Raw | None, context: RequestContext) -> object:
        request = _decode(params, schema.PromptRequest)
        session = self._active(request.session_id)
        message_id = await session.accept_prompt(list(request.prompt))
        record = self.store.get(session.id)
        if record is not None:
            record.touch()
        context.after_response(session.start_queued_work) if hasattr(context, "after_response") else session.start_queued_work()  # TEMP
        return schema.PromptResponse(message_id=message_id)

    async def _cancel_tool_call(self, params: msgspec.Raw | None, _: RequestContext) -> object:
        request = _decode(params, schema.CancelToolCallRequest)
        session = self._active(request.session_id)
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
        if handle.running_in_scope:
            handle.request_cancel()
        else:
            await handle.cancel()
        return schema.CancelToolCallResponse()

    async def _cancel_terminal(self, params: msgspec.Raw | None, _: RequestContext) -> object:
        request = _decode(params, schema.CancelTerminalRequest)
        session = self._active(request.session_id)
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

    def _active(self, session_id: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None or session.closed:
            raise RequestError.session_not_found(session_id)
        return session

    # --------------------------------------------------------------- shutdown

    async def shutdown(self) -> None:
        """Cancel every session's work and wait (up to the grace period) for it to unwind."""
        sessions = list(self.sessions.values())
        for session in sessions:
            await session.cancel()
        with anyio.move_on_after(self.limits.shutdown_grace):
            for session in sessions:
                await session.wait_idle()


def _list_or_empty(value: list[T] | UnsetType | None) -> list[T]:
    return list(value) if isinstance(value, list) else []


def _directories(value: list[str] | UnsetType | None) -> list[str]:
    directories = _list_or_empty(value)
    for path in directories:
        _require_absolute_param(path, "additionalDirectories")
    return directories


async def serve(
    agent: Agent,
    streams: StreamPair,
    *,
    store: SessionStore | None = None,
    limits: AgentLimits | None = None,
) -> None:
    """Serve ``agent`` over ``streams`` until the client closes the connection.

    On return every session was cancelled, its processes killed, and what had
    been sent was flushed.
    """
    limits = limits or AgentLimits()
    try:
        async with anyio.create_task_group() as work_group:
            server = _AgentServer(agent, work_group, store or InMemorySessionStore(), limits)
            try:
                async with Connection(
                    streams,
                    server,
                    encode=schema.encode,
                    max_message_size=limits.max_message_size,
                    write_buffer_size=limits.write_buffer_size,
                    max_concurrent_requests=limits.max_concurrent_requests,
                ) as connection:
                    server.bind(connection)
                    try:
                        await connection.wait_closed()
                    finally:
                        with anyio.CancelScope(shield=True):
                            await server.shutdown()
            finally:
                work_group.cancel_scope.cancel()
    finally:
        kill_all_processes()


def run(agent: Agent, *, backend: str = "asyncio") -> None:
    """Serve ``agent`` over this process's stdin and stdout (the usual way agents run).

    Logging goes to stderr; SIGTERM and SIGINT shut the agent down cleanly
    (running work is reported cancelled, child processes are killed). Returns
    when the client closes stdin.
    """
    if not logging.getLogger().handlers:
        logging.basicConfig(
            stream=sys.stderr,
            level=os.environ.get("ACPIO_LOG_LEVEL", "WARNING").upper(),
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )
    # A second Ctrl-C during shutdown interrupts it; that is what the user asked for.
    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(_run_stdio, agent, backend=backend)


async def _run_stdio(agent: Agent) -> None:
    async with anyio.create_task_group() as group:
        group.start_soon(_watch_signals, group.cancel_scope)
        async with stdio_streams() as streams:
            await serve(agent, streams)
        group.cancel_scope.cancel()


async def _watch_signals(scope: anyio.CancelScope) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for signum in signals:
            logger.info("received %s; shutting down", signal.Signals(signum).name)
            scope.cancel()
            return
