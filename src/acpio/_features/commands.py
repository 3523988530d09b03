"""Slash commands: advertise them, and receive an invocation as a typed command.

How this works: the agent declares its commands with :func:`command` (as
:attr:`acpio.Agent.commands`, copied into every new session) and changes a
session's list with :meth:`acpio.Session.set_commands` (one
``available_commands_update``, or nothing extra during session setup, since
the ``session/new`` and ``session/resume`` answers carry ``availableCommands``).

ACP runs a command as an ordinary prompt whose text starts with ``/name``; for
a command with a text input, everything typed after the name is its input.
:func:`parse_command` recognizes a prompt that invokes one of the session's
advertised commands and returns a :class:`CommandInvocation`; the prompt
handler of every session (``prompt_handler`` in
:mod:`acpio._agent.agent_server`) gives such a prompt to :meth:`acpio.Agent.command`
instead of :meth:`acpio.Agent.prompt`. A ``/word``
that is not an advertised command stays a plain prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from msgspec import UNSET

from .. import schema
from .._errors import LocalProtocolError

__all__ = ["CommandInvocation", "command", "parse_command", "validate_commands"]


def command(name: str, description: str, *, hint: str | None = None) -> schema.Command:
    """A slash command the user invokes as ``/name``; with ``hint``, it takes text input.

    ``hint`` is shown while the input is still empty (``TextCommandInput``).

    :raises LocalProtocolError: for an empty name, or one with whitespace or a leading ``/``.
    """
    _check_name(name)
    return schema.Command(
        name=name,
        description=description,
        input=schema.TextCommandInput(hint=hint) if hint is not None else UNSET,
    )


def _check_name(name: str) -> None:
    if not name or any(c.isspace() for c in name) or name.startswith("/"):
        raise LocalProtocolError(
            f"command name {name!r} must be non-empty, without whitespace and without "
            "the leading '/' (the client adds it)"
        )


def validate_commands(commands: Sequence[schema.AvailableCommand]) -> None:
    """Check what the protocol requires of an advertised command list.

    :raises LocalProtocolError: for a repeated or invalid name.
    """
    seen: set[str] = set()
    for entry in commands:
        if isinstance(entry, schema.UnknownVariant):
            continue  # an extension command: sent as is
        if not isinstance(entry, schema.Command):  # pyright: ignore[reportUnnecessaryIsInstance]
            # Not what the type says, but what an untyped caller may pass.
            raise LocalProtocolError(f"expected a command (acpio.command(...)), got {entry!r}")
        _check_name(entry.name)
        if entry.name in seen:
            raise LocalProtocolError(f"command {entry.name!r} is advertised twice")
        seen.add(entry.name)


@dataclass(frozen=True, slots=True)
class CommandInvocation:
    """A prompt that invokes an advertised slash command: ``/name input``.

    ``input`` is the text typed after the name (leading whitespace removed;
    empty when none), ``command`` the advertised command, ``prompt`` the
    whole prompt as sent (its other content blocks, such as resources, included).
    """

    name: str
    input: str
    command: schema.Command
    prompt: list[schema.ContentBlock] = field(repr=False)


def parse_command(
    prompt: Sequence[schema.ContentBlock], commands: Sequence[schema.AvailableCommand]
) -> CommandInvocation | None:
    """The command ``prompt`` invokes, if its text starts with ``/`` and an advertised name.

    Only the first content block is looked at, and only if it is text.
    """
    if not prompt:
        return None
    first = prompt[0]
    if not isinstance(first, schema.TextContent):
        return None
    text = first.text.lstrip()
    if not text.startswith("/"):
        return None
    body = text[1:]
    end = next((i for i, c in enumerate(body) if c.isspace()), len(body))
    name, rest = body[:end], body[end:]
    if not name:
        return None
    for entry in commands:
        if isinstance(entry, schema.Command) and entry.name == name:
            return CommandInvocation(name, rest.lstrip(), entry, list(prompt))
    return None
