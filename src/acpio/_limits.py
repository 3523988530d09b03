"""Every limit of acpio, defined once: what an agent connection, a session and a history may hold.

The limits nest the way the things they bound nest: :class:`AgentLimits` (one
connection: its messages, requests, sessions and write buffer) holds the
:class:`SessionLimits` of every session it serves and the
:class:`HistoryLimits` of the histories the default store keeps. All three are
frozen and keyword-only; derive a changed copy with :func:`dataclasses.replace`.

Each limit is reached with a clear error (or, for replay, by dropping the
oldest), never by memory growth; each class says which error. The defaults are
promised in docs/guarantees.md (pinned by
``tests/reliability/test_limits.py``). The connection defaults are also the
defaults of :class:`acpio.rpc.Connection`'s keyword arguments, so both layers
read them from here.
"""

from __future__ import annotations

import dataclasses
from typing import Final

from ._errors import RequestError

__all__ = [
    "DEFAULT_MAX_CONCURRENT_REQUESTS",
    "DEFAULT_MAX_MESSAGE_SIZE",
    "DEFAULT_MAX_NESTING_DEPTH",
    "DEFAULT_WRITE_BUFFER_SIZE",
    "AgentLimits",
    "HistoryLimits",
    "RemoteLimits",
    "SessionLimits",
    "check_count",
]

#: Bytes per incoming line (one JSON-RPC message).
DEFAULT_MAX_MESSAGE_SIZE: Final = 32 * 1024 * 1024
#: Bytes queued for a peer that does not read before senders wait.
DEFAULT_WRITE_BUFFER_SIZE: Final = 1024 * 1024
#: Incoming requests running at once.
DEFAULT_MAX_CONCURRENT_REQUESTS: Final = 1024
#: Arrays and objects nested in one message, the top-level object included.
DEFAULT_MAX_NESTING_DEPTH: Final = 256


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class HistoryLimits:
    """Bounds on what a session's history keeps for replay: the newest bytes and items win.

    Reaching one is not an error: the oldest is dropped and replay shows the
    rest. ``terminal_bytes`` is what replay sends of each terminal's output (a
    terminal holds at most that plus the chunk that arrived last);
    ``tool_call_items`` is how many content items a tool call keeps;
    ``records`` is how many records (messages, tool calls, terminals, plans,
    ...) a history keeps, the oldest dropped beyond. ``diff_text_chars`` is how
    many characters of whole file texts the diffs a history keeps may carry for
    clients whose diffs show texts (ACP v1): beyond it the oldest diffs let go of
    theirs and replay describes them by their changes and patch (the newest diff
    keeps its texts whatever their size).

    Histories and stores take it directly (``InMemorySessionStore(limits)``,
    ``SqliteSessionStore(path, limits=...)``); ``AgentLimits(history=...)``
    sets it for the store acpio creates when the agent is given none.
    """

    terminal_bytes: int = 1024 * 1024
    tool_call_items: int = 1000
    records: int = 10_000
    diff_text_chars: int = 4 * 1024 * 1024


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class SessionLimits:
    """Per-session limits; each is reached with a clear error rather than memory growth.

    ``max_queued_prompts`` prompts may wait behind the running one (the
    prompt beyond is answered ``-32603``); ``max_pending_permissions``
    permission requests may be open at once (the request beyond raises
    :class:`~acpio.LocalProtocolError` in the agent). ``cancel_grace`` is how
    many seconds cancelled work may take to unwind before it is abandoned and
    reported ``cancelled`` anyway (no error: the turn ends).
    ``max_agent_state_bytes`` bounds the encoded JSON of the state an agent
    saves (:meth:`acpio.Session.save_agent_state` raises
    :class:`~acpio.AgentStateError` beyond; nothing is saved).

    ``client_request_timeout`` is how many seconds a v1 client may take to
    answer a request that should come back at once (``terminal/create``,
    ``terminal/output``, ``fs/read_text_file``, ``fs/write_text_file``):
    beyond it the request is withdrawn and :class:`~acpio.RequestTimeout`
    naming it is raised in the agent (a command polled for its output ends
    with it). What legitimately waits for a person or a process (a
    permission request, ``terminal/wait_for_exit``) has no limit;
    ``math.inf`` lifts this one.

    Session setup (``session/new``, ``session/resume``, ``session/load``)
    accepts at most ``max_mcp_servers`` entries in ``mcpServers``,
    ``max_additional_directories`` in ``additionalDirectories``, and
    ``max_mcp_server_items`` in each list of one MCP server (``args``,
    ``env``, ``headers``); more is answered ``-32602`` naming the field, the
    count and the limit (:func:`check_count`).
    """

    max_queued_prompts: int = 16
    max_pending_permissions: int = 64
    cancel_grace: float = 2.0
    max_agent_state_bytes: int = 16 * 1024 * 1024
    client_request_timeout: float = 30.0
    max_mcp_servers: int = 100
    max_additional_directories: int = 100
    max_mcp_server_items: int = 1000


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class AgentLimits:
    """Limits of one agent connection; each is reached with a clear error, never memory growth.

    ``max_message_size`` bytes per incoming line (the line is skipped and answered
    ``-32600`` with the request's id when the line's start shows one, ``null``
    otherwise; a response past it fails the request it answers),
    ``max_concurrent_requests`` incoming requests in flight (``-32603`` beyond),
    ``max_nesting_depth`` levels of arrays and objects in one message (``-32700``
    beyond, answered with the request's id), ``max_sessions`` active sessions
    (``-32603`` beyond), ``write_buffer_size`` bytes queued for a client that does not
    read (no error: senders wait beyond). ``shutdown_grace`` is how long work may take
    to unwind when the client disconnects before it is reported cancelled and abandoned.

    ``session`` holds the per-session limits (:class:`SessionLimits`);
    ``history`` bounds the replay of the sessions kept by the store acpio
    creates when :func:`acpio.run` or :func:`acpio.serve` is given none (a
    store you pass keeps the :class:`HistoryLimits` it was created with).
    """

    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    max_concurrent_requests: int = DEFAULT_MAX_CONCURRENT_REQUESTS
    max_nesting_depth: int = DEFAULT_MAX_NESTING_DEPTH
    max_sessions: int = 1000
    write_buffer_size: int = DEFAULT_WRITE_BUFFER_SIZE
    shutdown_grace: float = 2.0
    session: SessionLimits = dataclasses.field(default_factory=SessionLimits)
    history: HistoryLimits = dataclasses.field(default_factory=HistoryLimits)


def check_count(field: str, count: int, limit: int, setting: str) -> None:
    """Refuse a list of the client's with more than ``limit`` entries.

    :raises RequestError: ``-32602`` naming ``field``, its ``count``, the
        ``limit`` and the :class:`SessionLimits` ``setting`` that sets it.
    """
    if count > limit:
        raise RequestError.invalid_params(
            f"`{field}` has {count} entries; the limit is {limit} "
            f"(SessionLimits.{setting}, set by the agent)",
            {"field": field, "count": count, "limit": limit},
        )


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class RemoteLimits:
    """Limits of one remote server process (:mod:`acpio.remote`); each has its answer.

    ``max_connections`` ACP connections at once (``initialize`` and the
    WebSocket upgrade answered HTTP 503 beyond); ``max_sessions`` sessions
    attached across all connections (``session/new``, ``session/load``,
    ``session/resume`` and ``session/fork`` answered ``-32603`` beyond; each
    connection's own bound is :attr:`AgentLimits.max_sessions`);
    ``max_body_size`` bytes per POST body or WebSocket message (HTTP 413, or
    WebSocket close 1009); ``max_buffered_bytes`` of output held for one
    stream whose client does not read (then that session's sends wait, over
    WebSocket the connection's: backpressure, no error); ``stall_timeout``
    seconds a session or stream may stay held back without its client reading
    anything before the connection is closed; ``idle_timeout`` seconds a
    Streamable HTTP connection with no open stream and no request may live
    before it is closed (a later request for it is answered 404);
    ``keepalive_interval`` seconds between SSE comments on a quiet stream.

    Slow clients, before any authentication: ``header_timeout`` seconds for
    a request's headers to arrive, counted from the accept (or from the end
    of the previous response on a kept-alive connection), then the socket is
    closed without an answer; ``body_timeout`` seconds for a whole POST body
    (HTTP 408). ``max_sockets`` open client sockets at once (capped below
    the process's file limit): past it the oldest socket that is not in a
    request is closed to make room, or the new one when none is. The last
    three are kept by :func:`~acpio.remote.serve_uvicorn` (``header_timeout``,
    ``max_sockets``) and by :class:`~acpio.remote.RemoteApp` (``body_timeout``).

    Resumable streams (``docs/remote.md``, "Resuming a stream"): each stream
    keeps the last ``retention_messages`` messages it sent, each for at most
    ``retention_seconds`` after it was sent, so a client whose stream dropped
    resumes from its last cursor; an older cursor is refused (HTTP 409,
    ``stream/resume_failed``). A WebSocket connection whose socket dropped
    waits ``retention_seconds`` for a ``stream/resume`` before it is closed.
    Both are advertised as ``capabilities.transport.resumable``;
    ``retention_messages=0`` turns resuming off. A stream's retained messages
    are at most ``retention_messages`` (memory per stream at most that many
    messages), on top of what no reader took yet (``max_buffered_bytes``).
    """

    max_connections: int = 1024
    max_sessions: int = 4096
    max_body_size: int = DEFAULT_MAX_MESSAGE_SIZE
    max_buffered_bytes: int = 8 * 1024 * 1024
    stall_timeout: float = 60.0
    idle_timeout: float = 300.0
    keepalive_interval: float = 15.0
    header_timeout: float = 10.0
    body_timeout: float = 30.0
    max_sockets: int = 4096
    retention_messages: int = 4096
    retention_seconds: float = 120.0

    def __post_init__(self) -> None:
        if self.retention_messages < 0:
            raise ValueError(f"retention_messages must be >= 0, got {self.retention_messages}")
        if not self.retention_seconds > 0:
            raise ValueError(f"retention_seconds must be > 0, got {self.retention_seconds}")

    @property
    def resumable(self) -> bool:
        """Whether streams keep messages to resume from (``retention_messages > 0``)."""
        return self.retention_messages > 0
