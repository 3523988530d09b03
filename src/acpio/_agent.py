"""The Agent base class and the entry points that serve it: :func:`serve` and :func:`run`.

How this works: :func:`serve` wires an :class:`Agent` to a
:class:`~acpio._connection.Connection` whose message handler is the
agent's server (:mod:`acpio._agent_server`: decoding params, sessions, the
ACP methods), so an agent author only writes :meth:`Agent.prompt`.
Foreground work runs in a task group that outlives individual requests;
when the client goes away every session is cancelled, processes are killed,
and :func:`serve` returns. :func:`run` does the same over stdin and stdout
and also stops on SIGTERM or SIGINT, exiting even when work ignores
cancellation.

Protocol versions: ``initialize`` negotiates the version; the sessions of
the connection are created with it, and :class:`~acpio.Session` is the
single place where updates are encoded for the wire. Agent code never sees
the version.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
from collections.abc import Callable, Collection, Sequence
from typing import ClassVar, Final

import anyio
import msgspec

from . import schema
from ._agent_server import _AgentServer
from ._commands import CommandInvocation
from ._connection import Connection
from ._errors import RequestError, SessionStoreError
from ._history import InMemorySessionStore, SessionStore
from ._limits import AgentLimits, HistoryLimits
from ._session import Session
from ._sqlite_store import SqliteSessionStore
from ._store_paths import default_store_path
from ._terminal import kill_all_processes
from ._transport import StreamPair, stdio_streams

__all__ = ["Agent", "default_session_store", "run", "serve"]

logger = logging.getLogger(__name__)

#: After shutdown, how long work that ignores cancellation may keep run() from returning.
EXIT_GRACE: Final = 3.0


class Agent:
    """Base class of an ACP agent: override :meth:`prompt`, optionally the hooks.

    Set ``info`` (name and version are required by the protocol) and
    ``prompt_capabilities`` if the agent accepts images, audio or embedded
    context. The SDK implements initialize (version negotiation), sessions
    (new, list, resume with replay, close, delete), the prompt lifecycle and
    cancellation, and advertises exactly what it serves: the baseline session
    methods, ``session/delete`` and additional directories, the prompt
    capabilities you set, the MCP transports of ``mcp_transports``, and
    ``auth_methods`` (override :meth:`login` and :meth:`logout` when you set
    them).

    Set ``config_options`` and ``commands`` to give every session pickers
    (model, mode, ...) and slash commands; the client's changes arrive in
    :meth:`set_config_option`, invocations in :meth:`command`. Updates sent
    from :meth:`on_new_session` and :meth:`on_resume_session` reach the client
    right after the answer (never before it: editors would drop them).

    Each prompt runs :meth:`prompt` as the session's foreground work; a
    prompt sent while one runs is accepted and queued (its ``messageId`` and
    ``user_message`` go out at once) and runs after the current turn's idle.
    """

    # A class attribute usually; an instance may set its own (adapters name the agent they serve).
    info: schema.Implementation = schema.Implementation(name="acpio-agent", version="0.0.0")
    prompt_capabilities: ClassVar[schema.PromptCapabilities | None] = None
    auth_methods: ClassVar[Sequence[schema.AuthMethod] | None] = None
    config_options: ClassVar[Sequence[schema.SessionConfigOption]] = ()
    """Config options every new session starts with (:func:`acpio.select_option`,
    :func:`acpio.boolean_option`); sent in the ``session/new`` and ``session/resume``
    answers. Read them as ``session.config[config_id]``; change a session's list with
    :meth:`acpio.SessionConfig.replace` (e.g. in :meth:`on_new_session`)."""
    commands: ClassVar[Sequence[schema.AvailableCommand]] = ()
    """Slash commands every new session advertises (:func:`acpio.command`); sent in
    the session answers. A prompt invoking one goes to :meth:`command`."""
    mcp_transports: ClassVar[Collection[str]] = ("stdio",)
    """The MCP transports this agent connects to: ``"stdio"`` (the baseline, the default:
    ACP v1 requires every agent to accept stdio servers, and editors send the ones the user
    configured), ``"http"``, ``"sse"``. ``initialize`` advertises exactly these
    (``capabilities.session.mcp``) and ``session/new``/``resume`` refuse servers of any
    other transport with ``-32602``; ``()`` refuses every MCP server. :mod:`acpio.mcp`
    connects to them; an agent that uses none simply ignores the servers it accepted."""

    client_info: schema.Implementation | None = None
    """The client's ``info`` from its ``initialize`` request (the latest one, if one agent
    object serves several connections; use :meth:`on_initialize` to keep one per client)."""
    client_capabilities: schema.ClientCapabilities | None = None
    """The client's capabilities from ``initialize`` (``None`` if absent or malformed)."""

    async def prompt(self, session: Session, prompt: list[schema.ContentBlock]) -> str | None:
        """Do the work for one user prompt; return a stop reason (``end_turn`` if ``None``).

        Runs as the session's foreground work after the prompt was accepted,
        its ``user_message`` sent and ``running`` reported; the SDK then sends
        exactly one ``idle`` with the returned stop reason (a known one, or a
        ``_``-prefixed custom one). Cancellation (``session/cancel``) arrives
        as anyio cancellation; the SDK reports ``cancelled`` for you. An
        exception ends the turn with stop reason ``error`` and an error
        object; the prompt itself was already accepted.
        """
        raise NotImplementedError("override Agent.prompt to answer prompts")

    async def command(self, session: Session, invocation: CommandInvocation) -> str | None:
        """Run a slash command: a prompt that starts with ``/name`` of an advertised command.

        Runs exactly like :meth:`prompt` (same lifecycle, same stop reasons);
        ``invocation.input`` is the text after the name. The default gives the
        whole prompt to :meth:`prompt`.
        """
        return await self.prompt(session, invocation.prompt)

    async def set_config_option(self, session: Session, config_id: str, value: str | bool) -> None:
        """The client changed a config option (``session/set_config_option``).

        Called after the value was checked and applied (``session.config[config_id]``
        is already ``value``); raise :class:`~acpio.RequestError` to refuse, which
        restores the previous state. Other options may be changed here with
        :meth:`acpio.SessionConfig.set`/``replace``: the answer carries the full
        new state. The default accepts every valid value.
        """

    async def on_initialize(self, request: schema.InitializeRequest) -> None:
        """Called once the client initialized (its info and capabilities are stored)."""

    async def on_new_session(self, session: Session) -> None:
        """Called when a session is created, before ``session/new`` is answered.

        What it sends is held and goes out right after the answer, in order;
        config options and commands it sets are part of the answer itself.
        """

    async def on_resume_session(self, session: Session) -> None:
        """Called when a session is resumed, after any replay, before the response."""

    async def on_close_session(self, session: Session) -> None:
        """Called after a session was closed (its work is cancelled by then)."""

    async def login(self, method_id: str) -> None:
        """Authenticate with one of ``auth_methods`` (``auth/login``); raise to refuse.

        Only called for a method the agent advertised.
        """
        raise NotImplementedError("override Agent.login when auth_methods is set")

    async def logout(self) -> None:
        """End the authenticated session (``auth/logout``)."""
        raise NotImplementedError("override Agent.logout when auth_methods is set")

    async def ext_method(self, method: str, params: msgspec.Raw | None) -> object:
        """Handle a ``_``-prefixed extension request; the default answers ``-32601``."""
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: msgspec.Raw | None) -> None:
        """Handle a ``_``-prefixed extension notification; ignored by default."""


async def serve(
    agent: Agent,
    streams: StreamPair,
    *,
    store: SessionStore | None = None,
    limits: AgentLimits | None = None,
) -> None:
    """Serve ``agent`` over ``streams`` until the client closes the connection.

    On return every session was cancelled (each running turn reported
    ``idle`` with ``cancelled``), its processes killed, and what had been
    sent was flushed. Sessions live in ``store`` (in memory by default).
    """
    await _serve(agent, streams, store=store, limits=limits)


async def _serve(
    agent: Agent,
    streams: StreamPair,
    *,
    store: SessionStore | None = None,
    limits: AgentLimits | None = None,
    on_shutdown: Callable[[], None] | None = None,
    stop: anyio.CancelScope | None = None,
) -> None:
    """:func:`serve`, plus a hook called when shutdown begins and a scope that starts it.

    Cancelling ``stop`` shuts down exactly as if the client had closed the
    connection: work is cancelled and reported while the connection still
    writes (the work itself is not cancelled from outside).
    """
    limits = limits or AgentLimits()
    stop = stop if stop is not None else anyio.CancelScope()
    try:
        async with anyio.create_task_group() as work_group:
            store = store or InMemorySessionStore(limits.history)
            server = _AgentServer(agent, work_group, store, limits)
            try:
                async with Connection(
                    streams,
                    server,
                    encode=schema.encode,
                    max_message_size=limits.max_message_size,
                    write_buffer_size=limits.write_buffer_size,
                    max_concurrent_requests=limits.max_concurrent_requests,
                    max_nesting_depth=limits.max_nesting_depth,
                ) as connection:
                    server.bind(connection)
                    try:
                        with stop:
                            await connection.wait_closed()
                    finally:
                        if on_shutdown is not None:
                            on_shutdown()
                        with anyio.CancelScope(shield=True):
                            await server.shutdown()
            finally:
                work_group.cancel_scope.cancel()
    finally:
        kill_all_processes()


def run(
    agent: Agent,
    *,
    backend: str = "asyncio",
    store: SessionStore | None = None,
    limits: AgentLimits | None = None,
) -> None:
    """Serve ``agent`` over this process's stdin and stdout (the usual way agents run).

    Logging goes to stderr (level from ``ACPIO_LOG_LEVEL``, default
    ``WARNING``); nothing but protocol messages reaches stdout. Returns when
    the client closes stdin, or on SIGTERM or SIGINT: running work is
    cancelled and reported ``cancelled``, child processes are killed. Work
    that ignores cancellation cannot keep the process alive: a few seconds
    after shutdown began the process exits (status 0) without waiting for it.

    Sessions survive the process: unless ``store`` is given, they live in a
    :class:`~acpio.store.SqliteSessionStore` at a per-user path derived from
    ``agent.info.name`` (see :func:`default_session_store`; ``ACPIO_SESSION_STORE``
    and ``ACPIO_STATE_DIR`` change it, ``store=InMemorySessionStore()`` keeps
    them in memory). A store file that cannot be used is reported on stderr
    and the agent serves from memory instead.
    """
    if not logging.getLogger().handlers:
        logging.basicConfig(
            stream=sys.stderr,
            level=os.environ.get("ACPIO_LOG_LEVEL", "WARNING").upper(),
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )
    limits = limits or AgentLimits()
    owned = store is None
    if store is None:
        store = default_session_store(agent.info.name, limits=limits.history)
    try:
        # A second Ctrl-C during shutdown interrupts it; that is what the user asked for.
        with contextlib.suppress(KeyboardInterrupt):
            anyio.run(_run_stdio, agent, store, limits, backend=backend)
    finally:
        if owned and isinstance(store, SqliteSessionStore):
            store.close()


def default_session_store(agent_name: str, *, limits: HistoryLimits | None = None) -> SessionStore:
    """The store :func:`run` uses when given none: sessions that outlive the process.

    A :class:`~acpio.store.SqliteSessionStore` at ``ACPIO_SESSION_STORE`` (a file,
    or ``memory`` for an :class:`~acpio.store.InMemorySessionStore`), else at
    ``<state dir>/<agent_name>/sessions.sqlite3``: the state directory is
    ``ACPIO_STATE_DIR``, else ``$XDG_STATE_HOME`` (``~/.local/state``) on
    Linux, ``~/Library/Application Support`` on macOS, ``%LOCALAPPDATA%`` on
    Windows. A file that cannot be used (unreadable, not a store, written by
    a newer acpio) is reported on stderr and sessions stay in memory: the
    agent always starts. Its histories keep ``limits`` (the defaults if ``None``).
    """
    path = default_store_path(agent_name)
    if path is None:
        return InMemorySessionStore(limits)
    try:
        return SqliteSessionStore(path, limits=limits)
    except SessionStoreError as exc:
        # Straight to stderr, whatever the log level: the user loses sessions otherwise.
        print(
            f"acpio warning: {exc}; sessions are kept in memory only (they end with this process)",
            file=sys.stderr,
            flush=True,
        )
        return InMemorySessionStore(limits)


async def _run_stdio(agent: Agent, store: SessionStore | None, limits: AgentLimits) -> None:
    # Shielded from the group's cancellation; cancelled once serving is over.
    deadline = anyio.CancelScope(shield=True)
    stop = anyio.CancelScope()
    async with anyio.create_task_group() as group:
        # A signal stops serving the way a closed stdin does; cancelling the
        # whole group instead would kill the work before it could report idle.
        group.start_soon(_watch_signals, stop)

        def shutting_down() -> None:
            group.start_soon(_exit_if_stuck, deadline, limits.shutdown_grace + EXIT_GRACE)

        try:
            async with stdio_streams() as streams:
                await _serve(
                    agent,
                    streams,
                    store=store,
                    limits=limits,
                    on_shutdown=shutting_down,
                    stop=stop,
                )
        finally:
            deadline.cancel()
        group.cancel_scope.cancel()


async def _exit_if_stuck(scope: anyio.CancelScope, delay: float) -> None:
    with scope:
        await anyio.sleep(delay)
    if scope.cancelled_caught:
        return
    # Structured concurrency waits for every task; one that ignores cancellation
    # would keep the agent alive after its client went away.
    logger.error("work ignored cancellation for %.1fs after shutdown; exiting anyway", delay)
    logging.shutdown()
    os._exit(0)


async def _watch_signals(scope: anyio.CancelScope) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for signum in signals:
            logger.info("received %s; shutting down", signal.Signals(signum).name)
            scope.cancel()
            return
