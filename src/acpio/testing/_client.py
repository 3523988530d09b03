"""MockClient: drives an ACP agent, in-process or as a subprocess, the way an editor would.

How this works: the client is the other end of an ordinary
:class:`~acpio.rpc.Connection`. Its :class:`ClientHandler` sees every line in
either direction first (transcript, conformance checker, correlation), folds
``session/update`` notifications into each :class:`ClientSession` and answers
permission requests by the :class:`PermissionPolicy`. An :class:`acpio.Agent`
is served in-process over an in-memory stream pair; a command runs as an
:class:`AgentProcess` speaking ACP over stdio.

Nothing in a test sleeps: every wait is "until this predicate holds" with a
deadline (see :class:`Waits`). Anything a test can observe wakes the
waiters, and they re-check. A failure the test did not ask about (a
conformance violation in strict mode, a permission policy that could not
answer, an in-process agent that crashed) ends every wait at once and is
raised from it, and again when the client closes, so the test fails with the
reason instead of timing out. Errors raised by the client carry the agent's
stderr and the last messages of the transcript.
"""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import TracebackType
from typing import Final, Self, TypeAlias, TypeVar

import anyio
import anyio.abc
import msgspec

from .. import schema
from .._agent.agent import Agent
from .._agent.serve import serve
from .._json import as_str_list, decode_json, get_field
from .._limits import AgentLimits
from .._rpc.connection import Connection
from .._rpc.transport import StreamPair, memory_stream_pair
from .._store.history import SessionStore
from ._agent_process import EXIT_TIMEOUT, STDERR_LIMIT, AgentProcess
from ._client_handler import ClientHandler
from ._client_link import ClientLink
from ._client_session import ClientSession, ClientSessions, apply_v1_setup, decoder
from ._conformance import ConformanceChecker, ConformanceReport, Violation
from ._elicitation_policy import ElicitationPolicy, ElicitationRequest
from ._policy import (
    PermissionPolicy,
    PermissionRequest,
    PolicyDecision,
    as_policy,
)
from ._profiles import ClientProfile, profile_named
from ._remote_client import Remote, RemoteLink
from ._rules import ConformanceError
from ._transcript import Transcript
from ._v1_client import V1Client
from ._waits import MockClientError

__all__ = ("MockClient",)

T = TypeVar("T")

DEFAULT_TIMEOUT: Final = 10.0

_PolicyLike: TypeAlias = (
    PermissionPolicy
    | Callable[[PermissionRequest], PolicyDecision]
    | Callable[[PermissionRequest], Awaitable[PolicyDecision]]
)

_decode_json = decode_json


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
    choice; see :class:`PermissionPolicy`); ``elicitation`` answers
    ``elicitation/create`` (see :class:`ElicitationPolicy`; given without
    ``capabilities``, the client advertises both elicitation modes). With ``strict`` (default) the
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
    requests it does not serve (``elicitation/create`` without an
    elicitation policy, extensions) are answered ``-32601``.

    ``protocol_version=1`` speaks ACP v1 (the version today's editors
    speak) and rebuilds the same views: the v1 shapes are translated at one
    place (``acpio.testing._v1_client``), a turn ends with the answer to its
    ``session/prompt``, and every message is checked against the official v1
    schema and the v1 rules. On v1 only, ``client_terminal=True`` advertises
    ``terminal`` and runs the agent's ``terminal/create`` commands for real,
    and ``client_fs=True`` advertises ``fs.readTextFile``/``fs.writeTextFile``
    served from the real file system, reads seeing ``buffers`` (unsaved
    editor buffers by absolute path) first.

    ``agent`` may also be a :class:`Remote` endpoint (``Remote(url,
    transport="http" | "websocket", token=...)``): the client then speaks to
    a remote agent (``acpio serve``, :class:`~acpio.remote.RemoteApp`) over
    Streamable HTTP or WebSocket with the same API, and :meth:`drop_stream`
    cuts its streams and resumes them from their cursors.

    ``profile`` (a :class:`ClientProfile` or a name in :data:`PROFILES`: ``acpx``,
    ``python-sdk``, ``zed``, ``jetbrains``) plays that editor: v1, its ``clientInfo``
    and capabilities; :meth:`shown` then lists what that editor would display.
    """

    def __init__(
        self,
        agent: Agent | type[Agent] | Remote | str | Sequence[str],
        *,
        policy: _PolicyLike | None = None,
        elicitation: ElicitationPolicy | None = None,
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
        client_terminal: bool = False,
        client_fs: bool = False,
        buffers: Mapping[str, str] | None = None,
        profile: ClientProfile | str | None = None,
    ) -> None:
        self.profile: ClientProfile | None = profile_named(profile) if profile is not None else None
        """The editor this client plays (:class:`ClientProfile`), or ``None``."""
        if self.profile is not None:
            protocol_version = 1
            client_info = client_info or self.profile.client_info
            client_terminal = self.profile.terminal
            client_fs = self.profile.fs
        if isinstance(agent, type):
            agent = agent()
        self._agent: Agent | None = None
        self._process: AgentProcess | None = None
        self._remote: RemoteLink | None = None
        if isinstance(agent, Agent):
            self._agent = agent
        elif isinstance(agent, Remote):
            self._remote = RemoteLink(agent)
        else:
            command = as_str_list(shlex.split(agent) if isinstance(agent, str) else list(agent))
            if not command:
                raise TypeError(f"expected an acpio.Agent or a command line, got {agent!r}")
            self._process = AgentProcess(
                command,
                cwd=os.fspath(process_cwd) if process_cwd is not None else None,
                env=env,
                stderr_limit=stderr_limit,
                exit_timeout=exit_timeout,
            )
        self.permission_policy: PermissionPolicy = as_policy(
            policy if policy is not None else PermissionPolicy.reject()
        )
        self.strict = strict
        self._initialize = initialize
        self.protocol_version = protocol_version
        self.client_info: schema.Implementation = client_info or schema.Implementation(
            name="acpio-mock-client", version="0.1.0", title="acpio MockClient"
        )
        self.elicitation_policy: ElicitationPolicy | None = elicitation
        if capabilities is None and elicitation is not None:
            # An elicitation policy means the client can show elicitations: say so.
            capabilities = schema.ClientCapabilities(
                elicitation=schema.ElicitationCapabilities(
                    form=schema.ElicitationFormCapabilities(),
                    url=schema.ElicitationUrlCapabilities(),
                )
            )
        self.capabilities: schema.ClientCapabilities = capabilities or schema.ClientCapabilities()
        self._default_cwd = os.fspath(cwd) if cwd is not None else None
        self._store = store
        self._limits = limits
        self._exit_timeout = exit_timeout

        self.transcript: Transcript = Transcript()
        self.checker: ConformanceChecker = ConformanceChecker(
            strict=False, protocol_version=protocol_version
        )
        self._link = ClientLink(timeout, self.transcript, self._process)
        self._sessions = ClientSessions(self, self._link)
        self._handler = ClientHandler(self, self._sessions)
        self.v1: V1Client | None = (
            V1Client(
                self._sessions,
                self._handler,
                terminal=client_terminal,
                read_text_file=client_fs,
                write_text_file=client_fs,
                buffers=buffers,
            )
            if protocol_version == 1
            else None
        )
        """The v1 side of the client (``None`` on v2): its terminals, files written, buffers."""
        self._sessions.v1 = self.v1
        if self.v1 is not None and self.profile is not None:
            self.v1.extra_capabilities = dict(self.profile.extra_capabilities)
        self.permission_requests: list[PermissionRequest] = []
        self.elicitation_requests: list[ElicitationRequest] = []
        self.sessions: dict[str, ClientSession] = self._sessions.by_id
        self.initialize_response: schema.InitializeResponse | None = None

        self._seen_permissions: set[int] = set()
        self._seen_elicitations: set[int] = set()
        self._closing = False
        self._temp_dir: str | None = None
        self._entered = False
        _register(self)

    def __repr__(self) -> str:
        return f"<MockClient {self.name}>"

    def shown(self, profile: ClientProfile | str | None = None) -> list[str]:
        """The lines ``profile`` (default: the client's own) shows for everything on the
        wire so far; see :class:`ClientProfile`. Without any profile it raises ``ValueError``."""
        chosen = profile if profile is not None else self.profile
        if chosen is None:
            raise ValueError("no client profile: pass profile= here or to MockClient")
        return profile_named(chosen).render(self.transcript)

    @property
    def timeout(self) -> float:
        """The default bound of every wait and request, in seconds."""
        return self._link.timeout

    @timeout.setter
    def timeout(self, timeout: float) -> None:
        self._link.timeout = timeout

    @property
    def name(self) -> str:
        """The agent's class name (in-process) or its command line (subprocess)."""
        if self._agent is not None:
            return type(self._agent).__name__
        if self._remote is not None:
            return f"{self._remote.remote.url} ({self._remote.remote.transport})"
        assert self._process is not None
        return shlex.join(self._process.command)

    # ------------------------------------------------------------- lifecycle

    async def __aenter__(self) -> Self:
        if self._entered:
            raise RuntimeError("a MockClient can be entered only once")
        self._entered = True
        self._link.agent_done = anyio.Event()
        group = self._link.task_group = anyio.create_task_group()
        await group.__aenter__()
        try:
            streams = await self._start_agent(group)
            connection = Connection(
                streams,
                self._handler,
                encode=schema.encode,
                on_raw_message=self._handler.observe,
            )
            await connection.__aenter__()
            self._link.connection = connection
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
        failure = self._link.waits.failure
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
        if self._remote is not None:
            try:
                return await self._remote.start(group)
            except OSError as exc:
                raise MockClientError(f"could not connect to {self.name}: {exc}") from exc
        assert self._process is not None
        try:
            return await self._process.start(group, self._link.changed)
        except OSError as exc:
            raise MockClientError(f"could not start the agent {self.name!r}: {exc}") from exc

    async def _serve_in_process(self, agent: Agent, streams: StreamPair) -> None:
        try:
            await serve(agent, streams, store=self._store, limits=self._limits)
        except Exception as exc:
            self._link.fail(
                self._link.error(MockClientError, f"the in-process agent crashed: {exc!r}"),
                cause=exc,
            )
        finally:
            assert self._link.agent_done is not None
            self._link.agent_done.set()
            self._link.changed()

    async def _watch_connection(self, connection: Connection) -> None:
        await connection.wait_closed()
        if not self._closing:
            self._link.agent_gone = True
        self._link.changed()

    async def _shutdown(self) -> None:
        """Close the connection, then stop the agent; never raises, always bounded."""
        self._closing = True
        # Scopes must nest: the connection and the task group are left at the
        # level they were entered; only the waits in between are shielded.
        link = self._link
        if link.connection is not None:
            # Closing our side is what tells the agent to exit (end of its stdin).
            await link.connection.__aexit__(None, None, None)
        with anyio.CancelScope(shield=True):
            if self._process is not None:
                await self._process.stop()
            elif self._remote is not None:
                with anyio.move_on_after(self._exit_timeout):
                    await self._remote.aclose()
            elif self._agent is not None and link.agent_done is not None:
                with anyio.move_on_after(self._exit_timeout):
                    await link.agent_done.wait()
        if link.task_group is not None:
            link.task_group.cancel_scope.cancel()
            await link.task_group.__aexit__(None, None, None)
            link.task_group = None
        link.changed()
        if self._temp_dir is not None:
            shutil.rmtree(self._temp_dir, ignore_errors=True)

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
        violation = self._handler.unseen_violation()
        if self.strict and violation is not None:
            error = ConformanceError(violation)
            self._link.fail(error)
            raise error
        return report

    @property
    def stderr(self) -> bytes:
        """The last ``stderr_limit`` bytes the agent process wrote to stderr."""
        return self._process.stderr if self._process is not None else b""

    @property
    def pid(self) -> int | None:
        """The agent process's id (``None`` in-process or before it started)."""
        return self._process.pid if self._process is not None else None

    @property
    def returncode(self) -> int | None:
        """The agent process's return code once it exited (``None`` in-process or running)."""
        return self._process.returncode if self._process is not None else None

    @property
    def failure(self) -> BaseException | None:
        """The first failure the client recorded (raised from waits and on close)."""
        return self._link.waits.failure

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
        timeout: float | None = None,
    ) -> schema.InitializeResponse:
        """Send ``initialize`` (done on entry unless ``initialize=False``); returns the answer.

        On v1 the request has v1's shape (``clientInfo``, ``clientCapabilities``) and the
        answer is recorded in the kit's form (the raw v1 result is ``v1.initialize_result``).
        """
        if self.v1 is not None:
            version = self.protocol_version if protocol_version is None else protocol_version
            result = await self._link.request(
                "initialize",
                self.v1.initialize_params(version, client_info or self.client_info),
                _decode_json,
                timeout=timeout,
            )
            self.initialize_response = self.v1.initialize_response(result)
            return self.initialize_response
        params = schema.InitializeRequest(
            protocol_version=(
                self.protocol_version if protocol_version is None else protocol_version
            ),
            info=client_info or self.client_info,
            capabilities=capabilities or self.capabilities,
        )
        response = await self._link.request(
            "initialize", params, decoder(schema.InitializeResponse), timeout=timeout
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
        timeout: float | None = None,
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
        if self.v1 is not None:
            result = await self._link.request("session/new", params, _decode_json, timeout=timeout)
            session_id = get_field(result, "sessionId")
            if not isinstance(session_id, str):
                raise self._link.error(MockClientError, f"session/new answered {result!r}")
            session = self._sessions.get(session_id, directory)
            apply_v1_setup(session, result)
            return session
        response = await self._link.request(
            "session/new", params, decoder(schema.NewSessionResponse), timeout=timeout
        )
        session = self._sessions.get(response.session_id, directory)
        # Updates held until the answer may have been applied already: they are newer.
        session.view.apply_setup(
            response.config_options, response.available_commands, later=session.updates
        )
        return session

    async def set_config_option(
        self, session_id: str, config_id: str, value: str | bool, *, timeout: float | None = None
    ) -> list[schema.SessionConfigOption]:
        """Send ``session/set_config_option`` (``type: "boolean"`` for a bool, else ``"id"``,
        on v1 no ``type``, as v1 clients send a value id);
        returns the full new state, also applied to the session's view.

        :raises acpio.RequestError: when the agent refused (``-32602`` for an
            unknown option or value).
        """
        return await self._sessions.get(session_id).set_config_option(
            config_id, value, timeout=timeout
        )

    async def resume_session(
        self,
        session_id: str,
        cwd: str | os.PathLike[str],
        *,
        replay: bool = True,
        additional_directories: Sequence[str] | None = None,
        timeout: float | None = None,
    ) -> ClientSession:
        """Resume a session by id (e.g. one created on an earlier connection).

        The replayed updates are in the returned session's ``replayed``. On v1, ``replay``
        sends ``session/load`` (the agent replays the history before its answer, which is how
        editors reopen a thread) and no replay sends ``session/resume``.
        """
        session = self._sessions.get(session_id, os.fspath(cwd))
        await session.resume(
            replay=replay, additional_directories=additional_directories, timeout=timeout
        )
        return session

    async def load_session(
        self,
        session_id: str,
        cwd: str | os.PathLike[str],
        *,
        timeout: float | None = None,
    ) -> ClientSession:
        """Reopen a session with its whole history replayed: ``session/load`` on v1,
        ``session/resume`` with replay from the start on v2 (same view either way)."""
        return await self.resume_session(session_id, cwd, replay=True, timeout=timeout)

    @property
    def remote(self) -> RemoteLink | None:
        """The link to a :class:`Remote` agent (cursors, connection id, resumes), or ``None``."""
        return self._remote

    async def drop_stream(self, *, cursors: Mapping[str, str] | None = None) -> None:
        """Cut the remote agent's streams without a goodbye, then resume them from their cursors.

        What a client whose network changed does: the HTTP streams' TCP
        connections (or the WebSocket) are dropped, and each stream resumes from
        the cursor of the last message this client took (``Last-Event-ID``, or
        ``stream/resume``); the server replays what followed, so every message
        arrives once. ``cursors`` resumes the streams it names (``""``: the
        connection's; a session id: its stream over HTTP) from another cursor
        (an old one, to see a refusal). Returns once every stream resumed.

        :raises ResumeFailed: when the server refused a cursor (409,
            ``stream/resume_failed``); this client is then unusable, and a new
            client reattaches the session with :meth:`resume_session`.
        :raises RuntimeError: for a client whose agent is not a :class:`Remote`.
        """
        if self._remote is None:
            raise RuntimeError("drop_stream needs a MockClient on a Remote endpoint")
        self._link.check_usable()
        await self._remote.drop(cursors)
        # What the resume brought (the replay, the sessions' states) is seen before any
        # message the test sends next.
        delivered = self._remote.delivered
        await self._link.wait_until(
            lambda: self._handler.received >= delivered, None, "the messages of the resume"
        )

    async def list_sessions(
        self,
        *,
        cwd: str | os.PathLike[str] | None = None,
        cursor: str | None = None,
        timeout: float | None = None,
    ) -> schema.ListSessionsResponse:
        """Send ``session/list`` (one page; pass ``next_cursor`` back for the next)."""
        params = schema.ListSessionsRequest(
            cwd=os.fspath(cwd) if cwd is not None else msgspec.UNSET,
            cursor=cursor if cursor is not None else msgspec.UNSET,
        )
        return await self._link.request(
            "session/list", params, decoder(schema.ListSessionsResponse), timeout=timeout
        )

    async def request(
        self,
        method: str,
        params: object = None,
        *,
        timeout: float | None = None,
    ) -> object:
        """Send any request (params: JSON-compatible values or schema objects); return its
        result as parsed JSON. For extension methods and deliberately invalid requests.

        :raises acpio.RequestError: when the agent answered with an error.
        """
        return await self._link.request(method, params, _decode_json, timeout=timeout)

    async def notify(self, method: str, params: object = None) -> None:
        """Send any notification (see :meth:`request`)."""
        await self._link.notify(method, params)

    async def wait_for(
        self,
        predicate: Callable[[], T | None],
        *,
        timeout: float | None = None,
        what: str | None = None,
    ) -> T:
        """Wait until ``predicate()`` is truthy and return its value.

        The predicate is re-checked after every update, permission request
        and answer, so it may read any session's ``view``. Never sleep in a
        test: wait for what you expect. A predicate returning ``X | None``
        gives an ``X`` (the wait never returns ``None``), so strictly typed
        tests need no assert.

        :raises AgentTimeoutError: after ``timeout`` seconds (default: the client's).
        :raises AgentExitedError: when the agent went away first.
        """

        def check() -> T | None:
            value = predicate()
            return value if value else None

        name = what or str(getattr(predicate, "__qualname__", "a condition"))
        return await self._link.wait_until(check, timeout, name)

    async def wait_for_permission_request(
        self,
        *,
        session_id: str | None = None,
        pending: bool | None = None,
        timeout: float | None = None,
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

        return await self._link.wait_until(find, timeout, "a session/request_permission")

    async def wait_for_elicitation_request(
        self,
        *,
        session_id: str | None = None,
        pending: bool | None = None,
        timeout: float | None = None,
    ) -> ElicitationRequest:
        """Wait for an ``elicitation/create`` and return its record (handed out like a
        queue, as :meth:`wait_for_permission_request` does)."""

        def find() -> ElicitationRequest | None:
            for record in self.elicitation_requests:
                if (
                    id(record) not in self._seen_elicitations
                    and (session_id is None or record.session_id == session_id)
                    and (pending is None or record.pending == pending)
                ):
                    self._seen_elicitations.add(id(record))
                    return record
            return None

        return await self._link.wait_until(find, timeout, "an elicitation/create")


# --------------------------------------------------------------------------- pytest hook

#: Set by the pytest plugin while a test runs: every client created then is
#: listed so that a failing test's report shows its transcript and stderr.
_registry: list[MockClient] | None = None


def _register(client: MockClient) -> None:
    if _registry is not None:
        _registry.append(client)


def set_registry(registry: list[MockClient] | None) -> None:
    global _registry  # noqa: PLW0603 - one test runs at a time in a pytest process
    _registry = registry
