"""The client-side view: every display rule of ACP draft v2 applied to hand-written updates.

Examples named ``tool_calls_*`` are the JSON examples of the protocol's Tool Calls page.
"""

from __future__ import annotations

import base64
from typing import Any

import msgspec
import pytest

from acpio import schema
from acpio.testing._view import ClientView, SessionView, ToolCallView

SESSION = "sess_abc123def456"


def update(**fields: Any) -> schema.SessionUpdate:
    """A session update from its wire fields (camelCase keys; ``None`` is JSON null)."""
    result: schema.SessionUpdate = schema.convert(fields, schema.SessionUpdate)
    return result


def apply(view: SessionView, *updates: dict[str, Any]) -> SessionView:
    for fields in updates:
        view.apply(update(**fields))
    return view


def text_item(text: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": text}}


def tcu(tool_call_id: str = "call_001", **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id, **fields}


def chunk(tool_call_id: str, item: dict[str, Any]) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call_content_chunk", "toolCallId": tool_call_id, "content": item}


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def out(terminal_id: str, data: bytes) -> dict[str, Any]:
    return {"sessionUpdate": "terminal_output_chunk", "terminalId": terminal_id, "data": b64(data)}


def texts(call: ToolCallView) -> list[str]:
    return [
        item.content.text
        for item in call.content
        if isinstance(item, schema.Content) and isinstance(item.content, schema.TextContent)
    ]


# -- tool calls --------------------------------------------------------------------------------


def test_tool_calls_reporting_example() -> None:
    view = apply(
        SessionView(SESSION),
        tcu(title="Reading configuration file", name="read_file", kind="read", status="pending"),
    )
    call = view.tool_calls["call_001"]
    assert (call.id, call.title, call.name, call.kind, call.status) == (
        "call_001",
        "Reading configuration file",
        "read_file",
        "read",
        "pending",
    )
    assert call.content == [] and call.locations == []


def test_tool_calls_updating_example_keeps_omitted_fields() -> None:
    view = apply(
        SessionView(SESSION),
        tcu(title="Reading configuration file", name="read_file", kind="read", status="pending"),
        tcu(status="in_progress", content=[text_item("Found 3 configuration files...")]),
    )
    call = view.tool_calls["call_001"]
    assert call.status == "in_progress"
    assert call.title == "Reading configuration file"
    assert call.kind == "read" and call.name == "read_file"
    assert call.text == "Found 3 configuration files..."


def test_new_tool_call_starts_at_protocol_defaults() -> None:
    call = apply(SessionView(), tcu("c1")).tool_calls["c1"]
    assert call.title is None and call.name is None
    assert call.kind == "other" and call.status == "pending"
    assert call.content == [] and call.locations == []
    assert call.raw_input is None and call.raw_output is None
    assert call.capabilities is None and call.meta == {}
    assert not call.is_final


def test_null_clears_every_patch_field() -> None:
    view = apply(
        SessionView(),
        tcu(
            "c1",
            title="Run",
            name="shell",
            kind="execute",
            status="in_progress",
            content=[text_item("x")],
            locations=[{"path": "/p/a.py", "line": 3}],
            rawInput={"command": "ls"},
            rawOutput={"code": 0},
            capabilities={"cancel": {}},
            _meta={"a": 1},
        ),
        tcu(
            "c1",
            title=None,
            name=None,
            kind=None,
            status=None,
            content=None,
            locations=None,
            rawInput=None,
            rawOutput=None,
            capabilities=None,
            _meta=None,
        ),
    )
    call = view.tool_calls["c1"]
    assert call.title is None and call.name is None
    assert call.kind == "other"  # null resets kind to the default
    assert call.status == "pending"  # null resets status to the default
    assert call.content == [] and call.locations == []
    assert call.raw_input is None and call.raw_output is None
    assert call.capabilities is None and call.meta == {}


def test_omitted_fields_leave_values_unchanged() -> None:
    view = apply(
        SessionView(),
        tcu(
            "c1",
            title="Edit",
            kind="edit",
            locations=[{"path": "/p/a.py"}],
            rawInput={"x": 1},
            capabilities={"cancel": {}},
        ),
        tcu("c1", status="completed"),
    )
    call = view.tool_calls["c1"]
    assert call.title == "Edit" and call.kind == "edit" and call.status == "completed"
    assert [loc.path for loc in call.locations] == ["/p/a.py"]
    assert call.raw_input == {"x": 1}
    assert call.capabilities is not None and call.capabilities.cancel is not msgspec.UNSET
    assert call.is_final


def test_content_and_locations_are_replaced_whole() -> None:
    view = apply(
        SessionView(),
        tcu("c1", title="t", content=[text_item("a"), text_item("b")], locations=[{"path": "/a"}]),
        tcu("c1", content=[text_item("c")], locations=[{"path": "/b"}, {"path": "/c", "line": 2}]),
    )
    call = view.tool_calls["c1"]
    assert texts(call) == ["c"]
    assert [(loc.path, loc.line) for loc in call.locations] == [
        ("/b", msgspec.UNSET),
        ("/c", 2),
    ]


def test_chunks_append_and_a_later_content_replaces_them() -> None:
    view = apply(
        SessionView(),
        tcu("c1", title="Search"),
        chunk("c1", text_item("A")),
        chunk("c1", text_item("B")),
    )
    assert texts(view.tool_calls["c1"]) == ["A", "B"]
    apply(view, tcu("c1", content=[text_item("C")]))
    assert texts(view.tool_calls["c1"]) == ["C"]
    apply(view, chunk("c1", text_item("D")))
    assert texts(view.tool_calls["c1"]) == ["C", "D"]
    assert view.tool_calls["c1"].text == "CD"


@pytest.mark.parametrize("cleared", [[], None])
def test_empty_or_null_content_clears_chunks(cleared: list[object] | None) -> None:
    view = apply(
        SessionView(),
        tcu("c1", title="t"),
        chunk("c1", text_item("A")),
        tcu("c1", content=cleared),
    )
    assert view.tool_calls["c1"].content == []
    apply(view, chunk("c1", text_item("E")))
    assert texts(view.tool_calls["c1"]) == ["E"]


def test_streaming_content_example_on_unseen_id_creates_the_call() -> None:
    view = apply(SessionView(), chunk("call_001", text_item("Found 3 configuration files...")))
    call = view.tool_calls["call_001"]
    assert call.status == "pending" and call.kind == "other" and call.title is None
    assert call.text == "Found 3 configuration files..."


def test_chunk_meta_is_chunk_scoped() -> None:
    view = apply(
        SessionView(),
        tcu("c1", title="t", _meta={"keep": 1}),
        {**chunk("c1", text_item("A")), "_meta": {"chunk": True}},
    )
    assert view.tool_calls["c1"].meta == {"keep": 1}


def test_meta_patches_by_top_level_key() -> None:
    view = apply(
        SessionView(),
        tcu("c1", title="t", _meta={"a": 1, "b": 2, "nested": {"x": 1}}),
        tcu("c1", _meta={"b": None, "c": 3, "nested": {"y": 2}}),
    )
    # b removed, c added, nested replaced (not merged), a untouched
    assert view.tool_calls["c1"].meta == {"a": 1, "c": 3, "nested": {"y": 2}}
    apply(view, tcu("c1", status="completed"))
    assert view.tool_calls["c1"].meta == {"a": 1, "c": 3, "nested": {"y": 2}}
    apply(view, tcu("c1", _meta=None))
    assert view.tool_calls["c1"].meta == {}


def test_tool_calls_keep_first_seen_order() -> None:
    view = apply(
        SessionView(),
        tcu("b", title="B"),
        tcu("a", title="A"),
        chunk("c", text_item("x")),
        tcu("b", status="completed"),
    )
    assert list(view.tool_calls) == ["b", "a", "c"]


def test_unknown_content_types_are_preserved_verbatim() -> None:
    custom = {"type": "_chart", "series": [1, 2, 3], "_meta": {"k": "v"}}
    future = {"type": "video", "url": "https://example.com/v.mp4"}
    view = apply(SessionView(), tcu("c1", title="t", content=[custom]), chunk("c1", future))
    items = view.tool_calls["c1"].content
    assert isinstance(items[0], schema.UnknownToolCallContent)
    assert isinstance(items[1], schema.UnknownToolCallContent)
    assert items[0].raw == custom and items[1].raw == future
    assert msgspec.json.decode(schema.encode(items)) == [custom, future]
    assert view.tool_calls["c1"].text == ""


def test_tool_calls_diff_examples() -> None:
    modify = {
        "type": "diff",
        "changes": [
            {
                "operation": "modify",
                "path": "/home/user/project/src/config.json",
                "fileType": "text",
                "mimeType": "application/json",
            }
        ],
        "patch": {
            "format": "git_patch",
            "text": "diff --git /home/user/project/src/config.json "
            "/home/user/project/src/config.json\n"
            "--- /home/user/project/src/config.json\n"
            "+++ /home/user/project/src/config.json\n"
            '@@ -1,3 +1,3 @@\n {\n-  "debug": false\n+  "debug": true\n }\n',
        },
    }
    binary = {
        "type": "diff",
        "changes": [
            {
                "operation": "modify",
                "path": "/home/user/project/assets/logo.png",
                "fileType": "binary",
                "mimeType": "image/png",
            }
        ],
    }
    view = apply(
        SessionView(), tcu("c1", title="Edit", content=[modify, text_item("done"), binary])
    )
    diffs = view.tool_calls["c1"].diffs
    assert len(diffs) == 2
    first, second = diffs
    assert isinstance(first.changes[0], schema.ModifyChange)
    assert first.changes[0].path == "/home/user/project/src/config.json"
    assert first.patch is not None and not isinstance(first.patch, msgspec.UnsetType)
    assert first.patch.text.startswith("diff --git ")
    assert second.patch is msgspec.UNSET


def test_locations_example() -> None:
    view = apply(
        SessionView(),
        tcu("c1", title="t", locations=[{"path": "/home/user/project/src/main.py", "line": 42}]),
    )
    (location,) = view.tool_calls["c1"].locations
    assert (location.path, location.line) == ("/home/user/project/src/main.py", 42)


# -- terminals ---------------------------------------------------------------------------------


def test_tool_calls_terminal_update_example() -> None:
    view = apply(
        SessionView(),
        {
            "sessionUpdate": "terminal_update",
            "terminalId": "term_001",
            "command": "cargo test",
            "cwd": "/home/user/project",
            "output": {"data": "cnVubmluZyB0ZXN0cw0K"},
            "exitStatus": {"exitCode": 0, "signal": None},
        },
    )
    terminal = view.terminals["term_001"]
    assert terminal.command == "cargo test" and terminal.cwd == "/home/user/project"
    assert terminal.output == b"running tests\r\n"
    assert terminal.exited and terminal.exit_code == 0 and terminal.signal is None


def test_tool_calls_terminal_output_chunk_example_appends() -> None:
    view = apply(
        SessionView(),
        {"sessionUpdate": "terminal_update", "terminalId": "term_001", "command": "cargo test"},
        {
            "sessionUpdate": "terminal_output_chunk",
            "terminalId": "term_001",
            "data": "cGFzc2VkDQo=",
        },
    )
    terminal = view.terminals["term_001"]
    assert terminal.output == b"passed\r\n"
    assert not terminal.exited and terminal.exit_code is None


def test_each_chunk_is_decoded_on_its_own() -> None:
    # "YQ==" + "Yg==" is not valid base64 as one string; decoded separately it is b"ab".
    view = apply(
        SessionView(),
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": "YQ=="},
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": "Yg=="},
    )
    assert view.terminals["t"].output == b"ab"


def test_chunk_boundaries_may_split_utf8_and_escape_sequences() -> None:
    data = "héllo \x1b[31mrouge\x1b[0m ✓\n".encode()
    cuts = [2, 3, 8, 9, 11, len(data) - 3, len(data) - 2]
    pieces = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
    assert any(b"\xc3" in piece and b"\xa9" not in piece for piece in pieces)  # split é
    view = apply(SessionView(), *(out("t", piece) for piece in pieces))
    terminal = view.terminals["t"]
    assert terminal.output == data
    assert terminal.text == data.decode()


def test_snapshot_replaces_all_stored_bytes() -> None:
    view = apply(
        SessionView(),
        out("t", b"old line 1\n"),
        out("t", b"old line 2\n"),
        {"sessionUpdate": "terminal_update", "terminalId": "t", "output": {"data": b64(b"new\n")}},
    )
    assert view.terminals["t"].output == b"new\n"
    apply(view, out("t", b"more\n"))
    assert view.terminals["t"].output == b"new\nmore\n"
    apply(view, {"sessionUpdate": "terminal_update", "terminalId": "t", "output": None})
    assert view.terminals["t"].output == b""
    apply(view, {"sessionUpdate": "terminal_update", "terminalId": "t", "output": {"data": ""}})
    assert view.terminals["t"].output == b""


def test_exit_status_by_signal() -> None:
    view = apply(
        SessionView(),
        {"sessionUpdate": "terminal_update", "terminalId": "t", "command": "sleep 100"},
        {
            "sessionUpdate": "terminal_update",
            "terminalId": "t",
            "exitStatus": {"signal": "SIGTERM"},
        },
    )
    terminal = view.terminals["t"]
    assert terminal.exited
    assert terminal.signal == "SIGTERM" and terminal.exit_code is None
    assert terminal.command == "sleep 100"


def test_empty_exit_status_still_marks_exit_and_null_clears_it() -> None:
    view = apply(
        SessionView(), {"sessionUpdate": "terminal_update", "terminalId": "t", "exitStatus": {}}
    )
    assert view.terminals["t"].exited
    assert view.terminals["t"].exit_code is None and view.terminals["t"].signal is None
    apply(view, {"sessionUpdate": "terminal_update", "terminalId": "t", "exitStatus": None})
    assert not view.terminals["t"].exited


def test_terminal_fields_patch() -> None:
    view = apply(
        SessionView(),
        {
            "sessionUpdate": "terminal_update",
            "terminalId": "t",
            "command": "make",
            "cwd": "/src",
            "size": {"cols": 80, "rows": 24},
            "capabilities": {"cancel": {}},
            "_meta": {"a": 1, "b": 2},
        },
        {
            "sessionUpdate": "terminal_update",
            "terminalId": "t",
            "command": None,
            "capabilities": None,
            "_meta": {"a": None},
        },
    )
    terminal = view.terminals["t"]
    assert terminal.command is None and terminal.cwd == "/src"
    assert terminal.size is not None and (terminal.size.cols, terminal.size.rows) == (80, 24)
    assert terminal.capabilities is None
    assert terminal.meta == {"b": 2}


def test_terminal_reference_first_creates_the_terminal() -> None:
    view = apply(
        SessionView(),
        tcu(
            "c1",
            title="Run tests",
            kind="execute",
            content=[{"type": "terminal", "terminalId": "term_001"}],
        ),
    )
    assert view.tool_calls["c1"].terminal_ids == ["term_001"]
    terminal = view.terminals["term_001"]
    assert terminal.command is None and terminal.output == b"" and not terminal.exited
    apply(
        view,
        {"sessionUpdate": "terminal_update", "terminalId": "term_001", "command": "cargo test"},
    )
    assert list(view.terminals) == ["term_001"]
    assert view.terminals["term_001"].command == "cargo test"


def test_terminal_update_first_then_reference_by_chunk() -> None:
    view = apply(
        SessionView(),
        out("term_001", b"compiling\n"),
        tcu("c1", title="Run"),
        chunk("c1", {"type": "terminal", "terminalId": "term_001"}),
        chunk("c1", {"type": "terminal", "terminalId": "term_002"}),
    )
    assert view.tool_calls["c1"].terminal_ids == ["term_001", "term_002"]
    assert list(view.terminals) == ["term_001", "term_002"]
    assert view.terminals["term_001"].output == b"compiling\n"


def test_invalid_base64_adds_no_bytes_and_is_counted() -> None:
    view = apply(
        SessionView(),
        out("t", b"ok"),
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": "not base64!"},
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": "YQ"},
    )
    assert view.terminals["t"].output == b"ok"
    assert view.terminals["t"].decode_errors == 2


# -- messages ----------------------------------------------------------------------------------


def msg(kind: str, message_id: str, **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": kind, "messageId": message_id, **fields}


def block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def test_messages_full_update_then_chunk_then_replace() -> None:
    view = apply(
        SessionView(),
        msg("agent_message", "m1", content=[block("A")]),
        msg("agent_message_chunk", "m1", content=block("B")),
    )
    assert view.message("m1").text == "AB"
    apply(view, msg("agent_message", "m1", content=[block("C")]))
    assert view.message("m1").text == "C"
    apply(view, msg("agent_message_chunk", "m1", content=block("D")))
    assert [b.text for b in view.message("m1").content if isinstance(b, schema.TextContent)] == [
        "C",
        "D",
    ]


@pytest.mark.parametrize("cleared", [[], None])
def test_message_content_cleared_by_empty_or_null(cleared: list[object] | None) -> None:
    view = apply(
        SessionView(),
        msg("user_message", "u1", content=[block("hello")]),
        msg("user_message", "u1", content=cleared),
    )
    assert view.message("u1").content == []


def test_message_update_without_content_keeps_it_and_patches_meta() -> None:
    view = apply(
        SessionView(),
        msg("agent_thought_chunk", "t1", content=block("thinking")),
        msg("agent_thought", "t1", _meta={"k": 1}),
        msg("agent_thought", "t1", _meta={"k": None, "j": 2}),
    )
    thought = view.message("t1", "thought")
    assert thought.text == "thinking" and thought.meta == {"j": 2}


def test_messages_in_first_seen_order_with_roles() -> None:
    view = apply(
        SessionView(),
        msg("user_message", "u1", content=[block("Can you analyze this code?")]),
        msg("agent_thought_chunk", "t1", content=block("Need to look.")),
        msg("agent_message_chunk", "a1", content=block("I'll analyze ")),
        msg("agent_message_chunk", "a2", content=block("Second.")),
        msg("agent_message_chunk", "a1", content=block("your code.")),
        msg("user_message_chunk", "u2", content=block("More")),
    )
    assert [(m.role, m.message_id) for m in view.messages] == [
        ("user", "u1"),
        ("thought", "t1"),
        ("agent", "a1"),
        ("agent", "a2"),
        ("user", "u2"),
    ]
    assert view.message("a1").text == "I'll analyze your code."
    assert [m.message_id for m in view.user_messages] == ["u1", "u2"]
    assert [m.message_id for m in view.thoughts] == ["t1"]
    assert view.agent_text == "I'll analyze your code.Second."
    with pytest.raises(KeyError):
        view.message("nope")


def test_message_chunks_keep_unknown_blocks() -> None:
    view = apply(
        SessionView(),
        msg("agent_message_chunk", "a1", content={"type": "_widget", "x": 1}),
        msg("agent_message_chunk", "a1", content=block("hi")),
    )
    first = view.message("a1").content[0]
    assert isinstance(first, schema.UnknownContentBlock) and first.raw == {
        "type": "_widget",
        "x": 1,
    }
    assert view.message("a1").text == "hi"


def test_chunk_meta_does_not_patch_message_meta() -> None:
    view = apply(
        SessionView(),
        msg("agent_message", "a1", content=[], _meta={"m": 1}),
        msg("agent_message_chunk", "a1", content=block("x"), _meta={"chunk": 1}),
    )
    assert view.message("a1").meta == {"m": 1}


# -- plans, state, and the rest ----------------------------------------------------------------


def entry(content: str, status: str = "pending", priority: str = "medium") -> dict[str, Any]:
    return {"content": content, "priority": priority, "status": status}


def test_plans_replaced_whole_by_id() -> None:
    view = apply(
        SessionView(),
        {
            "sessionUpdate": "plan_update",
            "plan": {"type": "items", "planId": "p1", "entries": [entry("a"), entry("b")]},
        },
        {
            "sessionUpdate": "plan_update",
            "plan": {"type": "items", "planId": "p2", "entries": [entry("z")]},
        },
        {
            "sessionUpdate": "plan_update",
            "plan": {"type": "items", "planId": "p1", "entries": [entry("a", "completed")]},
        },
    )
    assert list(view.plans) == ["p1", "p2"]
    assert [(e.content, e.status) for e in view.plans["p1"].entries] == [("a", "completed")]
    assert [e.content for e in view.plans["p2"].entries] == ["z"]


def test_unknown_plan_content_kept_raw_and_replaces() -> None:
    raw = {"type": "_markdown", "planId": "p1", "text": "# Plan"}
    view = apply(
        SessionView(),
        {
            "sessionUpdate": "plan_update",
            "plan": {"type": "items", "planId": "p1", "entries": [entry("a")]},
        },
        {"sessionUpdate": "plan_update", "plan": raw},
    )
    plan = view.plans["p1"]
    assert plan.entries == []
    assert isinstance(plan.content, schema.UnknownPlanUpdateContent) and plan.content.raw == raw


def state(name: str, **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "state_update", "state": name, **fields}


def test_state_transitions_and_stop_reasons() -> None:
    view = SessionView()
    assert view.state == "idle" and not view.busy
    apply(view, state("running"))
    assert view.state == "running" and view.busy
    apply(view, state("requires_action"), state("running"), state("idle", stopReason="end_turn"))
    assert view.state == "idle" and view.stop_reasons == ["end_turn"]
    # A repeated idle snapshot is not another completion.
    apply(view, state("idle", stopReason="end_turn"))
    assert view.stop_reasons == ["end_turn"]
    apply(view, state("running"), state("idle"))
    assert view.stop_reasons == ["end_turn", None]
    apply(view, state("running"), state("idle", stopReason="cancelled"))
    assert view.stop_reasons == ["end_turn", None, "cancelled"]
    assert view.last_stop_reason == "cancelled"


def test_idle_error_keeps_last_error() -> None:
    view = apply(
        SessionView(),
        state("running"),
        state("idle", stopReason="error", error={"code": -32603, "message": "model failed"}),
    )
    assert view.stop_reasons == ["error"]
    assert view.last_error is not None and view.last_error.message == "model failed"


def test_unknown_state_is_busy_not_idle() -> None:
    view = apply(SessionView(), state("_compacting"))
    assert view.state == "_compacting" and view.busy
    apply(view, state("idle", stopReason="_custom_reason"))
    assert view.stop_reasons == ["_custom_reason"]


def test_background_snapshot_kept_when_not_reported() -> None:
    background = [
        {"type": "terminal", "terminalId": "t1"},
        {"type": "tool_call", "toolCallId": "c1"},
    ]
    view = apply(
        SessionView(),
        state("running", background=background),
        state("idle", stopReason="end_turn"),
    )
    assert view.background is not None
    assert [type(item) for item in view.background] == [
        schema.BackgroundTerminal,
        schema.BackgroundToolCall,
    ]
    apply(view, state("running", background=[]))
    assert view.background == []


def test_notices_usage_info_commands_config() -> None:
    view = apply(
        SessionView(),
        {"sessionUpdate": "notice", "severity": "warning", "title": "Rate limited"},
        {"sessionUpdate": "notice", "severity": "_custom", "title": "Hi", "description": "d"},
        {
            "sessionUpdate": "usage_update",
            "used": 53000,
            "size": 200000,
            "cost": {"amount": 0.045, "currency": "USD"},
        },
        {"sessionUpdate": "usage_update", "used": 54000, "size": 200000},
        {
            "sessionUpdate": "session_info_update",
            "title": "Fix bug",
            "updatedAt": "2026-01-01T00:00:00Z",
            "_meta": {"x": 1},
        },
        {"sessionUpdate": "session_info_update", "updatedAt": None},
        {
            "sessionUpdate": "available_commands_update",
            "availableCommands": [{"type": "command", "name": "web", "description": "Search"}],
        },
        {
            "sessionUpdate": "config_option_update",
            "configOptions": [
                {"type": "boolean", "configId": "fast", "name": "Fast", "currentValue": True}
            ],
        },
    )
    assert [(n.severity, n.title) for n in view.notices] == [
        ("warning", "Rate limited"),
        ("_custom", "Hi"),
    ]
    assert view.usage is not None and (view.usage.used, view.usage.size) == (54000, 200000)
    assert view.usage.cost is not None and view.usage.cost.amount == 0.045  # omitted: kept
    apply(view, {"sessionUpdate": "usage_update", "used": 1, "size": 2, "cost": None})
    assert view.usage is not None and view.usage.cost is None  # null: cleared
    assert (view.info.title, view.info.updated_at, view.info.meta) == ("Fix bug", None, {"x": 1})
    assert view.available_commands is not None and len(view.available_commands) == 1
    assert view.config_options is not None and len(view.config_options) == 1


def test_unknown_updates_kept_raw_in_order() -> None:
    first = {"sessionUpdate": "_progress", "value": 1}
    second = {"sessionUpdate": "future_update", "x": [1]}
    view = apply(SessionView(), first, second)
    assert [u.raw for u in view.unknown_updates] == [first, second]
    assert view.updates_applied == 2


def test_compactions() -> None:
    view = apply(
        SessionView(),
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": "k1", "content": block("a")},
        {"sessionUpdate": "compaction_update", "compactionId": "k1", "status": "completed"},
        {
            "sessionUpdate": "compaction_update",
            "compactionId": "k2",
            "status": "failed",
            "error": "boom",
            "summary": [block("s")],
        },
        {
            "sessionUpdate": "compaction_update",
            "compactionId": "k2",
            "status": "failed",
            "summary": None,
        },
    )
    assert view.compactions["k1"].status == "completed"
    assert [
        b.text for b in view.compactions["k1"].summary if isinstance(b, schema.TextContent)
    ] == ["a"]
    assert view.compactions["k2"].error == "boom" and view.compactions["k2"].summary == []


# -- client view -------------------------------------------------------------------------------


def test_client_view_routes_by_session() -> None:
    client = ClientView()
    client.apply(
        schema.UpdateSessionNotification(session_id="s1", update=update(**tcu("c1", title="one")))
    )
    client.apply_json(
        b'{"sessionId":"s2","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"hi"}}}'
    )
    assert list(client.sessions) == ["s1", "s2"]
    assert client.session("s1").tool_calls["c1"].title == "one"
    assert client.session("s2").agent_text == "hi"
    assert client.session("s3").session_id == "s3"


def test_permission_subject_applies_like_a_tool_call_update() -> None:
    client = ClientView()
    client.apply_json(
        b'{"sessionId":"s","update":'
        + schema.encode(update(**tcu("c1", title="Edit", status="pending")))
        + b"}"
    )
    params = schema.convert(
        {
            "sessionId": "s",
            "title": "Approve file edit?",
            "subject": {"type": "tool_call", "toolCall": {"toolCallId": "c1", "kind": "edit"}},
            "options": [{"optionId": "allow-once", "name": "Allow once", "kind": "allow_once"}],
        },
        schema.RequestPermissionRequest,
    )
    client.apply_permission_request(params)
    call = client.session("s").tool_calls["c1"]
    assert call.kind == "edit" and call.title == "Edit"  # the prompt title does not replace it
    new = schema.convert(
        {
            "sessionId": "s",
            "title": "Run?",
            "subject": {
                "type": "tool_call",
                "toolCall": {"toolCallId": "c2", "title": "Run tests"},
            },
            "options": [{"optionId": "a", "name": "Allow", "kind": "allow_once"}],
        },
        schema.RequestPermissionRequest,
    )
    client.apply_permission_request(new)
    assert list(client.session("s").tool_calls) == ["c1", "c2"]
    command = schema.convert(
        {
            "sessionId": "s",
            "title": "Run the test suite?",
            "subject": {
                "type": "command",
                "command": "cargo test",
                "cwd": "/home/user/project",
                "toolCallId": "c9",
            },
            "options": [{"optionId": "allow-once", "name": "Allow once", "kind": "allow_once"}],
        },
        schema.RequestPermissionRequest,
    )
    client.apply_permission_request(command)
    assert "c9" not in client.session("s").tool_calls
