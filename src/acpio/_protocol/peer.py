"""What the connected client speaks and offers, fixed once ``initialize`` succeeds.

The agent server fills one :class:`Peer` per connection from the client's
``initialize`` request, whatever protocol version it speaks, and hands it to
every session. Session code asks the peer ("can the client run a terminal?",
"may I elicit with a form?") instead of reading version-specific capability
structs, so the protocol version stays at the connection boundary.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from .. import schema

__all__ = ["TERMINAL_AUTH_META", "Peer"]

#: The ``_meta`` key of terminal sign-in: ``true`` in a client's capabilities, a launch
#: descriptor on an auth method (the convention that predates ``auth.terminal``).
TERMINAL_AUTH_META: Final = "terminal-auth"


@dataclass(frozen=True, slots=True)
class Peer:
    """The negotiated protocol version and the client-side services the client advertised.

    Every flag is ``False`` unless the client advertised the capability in
    ``initialize``: the agent never calls a client method the client did not offer.
    """

    protocol_version: int = schema.PROTOCOL_VERSION
    #: v1 only: the client runs commands for the agent (``terminal/*`` requests).
    terminal: bool = False
    #: v1 only: ``fs/read_text_file`` (sees the editor's unsaved buffers).
    read_text_file: bool = False
    #: v1 only: ``fs/write_text_file``.
    write_text_file: bool = False
    #: ``elicitation/create`` in form mode.
    elicitation_form: bool = False
    #: ``elicitation/create`` in URL mode.
    elicitation_url: bool = False
    #: v1 only: ``session.notices``, so ``notice`` updates may be sent.
    notices: bool = False
    #: v1 only: Zed's ``_meta.terminal_output`` convention (agent-side terminal output in
    #: ``_meta`` of tool call updates, shown as a live terminal).
    terminal_output: bool = False
    #: Terminal sign-in (``terminal`` auth methods) may be offered: the client sent
    #: ``capabilities.auth.terminal`` (v1 ``clientCapabilities.auth.terminal: true``) or the
    #: ``_meta`` marker ``"terminal-auth": true`` that shipping clients and the ACP registry's
    #: verifier send instead.
    terminal_auth: bool = False
    #: The client sent that ``_meta`` marker: it reads the legacy launch descriptor
    #: ``_meta["terminal-auth"]`` (``command``, ``args``, ``label``) of a method.
    terminal_auth_meta: bool = False

    @classmethod
    def from_v2(cls, protocol_version: int, capabilities: schema.ClientCapabilities) -> Peer:
        """The peer of a v2 client, from its ``initialize`` capabilities."""
        elicitation = capabilities.elicitation
        form = url = False
        if isinstance(elicitation, schema.ElicitationCapabilities):
            form = isinstance(elicitation.form, schema.ElicitationFormCapabilities)
            url = isinstance(elicitation.url, schema.ElicitationUrlCapabilities)
        auth = capabilities.auth
        typed = isinstance(auth, schema.ClientAuthCapabilities) and isinstance(
            auth.terminal, schema.TerminalAuthCapabilities
        )
        meta = capabilities.meta
        marked = isinstance(meta, dict) and meta.get(TERMINAL_AUTH_META) is True
        return cls(
            protocol_version=protocol_version,
            elicitation_form=form,
            elicitation_url=url,
            terminal_auth=typed or marked,
            terminal_auth_meta=marked,
        )
