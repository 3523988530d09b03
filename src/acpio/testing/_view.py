"""What an editor displays: the client-side reconstruction of a session from its updates.

How this works: a `SessionView` folds the `session/update` notifications of one session, in the
order received, into plain state an editor would render (tool calls, terminals, messages, plans,
state, ...). Every rule is a client rule of ACP draft v2: upserts keyed by an ID where an omitted
field leaves the stored value unchanged, ``null`` clears it and a value replaces it (`msgspec.UNSET`
is "omitted", `None` is ``null``); collections (``content``, ``locations``) are replaced whole;
chunks append; ``_meta`` objects patch stored metadata by top-level key. Nothing here does I/O and
nothing is validated: the conformance checker judges the wire, the view only shows what a
client would show, so it never raises on odd but decodable input.
"""

from __future__ import annotations

import base64
import binascii
import difflib
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Final, Literal, TypeAlias

from msgspec import UnsetType

from acpio import schema
from acpio._protocol.values import FINAL_TOOL_CALL_STATUSES

__all__ = (
    "ClientView",
    "CompactionView",
    "MessageRole",
    "MessageView",
    "PlanView",
    "SessionInfoView",
    "SessionView",
    "TerminalView",
    "ToolCallView",
    "UsageView",
)

MessageRole: TypeAlias = Literal["user", "agent", "thought"]
"""Who a message belongs to: the user, the agent's answer, or the agent's reasoning."""

_FINAL_STATUSES: Final = FINAL_TOOL_CALL_STATUSES

_ToolCallPatch: TypeAlias = "schema.ToolCallUpdate | schema.ToolCallUpdateFields"
_Meta: TypeAlias = "dict[str, object] | UnsetType | None"


def _patch_meta(stored: dict[str, object], patch: _Meta) -> dict[str, object]:
    # ACP metadata patch: omitted = unchanged, null = clear, object = per top-level key
    # (a key set to null is removed; any other value replaces, never merged deeper).
    if isinstance(patch, UnsetType):
        return stored
    if patch is None:
        return {}
    merged = dict(stored)
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


def fields_of(view: type) -> list[str]:
    """The public fields and properties of a view class, in the order they are declared."""
    names: list[str] = []
    for klass in reversed(view.__mro__):
        slots = klass.__dict__.get("__slots__", ())
        declared = [*slots, *inspect.get_annotations(klass)]
        declared += [n for n, v in klass.__dict__.items() if isinstance(v, property)]
        names += [n for n in declared if not n.startswith("_") and n not in names]
    return names


class _NamedFields:
    """Views answer a misspelt attribute with the closest field and the list of fields."""

    __slots__ = ()

    if not TYPE_CHECKING:  # type checkers keep reporting unknown attributes themselves

        def __getattr__(self, name: str) -> object:
            if name.startswith("__"):
                raise AttributeError(name)
            fields = fields_of(type(self))
            close = difflib.get_close_matches(name, fields, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise AttributeError(
                f"{type(self).__name__!r} has no field {name!r}{hint} "
                f"Its fields: {', '.join(fields)}",
                name=name,
                obj=self,
            )


def _text_of(blocks: list[schema.ContentBlock]) -> str:
    return "".join(block.text for block in blocks if isinstance(block, schema.TextContent))


@dataclass(eq=False)
class ToolCallView(_NamedFields):
    """A tool call as a client displays it, folded from ``tool_call_update`` upserts and
    ``tool_call_content_chunk`` appends (and permission subjects, which apply like updates).

    A first-seen ID starts at the protocol defaults: no title or name, kind ``other``, status
    ``pending``, no content, locations or capabilities. Unknown kinds, statuses and content
    items are kept as sent (clients display them generically).
    """

    id: str
    """The ``toolCallId``, unique within the session."""
    title: str | None = None
    """Human-readable title; `None` before one is sent or after ``null``."""
    name: str | None = None
    """Programmatic tool name, when reported."""
    kind: str = "other"
    """Tool kind; ``null`` resets it to ``other``."""
    status: str = "pending"
    """Execution status; ``null`` resets it to ``pending``."""
    content: list[schema.ToolCallContent] = field(default_factory=list[schema.ToolCallContent])
    """Content items: replaced whole by an update's ``content``, appended to by chunks."""
    locations: list[schema.ToolCallLocation] = field(default_factory=list[schema.ToolCallLocation])
    """File locations, replaced whole by each update that carries them."""
    raw_input: object = None
    """Raw tool input as sent; `None` when not reported or cleared."""
    raw_output: object = None
    """Raw tool output as sent; `None` when not reported or cleared."""
    capabilities: schema.ToolCallCapabilities | None = None
    """Client-initiated controls currently advertised (e.g. cancellation)."""
    meta: dict[str, object] = field(default_factory=dict[str, object])
    """Stored ``_meta``, patched by top-level key."""

    @property
    def text(self) -> str:
        """The text of the ``content`` items that hold text blocks, joined in order."""
        return "".join(
            item.content.text
            for item in self.content
            if isinstance(item, schema.Content) and isinstance(item.content, schema.TextContent)
        )

    @property
    def terminal_ids(self) -> list[str]:
        """IDs of the terminals this tool call displays, in content order."""
        return [item.terminal_id for item in self.content if isinstance(item, schema.Terminal)]

    @property
    def diffs(self) -> list[schema.Diff]:
        """The diff content items, in content order."""
        return [item for item in self.content if isinstance(item, schema.Diff)]

    @property
    def is_final(self) -> bool:
        """Whether the status is final: ``completed``, ``failed`` or ``cancelled``."""
        return self.status in _FINAL_STATUSES

    def apply_patch(self, patch: _ToolCallPatch) -> None:
        """Apply a tool-call upsert's fields: ``content`` and ``locations`` are replaced whole,
        ``_meta`` is patched by top-level key, omitted fields are kept."""
        if not isinstance(patch.title, UnsetType):
            self.title = patch.title
        if not isinstance(patch.name, UnsetType):
            self.name = patch.name
        if not isinstance(patch.kind, UnsetType):
            self.kind = "other" if patch.kind is None else patch.kind
        if not isinstance(patch.status, UnsetType):
            self.status = "pending" if patch.status is None else patch.status
        if not isinstance(patch.content, UnsetType):
            self.content = list(patch.content or ())
        if not isinstance(patch.locations, UnsetType):
            self.locations = list(patch.locations or ())
        if not isinstance(patch.raw_input, UnsetType):
            self.raw_input = patch.raw_input
        if not isinstance(patch.raw_output, UnsetType):
            self.raw_output = patch.raw_output
        if not isinstance(patch.capabilities, UnsetType):
            self.capabilities = patch.capabilities
        self.meta = _patch_meta(self.meta, patch.meta)


@dataclass(eq=False)
class TerminalView(_NamedFields):
    """An agent-owned, display-only terminal, folded from ``terminal_update`` upserts and
    ``terminal_output_chunk`` appends.

    Each chunk is base64-decoded on its own and its bytes appended (never concatenating encoded
    text); a concrete ``output`` snapshot replaces every stored byte. A chunk or snapshot that
    is not valid base64 adds no bytes and is counted in `decode_errors`.
    """

    id: str
    """The ``terminalId``, unique within the session and never reused."""
    command: str | None = None
    """The command being run, when reported."""
    cwd: str | None = None
    """The command's absolute working directory, when reported."""
    size: schema.TerminalSize | None = None
    """The terminal size the command runs with, when reported."""
    capabilities: schema.TerminalCapabilities | None = None
    """Client-initiated controls currently advertised (e.g. cancellation)."""
    exit_status: schema.TerminalExitStatus | None = None
    """Exit information; its presence marks the terminal as exited."""
    meta: dict[str, object] = field(default_factory=dict[str, object])
    """Stored terminal-scoped ``_meta``, patched by top-level key."""
    decode_errors: int = 0
    """How many chunks or snapshots were not valid base64 (their bytes were dropped)."""
    _output: bytearray = field(default_factory=bytearray, repr=False)

    @property
    def output(self) -> bytes:
        """Every byte the client retains for this terminal, in order."""
        return bytes(self._output)

    @property
    def text(self) -> str:
        """`output` decoded as UTF-8 (invalid sequences replaced)."""
        return self._output.decode("utf-8", "replace")

    def set_output(self, data: bytes) -> None:
        """Replace the retained output (a client that runs the command itself knows it)."""
        self._output = bytearray(data)

    @property
    def exited(self) -> bool:
        """Whether a concrete ``exitStatus`` was reported (even without code or signal)."""
        return self.exit_status is not None

    @property
    def exit_code(self) -> int | None:
        """The reported exit code, when known."""
        code = None if self.exit_status is None else self.exit_status.exit_code
        return None if isinstance(code, UnsetType) else code

    @property
    def signal(self) -> str | None:
        """The signal that terminated the process, when known (e.g. ``SIGTERM``)."""
        signal = None if self.exit_status is None else self.exit_status.signal
        return None if isinstance(signal, UnsetType) else signal

    def _decode(self, data: str) -> bytes | None:
        try:
            return base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            self.decode_errors += 1
            return None

    def apply_update(self, update: schema.TerminalUpdate) -> None:
        """Apply a ``terminal_update``: an output snapshot replaces the retained output."""
        if not isinstance(update.command, UnsetType):
            self.command = update.command
        if not isinstance(update.cwd, UnsetType):
            self.cwd = update.cwd
        if not isinstance(update.size, UnsetType):
            self.size = update.size
        if not isinstance(update.capabilities, UnsetType):
            self.capabilities = update.capabilities
        if not isinstance(update.exit_status, UnsetType):
            self.exit_status = update.exit_status
        if not isinstance(update.output, UnsetType):
            if update.output is None:
                self._output = bytearray()
            else:
                snapshot = self._decode(update.output.data)
                if snapshot is not None:
                    # Authoritative: never merged with what was stored before.
                    self._output = bytearray(snapshot)
        self.meta = _patch_meta(self.meta, update.meta)

    def append_chunk(self, data: str) -> None:
        """Append one ``terminal_output_chunk`` (base64 ``data``) to the retained output."""
        chunk = self._decode(data)
        if chunk is not None:
            self._output += chunk


@dataclass(eq=False)
class MessageView(_NamedFields):
    """A user, agent or thought message, folded from full message upserts and chunks keyed by
    ``messageId``: a full update's ``content`` replaces everything (chunks included), ``null``
    or ``[]`` clears, omitted leaves it; each chunk appends one block.
    """

    role: MessageRole
    """``user``, ``agent`` (answer) or ``thought`` (reasoning)."""
    message_id: str
    """The agent-owned ``messageId``."""
    content: list[schema.ContentBlock] = field(default_factory=list[schema.ContentBlock])
    """Content blocks in display order (unknown block types kept as sent)."""
    meta: dict[str, object] = field(default_factory=dict[str, object])
    """Stored ``_meta`` of the message, patched by top-level key (chunk ``_meta`` is not)."""

    @property
    def text(self) -> str:
        """The text of the text blocks, joined in order."""
        return _text_of(self.content)


@dataclass(eq=False)
class PlanView(_NamedFields):
    """The current content of one plan: each ``plan_update`` replaces it whole."""

    plan_id: str
    """The ``planId``."""
    entries: list[schema.PlanEntry]
    """Structured entries; empty when the content is of an unknown type."""
    content: schema.PlanItems | schema.UnknownPlanUpdateContent
    """The last content as received (unknown content types kept raw)."""


@dataclass(eq=False)
class UsageView(_NamedFields):
    """The last reported context window use and cumulative cost."""

    used: int
    """Tokens currently in context."""
    size: int
    """Context window size in tokens."""
    cost: schema.Cost | None = None
    """Cumulative cost; kept when an update omits it, cleared by ``null``."""


@dataclass(eq=False)
class SessionInfoView(_NamedFields):
    """Session metadata from ``session_info_update`` patches."""

    title: str | None = None
    """Human-readable session title."""
    updated_at: str | None = None
    """RFC 3339 timestamp of the last activity."""
    meta: dict[str, object] = field(default_factory=dict[str, object])
    """Stored ``_meta``, patched by top-level key."""


@dataclass(eq=False)
class CompactionView(_NamedFields):
    """A context compaction: upserted by ``compaction_update``, its summary appended to by
    ``compaction_summary_chunk`` (a first-seen ID from a chunk starts ``in_progress``)."""

    compaction_id: str
    """The agent-owned compaction ID."""
    status: str = "in_progress"
    """Lifecycle status (unknown values kept as sent)."""
    summary: list[schema.ContentBlock] = field(default_factory=list[schema.ContentBlock])
    """The retained summary content."""
    error: str | None = None
    """Error details, when reported."""
    meta: dict[str, object] = field(default_factory=dict[str, object])
    """Stored ``_meta``, patched by top-level key."""


_MESSAGE_ROLES: Final[Mapping[type, MessageRole]] = {
    schema.UserMessage: "user",
    schema.UserMessageChunk: "user",
    schema.AgentMessage: "agent",
    schema.AgentMessageChunk: "agent",
    schema.AgentThought: "thought",
    schema.AgentThoughtChunk: "thought",
}


class SessionView(_NamedFields):
    """Everything a client displays for one session, rebuilt from its ``session/update``
    notifications applied in the order they were received.

    Call `apply` with each decoded update (and `apply_tool_call` with a permission request's
    tool-call subject, which clients apply like a ``tool_call_update``). All attributes are
    plain state to read; mutating them is not supported. ``help(SessionView)`` lists every
    field with what it holds, and a misspelt one (``view.plan``) raises an `AttributeError`
    naming the closest field (``plans``) and all of them.
    """

    # Declaration order: help() and the fields listed in errors follow it.
    __slots__ = {  # noqa: RUF023
        "session_id": "The session this view belongs to.",
        "tool_calls": "Tool calls by ``toolCallId``, in first-seen order.",
        "terminals": (
            "Terminals by ``terminalId``, in first-seen order (from an update or a reference)."
        ),
        "messages": "User, agent and thought messages in first-seen order.",
        "plans": "Plans by ``planId``, in first-seen order.",
        "state": (
            "``idle``, ``running``, ``requires_action``, or an unknown state as sent (which a "
            "client shows as busy, never as idle)."
        ),
        "stop_reasons": (
            "The stop reason of every idle update that ended foreground work (a transition from "
            "another state to idle), in order; `None` when that update carried none. Repeated "
            "idle snapshots are not completions and are not listed."
        ),
        "last_stop_reason": (
            "The stop reason of the last idle update that carried one (including snapshots)."
        ),
        "last_error": (
            "The error object of the last idle update with stop reason ``error`` (`None` when "
            "that update carried none)."
        ),
        "background": "The last reported background-work snapshot; `None` until one is reported.",
        "notices": "Every notice, in order.",
        "usage": "The last context window and cost report.",
        "info": "Session title, last activity and metadata.",
        "available_commands": "The last advertised slash commands.",
        "config_options": "The last reported configuration options.",
        "compactions": "Context compactions by ID, in first-seen order.",
        "unknown_updates": "Updates of a type this SDK does not know, kept verbatim in order.",
        "updates_applied": "How many updates were applied.",
        "_messages": "Messages by role and message ID, where chunks are appended.",
    }

    def __init__(self, session_id: str = "") -> None:
        """Start an empty view; a new session is ``idle`` until a state update says otherwise."""
        self.session_id: str = session_id
        self.tool_calls: dict[str, ToolCallView] = {}
        self.terminals: dict[str, TerminalView] = {}
        self.messages: list[MessageView] = []
        self.plans: dict[str, PlanView] = {}
        self.state: str = "idle"
        self.stop_reasons: list[str | None] = []
        self.last_stop_reason: str | None = None
        self.last_error: schema.Error | None = None
        self.background: list[schema.BackgroundWork] | None = None
        self.notices: list[schema.Notice] = []
        self.usage: UsageView | None = None
        self.info: SessionInfoView = SessionInfoView()
        self.available_commands: list[schema.AvailableCommand] | None = None
        self.config_options: list[schema.SessionConfigOption] | None = None
        self.compactions: dict[str, CompactionView] = {}
        self.unknown_updates: list[schema.UnknownSessionUpdate] = []
        self.updates_applied: int = 0
        self._messages: dict[tuple[MessageRole, str], MessageView] = {}

    @property
    def busy(self) -> bool:
        """Whether the client shows foreground work (any state other than ``idle``)."""
        return self.state != "idle"

    @property
    def user_messages(self) -> list[MessageView]:
        """The user messages, in order."""
        return [message for message in self.messages if message.role == "user"]

    @property
    def agent_messages(self) -> list[MessageView]:
        """The agent's answer messages (not thoughts), in order."""
        return [message for message in self.messages if message.role == "agent"]

    @property
    def thoughts(self) -> list[MessageView]:
        """The agent's reasoning messages, in order."""
        return [message for message in self.messages if message.role == "thought"]

    @property
    def agent_text(self) -> str:
        """The text of every agent answer message, joined in order (thoughts excluded)."""
        return "".join(message.text for message in self.agent_messages)

    def message(self, message_id: str, role: MessageRole | None = None) -> MessageView:
        """The message with `message_id` (of `role`, when given).

        :raises KeyError: when no such message was reported.
        """
        for message in self.messages:
            if message.message_id == message_id and (role is None or message.role == role):
                return message
        raise KeyError(message_id)

    def apply(self, update: schema.SessionUpdate) -> None:
        """Apply one decoded session update, as a client would on receiving it."""
        self.updates_applied += 1
        handler = self._HANDLERS.get(type(update))
        if handler is not None:
            handler(self, update)
        elif isinstance(update, schema.UnknownSessionUpdate):
            self.unknown_updates.append(update)
        elif isinstance(update, schema.UnknownStateUpdate):
            # A client must not present an unknown state as idle or as the previous state.
            self.state = update.state

    def apply_tool_call(self, patch: schema.ToolCallUpdate | schema.ToolCallUpdateFields) -> None:
        """Apply a tool-call upsert: a ``tool_call_update`` or a permission request's
        ``tool_call`` subject (clients apply it exactly like an update, creating the call if new).
        """
        call = self._tool_call(patch.tool_call_id)
        call.apply_patch(patch)
        if not isinstance(patch.content, UnsetType) and patch.content:
            self._track_terminal_refs(patch.content)

    # -- handlers ---------------------------------------------------------------------------

    def _tool_call(self, tool_call_id: str) -> ToolCallView:
        call = self.tool_calls.get(tool_call_id)
        if call is None:
            call = self.tool_calls[tool_call_id] = ToolCallView(tool_call_id)
        return call

    def terminal(self, terminal_id: str) -> TerminalView:
        """The view of terminal ``terminal_id``, created empty on first use."""
        terminal = self.terminals.get(terminal_id)
        if terminal is None:
            terminal = self.terminals[terminal_id] = TerminalView(terminal_id)
        return terminal

    def _track_terminal_refs(self, items: list[schema.ToolCallContent]) -> None:
        # The reference and the terminal's own updates may arrive in either order.
        for item in items:
            if isinstance(item, schema.Terminal):
                self.terminal(item.terminal_id)

    def _on_tool_call_update(self, update: schema.SessionUpdate) -> None:
        assert isinstance(update, schema.ToolCallUpdate)
        self.apply_tool_call(update)

    def _on_tool_call_chunk(self, update: schema.SessionUpdate) -> None:
        assert isinstance(update, schema.ToolCallContentChunk)
        self._tool_call(update.tool_call_id).content.append(update.content)
        self._track_terminal_refs([update.content])

    def _on_terminal_update(self, update: schema.SessionUpdate) -> None:
        assert isinstance(update, schema.TerminalUpdate)
        self.terminal(update.terminal_id).apply_update(update)

    def _on_terminal_chunk(self, update: schema.SessionUpdate) -> None:
        assert isinstance(update, schema.TerminalOutputChunk)
        self.terminal(update.terminal_id).append_chunk(update.data)

    def _message(self, role: MessageRole, message_id: str) -> MessageView:
        key = (role, message_id)
        message = self._messages.get(key)
        if message is None:
            message = self._messages[key] = MessageView(role, message_id)
            self.messages.append(message)
        return message

    def _on_message(self, update: schema.SessionUpdate) -> None:
        assert isinstance(update, (schema.UserMessage, schema.AgentMessage, schema.AgentThought))
        message = self._message(_MESSAGE_ROLES[type(update)], update.message_id)
        if not isinstance(update.content, UnsetType):
            message.content = list(update.content or ())
        message.meta = _patch_meta(message.meta, update.meta)

    def _on_message_chunk(self, update: schema.SessionUpdate) -> None:
        assert isinstance(
            update, (schema.UserMessageChunk, schema.AgentMessageChunk, schema.AgentThoughtChunk)
        )
        self._message(_MESSAGE_ROLES[type(update)], update.message_id).content.append(
            update.content
        )

    def _on_state(self, update: schema.SessionUpdate) -> None:
        assert isinstance(
            update,
            (schema.RunningStateUpdate, schema.RequiresActionStateUpdate, schema.IdleStateUpdate),
        )
        if not isinstance(update.background, UnsetType) and update.background is not None:
            # Omitted or null means "not reported", not "nothing running": keep the last one.
            self.background = list(update.background)
        if isinstance(update, schema.IdleStateUpdate):
            stop_reason = None if isinstance(update.stop_reason, UnsetType) else update.stop_reason
            if self.state != "idle":
                self.stop_reasons.append(stop_reason)
            if stop_reason is not None:
                self.last_stop_reason = stop_reason
            if stop_reason == "error":
                self.last_error = None if isinstance(update.error, UnsetType) else update.error
        self.state = update.state

    def _on_plan(self, update: schema.SessionUpdate) -> None:
        assert isinstance(update, schema.PlanUpdate)
        content = update.plan
        if isinstance(content, schema.PlanItems):
            self.plans[content.plan_id] = PlanView(content.plan_id, list(content.entries), content)
        else:
            # Unknown plan content still replaces earlier content for the same planId.
            plan_id = content.raw.get("planId")
            if isinstance(plan_id, str):
                self.plans[plan_id] = PlanView(plan_id, [], content)

    def _on_usage(self, update: schema.SessionUpdate) -> None:
        assert isinstance(update, schema.UsageUpdate)
        cost = self.usage.cost if self.usage is not None else None
        if not isinstance(update.cost, UnsetType):
            cost = update.cost
        self.usage = UsageView(update.used, update.size, cost)

    def _on_notice(self, update: schema.SessionUpdate) -> None:
        assert isinstance(update, schema.Notice)
        self.notices.append(update)

    def _on_session_info(self, update: schema.SessionUpdate) -> None:
        assert isinstance(update, schema.SessionInfoUpdate)
        if not isinstance(update.title, UnsetType):
            self.info.title = update.title
        if not isinstance(update.updated_at, UnsetType):
            self.info.updated_at = update.updated_at
        self.info.meta = _patch_meta(self.info.meta, update.meta)

    def apply_setup(
        self,
        config_options: list[schema.SessionConfigOption] | UnsetType | None,
        available_commands: list[schema.AvailableCommand] | UnsetType | None,
        *,
        later: Sequence[schema.SessionUpdate] = (),
    ) -> None:
        """Apply the ``configOptions`` and ``availableCommands`` of a ``session/new`` or
        ``session/resume`` answer (omitted or ``null``: none advertised).

        ``later`` are the session's updates that arrived after the answer and
        were applied already: a ``config_option_update`` or
        ``available_commands_update`` among them is newer than the answer and
        is kept.
        """
        if not any(isinstance(u, schema.ConfigOptionUpdate) for u in later):
            self.config_options = list(config_options) if isinstance(config_options, list) else None
        if not any(isinstance(u, schema.AvailableCommandsUpdate) for u in later):
            self.available_commands = (
                list(available_commands) if isinstance(available_commands, list) else None
            )

    @property
    def config_values(self) -> dict[str, str | bool]:
        """The current value of every known config option, by ``configId``."""
        values: dict[str, str | bool] = {}
        for option in self.config_options or ():
            if isinstance(option, schema.SessionConfigSelect | schema.SessionConfigBoolean):
                values[option.config_id] = option.current_value
        return values

    @property
    def command_names(self) -> list[str]:
        """The names of the advertised slash commands (without the ``/``), in order."""
        return [c.name for c in self.available_commands or () if isinstance(c, schema.Command)]

    def _on_commands(self, update: schema.SessionUpdate) -> None:
        assert isinstance(update, schema.AvailableCommandsUpdate)
        self.available_commands = list(update.available_commands)

    def _on_config(self, update: schema.SessionUpdate) -> None:
        assert isinstance(update, schema.ConfigOptionUpdate)
        self.config_options = list(update.config_options)

    def _compaction(self, compaction_id: str) -> CompactionView:
        compaction = self.compactions.get(compaction_id)
        if compaction is None:
            compaction = self.compactions[compaction_id] = CompactionView(compaction_id)
        return compaction

    def _on_compaction(self, update: schema.SessionUpdate) -> None:
        assert isinstance(update, schema.CompactionUpdate)
        compaction = self._compaction(update.compaction_id)
        compaction.status = update.status
        if not isinstance(update.summary, UnsetType):
            compaction.summary = list(update.summary or ())
        if not isinstance(update.error, UnsetType):
            compaction.error = update.error
        compaction.meta = _patch_meta(compaction.meta, update.meta)

    def _on_compaction_chunk(self, update: schema.SessionUpdate) -> None:
        assert isinstance(update, schema.CompactionSummaryChunk)
        self._compaction(update.compaction_id).summary.append(update.content)

    _HANDLERS: ClassVar[dict[type, Callable[[SessionView, schema.SessionUpdate], None]]] = {
        schema.ToolCallUpdate: _on_tool_call_update,
        schema.ToolCallContentChunk: _on_tool_call_chunk,
        schema.TerminalUpdate: _on_terminal_update,
        schema.TerminalOutputChunk: _on_terminal_chunk,
        schema.UserMessage: _on_message,
        schema.AgentMessage: _on_message,
        schema.AgentThought: _on_message,
        schema.UserMessageChunk: _on_message_chunk,
        schema.AgentMessageChunk: _on_message_chunk,
        schema.AgentThoughtChunk: _on_message_chunk,
        schema.RunningStateUpdate: _on_state,
        schema.RequiresActionStateUpdate: _on_state,
        schema.IdleStateUpdate: _on_state,
        schema.PlanUpdate: _on_plan,
        schema.UsageUpdate: _on_usage,
        schema.Notice: _on_notice,
        schema.SessionInfoUpdate: _on_session_info,
        schema.AvailableCommandsUpdate: _on_commands,
        schema.ConfigOptionUpdate: _on_config,
        schema.CompactionUpdate: _on_compaction,
        schema.CompactionSummaryChunk: _on_compaction_chunk,
    }


class ClientView(_NamedFields):
    """What a client displays for every session of a connection: one `SessionView` per
    session ID, created when the session is first mentioned."""

    __slots__ = {"sessions": "Session views by session ID, in first-seen order."}

    def __init__(self) -> None:
        """Start with no sessions."""
        self.sessions: dict[str, SessionView] = {}

    def session(self, session_id: str) -> SessionView:
        """The view of `session_id`, created empty on first use."""
        view = self.sessions.get(session_id)
        if view is None:
            view = self.sessions[session_id] = SessionView(session_id)
        return view

    def apply(self, notification: schema.UpdateSessionNotification) -> SessionView:
        """Apply the params of one ``session/update`` notification; returns its session view."""
        view = self.session(notification.session_id)
        view.apply(notification.update)
        return view

    def apply_json(self, params: bytes | str) -> SessionView:
        """Decode the JSON params of a ``session/update`` notification and apply them.

        :raises msgspec.ValidationError: when `params` is not a valid notification.
        :raises msgspec.DecodeError: when `params` is not JSON.
        """
        return self.apply(schema.decode(params, schema.UpdateSessionNotification))

    def apply_permission_request(self, params: schema.RequestPermissionRequest) -> SessionView:
        """Apply a permission request's ``tool_call`` subject to its tool call (clients apply it
        like a ``tool_call_update`` before showing the prompt); other subjects change nothing.
        """
        view = self.session(params.session_id)
        subject = params.subject
        if isinstance(subject, schema.ToolCallPermissionSubject):
            view.apply_tool_call(subject.tool_call)
        return view
