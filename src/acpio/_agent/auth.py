"""Sign-in: ready-made auth methods, an API key kept for the user, terminal sign-in.

How this works: an agent lists its methods in ``Agent.auth_methods`` (built with
:func:`terminal_method` and :func:`agent_method`). At ``initialize`` the server
offers them through :func:`offered_methods`: a ``terminal`` method only to a
client that announced terminal sign-in, by ``auth.terminal`` or by the ``_meta``
marker ``"terminal-auth": true`` (what shipping editors and the ACP registry's
verifier send); a client that sent the marker also gets the launch descriptor
it reads, ``_meta["terminal-auth"]`` with the command that starts this very
program again (:func:`relaunch_command`) plus the method's arguments.

An editor runs terminal sign-in by starting the agent's command with the
method's ``args`` (and ``env``) in a terminal. :func:`acpio.run` notices that
(:func:`requested_terminal_method`) and runs ``Agent.terminal_login`` there
instead of serving ACP; exit status 0 means signed in.

:class:`ApiKey` is the credential most agents need: an environment variable
wins, else a file under the user's state directory (``ACPIO_STATE_DIR``, else
``$XDG_STATE_HOME`` or the platform's equivalent), written by terminal sign-in
with mode ``0600`` and removed by ``logout``.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final, TextIO

import msgspec
from msgspec import UNSET

from .. import schema
from .._errors import SignInError
from .._protocol.peer import TERMINAL_AUTH_META, Peer
from .._store.store_paths import state_dir

__all__ = [
    "ApiKey",
    "agent_method",
    "offered_methods",
    "relaunch_command",
    "requested_terminal_method",
    "terminal_method",
]

#: The arguments of :func:`terminal_method` unless told otherwise.
LOGIN_ARGS: Final = ("--login",)


def terminal_method(
    method_id: str = "terminal-login",
    name: str = "Sign in in a terminal",
    *,
    args: Sequence[str] = LOGIN_ARGS,
    env: Mapping[str, str] | None = None,
    description: str | None = None,
) -> schema.AuthMethodTerminal:
    """A ``terminal`` auth method: the editor starts the agent again with ``args`` (and ``env``)
    in a terminal, and :func:`acpio.run` runs ``Agent.terminal_login`` there.

    The arguments (or variables) are what tells that run apart from serving ACP, so at
    least one is required.

    :raises ValueError: for an empty ``method_id`` or ``name``, or neither ``args`` nor ``env``.
    """
    _check_ids(method_id, name)
    if isinstance(args, str):
        raise ValueError(f"args must be a list of arguments, not the string {args!r}")
    if not args and not env:
        raise ValueError(
            "a terminal method needs args (e.g. ['--login']) or env that tell the sign-in "
            "run apart from an ordinary start of the agent"
        )
    return schema.AuthMethodTerminal(
        method_id=method_id,
        name=name,
        description=description if description is not None else UNSET,
        args=list(args) if args else UNSET,
        env=[schema.EnvVariable(name=k, value=v) for k, v in env.items()] if env else UNSET,
    )


def agent_method(
    method_id: str = "agent-login", name: str = "Sign in", *, description: str | None = None
) -> schema.AuthMethodAgent:
    """An ``agent`` auth method: the client calls ``auth/login`` (v1 ``authenticate``) with
    its id and ``Agent.login`` signs the user in by itself (a browser, a device code, ...).

    :raises ValueError: for an empty ``method_id`` or ``name``.
    """
    _check_ids(method_id, name)
    return schema.AuthMethodAgent(
        method_id=method_id,
        name=name,
        description=description if description is not None else UNSET,
    )


def _check_ids(method_id: str, name: str) -> None:
    if not method_id:
        raise ValueError("an auth method needs a non-empty method_id")
    if not name:
        raise ValueError("an auth method needs a non-empty name (the editor shows it)")


def _env(method: schema.AuthMethodTerminal) -> dict[str, str]:
    return {v.name: v.value for v in method.env} if isinstance(method.env, list) else {}


def _args(method: schema.AuthMethodTerminal) -> list[str]:
    return list(method.args) if isinstance(method.args, list) else []


def requested_terminal_method(
    methods: Sequence[schema.AuthMethod] | None,
    argv: Sequence[str],
    environ: Mapping[str, str],
) -> schema.AuthMethodTerminal | None:
    """The terminal method this process was started for, else ``None`` (serve ACP).

    A method is requested when its ``args`` appear in ``argv`` (the program's
    arguments, without the program) one after the other, wherever: the protocol
    appends them to the configured command, the registry's text replaces the
    command's arguments with them; and each of its ``env`` variables has its value.
    When several match, the one with the most arguments wins.
    """
    found: schema.AuthMethodTerminal | None = None
    for method in methods or ():
        if not isinstance(method, schema.AuthMethodTerminal):
            continue
        args, env = _args(method), _env(method)
        if not args and not env:
            continue
        if args and not _contains(list(argv), args):
            continue
        if any(environ.get(name) != value for name, value in env.items()):
            continue
        if found is None or len(args) > len(_args(found)):
            found = method
    return found


def _contains(argv: list[str], part: list[str]) -> bool:
    return any(argv[i : i + len(part)] == part for i in range(len(argv) - len(part) + 1))


def relaunch_command() -> list[str]:
    """The command line that starts this program again, without its own arguments.

    The interpreter, then what names the program (a script's absolute path, or
    ``-m module``); a frozen program is its own executable. A console script
    installed by ``uvx``/``pip`` is a script too.
    """
    if getattr(sys, "frozen", False):
        return [sys.executable]
    orig, argv = sys.orig_argv, sys.argv
    prefix = orig[1 : len(orig) - len(argv) + 1] if len(orig) >= len(argv) else []
    program = [
        os.path.abspath(part) if i == len(prefix) - 1 and os.path.isfile(part) else part
        for i, part in enumerate(prefix)
    ]
    return [sys.executable, *program]


def _legacy_descriptor(method: schema.AuthMethodTerminal) -> dict[str, object]:
    command = relaunch_command()
    descriptor: dict[str, object] = {
        "label": method.name,
        "command": command[0],
        "args": [*command[1:], *_args(method)],
    }
    if env := _env(method):
        descriptor["env"] = env
    return descriptor


def offered_methods(
    methods: Sequence[schema.AuthMethod] | None, peer: Peer
) -> list[schema.AuthMethod]:
    """The methods ``initialize`` offers this client (v2 shapes; v1 converts them).

    ``terminal`` methods only when the client announced terminal sign-in
    (:attr:`Peer.terminal_auth`); with the ``_meta`` marker they also carry the launch
    descriptor ``_meta["terminal-auth"]`` (unless the agent set one itself).
    """
    offered: list[schema.AuthMethod] = []
    for method in methods or ():
        if not isinstance(method, schema.AuthMethodTerminal):
            offered.append(method)
        elif peer.terminal_auth_meta:
            meta = dict(method.meta) if isinstance(method.meta, dict) else {}
            meta.setdefault(TERMINAL_AUTH_META, _legacy_descriptor(method))
            offered.append(msgspec.structs.replace(method, meta=meta))
        elif peer.terminal_auth:
            offered.append(method)
    return offered


class ApiKey:
    """An API key for the agent: the environment variable ``env`` when it is set, else the
    key that terminal sign-in stored in ``<state dir>/<agent name>/<file_name>``.

    The file is written with mode ``0600`` in a directory of mode ``0700``; the state
    directory is ``ACPIO_STATE_DIR`` if set, else the platform's per-user state directory
    (``$XDG_STATE_HOME`` or ``~/.local/state`` on Linux), the same place as the agent's
    session store. Each call reads the environment afresh.
    """

    def __init__(self, agent_name: str, *, env: str | None = None, file_name: str = "api-key"):
        if not agent_name:
            raise ValueError("ApiKey needs the agent's name (it names the key's directory)")
        if not file_name or os.sep in file_name or file_name in (".", ".."):
            raise ValueError(f"file_name must be a plain file name, got {file_name!r}")
        self.agent_name: Final = agent_name
        self.env: Final = env
        self.file_name: Final = file_name

    @property
    def path(self) -> Path:
        """Where terminal sign-in stores the key."""
        return state_dir(self.agent_name) / self.file_name

    def get(self) -> str | None:
        """The key: the environment variable's value if set and not blank, else the stored
        key, else ``None`` (not signed in)."""
        if self.env is not None:
            value = os.environ.get(self.env, "").strip()
            if value:
                return value
        try:
            stored = self.path.read_text(encoding="utf-8").strip()
        except (FileNotFoundError, NotADirectoryError):
            return None
        return stored or None

    def save(self, key: str) -> Path:
        """Store ``key`` (stripped) for later runs; returns the file's path.

        :raises SignInError: for a blank key, or when the file cannot be written.
        """
        key = key.strip()
        if not key:
            raise SignInError("no key was entered; nothing was stored")
        path = self.path
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            temporary = path.with_name(f".{path.name}.{os.getpid()}")
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                file.write(key + "\n")
            os.replace(temporary, path)
        except OSError as exc:
            raise SignInError(f"could not store the key in {path}: {exc.strerror or exc}") from exc
        return path

    def clear(self) -> bool:
        """Forget the stored key (``logout``); returns whether one was stored. The
        environment variable, if set, still signs the user in."""
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            self.path.unlink()
            return True
        return False

    def ask(
        self,
        *,
        prompt: str = "API key: ",
        stdin: TextIO | None = None,
        stderr: TextIO | None = None,
    ) -> Path:
        """Ask for the key on the terminal and store it; returns the file's path.

        In a terminal the key is read without echo; from a pipe, one line is read.
        The prompt and the confirmation go to stderr. Blocks: call it from
        ``Agent.terminal_login``, where the process does nothing else.

        :raises SignInError: when no key was entered (an empty line, end of input).
        """
        source = stdin if stdin is not None else sys.stdin
        out = stderr if stderr is not None else sys.stderr
        if source.isatty():
            import getpass  # noqa: PLC0415 - only terminal sign-in reads a password

            key = getpass.getpass(prompt, stream=out)
        else:
            out.write(prompt)
            out.flush()
            key = source.readline()
        path = self.save(key)
        out.write(f"Signed in: the key is stored in {path}\n")
        out.flush()
        return path
