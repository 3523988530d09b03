"""The mock client over ACP v1: v1 shapes on the wire, the kit's one view behind them.

How this works: a v1 connection differs from v2 in the shapes it sends and in
how a turn ends, so this module translates at one place and the rest of the
kit (``SessionView``, ``ClientSession`` turns, permission policies) stays the
one the v2 client uses. Outgoing, it builds the v1 ``initialize``,
``session/new`` and ``session/load`` params. Incoming, every v1
``session/update`` is turned into the equivalent draft v2 update and folded
into the session: ``agent_message_chunk``/``agent_thought_chunk``/
``user_message_chunk`` become chunks of a message whose ``messageId`` is the
one v1 sent or, when v1 sent none, one the client makes up (consecutive
chunks of one role are one message); ``tool_call`` is a creation (omitted
fields take their defaults) and ``tool_call_update`` a patch, both upserts of
the v2 view whose ``content`` is replaced whole; a v1 ``diff`` item keeps its
texts in ``_meta["acpio/v1"]``; ``plan`` is the session's one plan
(``planId`` ``"plan"``); ``current_mode_update`` sets
``ClientSession.current_mode_id``. Updates v1 does not define (draft v2 ones)
are not applied: a v1 editor would not show them, and the conformance checker
reports them.

Turns: v1 has no state updates and no ``messageId`` answer. The client echoes
the prompt itself as the turn's user message (a v1 editor shows what the user
typed) and marks the session ``running`` when the prompt goes on the wire;
the answer ``{stopReason}`` ends the turn with an ``idle`` carrying that stop
reason, and an error answer ends it with stop reason ``error`` and the
error. A prompt sent while another runs starts running when the one before it
is answered. So ``ClientSession.prompt``/``start_prompt``/``Turn.wait`` work
unchanged. After ``session/cancel`` the client answers every pending
permission request of the session ``cancelled``, as v1 requires of a client.

Client services, when asked for: ``terminal/*`` (see
`acpio.testing._v1_terminals`) and ``fs/read_text_file``/
``fs/write_text_file`` on the real file system, reads seeing the unsaved
``buffers`` first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Protocol

import anyio
import msgspec

from .. import schema
from .._errors import RequestError
from .._json import JsonObject, as_list, as_object, decode_json, get_field
from .._protocol.paths import is_local_absolute
from .._rpc.connection import RequestContext
from ._client_session import ClientSession, ClientSessions, SentPrompt, SessionTurns
from ._policy import PermissionRequest
from ._v1_rules import V1_SESSION_UPDATES as V1_SESSION_UPDATES
from ._v1_shapes import config_option as _config_option
from ._v1_terminals import ClientTerminals

__all__ = (
    "V1_META_KEY",
    "V1_SESSION_UPDATES",
    "PendingPermissions",
    "V1Client",
    "V1Updates",
    "initialize_response",
    "permission_tool_call",
    "prompt_echo",
    "prompt_end",
    "request_params",
    "to_v2_update",
)


_CHUNK_ROLES: Final = {
    "user_message_chunk": "user",
    "agent_message_chunk": "agent",
    "agent_thought_chunk": "thought",
}
# Updates whose v1 and v2 shapes are the same.
_SAME_SHAPE: Final = frozenset(
    {
        "usage_update",
        "notice",
        "compaction_update",
        "compaction_summary_chunk",
        "session_info_update",
    }
)
_TOOL_FIELDS: Final = ("title", "name", "kind", "status", "rawInput", "rawOutput", "_meta")
_V1_PLAN_ID: Final = "plan"
V1_META_KEY: Final = "acpio/v1"
"""The ``_meta`` key under which v1-only data (a diff's texts) is kept in the v2 view."""

_decode_json = decode_json


def _content_item(value: object) -> object:
    item = as_object(value)
    if item is None:
        return value
    if item.get("type") == "diff":
        path = item.get("path")
        old_text = item.get("oldText")
        operation = "add" if old_text is None else "modify"
        converted: JsonObject = {
            "type": "diff",
            "changes": [{"operation": operation, "path": path}],
        }
        meta = dict(as_object(item.get("_meta")) or {})
        meta[V1_META_KEY] = {"path": path, "oldText": old_text, "newText": item.get("newText")}
        converted["_meta"] = meta
        return converted
    return item


def _command(value: object) -> object:
    # v1 {name, description, input: {hint}}; v2 adds the discriminators.
    command = as_object(value)
    if command is None:
        return value
    converted: JsonObject = {"type": "command", **command}
    given = as_object(command.get("input"))
    if given is not None and "type" not in given:
        converted["input"] = {"type": "text", **given}
    return converted


def _content(value: object) -> object:
    items = as_list(value)
    if items is not None:
        return [_content_item(item) for item in items]
    return value


def _tool_call(update: JsonObject, *, creation: bool) -> JsonObject:
    converted: JsonObject = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": update.get("toolCallId"),
    }
    for key in _TOOL_FIELDS:
        if key in update:
            converted[key] = update[key]
    if "content" in update:
        converted["content"] = _content(update["content"])
    if "locations" in update:
        converted["locations"] = update["locations"]
    if creation:
        # A v1 tool_call is the whole call: what it omits takes the protocol defaults.
        converted.setdefault("kind", "other")
        converted.setdefault("status", "pending")
        converted.setdefault("content", [])
        converted.setdefault("locations", [])
    return converted


def to_v2_update(update: JsonObject, message_id: str | None = None) -> JsonObject | None:
    """The draft v2 form of one v1 ``session/update`` body (``None``: no v2 form to show).

    ``message_id`` is used for a message chunk that carries none.
    """
    kind = update.get("sessionUpdate")
    if kind in _CHUNK_ROLES:
        chunk = {key: value for key, value in update.items() if key != "messageId"}
        chunk["messageId"] = update.get("messageId") or message_id
        return chunk
    if kind == "tool_call":
        return _tool_call(update, creation=True)
    if kind == "tool_call_update":
        return _tool_call(update, creation=False)
    if kind == "plan":
        plan: JsonObject = {
            "type": "items",
            "planId": _V1_PLAN_ID,
            "entries": update.get("entries", []),
        }
        converted: JsonObject = {"sessionUpdate": "plan_update", "plan": plan}
        if "_meta" in update:
            converted["_meta"] = update["_meta"]
        return converted
    if kind == "available_commands_update":
        commands = update.get("availableCommands")
        command_list = as_list(commands)
        return {
            **update,
            "availableCommands": [_command(c) for c in command_list]
            if command_list is not None
            else commands,
        }
    if kind == "config_option_update":
        options = update.get("configOptions")
        option_list = as_list(options)
        return {
            **update,
            "configOptions": [_config_option(o) for o in option_list]
            if option_list is not None
            else options,
        }
    if kind in _SAME_SHAPE:
        return dict(update)
    return None


def request_params(params: msgspec.Raw | None) -> JsonObject:
    """The params of a request the agent sent, as a JSON object (absent: ``{}``).

    :raises acpio.RequestError: ``-32602`` when they are not JSON or not an object.
    """
    try:
        raw = _decode_json(params) if params is not None else {}
    except (msgspec.DecodeError, RecursionError) as exc:
        raise RequestError.invalid_params(str(exc)) from None
    value = as_object(raw)
    if value is None:
        raise RequestError.invalid_params("params must be an object")
    return value


class V1Updates:
    """Turns one connection's v1 ``session/update`` bodies into v2 updates, in arrival order.

    Stateful only for messages: a chunk without ``messageId`` continues the message of the
    chunk before it when that was of the same role in the same session, else starts a new
    one. The client's own inserts (a prompt's echo, a turn's end) break the run too
    (`interrupt`).
    """

    def __init__(self) -> None:
        self._counter = 0
        self._last_chunk: dict[str, tuple[str, str]] = {}  # session -> (role, messageId)

    def next_message_id(self, role: str) -> str:
        """A fresh messageId the client makes up (``v1-<role>-<n>``)."""
        self._counter += 1
        return f"v1-{role}-{self._counter}"

    def interrupt(self, session_id: str) -> None:
        """Something else was shown in the session: the next chunk starts a new message."""
        self._last_chunk.pop(session_id, None)

    def translate(self, session_id: str, update: JsonObject) -> schema.SessionUpdate | None:
        """The v2 update to show for one v1 update (``None``: nothing a v1 editor shows)."""
        kind = update.get("sessionUpdate")
        role = _CHUNK_ROLES.get(kind) if isinstance(kind, str) else None
        message_id: str | None = None
        if role is not None:
            last = self._last_chunk.get(session_id)
            given = update.get("messageId")
            if isinstance(given, str):
                message_id = given
            elif last is not None and last[0] == role:
                message_id = last[1]
            else:
                message_id = self.next_message_id(role)
            self._last_chunk[session_id] = (role, message_id)
        else:
            self._last_chunk.pop(session_id, None)
        converted = to_v2_update(update, message_id)
        if converted is None:
            return None  # a v2-only (or unknown) update: a v1 editor shows nothing for it
        try:
            decoded: schema.SessionUpdate = schema.convert(converted, schema.SessionUpdate)
        except msgspec.ValidationError:
            return None  # the conformance checker reports it; the transcript keeps it
        return decoded


def permission_tool_call(params: JsonObject) -> schema.ToolCallUpdate | None:
    """A v1 permission request's ``toolCall`` as the v2 patch editors apply before asking."""
    tool_call = as_object(params.get("toolCall"))
    if tool_call is None:
        return None
    try:
        return schema.convert(_tool_call(tool_call, creation=False), schema.ToolCallUpdate)
    except msgspec.ValidationError:
        return None


def initialize_response(result: object) -> schema.InitializeResponse:
    """The kit's (v2) record of a v1 ``initialize`` result: version and agent info."""
    raw = as_object(result) or {}
    info = as_object(raw.get("agentInfo")) or {}
    name, version, title = info.get("name"), info.get("version"), info.get("title")
    version_value = raw.get("protocolVersion")
    return schema.InitializeResponse(
        protocol_version=version_value if isinstance(version_value, int) else 1,
        info=schema.Implementation(
            name=name if isinstance(name, str) else "",
            version=version if isinstance(version, str) else "",
            title=title if isinstance(title, str) else msgspec.UNSET,
        ),
    )


def prompt_end(result: object, error: object) -> schema.IdleStateUpdate:
    """The v2 end of a turn for the answer to a v1 ``session/prompt``: its stop reason, or
    stop reason ``error`` with the error of an error answer."""
    error_object = as_object(error)
    if error_object is not None:
        code, message = error_object.get("code"), error_object.get("message")
        return schema.IdleStateUpdate(
            stop_reason="error",
            error=schema.Error(
                code=code if isinstance(code, int) else 0,
                message=message if isinstance(message, str) else "",
                data=error_object.get("data", msgspec.UNSET),
            ),
        )
    stop_reason = get_field(result, "stopReason")
    return schema.IdleStateUpdate(
        stop_reason=stop_reason if isinstance(stop_reason, str) else msgspec.UNSET
    )


def prompt_echo(message_id: str, params: object) -> schema.UserMessage:
    """The user message a v1 editor shows for a ``session/prompt`` it sent."""
    blocks = get_field(params, "prompt")
    content: list[schema.ContentBlock] = []
    for block in as_list(blocks) or []:
        try:
            content.append(schema.convert(block, schema.ContentBlock))
        except msgspec.ValidationError:
            continue
    return schema.UserMessage(message_id=message_id, content=content)


class PendingPermissions(Protocol):
    """The permission requests the client has not answered yet (its handler has them)."""

    @property
    def pending_permissions(self) -> Mapping[int | str, PermissionRequest]:
        """Permission requests the policy has not answered yet, by request id."""
        ...

    @property
    def permission_scopes(self) -> Mapping[int | str, anyio.CancelScope]:
        """The scope of each pending permission's policy, by request id."""
        ...


class V1Client:
    """The v1 side of one :class:`MockClient` (see the module docstring).

    ``sessions`` are the client's sessions; ``permissions`` its pending permission
    requests, answered ``cancelled`` by the client after ``session/cancel``.
    """

    def __init__(
        self,
        sessions: ClientSessions,
        permissions: PendingPermissions,
        *,
        terminal: bool,
        read_text_file: bool,
        write_text_file: bool,
        buffers: Mapping[str, str] | None,
    ) -> None:
        self._sessions = sessions
        self._permissions = permissions
        self.terminal = terminal
        self.read_text_file = read_text_file
        self.write_text_file = write_text_file
        self.buffers: dict[str, str] = dict(buffers or {})
        """Unsaved editor buffers by absolute path: ``fs/read_text_file`` sees them first."""
        self.files_written: dict[str, str] = {}
        """Every ``fs/write_text_file``, by path (the last content written)."""
        self.terminals: ClientTerminals = ClientTerminals(sessions)
        self.initialize_result: object = None
        """The raw v1 ``initialize`` result."""
        self.extra_capabilities: dict[str, object] = {}
        """Further ``clientCapabilities`` fields sent as they are (a client profile's)."""
        self._updates = V1Updates()
        self._prompt_ids: dict[int, str] = {}  # request id -> the client's user messageId
        self._sent: dict[int, tuple[SessionTurns, SentPrompt]] = {}
        self._answers: dict[SentPrompt, schema.IdleStateUpdate] = {}  # answered, not ended

    # ------------------------------------------------------------ outgoing shapes

    def initialize_params(self, protocol_version: int, info: schema.Implementation) -> JsonObject:
        """The v1 ``initialize`` params: ``clientInfo`` and ``clientCapabilities``."""
        client_info: JsonObject = {"name": info.name, "version": info.version}
        if isinstance(info.title, str):
            client_info["title"] = info.title
        return {
            "protocolVersion": protocol_version,
            "clientCapabilities": {
                "fs": {
                    "readTextFile": self.read_text_file,
                    "writeTextFile": self.write_text_file,
                },
                "terminal": self.terminal,
                **self.extra_capabilities,
            },
            "clientInfo": client_info,
        }

    def initialize_response(self, result: object) -> schema.InitializeResponse:
        """The kit's (v2) record of a v1 ``initialize`` result; the raw one is kept."""
        self.initialize_result = result
        return initialize_response(result)

    # ------------------------------------------------------------------ updates

    def apply_update(self, params: msgspec.Raw) -> None:
        """Fold one v1 ``session/update`` into its session, in v2 form."""
        try:
            raw = _decode_json(params)
        except (msgspec.DecodeError, RecursionError):
            return
        session_id, update = get_field(raw, "sessionId"), as_object(get_field(raw, "update"))
        if not isinstance(session_id, str) or update is None:
            return
        turns = self._sessions.turns(session_id)
        if update.get("sessionUpdate") == "current_mode_update":
            mode = update.get("currentModeId")
            if isinstance(mode, str):
                turns.session.current_mode_id = mode
        decoded = self._updates.translate(session_id, update)
        if decoded is not None:
            turns.receive(decoded)

    def apply_permission_tool_call(self, params: JsonObject) -> None:
        """Editors show a permission request's ``toolCall`` like a ``tool_call_update``."""
        session_id = params.get("sessionId")
        patch = permission_tool_call(params)
        if isinstance(session_id, str) and patch is not None:
            self._sessions.get(session_id).view.apply_tool_call(patch)

    # ------------------------------------------------------------------- turns

    def replay_starts(self, session: ClientSession) -> None:
        """A ``session/load`` is about to replay the history into a fresh view."""
        self._updates.interrupt(session.id)

    def _inject(self, turns: SessionTurns, update: schema.SessionUpdate) -> None:
        self._updates.interrupt(turns.session.id)
        turns.receive(update)

    def prompt_sent(self, turns: SessionTurns, request_id: int, params: object) -> None:
        """A ``session/prompt`` went on the wire: echo it, and start its run if none runs."""
        prompt = turns.prompts.get(request_id)
        if prompt is None:
            return
        self._sent[request_id] = (turns, prompt)
        message_id = self._updates.next_message_id("user")
        self._prompt_ids[request_id] = message_id
        self._inject(turns, prompt_echo(message_id, params))
        self._advance(turns)

    def message_id(self, request_id: int) -> str:
        """The user messageId the client gave the prompt sent with ``request_id``."""
        return self._prompt_ids[request_id]

    def prompt_answered(self, request_id: int, result: object, error: object) -> None:
        """The answer to a ``session/prompt``: the end of its turn (once it runs)."""
        sent = self._sent.pop(request_id, None)
        if sent is None:
            return
        turns, prompt = sent
        if prompt.end is not None:
            return  # discarded by the cancel that ended the turn before it
        self._answers[prompt] = prompt_end(result, error)
        self._advance(turns)

    def _advance(self, turns: SessionTurns) -> None:
        # Turns run in the order their prompts were sent: start the next waiting one, and end
        # the running one if its answer is in.
        while True:
            if not turns.in_run:
                if not turns.waiting:
                    return
                self._inject(turns, schema.RunningStateUpdate())
            current = turns.current
            idle = self._answers.pop(current, None) if current is not None else None
            if idle is None:
                return
            self._inject(turns, idle)

    def cancel_sent(self, session: ClientSession) -> None:
        """``session/cancel`` went out: v1 clients answer the session's permission requests
        ``cancelled``."""
        for record in list(self._permissions.pending_permissions.values()):
            if record.session_id == session.id:
                record.cancelled_by_client = True
                scope = self._permissions.permission_scopes.get(record.request_id)
                if scope is not None:
                    scope.cancel()

    # ---------------------------------------------------------------- services

    def serves(self, method: str) -> bool:
        """Whether the client offered the v1 service ``method``."""
        if method.startswith("terminal/"):
            return self.terminal
        if method == "fs/read_text_file":
            return self.read_text_file
        if method == "fs/write_text_file":
            return self.write_text_file
        return False

    async def on_request(
        self, method: str, params: msgspec.Raw | None, context: RequestContext
    ) -> object:
        """Serve ``terminal/*`` and ``fs/*`` as an editor does."""
        raw = request_params(params)
        if method.startswith("terminal/"):
            return await self.terminals.serve(method, raw)
        if method == "fs/read_text_file":
            return {"content": self._read(raw)}
        if method == "fs/write_text_file":
            self._write(raw)
            return {}
        raise RequestError.method_not_found(method)

    @staticmethod
    def _path(raw: JsonObject) -> str:
        path = raw.get("path")
        if not isinstance(path, str) or not is_local_absolute(path):
            raise RequestError.invalid_params(f"path must be an absolute path, got {path!r}")
        return path

    def _read(self, raw: JsonObject) -> str:
        path = self._path(raw)
        text = self.buffers.get(path)
        if text is None:
            try:
                with open(path, encoding="utf-8", errors="replace", newline="") as file:
                    text = file.read()
            except FileNotFoundError:
                raise RequestError(-32002, f"Resource not found: {path}", {"path": path}) from None
            except OSError as exc:
                raise RequestError.internal_error(f"cannot read {path}: {exc}") from None
        line, limit = raw.get("line"), raw.get("limit")
        if line is None and limit is None:
            return text
        lines = text.splitlines(keepends=True)
        start = max(line - 1, 0) if isinstance(line, int) else 0
        end = start + limit if isinstance(limit, int) else len(lines)
        return "".join(lines[start:end])

    def _write(self, raw: JsonObject) -> None:
        path = self._path(raw)
        content = raw.get("content")
        if not isinstance(content, str):
            raise RequestError.invalid_params("content must be a string")
        try:
            with open(path, "w", encoding="utf-8", newline="") as file:
                file.write(content)
        except OSError as exc:
            raise RequestError.internal_error(f"cannot write {path}: {exc}") from None
        if path in self.buffers:
            self.buffers[path] = content
        self.files_written[path] = content
