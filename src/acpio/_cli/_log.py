"""The session log: what an editor shows, rebuilt from the wire, printed as it becomes final.

How this works: :class:`SessionLog` reads transcript entries (every line both
ways, in order; the mock client's live transcript or a recorded one) and folds
``session/update`` notifications into the testing kit's :class:`SessionView`,
exactly as an editor would, including permission subjects. Each message, tool
call, plan, notice and stop reason becomes an *item* in order of first
appearance. After every entry, items that are finished are printed to the log
for good: a tool call once its status is final, a message once something
follows it or the turn ends, a permission prompt at once (and the answer when
it is given). Unfinished items are drawn in the live footer (terminal only).
The same code renders a live session and a ``--replay``, so both look alike.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, cast

import msgspec
from rich.console import Group, RenderableType
from rich.text import Text

from .. import schema
from .._json import as_object
from ..testing import (
    ElicitationRequest,
    PermissionRequest,
    SessionView,
    TranscriptEntry,
)
from ..testing._conformance import ConformanceChecker, Violation
from ..testing._v1_client import (
    V1Updates,
    initialize_response,
    permission_tool_call,
    prompt_echo,
    prompt_end,
)
from ..testing._v1_terminals import show_terminal_answer
from ..testing._view import MessageRole
from ._blocks import (
    answer_line,
    message_block,
    notice_line,
    permission_block,
    plan_block,
    stop_line,
    terminal_block,
    tool_call_block,
    usage_line,
)
from ._features import (
    commands_block,
    config_block,
    elicitation_answer_line,
    elicitation_block,
)
from ._output import Output
from ._safe_text import safe, visible

__all__ = ["SessionLog"]

_AGENT: Final = "agent->client"
_V1_CLIENT_CALLS: Final = ("terminal/", "fs/")


class _Envelope(msgspec.Struct):
    id: object = msgspec.UNSET
    method: object = msgspec.UNSET
    params: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    result: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    error: object = msgspec.UNSET


class _Outcome(msgspec.Struct):
    outcome: dict[str, object] | None = None


_decode_envelope = msgspec.json.Decoder(_Envelope).decode
_decode_object = msgspec.json.Decoder(dict[str, object]).decode
_decode_outcome = msgspec.json.Decoder(_Outcome).decode


def _key(value: object) -> object:
    # JSON-RPC ids: 1 and "1" are different requests, and true is not 1.
    return (type(value).__name__, value)


@dataclass(eq=False)
class _Item:
    kind: str
    key: object
    payload: object = None
    committed: bool = False


@dataclass(eq=False)
class _Session:
    id: str
    cwd: str | None
    view: SessionView
    items: list[_Item] = field(default_factory=list[_Item])
    open: dict[object, _Item] = field(default_factory=dict[object, _Item])
    state: str = "idle"
    shown: dict[str, list[schema.ToolCallContent]] = field(
        default_factory=dict[str, list[schema.ToolCallContent]]
    )
    owners: dict[str, str] = field(default_factory=dict[str, str])
    counter: itertools.count[int] = field(default_factory=itertools.count)
    usage: schema.UsageUpdate | None = None  # the latest, shown once before the turn's end


class SessionLog:
    """Renders one connection's transcript as an editor's session log (see the module doc).

    ``answered_by`` says who answers permission prompts (shown with each
    answer). ``label`` is shown with the agent's name. ``checker`` shows
    protocol violations inline; with ``feed_checker`` the log feeds it every
    entry itself (for a replay; the mock client feeds its own).
    """

    def __init__(
        self,
        output: Output,
        *,
        answered_by: str = "",
        label: str | None = None,
        show_connect: bool = True,
        show_sessions: bool = True,
        numbered_options: bool = False,
        checker: ConformanceChecker | None = None,
        feed_checker: bool = False,
        permissions_on_demand: bool = False,
    ) -> None:
        self.output = output
        self.answered_by = answered_by
        self.label = label
        self.show_connect = show_connect
        self.show_sessions = show_sessions
        self.numbered_options = numbered_options
        self.checker = checker
        self.feed_checker = feed_checker
        self.agent_info: schema.Implementation | None = None
        self.protocol_version: int | None = None
        self.entries = 0
        self.stop_reasons: list[str | None] = []
        self._sessions: dict[str, _Session] = {}
        self._client_requests: dict[object, tuple[str, msgspec.Raw | None]] = {}
        self._permissions: dict[object, tuple[_Session, PermissionRequest]] = {}
        self._elicitations: dict[object, tuple[_Session, ElicitationRequest]] = {}
        # Permission requests wait for show_permission (the person asked), so a flood of
        # requests dismissed unseen is never drawn one by one.
        self.permissions_on_demand = permissions_on_demand
        self._unseen: set[object] = set()
        self._violations_shown = 0
        # Set when the client asked for ACP v1: v1 updates are shown in their v2 form.
        self._v1: V1Updates | None = None
        self._v1_calls: dict[object, tuple[str, dict[str, object]]] = {}

    # -- input -------------------------------------------------------------------------------

    def sync(self, transcript: Sequence[TranscriptEntry]) -> None:
        """Render the entries not yet seen, then redraw the live footer."""
        for entry in transcript[self.entries :]:
            self.feed(entry)
        self.refresh_footer()

    def feed(self, entry: TranscriptEntry) -> None:
        """Render one transcript entry (without redrawing the footer)."""
        self.entries += 1
        if self.checker is not None and self.feed_checker:
            self.checker.observe(entry.direction, entry.data)
        try:
            envelope = _decode_envelope(entry.data)
        except (msgspec.DecodeError, RecursionError):
            # With a checker, its stdout rule reports the line.
            if entry.direction == _AGENT and self.checker is None:
                text = entry.data.decode("utf-8", "replace")
                self._warn(f"the agent wrote a line that is not a protocol message: {text!r}")
            self._show_violations()
            return
        if entry.direction == _AGENT:
            self._from_agent(envelope)
        else:
            self._from_client(envelope)
        self._show_violations()

    def finish(self) -> None:
        """Print whatever is still unfinished as it stands, and remove the footer."""
        for session in self._sessions.values():
            self._commit(session, force=True)
        self.output.close()

    # -- agent -> client ---------------------------------------------------------------------

    def _from_agent(self, envelope: _Envelope) -> None:
        method = envelope.method
        params = envelope.params if isinstance(envelope.params, msgspec.Raw) else None
        if isinstance(method, str):
            if method == "session/update" and params is not None and self._v1 is not None:
                self._v1_update(self._v1, params)
            elif method == "session/update" and params is not None:
                try:
                    notification = schema.decode(params, schema.UpdateSessionNotification)
                except (msgspec.DecodeError, RecursionError):
                    return
                session = self._session(notification.session_id)
                self._apply(session, notification.update)
                self._commit(session)
            elif method == "session/request_permission" and envelope.id is not msgspec.UNSET:
                self._permission_request(envelope.id, params)
            elif method == schema.CANCEL_REQUEST_METHOD and params is not None:
                self._agent_cancel(params)
            elif method == "elicitation/create" and envelope.id is not msgspec.UNSET:
                self._elicitation_request(envelope.id, params)
            elif method == "elicitation/complete":
                self._note("✓ the agent says the URL interaction is complete", style="green")
            elif self._v1 is not None and method.startswith(_V1_CLIENT_CALLS):
                # v1 client services (the editor's terminals and files): seen in the answers.
                if envelope.id is not msgspec.UNSET and params is not None:
                    with contextlib.suppress(msgspec.DecodeError, RecursionError):
                        self._v1_calls[_key(envelope.id)] = (method, _decode_object(params))
            elif envelope.id is not msgspec.UNSET:
                self._note(f"the agent called {method}, which this client does not offer")
            return
        request = self._client_requests.pop(_key(envelope.id), None)
        if request is None:
            return
        self._response(request[0], request[1], envelope)

    def _v1_update(self, v1: V1Updates, params: msgspec.Raw) -> None:
        try:
            raw = _decode_object(params)
        except (msgspec.DecodeError, RecursionError):
            return
        session_id, body = raw.get("sessionId"), as_object(raw.get("update"))
        if isinstance(session_id, str) and body is not None:
            update = v1.translate(session_id, body)
            if update is not None:
                session = self._session(session_id)
                self._apply(session, update)
                self._commit(session)

    def _v1_turn(self, params: msgspec.Raw | None, update: schema.SessionUpdate) -> None:
        # v1 has no state updates: the client's prompt starts a turn, its answer ends it.
        try:
            session_id = _decode_object(params).get("sessionId") if params is not None else None
        except (msgspec.DecodeError, RecursionError):
            return
        if isinstance(session_id, str) and self._v1 is not None:
            self._v1.interrupt(session_id)
            session = self._session(session_id)
            self._apply(session, update)
            self._commit(session)

    def _response(self, method: str, params: msgspec.Raw | None, envelope: _Envelope) -> None:
        if self._v1 is not None and method == "session/prompt":
            result = envelope.result if isinstance(envelope.result, msgspec.Raw) else None
            try:
                answer = msgspec.json.decode(result) if result is not None else None
            except (msgspec.DecodeError, RecursionError):
                answer = None
            self._v1_turn(params, prompt_end(answer, envelope.error))
            return
        if envelope.error is not msgspec.UNSET:
            error = as_object(envelope.error) or {}
            self.output.print(
                Text.assemble(
                    ("✗ ", "red"),
                    (f"{method} failed: ", "bold red"),
                    safe(error.get("message", error)),
                    (f" ({error.get('code')})", "dim"),
                )
            )
            return
        result = envelope.result if isinstance(envelope.result, msgspec.Raw) else None
        if result is None:
            return
        try:
            if method == "initialize" and self._v1 is not None:
                response = initialize_response(msgspec.json.decode(result))
                self.agent_info = response.info
                self.protocol_version = response.protocol_version
                if self.show_connect:
                    self._connected(response)
            elif method == "initialize":
                response = schema.decode(result, schema.InitializeResponse)
                self.agent_info = response.info
                self.protocol_version = response.protocol_version
                if self.show_connect:
                    self._connected(response)
            elif method in ("session/new", "session/resume", "session/load"):
                request_params = _decode_object(params) if params is not None else {}
                session_id = _decode_object(result).get(
                    "sessionId", request_params.get("sessionId")
                )
                cwd = request_params.get("cwd")
                if isinstance(session_id, str):
                    session = self._session(session_id, cwd if isinstance(cwd, str) else None)
                    if self.show_sessions:
                        where = f" in {cwd}" if isinstance(cwd, str) else ""
                        verb = "new session" if method == "session/new" else "resumed session"
                        self._note(f"○ {verb} {session_id}{where}", style="dim")
                    self._commit(session)
                    setup = schema.decode(result, schema.ResumeSessionResponse)
                    if isinstance(setup.config_options, list) and setup.config_options:
                        self.output.print(config_block(setup.config_options))
                    if isinstance(setup.available_commands, list) and setup.available_commands:
                        self.output.print(commands_block(setup.available_commands))
        except (msgspec.DecodeError, RecursionError):
            return

    def _connected(self, response: schema.InitializeResponse) -> None:
        info = response.info
        line = Text.assemble(("● ", "green"), safe(info.name, "bold"), safe(f" {info.version}"))
        if isinstance(info.title, str) and info.title != info.name:
            line.append(visible(f" ({info.title})", one_line=True))
        line.append(f" · protocol {response.protocol_version}", style="dim")
        if self.label:
            line.append(f" · {self.label}", style="dim")
        self.output.print(line)

    def _permission_request(self, request_id: object, params: msgspec.Raw | None) -> None:
        try:
            raw = _decode_object(params) if params is not None else {}
        except (msgspec.DecodeError, RecursionError):
            return
        if not isinstance(request_id, int | str):
            return
        record = PermissionRequest(request_id, raw, 0.0)
        session = self._session(record.session_id or "")
        self._permissions[_key(request_id)] = (session, record)
        if self.permissions_on_demand:
            self._unseen.add(_key(request_id))
            return
        patch = permission_tool_call(raw) if self._v1 is not None else None
        if patch is not None:
            session.view.apply_tool_call(patch)
            self._touch(session, "tool", patch.tool_call_id)
        elif params is not None and self._v1 is None:
            try:
                typed = schema.decode(params, schema.RequestPermissionRequest)
            except (msgspec.DecodeError, RecursionError):
                typed = None
            if typed is not None and isinstance(typed.subject, schema.ToolCallPermissionSubject):
                session.view.apply_tool_call(typed.subject.tool_call)
                self._touch(session, "tool", typed.subject.tool_call.tool_call_id)
        self._add(session, "permission", ("permission", _key(request_id)), record)
        self._commit(session)

    def show_permission(self, request_id: object) -> None:
        """Show a permission request held back by ``permissions_on_demand`` (the person at
        the keyboard is about to be asked it)."""
        key = _key(request_id)
        found = self._permissions.get(key)
        if key not in self._unseen or found is None:
            return
        self._unseen.discard(key)
        session, record = found
        self._add(session, "permission", ("permission", key), record)
        self._commit(session)

    def _agent_cancel(self, params: msgspec.Raw) -> None:
        try:
            request_id = _decode_object(params).get("requestId")
        except (msgspec.DecodeError, RecursionError):
            return
        found = self._permissions.get(_key(request_id))
        if found is not None:
            found[1].cancelled_by_agent = True
        elicitation = self._elicitations.get(_key(request_id))
        if elicitation is not None:
            elicitation[1].cancelled_by_agent = True

    def _elicitation_request(self, request_id: object, params: msgspec.Raw | None) -> None:
        try:
            raw = _decode_object(params) if params is not None else {}
        except (msgspec.DecodeError, RecursionError):
            return
        if not isinstance(request_id, int | str):
            return
        record = ElicitationRequest(request_id, raw)
        session = self._session(record.session_id or "")
        self._elicitations[_key(request_id)] = (session, record)
        self._add(session, "elicitation", ("elicitation", _key(request_id)), record)
        self._commit(session)

    # -- client -> agent ---------------------------------------------------------------------

    def _from_client(self, envelope: _Envelope) -> None:
        method = envelope.method
        params = envelope.params if isinstance(envelope.params, msgspec.Raw) else None
        if isinstance(method, str):
            if envelope.id is not msgspec.UNSET:
                self._client_requests[_key(envelope.id)] = (method, params)
                if method == "initialize":
                    self._v1 = V1Updates() if _asks_v1(params) else None
                elif method == "session/prompt" and self._v1 is not None:
                    self._v1_prompt(self._v1, params)
            elif method == "session/cancel" and params is not None:
                try:
                    session_id = _decode_object(params).get("sessionId")
                except (msgspec.DecodeError, RecursionError):
                    return
                if isinstance(session_id, str) and session_id in self._sessions:
                    self._commit(self._sessions[session_id])
                self._note("⊘ session/cancel sent", style="yellow")
            return
        elicitation = self._elicitations.pop(_key(envelope.id), None)
        if elicitation is not None:
            asked_in, asked = elicitation
            if isinstance(envelope.result, msgspec.Raw):
                try:
                    asked.answer = _decode_object(envelope.result)
                except (msgspec.DecodeError, RecursionError):
                    asked.answer = {}
            self._commit(asked_in)
            self.output.print(elicitation_answer_line(asked, self.answered_by))
        call = self._v1_calls.pop(_key(envelope.id), None)
        if call is not None and isinstance(envelope.result, msgspec.Raw):
            self._v1_answer(call[0], call[1], envelope.result)
            return
        found = self._permissions.pop(_key(envelope.id), None)
        if _key(envelope.id) in self._unseen:
            self._unseen.discard(_key(envelope.id))
            return
        if found is None or not isinstance(envelope.result, msgspec.Raw):
            return
        session, record = found
        try:
            outcome = _decode_outcome(envelope.result).outcome
        except (msgspec.DecodeError, RecursionError):
            return
        record.answer = outcome if outcome is not None else {}
        self._commit(session)
        self.output.print(answer_line(record, self.answered_by))

    def _v1_answer(self, method: str, params: dict[str, object], result: msgspec.Raw) -> None:
        session_id = params.get("sessionId")
        if not method.startswith("terminal/") or not isinstance(session_id, str):
            return
        try:
            answer = msgspec.json.decode(result)
        except (msgspec.DecodeError, RecursionError):
            return
        session = self._session(session_id)
        terminal_id = show_terminal_answer(session.view, method, params, answer)
        if terminal_id is None:
            return
        owner = session.owners.get(terminal_id)
        if owner is None:
            # The tool call that embeds it may have been reported first.
            owner = next(
                (c.id for c in session.view.tool_calls.values() if terminal_id in c.terminal_ids),
                None,
            )
            if owner is not None:
                session.owners[terminal_id] = owner
        if owner is not None:
            self._touch(session, "tool", owner)
        self._commit(session)

    def _v1_prompt(self, v1: V1Updates, params: msgspec.Raw | None) -> None:
        try:
            raw = _decode_object(params) if params is not None else {}
        except (msgspec.DecodeError, RecursionError):
            return
        self._v1_turn(params, prompt_echo(v1.next_message_id("user"), raw))
        self._v1_turn(params, schema.RunningStateUpdate())

    # -- folding -----------------------------------------------------------------------------

    def _session(self, session_id: str, cwd: str | None = None) -> _Session:
        session = self._sessions.get(session_id)
        if session is None:
            session = self._sessions[session_id] = _Session(
                session_id, cwd, SessionView(session_id)
            )
        elif cwd is not None:
            session.cwd = cwd
        return session

    def _add(self, session: _Session, kind: str, key: object, payload: object = None) -> _Item:
        item = _Item(kind, key, payload)
        session.items.append(item)
        session.open[key] = item
        return item

    def _touch(self, session: _Session, kind: str, ident: str) -> None:
        key = (kind, ident)
        if key not in session.open:
            self._add(session, kind, key, ident)

    def _apply(self, session: _Session, update: schema.SessionUpdate) -> None:
        session.view.apply(update)
        if isinstance(update, schema.UserMessage | schema.UserMessageChunk):
            self._touch(session, "user", update.message_id)
        elif isinstance(update, schema.AgentMessage | schema.AgentMessageChunk):
            self._touch(session, "agent", update.message_id)
        elif isinstance(update, schema.AgentThought | schema.AgentThoughtChunk):
            self._touch(session, "thought", update.message_id)
        elif isinstance(update, schema.ToolCallUpdate | schema.ToolCallContentChunk):
            call = session.view.tool_calls.get(update.tool_call_id)
            if call is not None:
                for terminal_id in call.terminal_ids:
                    session.owners[terminal_id] = call.id
            self._touch(session, "tool", update.tool_call_id)
        elif isinstance(update, schema.TerminalUpdate | schema.TerminalOutputChunk):
            owner = session.owners.get(update.terminal_id)
            if owner is not None:
                self._touch(session, "tool", owner)
            else:
                self._touch(session, "terminal", update.terminal_id)
        elif isinstance(update, schema.PlanUpdate):
            plan_id = getattr(update.plan, "plan_id", None)
            self._touch(session, "plan", plan_id if isinstance(plan_id, str) else "")
        elif isinstance(update, schema.Notice):
            self._add(session, "notice", ("notice", next(session.counter)), update)
        elif isinstance(update, schema.UsageUpdate):
            session.usage = update
        elif isinstance(update, schema.ConfigOptionUpdate):
            self._add(session, "config", ("config", next(session.counter)), update.config_options)
        elif isinstance(update, schema.AvailableCommandsUpdate):
            commands = update.available_commands
            self._add(session, "commands", ("commands", next(session.counter)), commands)
        elif isinstance(update, schema.UnknownSessionUpdate):
            self._add(session, "unknown", ("unknown", next(session.counter)), update)
        elif isinstance(
            update,
            schema.RunningStateUpdate
            | schema.RequiresActionStateUpdate
            | schema.IdleStateUpdate
            | schema.UnknownStateUpdate,
        ):
            if isinstance(update, schema.IdleStateUpdate) and session.state != "idle":
                stop_reason = update.stop_reason if isinstance(update.stop_reason, str) else None
                error = update.error if isinstance(update.error, schema.Error) else None
                self.stop_reasons.append(stop_reason)
                if session.usage is not None:
                    usage, session.usage = session.usage, None
                    self._add(session, "usage", ("usage", next(session.counter)), usage)
                self._add(session, "stop", ("stop", next(session.counter)), (stop_reason, error))
            session.state = update.state

    # -- printing ----------------------------------------------------------------------------

    def _done(self, session: _Session, index: int, item: _Item) -> bool:
        kind = item.kind
        if kind in ("user", "agent", "thought"):
            later = any(other.kind != "terminal" for other in session.items[index + 1 :])
            return later or session.state == "idle"
        if kind == "tool":
            call = session.view.tool_calls.get(str(item.payload))
            return call is None or call.is_final
        if kind == "terminal":
            terminal = session.view.terminals.get(str(item.payload))
            return terminal is None or terminal.exited
        if kind == "plan":
            return session.state == "idle"
        return True

    def _commit(self, session: _Session, *, force: bool = False) -> None:
        for index, item in enumerate(session.items):
            if item.committed:
                continue
            if item.kind == "terminal" and str(item.payload) in session.owners:
                # Its tool call shows it.
                item.committed = True
                session.open.pop(item.key, None)
                continue
            if not force and not self._done(session, index, item):
                continue
            item.committed = True
            session.open.pop(item.key, None)
            renderable = self._render(session, item, live=False)
            if renderable is not None:
                self.output.print(renderable)
        if any(item.committed for item in session.items):
            session.items = [item for item in session.items if not item.committed]

    def _render(self, session: _Session, item: _Item, *, live: bool) -> RenderableType | None:
        view = session.view
        kind = item.kind
        if kind in ("user", "agent", "thought"):
            role: MessageRole = (
                "user" if kind == "user" else "agent" if kind == "agent" else "thought"
            )
            try:
                message = view.message(str(item.payload), role)
            except KeyError:
                return None
            return message_block(message, live=live)
        if kind == "tool":
            call = view.tool_calls.get(str(item.payload))
            if call is None:
                return None
            skip = session.shown.get(call.id, []) if not live else []
            return tool_call_block(call, view.terminals, cwd=session.cwd, skip=skip, live=live)
        if kind == "terminal":
            terminal = view.terminals.get(str(item.payload))
            return (
                None if terminal is None else terminal_block(terminal, cwd=session.cwd, live=live)
            )
        if kind == "permission":
            assert isinstance(item.payload, PermissionRequest)
            request = item.payload
            call = view.tool_calls.get(request.tool_call_id or "")
            if call is not None and request.command is None:
                session.shown[call.id] = list(call.content)
            return permission_block(
                request,
                call,
                view.terminals,
                cwd=session.cwd,
                numbered=self.numbered_options,
            )
        if kind == "plan":
            plan = view.plans.get(str(item.payload))
            return None if plan is None else plan_block(plan)
        if kind == "stop":
            stop_reason, error = cast("tuple[str | None, schema.Error | None]", item.payload)
            return stop_line(stop_reason, error)
        if kind == "notice":
            assert isinstance(item.payload, schema.Notice)
            return notice_line(item.payload)
        if kind == "usage":
            assert isinstance(item.payload, schema.UsageUpdate)
            return usage_line(item.payload)
        if kind == "config":
            return config_block(cast("list[schema.SessionConfigOption]", item.payload))
        if kind == "commands":
            return commands_block(cast("list[schema.AvailableCommand]", item.payload))
        if kind == "elicitation":
            assert isinstance(item.payload, ElicitationRequest)
            return elicitation_block(item.payload)
        if kind == "unknown":
            update = item.payload
            name = getattr(update, "session_update", "?")
            return safe(f"(an update of unknown type {name!r}, not shown)", "dim")
        return None

    def refresh_footer(self) -> None:
        """Redraw the unfinished items in the live footer (terminal only)."""
        if not self.output.live_enabled:
            return
        parts: list[RenderableType] = []
        for session in self._sessions.values():
            for item in session.items:
                if item.committed or item.kind in (
                    "permission",
                    "stop",
                    "notice",
                    "unknown",
                    "elicitation",
                    "config",
                    "commands",
                ):
                    continue
                if item.kind == "terminal" and str(item.payload) in session.owners:
                    continue
                renderable = self._render(session, item, live=True)
                if renderable is not None:
                    parts.append(renderable)
        self.output.set_part(self, Group(*parts) if parts else None)

    # -- notes -------------------------------------------------------------------------------

    def _note(self, text: str, style: str = "dim") -> None:
        # Notes quote the agent (methods, session ids, paths): one line, made visible.
        self.output.print(safe(text, style))

    def _warn(self, text: str) -> None:
        self.output.print(Text.assemble(("⚠ ", "bold yellow"), safe(text, "yellow")))

    def _show_violations(self) -> None:
        if self.checker is None:
            return
        violations = self.checker.violations
        for violation in violations[self._violations_shown :]:
            self.output.print(violation_text(violation))
        self._violations_shown = len(violations)


def _asks_v1(params: msgspec.Raw | None) -> bool:
    try:
        return params is not None and _decode_object(params).get("protocolVersion") == 1
    except (msgspec.DecodeError, RecursionError):
        return False


def violation_text(violation: Violation) -> Text:
    """A protocol violation as a warning line, with the hint."""
    return Text.assemble(
        ("⚠ ", "bold yellow"),
        (f"[{violation.rule}] ", "bold yellow"),
        safe(violation.message, "yellow"),
        ("\n  hint: ", "dim"),
        (violation.hint, "dim"),
    )
