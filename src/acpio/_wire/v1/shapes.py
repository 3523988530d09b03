"""ACP v1 wire shapes of the client methods an agent calls (``terminal/*``, ``fs/*``).

How this works: acpio's model types are v2 (:mod:`acpio.schema`); v1 differs
only at the connection boundary. Updates are projected by
:mod:`acpio._wire.v1.projection`, and the few v1 requests the agent sends to a v1
client have these hand-written Structs (from ``schema/v1/schema.json``), sent
with :meth:`acpio.Session._client_request` and decoded with :func:`decoder`,
which first reads the answer as the v1 schema says (:mod:`acpio._wire.v1.lenient`:
a field marked default-on-error that does not match, an ``exitCode`` of ``1.5``
or ``2**64``, a numeric ``signal``, is absent).
Only a v1 connection whose :class:`~acpio._protocol.peer.Peer` advertises the service
may be asked (``peer.terminal``, ``peer.read_text_file``, ``peer.write_text_file``).
"""

from __future__ import annotations

from typing import Generic, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

from .lenient import lenient, loads

__all__ = [
    "CreateTerminalRequest",
    "CreateTerminalResponse",
    "EnvVariable",
    "KillTerminalRequest",
    "ReadTextFileRequest",
    "ReadTextFileResponse",
    "ReleaseTerminalRequest",
    "TerminalExitStatus",
    "TerminalOutputRequest",
    "TerminalOutputResponse",
    "WaitForTerminalExitRequest",
    "WaitForTerminalExitResponse",
    "V1Decoder",
    "WriteTextFileRequest",
    "decoder",
]

T = TypeVar("T")


class _V1(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    """Base of the v1 Structs: camelCase, ``UNSET`` fields omitted, unknown fields ignored."""


class EnvVariable(_V1):
    """``{name, value}``: one environment variable of a v1 ``terminal/create``."""

    name: str
    value: str


class CreateTerminalRequest(_V1):
    """v1 ``terminal/create``: the client starts ``command`` and answers its ``terminalId``."""

    session_id: str
    command: str
    args: list[str] | UnsetType = UNSET
    env: list[EnvVariable] | UnsetType = UNSET
    cwd: str | None | UnsetType = UNSET
    output_byte_limit: int | None | UnsetType = UNSET


class CreateTerminalResponse(_V1):
    """The answer to ``terminal/create``."""

    terminal_id: str


class TerminalOutputRequest(_V1):
    """v1 ``terminal/output``: the output so far, and the exit status once exited."""

    session_id: str
    terminal_id: str


class TerminalExitStatus(_V1):
    """How a client-run process ended: an exit code or a signal name."""

    exit_code: int | None | UnsetType = UNSET
    signal: str | None | UnsetType = UNSET


class TerminalOutputResponse(_V1):
    """The answer to ``terminal/output``."""

    output: str
    truncated: bool
    exit_status: TerminalExitStatus | None | UnsetType = UNSET


class WaitForTerminalExitRequest(_V1):
    """v1 ``terminal/wait_for_exit``: answered once the command exited."""

    session_id: str
    terminal_id: str


class WaitForTerminalExitResponse(_V1):
    """The answer to ``terminal/wait_for_exit``."""

    exit_code: int | None | UnsetType = UNSET
    signal: str | None | UnsetType = UNSET


class KillTerminalRequest(_V1):
    """v1 ``terminal/kill``: stop the command, keep the terminal."""

    session_id: str
    terminal_id: str


class ReleaseTerminalRequest(_V1):
    """v1 ``terminal/release``: kill if running, then free the terminal (always send it)."""

    session_id: str
    terminal_id: str


class ReadTextFileRequest(_V1):
    """v1 ``fs/read_text_file`` (sees the editor's unsaved buffers); ``path`` is absolute."""

    session_id: str
    path: str
    line: int | None | UnsetType = UNSET
    limit: int | None | UnsetType = UNSET


class ReadTextFileResponse(_V1):
    """The answer to ``fs/read_text_file``."""

    content: str


class WriteTextFileRequest(_V1):
    """v1 ``fs/write_text_file``; ``path`` is absolute. The answer is ``{}`` (or ``null``)."""

    session_id: str
    path: str
    content: str


class V1Decoder(Generic[T]):
    """Decodes a v1 answer into ``type_`` as the v1 schema says to read it: first the
    lenient fields of its definition (the class's name) are applied, then the Struct."""

    def __init__(self, type_: type[T]) -> None:
        self.type: type[T] = type_
        self.definition: str = type_.__name__

    def decode(self, raw: bytes) -> T:
        """The answer as ``type``; :raises msgspec.ValidationError: when it is not one."""
        return msgspec.convert(lenient(self.definition, loads(raw)), self.type)


def decoder(type_: type[T]) -> V1Decoder[T]:
    """A decoder of a v1 answer, for :meth:`acpio.Session._client_request`'s ``decode``."""
    return V1Decoder(type_)
