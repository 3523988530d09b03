"""An agent that calls the MCP servers of its session through ``acpio.mcp`` (the ``mcp`` extra).

For scripts/extras.sh: a prompt ``add A B`` lists the tools of every server the client
passed, calls ``add`` and answers with the tool's result text.
"""

from __future__ import annotations

import acpio
import acpio.mcp


class McpAgent(acpio.Agent):
    """Answers ``add A B`` with what the MCP tool ``add`` returns."""

    mcp_transports = ("stdio",)

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        words = "".join(getattr(block, "text", "") for block in prompt).split()
        servers = await acpio.mcp.connect(session)
        tools = await servers.list_tools()
        add = next(tool for tool in tools if tool.name == "add")
        result = await servers.call_tool(add, {"a": int(words[1]), "b": int(words[2])})
        await session.message(f"{add.server}.add says {result.text}")
        return "end_turn"


if __name__ == "__main__":
    acpio.run(McpAgent())
