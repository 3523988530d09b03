"""Shared harness of the reliability tests: a raw wire client, agents, process checks.

The tests here talk to agents byte for byte, not through the testing kit, so
that they can send what no well-behaved client would (broken JSON, wrong
types, stray responses) and see exactly what comes back. :class:`WireClient`
writes lines and reads the agent's output, checking that every line it ever
reads is a JSON-RPC 2.0 message (the agent never writes anything else).

Agents are served in-process over ``memory_stream_pair()`` (:func:`served`)
or run as subprocesses (:func:`spawned`); ``reliability_agents.py`` in this folder holds
the test agents, importable and runnable as scripts.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import msgspec

import acpio
from acpio._rpc.transport import LineReader, _FdReceiveStream
from acpio.rpc import StreamPair

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
EXAMPLES = REPO / "examples"
AGENTS_SCRIPT = HERE / "reliability_agents.py"

# Decoded JSON from the wire; tests index into it freely.
Json = Any

#: How long any single wait of these tests may take before it fails.
WAIT = 10.0

INIT_PARAMS: dict[str, object] = {
    "protocolVersion": 2,
    "info": {"name": "reliability-tests", "version": "1.0"},
    "capabilities": {},
}


class ProtocolViolation(AssertionError):
    """The agent wrote a line that is not a JSON-RPC 2.0 message."""


def check_protocol_line(line: bytes) -> Json:
    """Decode one output line and check it is a JSON-RPC 2.0 message (or batch of them)."""
    try:
        message = msgspec.json.decode(line)
    except msgspec.DecodeError as exc:
        raise ProtocolViolation(f"not JSON: {line[:200]!r}") from exc
    items = message if isinstance(message, list) else [message]
    if isinstance(message, list) and not message:
        raise ProtocolViolation("empty batch written")
    for item in items:
        if not isinstance(item, dict) or item.get("jsonrpc") != "2.0":
            raise ProtocolViolation(f"not a JSON-RPC 2.0 object: {line[:200]!r}")
        if "method" in item:
            if not isinstance(item["method"], str):
                raise ProtocolViolation(f"method is not a string: {line[:200]!r}")
            if "params" in item and not isinstance(item["params"], dict | list):
                raise ProtocolViolation(f"params neither object nor array: {line[:200]!r}")
        elif "id" in item:
            if ("result" in item) == ("error" in item):
                raise ProtocolViolation(f"response needs exactly one of result/error: {line!r}")
            if "error" in item:
                error = item["error"]
                if not (
                    isinstance(error, dict)
                    and type(error.get("code")) is int
                    and isinstance(error.get("message"), str)
                ):
                    raise ProtocolViolation(f"malformed error object: {line[:200]!r}")
        else:
            raise ProtocolViolation(f"neither a request, notification nor response: {line!r}")
        if isinstance(message, list) and "method" in item:
            raise ProtocolViolation("the agent sent a batch of requests")
    return message


def responses_in(message: Json) -> list[Json]:
    """The response objects in a decoded message (a batch is flattened)."""
    items = message if isinstance(message, list) else [message]
    return [item for item in items if "method" not in item]


class WireClient:
    """The client end of the wire: writes exact bytes, reads checked JSON messages.

    Every message read is appended to :attr:`received`; :attr:`transcript`
    holds every line in both directions, in the order the client wrote or
    read them. Requests sent with :meth:`send_request` get the ids
    ``"c1"``, ``"c2"``, ... unless given (strings, so that they never collide
    with the integer ids of the agent's own requests or of fuzzed input).
    """

    def __init__(self, streams: StreamPair, *, max_line: int = 256 * 1024 * 1024) -> None:
        self.streams = streams
        self._reader = LineReader(streams.receive, max_line)
        self._lines: list[bytes] = []
        self.received: list[Json] = []
        self.raw_lines: list[bytes] = []
        self.transcript: list[tuple[str, bytes]] = []
        self.own_ids: set[str] = set()  # the ids this client chose itself
        self._claimed: set[int] = set()  # indexes of responses already returned
        self._next_id = 0
        self.eof = False
        self.input_closed = False

    # ---------------------------------------------------------------- sending

    async def send(self, message: Json | bytes) -> None:
        data = message if isinstance(message, bytes) else msgspec.json.encode(message) + b"\n"
        self.transcript.extend(("client->agent", line) for line in data.split(b"\n") if line)
        await self.streams.send.send(data)

    def next_id(self) -> str:
        self._next_id += 1
        request_id = f"c{self._next_id}"
        self.own_ids.add(request_id)
        return request_id

    async def send_request(self, method: str, params: Json = None, request_id: Json = None) -> Json:
        """Send a request; returns its id."""
        if request_id is None:
            request_id = self.next_id()
        message: dict[str, object] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        return request_id

    async def notify(self, method: str, params: Json = None) -> None:
        message: dict[str, object] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)

    async def respond(self, request_id: Json, result: Json) -> None:
        await self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    async def close_input(self) -> None:
        """Close the agent's input (end of stdin)."""
        if not self.input_closed:
            self.input_closed = True
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                await self.streams.send.aclose()

    # ---------------------------------------------------------------- reading

    async def receive(self) -> Json:
        """The next message from the agent; raises EOFError at the end of its output."""
        while not self._lines:
            if self.eof:
                raise EOFError("the agent closed its output")
            lines = await self._reader.receive_lines()
            if not lines:
                self.eof = True
                raise EOFError("the agent closed its output")
            for line in lines:
                assert isinstance(line, bytes), "the agent wrote an oversized line"
                self._lines.append(line)
        line = self._lines.pop(0)
        self.raw_lines.append(line)
        self.transcript.append(("agent->client", line))
        message = check_protocol_line(line)
        self.received.append(message)
        return message

    async def receive_until(self, predicate: Callable[[Json], bool]) -> Json:
        """Read messages until one satisfies ``predicate``; return it."""
        while True:
            message = await self.receive()
            if predicate(message):
                return message

    async def claim(self, predicate: Callable[[Json], bool]) -> Json:
        """The first message satisfying ``predicate`` not claimed before, read earlier or now.

        Waiting for several things in any order never loses one that arrived
        while waiting for another.
        """
        for index, message in enumerate(self.received):
            if index not in self._claimed and predicate(message):
                self._claimed.add(index)
                return message
        message = await self.receive_until(predicate)
        self._claimed.add(len(self.received) - 1)
        return message

    async def response(self, request_id: Json) -> Json:
        """The response to ``request_id`` (result or error object), read before or now."""
        return await self.claim(
            lambda message: (
                isinstance(message, dict)
                and "method" not in message
                and message.get("id") == request_id
                and type(message.get("id")) is type(request_id)
            )
        )

    async def call(self, method: str, params: Json = None) -> Json:
        """Send a request and return its result; raise ``acpio.RequestError`` for an error."""
        request_id = await self.send_request(method, params)
        answer = await self.response(request_id)
        if "error" in answer:
            error = answer["error"]
            raise acpio.RequestError(error["code"], error["message"], error.get("data"))
        return answer["result"]

    async def read_to_eof(self) -> list[Json]:
        """Read everything up to the end of the agent's output."""
        start = len(self.received)
        with contextlib.suppress(EOFError):
            while True:
                await self.receive()
        return self.received[start:]

    # ---------------------------------------------------------------- helpers

    async def initialize(self) -> Json:
        return await self.call("initialize", INIT_PARAMS)

    async def new_session(self, cwd: str | os.PathLike[str]) -> str:
        result = await self.call("session/new", {"cwd": os.fspath(cwd), "mcpServers": []})
        return str(result["sessionId"])

    async def prompt(self, session_id: str, text: str) -> str:
        """Send a prompt; return its messageId once accepted."""
        result = await self.call(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]},
        )
        return str(result["messageId"])

    async def wait_idle(self, session_id: str) -> Json:
        """Read until the session reports idle; return that update."""
        message = await self.claim(lambda m: is_idle(m, session_id))
        return message["params"]["update"]

    async def wait_permission_request(self) -> Json:
        return await self.claim(
            lambda m: isinstance(m, dict) and m.get("method") == "session/request_permission"
        )

    def updates(self, session_id: str | None = None) -> list[Json]:
        """Every session/update received (for one session, when given)."""
        return [
            m["params"]["update"]
            for m in self.received
            if isinstance(m, dict)
            and m.get("method") == "session/update"
            and (session_id is None or m["params"]["sessionId"] == session_id)
        ]


def is_idle(message: Json, session_id: str | None = None) -> bool:
    if not (isinstance(message, dict) and message.get("method") == "session/update"):
        return False
    params = message["params"]
    update = params["update"]
    return (
        (session_id is None or params["sessionId"] == session_id)
        and update.get("sessionUpdate") == "state_update"
        and update.get("state") == "idle"
        and "stopReason" in update
    )


def allow_answer(request: Json, kind: str = "allow_once") -> Json:
    """The result selecting the offered option of ``kind``."""
    (option,) = [o for o in request["params"]["options"] if o["kind"] == kind]
    return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}


# --------------------------------------------------------------------- in-process


@dataclass
class Served:
    """An agent served in-process; ``client`` is the wire client at the other end."""

    client: WireClient
    done: anyio.Event = field(default_factory=anyio.Event)
    error: BaseException | None = None


@contextlib.asynccontextmanager
async def served(
    agent: acpio.Agent,
    *,
    limits: acpio.AgentLimits | None = None,
    max_buffered_chunks: int = 16,
    exit_timeout: float = WAIT,
) -> AsyncIterator[Served]:
    """Serve ``agent`` in-process; on exit close its input and require a clean return.

    ``serve`` must return (not raise) within ``exit_timeout`` seconds of the
    end of its input: the agent survived whatever the test sent.
    """
    agent_side, client_side = acpio.rpc.memory_stream_pair(max_buffered_chunks)
    state = Served(WireClient(client_side))

    async def run() -> None:
        try:
            await acpio.serve(agent, agent_side, limits=limits)
        except BaseException as exc:
            state.error = exc
            raise
        finally:
            state.done.set()

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        try:
            yield state
        finally:
            with anyio.CancelScope(shield=True):
                await state.client.close_input()
                with anyio.fail_after(exit_timeout):
                    # Keep reading so that a full pipe never blocks the agent's shutdown.
                    with contextlib.suppress(EOFError, ProtocolViolation):
                        await state.client.read_to_eof()
                    await state.done.wait()
                await state.client.streams.receive.aclose()
    assert state.error is None, f"serve() raised {state.error!r}"


# --------------------------------------------------------------------- subprocesses


@dataclass
class Spawned:
    """An agent subprocess and the wire client talking to it."""

    process: anyio.abc.Process
    client: WireClient
    stderr: bytearray
    stdout_fd: int

    @property
    def pid(self) -> int:
        return self.process.pid

    def break_stdout(self) -> None:
        """Close our end of the agent's stdout: its next write fails (EPIPE)."""
        if self.stdout_fd >= 0:
            os.close(self.stdout_fd)
            self.stdout_fd = -1


def agent_command(name: str, backend: str, *args: str) -> list[str]:
    """Command line of one of the agents in ``reliability_agents.py``."""
    return [sys.executable, str(AGENTS_SCRIPT), name, backend, *args]


def example_command(name: str) -> list[str]:
    return [sys.executable, str(EXAMPLES / name)]


@contextlib.asynccontextmanager
async def spawned(
    command: Sequence[str], *, cwd: str | os.PathLike[str] | None = None
) -> AsyncIterator[Spawned]:
    """Start an agent subprocess; on exit make sure it is gone (killed if need be).

    Its stdout is a pipe this harness owns, so that a test can really close
    it (anyio's process streams do not close the pipe on every backend).
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO / "src"), str(HERE), env.get("PYTHONPATH", "")]
    ).rstrip(os.pathsep)
    read_fd, write_fd = os.pipe()
    try:
        process = await anyio.open_process(list(command), cwd=cwd, env=env, stdout=write_fd)
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)
    stderr = bytearray()

    async def pump() -> None:
        assert process.stderr is not None
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            async for chunk in process.stderr:
                stderr.extend(chunk)

    assert process.stdin is not None
    streams = StreamPair(_FdReceiveStream(read_fd), process.stdin)
    state = Spawned(process, WireClient(streams), stderr, read_fd)
    async with anyio.create_task_group() as group:
        group.start_soon(pump)
        try:
            yield state
        finally:
            with anyio.CancelScope(shield=True):
                if process.returncode is None:
                    with contextlib.suppress(ProcessLookupError):
                        process.kill()
                await process.wait()
                await streams.receive.aclose()
                state.break_stdout()
                with contextlib.suppress(Exception):
                    await process.aclose()


def process_alive(pid: int) -> bool:
    """True when ``pid`` is a running process (a zombie waiting to be reaped is not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - someone else's process
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    # The state follows the parenthesized command name, which may contain spaces.
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


class LogCollector(logging.Handler):
    """Collects the records of the ``acpio`` loggers while installed."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def tracebacks(self) -> list[logging.LogRecord]:
        """Records logged with a traceback (``logger.exception``): each one is a bug report."""
        return [r for r in self.records if r.exc_info is not None and r.levelno >= logging.ERROR]


@contextlib.contextmanager
def collect_logs() -> Iterator[LogCollector]:
    """Collect the ``acpio`` log records (all levels) for the duration."""
    collector = LogCollector()
    logger = logging.getLogger("acpio")
    old_level = logger.level
    logger.addHandler(collector)
    logger.setLevel(logging.DEBUG)
    try:
        yield collector
    finally:
        logger.removeHandler(collector)
        logger.setLevel(old_level)
