"""Golden tests: every JSON example of the ACP 'Tool Calls' page decodes and re-encodes exactly.

The examples live in tests/fixtures/tool_calls_examples.json (copied verbatim from the page).
Whole JSON-RPC messages are decoded through the generated method tables, bare objects as the
protocol type they show.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest

from acpio import schema
from acpio.schema import (
    CLIENT_METHODS,
    KNOWN_TOOL_KIND,
    CommandPermissionSubject,
    Diff,
    SelectedPermissionOutcome,
    TerminalUpdate,
    ToolCallUpdate,
    UnknownVariant,
    convert,
    decode,
    encode,
)

FIXTURE = Path(__file__).parent.parent / "fixtures" / "tool_calls_examples.json"
EXAMPLES: list[dict[str, Any]] = json.loads(FIXTURE.read_text(encoding="utf-8"))["examples"]
BY_NAME = {example["name"]: example for example in EXAMPLES}


def pointer_get(value: object, pointer: str) -> object:
    """Follow a JSON pointer through JSON builtins or decoded ACP objects."""
    for token in pointer.split("/")[1:]:
        if isinstance(value, list):
            value = value[int(token)]
        elif isinstance(value, dict):
            value = value[token]
        elif isinstance(value, UnknownVariant):
            value = value.raw[token]
        else:
            assert isinstance(value, msgspec.Struct)
            (field,) = [f for f in msgspec.structs.fields(value) if f.encode_name == token]
            value = getattr(value, field.name)
    return value


def params_type(example: dict[str, Any]) -> object:
    message = example["json"]
    if example["kind"] in ("notification", "request"):
        return CLIENT_METHODS[message["method"]].params
    if example["kind"] == "response":
        return CLIENT_METHODS[example["answers"]].result
    return None


def test_fixture_covers_every_example_of_the_page() -> None:
    assert len(EXAMPLES) == 14
    assert len(BY_NAME) == len(EXAMPLES)


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["name"] for e in EXAMPLES])
def test_example_decodes_to_the_right_types_and_reencodes_equal(example: dict[str, Any]) -> None:
    for part in example["parts"]:
        wire = pointer_get(example["json"], part["pointer"])
        target = getattr(schema, part["type"])
        expected_method_type = params_type(example)
        if expected_method_type is not None:
            # The method tables pick the same type the page shows.
            assert expected_method_type is target or expected_method_type is getattr(
                schema, part["expect"].get("", part["type"])
            )
        decoded = decode(json.dumps(wire), target)
        for pointer, class_name in part["expect"].items():
            assert type(pointer_get(decoded, pointer)) is getattr(schema, class_name), pointer
        assert json.loads(encode(decoded)) == wire
        assert convert(wire, target) == decoded


def test_excerpt_without_session_id_is_not_a_complete_request() -> None:
    example = BY_NAME["request_permission_command_subject"]
    whole = example["whole"]
    with pytest.raises(msgspec.ValidationError, match=re.escape(whole["error"])):
        decode(json.dumps(example["json"]), getattr(schema, whole["type"]))


def test_tool_call_update_fields_keep_their_values() -> None:
    message = BY_NAME["report_tool_call"]["json"]
    params = decode(json.dumps(message["params"]), schema.UpdateSessionNotification)
    assert CLIENT_METHODS["session/update"].params is schema.UpdateSessionNotification
    update = params.update
    assert isinstance(update, ToolCallUpdate)
    assert update.tool_call_id == "call_001"
    assert update.name == "read_file"
    assert update.kind == "read"
    assert update.kind in KNOWN_TOOL_KIND
    assert update.content is msgspec.UNSET  # omitted: leave unchanged


def test_permission_examples_keep_their_values() -> None:
    subject = decode(
        json.dumps(BY_NAME["request_permission_command_subject"]["json"]["subject"]),
        schema.RequestPermissionSubject,
    )
    assert isinstance(subject, CommandPermissionSubject)
    assert (subject.command, subject.cwd) == ("cargo test", "/home/user/project")
    assert (subject.tool_call_id, subject.terminal_id) == ("call_001", "term_001")

    result = decode(
        json.dumps(BY_NAME["permission_selected"]["json"]["result"]),
        schema.RequestPermissionResponse,
    )
    assert isinstance(result.outcome, SelectedPermissionOutcome)
    assert result.outcome.option_id == "allow-once"


def test_terminal_and_diff_examples_keep_null_and_omitted_apart() -> None:
    update = decode(json.dumps(BY_NAME["terminal_update"]["json"]), schema.SessionUpdate)
    assert isinstance(update, TerminalUpdate)
    assert update.exit_status is not None and update.exit_status is not msgspec.UNSET
    assert update.exit_status.exit_code == 0
    assert update.exit_status.signal is None  # explicit null, kept as null
    assert update.size is msgspec.UNSET  # omitted, stays omitted
    assert b'"signal":null' in encode(update)
    assert b"size" not in encode(update)

    diff = decode(json.dumps(BY_NAME["diff_binary_without_patch"]["json"]), schema.ToolCallContent)
    assert isinstance(diff, Diff)
    assert diff.patch is msgspec.UNSET
    with_patch = decode(json.dumps(BY_NAME["diff_with_patch"]["json"]), schema.ToolCallContent)
    assert isinstance(with_patch, Diff)
    assert with_patch.patch is not None and with_patch.patch is not msgspec.UNSET
    assert with_patch.patch.format == "git_patch"
