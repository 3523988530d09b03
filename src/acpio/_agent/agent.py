"""The Agent base class: what an agent author subclasses (served by :mod:`acpio._agent.serve`).

An agent overrides :meth:`Agent.prompt` and, optionally, the hooks (new,
resumed and closed sessions, slash commands, config options). The agent's
server (:mod:`acpio._agent.agent_server`) calls them; ``initialize``
negotiates the protocol version, and each session's update path
(:mod:`acpio._session.updates`) encodes updates for it, so agent code never
sees the version.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, ClassVar

import msgspec

from .. import schema
from .._errors import AgentStateError, RequestError

if TYPE_CHECKING:
    from .._features.commands import CommandInvocation
    from .session import Session

__all__ = ["Agent"]


class Agent:
    """Base class of an ACP agent: override :meth:`prompt`, optionally the hooks.

    Set ``info`` (name and version are required by the protocol) and
    ``prompt_capabilities`` if the agent accepts images, audio or embedded
    context. The SDK implements initialize (version negotiation), sessions
    (new, list, resume with replay, close, delete), the prompt lifecycle and
    cancellation, and advertises exactly what it serves: the baseline session
    methods, ``session/delete`` and additional directories, the prompt
    capabilities you set, the MCP transports of ``mcp_transports``, and
    ``auth_methods`` (built with :mod:`acpio.auth`; override :meth:`login`,
    :meth:`terminal_login`, :meth:`logout` and :meth:`signed_in` for them).

    Set ``config_options`` and ``commands`` to give every session pickers
    (model, mode, ...) and slash commands; the client's changes arrive in
    :meth:`set_config_option`, invocations in :meth:`command`. Updates sent
    from :meth:`on_new_session` and :meth:`on_resume_session` reach the client
    right after the answer (never before it: editors would drop them).

    Each prompt runs :meth:`prompt` as the session's foreground work; a
    prompt sent while one runs is accepted and queued (its ``messageId`` and
    ``user_message`` go out at once) and runs after the current turn's idle.

    One agent object serves every session of its connection (of the process, with
    :func:`acpio.run`), so an attribute set on ``self`` is shared by all of them: keep a
    session's state in a dict keyed by ``session.id`` (filled in :meth:`on_new_session`
    and :meth:`on_resume_session`, emptied in :meth:`on_close_session`), or in
    :attr:`acpio.Session.agent_state` to keep it across restarts.
    """

    # A class attribute usually; an instance may set its own (adapters name the agent they serve).
    info: schema.Implementation = schema.Implementation(name="acpio-agent", version="0.0.0")
    prompt_capabilities: ClassVar[schema.PromptCapabilities | None] = None
    auth_methods: ClassVar[Sequence[schema.AuthMethod] | None] = None
    config_options: ClassVar[Sequence[schema.SessionConfigOption]] = ()
    """Config options every new session starts with (:func:`acpio.select_option`,
    :func:`acpio.boolean_option`); sent in the ``session/new`` and ``session/resume``
    answers. Read them as ``session.config[config_id]``; change a session's list with
    :meth:`acpio.SessionConfig.replace` (e.g. in :meth:`on_new_session`)."""
    commands: ClassVar[Sequence[schema.AvailableCommand]] = ()
    """Slash commands every new session advertises (:func:`acpio.command`); sent in
    the session answers. A prompt invoking one goes to :meth:`command`."""
    mcp_transports: ClassVar[Collection[str]] = ("stdio",)
    """The MCP transports this agent connects to: ``"stdio"`` (the baseline, the default:
    ACP v1 requires every agent to accept stdio servers, and editors send the ones the user
    configured), ``"http"``, ``"sse"``. ``initialize`` advertises exactly these
    (``capabilities.session.mcp``) and ``session/new``/``resume`` refuse servers of any
    other transport with ``-32602``; ``()`` refuses every MCP server. :mod:`acpio.mcp`
    connects to them; an agent that uses none simply ignores the servers it accepted."""

    agent_state_version: ClassVar[int] = 1
    """The version of the state this agent saves with :meth:`acpio.Session.save_agent_state`.

    Kept with each saved state; raise it when the state's shape changes: a
    session reopened with a state of another version goes through
    :meth:`migrate_agent_state` first."""

    client_info: schema.Implementation | None = None
    """The client's ``info`` from its ``initialize`` request (the latest one, if one agent
    object serves several connections; use :meth:`on_initialize` to keep one per client)."""
    client_capabilities: schema.ClientCapabilities | None = None
    """The client's capabilities from ``initialize`` (``None`` if absent or malformed)."""

    async def prompt(self, session: Session, prompt: list[schema.ContentBlock]) -> str | None:
        """Do the work for one user prompt; return a stop reason (``end_turn`` if ``None``).

        Runs as the session's foreground work after the prompt was accepted,
        its ``user_message`` sent and ``running`` reported; the SDK then sends
        exactly one ``idle`` with the returned stop reason (a known one, or a
        ``_``-prefixed custom one). Cancellation (``session/cancel``) arrives
        as anyio cancellation; the SDK reports ``cancelled`` for you. An
        exception ends the turn with stop reason ``error`` and an error
        object; the prompt itself was already accepted.
        """
        raise NotImplementedError("override Agent.prompt to answer prompts")

    def model_provider(self, session: Session) -> str | None:
        """The GenAI provider of the model that answers ``session``'s next turn, for traces.

        With tracing on (see docs/tracing.md) each turn's span reports it as
        ``gen_ai.provider.name`` (``gen_ai.system`` in the default v1.36.0 form of the
        OpenTelemetry GenAI conventions), asked once as the turn starts: a value of
        the conventions' list (``openai``, ``anthropic``, ``gcp.gemini``, ...) or a
        name of your own. The default, ``None``, is reported as ``_OTHER``: a plain
        agent's model is unknown to acpio. The adapters answer from the session's model.
        """
        return None

    async def command(self, session: Session, invocation: CommandInvocation) -> str | None:
        """Run a slash command: a prompt that starts with ``/name`` of an advertised command.

        Runs exactly like :meth:`prompt` (same lifecycle, same stop reasons);
        ``invocation.input`` is the text after the name. The default gives the
        whole prompt to :meth:`prompt`.
        """
        return await self.prompt(session, invocation.prompt)

    async def set_config_option(self, session: Session, config_id: str, value: str | bool) -> None:
        """The client changed a config option (``session/set_config_option``).

        Called after the value was checked and applied (``session.config[config_id]``
        is already ``value``); raise :class:`~acpio.RequestError` to refuse, which
        restores the previous state. Other options may be changed here with
        :meth:`acpio.SessionConfig.set`/``replace``: the answer carries the full
        new state. The default accepts every valid value.
        """

    async def on_initialize(self, request: schema.InitializeRequest) -> None:
        """Called once the client initialized (its info and capabilities are stored)."""

    async def on_new_session(self, session: Session) -> None:
        """Called when a session is created, before ``session/new`` is answered.

        What it sends is held and goes out right after the answer, in order;
        config options and commands it sets are part of the answer itself.
        """

    async def on_resume_session(self, session: Session) -> None:
        """Called when a session is resumed, after any replay, before the response.

        A session reopened in a new process has its durable state back by then
        (:attr:`acpio.Session.agent_state`); declare its config options here if
        they are not the class's ``config_options``: the saved values are
        applied to them after this hook (a value an option no longer offers is
        dropped).
        """

    async def migrate_agent_state(self, session: Session, version: int, state: object) -> object:
        """Turn a reopened session's stored state of ``version`` into this agent's version.

        Called when a session is reopened (``session/resume``, v1
        ``session/load``) with a state saved under an ``agent_state_version``
        other than this agent's, before the replay and
        :meth:`on_resume_session`; ``state`` is the stored JSON value. Return the
        state to use (it is saved with this agent's version), or raise
        :class:`~acpio.AgentStateError` to refuse: the reopen is then answered
        ``-32603`` with the error's message. The default refuses.
        """
        raise AgentStateError(
            f"session {session.id} has agent state of version {version}, but this agent's "
            f"agent_state_version is {self.agent_state_version}; override "
            "Agent.migrate_agent_state to convert it"
        )

    async def on_close_session(self, session: Session) -> None:
        """Called after a session was closed (its work is cancelled by then)."""

    async def login(self, method_id: str) -> None:
        """Sign in with ``agent`` method ``method_id`` (``auth/login``, v1 ``authenticate``);
        raise to refuse (:meth:`~acpio.RequestError.auth_required` says "not signed in").

        Only called for an ``agent`` method the agent advertised. A ``terminal`` method
        never comes here: clients run it in a terminal (:meth:`terminal_login`), and one
        that still calls ``auth/login`` with its id gets success when :meth:`signed_in`
        is true, ``auth_required`` otherwise.
        """
        raise NotImplementedError("override Agent.login when auth_methods has an agent method")

    async def logout(self) -> None:
        """Sign the user out (``auth/logout``, v1 ``logout``): forget stored credentials, so
        :meth:`signed_in` is false until the next sign-in."""
        raise NotImplementedError("override Agent.logout when auth_methods is set")

    async def signed_in(self) -> bool:
        """Whether the user is signed in; the default ``True`` never asks for sign-in.

        While it is false and ``auth_methods`` is set, ``session/new`` and
        ``session/resume`` (v1 ``session/load`` too) are answered ``auth_required``
        (``-32000``), which tells the editor to offer the sign-in methods. Asked
        afresh for each of those requests (a key stored by terminal sign-in in
        another process counts at once).
        """
        return True

    async def terminal_login(self, method_id: str) -> None:
        """Run the interactive sign-in of ``terminal`` method ``method_id``.

        :func:`acpio.run` calls it instead of serving ACP when the process was
        started with that method's ``args`` and ``env`` (the editor does so in a
        terminal); stdin, stdout and stderr are the user's terminal.
        Return when signed in (exit status 0); raise :class:`~acpio.auth.SignInError`
        to fail with its message (exit status 1). :class:`acpio.auth.ApiKey`'s
        ``ask`` is the usual body.
        """
        raise NotImplementedError(
            "override Agent.terminal_login when auth_methods has a terminal method"
        )

    async def ext_method(self, method: str, params: msgspec.Raw | None) -> object:
        """Handle a ``_``-prefixed extension request; the default answers ``-32601``."""
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: msgspec.Raw | None) -> None:
        """Handle a ``_``-prefixed extension notification; ignored by default."""
