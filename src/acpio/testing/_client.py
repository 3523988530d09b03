"""MockClient: drives an ACP agent, in-process or as a subprocess, the way an editor would.

How this works: the client is the other end of an ordinary
:class:`~acpio.Connection`. Every line in either direction passes through
:meth:`MockClient._observe` first, which records it in the :class:`Transcript`,
feeds it to the :class:`ConformanceChecker` and notes the position of
responses and of the agent's ``$/cancel_request``. ``session/update``
notifications are decoded and folded into the session's :class:`SessionView`
in arrival order; permission requests are answered by the
:class:`PermissionPolicy` in their own task.

Nothing in a test sleeps: every wait is "until this predicate holds" with a
deadline. Anything that changes what a test can observe (an update, a
permission request, the agent going away, a failure) wakes the waiters, and
they re-check. A failure the test did not ask about (a conformance violation
in strict mode, a permission policy that could not answer, an in-process
agent that crashed) cancels every wait at once and is raised from it, and
again when the client closes, so the test fails with the reason instead of
timing out. Errors raised by the client carry the agent's stderr and the last
messages of the transcript.
"""

from __future__ import annotations

import bisect
import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Final, Self, TypeAlias, TypeVar

import anyio
import anyio.abc
import msgspec

from .. import schema
from .._agent import Agent, AgentLimits, serve
from .._connection import Connection, RequestContext
from .._errors import AcpError, ConnectionClosed, RequestError
from .._history import SessionStore
from .._transport import StreamPair, memory_stream_pair, process_streams
from ._conformance import ConformanceChecker, ConformanceError, ConformanceReport, Violation
from ._policy import (
    CANCELLED_OUTCOME,
    PermissionPolicy,
    PermissionPolicyError,
    PermissionRequest,
    PolicyDecision,
    as_policy,
)
from ._transcript import AGENT_TO_CLIENT, CLIENT_TO_AGENT, Direction, Transcript
from ._view import SessionView, TerminalView, ToolCallView

__all__ = [
    "AgentExitedError",
    "AgentTimeoutError",
    "ClientSession",
    "MockClient",
    "MockClientError",
    "PromptInput",
    "Turn",
    "TurnResult",
]

T = TypeVar("T")

DEFAULT_TIMEOUT: Final = 10.0
EXIT_TIMEOUT: Final = 5.0
STDERR_GRACE: Final = 1.0
STDERR_LIMIT: Final = 64 * 1024
_CONTEXT_MESSAGES: Final = 20
_CONTEXT_STDERR: Final = 4000

PromptInput: TypeAlias = (
    str
    | schema.ContentBlock
    | Mapping[str, object]
    | Sequence[str | schema.ContentBlock | Mapping[str, object]]
)
"""A prompt: text, one content block, or a list of them (raw JSON objects are sent as is)."""

_PolicyLike: TypeAlias = (
    PermissionPolicy
    | Callable[[PermissionRequest], PolicyDecision]
    | Callable[[PermissionRequest], Awaitable[PolicyDecision]]
)

_decode_json = msgspec.json.Decoder().decode


# --------------------------------------------------------------------------- errors


class MockClientError(AcpError):
    """Raised when the agent under test did not do what the test waited for.

    The message ends with the agent's captured stderr and the last messages
    of the transcript, so the failure explains itself.
    """


class AgentTimeoutError(MockClientError, TimeoutError):
    """Raised when a wait or a request of the mock client ran out of time."""


class AgentExitedError(MockClientError):
    """Raised when the agent closed the connection (or its process exited) while awaited."""


# --------------------------------------------------------------------------- turns


@dataclass(frozen=True, slots=True, eq=False)
class TurnResult:
    """How one prompt turn ended: the ``idle`` state update that closed it.

    ``updates`` are the session updates of the turn, from the prompt up to
    and including that idle update. ``stop_reason`` is ``None`` when the idle
    update carried none; ``error`` is the error object of stop reason
    ``error``.
    """

    message_id: str
    stop_reason: str | None
    error: schema.Error | None
    updates: list[schema.SessionUpdate]

    @property
    def view(self) -> SessionView:
        """What an editor shows for this turn alone (its updates folded into a fresh view)."""
        view = SessionView()
        for update in self.updates:
            view.apply(update)
        return view

    @property
    def text(self) -> str:
        """The agent's answer text in this turn (thoughts excluded)."""
        return self.view.agent_text


class Turn:
    """A prompt the agent accepted (``session/prompt`` answered with its ``messageId``).

    :meth:`wait` returns the :class:`TurnResult` once the turn's idle state
    update arrived: the first ``idle`` after the ``user_message`` that echoes
    ``message_id``.
    """

    def __init__(self, session: ClientSession, message_id: str, sent_at: int, accepted_at: int):
        self.session: Final = session
        self.message_id: Final = message_id
        self._sent_at = sent_at
        self._accepted_at = accepted_at

    def __repr__(self) -> str:
        return f"<Turn {self.message_id} of session {self.session.id}>"

    @property
    def result(self) -> TurnResult | None:
        """The result once the turn ended, else ``None``."""
        return self.session._turn_result(self)

    @property
    def done(self) -> bool:
        """True once the turn's idle state update arrived."""
        return self.result is not None

    async def wait(self, *, timeout: float | None = None) -> TurnResult:  # noqa: ASYNC109
        """Wait until the turn reached idle; returns how it ended.

        :raises AgentTimeoutError: when it did not end within ``timeout``
            seconds (default: the client's timeout).
        """
        return await self.session.client._wait_until(
            lambda: self.session._turn_result(self),
            timeout,
            f"the idle state_update ending turn {self.message_id}",
        )


# --------------------------------------------------------------------------- sessions


def _blocks(content: PromptInput) -> list[object]:
    if isinstance(content, str):
        return [schema.TextContent(text=content)]
    if isinstance(content, Mapping) or not isinstance(content, Sequence):
        return [content]
    return [schema.TextContent(text=item) if isinstance(item, str) else item for item in content]


class ClientSession:
    """One session as the mock client sees it: its updates, its view and its requests.

    ``updates`` holds every decoded ``session/update`` of the session in
    arrival order (replays included); ``view`` is what an editor displays,
    rebuilt from them. Updates the schema rejects are not in ``updates``: the
    conformance checker reports them and the transcript keeps them.
    """

    def __init__(self, client: MockClient, session_id: str, cwd: str | None) -> None:
        self.client: Final = client
        self.id: Final = session_id
        self.cwd = cwd
        self.view = SessionView(session_id)
        self.updates: list[schema.SessionUpdate] = []
        self.replayed: list[schema.SessionUpdate] = []
        self.closed = False
        self._user_messages: dict[str, int] = {}
        self._idles: list[int] = []

    def __repr__(self) -> str:
        return f"<ClientSession {self.id} cwd={self.cwd!r} state={self.view.state!r}>"

    def _receive(self, update: schema.SessionUpdate) -> None:
        index = len(self.updates)
        self.updates.append(update)
        self.view.apply(update)
        if isinstance(update, schema.UserMessage | schema.UserMessageChunk):
            self._user_messages.setdefault(update.message_id, index)
        elif isinstance(update, schema.IdleStateUpdate):
            self._idles.append(index)

    def _turn_result(self, turn: Turn) -> TurnResult | None:
        start = self._user_messages.get(turn.message_id)
        if start is None:
            # The agent never echoed the prompt (the checker reports that); the
            # next idle after acceptance is the best guess at the turn's end.
            start = turn._accepted_at - 1
        position = bisect.bisect_right(self._idles, start)
        if position == len(self._idles):
            return None
        end = self._idles[position]
        # Updates since the prompt was sent, minus those of an earlier turn.
        begin = turn._sent_at
        earlier = bisect.bisect_left(self._idles, begin)
        if earlier < position:
            begin = max(begin, self._idles[position - 1] + 1)
        idle = self.updates[end]
        assert isinstance(idle, schema.IdleStateUpdate)
        stop_reason = idle.stop_reason if isinstance(idle.stop_reason, str) else None
        error = idle.error if isinstance(idle.error, schema.Error) else None
        return TurnResult(turn.message_id, stop_reason, error, self.updates[begin : end + 1])

    # ---------------------------------------------------------------- prompts

    async def start_prompt(self, content: PromptInput, *, timeout: float | None = None) -> Turn:  # noqa: ASYNC109
        """Send ``session/prompt`` and return as soon as the agent accepted it.

        Use it to act while the turn runs (cancel it, answer something);
        :meth:`Turn.wait` then gives the result.
        """
        params = {"sessionId": self.id, "prompt": _blocks(content)}
        sent_at = len(self.updates)
        client = self.client
        probe = client._probe(self)
        response = await client._request(
            "session/prompt",
            params,
            _decoder(schema.PromptResponse),
            timeout=timeout,
            on_sent=probe,
        )
        accepted_at = probe.position if probe.position is not None else len(self.updates)
        return Turn(self, response.message_id, sent_at, accepted_at)

    async def prompt(self, content: PromptInput, *, timeout: float | None = None) -> TurnResult:  # noqa: ASYNC109
        """Send a prompt and wait until its turn reached idle; returns how it ended.

        ``timeout`` bounds the whole turn (default: the client's timeout).
        """
        deadline = self.client._deadline(timeout)
        turn = await self.start_prompt(content, timeout=timeout)
        return await turn.wait(timeout=max(deadline - time.monotonic(), 0.0))

    async def cancel(self) -> None:
        """Send ``session/cancel`` (a notification; the turn then ends ``cancelled``)."""
        await self.client._notify(
            "session/cancel", schema.CancelSessionNotification(session_id=self.id)
        )

    async def close(self, *, timeout: float | None = None) -> None:  # noqa: ASYNC109
        """Send ``session/close``: the agent cancels the work, then frees the session."""
        await self.client._request(
            "session/close",
            schema.CloseSessionRequest(session_id=self.id),
            _decoder(schema.CloseSessionResponse),
            timeout=timeout,
        )
        self.closed = True

    async def delete(self, *, timeout: float | None = None) -> None:  # noqa: ASYNC109
        """Send ``session/delete`` (only for agents that advertise it)."""
        await self.client._request(
            "session/delete",
            schema.DeleteSessionRequest(session_id=self.id),
            _decoder(schema.DeleteSessionResponse),
            timeout=timeout,
        )
        self.closed = True

    async def resume(
        self,
        *,
        replay: bool = True,
        additional_directories: Sequence[str] | None = None,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> list[schema.SessionUpdate]:
        """Send ``session/resume``; with ``replay`` ask for the history from the start.

        Returns the updates the agent sent before its response: the replayed
        history (and any state snapshot the agent sends on resume), also kept
        in ``replayed``. With ``replay`` the view is rebuilt from them alone,
        as an editor that reopens the session would.
        """
        if self.cwd is None:
            raise ValueError("the session's cwd is unknown; use MockClient.resume_session")
        params = schema.ResumeSessionRequest(
            session_id=self.id,
            cwd=self.cwd,
            additional_directories=(
                list(additional_directories)
                if additional_directories is not None
                else msgspec.UNSET
            ),
            replay_from=schema.ReplayFromStart() if replay else msgspec.UNSET,
        )
        start = len(self.updates)
        previous_view = self.view
        if replay:
            self.view = SessionView(self.id)
        probe = self.client._probe(self)
        try:
            await self.client._request(
                "session/resume",
                params,
                _decoder(schema.ResumeSessionResponse),
                timeout=timeout,
                on_sent=probe,
            )
        except BaseException:
            self.view = previous_view
            raise
        end = probe.position if probe.position is not None else len(self.updates)
        self.replayed = self.updates[start:end]
        self.closed = False
        return list(self.replayed)

    async def cancel_tool_call(self, tool_call_id: str, *, timeout: float | None = None) -> None:  # noqa: ASYNC109
        """Send ``tool_call/cancel`` for a tool call that advertises cancellation."""
        await self.client._request(
            "tool_call/cancel",
            schema.CancelToolCallRequest(session_id=self.id, tool_call_id=tool_call_id),
            _decoder(schema.CancelToolCallResponse),
            timeout=timeout,
        )

    async def cancel_terminal(self, terminal_id: str, *, timeout: float | None = None) -> None:  # noqa: ASYNC109
        """Send ``terminal/cancel`` for a terminal that advertises cancellation."""
        await self.client._request(
            "terminal/cancel",
            schema.CancelTerminalRequest(session_id=self.id, terminal_id=terminal_id),
            _decoder(schema.CancelTerminalResponse),
            timeout=timeout,
        )

    # ---------------------------------------------------------------- waiting

    async def wait_for(
        self,
        predicate: Callable[[], T],
        *,
        timeout: float | None = None,  # noqa: ASYNC109
        what: str | None = None,
    ) -> T:
        """Wait until ``predicate()`` is truthy (re-checked after every change); return it."""
        return await self.client.wait_for(predicate, timeout=timeout, what=what)

    async def wait_for_tool_call(
        self,
        tool_call_id: str | None = None,
        *,
        status: str | Sequence[str] | None = None,
        title: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> ToolCallView:
        """Wait for a tool call (this id, or the first that matches) with that status/title."""
        statuses = (status,) if isinstance(status, str) else status

        def find() -> ToolCallView | None:
            for call in self.view.tool_calls.values():
                if (
                    (tool_call_id is None or call.id == tool_call_id)
                    and (statuses is None or call.status in statuses)
                    and (title is None or call.title == title)
                ):
                    return call
            return None

        wanted = ", ".join(
            f"{name}={value!r}"
            for name, value in (("id", tool_call_id), ("status", status), ("title", title))
            if value is not None
        )
        return await self.client._wait_until(find, timeout, f"a tool call ({wanted or 'any'})")

    async def wait_for_terminal_output(
        self,
        terminal_id: str | None = None,
        *,
        contains: bytes | str = b"",
        exited: bool | None = None,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> TerminalView:
        """Wait until a terminal's output contains ``contains`` (and it exited, if asked)."""
        needle = contains.encode() if isinstance(contains, str) else contains

        def find() -> TerminalView | None:
            for terminal in self.view.terminals.values():
                if (
                    (terminal_id is None or terminal.id == terminal_id)
                    and needle in terminal.output
                    and (exited is None or terminal.exited == exited)
                ):
                    return terminal
            return None

        return await self.client._wait_until(
            find,
            timeout,
            f"terminal {terminal_id or '(any)'} output containing {needle!r}"
            + ("" if exited is None else f" with exited={exited}"),
        )

    async def wait_for_state(self, state: str, *, timeout: float | None = None) -> None:  # noqa: ASYNC109
        """Wait until the session's state is ``state`` (``running``, ``requires_action``, ...)."""
        await self.client._wait_until(
            lambda: self.view.state == state or None, timeout, f"session state {state!r}"
        )

    async def wait_for_permission_request(
        self,
        *,
        pending: bool | None = None,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> PermissionRequest:
        """Like :meth:`MockClient.wait_for_permission_request`, for this session only."""
        return await self.client.wait_for_permission_request(
            session_id=self.id, pending=pending, timeout=timeout
        )


# --------------------------------------------------------------------------- plumbing


def _decoder(type_: type[T]) -> Callable[[msgspec.Raw], T]:
    def decode(raw: msgspec.Raw) -> T:
        return schema.decode(raw, type_)

    return decode


class _Peek(msgspec.Struct):
    """The fields of an incoming line the client correlates (the rest stays raw)."""

    id: object = None
    method: object = None
    params: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


class _CancelParams(msgspec.Struct, rename="camel"):
    request_id: object = None


_decode_peek = msgspec.json.Decoder(_Peek).decode
_decode_cancel = msgspec.json.Decoder(_CancelParams).decode


class _Probe:
    """Notes how many updates a session had when the response to one request arrived.

    Updates that precede a response on the wire were applied before the
    response was read, so this position splits "before" from "after" exactly
    (replayed history, the updates preceding a prompt's acceptance).
    """

    def __init__(self, client: MockClient, session: ClientSession) -> None:
        self.client = client
        self.session = session
        self.position: int | None = None

    def __call__(self, request_id: int) -> None:
        self.client._probes[request_id] = self


class _Deadline:
    """A cancel scope for one wait: its deadline, and cancelled early by a client failure."""

    def __init__(self, client: MockClient, timeout: float | None, what: str) -> None:
        self._client = client
        self._timeout = client.timeout if timeout is None else timeout
        self._what = what
        self._scope = anyio.CancelScope(deadline=anyio.current_time() + self._timeout)

    def __enter__(self) -> None:
        client = self._client
        client._scopes.add(self._scope)
        if client._failure is not None:
            self._scope.cancel()
        self._scope.__enter__()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._client._scopes.discard(self._scope)
        # The return value of __exit__ differs between backends when nothing
        # was raised; cancelled_caught says whether this scope ended the wait.
        self._scope.__exit__(exc_type, exc, tb)
        if not self._scope.cancelled_caught:
            return
        failure = self._client._failure
        if failure is not None:
            # The cancellation that woke us is an implementation detail.
            failure.__suppress_context__ = True
            raise failure
        raise self._client._error(
            AgentTimeoutError,
            f"timed out after {self._timeout:g}s waiting for {self._what}",
        ) from None


class _Handler:
    """The client side of the connection: answers the agent's requests, applies updates."""

    def __init__(self, client: MockClient) -> None:
        self._client = client

    async def on_request(
        self, method: str, params: msgspec.Raw | None, context: RequestContext
    ) -> object:
        if method == "session/request_permission":
            return await self._client._answer_permission(params, context)
        raise RequestError.method_not_found(method)

    async def on_notification(self, method: str, params: msgspec.Raw | None) -> None:
        if method == "session/update" and params is not None:
            self._client._apply_update(params)


# --------------------------------------------------------------------------- client


class MockClient:
    """An ACP client for tests: drives one agent the way an editor would.

    ``agent`` is an :class:`acpio.Agent` (instance or class), served
    in-process over an in-memory stream pair, or a command line (a list of
    arguments, or a string split like a shell would) run as a subprocess
    speaking ACP over stdio, in any language. Use it as an async context
    manager: entering starts the agent and sends ``initialize`` (unless
    ``initialize=False``); leaving always cleans up: the connection is
    closed, a subprocess gets end of input, then SIGTERM, then SIGKILL, and
    its stderr (captured, the last ``stderr_limit`` bytes) is kept.

    ``policy`` answers permission requests (default: reject, the safe
    choice; see :class:`PermissionPolicy`). With ``strict`` (default) the
    first protocol violation found by the conformance checker fails the test;
    otherwise violations are collected in :attr:`violations`. ``timeout`` is
    the default bound of every wait and request, in seconds. ``cwd`` is the
    default working directory of new sessions (default: a temporary directory
    removed on exit). ``env`` and ``process_cwd`` apply to a subprocess;
    ``store`` and ``limits`` to an in-process agent. ``exit_timeout`` is how
    long the agent gets to exit after its input ends, and again after SIGTERM.

    What the test can inspect: :attr:`initialize_response`, :attr:`sessions`
    (:class:`ClientSession` by id, each with its ``view``),
    :attr:`permission_requests`, :attr:`transcript`, :attr:`violations`
    (from :attr:`checker`), :attr:`stderr` and :attr:`returncode`. The client
    advertises no optional capability unless given ``capabilities``; agent
    requests it does not serve (``elicitation/create``, extensions) are
    answered ``-32601``.
    """

    def __init__(
        self,
        agent: Agent | type[Agent] | str | Sequence[str],
        *,
        policy: _PolicyLike | None = None,
        strict: bool = True,
        timeout: float = DEFAULT_TIMEOUT,
        initialize: bool = True,
        protocol_version: int = schema.PROTOCOL_VERSION,
        client_info: schema.Implementation | None = None,
        capabilities: schema.ClientCapabilities | None = None,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        process_cwd: str | os.PathLike[str] | None = None,
        store: SessionStore | None = None,
        limits: AgentLimits | None = None,
        stderr_limit: int = STDERR_LIMIT,
        exit_timeout: float = EXIT_TIMEOUT,
    ) -> None:
        if isinstance(agent, type):
            agent = agent()
        self._agent: Agent | None = None
        self._command: list[str] | None = None
        if isinstance(agent, Agent):
            self._agent = agent
        else:
            command = shlex.split(agent) if isinstance(agent, str) else list(agent)
            if not command or not all(isinstance(arg, str) for arg in command):
                raise TypeError(f"expected an acpio.Agent or a command line, got {agent!r}")
            self._command = command
        self.permission_policy: PermissionPolicy = as_policy(
            policy if policy is not None else PermissionPolicy.reject()
        )
        self.strict = strict
        self.timeout = timeout
        self._initialize = initialize
        self.protocol_version = protocol_version
        self.client_info = client_info or schema.Implementation(
            name="acpio-mock-client", version="0.1.0", title="acpio MockClient"
        )
        self.capabilities = capabilities or schema.ClientCapabilities()
        self._default_cwd = os.fspath(cwd) if cwd is not None else None
        self._env = dict(env) if env is not None else None
        self._process_cwd = os.fspath(process_cwd) if process_cwd is not None else None
        self._store = store
        self._limits = limits
        self._stderr_limit = stderr_limit
        self._exit_timeout = exit_timeout

        self.transcript = Transcript()
        self.checker = ConformanceChecker(strict=False)
        self.permission_requests: list[PermissionRequest] = []
        self.sessions: dict[str, ClientSession] = {}
        self.initialize_response: schema.InitializeResponse | None = None

        self._connection: Connection | None = None
        self._task_group: anyio.abc.TaskGroup | None = None
        self._process: anyio.abc.Process | None = None
        self._stderr = bytearray()
        self._stderr_total = 0
        # Events are made on entry: they belong to the event loop of the test.
        self._stderr_done: anyio.Event | None = None
        self._agent_done: anyio.Event | None = None
        self._failure: BaseException | None = None
        self._scopes: set[anyio.CancelScope] = set()
        self._change: anyio.Event | None = None
        self._probes: dict[int, _Probe] = {}
        self._pending_permissions: dict[int | str, PermissionRequest] = {}
        self._seen_permissions: set[int] = set()
        self._violations_seen = 0
        self._closing = False
        self._agent_gone = False
        self._temp_dir: str | None = None
        self._entered = False
        _register(self)

    def __repr__(self) -> str:
        return f"<MockClient {self.name}>"

    @property
    def name(self) -> str:
        """The agent's class name (in-process) or its command line (subprocess)."""
        if self._agent is not None:
            return type(self._agent).__name__
        assert self._command is not None
        return shlex.join(self._command)

    # ------------------------------------------------------------- lifecycle

    async def __aenter__(self) -> Self:
        if self._entered:
            raise RuntimeError("a MockClient can be entered only once")
        self._entered = True
        self._stderr_done = anyio.Event()
        self._agent_done = anyio.Event()
        group = self._task_group = anyio.create_task_group()
        await group.__aenter__()
        try:
            streams = await self._start_agent(group)
            connection = Connection(
                streams, _Handler(self), encode=schema.encode, on_raw_message=self._observe
            )
            await connection.__aenter__()
            self._connection = connection
            group.start_soon(self._watch_connection, connection)
            if self._initialize:
                await self.initialize()
        except BaseException as exc:
            await self._shutdown()
            self._raise_after_close(exc)
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._shutdown()
        self._raise_after_close(exc)

    def _raise_after_close(self, exc: BaseException | None) -> None:
        failure = self._failure
        if failure is None or failure is exc:
            return
        if exc is None:
            raise failure
        exc.add_note(f"The ACP mock client also recorded this failure: {failure!r}")

    async def _start_agent(self, group: anyio.abc.TaskGroup) -> StreamPair:
        if self._agent is not None:
            client_side, agent_side = memory_stream_pair()
            group.start_soon(self._serve_in_process, self._agent, agent_side)
            return client_side
        assert self._command is not None
        try:
            process = await anyio.open_process(
                self._command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self._process_cwd,
                env=self._env,
                start_new_session=True,
            )
        except OSError as exc:
            raise MockClientError(f"could not start the agent {self.name!r}: {exc}") from exc
        self._process = process
        assert process.stderr is not None
        group.start_soon(self._pump_stderr, process.stderr)
        return process_streams(process)

    async def _serve_in_process(self, agent: Agent, streams: StreamPair) -> None:
        try:
            await serve(agent, streams, store=self._store, limits=self._limits)
        except Exception as exc:
            self._fail(
                self._error(MockClientError, f"the in-process agent crashed: {exc!r}"), cause=exc
            )
        finally:
            assert self._agent_done is not None
            self._agent_done.set()
            self._changed()

    async def _pump_stderr(self, stream: anyio.abc.ByteReceiveStream) -> None:
        try:
            async for chunk in stream:
                self._stderr_total += len(chunk)
                self._stderr += chunk
                if len(self._stderr) > self._stderr_limit:
                    del self._stderr[: len(self._stderr) - self._stderr_limit]
                self._changed()
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
        finally:
            assert self._stderr_done is not None
            self._stderr_done.set()

    async def _watch_connection(self, connection: Connection) -> None:
        await connection.wait_closed()
        if not self._closing:
            self._agent_gone = True
        self._changed()

    async def _shutdown(self) -> None:
        """Close the connection, then stop the agent; never raises, always bounded."""
        self._closing = True
        # Scopes must nest: the connection and the task group are left at the
        # level they were entered; only the waits in between are shielded.
        if self._connection is not None:
            # Closing our side is what tells the agent to exit (end of its stdin).
            await self._connection.__aexit__(None, None, None)
        with anyio.CancelScope(shield=True):
            if self._process is not None:
                await self._stop_process(self._process)
            elif self._agent is not None and self._agent_done is not None:
                with anyio.move_on_after(self._exit_timeout):
                    await self._agent_done.wait()
        if self._task_group is not None:
            self._task_group.cancel_scope.cancel()
            await self._task_group.__aexit__(None, None, None)
            self._task_group = None
        self._changed()
        if self._temp_dir is not None:
            shutil.rmtree(self._temp_dir, ignore_errors=True)

    async def _stop_process(self, process: anyio.abc.Process) -> None:
        with anyio.move_on_after(self._exit_timeout):
            await process.wait()
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
            with anyio.move_on_after(self._exit_timeout):
                await process.wait()
        if process.returncode is None:
            # The agent's own children go too: it was started in its own group.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
        # A grandchild may still hold stderr open; do not wait for it forever.
        if self._stderr_done is not None:
            with anyio.move_on_after(STDERR_GRACE):
                await self._stderr_done.wait()
        with contextlib.suppress(Exception):
            await process.aclose()

    # ------------------------------------------------------------ observation

    def _observe(self, direction: str, line: bytes) -> None:
        """Every line, both ways, before it is sent or handled (see the module docstring)."""
        wire: Direction = CLIENT_TO_AGENT if direction == "out" else AGENT_TO_CLIENT
        entry = self.transcript.record(wire, line)
        try:
            self.checker.observe(wire, entry.data)
        except Exception as exc:
            self._fail(exc)
        violations = self.checker.violations
        if self.strict and len(violations) > self._violations_seen and self._failure is None:
            self._fail(ConformanceError(violations[self._violations_seen]))
        self._violations_seen = len(violations)
        if wire == AGENT_TO_CLIENT:
            self._correlate(entry.data)

    def _correlate(self, data: bytes) -> None:
        try:
            peek = _decode_peek(data)
        except (msgspec.DecodeError, RecursionError):
            return
        if peek.method is None:
            probe = self._probes.pop(peek.id, None) if type(peek.id) is int else None
            if probe is not None:
                probe.position = len(probe.session.updates)
        elif peek.method == "$/cancel_request" and isinstance(peek.params, msgspec.Raw):
            try:
                request_id = _decode_cancel(peek.params).request_id
            except (msgspec.DecodeError, RecursionError):
                return
            if type(request_id) is int or type(request_id) is str:
                record = self._pending_permissions.get(request_id)
                if record is not None:
                    # Seen before the connection cancels the handler, which then
                    # answers "cancelled" instead of -32800.
                    record.cancelled_by_agent = True

    def _apply_update(self, params: msgspec.Raw) -> None:
        try:
            notification = schema.decode(params, schema.UpdateSessionNotification)
        except (msgspec.DecodeError, RecursionError):
            return  # the conformance checker reports it; the transcript keeps it
        self._session(notification.session_id)._receive(notification.update)
        self._changed()

    async def _answer_permission(
        self, params: msgspec.Raw | None, context: RequestContext
    ) -> object:
        try:
            raw = _decode_json(params) if params is not None else {}
        except (msgspec.DecodeError, RecursionError) as exc:
            raise RequestError.invalid_params(str(exc)) from None
        if not isinstance(raw, dict):
            raise RequestError.invalid_params("params must be an object")
        record = PermissionRequest(context.id, raw, time.monotonic())
        self.permission_requests.append(record)
        self._pending_permissions[context.id] = record
        with contextlib.suppress(msgspec.DecodeError):
            typed = schema.decode(params or b"{}", schema.RequestPermissionRequest)
            subject = typed.subject
            if isinstance(subject, schema.ToolCallPermissionSubject):
                # Editors show the subject like a tool_call_update before prompting.
                self._session(typed.session_id).view.apply_tool_call(subject.tool_call)
        self._changed()
        outcome: dict[str, object]
        try:
            try:
                outcome = await self.permission_policy.decide(record)
            except anyio.get_cancelled_exc_class():
                if not record.cancelled_by_agent:
                    raise
                outcome = dict(CANCELLED_OUTCOME)
            except Exception as exc:
                # Never approval: the agent gets "cancelled", the test gets the error.
                failure = (
                    exc
                    if isinstance(exc, PermissionPolicyError)
                    else PermissionPolicyError(
                        f"the permission policy {self.permission_policy!r} raised {exc!r} "
                        f"for {record.describe()}"
                    )
                )
                self._fail(failure, cause=exc if failure is not exc else None)
                outcome = dict(CANCELLED_OUTCOME)
        finally:
            self._pending_permissions.pop(context.id, None)
        record._resolve(outcome, time.monotonic())
        self._changed()
        return {"outcome": outcome}

    # ---------------------------------------------------------------- helpers

    def _session(self, session_id: str, cwd: str | None = None) -> ClientSession:
        session = self.sessions.get(session_id)
        if session is None:
            session = self.sessions[session_id] = ClientSession(self, session_id, cwd)
        elif cwd is not None:
            session.cwd = cwd
        return session

    def _probe(self, session: ClientSession) -> _Probe:
        return _Probe(self, session)

    def _changed(self) -> None:
        change = self._change
        if change is not None:
            self._change = None
            change.set()

    def _fail(self, failure: BaseException, *, cause: BaseException | None = None) -> None:
        if self._failure is not None:
            return
        if cause is not None and failure.__cause__ is None:
            failure.__cause__ = cause
        if not isinstance(failure, MockClientError):
            failure.add_note(self._context())
        self._failure = failure
        for scope in list(self._scopes):
            scope.cancel()
        self._changed()

    def _deadline(self, timeout: float | None) -> float:
        return time.monotonic() + (self.timeout if timeout is None else timeout)

    def _context(self) -> str:
        parts: list[str] = []
        if self._process is not None:
            code = self._process.returncode
            parts.append(
                f"agent process {self._process.pid}: "
                + ("still running" if code is None else f"exited with return code {code}")
            )
        if self._command is not None:
            stderr = self.stderr.decode("utf-8", "backslashreplace")
            if len(stderr) > _CONTEXT_STDERR:
                stderr = "..." + stderr[-_CONTEXT_STDERR:]
            parts.append(
                f"agent stderr ({self._stderr_total} bytes):\n{stderr}"
                if stderr
                else "agent stderr: (empty)"
            )
        parts.append(
            f"last messages ({len(self.transcript)} in the transcript):\n"
            + (self.transcript.format_tail(_CONTEXT_MESSAGES, width=300) or "(none)")
        )
        return "\n\n".join(parts)

    def _error(self, kind: type[MockClientError], message: str) -> MockClientError:
        return kind(f"{message}\n\n{self._context()}")

    def _check_usable(self) -> Connection:
        if self._failure is not None:
            raise self._failure
        if self._connection is None:
            raise RuntimeError("use the MockClient as an async context manager first")
        return self._connection

    async def _exited(self, doing: str) -> AgentExitedError:
        if self._process is not None and self._process.returncode is None:
            # The agent usually exits right after closing its stdout: report its code.
            with anyio.move_on_after(STDERR_GRACE):
                await self._process.wait()
        if self._stderr_done is not None:
            with anyio.move_on_after(STDERR_GRACE):
                await self._stderr_done.wait()
        error = self._error(AgentExitedError, f"the agent closed the connection {doing}")
        assert isinstance(error, AgentExitedError)
        return error

    async def _request(
        self,
        method: str,
        params: object,
        decode: Callable[[msgspec.Raw], T],
        *,
        timeout: float | None,  # noqa: ASYNC109
        on_sent: Callable[[int], None] | None = None,
    ) -> T:
        connection = self._check_usable()
        try:
            with _Deadline(self, timeout, f"the response to {method}"):
                return await connection.request(method, params, decode, on_sent=on_sent)
        except ConnectionClosed:
            if self._failure is not None:
                raise self._failure from None
            raise await self._exited(f"before answering {method}") from None
        except RequestError as exc:
            if self._command is not None:
                exc.add_note(self._context())
            raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def _notify(self, method: str, params: object) -> None:
        connection = self._check_usable()
        try:
            await connection.notify(method, params)
        except ConnectionClosed:
            raise await self._exited(f"before {method} could be sent") from None
        if self._failure is not None:
            raise self._failure

    async def _wait_until(
        self,
        check: Callable[[], T | None],
        timeout: float | None,  # noqa: ASYNC109
        what: str,
    ) -> T:
        self._check_usable()
        with _Deadline(self, timeout, what):
            while True:
                value = check()
                if value is not None and value is not False:
                    return value
                if self._agent_gone:
                    raise await self._exited(f"while the test waited for {what}")
                change = self._change
                if change is None:
                    change = self._change = anyio.Event()
                await change.wait()
        raise AssertionError("unreachable")  # pragma: no cover

    # -------------------------------------------------------------- public API

    @property
    def violations(self) -> list[Violation]:
        """Every protocol violation the conformance checker found, in order."""
        return list(self.checker.violations)

    def conformance_report(self) -> ConformanceReport:
        """Run the end-of-stream rules and return the per-rule report.

        Call it once the turns the test expects to end have ended: it checks
        that every request was answered, every accepted prompt reached idle
        and was echoed. In strict mode the first violation it finds is raised
        as :class:`ConformanceError`.
        """
        report = self.checker.check_report()
        violations = self.checker.violations
        if self.strict and len(violations) > self._violations_seen:
            error = ConformanceError(violations[self._violations_seen])
            self._violations_seen = len(violations)
            self._fail(error)
            raise error
        self._violations_seen = len(violations)
        return report

    @property
    def stderr(self) -> bytes:
        """The last ``stderr_limit`` bytes the agent process wrote to stderr."""
        return bytes(self._stderr)

    @property
    def returncode(self) -> int | None:
        """The agent process's return code once it exited (``None`` in-process or running)."""
        return self._process.returncode if self._process is not None else None

    @property
    def failure(self) -> BaseException | None:
        """The first failure the client recorded (raised from waits and on close)."""
        return self._failure

    @property
    def agent_info(self) -> schema.Implementation:
        """The agent's ``info`` from its initialize response."""
        if self.initialize_response is None:
            raise RuntimeError("the client has not initialized the agent")
        return self.initialize_response.info

    async def initialize(
        self,
        *,
        protocol_version: int | None = None,
        capabilities: schema.ClientCapabilities | None = None,
        client_info: schema.Implementation | None = None,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> schema.InitializeResponse:
        """Send ``initialize`` (done on entry unless ``initialize=False``); returns the answer."""
        params = schema.InitializeRequest(
            protocol_version=(
                self.protocol_version if protocol_version is None else protocol_version
            ),
            info=client_info or self.client_info,
            capabilities=capabilities or self.capabilities,
        )
        response = await self._request(
            "initialize", params, _decoder(schema.InitializeResponse), timeout=timeout
        )
        self.initialize_response = response
        return response

    def _default_session_cwd(self) -> str:
        if self._default_cwd is not None:
            return self._default_cwd
        if self._temp_dir is None:
            self._temp_dir = os.path.realpath(tempfile.mkdtemp(prefix="acpio-test-"))
        return self._temp_dir

    async def new_session(
        self,
        cwd: str | os.PathLike[str] | None = None,
        *,
        additional_directories: Sequence[str] | None = None,
        mcp_servers: Sequence[schema.McpServer] | None = None,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> ClientSession:
        """Send ``session/new``; ``cwd`` defaults to the client's (a temporary directory)."""
        directory = os.fspath(cwd) if cwd is not None else self._default_session_cwd()
        params = schema.NewSessionRequest(
            cwd=directory,
            additional_directories=(
                list(additional_directories)
                if additional_directories is not None
                else msgspec.UNSET
            ),
            mcp_servers=list(mcp_servers) if mcp_servers is not None else [],
        )
        response = await self._request(
            "session/new", params, _decoder(schema.NewSessionResponse), timeout=timeout
        )
        return self._session(response.session_id, directory)

    async def resume_session(
        self,
        session_id: str,
        cwd: str | os.PathLike[str],
        *,
        replay: bool = True,
        additional_directories: Sequence[str] | None = None,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> ClientSession:
        """Resume a session by id (e.g. one created on an earlier connection).

        The replayed updates are in the returned session's ``replayed``.
        """
        session = self._session(session_id, os.fspath(cwd))
        await session.resume(
            replay=replay, additional_directories=additional_directories, timeout=timeout
        )
        return session

    async def list_sessions(
        self,
        *,
        cwd: str | os.PathLike[str] | None = None,
        cursor: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> schema.ListSessionsResponse:
        """Send ``session/list`` (one page; pass ``next_cursor`` back for the next)."""
        params = schema.ListSessionsRequest(
            cwd=os.fspath(cwd) if cwd is not None else msgspec.UNSET,
            cursor=cursor if cursor is not None else msgspec.UNSET,
        )
        return await self._request(
            "session/list", params, _decoder(schema.ListSessionsResponse), timeout=timeout
        )

    async def request(
        self,
        method: str,
        params: object = None,
        *,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> object:
        """Send any request (params: JSON-compatible values or schema objects); return its
        result as parsed JSON. For extension methods and deliberately invalid requests.

        :raises acpio.RequestError: when the agent answered with an error.
        """
        return await self._request(method, params, _decode_json, timeout=timeout)

    async def notify(self, method: str, params: object = None) -> None:
        """Send any notification (see :meth:`request`)."""
        await self._notify(method, params)

    async def wait_for(
        self,
        predicate: Callable[[], T],
        *,
        timeout: float | None = None,  # noqa: ASYNC109
        what: str | None = None,
    ) -> T:
        """Wait until ``predicate()`` is truthy and return its value.

        The predicate is re-checked after every update, permission request
        and answer, so it may read any session's ``view``. Never sleep in a
        test: wait for what you expect.

        :raises AgentTimeoutError: after ``timeout`` seconds (default: the client's).
        :raises AgentExitedError: when the agent went away first.
        """

        def check() -> T | None:
            value = predicate()
            return value if value else None

        name = what or str(getattr(predicate, "__qualname__", "a condition"))
        return await self._wait_until(check, timeout, name)

    async def wait_for_permission_request(
        self,
        *,
        session_id: str | None = None,
        pending: bool | None = None,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> PermissionRequest:
        """Wait for a permission request and return its record.

        Requests are handed out like a queue: each call returns the oldest
        request (of ``session_id``, if given) that no earlier call returned.
        ``pending=True`` only considers requests still waiting for an answer
        (with :meth:`PermissionPolicy.never`), ``pending=False`` only answered
        ones; the others stay queued for later calls.
        """

        def find() -> PermissionRequest | None:
            for record in self.permission_requests:
                if (
                    id(record) not in self._seen_permissions
                    and (session_id is None or record.session_id == session_id)
                    and (pending is None or record.pending == pending)
                ):
                    self._seen_permissions.add(id(record))
                    return record
            return None

        return await self._wait_until(find, timeout, "a session/request_permission")


# --------------------------------------------------------------------------- pytest hook

#: Set by the pytest plugin while a test runs: every client created then is
#: listed so that a failing test's report shows its transcript and stderr.
_registry: list[MockClient] | None = None


def _register(client: MockClient) -> None:
    if _registry is not None:
        _registry.append(client)


def _set_registry(registry: list[MockClient] | None) -> None:
    global _registry  # noqa: PLW0603 - one test runs at a time in a pytest process
    _registry = registry
