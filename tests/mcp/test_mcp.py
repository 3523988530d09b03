"""MCP: transports advertised and enforced, and acpio.mcp against real MCP servers.

The servers are the MCP SDK's own (``mcp_servers.py``, built with MCPServer),
started for real: over stdio as children of the agent, and over streamable
HTTP on 127.0.0.1 by the test. Servers that crash or hang must give the agent
a clear error, leave the session working, and leave no process behind.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import anyio
import pytest
from support import gone

import acpio
import acpio.mcp
from acpio import schema
from acpio.testing import MockClient

pytestmark = pytest.mark.anyio

SERVERS = str(Path(__file__).with_name("mcp_servers.py"))
CLIENT_INFO = {"name": "test-client", "version": "1.0"}
Body = Callable[[acpio.Session], Awaitable[str | None]]


async def nothing(session: acpio.Session) -> None:
    return None


class McpAgent(acpio.Agent):
    """An agent whose prompt handler is the test's coroutine."""

    mcp_transports = ("stdio", "http")

    def __init__(self, body: Body) -> None:
        self.body = body

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str | None:
        return await self.body(session)


def stdio_server(name: str, mode: str, pidfile: Path, *args: str) -> schema.McpServerStdio:
    return schema.McpServerStdio(
        name=name,
        command=sys.executable,
        args=[SERVERS, mode, *args],
        env=[
            schema.EnvVariable(name="ACPIO_TEST_PIDFILE", value=str(pidfile)),
            schema.EnvVariable(name="GREETING", value="hello from env"),
        ],
    )


def pids(pidfile: Path) -> list[int]:
    return [int(line) for line in pidfile.read_text().split()] if pidfile.exists() else []


async def all_gone(pidfile: Path) -> bool:
    found = pids(pidfile)
    assert found, "the server never started"
    return all([await gone(pid, 10.0) for pid in found])


# ------------------------------------------------------------------ capabilities


@pytest.mark.parametrize(
    ("transports", "advertised"),
    [
        (("stdio", "http"), {"stdio": {}, "http": {}}),
        (("stdio",), {"stdio": {}}),
        (("http", "sse"), {"http": {}}),
        ((), None),
    ],
)
async def test_initialize_advertises_exactly_the_declared_transports(
    transports: tuple[str, ...], advertised: dict[str, object] | None
) -> None:
    class Declared(McpAgent):
        mcp_transports = transports

    async with MockClient(Declared(nothing), initialize=False) as client:
        result = await client.request("initialize", {"protocolVersion": 2, "info": CLIENT_INFO})
    assert isinstance(result, dict)
    assert result["capabilities"]["session"].get("mcp") == advertised


async def test_an_unknown_declared_transport_fails_initialize() -> None:
    class Wrong(McpAgent):
        mcp_transports = ("stdio", "websocket")

    async with MockClient(Wrong(nothing), initialize=False) as client:
        with pytest.raises(acpio.RequestError) as raised:
            await client.request("initialize", {"protocolVersion": 2, "info": CLIENT_INFO})
    assert raised.value.code == -32603


@pytest.mark.parametrize("method", ["session/new", "session/resume"])
async def test_servers_of_undeclared_transports_are_invalid_params(
    method: str, tmp_path: Path
) -> None:
    class StdioOnly(McpAgent):
        mcp_transports = ("stdio",)

    http = {"type": "http", "name": "web", "url": "http://127.0.0.1:1/mcp", "headers": []}
    sse = {"type": "sse", "name": "old", "url": "http://127.0.0.1:1/sse", "headers": []}
    async with MockClient(StdioOnly(nothing)) as client:
        session = await client.new_session(cwd=tmp_path)
        for server in (http, sse):
            params: dict[str, object] = {"cwd": str(tmp_path), "mcpServers": [server]}
            if method == "session/resume":
                params["sessionId"] = session.id
            with pytest.raises(acpio.RequestError) as raised:
                await client.request(method, params)
            assert raised.value.code == -32602
            assert repr(server["type"]) in raised.value.message
            assert "accepted: stdio" in raised.value.message
        # A declared transport is accepted.
        stdio = {"type": "stdio", "name": "s", "command": sys.executable, "args": []}
        params = {"cwd": str(tmp_path), "mcpServers": [stdio]}
        if method == "session/resume":
            params["sessionId"] = session.id
        await client.request(method, params)


async def test_stdio_is_the_default_and_an_empty_declaration_accepts_no_server(
    tmp_path: Path,
) -> None:
    class Default(acpio.Agent):
        async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> None:
            return None

    class NoMcp(Default):
        mcp_transports = ()

    stdio = {"type": "stdio", "name": "s", "command": sys.executable}
    params = {"cwd": str(tmp_path), "mcpServers": [stdio]}
    async with MockClient(Default()) as client:
        # ACP v1 requires every agent to accept stdio servers; editors send the user's.
        answer = await client.request("session/new", params)
        assert isinstance(answer, dict) and answer["sessionId"]
    async with MockClient(NoMcp()) as client:
        with pytest.raises(acpio.RequestError) as raised:
            await client.request("session/new", params)
    assert raised.value.code == -32602
    assert "accepted: none" in raised.value.message


# ---------------------------------------------------------------------------- stdio


async def test_stdio_server_tools_args_env_and_cwd_and_it_closes_with_the_session(
    tmp_path: Path,
) -> None:
    pidfile = tmp_path / "pids"
    seen: dict[str, object] = {}

    async def body(session: acpio.Session) -> None:
        servers = await acpio.mcp.connect(session)
        assert await acpio.mcp.connect(session) is servers  # one per session
        assert servers.errors == {}
        tools = await servers.list_tools()
        seen["tools"] = [(t.server, t.name) for t in tools]
        add = next(t for t in tools if t.name == "add")
        seen["schema"] = add.input_schema["properties"]
        seen["add"] = (await servers.call_tool(add, {"a": 2, "b": 40})).text
        seen["env"] = (await servers.call_tool("env", {"name": "GREETING"})).text
        seen["argv"] = (await servers.call_tool("argv", server="files")).text
        failed = await servers.call_tool("broken", {"message": "no such file"})
        seen["broken"] = (failed.is_error, failed.text)
        seen["acp"] = failed.acp_content()
        await session.message(seen["add"])  # type: ignore[arg-type]

    servers = [stdio_server("files", "stdio", pidfile, "--root", "/data")]
    async with MockClient(McpAgent(body)) as client:
        session = await client.new_session(cwd=tmp_path, mcp_servers=servers)
        result = await session.prompt("go")
        assert result.stop_reason == "end_turn"
        assert result.text == "42"
        (pid,) = pids(pidfile)
        assert not await gone(pid, 0.0)  # the server outlives the turn
        await session.close()
        assert await all_gone(pidfile)
    assert seen["tools"] == [
        ("files", name) for name in ("add", "env", "argv", "broken", "hang", "crash")
    ]
    assert set(seen["schema"]) == {"a", "b"}  # type: ignore[arg-type]
    assert seen["env"] == "hello from env"
    assert seen["argv"] == f"--root /data @ {tmp_path}"
    assert seen["broken"] == (True, "Error executing tool broken: no such file")
    assert seen["acp"] == [schema.TextContent(text="Error executing tool broken: no such file")]


async def test_servers_stay_across_turns_and_a_cancelled_turn_leaves_them_usable(
    tmp_path: Path,
) -> None:
    pidfile = tmp_path / "pids"
    started = anyio.Event()

    async def body(session: acpio.Session) -> str:
        servers = await acpio.mcp.connect(session)
        if not started.is_set():
            started.set()
            await servers.call_tool("hang")  # cancelled by session/cancel
        result = await servers.call_tool("add", {"a": 1, "b": 1})
        await session.message(result.text)
        return "end_turn"

    async with MockClient(McpAgent(body)) as client:
        session = await client.new_session(
            cwd=tmp_path, mcp_servers=[stdio_server("s", "stdio", pidfile)]
        )
        turn = await session.start_prompt("first")
        with anyio.fail_after(30):
            await started.wait()
        await session.cancel()
        assert (await turn.wait()).stop_reason == "cancelled"
        second = await session.prompt("second")
        assert (second.stop_reason, second.text) == ("end_turn", "2")
        assert len(pids(pidfile)) == 1  # the same server process
    # The connection shut down: no server process outlives it.
    assert await all_gone(pidfile)


async def test_a_server_that_crashes_mid_call_is_a_clear_error_and_leaves_the_rest(
    tmp_path: Path,
) -> None:
    crashing, healthy = tmp_path / "crashing", tmp_path / "healthy"
    errors: list[str] = []

    async def body(session: acpio.Session) -> str:
        servers = await acpio.mcp.connect(session)
        if "flaky" not in servers.errors:  # the first turn
            with pytest.raises(acpio.LocalProtocolError, match="needs server="):
                await servers.call_tool("add", {"a": 1, "b": 2})  # both servers have it
        try:
            await servers.call_tool("crash", server="flaky")
        except acpio.mcp.McpError as exc:
            errors.append(str(exc))
            assert exc.server == "flaky"
        try:
            await servers.call_tool("add", {"a": 1, "b": 2}, server="flaky")
        except acpio.mcp.McpError as exc:
            errors.append(str(exc))
        assert "flaky" in servers.errors
        tools = await servers.list_tools()  # the crashed server is left out
        assert {t.server for t in tools} == {"steady"}
        result = await servers.call_tool("add", {"a": 1, "b": 2})  # the one usable server
        await session.message(f"steady says {result.text}")
        return "end_turn"

    servers = [
        stdio_server("flaky", "stdio", crashing),
        stdio_server("steady", "stdio", healthy),
    ]
    async with MockClient(McpAgent(body)) as client:
        session = await client.new_session(cwd=tmp_path, mcp_servers=servers)
        result = await session.prompt("go")
        assert (result.stop_reason, result.text) == ("end_turn", "steady says 3")
        assert await all_gone(crashing)
        assert (await session.prompt("again")).stop_reason == "end_turn"
    assert "'flaky'" in errors[0] and "crash" in errors[0] and "broke" in errors[0]
    assert "cannot be used" in errors[1]
    assert await all_gone(healthy)


async def test_a_server_that_hangs_in_a_call_is_stopped_after_the_timeout(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    errors: list[str] = []

    async def body(session: acpio.Session) -> str:
        servers = await acpio.mcp.connect(session)
        try:
            await servers.call_tool("hang", timeout=0.5)
        except acpio.mcp.McpError as exc:
            errors.append(str(exc))
        await session.message("still here")
        return "end_turn"

    async with MockClient(McpAgent(body)) as client:
        session = await client.new_session(
            cwd=tmp_path, mcp_servers=[stdio_server("slow", "stdio", pidfile)]
        )
        result = await session.prompt("go")
        assert (result.stop_reason, result.text) == ("end_turn", "still here")
        assert await all_gone(pidfile)
    assert errors == ["MCP server 'slow': did not answer tools/call 'hang' within 0.5s; stopped it"]


@pytest.mark.parametrize("mode", ["hang-at-start", "crash-at-start", "missing"])
async def test_a_server_that_never_connects_is_reported_and_gone(mode: str, tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    reported: dict[str, str] = {}

    async def body(session: acpio.Session) -> str:
        servers = await acpio.mcp.connect(session, connect_timeout=3.0)
        reported.update({name: str(error) for name, error in servers.errors.items()})
        assert await servers.list_tools() == []
        with pytest.raises(acpio.mcp.McpError, match="cannot be used"):
            await servers.call_tool("add", {"a": 1, "b": 1}, server="bad")
        await session.message("the session goes on")
        return "end_turn"

    server = stdio_server("bad", mode, pidfile)
    if mode == "missing":
        server = schema.McpServerStdio(name="bad", command=str(tmp_path / "no-such-server"))
    async with MockClient(McpAgent(body)) as client:
        session = await client.new_session(cwd=tmp_path, mcp_servers=[server])
        result = await session.prompt("go")
        assert (result.stop_reason, result.text) == ("end_turn", "the session goes on")
        if mode != "missing":
            assert await all_gone(pidfile)
    (message,) = reported.values()
    assert message.startswith("MCP server 'bad': ")
    if mode == "hang-at-start":
        assert "did not finish connecting within 3s" in message
    else:
        assert "could not connect" in message


# ----------------------------------------------------------------------------- http


@contextlib.asynccontextmanager
async def served_over(mode: str, tmp_path: Path) -> AsyncIterator[str]:
    """An MCP server over HTTP (``mode`` http or sse) on 127.0.0.1; yields its port."""
    process = await anyio.open_process(
        [sys.executable, SERVERS, mode],
        env={**os.environ, "ACPIO_TEST_PIDFILE": str(tmp_path / "http-pids")},
    )
    try:
        assert process.stdout is not None
        with anyio.fail_after(30):
            line = b""
            while not line.endswith(b"\n"):
                line += await process.stdout.receive(64)
        yield str(int(line))
    finally:
        process.kill()
        with anyio.CancelScope(shield=True):
            await process.wait()
            await process.aclose()


@pytest.fixture
async def http_server(tmp_path: Path) -> AsyncIterator[str]:
    """A streamable HTTP MCP server on 127.0.0.1 that wants ``x-token: secret``."""
    async with served_over("http", tmp_path) as port:
        yield f"http://127.0.0.1:{port}/mcp"


async def test_sse_server_when_declared(tmp_path: Path) -> None:
    class WithSse(McpAgent):
        mcp_transports = ("stdio", "http", "sse")

    texts: list[str] = []

    async def body(session: acpio.Session) -> None:
        servers = await acpio.mcp.connect(session)
        assert servers.errors == {}
        texts.append((await servers.call_tool("add", {"a": 1, "b": 2})).text)

    async with served_over("sse", tmp_path) as port, MockClient(WithSse(body)) as client:
        # Draft v2 has no sse variant: the server arrives as an unknown one, kept verbatim.
        sse = schema.UnknownMcpServer(
            {
                "type": "sse",
                "name": "legacy",
                "url": f"http://127.0.0.1:{port}/sse",
                "headers": [{"name": "x-token", "value": "secret"}],
            }
        )
        session = await client.new_session(cwd=tmp_path, mcp_servers=[sse])
        await session.prompt("go")
    assert texts == ["3"]


async def test_http_server_with_headers(http_server: str, tmp_path: Path) -> None:
    seen: dict[str, object] = {}

    async def body(session: acpio.Session) -> str:
        servers = await acpio.mcp.connect(session)
        seen["errors"] = {name: str(error) for name, error in servers.errors.items()}
        seen["tools"] = [t.name for t in await servers.list_tools()]
        seen["add"] = (await servers.call_tool("add", {"a": 20, "b": 22}, server="web")).text
        await servers.aclose()
        with pytest.raises(acpio.mcp.McpError, match="closed with its session"):
            await servers.call_tool("add", {"a": 1, "b": 1}, server="web")
        return "end_turn"

    good = schema.McpServerHttp(
        name="web", url=http_server, headers=[schema.HttpHeader(name="x-token", value="secret")]
    )
    refused = schema.McpServerHttp(name="no-token", url=http_server)
    async with MockClient(McpAgent(body)) as client:
        session = await client.new_session(cwd=tmp_path, mcp_servers=[good, refused])
        result = await session.prompt("go")
        assert result.stop_reason == "end_turn"
    errors = seen["errors"]
    assert isinstance(errors, dict) and list(errors) == ["no-token"]
    assert "could not connect" in errors["no-token"]
    assert seen["tools"] == ["add", "env", "argv", "broken", "hang", "crash"]
    assert seen["add"] == "42"


async def test_connect_refuses_a_closed_session(tmp_path: Path) -> None:
    holder: list[acpio.Session] = []

    async def body(session: acpio.Session) -> None:
        holder.append(session)

    async with MockClient(McpAgent(body)) as client:
        session = await client.new_session(cwd=tmp_path)
        await session.prompt("go")
        await session.close()
    with pytest.raises(acpio.LocalProtocolError, match="closed"):
        await acpio.mcp.connect(holder[0])


def test_the_core_never_imports_the_mcp_sdk() -> None:
    # Only acpio.mcp (the mcp extra) does.
    code = "import sys, acpio; assert 'mcp' not in sys.modules, 'acpio imported mcp'"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("name", acpio.mcp.__all__)
def test_every_public_name_of_acpio_mcp_is_documented(name: str) -> None:
    value = getattr(acpio.mcp, name)
    doc = value.__dict__.get("__doc__") if isinstance(value, type) else value.__doc__
    assert isinstance(doc, str) and doc.strip()
