"""Editor profiles: what a named ACP v1 client announces and what it shows its user.

A :class:`ClientProfile` makes :class:`acpio.testing.MockClient` announce what a real
client announces at ``initialize`` (protocol version 1, its ``clientInfo`` and
``clientCapabilities``) and renders the wire of a run the way that client displays it
(:meth:`ClientProfile.render`, or :meth:`MockClient.shown`), so a test can assert the
lines a user of that editor reads: the permission prompt, a failed call, a plan, a
terminal, the reply.

Where each profile comes from (facts observed; the code and the wording are ours):

- ``acpx``: the ``acpx`` command-line client 0.19.1 (npm), driven for real on
  ``examples/shell_agent.py`` and ``examples/edit_agent.py`` with its wire recorded by
  ``tests/interop/wire_recorder.py``: its ``initialize`` (fs read/write and terminal,
  ``clientInfo`` ``acpx``/``0.19.1``) and its text output format (``[tool] TITLE (STATUS)``
  blocks with ``kind:``/``input:``/``files:``/``output:``, ``[plan]`` entries,
  ``[client] METHOD (running)`` for each client operation, ``[done] STOP_REASON``, and on
  a terminal the prompt ``[permission] Allow TITLE [KIND]? (y/N)``).
  ``tests/interop/test_profiles_real.py`` renders acpx's own recorded wire with this
  profile and compares it with acpx's output, so the profile cannot drift unnoticed.
- ``python-sdk``: the official Python SDK (``agent-client-protocol`` 0.12.1). It has no
  user interface; what a Python client displays is the state of the SDK's client-side
  ``acp.contrib.session_state.SessionAccumulator`` (tool calls with title, kind, status
  and content; plan entries; message chunks) and the ``toolCall`` of a permission
  request. The profile folds the wire into that state and lists it one line per item;
  the real-client test compares that with the accumulator's own snapshot. Capabilities:
  the SDK's defaults (no fs, no terminal), as ``tests/interop/py_sdk_v1_client.py`` uses.
- ``zed``: Zed's source (zed-industries/zed). What it announces, from
  ``crates/agent_servers/src/acp.rs`` (commit 0038d2e2cc9b, ``client_capabilities_for_agent``
  and the ``initialize`` call): fs read/write, terminal, ``auth.terminal``, boolean config
  options, form and URL elicitation, ``_meta`` ``terminal_output`` and ``terminal-auth``;
  ``clientInfo`` name ``zed``. What it shows, from ``crates/acp_thread`` (``acp_thread.rs``,
  ``terminal.rs``, ``diff.rs``): the profile writes the thread the way Zed's own Markdown
  export does (``## User``, ``## Assistant``, ``**Tool Call: LABEL**`` with
  ``Status: Pending|In Progress|Completed|Failed|Rejected|Waiting for confirmation`` (a v1
  ``cancelled`` status shows as ``Pending`` there), then each content item: its text,
  ``Diff: PATH`` with the new text, ``Terminal:`` with the terminal's output). While a
  permission request waits, the call's card shows one button per option name (Zed lays an
  agent's options out flat), written ``[NAME] [NAME]``; a rejected answer shows
  ``Rejected`` until the agent updates the call. Zed's live plan panel is not part of its
  export; the profile writes the plan as its export writes a finished one (``## Plan``,
  ``- [x] ENTRY``), with ``- [ ]`` for entries not completed.
- ``jetbrains``: JetBrains AI Assistant's AI Chat. No client source was available; the
  public material read is JetBrains' help page "Agent Client Protocol (ACP)"
  (jetbrains.com/help/ai-assistant/acp.html: agents run as subprocesses from
  ``~/.jetbrains/acp.json``, file operations and permission requests go to the IDE) and
  the JetBrains blog post "How to Use AI Agents in IntelliJ IDEA With ACP" (after an
  edit, the chat lists the changed file, which opens as a diff). The profile keeps to
  that and to what every shipping v1 editor announces (fs read/write and terminal); its
  lines (``TITLE: STATUS``, the permission options, ``changed: PATH``, the plan entries,
  the reply) are a generic reading of the chat, not a claim about its exact wording.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from acpio import schema
from acpio._json import JsonObject

Style: TypeAlias = Literal["acpx", "python-sdk", "zed", "jetbrains"]

_FINAL = ("completed", "failed", "cancelled")


@dataclass(frozen=True, slots=True)
class ClientProfile:
    """A named v1 client: what it announces at ``initialize`` and how it displays a run.

    Invariant: ``render`` is a pure function of the wire (the JSON messages in the
    order they passed); the same wire always gives the same lines.
    """

    name: Style
    """The profile's name, one of :data:`PROFILES`' keys."""
    client_info: schema.Implementation
    """The ``clientInfo`` the client sends."""
    fs: bool
    """Whether it offers ``fs/read_text_file`` and ``fs/write_text_file``."""
    terminal: bool
    """Whether it offers ``terminal/*`` (and runs the agent's commands)."""
    extra_capabilities: Mapping[str, object] = field(default_factory=dict[str, object])
    """Further ``clientCapabilities`` fields it sends as they are (``auth``, ``_meta``...)."""
    evidence: str = ""
    """Where the profile's facts come from."""

    def __post_init__(self) -> None:
        if self.name not in ("acpx", "python-sdk", "zed", "jetbrains"):
            known = "acpx, python-sdk, zed or jetbrains"
            raise ValueError(f"a client profile displays as {known}, not {self.name!r}")

    def render(self, wire: Iterable[object]) -> list[str]:
        """The lines this client shows for ``wire``: JSON-RPC messages in the order they
        passed (a :class:`acpio.testing.Transcript`'s messages, or a recorded log's)."""
        messages = [m for m in (_as_message(item) for item in wire) if m is not None]
        if self.name == "acpx":
            return _AcpxScreen().render(messages)
        if self.name == "zed":
            return _ZedThread().render(messages)
        state = _fold(messages)
        if self.name == "python-sdk":
            return python_sdk_lines(state)
        return _panel_lines(state)

    def render_permission(self, request: object) -> list[str]:
        """The lines this client shows while ``request`` waits for the user's answer:
        ``request`` is a :class:`acpio.testing.PermissionRequest` or its JSON params."""
        params = _obj(getattr(request, "params", request))
        call = _obj(params.get("toolCall"))
        names = [str(_obj(o).get("name")) for o in _list(params.get("options"))]
        if self.name == "acpx":
            return [permission_prompt_acpx(params)]
        if self.name == "python-sdk":
            return python_sdk_lines({"permissions": [params]})
        title = _str(call.get("title")) or _str(call.get("toolCallId")) or ""
        if self.name == "zed":
            return [
                f"**Tool Call: {_zed_label(title, _str(call.get('kind')))}**",
                "Status: Waiting for confirmation",
                " ".join(f"[{name}]" for name in names),
            ]
        return [f"{title}: waiting for permission", "  permission: " + " / ".join(names)]


def _as_message(item: object) -> JsonObject | None:
    data = getattr(item, "data", None)
    if isinstance(data, bytes):  # a TranscriptEntry
        try:
            item = json.loads(data)
        except ValueError:
            return None
    if isinstance(item, dict):
        return {str(k): v for k, v in item.items()}  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    return None


def _obj(value: object) -> JsonObject:
    if isinstance(value, dict):
        return {str(k): v for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    return {}


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []  # pyright: ignore[reportUnknownArgumentType]


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


# ------------------------------------------------------------------------------ acpx


def _inline(text: str) -> str:
    return " ".join(text.split())


def _input_summary(raw: object) -> str | None:
    if raw is None:
        return None
    if isinstance(raw, str | int | float | bool):
        return _inline(str(raw))
    record = _obj(raw)
    if record:
        command = next(
            (_str(record.get(k)) for k in ("command", "cmd", "program") if _str(record.get(k))),
            None,
        )
        if command:
            args = [
                a
                for a in _list(record.get("args") or record.get("arguments"))
                if isinstance(a, str)
            ]
            return _inline(" ".join([command, *args]))
        for keys in (
            ("path", "file", "filePath", "filepath", "target", "uri", "url"),
            ("query", "pattern", "text", "search"),
        ):
            found = next((_str(record.get(k)) for k in keys if _str(record.get(k))), None)
            if found:
                return _inline(found)
    return _inline(json.dumps(raw, separators=(",", ":")))


def _content_summary(item: JsonObject) -> str | None:
    kind = item.get("type")
    if kind == "content":
        block = _obj(item.get("content"))
        text = _str(block.get("text")) if block.get("type") == "text" else None
        return text.rstrip() if text and text.strip() else None
    if kind == "diff":
        path = _str(item.get("path")) or ""
        old, new = _str(item.get("oldText")), _str(item.get("newText")) or ""
        delta = len(new.split("\n")) - (len(old.split("\n")) if old else 0)
        return (
            f"diff {path} (line count unchanged)"
            if delta == 0
            else f"diff {path} ({delta:+d} lines)"
        )
    if kind == "terminal":
        return f"[terminal] {item.get('terminalId')}"
    return None


def _output(state: JsonObject) -> str | None:
    parts: list[str] = []
    raw = state.get("rawOutput")
    if isinstance(raw, str):
        if raw.strip():
            parts.append(raw.rstrip())
    elif raw is not None:
        parts.append(json.dumps(raw, indent=2))
    for item in _list(state.get("content")):
        summary = _content_summary(_obj(item))
        if summary:
            parts.append(summary)
    unique = list(dict.fromkeys(p.strip() for p in parts if p.strip()))
    return "\n\n".join(unique) if unique else None


class _AcpxScreen:
    """acpx's text output for one run, as lines (blank separator lines left out)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.text = ""
        self.tools: dict[str, JsonObject] = {}

    def flush_text(self) -> None:
        if self.text:
            self.lines.extend(line for line in self.text.split("\n") if line.strip())
            self.text = ""

    def add(self, *lines: str) -> None:
        self.flush_text()
        self.lines.extend(line for line in lines if line.strip())

    def render(self, messages: list[JsonObject]) -> list[str]:
        for message in messages:
            method = _str(message.get("method"))
            params = _obj(message.get("params"))
            if method == "session/update":
                self.update(_obj(params.get("update")))
            elif method is not None and method not in ("session/prompt", "session/cancel"):
                self.add(f"[client] {method} (running)")
                if method == "session/request_permission":
                    self.add(permission_prompt_acpx(params))
            else:
                stop = _str(_obj(message.get("result")).get("stopReason"))
                if stop is not None:
                    self.add(f"[done] {stop}")
        self.flush_text()
        return self.lines

    def update(self, update: JsonObject) -> None:
        kind = update.get("sessionUpdate")
        if kind == "agent_message_chunk":
            content = _obj(update.get("content"))
            if content.get("type") == "text":
                self.text += _str(content.get("text")) or ""
        elif kind in ("tool_call", "tool_call_update"):
            self.tool(update)
        elif kind == "plan":
            entries = [_obj(e) for e in _list(update.get("entries"))]
            self.add("[plan]", *(f"  - [{e.get('status')}] {e.get('content')}" for e in entries))

    def tool(self, update: JsonObject) -> None:
        call_id = _str(update.get("toolCallId")) or ""
        state = self.tools.setdefault(call_id, {"id": call_id})
        title = _str(update.get("title"))
        if title and title.strip():
            state["title"] = title
        for key in ("status", "kind", "locations", "rawInput", "rawOutput", "content"):
            if key in update:
                state[key] = update[key]
        status = _str(state.get("status")) or "pending"
        final = status in _FINAL
        if not final and state.get("shown"):
            return
        files = ", ".join(
            dict.fromkeys(
                p
                for p in (_str(_obj(loc).get("path")) for loc in _list(state.get("locations")))
                if p
            )
        )
        output = _output(state) if final else None
        if final:
            signature = json.dumps([state.get("title"), status, state.get("kind"), files, output])
            if signature == state.get("signature"):
                return
            state["signature"] = signature
        else:
            state["shown"] = True
        label = status if final or status == "pending" else "running"
        lines = [f"[tool] {state.get('title') or call_id} ({label})"]
        if final and state.get("kind"):
            lines.append(f"  kind: {state['kind']}")
        summary = _input_summary(state.get("rawInput"))
        if summary:
            lines.append(f"  input: {summary}")
        if files:
            lines.append(f"  files: {files}")
        if output:
            lines.append("  output:")
            lines.extend(f"    {line}" for line in output.strip().split("\n"))
        self.add(*lines)


_KIND_WORDS = {
    "read": ("read", "cat"),
    "search": ("search", "find", "grep"),
    "edit": ("write", "edit", "patch"),
    "delete": ("delete", "remove"),
    "move": ("move", "rename"),
    "execute": ("run", "execute", "bash"),
    "fetch": ("fetch", "http", "url"),
    "think": ("think",),
}


def permission_prompt_acpx(params: Mapping[str, object]) -> str:
    """acpx's terminal prompt for a ``session/request_permission`` with these params."""
    tool_call = _obj(params.get("toolCall"))
    title = _str(tool_call.get("title"))
    kind = _str(tool_call.get("kind"))
    if kind is None and title and title.strip():
        head = title.strip().lower().replace(":", " ").split(" ", 1)[0]
        kind = next((k for k, words in _KIND_WORDS.items() if head in words), "other")
    return f"[permission] Allow {title if title is not None else 'tool'} [{kind or 'other'}]? (y/N)"


# -------------------------------------------------------------- folded state (others)


@dataclass
class _State:
    tool_calls: dict[str, JsonObject] = field(default_factory=dict[str, JsonObject])
    plan: list[JsonObject] = field(default_factory=list[JsonObject])
    text: str = ""
    permissions: list[JsonObject] = field(default_factory=list[JsonObject])
    terminals: dict[str, JsonObject] = field(default_factory=dict[str, JsonObject])


def _fold(messages: list[JsonObject]) -> _State:
    state = _State()
    pending_terminals: dict[object, JsonObject] = {}
    for message in messages:
        method = message.get("method")
        params = _obj(message.get("params"))
        if method == "session/update":
            update = _obj(params.get("update"))
            kind = update.get("sessionUpdate")
            if kind == "agent_message_chunk":
                content = _obj(update.get("content"))
                state.text += _str(content.get("text")) or ""
            elif kind in ("tool_call", "tool_call_update"):
                # As the SDK's accumulator: a tool_call starts the call afresh, an update
                # changes only the fields it carries with a value.
                call_id = _str(update.get("toolCallId")) or ""
                if kind == "tool_call":
                    state.tool_calls.pop(call_id, None)
                call = state.tool_calls.setdefault(call_id, {"toolCallId": call_id})
                call.update(
                    {k: v for k, v in update.items() if k != "sessionUpdate" and v is not None}
                )
            elif kind == "plan":
                state.plan = [_obj(e) for e in _list(update.get("entries"))]
        elif method == "session/request_permission":
            state.permissions.append(params)
        elif method == "terminal/create":
            pending_terminals[message.get("id")] = params
        elif "result" in message and message.get("id") in pending_terminals:
            terminal_id = _str(_obj(message.get("result")).get("terminalId"))
            if terminal_id:
                state.terminals[terminal_id] = pending_terminals.pop(message.get("id"))
    return state


def python_sdk_lines(state: object) -> list[str]:
    """The Python SDK client's state as lines: the reply, each tool call (title, kind,
    status, text content), each plan entry and each permission request's tool call.

    ``state`` is the profile's fold of a wire, or the same shape as a JSON object
    (``text``, ``tool_calls``, ``plan``, ``permissions``) built from the SDK's own
    ``SessionAccumulator`` snapshot, so both sides are listed by one function.
    """
    if isinstance(state, _State):
        text, calls, plan, permissions = (
            state.text,
            list(state.tool_calls.values()),
            state.plan,
            state.permissions,
        )
    else:
        data = _obj(state)
        text = _str(data.get("text")) or ""
        calls = [_obj(c) for c in _list(data.get("tool_calls"))]
        plan = [_obj(e) for e in _list(data.get("plan"))]
        permissions = [_obj(p) for p in _list(data.get("permissions"))]
    lines = [f"reply: {line}" for line in text.splitlines() if line.strip()]
    for params in permissions:
        call = _obj(params.get("toolCall"))
        options = ", ".join(str(_obj(o).get("name")) for o in _list(params.get("options")))
        lines.append(f"permission: {call.get('title')} [{call.get('kind')}] options: {options}")
    for call in calls:
        lines.append(f"tool: {call.get('title')} [{call.get('kind')}] {call.get('status')}")
        for item in _list(call.get("content")):
            summary = _content_summary(_obj(item))
            if summary:
                lines.extend(f"  {line}" for line in summary.split("\n") if line.strip())
    lines.extend(f"plan: [{e.get('status')}] {e.get('content')}" for e in plan)
    return lines


def _panel_lines(state: _State) -> list[str]:
    lines: list[str] = []
    asked = {_str(_obj(p.get("toolCall")).get("toolCallId")): p for p in state.permissions}
    for call_id, call in state.tool_calls.items():
        lines.append(f"{call.get('title') or call_id}: {call.get('status') or 'pending'}")
        params = asked.get(call_id)
        if params is not None:
            names = [str(_obj(o).get("name")) for o in _list(params.get("options"))]
            lines.append("  permission: " + " / ".join(names))
        for item in _list(call.get("content")):
            entry = _obj(item)
            if entry.get("type") == "terminal":
                terminal = state.terminals.get(_str(entry.get("terminalId")) or "", {})
                command = " ".join(
                    [
                        str(terminal.get("command", "")),
                        *(str(a) for a in _list(terminal.get("args"))),
                    ]
                ).strip()
                lines.append(f"  terminal: {command}" if command else "  terminal")
            elif entry.get("type") == "diff":
                lines.append(f"  changed: {entry.get('path')}")
            else:
                summary = _content_summary(entry)
                if summary:
                    lines.extend(f"  {line}" for line in summary.split("\n") if line.strip())
    if state.plan:
        lines.append("Plan")
        lines.extend(f"  [{e.get('status')}] {e.get('content')}" for e in state.plan)
    lines.extend(line for line in state.text.splitlines() if line.strip())
    return lines


# ------------------------------------------------------------------------------- zed

_ZED_STATUS = {
    "pending": "Pending",
    "in_progress": "In Progress",
    "completed": "Completed",
    "failed": "Failed",
}


def _zed_label(title: str, kind: str | None) -> str:
    # Zed shows an execute call's title as is, and other calls' first line only.
    if kind not in ("execute", "edit") and "\n" in title:
        return title.split("\n", 1)[0] + "\u2026"
    return title


class _ZedThread:
    """Zed's agent thread as its own Markdown export writes it, as non-blank lines."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, str]] = []  # (kind, text or tool call id)
        self.calls: dict[str, JsonObject] = {}
        self.waiting: dict[object, JsonObject] = {}  # permission request id -> params
        self.answered: set[str] = set()
        self.terminal_of: dict[object, str] = {}  # terminal/output request id -> terminal id
        self.output: dict[str, str] = {}
        self.plan: list[JsonObject] = []

    def text(self, kind: str, text: str) -> None:
        if self.entries and self.entries[-1][0] == kind:
            self.entries[-1] = (kind, self.entries[-1][1] + text)
        else:
            self.entries.append((kind, text))

    def render(self, messages: list[JsonObject]) -> list[str]:
        for message in messages:
            method = message.get("method")
            params = _obj(message.get("params"))
            if method == "session/prompt":
                for block in _list(params.get("prompt")):
                    self.text("user", _str(_obj(block).get("text")) or "")
            elif method == "session/update":
                self.update(_obj(params.get("update")))
            elif method == "session/request_permission":
                self.waiting[message.get("id")] = params
            elif method == "terminal/output":
                self.terminal_of[message.get("id")] = _str(params.get("terminalId")) or ""
            elif method is None and message.get("id") in self.waiting:
                params = self.waiting.pop(message.get("id"))
                self.answered.add(_str(_obj(params.get("toolCall")).get("toolCallId")) or "")
                self.waiting_done(params, _obj(message.get("result")))
            elif method is None and message.get("id") in self.terminal_of:
                output = _str(_obj(message.get("result")).get("output"))
                if output is not None:
                    self.output[self.terminal_of.pop(message.get("id"))] = output
        return self.lines()

    def waiting_done(self, params: JsonObject, result: JsonObject) -> None:
        # A rejected permission makes the call "Rejected" until the agent updates it.
        chosen = _str(_obj(result.get("outcome")).get("optionId"))
        kinds = {
            _str(_obj(o).get("optionId")): _str(_obj(o).get("kind"))
            for o in _list(params.get("options"))
        }
        call_id = _str(_obj(params.get("toolCall")).get("toolCallId")) or ""
        if (kinds.get(chosen) or "").startswith("reject") and call_id in self.calls:
            self.calls[call_id]["zedStatus"] = "Rejected"

    def update(self, update: JsonObject) -> None:
        kind = update.get("sessionUpdate")
        if kind == "agent_message_chunk":
            self.text("assistant", _str(_obj(update.get("content")).get("text")) or "")
        elif kind in ("tool_call", "tool_call_update"):
            call_id = _str(update.get("toolCallId")) or ""
            if call_id not in self.calls:
                self.calls[call_id] = {}
                self.entries.append(("tool", call_id))
            call = self.calls[call_id]
            call.update({k: v for k, v in update.items() if v is not None})
            if "status" in update:
                call.pop("zedStatus", None)
        elif kind == "plan":
            self.plan = [_obj(e) for e in _list(update.get("entries"))]

    def lines(self) -> list[str]:
        out: list[str] = []
        waiting = {
            _str(_obj(p.get("toolCall")).get("toolCallId")): p for p in self.waiting.values()
        }
        for kind, value in self.entries:
            if kind == "user":
                out += ["## User", *value.splitlines()]
            elif kind == "assistant":
                out += ["## Assistant", *value.splitlines()]
            else:
                out += self.tool_lines(value, waiting.get(value))
        if self.plan:
            out.append("## Plan")
            out += [
                f"- [{'x' if e.get('status') == 'completed' else ' '}] {e.get('content')}"
                for e in self.plan
            ]
        return [line for line in out if line.strip()]

    def tool_lines(self, call_id: str, waiting: JsonObject | None) -> list[str]:
        call = self.calls[call_id]
        status = _ZED_STATUS.get(_str(call.get("status")) or "pending", "Pending")
        status = _str(call.get("zedStatus")) or status
        if waiting is not None:
            status = "Waiting for confirmation"
        title = _str(call.get("title")) or call_id
        out = [f"**Tool Call: {_zed_label(title, _str(call.get('kind')))}**", f"Status: {status}"]
        if waiting is not None:
            names = [str(_obj(o).get("name")) for o in _list(waiting.get("options"))]
            out.append(" ".join(f"[{name}]" for name in names))
        for item in _list(call.get("content")):
            entry = _obj(item)
            if entry.get("type") == "content":
                out += (_str(_obj(entry.get("content")).get("text")) or "").splitlines()
            elif entry.get("type") == "diff":
                path = _str(entry.get("path")) or "untitled"
                out += [
                    f"Diff: {path}",
                    "```",
                    *(_str(entry.get("newText")) or "").splitlines(),
                    "```",
                ]
            elif entry.get("type") == "terminal":
                output = self.output.get(_str(entry.get("terminalId")) or "", "")
                out += ["Terminal:", "```", *output.splitlines(), "```"]
        return out


PROFILES: dict[str, ClientProfile] = {
    "acpx": ClientProfile(
        name="acpx",
        client_info=schema.Implementation(name="acpx", version="0.19.1"),
        fs=True,
        terminal=True,
        evidence="acpx 0.19.1 (npm), driven and wire-recorded on the example agents",
    ),
    "python-sdk": ClientProfile(
        name="python-sdk",
        client_info=schema.Implementation(name="python-sdk-client", version="0.12.1"),
        fs=False,
        terminal=False,
        evidence="agent-client-protocol 0.12.1: ClientCapabilities defaults, SessionAccumulator",
    ),
    "zed": ClientProfile(
        name="zed",
        client_info=schema.Implementation(name="zed", version="0.0.0", title="Zed"),
        fs=True,
        terminal=True,
        extra_capabilities={
            "auth": {"terminal": True},
            "session": {"configOptions": {"boolean": {}}},
            "elicitation": {"form": {}, "url": {}},
            "_meta": {"terminal_output": True, "terminal-auth": True},
        },
        evidence="zed-industries/zed crates/agent_servers/src/acp.rs @ 0038d2e2cc9b",
    ),
    "jetbrains": ClientProfile(
        name="jetbrains",
        client_info=schema.Implementation(name="jetbrains", version="0.0.0"),
        fs=True,
        terminal=True,
        evidence="JetBrains AI Assistant help (acp.html) and blog; no client source read",
    ),
}
"""The named profiles, by name (see the module docstring for each one's evidence)."""


def profile_named(profile: ClientProfile | str) -> ClientProfile:
    """``profile`` itself, or the profile of that name; an unknown name raises ``ValueError``."""
    if isinstance(profile, ClientProfile):
        return profile
    try:
        return PROFILES[profile]
    except KeyError:
        raise ValueError(
            f"unknown client profile {profile!r}; known: {', '.join(sorted(PROFILES))}"
        ) from None
