"""Session history for ``session/resume`` replay, and the store that keeps sessions.

How this works: every update a session sends passes through
:meth:`InMemoryHistory.record`, which folds it into one record per thing an
editor displays (a message, a tool call, a terminal, a plan, a notice) using
the protocol's patch rules, in the order each thing first appeared. Replay
emits one complete update per record: whole messages instead of chunks, each
tool call with its merged final state, each terminal as a snapshot of its
bytes with its exit status. Terminal scrollback and streamed tool-call
content are bounded (see :class:`HistoryLimits`), so a long-running session
does not keep every byte it ever streamed.

A persistent store implements :class:`SessionStore` (and a :class:`History`
per session) and is passed to the agent; nothing else changes.
"""

from __future__ import annotations

import base64
import datetime
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec

from . import schema

__all__ = [
    "History",
    "HistoryLimits",
    "InMemoryHistory",
    "InMemorySessionStore",
    "SessionRecord",
    "SessionStore",
]


class History(Protocol):
    """What a session records of itself so that it can be replayed."""

    def record(self, update: schema.SessionUpdate) -> None:
        """Fold one sent update into the history."""

    def record_terminal_output(self, terminal_id: str, data: bytes) -> None:
        """Append raw terminal bytes (sent as ``terminal_output_chunk``)."""

    def replay(self) -> Iterator[schema.SessionUpdate]:
        """The updates that rebuild what an editor showed, oldest first."""


@dataclass(frozen=True)
class HistoryLimits:
    """Bounds on what replay keeps: the newest bytes and items win."""

    terminal_bytes: int = 1024 * 1024
    tool_call_items: int = 1000
    records: int = 10_000


@dataclass
class _Message:
    kind: str
    message_id: str
    content: list[schema.ContentBlock] = field(default_factory=list)


@dataclass
class _ToolCall:
    state: schema.ToolCallUpdate
    content: deque[schema.ToolCallContent]
    has_content: bool = False


@dataclass
class _Terminal:
    state: schema.TerminalUpdate
    output: bytearray = field(default_factory=bytearray)


_MESSAGE_KINDS: dict[type, str] = {}
_CHUNK_KINDS: dict[type, str] = {}


def _init_kinds() -> None:
    _MESSAGE_KINDS.update(
        {schema.UserMessage: "user", schema.AgentMessage: "agent", schema.AgentThought: "thought"}
    )
    _CHUNK_KINDS.update(
        {
            schema.UserMessageChunk: "user",
            schema.AgentMessageChunk: "agent",
            schema.AgentThoughtChunk: "thought",
        }
    )


_init_kinds()
_CHUNKS = (schema.UserMessageChunk, schema.AgentMessageChunk, schema.AgentThoughtChunk)
_MESSAGES = (schema.UserMessage, schema.AgentMessage, schema.AgentThought)
_SKIPPED = (
    schema.RunningStateUpdate,
    schema.IdleStateUpdate,
    schema.RequiresActionStateUpdate,
    schema.UsageUpdate,
)


class InMemoryHistory:
    """The default :class:`History`: compact records kept in memory."""

    def __init__(self, limits: HistoryLimits | None = None) -> None:
        self.limits = limits or HistoryLimits()
        self._records: dict[tuple[str, str], object] = {}
        self._sequence = 0
        # Dispatch on the exact class: this runs for every update a session sends.
        self._fold: dict[type, Callable[[Any], None]] = {
            schema.ToolCallContentChunk: self._fold_content_chunk,
            schema.ToolCallUpdate: self._merge_tool_call,
            schema.TerminalUpdate: self._merge_terminal,
            schema.PlanUpdate: self._fold_plan,
            schema.UserMessageChunk: self._fold_chunk,
            schema.AgentMessageChunk: self._fold_chunk,
            schema.AgentThoughtChunk: self._fold_chunk,
            schema.UserMessage: self._fold_message,
            schema.AgentMessage: self._fold_message,
            schema.AgentThought: self._fold_message,
        }
        for skipped in _SKIPPED:
            self._fold[skipped] = self._fold_skip

    def _add(self, key: tuple[str, str], value: object) -> None:
        if len(self._records) >= self.limits.records:
            del self._records[next(iter(self._records))]
        self._records[key] = value

    def record(self, update: schema.SessionUpdate) -> None:
        """Fold one update into the records (see the module docstring)."""
        fold = self._fold.get(type(update))
        if fold is None:
            if isinstance(update, _SKIPPED):
                return
            self._sequence += 1
            self._add(("other", str(self._sequence)), update)
            return
        fold(update)

    def _fold_content_chunk(self, update: schema.ToolCallContentChunk) -> None:
        call = self._records.get(("call", update.tool_call_id))
        if isinstance(call, _ToolCall):
            call.content.append(update.content)
            call.has_content = True

    def _fold_chunk(self, update: schema.ContentChunk) -> None:
        self._message(_CHUNK_KINDS[type(update)], update.message_id).content.append(update.content)

    def _fold_message(
        self, update: schema.UserMessage | schema.AgentMessage | schema.AgentThought
    ) -> None:
        message = self._message(_MESSAGE_KINDS[type(update)], update.message_id)
        if isinstance(update.content, list):
            message.content = list(update.content)
        elif update.content is None:
            message.content = []

    def _fold_plan(self, update: schema.PlanUpdate) -> None:
        plan_id = getattr(update.plan, "plan_id", "plan")
        self._records.pop(("plan", plan_id), None)
        self._add(("plan", plan_id), update)

    def _fold_skip(self, update: object) -> None:
        pass

    def _message(self, kind: str, message_id: str) -> _Message:
        key = ("message", f"{kind}:{message_id}")
        message = self._records.get(key)
        if not isinstance(message, _Message):
            message = _Message(kind, message_id)
            self._add(key, message)
        return message

    def _merge_tool_call(self, patch: schema.ToolCallUpdate) -> None:
        key = ("call", patch.tool_call_id)
        call = self._records.get(key)
        if not isinstance(call, _ToolCall):
            call = _ToolCall(
                schema.ToolCallUpdate(tool_call_id=patch.tool_call_id),
                deque(maxlen=self.limits.tool_call_items),
            )
            self._add(key, call)
        changes = {
            name: value
            for name in patch.__struct_fields__
            if (value := getattr(patch, name)) is not msgspec.UNSET and name != "content"
        }
        call.state = msgspec.structs.replace(call.state, **changes)
        if patch.content is not msgspec.UNSET:
            call.content.clear()
            call.content.extend(patch.content or ())
            call.has_content = True

    def _merge_terminal(self, patch: schema.TerminalUpdate) -> None:
        key = ("terminal", patch.terminal_id)
        current = self._records.get(key)
        if not isinstance(current, _Terminal):
            current = _Terminal(schema.TerminalUpdate(terminal_id=patch.terminal_id))
            self._add(key, current)
        changes = {
            name: value
            for name in patch.__struct_fields__
            if (value := getattr(patch, name)) is not msgspec.UNSET and name != "output"
        }
        current.state = msgspec.structs.replace(current.state, **changes)
        if isinstance(patch.output, schema.TerminalOutput):
            current.output = bytearray(base64.b64decode(patch.output.data))
            self._trim(current)
        elif patch.output is None:
            current.output.clear()

    def record_terminal_output(self, terminal_id: str, data: bytes) -> None:
        """Append streamed terminal bytes, keeping the newest ``terminal_bytes``."""
        key = ("terminal", terminal_id)
        current = self._records.get(key)
        if not isinstance(current, _Terminal):
            current = _Terminal(schema.TerminalUpdate(terminal_id=terminal_id))
            self._add(key, current)
        current.output += data
        self._trim(current)

    def _trim(self, terminal: _Terminal) -> None:
        excess = len(terminal.output) - self.limits.terminal_bytes
        if excess > 0:
            del terminal.output[:excess]

    def replay(self) -> Iterator[schema.SessionUpdate]:
        """One complete update per record, in first-seen order."""
        for value in list(self._records.values()):
            if isinstance(value, _Message):
                cls = {
                    "user": schema.UserMessage,
                    "agent": schema.AgentMessage,
                    "thought": schema.AgentThought,
                }[value.kind]
                yield cls(message_id=value.message_id, content=list(value.content))
            elif isinstance(value, _Terminal):
                yield msgspec.structs.replace(
                    value.state,
                    output=schema.TerminalOutput(data=base64.b64encode(value.output).decode()),
                )
            elif isinstance(value, _ToolCall):
                if value.has_content:
                    yield msgspec.structs.replace(value.state, content=list(value.content))
                else:
                    yield value.state
            else:
                yield value  # type: ignore[misc]


@dataclass
class SessionRecord:
    """What a store keeps of one session besides its history."""

    session_id: str
    cwd: str
    additional_directories: list[str]
    history: History
    title: str | None = None
    updated_at: str = field(
        default_factory=lambda: datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    )

    def touch(self) -> None:
        """Mark the session as updated now."""
        self.updated_at = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


class SessionStore(Protocol):
    """Where sessions live between ``session/new`` and ``session/resume``."""

    def create(self, session_id: str, cwd: str, additional_directories: list[str]) -> SessionRecord:
        """Create and keep a new session record."""

    def get(self, session_id: str) -> SessionRecord | None:
        """The record of a session, or ``None``."""

    def list(self) -> list[SessionRecord]:
        """Every session, most recently updated first."""

    def delete(self, session_id: str) -> bool:
        """Forget a session; False if it was unknown."""


class InMemorySessionStore:
    """The default :class:`SessionStore`: sessions live as long as the agent process."""

    def __init__(self, limits: HistoryLimits | None = None) -> None:
        self._records: dict[str, SessionRecord] = {}
        self._limits = limits

    def create(self, session_id: str, cwd: str, additional_directories: list[str]) -> SessionRecord:
        """Create and keep a new session record with an in-memory history."""
        record = SessionRecord(
            session_id, cwd, list(additional_directories), InMemoryHistory(self._limits)
        )
        self._records[session_id] = record
        return record

    def get(self, session_id: str) -> SessionRecord | None:
        """The record of a session, or ``None``."""
        return self._records.get(session_id)

    def list(self) -> list[SessionRecord]:
        """Every session, most recently updated first."""
        return sorted(self._records.values(), key=lambda r: r.updated_at, reverse=True)

    def delete(self, session_id: str) -> bool:
        """Forget a session; False if it was unknown."""
        return self._records.pop(session_id, None) is not None
