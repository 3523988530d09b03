"""The MCP servers the client passed to a session: connect, list and call their tools.

Install the ``mcp`` extra (``pip install "acpio[mcp]"``, the official MCP
Python SDK) and declare the transports the agent accepts::

    class MyAgent(acpio.Agent):
        mcp_transports = ("stdio", "http")

        async def prompt(self, session, prompt):
            servers = await acpio.mcp.connect(session)
            tools = await servers.list_tools()      # every tool of every server
            result = await servers.call_tool(tools[0], {"path": "README.md"})
            await session.message(result.text)      # what goes back to the model

How this works: :func:`connect` starts one task per ``mcpServers`` entry with
:meth:`acpio.Session.start_soon` (the session's, not the turn's: a cancelled turn
does not close them) and closes them in a callback given to
:meth:`acpio.Session.add_close_callback`, so this module uses only the public
session; each task holds one MCP client (a stdio subprocess with the
entry's ``args`` and ``env``, run in the session's ``cwd``; or streamable HTTP
or SSE with the entry's headers) until the session closes, the connection
shuts down, or the server fails. A server that does not connect within
``connect_timeout``, answers a call with a broken connection (it crashed), or
does not answer within ``call_timeout`` (it hangs) is stopped (its process
killed by the MCP SDK's shutdown, stdin closed, then SIGTERM and SIGKILL to its
process group) and reported as an :class:`McpError` naming it; the session and
the other servers are unaffected. An error *of a tool* is not an exception: it
is a result with ``is_error`` set, for the model to read.
"""

from __future__ import annotations

import contextlib
import logging
import weakref
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, cast

import anyio
import httpx2
import mcp_types
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from msgspec import UNSET

from . import schema
from ._agent.session import Session
from ._errors import AcpError, LocalProtocolError
from ._features.mcp_transports import transport_of
from ._json import as_list, as_object

__all__ = ("McpError", "McpServers", "McpTool", "McpToolResult", "connect")

logger: logging.Logger = logging.getLogger(__name__)

DEFAULT_CONNECT_TIMEOUT: Final = 30.0
DEFAULT_CALL_TIMEOUT: Final = 300.0
_MAX_PAGES: Final = 100
_CLIENT_INFO: Final = mcp_types.Implementation(name="acpio", version="0.1.0")


class McpError(AcpError):
    """Raised when an MCP server of the session cannot be used: it failed to start or to
    connect, crashed, did not answer in time, or refused the request.

    ``server`` names the server as the client listed it in ``mcpServers``. A
    server that failed this way is stopped; the session and the other
    servers go on.
    """

    def __init__(self, server: str, message: str) -> None:
        super().__init__(f"MCP server {server!r}: {message}")
        self.server = server
        self.message = message


@dataclass(frozen=True, slots=True)
class McpTool:
    """One tool of one MCP server of the session, as the server listed it.

    ``input_schema`` is the JSON Schema of its arguments, ready to hand to a
    model; ``raw`` is the MCP SDK's object.
    """

    server: str
    name: str
    description: str | None
    input_schema: dict[str, Any]
    title: str | None = None
    raw: mcp_types.Tool | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class McpToolResult:
    """What a tool call returned. ``is_error`` is the tool's own failure (a result, for the
    model to see), never a broken server (that raises :class:`McpError`).

    ``content`` holds the MCP content blocks, ``structured`` the structured
    result if any; :attr:`text` joins the text blocks, :meth:`acp_content`
    converts the blocks into ACP content for a tool call.
    """

    server: str
    tool: str
    is_error: bool
    content: list[mcp_types.ContentBlock]
    structured: object = None
    raw: mcp_types.CallToolResult | None = field(default=None, repr=False, compare=False)

    @property
    def text(self) -> str:
        """The text blocks of the result, joined by newlines (what a model usually reads)."""
        return "\n".join(
            block.text for block in self.content if isinstance(block, mcp_types.TextContent)
        )

    def acp_content(self) -> list[schema.ContentBlock]:
        """The result as ACP content blocks (text, image, audio, resource links, resources).

        Put them in a tool call with ``call.append(schema.Content(content=block))``.
        """
        blocks: list[schema.ContentBlock] = []
        for block in self.content:
            if isinstance(block, mcp_types.TextContent):
                blocks.append(schema.TextContent(text=block.text))
            elif isinstance(block, mcp_types.ImageContent):
                blocks.append(schema.ImageContent(data=block.data, mime_type=block.mime_type))
            elif isinstance(block, mcp_types.AudioContent):
                blocks.append(schema.AudioContent(data=block.data, mime_type=block.mime_type))
            elif isinstance(block, mcp_types.ResourceLink):
                blocks.append(
                    schema.ResourceLink(
                        uri=str(block.uri),
                        name=block.name,
                        mime_type=block.mime_type if block.mime_type is not None else UNSET,
                    )
                )
            else:
                dumped = block.model_dump(mode="json", by_alias=True, exclude_none=True)
                blocks.append(schema.convert(dumped, schema.ContentBlock))
        return blocks


@dataclass(eq=False)
class _Server:
    name: str
    config: schema.McpServer
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    ready: anyio.Event = field(default_factory=anyio.Event)
    done: anyio.Event = field(default_factory=anyio.Event)
    client: Client | None = None
    error: McpError | None = None
    tools: list[McpTool] | None = None

    def stop(self, error: McpError | None) -> None:
        if self.error is None:
            self.error = error
        self.client = None
        self.scope.cancel()


_by_session: weakref.WeakKeyDictionary[Session, McpServers] = weakref.WeakKeyDictionary()


class McpServers:
    """The MCP servers of one session, connected by :func:`connect`.

    Each server is used through its own MCP client; a failed server is
    reported in :attr:`errors` and raises :class:`McpError` when used, never
    affecting the others. Everything is closed when the session closes or
    the connection shuts down (or by :meth:`aclose`): no server process
    outlives its session.
    """

    def __init__(
        self, session: Session, *, connect_timeout: float, call_timeout: float | None
    ) -> None:
        self._session = session
        self.connect_timeout = connect_timeout
        self.call_timeout = call_timeout
        self._configs = list(session.mcp_servers)
        self._servers: dict[str, _Server] = {}
        for config in self._configs:
            name = getattr(config, "name", None)
            if not isinstance(name, str):
                raw = as_object(getattr(config, "raw", None))
                name = str(raw.get("name")) if raw is not None else "server"
            unique, number = name, 2
            while unique in self._servers:
                unique, number = f"{name}#{number}", number + 1
            self._servers[unique] = _Server(unique, config)
        self.closed: bool = False

    @property
    def names(self) -> list[str]:
        """The servers' names, in the order of ``mcpServers`` (a repeated name gets ``#2``...)."""
        return list(self._servers)

    @property
    def errors(self) -> dict[str, McpError]:
        """The servers that cannot be used, each with the reason."""
        return {name: s.error for name, s in self._servers.items() if s.error is not None}

    # ----------------------------------------------------------------- connecting

    @classmethod
    async def connect(
        cls,
        session: Session,
        *,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        call_timeout: float | None = DEFAULT_CALL_TIMEOUT,
    ) -> McpServers:
        """The servers of ``session``, connected: what :func:`connect` returns (see it)."""
        if session.closed:
            raise LocalProtocolError(f"session {session.id} is closed; it has no MCP servers")
        existing = _by_session.get(session)
        if existing is not None:
            if existing._configs == list(session.mcp_servers):
                return existing
            await existing.aclose()
        servers = cls(session, connect_timeout=connect_timeout, call_timeout=call_timeout)
        _by_session[session] = servers
        session.add_close_callback(servers._close_now)
        await servers._start()
        return servers

    async def _start(self) -> None:
        for server in self._servers.values():
            self._session.start_soon(self._run, server)
        with anyio.move_on_after(self.connect_timeout):
            for server in self._servers.values():
                await server.ready.wait()
        for server in self._servers.values():
            if not server.ready.is_set():
                server.stop(
                    McpError(
                        server.name,
                        f"did not finish connecting within {self.connect_timeout:g}s; stopped it",
                    )
                )

    async def _run(self, server: _Server) -> None:
        try:
            with server.scope:
                async with contextlib.AsyncExitStack() as stack:
                    target = await self._target(server.config, stack)
                    client = await stack.enter_async_context(
                        Client(target, client_info=_CLIENT_INFO)
                    )
                    server.client = client
                    server.ready.set()
                    await anyio.sleep_forever()
        except Exception as exc:
            logger.warning("MCP server %r failed: %s", server.name, _describe(exc))
            server.stop(McpError(server.name, f"could not connect: {_describe(exc)}"))
        finally:
            server.client = None
            if server.error is None:
                server.error = McpError(server.name, "closed")
            server.ready.set()
            server.done.set()

    async def _target(self, config: schema.McpServer, stack: contextlib.AsyncExitStack) -> Any:
        if isinstance(config, schema.McpServerStdio):
            env = {item.name: item.value for item in config.env or ()}
            return StdioServerParameters(
                command=config.command,
                args=list(config.args or ()),
                env=env or None,
                cwd=self._session.cwd,
            )
        if isinstance(config, schema.McpServerHttp):
            headers = {item.name: item.value for item in config.headers or ()}
            http = await stack.enter_async_context(
                httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0))
            )
            return streamable_http_client(config.url, http_client=http)
        raw = as_object(getattr(config, "raw", None))
        if transport_of(config) == "sse" and raw is not None:
            headers = {
                str(item.get("name")): str(item.get("value"))
                for entry in as_list(raw.get("headers")) or ()
                if (item := as_object(entry)) is not None
            }
            return sse_client(str(raw.get("url")), headers=headers)
        raise LocalProtocolError(f"MCP transport {transport_of(config)!r} is not supported")

    # -------------------------------------------------------------------- using

    def _client(self, name: str) -> tuple[_Server, Client]:
        server = self._servers.get(name)
        if server is None:
            raise McpError(name, f"no such server in this session (servers: {self.names})")
        client = server.client
        if client is None:
            error = server.error or McpError(name, "not connected")
            raise McpError(name, f"cannot be used: {error.message}")
        return server, client

    async def list_tools(self) -> list[McpTool]:
        """Every tool of every usable server, in server order (listed once, then cached).

        A server that fails while listing is stopped and left out (see
        :attr:`errors`); the others are still listed.
        """
        tools: list[McpTool] = []
        for name, server in self._servers.items():
            if server.client is None:
                continue
            try:
                tools.extend(await self.server_tools(name))
            except McpError as exc:
                logger.warning("%s", exc)
        return tools

    async def server_tools(self, server: str) -> list[McpTool]:
        """The tools of one server (listed once, then cached).

        :raises McpError: when the server cannot be used or fails to answer.
        """
        entry, client = self._client(server)
        if entry.tools is not None:
            return entry.tools
        listed: list[McpTool] = []
        cursor: str | None = None
        async with self._guard(entry, "tools/list"):
            for _ in range(_MAX_PAGES):
                page = await client.list_tools(cursor=cursor)
                listed.extend(
                    McpTool(
                        server=server,
                        name=tool.name,
                        description=tool.description,
                        input_schema=dict(tool.input_schema),
                        title=tool.title,
                        raw=tool,
                    )
                    for tool in page.tools
                )
                cursor = page.next_cursor
                if cursor is None:
                    break
        entry.tools = listed
        return listed

    async def call_tool(
        self,
        tool: McpTool | str,
        arguments: Mapping[str, object] | None = None,
        *,
        server: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - overrides call_timeout for one call
    ) -> McpToolResult:
        """Call a tool and return its result (a failing *tool* gives ``is_error``).

        ``tool`` is an :class:`McpTool` from :meth:`list_tools`, or a tool
        name with ``server`` (not needed when one server is connected, or
        when exactly one server listed a tool of that name).
        ``timeout`` defaults to ``call_timeout``. Cancelling the caller (a
        cancelled turn) cancels the MCP request; the server stays.

        :raises McpError: when the server cannot be used, crashed, did not
            answer in time (it is then stopped), or refused the request.
        :raises LocalProtocolError: for a tool name that does not say which server.
        """
        if isinstance(tool, McpTool):
            name, server = tool.name, tool.server
        else:
            name = tool
            if server is None:
                server = self._server_of(name)
        entry, client = self._client(server)
        async with self._guard(entry, f"tools/call {name!r}", timeout):
            result = await client.call_tool(name, dict(arguments or {}))
        return McpToolResult(
            server=server,
            tool=name,
            is_error=bool(result.is_error),
            content=list(result.content),
            structured=result.structured_content,
            raw=result,
        )

    def _server_of(self, tool: str) -> str:
        usable = [name for name, s in self._servers.items() if s.client is not None]
        if len(usable) == 1:
            return usable[0]
        listing = [
            name for name in usable if any(t.name == tool for t in self._servers[name].tools or ())
        ]
        if len(listing) == 1:
            return listing[0]
        raise LocalProtocolError(
            f"call_tool({tool!r}) needs server=: "
            + (f"servers {listing} all list it" if listing else f"usable servers: {usable}")
        )

    @contextlib.asynccontextmanager
    async def _guard(
        self, server: _Server, what: str, seconds: float | None = None
    ) -> AsyncGenerator[None]:
        limit = seconds if seconds is not None else self.call_timeout
        try:
            with anyio.fail_after(limit):
                yield
        except TimeoutError:
            error = McpError(server.name, f"did not answer {what} within {limit:g}s; stopped it")
            server.stop(error)
            raise error from None
        except MCPError as exc:
            if exc.error.code == mcp_types.CONNECTION_CLOSED:
                error = McpError(
                    server.name, f"the connection broke during {what} ({exc}); stopped it"
                )
                server.stop(error)
                raise error from exc
            raise McpError(server.name, f"refused {what}: {exc}") from exc
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            error = McpError(
                server.name, f"the connection broke during {what} ({exc!r}); stopped it"
            )
            server.stop(error)
            raise error from exc

    # ------------------------------------------------------------------ closing

    def _close_now(self) -> None:
        self.closed = True
        for server in self._servers.values():
            server.stop(McpError(server.name, "closed with its session"))
        if _by_session.get(self._session) is self:
            del _by_session[self._session]

    async def aclose(self) -> None:
        """Close every server now and wait until their processes are gone."""
        self._close_now()
        with anyio.CancelScope(shield=True):
            for server in self._servers.values():
                await server.done.wait()


def _members(exc: BaseException) -> tuple[BaseException, ...]:
    if isinstance(exc, BaseExceptionGroup):
        return cast("BaseExceptionGroup[BaseException]", exc).exceptions
    return ()


def _describe(exc: BaseException) -> str:
    members = _members(exc)
    if members:
        return "; ".join(_describe(inner) for inner in members)
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def connect(
    session: Session,
    *,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    call_timeout: float | None = DEFAULT_CALL_TIMEOUT,
) -> McpServers:
    """Connect to the MCP servers of ``session`` (its ``mcpServers``), all at once.

    Returns the same :class:`McpServers` for the session until it closes
    (again after a ``session/resume`` that changed the servers: then the old
    ones are closed and the new ones connected). Returns once every server
    connected or failed; a failed server is in :attr:`McpServers.errors` and
    never raises here. The servers close with the session.

    :raises LocalProtocolError: when the session is closed.
    """
    return await McpServers.connect(
        session, connect_timeout=connect_timeout, call_timeout=call_timeout
    )
