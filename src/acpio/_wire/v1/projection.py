"""The v1 projection of a session's v2 updates: what a v1 client is shown for each.

How this works: acpio's model is v2; on a v1 connection every update a session
sends passes through its :class:`V1Projection`, held by the session's
:class:`~acpio._session.encoding.V1Encoding`, which returns the v1 updates (plain
mappings or encoded JSON, put in the envelope by that encoding) that show the same
thing, possibly none. It is pure bookkeeping, no I/O: the update path sends the
lines the encoding makes of what it returns, and asks it (through the encoding)
when a rate-limited refresh is due.

What it keeps per session, and why:

* tool calls: whether the client has seen each (the first report is v1
  ``tool_call``, later ones ``tool_call_update``) and its content. v1 has no
  ``tool_call_content_chunk``: ``content`` is replaced whole, so appended items
  are accumulated and the full array is sent, coalesced: when the bytes
  appended since the last send reach the size last sent (so each send at least
  doubles it), and whatever is still pending with the patch that ends the call,
  before a permission request about it, and at the end of the turn. Streaming
  content of final size ``F`` therefore costs fewer than ``3F`` bytes of content
  on the wire plus one envelope per send, in ``O(log F)`` sends, and the
  client's final view is the v2 view.
* agent-side terminals (a :class:`~acpio.TerminalHandle` the agent feeds): v1
  clients only show terminals they run themselves, so the output is shown as
  a text item in place of the ``terminal`` item of each tool call showing it:
  decoded with replacement, the newest :data:`TERMINAL_TEXT_BYTES` bytes,
  refreshed at most every :data:`TERMINAL_REFRESH_INTERVAL` seconds (and at
  once when the process exits), with the exit status at the end. Clients that
  advertise Zed's ``_meta.terminal_output`` convention are sent the raw output
  in ``_meta`` instead, as Zed's own agents do.
* values v1's closed enums lack map to the nearest v1 value; the real value is
  kept in ``_meta["acpio"]`` (see :data:`META_KEY`).

State updates have no v1 form (the ``session/prompt`` answer ends a v1 turn)
and are dropped; so are live ``user_message`` updates (a v1 client shows the
prompt it sent). Updates v1 cannot show are dropped with one debug line each.
"""

from __future__ import annotations

import base64
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, cast

import msgspec
from msgspec import UNSET

from ... import schema
from ..._protocol.diff_texts import whole_texts
from ..._protocol.peer import Peer
from ...schema._base import enc_hook
from .values import (
    V1_OPTION_KINDS,
    V1_PLAN_PRIORITIES,
    V1_PLAN_STATUSES,
    V1_TOOL_KINDS,
    V1_TOOL_STATUSES,
)

__all__ = [
    "META_KEY",
    "TERMINAL_REFRESH_INTERVAL",
    "TERMINAL_TEXT_BYTES",
    "V1Projection",
    "config_options",
    "mode_option",
    "modes",
]

logger = logging.getLogger(__name__)

V1Update = dict[str, object]
#: What :meth:`V1Projection.project` returns: v1 updates, as mappings or already encoded.
V1Encoded = V1Update | msgspec.Raw

_encode: Final = msgspec.json.Encoder(enc_hook=enc_hook).encode
_MESSAGE_CHUNK: Final = b'{"sessionUpdate":"agent_message_chunk","content":'
# A v1 content item of one text block, up to the text (its JSON string) and after it.
_TEXT_ITEM: Final = b'{"type":"content","content":{"type":"text","text":'
_TEXT_ITEM_END: Final = b"}}"
_THOUGHT_CHUNK: Final = b'{"sessionUpdate":"agent_thought_chunk","content":'

#: The ``_meta`` key under which the real v2 value of a mapped field is kept.
META_KEY: Final = "acpio"
#: Bytes of an agent-side terminal's newest output shown in a v1 tool call.
TERMINAL_TEXT_BYTES: Final = 64 * 1024
#: Seconds between two refreshes of a tool call showing agent-side terminal output.
TERMINAL_REFRESH_INTERVAL: Final = 0.1
#: The id sets of a projection start as this one empty set (most sessions never fill
#: one, and an empty set costs 216 bytes); the first id added makes the session's own.
_NO_IDS: Final[frozenset[str]] = frozenset()

_NEAREST_STATUS: Final = {"cancelled": "failed", "paused": "in_progress"}
# What a cancelled plan entry's text is followed by on v1 (which has no such status).
_CANCELLED_SUFFIX: Final = " (cancelled)"

# ------------------------------------------------------------------ the state


@dataclass
class _Call:
    announced: bool = False
    content: list[schema.ToolCallContent] = field(default_factory=lambda: [])
    # Each item's v1 JSON, encoded once (None: shown differently each time, a terminal).
    encoded: list[bytes | None] = field(default_factory=lambda: [])
    sent_size: int = 0  # bytes of the content array last sent
    pending: int = 0  # bytes appended since (0: nothing to send)
    terminals: set[str] = field(default_factory=set[str])
    released: bool = False  # ended: its content is no longer kept
    # What the client shows of the call, for a permission request about it.
    title: str = ""
    kind: str = "other"
    raw_input: object = None  # None: none shown


@dataclass
class _Terminal:
    output: bytearray = field(default_factory=bytearray)
    omitted: int = 0  # older bytes no longer shown
    command: str | None = None
    cwd: str | None = None
    exit_status: schema.TerminalExitStatus | None = None
    calls: list[str] = field(default_factory=lambda: [])
    dirty: bool = False
    last_refresh: float = float("-inf")
    introduced: bool = False  # _meta.terminal_info sent (Zed's convention)
    # Seen as an agent-side terminal (its terminal_update); until then a tool call's
    # terminal item is passed through (a terminal the client runs, or one not yet seen).
    agent_side: bool = False


def _object_copy(value: object) -> dict[str, object]:
    """A copy of ``value`` when it is a JSON object (its keys are strings), else ``{}``."""
    return dict(cast("dict[str, object]", value)) if isinstance(value, dict) else {}


def _meta_with(meta: object, extra: Mapping[str, object]) -> dict[str, object]:
    merged = _object_copy(meta)
    merged[META_KEY] = {**_object_copy(merged.get(META_KEY)), **extra}
    return merged


def _builtins(value: object) -> object:
    return schema.to_builtins(value)


def _added(ids: set[str] | frozenset[str], item: str) -> set[str]:
    """``ids`` with ``item`` added: the same set, or a new one in place of :data:`_NO_IDS`."""
    if isinstance(ids, set):
        ids.add(item)
        return ids
    return {*ids, item}


def _discard(ids: set[str] | frozenset[str], item: str) -> None:
    if isinstance(ids, set):
        ids.discard(item)


class V1Projection:
    """One session's v2 updates as v1 updates (see the module docstring)."""

    __slots__ = (
        "_calls",
        "_client_terminals",
        "_dirty",
        "_logged",
        "_terminals",
        "mode_id",
        "peer",
        "session_id",
    )

    def __init__(self, session_id: str, peer: Peer) -> None:
        self.session_id: Final = session_id
        self.peer: Final = peer
        self._calls: dict[str, _Call] = {}
        self._terminals: dict[str, _Terminal] = {}
        self._client_terminals: set[str] | frozenset[str] = _NO_IDS
        self._dirty: set[str] | frozenset[str] = _NO_IDS  # terminals with output not yet seen
        self._logged: set[str] | frozenset[str] = _NO_IDS
        #: The ``currentModeId`` the client was last told (``modes`` in an answer, or
        #: ``current_mode_update``); None before.
        self.mode_id: str | None = None

    def fresh(self) -> V1Projection:
        """A projection that has shown nothing yet (a replay rebuilds the client's view)."""
        projection = V1Projection(self.session_id, self.peer)
        if self._client_terminals:
            projection._client_terminals = set(self._client_terminals)
        return projection

    def mark_client_terminal(self, terminal_id: str) -> None:
        """``terminal_id`` runs on the client (``terminal/create``): pass its item through."""
        self._client_terminals = _added(self._client_terminals, terminal_id)

    # ------------------------------------------------------------ updates

    def project(
        self, update: schema.SessionUpdate, *, now: float, replay: bool = False
    ) -> Sequence[V1Encoded]:
        """The v1 updates that show ``update`` (possibly none), in order.

        ``now`` is the current time (for the terminal refresh rate); ``replay``
        is true while ``session/load`` replays the history.
        """
        if isinstance(update, schema.AgentMessageChunk):
            # The streaming hot path: spliced like the v2 one (no messageId on v1).
            return [msgspec.Raw(_MESSAGE_CHUNK + _encode(update.content) + b"}")]
        if isinstance(update, schema.ToolCallContentChunk):
            return self._content_chunk(update)
        if isinstance(update, schema.ToolCallUpdate):
            return self._tool_call(update, replay)
        if isinstance(update, schema.TerminalUpdate):
            return self._terminal_update(update, now, replay)
        if isinstance(update, schema.TerminalOutputChunk):
            try:
                data = base64.b64decode(update.data)
            except ValueError:
                return []
            return self.terminal_output(update.terminal_id, data, now=now)
        if isinstance(update, schema.AgentThoughtChunk):
            return [msgspec.Raw(_THOUGHT_CHUNK + _encode(update.content) + b"}")]
        if isinstance(update, schema.AgentMessage | schema.AgentThought):
            kind = (
                "agent_message_chunk"
                if isinstance(update, schema.AgentMessage)
                else "agent_thought_chunk"
            )
            blocks = update.content if isinstance(update.content, list) else []
            return [{"sessionUpdate": kind, "content": _builtins(block)} for block in blocks]
        if isinstance(update, schema.UserMessage):
            if not replay:
                return []  # a v1 client shows the prompt it sent itself
            blocks = update.content if isinstance(update.content, list) else []
            return [
                {"sessionUpdate": "user_message_chunk", "content": _builtins(block)}
                for block in blocks
            ]
        if isinstance(update, schema.UserMessageChunk):
            return [{"sessionUpdate": "user_message_chunk", "content": _builtins(update.content)}]
        if isinstance(update, schema.IdleStateUpdate):
            # The end of the turn: what is still pending goes out before the answer.
            return self.flush_all()
        if isinstance(update, schema.RunningStateUpdate | schema.RequiresActionStateUpdate):
            return []
        if isinstance(update, schema.PlanUpdate):
            return self._plan(update)
        if isinstance(update, schema.UsageUpdate | schema.SessionInfoUpdate):
            return [_builtins(update)]  # type: ignore[list-item]
        if isinstance(update, schema.AvailableCommandsUpdate):
            return [
                {
                    "sessionUpdate": "available_commands_update",
                    "availableCommands": [
                        _command(c)
                        for c in update.available_commands
                        if isinstance(c, schema.Command)
                    ],
                }
            ]
        if isinstance(update, schema.ConfigOptionUpdate):
            out: list[V1Update] = [
                {
                    "sessionUpdate": "config_option_update",
                    "configOptions": config_options(update.config_options),
                }
            ]
            out.extend(self.mode_moved(update.config_options))
            return out
        if isinstance(update, schema.Notice) and self.peer.notices:
            return [_builtins(update)]  # type: ignore[list-item]
        return self._dropped(update)

    def ending(
        self, chunk: schema.ToolCallContentChunk, patch: schema.ToolCallUpdate, *, now: float
    ) -> Sequence[V1Encoded]:
        """A call's last content item and the patch that ends it, as one update when the
        patch ends the call: the item is added to the content, which the final status
        carries whole (a client that reads only the last update still sees both)."""
        call = self._calls.get(chunk.tool_call_id)
        if call is None or not call.announced or call.released or not _ends(patch):
            return [*self.project(chunk, now=now), *self.project(patch, now=now)]
        call.content.append(chunk.content)
        self._link(call, chunk.tool_call_id, chunk.content)
        encoded = self._encoded(chunk.content)
        call.encoded.append(encoded)
        call.pending += max(1, len(encoded) if encoded is not None else 1)
        return self._tool_call(patch)

    def mode_moved(self, options: Sequence[object]) -> list[V1Update]:
        """A ``current_mode_update`` when the mode option's value is not the one the
        client was last told (then it is); nothing otherwise."""
        option = mode_option(options)
        if option is None or option.current_value == self.mode_id:
            return []
        self.mode_id = option.current_value
        return [{"sessionUpdate": "current_mode_update", "currentModeId": option.current_value}]

    def modes(self, options: Sequence[object]) -> dict[str, object] | None:
        """The ``modes`` of a session answer (see :func:`modes`); the client now knows it."""
        state = modes(options)
        option = mode_option(options)
        if option is not None:
            self.mode_id = option.current_value
        return state

    def _dropped(self, update: object) -> list[V1Update]:
        name = getattr(update, "session_update", type(update).__name__)
        if name not in self._logged:
            self._logged = _added(self._logged, str(name))
            logger.debug(
                "session %s: %s has no v1 form; not sent to this v1 client", self.session_id, name
            )
        return []

    def _plan(self, update: schema.PlanUpdate) -> list[V1Update]:
        plan = update.plan
        if not isinstance(plan, schema.PlanItems):
            return self._dropped(update)
        entries: list[dict[str, object]] = []
        for entry in plan.entries:
            # Never shown as done unless it is: v1 has no `cancelled`, so a cancelled
            # entry is `pending` with "(cancelled)" after its text; other values v1
            # lacks are `pending` too (the real value in `_meta`).
            known = entry.status in V1_PLAN_STATUSES
            item: dict[str, object] = {
                "content": entry.content + _CANCELLED_SUFFIX
                if entry.status == "cancelled"
                else entry.content,
                "priority": entry.priority if entry.priority in V1_PLAN_PRIORITIES else "medium",
                "status": entry.status if known else "pending",
            }
            extra = {
                k: v
                for k, v in (("status", entry.status), ("priority", entry.priority))
                if v not in (V1_PLAN_STATUSES if k == "status" else V1_PLAN_PRIORITIES)
            }
            if extra or isinstance(entry.meta, dict):
                item["_meta"] = _meta_with(entry.meta, extra) if extra else entry.meta
            entries.append(item)
        # v1 shows one plan: the one sent last.
        return [{"sessionUpdate": "plan", "entries": entries}]

    # --------------------------------------------------------- tool calls

    def _call(self, tool_call_id: str) -> _Call:
        call = self._calls.get(tool_call_id)
        if call is None:
            call = self._calls[tool_call_id] = _Call()
        return call

    def _tool_call(self, patch: schema.ToolCallUpdate, replay: bool = False) -> list[V1Update]:
        call = self._call(patch.tool_call_id)
        first = not call.announced
        call.announced = True
        out: V1Update = {
            "sessionUpdate": "tool_call" if first else "tool_call_update",
            "toolCallId": patch.tool_call_id,
        }
        extra: dict[str, object] = {}
        if isinstance(patch.title, str):
            out["title"] = patch.title
        elif first:
            out["title"] = ""
        if isinstance(patch.name, str) or (patch.name is None and not first):
            out["name"] = patch.name
        kind = patch.kind
        if kind is None:
            out["kind"] = "other"
        elif isinstance(kind, str):
            out["kind"] = kind if kind in V1_TOOL_KINDS else "other"
            if kind not in V1_TOOL_KINDS:
                extra["kind"] = kind
        status = patch.status
        if status is None:
            out["status"] = "pending"
        elif isinstance(status, str):
            if status in V1_TOOL_STATUSES:
                out["status"] = status
            else:
                out["status"] = _NEAREST_STATUS.get(status, "in_progress")
                extra["status"] = status
        if patch.content is None:
            self._set_content(call, patch.tool_call_id, [])
            out["content"] = []
        elif isinstance(patch.content, list):
            self._set_content(call, patch.tool_call_id, patch.content)
            out["content"] = self._content_of(call)
        elif call.pending and out.get("status") in ("completed", "failed"):
            out["content"] = self._content_of(call)  # the final view: pending chunks ride along
        if patch.locations is None:
            out["locations"] = []
        elif isinstance(patch.locations, list):
            out["locations"] = [_builtins(x) for x in patch.locations]
        if patch.raw_input is not UNSET:
            out["rawInput"] = _builtins(patch.raw_input)
        if patch.raw_output is not UNSET:
            out["rawOutput"] = _builtins(patch.raw_output)
        if extra or isinstance(patch.meta, dict):
            out["_meta"] = _meta_with(patch.meta, extra) if extra else patch.meta
        if "content" in out:
            self._introduce(out, call)
        self._remember(call, out)
        if out.get("status") in ("completed", "failed") and not replay:
            # (A replayed call comes before its terminals' output: kept until the end.)
            self._release(patch.tool_call_id, call)
        return [out]

    @staticmethod
    def _remember(call: _Call, out: V1Update) -> None:
        """Keep what the client now shows of the call (title, kind, raw input)."""
        title = out.get("title")
        if isinstance(title, str):
            call.title = title
        kind = out.get("kind")
        if isinstance(kind, str):
            call.kind = kind
        if "rawInput" in out:
            call.raw_input = out["rawInput"]

    def _release(self, tool_call_id: str, call: _Call) -> None:
        """A call that ended: forget its content (memory stays bounded in long sessions).

        What the client was last sent stays its view. Content appended after the
        end is dropped; a later patch with ``content`` replaces it as usual.
        """
        call.content = []
        call.encoded = []
        call.pending = 0
        call.released = True
        call.raw_input = None
        for terminal_id in call.terminals:
            terminal = self._terminals.get(terminal_id)
            if terminal is None:
                continue
            if tool_call_id in terminal.calls:
                terminal.calls.remove(tool_call_id)
            if not terminal.calls and terminal.exit_status is not None:
                del self._terminals[terminal_id]
                _discard(self._dirty, terminal_id)
        call.terminals = set()

    def _introduce(self, out: V1Update, call: _Call) -> None:
        """Zed's convention: ``_meta.terminal_info`` with the first content showing a terminal."""
        if not self.peer.terminal_output:
            return
        for terminal_id in sorted(call.terminals):
            terminal = self._terminals.get(terminal_id)
            if terminal is not None and not terminal.introduced:
                terminal.introduced = True
                merged = _object_copy(out.get("_meta"))
                merged["terminal_info"] = {"terminal_id": terminal_id, "cwd": terminal.cwd}
                out["_meta"] = merged

    def _set_content(
        self, call: _Call, tool_call_id: str, items: Sequence[schema.ToolCallContent]
    ) -> None:
        call.released = False
        call.content = list(items)
        call.encoded = [self._encoded(item) for item in call.content]
        call.pending = 0
        for terminal_id in call.terminals:
            terminal = self._terminals.get(terminal_id)
            if terminal is not None and tool_call_id in terminal.calls:
                terminal.calls.remove(tool_call_id)
        call.terminals = set()
        for item in items:
            self._link(call, tool_call_id, item)

    def _link(self, call: _Call, tool_call_id: str, item: object) -> None:
        if isinstance(item, schema.Terminal):
            terminal = self._terminal(item.terminal_id)
            if tool_call_id not in terminal.calls:
                terminal.calls.append(tool_call_id)
                call.terminals.add(item.terminal_id)

    def _terminal(self, terminal_id: str) -> _Terminal:
        terminal = self._terminals.get(terminal_id)
        if terminal is None:
            terminal = self._terminals[terminal_id] = _Terminal()
        return terminal

    def text_chunk(self, tool_call_id: str, text: str) -> list[V1Update]:
        """:meth:`project` of a ``tool_call_content_chunk`` of one text item (the streaming
        path of ``append_text``), without building the update: the same result."""
        call = self._call(tool_call_id)
        item = schema.Content(content=schema.TextContent(text=text))
        if call.released:
            return self._dropped(
                schema.ToolCallContentChunk(tool_call_id=tool_call_id, content=item)
            )
        call.content.append(item)
        encoded = _TEXT_ITEM + _encode(text) + _TEXT_ITEM_END
        call.encoded.append(encoded)
        call.pending += len(encoded)
        if not call.announced or call.pending < call.sent_size:
            return []
        return [self._content_update(tool_call_id, call)]

    def _content_chunk(self, chunk: schema.ToolCallContentChunk) -> list[V1Update]:
        call = self._call(chunk.tool_call_id)
        if call.released:
            return self._dropped(chunk)
        call.content.append(chunk.content)
        self._link(call, chunk.tool_call_id, chunk.content)
        encoded = self._encoded(chunk.content)
        call.encoded.append(encoded)
        call.pending += max(1, len(encoded) if encoded is not None else 1)
        if not call.announced or call.pending < call.sent_size:
            return []
        return [self._content_update(chunk.tool_call_id, call)]

    def _content_update(self, tool_call_id: str, call: _Call) -> V1Update:
        update: V1Update = {"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id}
        update["content"] = self._content_of(call)
        self._introduce(update, call)
        return update

    def _content_of(self, call: _Call) -> msgspec.Raw:
        """The call's whole v1 content (a JSON array); records its size as sent.

        Each item is encoded once, when it is added; only items shown differently
        each time (an agent-side terminal's text) are encoded again.
        """
        parts: list[bytes] = []
        for item, cached in zip(call.content, call.encoded, strict=True):
            encoded = cached if cached is not None else self._encode_items(item)
            if encoded:
                parts.append(encoded)
        array = b"[" + b",".join(parts) + b"]"
        call.pending = 0
        call.sent_size = len(array)
        return msgspec.Raw(array)

    def _encoded(self, item: schema.ToolCallContent) -> bytes | None:
        """``item``'s v1 items as JSON (without brackets), or None when it must be redone."""
        if isinstance(item, schema.Terminal):
            return None
        return self._encode_items(item)

    def _encode_items(self, item: schema.ToolCallContent) -> bytes:
        return schema.encode(self._items(item))[1:-1]

    def _items(self, item: schema.ToolCallContent) -> list[object]:
        """One v2 content item as v1 items (a diff may become several)."""
        if isinstance(item, schema.Content):
            return [{"type": "content", "content": _builtins(item.content)}]
        if isinstance(item, schema.Diff):
            return _diff_items(item)
        if isinstance(item, schema.Terminal):
            # Only a terminal the client runs itself, or one a client of Zed's
            # convention is sent the output of, is shown as a terminal item; any
            # other is the agent's (live or replayed): text, once it shows something.
            if item.terminal_id in self._client_terminals or self.peer.terminal_output:
                return [{"type": "terminal", "terminalId": item.terminal_id}]
            terminal = self._terminals.get(item.terminal_id)
            if terminal is None or not terminal.agent_side:
                return []  # not seen yet: its terminal_update refreshes the call
            return [_text_item(_terminal_text(terminal))]
        return []

    def flush_all(self) -> list[V1Update]:
        """Every pending content and terminal refresh, now (end of turn, before a request)."""
        out: list[V1Update] = []
        for terminal_id in list(self._dirty):
            out.extend(self._refresh(terminal_id, float("inf")))
        for tool_call_id, call in self._calls.items():
            if call.pending and call.announced:
                out.append(self._content_update(tool_call_id, call))
        return out

    def flush_call(self, tool_call_id: str) -> msgspec.Raw | None:
        """The whole content of a call with pending changes (for a request about it)."""
        call = self._calls.get(tool_call_id)
        if call is None or not call.pending:
            return None
        return self._content_of(call)

    # ---------------------------------------------------------- terminals

    def _terminal_update(
        self, update: schema.TerminalUpdate, now: float, replay: bool
    ) -> list[V1Update]:
        terminal_id = update.terminal_id
        if terminal_id in self._client_terminals:
            return []
        terminal = self._terminal(terminal_id)
        if not terminal.agent_side:
            terminal.agent_side = True
            if terminal.calls:  # shown already (a replay sends the call first): show it so
                terminal.dirty = True
                self._dirty = _added(self._dirty, terminal_id)
        out: list[V1Update] = []
        if isinstance(update.command, str) or update.command is None:
            terminal.command = update.command
        if isinstance(update.cwd, str) or update.cwd is None:
            terminal.cwd = update.cwd
        if isinstance(update.output, schema.TerminalOutput):
            try:
                data = base64.b64decode(update.output.data)
            except ValueError:
                data = b""
            terminal.output = bytearray()
            terminal.omitted = 0
            self._append(terminal, data)
            terminal.dirty = True
            self._dirty = _added(self._dirty, terminal_id)
        if isinstance(update.exit_status, schema.TerminalExitStatus):
            terminal.exit_status = update.exit_status
            terminal.dirty = True
            self._dirty = _added(self._dirty, terminal_id)
            now = float("inf")  # the exit shows at once
        if terminal.dirty and (replay or now >= terminal.last_refresh + TERMINAL_REFRESH_INTERVAL):
            out.extend(self._refresh(terminal_id, now))
        if terminal.exit_status is not None and not terminal.calls and not replay:
            # Exited and shown nowhere (a terminal of no tool call): nothing to keep.
            del self._terminals[terminal_id]
            _discard(self._dirty, terminal_id)
        return out

    def terminal_output(self, terminal_id: str, data: bytes, *, now: float) -> list[V1Update]:
        """Bytes an agent-side terminal printed: a refresh now, or later (see :meth:`due`)."""
        terminal = self._terminal(terminal_id)
        terminal.agent_side = True
        if self.peer.terminal_output:
            self._append(terminal, data)
            return [
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": tool_call_id,
                    "_meta": {
                        "terminal_output": {
                            "terminal_id": terminal_id,
                            "data": data.decode("utf-8", "replace"),
                        }
                    },
                }
                for tool_call_id in terminal.calls
            ]
        self._append(terminal, data)
        terminal.dirty = True
        self._dirty = _added(self._dirty, terminal_id)
        if now >= terminal.last_refresh + TERMINAL_REFRESH_INTERVAL:
            return self._refresh(terminal_id, now)
        return []

    def due(self) -> float | None:
        """When the next rate-limited terminal refresh is due (``None``: none pending)."""
        if not self._dirty:
            return None
        return min(self._terminals[t].last_refresh for t in self._dirty) + (
            TERMINAL_REFRESH_INTERVAL
        )

    def flush_due(self, now: float) -> list[V1Update]:
        """The terminal refreshes due at ``now``."""
        out: list[V1Update] = []
        for terminal_id in list(self._dirty):
            terminal = self._terminals[terminal_id]
            if now >= terminal.last_refresh + TERMINAL_REFRESH_INTERVAL:
                out.extend(self._refresh(terminal_id, now))
        return out

    def _append(self, terminal: _Terminal, data: bytes) -> None:
        output = terminal.output
        output += data
        excess = len(output) - TERMINAL_TEXT_BYTES
        if excess > 0:
            del output[:excess]
            terminal.omitted += excess

    def _refresh(self, terminal_id: str, now: float) -> list[V1Update]:
        terminal = self._terminals[terminal_id]
        terminal.dirty = False
        _discard(self._dirty, terminal_id)
        if now != float("inf"):
            terminal.last_refresh = now
        out: list[V1Update] = []
        for tool_call_id in terminal.calls:
            call = self._calls.get(tool_call_id)
            if call is None or not call.announced:
                continue
            update = self._content_update(tool_call_id, call)
            if self.peer.terminal_output and terminal.exit_status is not None:
                status = terminal.exit_status
                meta = update.get("_meta")
                update["_meta"] = {
                    **(meta if isinstance(meta, dict) else {}),
                    "terminal_exit": {
                        "terminal_id": terminal_id,
                        "exit_code": status.exit_code
                        if isinstance(status.exit_code, int)
                        else None,
                        "signal": status.signal if isinstance(status.signal, str) else None,
                    },
                }
            out.append(update)
        return out

    # -------------------------------------------------------- permissions

    def permission_request(self, params: schema.RequestPermissionRequest) -> V1Update:
        """The v1 ``session/request_permission`` params for a v2 request.

        ``toolCall`` carries what a v1 client shows the user (v1 has no title or
        command of its own on the request): the call's ``title``, ``kind`` and
        ``rawInput`` as the client was last sent them, and its content when the
        client has not seen all of it. For a command subject the kind is
        ``execute`` unless the call has a kind of its own, and ``rawInput`` is
        ``{command, cwd}`` unless the call has one; a command subject without a
        call is a synthesised ``execute`` call. A call the client has not seen
        is shown with the request's title. The request's own title,
        description, command and cwd are kept in ``toolCall._meta.acpio``.
        Options keep their ids; a kind v1 lacks is shown as ``reject_once`` (the
        real kind kept in ``_meta``), so nothing unrecognised is ever presented
        as approval.
        """
        subject = params.subject
        extra: dict[str, object] = {"title": params.title}
        if isinstance(params.description, str):
            extra["description"] = params.description
        tool_call: V1Update
        if isinstance(subject, schema.ToolCallPermissionSubject):
            tool_call = self._shown(subject.tool_call.tool_call_id, params.title, None)
        elif isinstance(subject, schema.CommandPermissionSubject):
            extra.update(command=subject.command, cwd=subject.cwd)
            command: dict[str, object] = {"command": subject.command, "cwd": subject.cwd}
            if isinstance(subject.tool_call_id, str) and subject.tool_call_id in self._calls:
                tool_call = self._shown(subject.tool_call_id, params.title, command)
            else:
                call_id = (
                    subject.tool_call_id
                    if isinstance(subject.tool_call_id, str)
                    else f"permission-{len(self._calls) + 1}"
                )
                call = self._call(call_id)
                call.announced = True
                call.title, call.kind, call.raw_input = params.title, "execute", command
                tool_call = {
                    "toolCallId": call_id,
                    "title": params.title,
                    "kind": "execute",
                    "status": "pending",
                    "rawInput": command,
                }
        else:
            tool_call = {"toolCallId": f"permission-{len(self._calls) + 1}", "title": params.title}
        content = self.flush_call(str(tool_call["toolCallId"]))
        if content is not None:
            tool_call["content"] = content
        tool_call["_meta"] = {META_KEY: extra}
        options: list[dict[str, object]] = []
        for option in params.options:
            item: dict[str, object] = {
                "optionId": option.option_id,
                "name": option.name,
                "kind": option.kind if option.kind in V1_OPTION_KINDS else "reject_once",
            }
            if option.kind not in V1_OPTION_KINDS:
                item["_meta"] = {META_KEY: {"kind": option.kind}}
            options.append(item)
        return {"sessionId": params.session_id, "toolCall": tool_call, "options": options}

    def _shown(self, tool_call_id: str, title: str, command: dict[str, object] | None) -> V1Update:
        """``toolCall`` of a request about a known call: what the client shows of it."""
        call = self._calls.get(tool_call_id)
        if call is None or not call.announced:
            return {"toolCallId": tool_call_id, "title": title}
        shown: V1Update = {"toolCallId": tool_call_id, "title": call.title or title}
        kind = call.kind
        if command is not None and kind == "other":
            kind = "execute"
        shown["kind"] = kind
        raw_input = call.raw_input if call.raw_input is not None else command
        if raw_input is not None:
            shown["rawInput"] = raw_input
        return shown


# ------------------------------------------------------------------ pieces


def _ends(patch: schema.ToolCallUpdate) -> bool:
    """Whether v1 shows ``patch`` as the end of its call (``completed`` or ``failed``)."""
    status = patch.status
    return isinstance(status, str) and _NEAREST_STATUS.get(status, status) in (
        "completed",
        "failed",
    )


def _text_item(text: str) -> dict[str, object]:
    return {"type": "content", "content": {"type": "text", "text": text}}


def _fence(text: str) -> str:
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=2)
    return "`" * (longest + 1)


def _terminal_text(terminal: _Terminal) -> str:
    """An agent-side terminal as v1 text: command, newest output, exit status."""
    body = bytes(terminal.output).decode("utf-8", "replace")
    fence = _fence(body)
    parts: list[str] = []
    if terminal.command:
        parts.append(f"$ {terminal.command}\n")
    if terminal.omitted:
        parts.append(f"[{terminal.omitted} earlier bytes of output not shown]\n")
    parts.append(f"{fence}\n{body}{'' if body.endswith(chr(10)) or not body else chr(10)}{fence}")
    status = terminal.exit_status
    if status is not None:
        if isinstance(status.signal, str):
            parts.append(f"\nterminated by signal {status.signal}")
        elif isinstance(status.exit_code, int):
            parts.append(f"\nexit code {status.exit_code}")
        else:
            parts.append("\nexited")
    return "".join(parts)


def _diff_items(diff: schema.Diff) -> list[object]:
    texts = whole_texts(diff)
    if texts is not None:
        items: list[object] = []
        for operation, path, old, new in texts:
            if new is None and old is not None:
                items.append({"type": "diff", "path": path, "oldText": old, "newText": ""})
            elif new is None:
                items.append(
                    _text_item(f"Binary file, {operation} {path}: there is no text diff to show.")
                )
            else:
                items.append({"type": "diff", "path": path, "oldText": old, "newText": new})
        return items
    # Built by hand: no whole texts. Describe the changes, with the patch if any.
    lines: list[str] = []
    for change in diff.changes:
        if isinstance(change, schema.UnknownDiffChange):
            lines.append("a change acpio cannot describe")
            continue
        operation = getattr(change, "operation", "change")
        lines.append(f"{operation} {change.path}")
    text = "\n".join(lines)
    if isinstance(diff.patch, schema.DiffPatch) and diff.patch.text:
        fence = _fence(diff.patch.text)
        text += f"\n\n{fence}diff\n{diff.patch.text}{fence}"
    return [_text_item(text or "(empty diff)")]


def _command(command: schema.Command) -> dict[str, object]:
    out: dict[str, object] = {"name": command.name, "description": command.description}
    if isinstance(command.input, schema.TextCommandInput):
        out["input"] = {"hint": command.input.hint}
    return out


def mode_option(options: Sequence[object]) -> schema.SessionConfigSelect | None:
    """The option v1 clients are offered as the session's modes: the first select of
    category ``mode``, or None."""
    for option in options:
        if isinstance(option, schema.SessionConfigSelect) and option.category == "mode":
            return option
    return None


def modes(options: Sequence[object]) -> dict[str, object] | None:
    """The v1 ``modes`` (``SessionModeState``) of config options: the values of the
    :func:`mode_option` (groups flattened) as ``availableModes``, its value as
    ``currentModeId``; None when there is no mode option."""
    option = mode_option(options)
    if option is None:
        return None
    available: list[object] = []
    for item in option.options:
        choices = item.options if isinstance(item, schema.SessionConfigSelectGroup) else [item]
        for choice in choices:
            mode: dict[str, object] = {"id": choice.value, "name": choice.name}
            if isinstance(choice.description, str):
                mode["description"] = choice.description
            available.append(mode)
    return {"currentModeId": option.current_value, "availableModes": available}


def config_options(options: Sequence[object]) -> list[object]:
    """v2 session config options in their v1 shape (``configId`` -> ``id``, untagged items)."""
    out: list[object] = []
    for option in options:
        if isinstance(option, schema.UnknownVariant):
            continue
        built: object = _builtins(option)
        if not isinstance(built, dict):
            continue
        raw = cast("dict[str, object]", built)
        if "configId" in raw:
            raw["id"] = raw.pop("configId")
        items = raw.get("options")
        if isinstance(items, list):
            raw["options"] = [_select_item(item) for item in cast("list[object]", items)]
        out.append(raw)
    return out


def _select_item(value: object) -> object:
    if not isinstance(value, dict):
        return value
    item = {k: v for k, v in cast("dict[str, object]", value).items() if k != "type"}
    if "groupId" in item:
        item["group"] = item.pop("groupId")
    options = item.get("options")
    if isinstance(options, list):
        item["options"] = [_select_item(x) for x in cast("list[object]", options)]
    return item
