"""Errors the CLI reports as one readable paragraph (plus the agent's stderr tail), never a
traceback: the agent was not found, crashed at start, wrote text that is not a protocol
message to stdout, timed out or answered with an error."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Final

from .._errors import AcpError, ConnectionClosed, RemoteProtocolError, RequestError
from ..testing import AgentExitedError, AgentTimeoutError, MockClient

__all__ = ["CliError", "agent_failure", "stderr_tail"]

STDERR_TAIL_LINES: Final = 15
_MAX_SHOWN: Final = 160


class CliError(Exception):
    """Raised to end a command with a readable message (and ``detail``, e.g. a stderr tail)."""

    def __init__(self, message: str, *, detail: str | None = None, code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail
        self.code = code


def stderr_tail(data: bytes, lines: int = STDERR_TAIL_LINES) -> str:
    """The last ``lines`` lines of an agent's stderr, decoded."""
    text = data.decode("utf-8", "replace").rstrip()
    if not text:
        return ""
    tail = text.splitlines()[-lines:]
    return "\n".join(tail)


def _short(text: str) -> str:
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 1] + "…"


def _stdout_garbage(client: MockClient) -> str | None:
    for violation in client.checker.violations:
        if violation.rule == "stdout":
            return violation.raw
    return None


def agent_failure(
    command: Sequence[str], client: MockClient | None, exc: BaseException, doing: str
) -> CliError:
    """Describe why talking to the agent failed, in one paragraph with its stderr tail."""
    name = shlex.join(command)
    cause = exc.__cause__
    if isinstance(cause, OSError) and client is not None and client.returncode is None:
        reason = cause.strerror or str(cause)
        hint = (
            " Check the command after `--`: it must start the agent, for example "
            "`acpio inspect -- python my_agent.py`."
        )
        return CliError(f"could not start the agent `{name}`: {reason}.{hint}")
    if isinstance(exc, AgentTimeoutError):
        what = f"the agent `{name}` did not answer in time while {doing}."
    elif isinstance(exc, AgentExitedError | ConnectionClosed):
        code = client.returncode if client is not None else None
        how = f"exited with code {code}" if code is not None else "closed its output"
        what = f"the agent `{name}` {how} while {doing}."
    elif isinstance(exc, RequestError):
        what = (
            f"the agent `{name}` answered with an error while {doing}: "
            f"{_short(exc.message)} (code {exc.code})."
        )
    elif isinstance(exc, RemoteProtocolError):
        what = f"the agent `{name}` sent an invalid answer while {doing}: {_short(str(exc))}."
    elif isinstance(exc, AcpError):
        what = f"talking to the agent `{name}` failed while {doing}: {_short(exc.args[0])}."
    else:
        what = f"talking to the agent `{name}` failed while {doing}: {exc!r}."
    garbage = _stdout_garbage(client) if client is not None else None
    if garbage is not None:
        what += (
            f" It wrote text that is not a protocol message to stdout ({_short(garbage)!r}): "
            "stdout carries only ACP messages, so send logs and prints to stderr."
        )
    tail = stderr_tail(client.stderr) if client is not None else ""
    if tail:
        what += " The last lines of its stderr:"
    elif client is not None:
        what += " It wrote nothing to stderr."
    return CliError(what, detail=tail or None)
