"""The conformance checker: each rule passes good traffic and names exactly the rule broken by
hand-written bad traffic, with a hint; the fast schema validator agrees with jsonschema's."""

from __future__ import annotations

import base64
import copy
import json
import random
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from jsonschema import Draft202012Validator

from acpio.testing import RULES, ConformanceChecker, ConformanceError, Violation
from acpio.testing._patch_reader import parse_git_patch
from acpio.testing._rules import HINTS
from acpio.testing._schema_check import load_schema, official

FIXTURES = Path(__file__).parent.parent / "fixtures"
SESSION = "s1"
CWD = "/home/user/project"


def request(request_id: object, method: str, params: object) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def result(request_id: object, value: object) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def error(request_id: object, code: int, message: str = "error") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def notification(method: str, params: object) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def options(*kinds: str) -> list[dict[str, Any]]:
    return [{"optionId": f"o{i}", "name": kind, "kind": kind} for i, kind in enumerate(kinds)]


class Wire:
    """Feeds hand-written traffic to a non-strict checker, both ways."""

    def __init__(self, **kwargs: Any) -> None:
        self.checker = ConformanceChecker(strict=False, **kwargs)
        self.next_id = 100

    def agent(self, message: object) -> None:
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.checker.observe("agent->client", data)

    def client(self, message: object) -> None:
        self.checker.observe("client->agent", json.dumps(message).encode())

    def update(self, session: str = SESSION, **update: Any) -> None:
        self.agent(notification("session/update", {"sessionId": session, "update": update}))

    def state(self, name: str, session: str = SESSION, **fields: Any) -> None:
        self.update(session, sessionUpdate="state_update", state=name, **fields)

    def tool_call(self, tool_call_id: str, session: str = SESSION, **fields: Any) -> None:
        self.update(session, sessionUpdate="tool_call_update", toolCallId=tool_call_id, **fields)

    def prompt(self, session: str = SESSION, message_id: str | None = None) -> int:
        """Send session/prompt; with `message_id`, accept it and echo the user message."""
        self.next_id += 1
        prompt_id = self.next_id
        self.client(
            request(prompt_id, "session/prompt", {"sessionId": session, "prompt": [text("hi")]})
        )
        if message_id is not None:
            self.agent(result(prompt_id, {"messageId": message_id}))
            self.update(
                session, sessionUpdate="user_message", messageId=message_id, content=[text("hi")]
            )
        return prompt_id

    def permission(self, request_id: object, session: str = SESSION, **params: Any) -> None:
        params.setdefault("title", "Allow?")
        params.setdefault("options", options("allow_once", "reject_once"))
        self.agent(
            request(request_id, "session/request_permission", {"sessionId": session, **params})
        )

    @property
    def violations(self) -> list[Violation]:
        return self.checker.violations

    def rules(self) -> list[str]:
        return [violation.rule for violation in self.checker.violations]


def started(**kwargs: Any) -> Wire:
    wire = Wire(**kwargs)
    wire.client(
        request(0, "initialize", {"protocolVersion": 2, "info": {"name": "c", "version": "1"}})
    )
    wire.agent(
        result(
            0,
            {
                "protocolVersion": 2,
                "info": {"name": "a", "version": "1"},
                "capabilities": {"session": {}},
            },
        )
    )
    wire.client(request(1, "session/new", {"cwd": CWD, "mcpServers": []}))
    wire.agent(result(1, {"sessionId": SESSION}))
    return wire


def running(**kwargs: Any) -> Wire:
    """A session with an accepted prompt whose work is running."""
    wire = started(**kwargs)
    wire.prompt(message_id="u1")
    wire.state("running")
    return wire


def only(wire: Wire, rule: str, *, final: bool = True) -> list[Violation]:
    """The violations, which must all be of `rule` (at least one), each with a hint."""
    if final:
        wire.checker.check_report()
    found = wire.violations
    assert found, f"expected a {rule} violation"
    assert {violation.rule for violation in found} == {rule}, [str(v) for v in found]
    for violation in found:
        assert violation.hint == HINTS[rule]
        assert violation.raw.strip() or rule == "stdout"  # a blank line is its own raw
    return found


def clean(wire: Wire) -> None:
    report = wire.checker.check_report()
    assert report.ok, report.summary()


# -- the whole protocol, good --------------------------------------------------------------------


class Record(msgspec.Struct):
    direction: Any
    message: msgspec.Raw


def good_session() -> Iterator[tuple[Any, bytes]]:
    decoder = msgspec.json.Decoder(Record)
    for line in (FIXTURES / "conformance_good_session.jsonl").read_bytes().splitlines():
        entry = decoder.decode(line)
        yield entry.direction, bytes(entry.message)


def test_good_session_passes_and_exercises_every_rule() -> None:
    checker = ConformanceChecker()
    for direction, data in good_session():
        checker.observe(direction, data)
    report = checker.check_report()
    assert report.ok
    assert report.failed_rules == []
    assert set(report.exercised_rules) == set(RULES)
    assert report.messages == sum(1 for _ in good_session())
    summary = report.summary().splitlines()
    assert len(summary) == len(RULES)
    assert all(line.lstrip().startswith("pass") for line in summary)


def test_rules_table_is_complete() -> None:
    hints = HINTS
    assert set(hints) == set(RULES)
    for rule_id, rule in RULES.items():
        assert rule.id == rule_id and rule.description and "\n" not in rule.description
    assert not RULES["tool-call-title"].mandatory and RULES["schema"].mandatory


# -- stdout --------------------------------------------------------------------------------------


@pytest.mark.parametrize("line", [b"Loading model...", b"", b"  ", b"42", b'"text"', b"{bad json"])
def test_stdout_carries_only_message_objects(line: bytes) -> None:
    wire = started()
    wire.agent(line)
    (violation,) = only(wire, "stdout")
    assert "stderr" in violation.hint


def test_invalid_utf8_is_not_a_message() -> None:
    wire = started()
    wire.agent(b'{"jsonrpc":"2.0","method":"_x","params":"\xff"}')
    only(wire, "stdout")


# -- jsonrpc -------------------------------------------------------------------------------------


def test_jsonrpc_version_and_arrays_the_agent_starts() -> None:
    wire = started()
    wire.agent({"jsonrpc": "1.0", "method": "_x/y"})
    wire.agent([notification("_x/y", {})])  # a batch of the agent's own
    wire.agent([result(1, {"sessionId": "s2"})])  # an array answering no client batch
    wire.agent([])
    found = only(wire, "jsonrpc")
    assert len(found) == 4
    assert "only responses" in found[1].message
    assert "no client batch" in found[2].message
    assert "empty array" in found[3].message


def test_array_reply_to_a_client_batch() -> None:
    wire = started()
    wire.client(
        [request(5, "session/list", {}), notification("_x/ping", {}), request("b", "_x/a", {})]
    )
    # JSON-RPC 2.0: one array with a response per request, in any order; none for notifications.
    wire.agent([error("b", -32601, "Method not found"), result(5, {"sessions": []})])
    # An invalid entry gets an error with id null inside the array.
    wire.client([request(6, "session/list", {}), 1])
    wire.agent([result(6, {"sessions": []}), error(None, -32600, "Invalid Request")])
    clean(wire)


def test_array_reply_answers_exactly_the_batch() -> None:
    wire = started()
    wire.client([request(5, "session/list", {}), request(6, "session/list", {})])
    wire.agent([result(5, {"sessions": []})])
    (missing,) = only(wire, "jsonrpc")  # reported once: not again as never answered
    assert "no response to session/list (id 6)" in missing.message

    wire = started()
    wire.client(request(7, "session/list", {}))
    wire.client([request(8, "session/list", {})])
    wire.agent([result(8, {"sessions": []}), result(7, {"sessions": []})])
    wire.agent(result(7, {"sessions": []}))
    (outside,) = only(wire, "jsonrpc")
    assert "id 7, which is not a request of that batch" in outside.message

    wire = started()
    wire.client([request(8, "session/list", {}), request(9, "session/list", {})])
    wire.agent(
        [result(8, {"sessions": []}), result(8, {"sessions": []}), result(9, {"sessions": []})]
    )
    (twice,) = only(wire, "jsonrpc")
    assert "answers id 8 twice" in twice.message

    wire = started()
    wire.client([request(8, "session/list", {})])
    wire.agent([result(8, {"sessions": []}), error(None, -32600, "Invalid Request")])
    (stray,) = only(wire, "jsonrpc")
    assert "id null" in stray.message


def test_notification_batches_get_no_reply() -> None:
    wire = started()
    wire.client([notification("_x/ping", {}), notification("_x/pong", {})])
    wire.agent([error(None, -32601, "Method not found")])
    (violation,) = only(wire, "no-reply-to-notification")
    assert "batch of notifications" in violation.message


def test_empty_batch_gets_one_error_object() -> None:
    wire = started()
    wire.client([])
    wire.agent(error(None, -32600, "Empty batch"))
    clean(wire)
    for reply in ([error(None, -32600, "Empty batch")], []):
        wire = started()
        wire.client([])
        wire.agent(reply)
        (violation,) = only(wire, "jsonrpc")
        assert "empty" in violation.message


def test_batch_refused_as_a_whole() -> None:
    # Where batches are unsupported (the newest schema defines none), one -32600 refuses it all.
    wire = started()
    wire.client([request(5, "session/list", {}), notification("_x/ping", {})])
    wire.agent(error(None, -32600, "Batches are not supported"))
    clean(wire)


def test_responses_only_to_pending_client_requests_exactly_once() -> None:
    wire = started()
    wire.agent(result(1, {"sessionId": "again"}))  # answered before
    wire.agent(result(77, {}))  # never sent
    wire.agent({"jsonrpc": "2.0", "id": 5.5, "result": {}})
    found = only(wire, "jsonrpc")
    assert len(found) == 3
    assert "never sent, or already answered" in found[0].message


def test_result_and_error_together() -> None:
    wire = started()
    wire.client(request(9, "_x/y", {}))
    wire.agent({"jsonrpc": "2.0", "id": 9, "result": {}, "error": {"code": -32603, "message": "x"}})
    only(wire, "jsonrpc")


def test_ids_are_strings_or_integers_and_never_reused_while_pending() -> None:
    wire = running()
    wire.agent(request(None, "_x/y", {}))
    wire.agent(request(True, "_x/y", {}))
    wire.permission(7)
    wire.permission(7)
    assert len(only(wire, "jsonrpc", final=False)) == 3


def test_same_id_in_both_directions_is_fine() -> None:
    wire = running()
    wire.client(request(5, "_x/y", {}))
    wire.permission(5)
    wire.client(result(5, {"outcome": {"outcome": "cancelled"}}))
    wire.agent({"jsonrpc": "2.0", "id": 5, "error": {"code": -32601, "message": "no"}})
    wire.state("running")
    wire.state("idle", stopReason="end_turn")
    clean(wire)


def test_cancel_request_for_an_id_the_agent_never_used() -> None:
    wire = started()
    wire.agent(notification("$/cancel_request", {"requestId": 123}))
    only(wire, "jsonrpc")


def test_unanswered_client_request_found_at_the_end() -> None:
    wire = started()
    wire.client(request(8, "session/list", {}))
    assert wire.violations == []
    (violation,) = only(wire, "jsonrpc")
    assert "never answered" in violation.message and "session/list" in violation.raw


# -- no-reply-to-notification --------------------------------------------------------------------


def test_never_reply_to_a_notification() -> None:
    wire = started()
    wire.client(notification("_mock/unknown", {}))
    wire.agent({"jsonrpc": "2.0", "id": None, "error": {"code": -32601, "message": "not found"}})
    wire.agent({"jsonrpc": "2.0", "id": None, "result": {}})
    assert len(only(wire, "no-reply-to-notification")) == 2


def test_parse_error_with_null_id_is_allowed() -> None:
    wire = started()
    wire.checker.observe("client->agent", b"{not json")
    wire.agent({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
    clean(wire)


# -- schema --------------------------------------------------------------------------------------


def test_schema_names_the_bad_field() -> None:
    wire = running()
    wire.tool_call("c1", title=3)
    (violation,) = only(wire, "schema", final=False)
    assert "update.title" in violation.message and "UpdateSessionNotification" in violation.message


def test_schema_checks_results_by_method_and_errors() -> None:
    wire = started()
    wire.client(request(2, "session/prompt", {"sessionId": SESSION, "prompt": [text("x")]}))
    wire.agent(result(2, {}))  # messageId is required
    wire.client(
        request(3, "initialize", {"protocolVersion": 2, "info": {"name": "c", "version": "1"}})
    )
    wire.agent(result(3, {"protocolVersion": 2}))  # info is required
    wire.client(request(4, "session/list", {}))
    wire.agent({"jsonrpc": "2.0", "id": 4, "error": {"code": "bad", "message": "x"}})
    found = only(wire, "schema", final=False)
    assert [v.message.split(" does not match ")[1].split(":")[0] for v in found] == [
        "PromptResponse",
        "InitializeResponse",
        "Error",
    ]


def test_schema_checks_agent_requests() -> None:
    wire = running()
    wire.agent(
        request(
            1,
            "session/request_permission",
            {"sessionId": SESSION, "options": options("allow_once")},
        )
    )
    (violation,) = only(wire, "schema", final=False)
    assert "'title' is a required property" in violation.message


def test_extension_payloads_are_free() -> None:
    wire = started()
    wire.agent(notification("_vendor/anything", [1, 2, 3]))
    wire.client(request(5, "_vendor/ask", None))
    wire.agent(result(5, "any value"))
    clean(wire)


# -- methods -------------------------------------------------------------------------------------


def test_only_client_methods() -> None:
    wire = started()
    wire.agent(request(1, "fs/read_text_file", {"sessionId": SESSION, "path": "/a"}))
    wire.agent(notification("session/prompt", {"sessionId": SESSION}))
    wire.agent(
        request(
            2,
            "session/update",
            {
                "sessionId": SESSION,
                "update": {"sessionUpdate": "notice", "severity": "info", "title": "t"},
            },
        )
    )
    wire.agent(
        notification(
            "session/request_permission",
            {"sessionId": SESSION, "title": "t", "options": options("allow_once")},
        )
    )
    found = only(wire, "methods", final=False)
    assert len(found) == 4
    assert "send it without an id" in found[2].message and "send it with an id" in found[3].message


# -- custom-values -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("update", "where"),
    [
        (
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "c1",
                "title": "t",
                "kind": "compile",
            },
            "update.kind",
        ),
        (
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "c1",
                "title": "t",
                "status": "done",
            },
            "update.status",
        ),
        (
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "c1",
                "title": "t",
                "content": [{"type": "video"}],
            },
            "update.content[0].type",
        ),
        (
            {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "m",
                "content": {"type": "video"},
            },
            "update.content.type",
        ),
        ({"sessionUpdate": "progress_update", "value": 1}, "update.sessionUpdate"),
        ({"sessionUpdate": "notice", "severity": "fatal", "title": "t"}, "update.severity"),
        (
            {
                "sessionUpdate": "plan_update",
                "plan": {
                    "type": "items",
                    "planId": "p",
                    "entries": [{"content": "c", "priority": "urgent", "status": "pending"}],
                },
            },
            "priority",
        ),
    ],
)
def test_unknown_values_from_the_agent_must_start_with_underscore(
    update: dict[str, Any], where: str
) -> None:
    wire = running()
    wire.update(**update)
    (violation,) = only(wire, "custom-values", final=False)
    assert where in violation.message and "'_'" in violation.message


def test_unknown_stop_reason() -> None:
    wire = running()
    wire.state("idle", stopReason="done")
    (violation,) = only(wire, "custom-values")
    assert "stopReason 'done'" in violation.message


def test_underscore_values_are_fine() -> None:
    wire = running()
    wire.tool_call(
        "c1", title="t", kind="_compile", status="_queued", content=[{"type": "_chart", "x": 1}]
    )
    wire.update(sessionUpdate="_progress", value=1)
    wire.update(sessionUpdate="notice", severity="_fatal", title="t")
    wire.update(sessionUpdate="agent_message_chunk", messageId="m", content={"type": "_widget"})
    wire.state("idle", stopReason="_handed_off")
    clean(wire)


def test_echoed_user_content_is_the_clients() -> None:
    wire = started()
    prompt_id = wire.prompt()
    wire.agent(result(prompt_id, {"messageId": "u1"}))
    wire.update(
        sessionUpdate="user_message", messageId="u1", content=[{"type": "video", "url": "x"}]
    )
    wire.state("running")
    wire.state("idle", stopReason="end_turn")
    clean(wire)


def test_diff_operation_and_file_type() -> None:
    wire = running()
    wire.tool_call(
        "c1",
        title="t",
        content=[
            {
                "type": "diff",
                "changes": [
                    {"operation": "rename", "path": "/a"},
                    {"operation": "modify", "path": "/b", "fileType": "socket"},
                ],
            }
        ],
    )
    assert len(only(wire, "custom-values", final=False)) == 2


# -- absolute-paths ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["src/main.py", "./a", "~/a", "file:///home/user/a", "", "C:relative"]
)
def test_relative_locations(path: str) -> None:
    wire = running()
    wire.tool_call("c1", title="t", locations=[{"path": path}])
    (violation,) = only(wire, "absolute-paths", final=False)
    assert repr(path) in violation.message


@pytest.mark.parametrize(
    "path", ["/home/u/a.py", "C:\\Users\\u\\a.py", "D:/x", "\\\\server\\share\\a"]
)
def test_native_absolute_paths(path: str) -> None:
    wire = running()
    wire.tool_call("c1", title="t", status="completed", locations=[{"path": path}])
    wire.state("idle", stopReason="end_turn")
    clean(wire)


def test_paths_in_diffs_terminals_and_command_subjects() -> None:
    wire = running()
    wire.tool_call(
        "c1",
        title="t",
        content=[
            {
                "type": "diff",
                "changes": [{"operation": "move", "oldPath": "a.txt", "path": "/b.txt"}],
            }
        ],
    )
    wire.update(sessionUpdate="terminal_update", terminalId="t1", cwd="project")
    wire.permission(1, subject={"type": "command", "command": "ls", "cwd": "."})
    found = only(wire, "absolute-paths", final=False)
    assert [
        "oldPath" in found[0].message,
        "cwd" in found[1].message,
        "subject.cwd" in found[2].message,
    ] == [True] * 3


def test_patch_with_git_prefixes_is_relative() -> None:
    wire = running()
    patch = (
        "diff --git a/src/x.py b/src/x.py\n--- a/src/x.py\n+++ b/src/x.py\n@@ -1 +1 @@\n-a\n+b\n"
    )
    wire.tool_call(
        "c1",
        title="t",
        content=[
            {
                "type": "diff",
                "changes": [{"operation": "modify", "path": "/p/src/x.py"}],
                "patch": {"format": "git_patch", "text": patch},
            }
        ],
    )
    found = only(wire, "absolute-paths", final=False)
    assert {v.message for v in found} == {
        "the git patch names the relative path 'a/src/x.py'",
        "the git patch names the relative path 'b/src/x.py'",
    }


# -- base64 --------------------------------------------------------------------------------------


@pytest.mark.parametrize("data", ["abc", "aGk=\naGk=", "aGk", "a-_b", "!!!!", "aGk= "])
def test_terminal_chunks_are_base64_on_their_own(data: str) -> None:
    wire = running()
    wire.update(sessionUpdate="terminal_output_chunk", terminalId="t1", data=data)
    only(wire, "base64", final=False)


def test_terminal_snapshot_and_image_data() -> None:
    wire = running()
    wire.update(sessionUpdate="terminal_update", terminalId="t1", output={"data": "not base64"})
    wire.update(
        sessionUpdate="agent_message_chunk",
        messageId="m",
        content={"type": "image", "data": "??", "mimeType": "image/png"},
    )
    assert len(only(wire, "base64", final=False)) == 2


def test_terminal_base64_checked_even_when_schema_is_sampled() -> None:
    wire = running(schema_every_n=1000)
    wire.update(sessionUpdate="terminal_output_chunk", terminalId="t1", data=b64(b"ok"))
    wire.update(sessionUpdate="terminal_output_chunk", terminalId="t1", data="abc")
    (violation,) = only(wire, "base64", final=False)
    assert "terminal 't1'" in violation.message


def test_empty_chunk_is_valid() -> None:
    wire = running()
    wire.update(sessionUpdate="terminal_output_chunk", terminalId="t1", data="")
    wire.state("idle", stopReason="end_turn")
    clean(wire)


# -- patch-consistency ---------------------------------------------------------------------------


def diff(changes: list[dict[str, Any]], patch: str | None) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "diff", "changes": changes}
    if patch is not None:
        item["patch"] = {"format": "git_patch", "text": patch}
    return item


NEW_FILE = (
    "diff --git /p/new.py /p/new.py\nnew file mode 100644\n"
    "--- /dev/null\n+++ /p/new.py\n@@ -0,0 +1 @@\n+x\n"
)
MODIFY = (
    "diff --git /p/a.py /p/a.py\nindex 1..2 100644\n--- /p/a.py\n+++ /p/a.py\n@@ -1 +1 @@\n-a\n+b\n"
)


@pytest.mark.parametrize(
    ("changes", "patch", "message"),
    [
        (
            [{"operation": "modify", "path": "/p/new.py"}],
            NEW_FILE,
            "as add, but changes says 'modify'",
        ),
        (
            [{"operation": "modify", "path": "/p/other.py"}],
            MODIFY,
            "'/p/a.py' (modify), which is not in changes",
        ),
        (
            [{"operation": "modify", "path": "/p/a.py"}],
            "From 1234 Mon Sep 17 00:00:00 2001\nSubject: fix\n\n" + MODIFY,
            "commit metadata",
        ),
        (
            [{"operation": "modify", "path": "/p/a.py"}],
            "@@ -1 +1 @@\n-a\n+b\n",
            "no 'diff --git' section",
        ),
        (
            [{"operation": "delete", "path": "/p/a.py"}],
            MODIFY,
            "as modify, but changes says 'delete'",
        ),
        (
            [{"operation": "move", "oldPath": "/p/x.py", "path": "/p/b.py"}],
            "diff --git /p/a.py /p/b.py\nrename from /p/a.py\nrename to /p/b.py\n",
            "but changes names a different oldPath",
        ),
        (
            [{"operation": "modify", "path": "/p/a.py"}],
            "diff --git /p/a.py /p/a.py\n--- /p/a.py\n+++ /p/b.py\n@@ -1 +1 @@\n-a\n+b\n",
            "+++ line naming '/p/b.py'",
        ),
    ],
)
def test_patch_must_match_changes(changes: list[dict[str, Any]], patch: str, message: str) -> None:
    wire = running()
    wire.tool_call("c1", title="t", content=[diff(changes, patch)])
    (violation,) = only(wire, "patch-consistency", final=False)
    assert message in violation.message


def test_patches_that_match() -> None:
    quoted = '"/p/caf\\303\\251 \\"x\\".py"'
    patches = [
        (
            [{"operation": "add", "path": "/p/new.py"}, {"operation": "modify", "path": "/p/a.py"}],
            NEW_FILE + MODIFY,
        ),
        (
            [{"operation": "delete", "path": "/p/old.py"}],
            "diff --git /p/old.py /p/old.py\ndeleted file mode 100644\n"
            "--- /p/old.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n",
        ),
        (
            [{"operation": "copy", "oldPath": "/p/a.py", "path": "/p/c.py"}],
            "diff --git /p/a.py /p/c.py\nsimilarity index 100%\n"
            "copy from /p/a.py\ncopy to /p/c.py\n",
        ),
        (
            [{"operation": "modify", "path": "/p/img.png", "fileType": "binary"}],
            "diff --git /p/img.png /p/img.png\nBinary files /p/img.png and /p/img.png differ\n",
        ),
        (
            [{"operation": "modify", "path": '/p/café "x".py'}],
            f"diff --git {quoted} {quoted}\n--- {quoted}\n+++ {quoted}\n@@ -1 +1 @@\n-a\n+b\n",
        ),
        (
            [{"operation": "modify", "path": "/p/a b.py"}],
            "diff --git /p/a b.py /p/a b.py\n"
            "--- /p/a b.py\t\n+++ /p/a b.py\t\n@@ -1 +1 @@\n-a\n+b\n",
        ),
        (
            [
                {"operation": "modify", "path": "/p/x.py"},
                {"operation": "modify", "path": "/p/y.py"},
            ],
            "diff --git /p/x.py /p/x.py\n--- /p/x.py\n+++ /p/x.py\n@@ -1 +1 @@\n-a\n+b\n",
        ),
        (
            [{"operation": "modify", "path": "/p/mode.sh"}],
            "diff --git /p/mode.sh /p/mode.sh\nold mode 100644\nnew mode 100755\n",
        ),
        ([{"operation": "modify", "path": "/p/a.py"}], None),
    ]
    wire = running()
    for index, (changes, patch) in enumerate(patches):
        wire.tool_call(f"c{index}", title="t", status="completed", content=[diff(changes, patch)])
    wire.tool_call(
        "z",
        title="t",
        status="completed",
        content=[
            {
                "type": "diff",
                "changes": [{"operation": "modify", "path": "/p/a"}],
                "patch": {"format": "_svn", "text": "anything"},
            }
        ],
    )
    wire.state("idle", stopReason="end_turn")
    clean(wire)


def test_git_patch_reader() -> None:
    sections, problem = parse_git_patch(
        NEW_FILE + "diff --git /p/a.py /p/b.py\nrename from /p/a.py\nrename to /p/b.py\n"
    )
    assert problem is None
    assert [(s.operation, s.old_path, s.path) for s in sections] == [
        ("add", None, "/p/new.py"),
        ("move", "/p/a.py", "/p/b.py"),
    ]


# -- tool-call-ended -----------------------------------------------------------------------------


def test_a_tool_call_never_ended_is_flagged_at_the_close_and_at_the_end() -> None:
    wire = running()
    wire.tool_call("c1", title="Read", status="pending")
    wire.tool_call("c2", title="Run", status="in_progress")
    wire.tool_call("c3", title="Done", status="completed")
    wire.tool_call("c4", title="Vendor", status="_queued")  # custom: cannot be judged
    wire.state("idle", stopReason="end_turn")
    wire.tool_call("c2", status="failed")  # v2: a call may end after its turn's idle
    found = only(wire, "tool-call-ended")
    assert [v.message for v in found] == [
        "tool call 'c1' never reached a final status (it is still pending): the client shows "
        "it running forever"
    ]
    # Reported once, not again by a second report.
    assert wire.checker.check_report().violations == tuple(wire.violations)


# -- tool-call-title -----------------------------------------------------------------------------


def test_first_report_of_a_tool_call_carries_its_title() -> None:
    wire = running()
    wire.tool_call("c1", kind="read", status="pending")
    wire.tool_call("c1", title="Read file")  # not the first report any more
    wire.update(
        sessionUpdate="tool_call_content_chunk",
        toolCallId="c2",
        content={"type": "content", "content": text("x")},
    )
    wire.permission(
        1, subject={"type": "tool_call", "toolCall": {"toolCallId": "c3", "kind": "edit"}}
    )
    found = only(wire, "tool-call-title", final=False)
    assert [
        "'c1'" in found[0].message,
        "'c2'" in found[1].message,
        "permission subject" in found[2].message,
    ] == [True] * 3


def test_permission_subject_with_title_reports_the_tool_call() -> None:
    wire = running()
    wire.permission(
        1, subject={"type": "tool_call", "toolCall": {"toolCallId": "c1", "title": "Edit"}}
    )
    wire.state("requires_action")
    wire.client(result(1, {"outcome": {"outcome": "selected", "optionId": "o0"}}))
    wire.state("running")
    wire.tool_call("c1", status="in_progress")
    wire.tool_call("c1", status="completed")
    wire.state("idle", stopReason="end_turn")
    clean(wire)


# -- permission-options --------------------------------------------------------------------------


def test_option_ids_unique_and_kinds_known() -> None:
    wire = running()
    wire.permission(
        1,
        options=[
            {"optionId": "a", "name": "A", "kind": "allow_once"},
            {"optionId": "a", "name": "B", "kind": "reject_once"},
        ],
    )
    wire.permission(2, options=[{"optionId": "a", "name": "A", "kind": "allow_sometimes"}])
    found = only(wire, "permission-options", final=False)
    assert "'a' is offered twice" in found[0].message
    assert "'allow_sometimes'" in found[1].message


def test_no_options_is_a_schema_violation_unless_sampled() -> None:
    wire = running()
    wire.permission(1, options=[])
    assert wire.rules() == ["schema"]
    sampled = running(schema_every_n=1000)
    sampled.permission(1, options=[])
    only(sampled, "permission-options", final=False)


# -- prompt-message-id ---------------------------------------------------------------------------


def test_user_message_must_echo_the_prompt_message_id() -> None:
    wire = started()
    prompt_id = wire.prompt()
    wire.agent(result(prompt_id, {"messageId": "u1"}))
    wire.update(sessionUpdate="user_message", messageId="u-other", content=[text("hi")])
    wire.state("running")
    wire.state("idle", stopReason="end_turn")
    (violation,) = only(wire, "prompt-message-id")
    assert "'u1'" in violation.message and '"messageId": "u1"' in violation.raw


def test_user_message_may_come_first_or_as_chunks() -> None:
    wire = started()
    prompt_id = wire.prompt()
    wire.update(sessionUpdate="user_message_chunk", messageId="u1", content=text("h"))
    wire.state("running")
    wire.agent(result(prompt_id, {"messageId": "u1"}))
    wire.state("idle", stopReason="end_turn")
    second = wire.prompt()
    wire.agent(result(second, {"messageId": "u2"}))
    wire.update(sessionUpdate="user_message_chunk", messageId="u2", content=text("x"))
    wire.state("running")
    wire.state("idle", stopReason="end_turn")
    clean(wire)


def test_missing_user_message_found_at_the_end() -> None:
    wire = started(rules=["prompt-message-id"])
    prompt_id = wire.prompt()
    wire.state("running")
    wire.agent(result(prompt_id, {"messageId": "u1"}))
    assert wire.violations == []
    only(wire, "prompt-message-id")


def test_messageid_checked_by_hand_when_schema_is_sampled() -> None:
    wire = started(schema_every_n=1000)
    prompt_id = wire.prompt()
    wire.agent(result(prompt_id, {}))
    only(wire, "prompt-message-id", final=False)


# -- turn-lifecycle ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "output",
    [
        {"sessionUpdate": "agent_message_chunk", "messageId": "a1", "content": text("x")},
        {"sessionUpdate": "agent_thought", "messageId": "t1", "content": [text("x")]},
        {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": "t"},
        {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p", "entries": []}},
        {"sessionUpdate": "terminal_update", "terminalId": "t1", "command": "ls"},
    ],
)
def test_running_before_work_output(output: dict[str, Any]) -> None:
    wire = started()
    wire.prompt(message_id="u1")
    wire.update(**output)
    wire.state("running")
    wire.state("idle", stopReason="end_turn")
    (violation,) = only(wire, "turn-lifecycle", final=False)
    assert "before state_update running" in violation.message


def test_running_may_precede_the_prompt_response() -> None:
    wire = started()
    prompt_id = wire.prompt()
    wire.state("running")
    wire.update(sessionUpdate="agent_message_chunk", messageId="a1", content=text("x"))
    wire.agent(result(prompt_id, {"messageId": "u1"}))
    wire.update(sessionUpdate="user_message", messageId="u1", content=[text("hi")])
    wire.state("idle", stopReason="end_turn")
    clean(wire)


def test_idle_ending_work_carries_a_stop_reason() -> None:
    wire = running()
    wire.state("idle")
    (violation,) = only(wire, "turn-lifecycle")
    assert "without a stopReason" in violation.message


def test_prompt_work_must_report_running() -> None:
    wire = started()
    wire.prompt(message_id="u1")
    wire.update(sessionUpdate="user_message", messageId="u1", content=[text("hi")])
    wire.state("idle", stopReason="end_turn")
    (violation,) = only(wire, "turn-lifecycle")
    assert "never reported running" in violation.message


def test_work_that_never_ends() -> None:
    wire = running()
    assert wire.violations == []
    (violation,) = only(wire, "turn-lifecycle")
    assert "never reported idle" in violation.message


def test_accepted_prompt_that_never_starts() -> None:
    wire = started()
    wire.prompt(message_id="u1")
    (violation,) = only(wire, "turn-lifecycle")
    assert "never reported running" in violation.message


def test_rejected_prompt_needs_no_work() -> None:
    wire = started()
    prompt_id = wire.prompt()
    wire.agent(
        {"jsonrpc": "2.0", "id": prompt_id, "error": {"code": -32602, "message": "empty prompt"}}
    )
    clean(wire)


def test_repeated_idle_keeps_its_stop_reason() -> None:
    wire = running()
    wire.state("idle", stopReason="end_turn")
    wire.state("idle", stopReason="end_turn")  # an idempotent snapshot
    wire.state("idle")
    wire.state("idle", stopReason="cancelled")
    (violation,) = only(wire, "turn-lifecycle")
    assert "from 'end_turn' to 'cancelled'" in violation.message


def test_requires_action_needs_a_pending_request() -> None:
    wire = running()
    wire.state("requires_action")
    wire.state("running")
    wire.state("idle", stopReason="end_turn")
    (violation,) = only(wire, "turn-lifecycle")
    assert "requires_action while no permission" in violation.message
    assert '"requires_action"' in violation.raw


def test_requires_action_backed_in_any_order() -> None:
    wire = running()
    wire.state("requires_action")  # the request follows right after
    wire.permission(1)
    wire.client(result(1, {"outcome": {"outcome": "selected", "optionId": "o0"}}))
    wire.state("running")
    wire.permission(2)
    wire.client(result(2, {"outcome": {"outcome": "selected", "optionId": "o0"}}))
    wire.state("requires_action")  # crossed the answer in flight
    wire.state("running")
    wire.agent(
        request(
            3,
            "elicitation/create",
            {
                "sessionId": SESSION,
                "mode": "form",
                "message": "Name?",
                "requestedSchema": {"type": "object", "properties": {}},
            },
        )
    )
    wire.state("requires_action")
    wire.client(result(3, {"action": "cancel"}))
    wire.state("running")
    wire.state("idle", stopReason="end_turn")
    clean(wire)


def test_running_again_when_work_resumes() -> None:
    wire = running()
    wire.tool_call("c1", title="Edit", status="pending")
    wire.permission(1, subject={"type": "tool_call", "toolCall": {"toolCallId": "c1"}})
    wire.state("requires_action")
    wire.client(result(1, {"outcome": {"outcome": "selected", "optionId": "o0"}}))
    wire.tool_call("c1", status="in_progress")
    wire.state("running")
    wire.tool_call("c1", status="completed")
    wire.state("idle", stopReason="end_turn")
    (violation,) = only(wire, "turn-lifecycle")
    assert "report running when work resumes" in violation.message


def test_rejected_permission_may_end_without_running() -> None:
    wire = running()
    wire.tool_call("c1", title="Edit", status="pending")
    wire.permission(
        1, subject={"type": "command", "command": "rm x", "cwd": CWD, "toolCallId": "c1"}
    )
    wire.state("requires_action")
    wire.client(result(1, {"outcome": {"outcome": "selected", "optionId": "o1"}}))
    wire.tool_call(
        "c1", status="failed", content=[{"type": "content", "content": text("Permission denied")}]
    )
    wire.state("idle", stopReason="end_turn")
    clean(wire)


def test_agent_initiated_work_and_idle_tool_call_updates() -> None:
    wire = started()
    wire.state("running")  # no prompt needed
    wire.tool_call("c1", title="Watch", status="in_progress")
    wire.state("idle", stopReason="end_turn")
    wire.tool_call("c1", status="completed")  # tool call updates may arrive while idle
    clean(wire)


# -- cancel-silence ------------------------------------------------------------------------------


def blocked_on_permission(**kwargs: Any) -> Wire:
    wire = running(**kwargs)
    wire.tool_call("c1", title="Delete", kind="delete", status="pending")
    wire.permission(1, subject={"type": "tool_call", "toolCall": {"toolCallId": "c1"}})
    wire.state("requires_action")
    return wire


def test_good_cancellation() -> None:
    wire = blocked_on_permission()
    wire.client(notification("session/cancel", {"sessionId": SESSION}))
    wire.agent(notification("$/cancel_request", {"requestId": 1}))
    wire.client(result(1, {"outcome": {"outcome": "cancelled"}}))
    wire.tool_call("c1", status="cancelled")
    wire.state("idle", stopReason="cancelled")
    wire.prompt(message_id="u2")
    wire.state("running")
    wire.tool_call("c1", title="Delete again", status="in_progress")  # after a new prompt
    wire.tool_call("c1", status="completed")
    wire.state("idle", stopReason="end_turn")
    clean(wire)


def test_cancelled_work_ends_with_stop_reason_cancelled() -> None:
    wire = blocked_on_permission()
    wire.client(notification("session/cancel", {"sessionId": SESSION}))
    wire.client(result(1, {"outcome": {"outcome": "cancelled"}}))
    wire.state("idle", stopReason="end_turn")
    (violation,) = only(wire, "cancel-silence", final=False)
    assert "'end_turn', not 'cancelled'" in violation.message


def test_idle_crossing_the_cancel_in_flight_is_not_blamed() -> None:
    wire = running()
    wire.client(notification("session/cancel", {"sessionId": SESSION}))
    wire.state("idle", stopReason="end_turn")  # may have been written before the cancel arrived
    clean(wire)


@pytest.mark.parametrize("accepted_first", [True, False])
def test_cancel_before_running_counts(accepted_first: bool) -> None:
    # The prompt was sent (and maybe accepted), its work has not reported running: the agent
    # read the prompt before the cancel, so the cancel applies to that work.
    wire = started()
    if accepted_first:
        wire.prompt(message_id="u1")
        wire.client(notification("session/cancel", {"sessionId": SESSION}))
    else:
        prompt_id = wire.prompt()
        wire.client(notification("session/cancel", {"sessionId": SESSION}))
        wire.agent(result(prompt_id, {"messageId": "u1"}))
        wire.update(sessionUpdate="user_message", messageId="u1", content=[text("hi")])
    wire.state("running")
    wire.client(request(9, "_x/status", {"sessionId": SESSION}))
    wire.agent(result(9, {}))  # answering a later request proves the cancel was read
    wire.state("idle", stopReason="end_turn")
    (violation,) = only(wire, "cancel-silence")
    assert "'end_turn', not 'cancelled'" in violation.message


def test_cancel_before_running_proven_by_blocking_on_the_user() -> None:
    wire = started()
    wire.prompt(message_id="u1")
    wire.client(notification("session/cancel", {"sessionId": SESSION}))
    wire.state("running")
    wire.tool_call("c1", title="Delete", kind="delete", status="pending")
    wire.permission(1, subject={"type": "tool_call", "toolCall": {"toolCallId": "c1"}})
    wire.state("requires_action")  # blocked: only the client's answer (after the cancel) frees it
    wire.client(result(1, {"outcome": {"outcome": "selected", "optionId": "o0"}}))
    wire.state("running")
    wire.tool_call("c1", status="completed")
    wire.state("idle", stopReason="end_turn")
    (violation,) = only(wire, "cancel-silence")
    assert "'end_turn', not 'cancelled'" in violation.message


def test_cancel_before_running_honoured_or_crossed() -> None:
    wire = started()
    wire.prompt(message_id="u1")
    wire.client(notification("session/cancel", {"sessionId": SESSION}))
    wire.state("running")
    wire.state("idle", stopReason="cancelled")
    wire.prompt(message_id="u2")
    wire.client(notification("session/cancel", {"sessionId": SESSION}))
    wire.state("running")
    wire.state("idle", stopReason="end_turn")  # may have been written before the cancel arrived
    clean(wire)


def test_cancel_of_a_prompt_refused_before_insertion_is_forgotten() -> None:
    wire = started()
    first = wire.prompt()
    wire.client(notification("session/cancel", {"sessionId": SESSION}))
    second = wire.prompt()  # sent after the cancel: not cancelled by it
    wire.agent(error(first, -32800, "Request cancelled"))
    wire.agent(result(second, {"messageId": "u2"}))  # read after the cancel
    wire.update(sessionUpdate="user_message", messageId="u2", content=[text("hi")])
    wire.state("running")
    wire.state("idle", stopReason="end_turn")
    clean(wire)


def test_evidence_that_the_cancel_was_read() -> None:
    wire = running()
    wire.tool_call("c1", title="Run", status="in_progress")
    wire.client(notification("session/cancel", {"sessionId": SESSION}))
    wire.tool_call("c1", status="cancelled")
    wire.state("idle", stopReason="error", error={"code": -32603, "message": "aborted"})
    only(wire, "cancel-silence")


def test_pending_permission_must_be_cancelled_or_answered() -> None:
    wire = blocked_on_permission()
    wire.client(notification("session/cancel", {"sessionId": SESSION}))
    wire.state("idle", stopReason="cancelled")
    wire.client(result(1, {"outcome": {"outcome": "cancelled"}}))
    (violation,) = only(wire, "cancel-silence", final=False)
    assert "still pending" in violation.message and "$/cancel_request" in violation.message


@pytest.mark.parametrize(
    "late",
    [
        {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "failed"},
        {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": "c1",
            "content": {"type": "content", "content": text("x")},
        },
        {"sessionUpdate": "agent_message_chunk", "messageId": "a1", "content": text("late")},
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": "eA=="},
        {"sessionUpdate": "tool_call_update", "toolCallId": "new", "title": "New work"},
    ],
)
def test_nothing_for_the_cancelled_work_after_its_idle(late: dict[str, Any]) -> None:
    wire = running()
    wire.tool_call(
        "c1", title="Run", status="in_progress", content=[{"type": "terminal", "terminalId": "t1"}]
    )
    wire.client(notification("session/cancel", {"sessionId": SESSION}))
    wire.tool_call("c1", status="cancelled")
    wire.state("idle", stopReason="cancelled")
    wire.update(**late)
    (violation,) = only(wire, "cancel-silence", final=False)
    assert "after the cancelled work reported idle" in violation.message


def test_no_permission_request_after_the_cancelled_idle() -> None:
    wire = blocked_on_permission()
    wire.client(notification("session/cancel", {"sessionId": SESSION}))
    wire.agent(notification("$/cancel_request", {"requestId": 1}))
    wire.state("idle", stopReason="cancelled")
    wire.client(result(1, {"outcome": {"outcome": "cancelled"}}))
    wire.permission(2)
    wire.client(result(2, {"outcome": {"outcome": "cancelled"}}))
    only(wire, "cancel-silence", final=False)


def test_background_work_may_continue_after_a_cancel() -> None:
    wire = running()
    wire.update(sessionUpdate="terminal_update", terminalId="bg", command="npm run dev", cwd=CWD)
    wire.client(notification("session/cancel", {"sessionId": SESSION}))
    wire.state(
        "idle", stopReason="cancelled", background=[{"type": "terminal", "terminalId": "bg"}]
    )
    wire.update(sessionUpdate="terminal_output_chunk", terminalId="bg", data=b64(b"ready\n"))
    wire.update(sessionUpdate="terminal_update", terminalId="bg", exitStatus={"exitCode": 0})
    wire.state("idle", background=[])
    clean(wire)


# -- session-close -------------------------------------------------------------------------------


def test_good_close() -> None:
    wire = running()
    wire.client(request(9, "session/close", {"sessionId": SESSION}))
    wire.state("idle", stopReason="cancelled")
    wire.agent(result(9, {}))
    clean(wire)


def test_close_answered_while_running() -> None:
    wire = running()
    wire.client(request(9, "session/close", {"sessionId": SESSION}))
    wire.agent(result(9, {}))
    wire.state("idle", stopReason="cancelled")
    assert set(wire.rules()) == {"session-close"}
    assert "still running" in wire.violations[0].message


def test_nothing_after_close() -> None:
    wire = started()
    wire.client(request(9, "session/close", {"sessionId": SESSION}))
    wire.agent(result(9, {}))
    wire.update(sessionUpdate="session_info_update", title="late")
    (violation,) = only(wire, "session-close")
    assert "after session/close" in violation.message


def resume(wire: Wire, request_id: int, *, replay: bool = False) -> None:
    params: dict[str, Any] = {"sessionId": SESSION, "cwd": CWD, "mcpServers": []}
    if replay:
        params["replayFrom"] = {"type": "start"}
    wire.client(request(request_id, "session/resume", params))


def test_a_queued_prompt_is_echoed_before_its_own_work_ends() -> None:
    # Accepted while the first turn runs: its echo may follow that turn's idle, since its own
    # work (running, then idle) only comes after it.
    wire = running()
    queued = wire.prompt()
    wire.agent(result(queued, {"messageId": "u2"}))
    wire.state("idle", stopReason="end_turn")
    wire.update(sessionUpdate="user_message", messageId="u2", content=[text("hi")])
    wire.state("running")
    wire.state("idle", stopReason="end_turn")
    clean(wire)


def test_a_queued_prompt_never_echoed_is_reported() -> None:
    wire = running()
    queued = wire.prompt()
    wire.agent(result(queued, {"messageId": "u2"}))
    wire.state("idle", stopReason="end_turn")
    wire.state("running")
    wire.state("idle", stopReason="end_turn")
    (violation,) = only(wire, "prompt-message-id", final=False)
    assert "'u2'" in violation.message


def test_resume_reactivates_a_closed_session() -> None:
    wire = started()
    wire.prompt(message_id="u1")
    wire.state("running")
    wire.state("idle", stopReason="end_turn")
    wire.client(request(9, "session/close", {"sessionId": SESSION}))
    wire.agent(result(9, {}))
    resume(wire, 10, replay=True)
    wire.update(sessionUpdate="user_message", messageId="u1", content=[text("hi")])
    wire.state("idle")  # the current-state snapshot every resume sends before its response
    wire.agent(result(10, {}))
    wire.prompt(message_id="u2")
    wire.state("running")
    wire.update(sessionUpdate="agent_message", messageId="a2", content=[text("back")])
    wire.state("idle", stopReason="end_turn")
    clean(wire)


def test_closed_until_a_resume_succeeds() -> None:
    wire = started()
    wire.client(request(9, "session/close", {"sessionId": SESSION}))
    wire.agent(result(9, {}))
    wire.update(sessionUpdate="session_info_update", title="before the resume was sent")
    resume(wire, 10)
    wire.agent(error(10, -32603, "cannot resume"))
    wire.update(sessionUpdate="session_info_update", title="after the resume failed")
    first, second = only(wire, "session-close")
    assert "before the resume" in first.raw and "after the resume failed" in second.raw


def cancelled_after_output() -> Wire:
    """Work that streamed a message and ran a tool, then was cancelled and reported idle."""
    wire = running()
    wire.update(sessionUpdate="agent_message", messageId="a1", content=[text("working")])
    wire.tool_call("c1", title="Run", status="in_progress")
    wire.client(notification("session/cancel", {"sessionId": SESSION}))
    wire.tool_call("c1", status="cancelled")
    wire.state("idle", stopReason="cancelled")
    return wire


def replay_history(wire: Wire) -> None:
    wire.update(sessionUpdate="user_message", messageId="u1", content=[text("hi")])
    wire.update(sessionUpdate="agent_message", messageId="a1", content=[text("working")])
    wire.tool_call("c1", title="Run", status="cancelled")


def test_replay_after_a_cancel_is_not_work_of_the_cancelled_turn() -> None:
    wire = cancelled_after_output()
    resume(wire, 10, replay=True)
    replay_history(wire)
    wire.state("idle", stopReason="cancelled")  # a snapshot may repeat the last stop reason
    wire.agent(result(10, {}))
    clean(wire)


def test_cancelled_work_stays_silent_after_a_resume() -> None:
    wire = cancelled_after_output()
    resume(wire, 10, replay=True)
    replay_history(wire)
    wire.state("idle")
    wire.agent(result(10, {}))
    wire.tool_call("c1", status="failed")  # live again, after the resume was answered
    (violation,) = only(wire, "cancel-silence")
    assert "after the cancelled work reported idle" in violation.message


def test_resume_snapshot_is_not_an_end_of_work() -> None:
    # A prompt sent while idle, then a resume: the snapshot (with the last stop reason) and
    # history unknown to this client come before the prompt's work reports running.
    wire = started()
    wire.prompt(message_id="u1")
    wire.state("running")
    wire.state("idle", stopReason="end_turn")
    prompt_id = wire.prompt()
    resume(wire, 10, replay=True)
    wire.agent(result(prompt_id, {"messageId": "u2"}))
    wire.update(sessionUpdate="agent_message", messageId="a0", content=[text("older")])
    wire.state("idle", stopReason="end_turn")
    wire.agent(result(10, {}))
    wire.update(sessionUpdate="user_message", messageId="u2", content=[text("hi")])
    wire.client(notification("session/cancel", {"sessionId": SESSION}))
    wire.state("running")
    wire.client(request(11, "_x/status", {"sessionId": SESSION}))
    wire.agent(result(11, {}))  # proves the cancel was read: the work must end cancelled
    wire.state("idle", stopReason="end_turn")
    (violation,) = only(wire, "cancel-silence")
    assert "'end_turn', not 'cancelled'" in violation.message


def test_resume_snapshot_keeps_the_last_stop_reason() -> None:
    wire = started()
    wire.prompt(message_id="u1")
    wire.state("running")
    wire.state("idle", stopReason="end_turn")
    resume(wire, 10)
    wire.state("idle", stopReason="cancelled")
    wire.agent(result(10, {}))
    (violation,) = only(wire, "turn-lifecycle")
    assert "changes the stop reason" in violation.message


# -- background-work -----------------------------------------------------------------------------


def test_background_items_are_announced_and_kept_until_done() -> None:
    wire = running()
    wire.tool_call("w1", title="Watch", status="in_progress")
    wire.state(
        "running",
        background=[
            {"type": "tool_call", "toolCallId": "w1"},
            {"type": "terminal", "terminalId": "ghost"},
        ],
    )
    wire.state("idle", stopReason="end_turn")  # background omitted after being reported
    wire.state("idle", stopReason="end_turn", background=[])  # w1 dropped while still in_progress
    messages = [violation.message for violation in only(wire, "background-work")]
    assert messages[:2] == [
        "background lists terminal 'ghost', which was never announced",
        "a state update without background after background work was reported",
    ]
    assert sorted(messages[2:]) == [
        "terminal 'ghost' left the background list before reporting exitStatus",
        "tool call 'w1' left the background list before reaching a final status",
    ]


def test_process_backed_work_is_listed_once() -> None:
    wire = running()
    wire.tool_call(
        "c1",
        title="Serve",
        status="in_progress",
        content=[{"type": "terminal", "terminalId": "t1"}],
    )
    wire.state(
        "idle",
        stopReason="end_turn",
        background=[
            {"type": "tool_call", "toolCallId": "c1"},
            {"type": "terminal", "terminalId": "t1"},
        ],
    )
    (violation,) = only(wire, "background-work", final=False)
    assert "list process-backed work once" in violation.message


def test_terminal_leaves_the_list_after_exit() -> None:
    wire = running()
    wire.update(sessionUpdate="terminal_update", terminalId="t1", command="serve")
    wire.state("idle", stopReason="end_turn", background=[{"type": "terminal", "terminalId": "t1"}])
    wire.state("idle", stopReason="end_turn", background=[])
    (violation,) = only(wire, "background-work")
    assert "before reporting exitStatus" in violation.message


# -- terminal-id-reuse ---------------------------------------------------------------------------


def test_terminal_id_not_reused_for_a_new_command() -> None:
    wire = running()
    wire.update(
        sessionUpdate="terminal_update", terminalId="t1", command="make", exitStatus={"exitCode": 0}
    )
    wire.update(sessionUpdate="terminal_update", terminalId="t1", command="make")  # same terminal
    wire.update(sessionUpdate="terminal_update", terminalId="t1", command="make test")
    wire.state("idle", stopReason="end_turn")
    (violation,) = only(wire, "terminal-id-reuse")
    assert "'make test'" in violation.message


# -- checker options and reports -----------------------------------------------------------------


def test_strict_mode_raises_and_records() -> None:
    checker = ConformanceChecker()
    with pytest.raises(ConformanceError) as raised:
        checker.observe("agent->client", b"hello")
    assert raised.value.violation.rule == "stdout"
    assert checker.violations == [raised.value.violation]
    assert "[stdout]" in str(raised.value) and "hint:" in str(raised.value)


def test_rules_can_be_selected() -> None:
    checker = ConformanceChecker(strict=False, rules=["schema"])
    checker.observe("agent->client", b"hello")
    checker.observe("agent->client", json.dumps(notification("fs/x", {})).encode())
    assert checker.violations == []
    report = checker.check_report()
    assert [result.rule.id for result in report.results] == ["schema"]
    with pytest.raises(ValueError, match="unknown conformance rules: nope"):
        ConformanceChecker(rules=["nope"])
    with pytest.raises(ValueError, match="schema_every_n"):
        ConformanceChecker(schema_every_n=0)
    with pytest.raises(ValueError, match="direction"):
        checker.observe("sideways", b"{}")  # type: ignore[arg-type]


def test_report_counts_and_summary() -> None:
    wire = running()
    wire.tool_call("c1", kind="read")
    report = wire.checker.check_report()
    assert not report.ok
    assert report.failed_rules == ["tool-call-title", "tool-call-ended", "turn-lifecycle"]
    assert "cancel-silence" not in report.exercised_rules
    lines = report.summary().splitlines()
    assert any(line.strip().startswith("FAIL (1)  tool-call-title") for line in lines)
    assert any("not exercised  cancel-silence" in line for line in lines)
    assert wire.checker.check_report().violations == report.violations  # end checks run once


def test_str_and_line_endings_accepted() -> None:
    checker = ConformanceChecker()
    checker.observe("client->agent", json.dumps(request(1, "session/list", {})) + "\n")
    checker.observe(
        "agent->client",
        json.dumps(result(1, {"sessions": [{"sessionId": "s", "cwd": "/x"}]})).encode() + b"\r\n",
    )
    assert checker.check_report().ok


def test_client_batches_register_requests() -> None:
    wire = started()
    wire.client([request(5, "session/list", {}), notification("_x/ping", {})])
    wire.agent(result(5, {"sessions": []}))
    clean(wire)


def test_explicit_schema_path(tmp_path: Path) -> None:
    copy_path = tmp_path / "schema.json"
    shutil.copy(Path(__file__).parents[2] / "src" / "acpio" / "schema" / "schema.json", copy_path)
    wire = running(schema_path=copy_path)
    wire.tool_call("c1", title=3)
    assert wire.rules() == ["schema"]
    with pytest.raises(ValueError, match="not an ACP JSON Schema"):
        (tmp_path / "bad.json").write_text("[]")
        ConformanceChecker(schema_path=tmp_path / "bad.json")


# -- the fast validator agrees with jsonschema ---------------------------------------------------

OPEN_VALUES = [
    "_x",
    "bogus",
    "read",
    "text",
    "terminal",
    "modify",
    "idle",
    "end_turn",
    "items",
    "allow_once",
    "move",
    "tool_call",
    "command",
]


def mutations(instance: object) -> Iterator[object]:
    """Every instance made by deleting a key or replacing one value in `instance`."""

    def nodes(
        node: object, path: tuple[str | int, ...]
    ) -> Iterator[tuple[tuple[str | int, ...], object]]:
        yield path, node
        if isinstance(node, dict):
            for key, value in node.items():
                yield from nodes(value, (*path, key))
        elif isinstance(node, list):
            for index, value in enumerate(node):
                yield from nodes(value, (*path, index))

    for path, node in list(nodes(instance, ())):
        if not path:
            continue
        replacements: list[object] = ["<delete>", 3, "x", None, [], {}, True, 1.5]
        if isinstance(node, str):
            replacements += OPEN_VALUES
        for value in replacements:
            if value == "<delete>" and isinstance(path[-1], int):
                continue
            mutated = copy.deepcopy(instance)
            parent: Any = mutated
            for key in path[:-1]:
                parent = parent[key]
            if value == "<delete>":
                del parent[path[-1]]
            else:
                parent[path[-1]] = value
            yield mutated


def test_fast_validator_agrees_with_jsonschema() -> None:
    corpus = json.loads((FIXTURES / "conformance_schema_corpus.json").read_text())["instances"]
    document = json.loads(
        (Path(__file__).parents[2] / "src" / "acpio" / "schema" / "schema.json").read_text()
    )
    fast = load_schema(None)
    cases = [
        (entry["def"], mutated)
        for entry in corpus
        for mutated in [entry["instance"], *mutations(entry["instance"])]
    ]
    random.Random(20261130).shuffle(cases)
    references: dict[str, Draft202012Validator] = {}
    checked = 0
    for name, instance in cases[:1500]:
        reference = references.get(name)
        if reference is None:
            reference = references[name] = Draft202012Validator(
                {"$defs": document["$defs"], "$ref": f"#/$defs/{name}"}
            )
        expected = reference.is_valid(instance)
        errors = list(fast.validator(name).iter_errors(instance))
        assert expected == (not any(official(error) for error in errors)), (name, instance)
        checked += 1
    assert checked == 1500


# -- id-fidelity ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("sent", "echoed"), [("42", 42), (42, "42"), ("7", 7)])
def test_a_response_keeps_its_request_ids_type(sent: object, echoed: object) -> None:
    wire = started()
    wire.client(request(sent, "_x/ping", {}))
    wire.agent(result(echoed, {}))
    (violation,) = only(wire, "id-fidelity")
    assert "_x/ping" in violation.message
    assert f"id {json.dumps(sent)}" in violation.message
    assert f"with id {json.dumps(echoed)}" in violation.message


def test_ids_that_only_look_alike_are_both_answered_exactly() -> None:
    wire = started()
    wire.client(request("42", "_x/ping", {}))
    wire.client(request(42, "_x/pong", {}))
    wire.agent(result(42, {}))
    wire.agent(result("42", {}))
    clean(wire)


def test_an_empty_array_answering_a_notification_batch() -> None:
    wire = started()
    wire.client([notification("_x/ping", {}), notification("_x/pong", {})])
    wire.agent([])
    (violation,) = only(wire, "no-reply-to-notification")
    assert "[]" in violation.message
