"""A tiny MCP server over stdio, built with the MCP SDK's own server API (the ``mcp`` extra).

One tool, ``add``, for scripts/extras.sh: ``mcp_agent.py`` calls it through ``acpio.mcp``.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("acpio-extras-server")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    server.run("stdio")
