"""Which MCP transports an agent accepts: what it advertises, and what it refuses.

How this works: :attr:`acpio.Agent.mcp_transports` names the transports the
agent can connect to (``"stdio"``, ``"http"``, ``"sse"``). ``initialize``
advertises exactly those the protocol version can express
(:func:`mcp_capabilities`; draft v2 has ``stdio`` and ``http``), and
``session/new`` and ``session/resume`` refuse, with ``-32602``, a server of a
transport the agent did not declare (:func:`check_mcp_servers`). An agent that
declares nothing advertises no MCP support and accepts no server: a client
that follows the schema then sends an empty ``mcpServers``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Final

from msgspec import UNSET, UnsetType

from .. import schema
from .._errors import LocalProtocolError, RequestError
from .._json import get_field
from .._protocol.paths import is_absolute

__all__ = [
    "MCP_TRANSPORTS",
    "check_mcp_servers",
    "declared_transports",
    "mcp_capabilities",
    "transport_of",
]

#: Every MCP transport acpio knows; ``stdio`` is the baseline one.
MCP_TRANSPORTS: Final = frozenset({"stdio", "http", "sse"})


def declared_transports(transports: Collection[str]) -> frozenset[str]:
    """The transports of ``Agent.mcp_transports``, checked: every one known to acpio.

    :raises LocalProtocolError: for a transport acpio does not know (or a bare string).
    """
    declared = frozenset(transports)
    unknown = declared - MCP_TRANSPORTS
    if unknown or isinstance(transports, str):
        raise LocalProtocolError(
            f"Agent.mcp_transports must name MCP transports among "
            f"{', '.join(sorted(MCP_TRANSPORTS))}; got {transports!r}"
        )
    return declared


def mcp_capabilities(transports: Collection[str]) -> schema.McpCapabilities | UnsetType:
    """``capabilities.session.mcp`` advertising exactly the declared transports.

    Omitted when none is declared. ``sse`` has no v2 capability (draft v2
    defines only ``stdio`` and ``http``), so it is not advertised here.

    :raises LocalProtocolError: for a transport acpio does not know.
    """
    declared = declared_transports(transports)
    if not declared & {"stdio", "http"}:
        return UNSET
    return schema.McpCapabilities(
        stdio=schema.McpStdioCapabilities() if "stdio" in declared else UNSET,
        http=schema.McpHttpCapabilities() if "http" in declared else UNSET,
    )


def transport_of(server: schema.McpServer) -> str:
    """The transport of one ``mcpServers`` entry (``type``; ``stdio`` when the entry has none)."""
    if isinstance(server, schema.McpServerStdio):
        return "stdio"
    if isinstance(server, schema.McpServerHttp):
        return "http"
    kind = get_field(getattr(server, "raw", None), "type")
    return kind if isinstance(kind, str) else "?"


def check_mcp_servers(servers: Sequence[schema.McpServer], transports: Collection[str]) -> None:
    """Refuse servers the agent cannot use, as ``session/new`` and ``session/resume`` must.

    A stdio server needs an absolute ``command``; every server must use a
    transport the agent declared.

    :raises RequestError: ``-32602`` naming the server and its transport.
    """
    if not servers:
        return
    declared = declared_transports(transports)
    for index, server in enumerate(servers):
        if isinstance(server, schema.McpServerStdio) and not is_absolute(server.command):
            raise RequestError.invalid_params(
                f"`mcpServers[{index}].command` must be an absolute path, got {server.command!r}"
            )
        transport = transport_of(server)
        if transport not in declared:
            accepted = ", ".join(sorted(declared)) or "none"
            name = getattr(server, "name", None)
            raise RequestError.invalid_params(
                f"`mcpServers[{index}]` ({name!r}) uses the {transport!r} MCP transport, which "
                f"this agent does not accept (accepted: {accepted}; see capabilities.session.mcp)",
                {"index": index, "transport": transport, "accepted": sorted(declared)},
            )
