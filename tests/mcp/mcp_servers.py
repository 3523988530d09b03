"""Real MCP servers for the tests, built with the MCP SDK's own server API (MCPServer,
formerly FastMCP).

``python mcp_servers.py stdio [ARGS...]`` serves over stdio; ``http`` serves
streamable HTTP on 127.0.0.1 (a free port, printed on stdout once listening; a
request without the header ``x-token: secret`` is refused with 401), ``sse``
the same over the older SSE transport;
``hang-at-start`` never answers anything; ``crash-at-start`` exits at once.
Every mode writes its pid to the file named by ``ACPIO_TEST_PIDFILE`` (if set).
"""

from __future__ import annotations

import os
import socket
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer


def build() -> MCPServer:
    # Imported here: the pid is written before the (slow) imports of the SDK.
    import anyio  # noqa: PLC0415
    from mcp.server.mcpserver import MCPServer  # noqa: PLC0415
    from mcp.server.mcpserver.exceptions import ToolError  # noqa: PLC0415

    server = MCPServer("acpio-test-server")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def env(name: str) -> str:
        """The value of an environment variable of the server process."""
        return os.environ.get(name, "<unset>")

    @server.tool()
    def argv() -> str:
        """The server's command-line arguments, space-separated, and its working directory."""
        return " ".join(sys.argv[2:]) + " @ " + os.getcwd()

    @server.tool()
    def broken(message: str) -> str:
        """A tool that fails: an error result for the model."""
        raise ToolError(message)

    @server.tool()
    async def hang() -> str:
        """Never answers."""
        await anyio.sleep_forever()
        return "unreachable"

    @server.tool()
    def crash() -> str:
        """Kills the server process mid-call."""
        os._exit(3)

    return server


def serve_http(server: MCPServer, *, sse: bool = False) -> None:
    import uvicorn  # noqa: PLC0415

    app = server.sse_app() if sse else server.streamable_http_app()

    async def guarded(scope, receive, send):  # type: ignore[no-untyped-def]
        if scope["type"] == "http" and (b"x-token", b"secret") not in scope["headers"]:
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b"missing x-token"})
            return
        await app(scope, receive, send)

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    # Listening already: a client may connect from now on, the server accepts soon after.
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(guarded, log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])


def main() -> None:
    pidfile = os.environ.get("ACPIO_TEST_PIDFILE")
    if pidfile:
        with open(pidfile, "a") as file:
            file.write(f"{os.getpid()}\n")
    mode = sys.argv[1]
    if mode == "crash-at-start":
        sys.exit(5)
    if mode == "hang-at-start":
        while True:
            time.sleep(3600)
    server = build()
    if mode in ("http", "sse"):
        serve_http(server, sse=mode == "sse")
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
