"""``acpio registry check --launch``: start the agent as the ACP registry's verifier does.

How this works: the registry's CI (``verify_agents.py --auth-check``) starts each
agent with a fresh ``HOME``, ``TERM=dumb`` and only a short list of the caller's
variables, writes one ``initialize`` request (protocol version 1, client
"ACP Registry Validator", ``terminal``, ``fs``, and ``_meta`` ``terminal_output``
and ``terminal-auth``: terminal sign-in is announced only there, not in
``auth.terminal``), reads one line and requires an ``authMethods`` entry of type
``agent`` or ``terminal``. The type of an entry is its ``type``; else ``terminal``
when its ``_meta`` has ``terminal-auth``, ``agent`` when it has ``agent-auth``; else
``agent``. This module does the same and says what to fix. The agent runs in the
current directory (the verifier uses a sandbox directory, where it installs the
package), so a relative script path in the command keeps working.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from typing import Final

import anyio
import anyio.abc

from .._json import as_list, as_object, get_field
from ._failure import CliError, stderr_tail

__all__ = ["INITIALIZE", "auth_types", "launch_command", "run_launch"]

#: The request the registry's verifier sends, field for field.
INITIALIZE: Final = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": 1,
        "clientInfo": {"name": "ACP Registry Validator", "version": "1.0.0"},
        "clientCapabilities": {
            "terminal": True,
            "fs": {"readTextFile": True, "writeTextFile": True},
            "_meta": {"terminal_output": True, "terminal-auth": True},
        },
    },
}

#: The caller's variables the verifier passes on (everything else is dropped).
PASSTHROUGH: Final = (
    "CI", "COMSPEC", "NPM_CONFIG_CACHE", "NODE_EXTRA_CA_CERTS", "PATH", "PATHEXT",
    "PYTHON_KEYRING_BACKEND", "PYTHON_KEYRING_DISABLED", "REQUESTS_CA_BUNDLE", "SSL_CERT_DIR",
    "SSL_CERT_FILE", "SystemRoot", "TMP", "TMPDIR", "TEMP", "UV_CACHE_DIR", "WINDIR",
    "XDG_CACHE_HOME", "XDG_CONFIG_HOME",
)  # fmt: skip
_MAX_LINE: Final = 1 << 20
_VALID: Final = ("agent", "terminal")


def auth_types(methods: object) -> list[tuple[str, str]]:
    """(id, type) of each ``authMethods`` entry, typed as the verifier types them."""
    typed: list[tuple[str, str]] = []
    for item in as_list(methods) or []:
        method = as_object(item) or {}
        kind = method.get("type")
        if not isinstance(kind, str) or not kind:
            meta = as_object(method.get("_meta")) or {}
            kind = "terminal" if "terminal-auth" in meta else "agent"
        method_id = method.get("id", method.get("methodId", ""))
        typed.append((method_id if isinstance(method_id, str) else repr(method_id), kind))
    return typed


def launch_command(entry: object) -> list[str]:
    """The command the verifier would run for the entry's ``uvx`` or ``npx`` package.

    :raises CliError: when the entry has neither (give the command after ``--``).
    """
    distribution = get_field(entry, "distribution")
    for kind, runner in (("uvx", ["uvx"]), ("npx", ["npx", "-y"])):
        target = get_field(distribution, kind)
        package = get_field(target, "package")
        if isinstance(package, str):
            extra = as_list(get_field(target, "args")) or []
            return [*runner, package, *(a for a in extra if isinstance(a, str))]
    raise CliError(
        "--launch needs the agent's command: `acpio registry check --launch -- python "
        "my_agent.py` (or an agent.json with a uvx or npx distribution)",
        code=2,
    )


def _environment(home: str) -> dict[str, str]:
    env = {name: value for name in PASSTHROUGH if (value := os.environ.get(name))}
    env["TERM"] = "dumb"
    env["HOME"] = home
    return env


async def _first_line(stream: anyio.abc.ByteReceiveStream) -> bytes:
    data = b""
    while b"\n" not in data:
        try:
            chunk = await stream.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            break
        data += chunk
        if len(data) > _MAX_LINE:
            break
    return data.partition(b"\n")[0]


async def _collect(stream: anyio.abc.ByteReceiveStream | None, into: bytearray) -> None:
    if stream is None:
        return
    try:
        async for chunk in stream:
            into += chunk
            del into[: max(0, len(into) - 65536)]
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass


async def _handshake(command: Sequence[str], wait: float, stderr: bytearray) -> bytes | None:
    """The agent's first line of output (``None``: none within ``wait`` seconds)."""
    line: bytes | None = None
    with tempfile.TemporaryDirectory(prefix="acpio-registry-home-") as home:
        try:
            process = await anyio.open_process(
                list(command),
                env=_environment(home),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except OSError as exc:
            raise CliError(
                f"could not start `{shlex.join(command)}`: {exc.strerror or exc}. Check the "
                "command after `--launch --`, e.g. `--launch -- python my_agent.py`"
            ) from None
        async with process, anyio.create_task_group() as group:
            group.start_soon(_collect, process.stderr, stderr)
            try:
                assert process.stdin is not None and process.stdout is not None
                await process.stdin.send(json.dumps(INITIALIZE).encode() + b"\n")
                with anyio.move_on_after(wait):
                    line = await _first_line(process.stdout)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                line = b""
            finally:
                if process.returncode is None:
                    process.terminate()
                with anyio.move_on_after(2):
                    await process.wait()
                if process.returncode is None:
                    process.kill()
                    await process.wait()
                group.cancel_scope.cancel()
    return line


def run_launch(command: Sequence[str], *, timeout: float = 60.0) -> int:
    """Start the agent, send the verifier's ``initialize``, judge the answer; the exit code."""
    stderr = bytearray()
    name = shlex.join(command)
    line = anyio.run(_handshake, command, timeout, stderr)
    tail = stderr_tail(bytes(stderr))
    if line is None:
        raise CliError(
            f"`{name}` did not answer initialize within {timeout:g} s (the "
            "registry waits 60 to 120 s)",
            detail=tail or None,
        )
    if not line.strip():
        raise CliError(
            f"`{name}` exited or closed its output without answering initialize",
            detail=tail or None,
        )
    try:
        answer = json.loads(line)
    except json.JSONDecodeError:
        shown = line[:160].decode("utf-8", "replace")
        raise CliError(
            f"`{name}` wrote text that is not a protocol message to stdout before answering "
            f"initialize ({shown!r}); the registry refuses that: send logs to stderr",
            detail=tail or None,
        ) from None
    error = get_field(answer, "error")
    if error is not None:
        raise CliError(
            f"`{name}` answered initialize with an error: {json.dumps(error)}", detail=tail or None
        )
    methods = auth_types(get_field(get_field(answer, "result"), "authMethods"))
    shown = ", ".join(f"{method_id} ({kind})" for method_id, kind in methods)
    if not any(kind in _VALID for _, kind in methods):
        found = f"it offered {shown}" if methods else "it offered no authMethods"
        raise CliError(
            f"the registry would refuse `{name}`: its initialize answer must offer an auth "
            f"method of type `agent` or `terminal` to the registry's client, and {found}. "
            "With acpio, set Agent.auth_methods, e.g. (acpio.auth.terminal_method(),) and "
            "override Agent.terminal_login (see docs/publishing.md, examples/signin_agent.py)",
            detail=tail or None,
        )
    print(f"`{name}` passes the registry's launch check: it offers {shown}")
    sys.stdout.flush()
    return 0
