"""``acpio serve``: serve an agent class or factory from a Python file over the remote transport.

How this works: ``FILE.py:NAME`` is imported as a module from its path;
``NAME`` must be an :class:`acpio.Agent` subclass or a zero-argument factory
returning an agent, called once per connection. The server is
:func:`acpio.remote.run_server` (uvicorn), on loopback unless ``--listen`` says
otherwise.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

from .._errors import SessionStoreError
from .._limits import RemoteLimits
from .._store.default_store import open_session_store
from ..remote import RemoteApp, read_token_file, run_server
from ..remote._app import AgentSource

__all__ = ["add_serve_parser", "serve_command"]


def add_serve_parser(commands: Any) -> None:
    """Register ``acpio serve``."""
    serve = commands.add_parser(
        "serve",
        help="serve an agent to remote clients (Streamable HTTP and WebSocket on /acp)",
        description="Serve FILE.py:NAME, an acpio.Agent subclass or a zero-argument factory "
        "(called once per connection), over the ACP remote transport: POST/SSE and WebSocket "
        "on one /acp endpoint. Listens on loopback unless told otherwise.",
    )
    serve.add_argument(
        "--listen",
        default="127.0.0.1:8765",
        metavar="HOST:PORT",
        help="address to listen on (default 127.0.0.1:8765; port 0 picks a free one)",
    )
    serve.add_argument(
        "--store",
        default="memory",
        metavar="URL",
        help="where sessions live: `memory` (default), a SQLite file path (or sqlite:///path), "
        "or postgresql://... for sessions shared by replicas (the postgres extra)",
    )
    serve.add_argument(
        "--token-env",
        metavar="VAR",
        help="require `Authorization: Bearer <token>`, the token read from this environment "
        "variable",
    )
    serve.add_argument(
        "--token-file",
        metavar="PATH",
        help="require `Authorization: Bearer <token>` with a token of this file, one "
        "`PRINCIPAL TOKEN` per line (`#` comments); each principal sees only its own "
        "sessions. The file must not be accessible to group or others (chmod 600)",
    )
    serve.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a browser Origin allowed to connect (repeatable; none by default)",
    )
    serve.add_argument(
        "--affinity-cookie", metavar="NAME", help="set this affinity cookie on each connection"
    )
    serve.add_argument(
        "--max-connections", type=int, default=RemoteLimits().max_connections, metavar="N"
    )
    serve.add_argument(
        "--max-sessions",
        type=int,
        default=RemoteLimits().max_sessions,
        metavar="N",
        help="sessions attached across all connections at once (default "
        f"{RemoteLimits().max_sessions}); session/new, load, resume and fork beyond it "
        "are refused",
    )
    serve.add_argument(
        "--max-body-size",
        type=int,
        default=RemoteLimits().max_body_size,
        metavar="BYTES",
        help="largest POST body or WebSocket message (default 32 MiB)",
    )
    _add_hardening_arguments(serve)
    serve.add_argument("target", metavar="FILE.py:NAME", help="the agent to serve")


def _add_hardening_arguments(serve: Any) -> None:
    defaults = RemoteLimits()
    serve.add_argument(
        "--allow-host",
        action="append",
        default=None,
        metavar="NAME",
        help="a Host header name accepted (repeatable; `*` for any). By default any, except "
        "when listening on loopback: then loopback names only (DNS rebinding)",
    )
    serve.add_argument(
        "--header-timeout",
        type=float,
        default=defaults.header_timeout,
        metavar="SECONDS",
        help="a socket that sends no complete request headers for this long is closed "
        f"(default {defaults.header_timeout:g})",
    )
    serve.add_argument(
        "--body-timeout",
        type=float,
        default=defaults.body_timeout,
        metavar="SECONDS",
        help="a POST body must arrive whole within this "
        f"(HTTP 408; default {defaults.body_timeout:g})",
    )
    serve.add_argument(
        "--max-sockets",
        type=int,
        default=defaults.max_sockets,
        metavar="N",
        help="open client sockets at most, kept below the file limit "
        f"(default {defaults.max_sockets})",
    )
    serve.add_argument(
        "--retention-messages",
        type=int,
        default=defaults.retention_messages,
        metavar="N",
        help="messages each stream keeps for a client that resumes after a drop "
        f"(default {defaults.retention_messages}; 0 turns resuming off)",
    )
    serve.add_argument(
        "--retention-seconds",
        type=float,
        default=defaults.retention_seconds,
        metavar="SECONDS",
        help="how long a sent message stays resumable, and a dropped WebSocket connection "
        f"waits for its client to resume (default {defaults.retention_seconds:g})",
    )


def _split_listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"--listen wants HOST:PORT, got {value!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


def _load_target(target: str) -> AgentSource:
    path_text, sep, name = target.rpartition(":")
    if not sep or not name or not path_text.endswith(".py"):
        raise ValueError(f"the agent must be given as FILE.py:NAME, got {target!r}")
    path = Path(path_text).resolve()
    if not path.is_file():
        raise ValueError(f"no such file: {path_text}")
    spec = importlib.util.spec_from_file_location(f"acpio_served_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot import {path_text}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    sys.path.insert(0, str(path.parent))
    spec.loader.exec_module(module)
    source: object = getattr(module, name, None)
    if source is None:
        raise ValueError(f"{path_text} has no {name!r}")
    if not callable(source):
        raise ValueError(f"{name} is neither an acpio.Agent subclass nor a factory")
    return source  # type: ignore[return-value,unused-ignore]


def _token(variable: str | None) -> str | None:
    if not variable:
        return None
    token = os.environ.get(variable)
    if not token:
        raise ValueError(f"--token-env: ${variable} is empty or not set")
    return token


def _refuse(message: str) -> NoReturn:
    raise ValueError(message)


def _tokens(args: argparse.Namespace) -> tuple[str | None, dict[str, str] | None]:
    """The one shared token (``--token-env``) or the principals' tokens (``--token-file``)."""
    if args.token_env and args.token_file:
        _refuse("give --token-env or --token-file, not both")
    if args.token_file:
        return None, read_token_file(args.token_file)
    return _token(args.token_env), None


def serve_command(args: argparse.Namespace) -> int:
    """Run ``acpio serve``; returns the exit code."""
    try:
        host, port = _split_listen(args.listen)
        source = _load_target(args.target)
        token, tokens = _tokens(args)
        if args.max_sessions < 1:
            _refuse(f"--max-sessions must be at least 1, got {args.max_sessions}")
        store = open_session_store(args.store)
    except (ValueError, SessionStoreError) as error:
        print(f"acpio serve: {error}", file=sys.stderr)
        return 2
    app = RemoteApp(
        source,
        store=store,
        token=token,
        tokens=tokens,
        allowed_origins=args.allow_origin,
        affinity_cookie=args.affinity_cookie,
        allowed_hosts=args.allow_host,
        limits=RemoteLimits(
            max_connections=args.max_connections,
            max_sessions=args.max_sessions,
            max_body_size=args.max_body_size,
            header_timeout=args.header_timeout,
            body_timeout=args.body_timeout,
            max_sockets=args.max_sockets,
            retention_messages=args.retention_messages,
            retention_seconds=args.retention_seconds,
        ),
    )

    def ready(bound_host: str, bound_port: int) -> None:
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        print(f"acpio serve: {args.target} on http://{shown}:{bound_port}/acp", file=sys.stderr)
        sys.stderr.flush()

    try:
        run_server(app, host=host, port=port, on_ready=ready)
    except OSError as error:
        print(f"acpio serve: cannot listen on {args.listen}: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    finally:
        close = getattr(store, "close", None)
        if callable(close):
            close()  # what is queued is written, the sessions given up for other replicas
    return 0
