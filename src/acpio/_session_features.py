"""Session features beyond the prompt lifecycle: config, commands, elicitation, setup order.

How this works: :class:`_SessionFeatures` is a base class of
:class:`~acpio.Session` (like :class:`~acpio._lifecycle._PromptLifecycle`), so
the public methods live on the session while their logic lives in
:mod:`acpio._config`, :mod:`acpio._commands` and :mod:`acpio._elicitation`.

Setup order: editors drop updates for a session they do not know yet, so
everything a session sends while ``session/new`` or ``session/resume`` is
being answered (from :meth:`acpio.Agent.on_new_session` or
:meth:`acpio.Agent.on_resume_session`) is held: :meth:`_hold_setup` swaps the
session's two line senders for ones that append to a list (nothing waits, so
a hook that sends cannot deadlock against its own answer), and
:meth:`_release_setup`, called right after the answer was queued, restores
them and queues the held lines in order. If the writer has no room for them
all, the rest is sent by a task while later updates wait behind it (the
replay gate), so the order is kept either way.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import anyio
import anyio.abc

from . import schema
from ._commands import CommandInvocation, parse_command, validate_commands
from ._config import SessionConfig
from ._elicitation import ElicitationResult, complete_elicitation, elicit, elicit_url
from ._errors import ConnectionClosed

if TYPE_CHECKING:
    from ._agent import Agent
    from ._connection import Connection
    from ._peer import Peer
    from ._tool_call import ToolCallHandle

__all__ = ["_SessionFeatures"]


class _SessionFeatures:
    """Config options, slash commands, elicitation and setup holding of a session."""

    # Set by Session.__init__.
    config: SessionConfig
    _commands: list[schema.AvailableCommand]
    _setup_lines: list[bytes] | None
    _send_line: Callable[[bytes], Awaitable[None]]
    _try_send_line: Callable[[bytes], bool]
    _connection: Connection
    _task_group: anyio.abc.TaskGroup
    _peer: Peer
    _replay_gate: anyio.Event | None

    if TYPE_CHECKING:

        async def send(self, update: schema.SessionUpdate) -> None: ...

        def _update_held(self) -> None: ...

    # ---------------------------------------------------------------- commands

    @property
    def commands(self) -> list[schema.AvailableCommand]:
        """The slash commands currently advertised in this session (a copy)."""
        return list(self._commands)

    async def set_commands(self, commands: Sequence[schema.AvailableCommand]) -> None:
        """Replace the session's slash commands (``available_commands_update``).

        During session setup nothing extra is sent: the answer carries the list.

        :raises LocalProtocolError: for a repeated or invalid command name.
        """
        validate_commands(commands)
        self._commands = list(commands)
        if not self._in_setup:
            await self.send(schema.AvailableCommandsUpdate(available_commands=list(commands)))

    def parse_command(self, prompt: Sequence[schema.ContentBlock]) -> CommandInvocation | None:
        """The advertised command ``prompt`` invokes (``/name input``), if any."""
        return parse_command(prompt, self._commands)

    # ------------------------------------------------------------ elicitation

    def can_elicit(self, mode: str = "form") -> bool:
        """Whether the client advertised elicitation in ``mode`` (``"form"`` or ``"url"``)."""
        return self._peer.elicitation_url if mode == "url" else self._peer.elicitation_form

    async def elicit(
        self,
        message: str,
        requested_schema: schema.ElicitationSchema | Mapping[str, object],
        *,
        tool_call: ToolCallHandle | str | None = None,
    ) -> ElicitationResult:
        """Ask the user to fill a form (``elicitation/create``, form mode); returns the answer.

        ``requested_schema`` is an :class:`~acpio.schema.ElicitationSchema` or
        the same as JSON (``{"type": "object", "properties": {...},
        "required": [...]}``, primitive properties only). The request is scoped
        to this session and, with ``tool_call``, to one of its tool calls.
        While it is pending the session reports ``requires_action``, then
        ``running``. The answer is ``accepted`` (``result.content`` holds the
        values, checked against the schema), ``declined`` or ``dismissed``.
        When the work is cancelled meanwhile, ``$/cancel_request`` is sent and
        the cancellation propagates: an enclosing ``async with
        session.tool_call(...)`` ends ``cancelled``, the turn ``cancelled``.

        :raises ElicitationUnsupported: when the client did not advertise form
            elicitation (nothing is sent).
        :raises LocalProtocolError: for a schema that is not an elicitation schema
            (or requires a field it does not define); nothing is sent.
        :raises RemoteProtocolError: when accepted values do not match the schema.
        :raises ConnectionClosed: when the client went away (before or while asking).
        """
        return await elicit(self, message, requested_schema, tool_call=tool_call)  # type: ignore[arg-type]

    async def elicit_url(
        self,
        message: str,
        url: str,
        *,
        elicitation_id: str | None = None,
        tool_call: ToolCallHandle | str | None = None,
    ) -> ElicitationResult:
        """Ask the user to open ``url`` (``elicitation/create``, URL mode); returns the answer.

        ``accepted`` means only that the user agreed to open it; once the
        out-of-band interaction is done, call :meth:`complete_elicitation`
        with ``result.elicitation_id`` (fresh unless given). Pending,
        cancellation and refusal behave as in :meth:`elicit`.

        :raises ElicitationUnsupported: when the client did not advertise URL elicitation.
        """
        return await elicit_url(
            self,  # type: ignore[arg-type]
            message,
            url,
            elicitation_id=elicitation_id,
            tool_call=tool_call,
        )

    async def complete_elicitation(self, elicitation_id: str) -> None:
        """Tell the client a URL elicitation's interaction finished (``elicitation/complete``)."""
        await complete_elicitation(self, elicitation_id)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ setup

    def _setup_features(self, agent: Agent) -> None:
        """Give a fresh session the agent's declared config options and commands."""
        self.config._reset(agent.config_options)
        validate_commands(agent.commands)
        self._commands = list(agent.commands)

    @property
    def _in_setup(self) -> bool:
        return self._setup_lines is not None

    def _hold_setup(self) -> None:
        """Hold every line of this session until :meth:`_release_setup` (see the module doc)."""
        if self._setup_lines is not None:
            return
        lines: list[bytes] = []
        self._setup_lines = lines

        async def hold(line: bytes) -> None:
            lines.append(line)

        def try_hold(line: bytes) -> bool:
            lines.append(line)
            return True

        self._send_line = hold
        self._try_send_line = try_hold

    def _release_setup(self) -> None:
        """The answer was queued: send what was held, in order, before anything newer."""
        lines = self._setup_lines
        if lines is None:
            return
        self._setup_lines = None
        self._send_line = self._connection.line_sender
        self._try_send_line = self._connection.line_try_sender
        for index, line in enumerate(lines):
            if not self._try_send_line(line):
                gate = anyio.Event()
                previous = self._replay_gate
                self._replay_gate = gate
                self._update_held()
                self._task_group.start_soon(self._send_held, lines[index:], gate, previous)
                return

    async def _send_held(
        self, lines: list[bytes], gate: anyio.Event, previous: anyio.Event | None
    ) -> None:
        try:
            for line in lines:
                await self._send_line(line)
        except ConnectionClosed:
            pass  # the client went away: nobody is left to tell
        finally:
            if self._replay_gate is gate:
                self._replay_gate = previous
                self._update_held()
            gate.set()
