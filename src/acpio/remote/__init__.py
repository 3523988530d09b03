"""Serve an :class:`acpio.Agent` remotely: Streamable HTTP (POST + SSE) and WebSocket on ``/acp``.

The same agent that :func:`acpio.run` serves over stdio, unchanged, served to
remote clients as the ACP remote transport RFD defines it and the official
TypeScript SDK's ``createHttpStream`` and WebSocket clients speak it.
:class:`RemoteApp` is a plain ASGI application (any ASGI server that speaks
HTTP/1.1 and WebSocket can serve it); :func:`run_server` serves one with uvicorn on
loopback. Needs the ``remote`` extra (``pip install 'acpio[remote]'``) for
:func:`run_server`; :class:`RemoteApp` itself needs only anyio and msgspec.
"""

from .._limits import RemoteLimits as RemoteLimits
from ._app import AgentSource as AgentSource
from ._app import AuthRequest as AuthRequest
from ._app import RemoteApp as RemoteApp
from ._principals import read_token_file as read_token_file
from ._server import run_server as run_server
from ._server import serve_uvicorn as serve_uvicorn

__all__ = (
    "AgentSource",
    "AuthRequest",
    "RemoteApp",
    "RemoteLimits",
    "read_token_file",
    "run_server",
    "serve_uvicorn",
)
