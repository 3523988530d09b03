"""The entry points that serve an :class:`~acpio.Agent`: :func:`serve` and :func:`run`.

How this works: :func:`serve` wires an :class:`~acpio.Agent` to a
:class:`~acpio._rpc.connection.Connection` whose message handler is the
agent's server (:mod:`acpio._agent.agent_server`: decoding params, sessions, the
ACP methods), so an agent author only writes :meth:`Agent.prompt`.
Foreground work runs in a task group that outlives individual requests;
when the client goes away every session is cancelled, processes are killed,
and :func:`serve` returns. :func:`run` does the same over stdin and stdout
and also stops on SIGTERM or SIGINT, exiting even when work ignores
cancellation.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

import anyio
import anyio.to_thread

from .. import schema
from .._errors import SignInError
from .._limits import AgentLimits
from .._rpc.connection import Connection
from .._rpc.transport import StreamPair, stdio_streams

if TYPE_CHECKING:
    from .._rpc.routes import Routes
    from .._store.history import SessionStore
    from .agent import Agent

__all__ = ["run", "serve"]

logger = logging.getLogger("acpio._agent.agent")  # the name it logged under before the split

#: After shutdown, how long work that ignores cancellation may keep run() from returning.
EXIT_GRACE: Final = 3.0
#: How long a traced connection's end waits for its spans to be exported.
FLUSH_TIMEOUT: Final = 5.0


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
    streams: StreamPair | Routes,
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
    ``streams`` may be a routed transport's :class:`~acpio._rpc.routes.Routes`
    (see :mod:`acpio._rpc.routes`): each session then sends on its own route.
    """
    # The session machinery loads when serving starts, not with `import acpio`.
    from .._handles.terminal import kill_all_processes  # noqa: PLC0415
    from .._store.history import InMemorySessionStore  # noqa: PLC0415
    from .agent_server import AgentServer  # noqa: PLC0415

    limits = limits or AgentLimits()
    stop = stop if stop is not None else anyio.CancelScope()
    from .tracing import agent_tracer  # noqa: PLC0415 - not on `import acpio`'s path

    tracer = agent_tracer(agent)
    try:
        async with anyio.create_task_group() as work_group:
            store = store or InMemorySessionStore(limits.history)
            server = AgentServer(agent, work_group, store, limits)
            server.tracer = tracer
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
        if tracer is not None:
            # The connection's spans leave now, not at the next batch (nor only at exit).
            with anyio.CancelScope(shield=True), anyio.move_on_after(FLUSH_TIMEOUT):
                await anyio.to_thread.run_sync(tracer.flush, abandon_on_cancel=True)


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

    Started with the ``args`` (and ``env``) of one of ``agent.auth_methods``'
    ``terminal`` methods (an editor's terminal sign-in), it serves nothing: it runs
    :meth:`Agent.terminal_login` in the terminal and exits, status 0 when signed in,
    1 with the message of a :class:`~acpio.auth.SignInError`, 130 when interrupted.
    """
    # Sign-in (pathlib, the state directory) loads here, not with acpio.
    from .auth import requested_terminal_method  # noqa: PLC0415

    method = requested_terminal_method(agent.auth_methods, sys.argv[1:], os.environ)
    if method is not None:
        _terminal_sign_in(agent, method.method_id, backend)
        return
    if not logging.getLogger().handlers:
        logging.basicConfig(
            stream=sys.stderr,
            level=os.environ.get("ACPIO_LOG_LEVEL", "WARNING").upper(),
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )
    limits = limits or AgentLimits()
    owned = store is None
    if store is None:
        # The store's module (SQLite, or PostgreSQL for a URL) loads here, not with acpio.
        from .._store.default_store import default_session_store  # noqa: PLC0415

        store = default_session_store(agent.info.name, limits=limits.history)
    try:
        # A second Ctrl-C during shutdown interrupts it; that is what the user asked for.
        with contextlib.suppress(KeyboardInterrupt):
            anyio.run(_run_stdio, agent, store, limits, backend=backend)
    finally:
        if owned:
            from .._store.writer_store import WriterStore  # noqa: PLC0415 - loaded with the store

            if isinstance(store, WriterStore):
                store.close()


def _terminal_sign_in(agent: Agent, method_id: str, backend: str) -> None:
    name = agent.info.name
    try:
        anyio.run(agent.terminal_login, method_id, backend=backend)
    except SignInError as exc:
        print(f"{name}: sign-in failed: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        print(f"\n{name}: sign-in interrupted", file=sys.stderr)
        raise SystemExit(130) from None


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
