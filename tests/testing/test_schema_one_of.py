"""``oneOf`` in the schema check: a discriminated union checks the variant its tag names
(the fast path) and still finds what the generic rule finds."""

from __future__ import annotations

import json
from pathlib import Path

from acpio.testing._schema_check import load_schema


def _schema(tmp_path: Path, *, catch_all: bool) -> str:
    def variant(tag: str) -> dict[str, object]:
        return {
            "type": "object",
            "properties": {"kind": {"type": "string", "const": tag}, "n": {"type": "integer"}},
            "required": ["kind", "n"],
        }

    branches: list[object] = [variant("a"), variant("b")]
    if catch_all:
        branches.append({"type": "object", "properties": {"kind": {"type": "string"}}})
    path = tmp_path / "schema.json"
    path.write_text(json.dumps({"$defs": {"Thing": {"oneOf": branches}}}))
    return str(path)


def test_the_variant_a_tag_names_decides(tmp_path: Path) -> None:
    schema = load_schema(_schema(tmp_path, catch_all=False))
    assert schema.check("Thing", {"kind": "a", "n": 1}).invalid is None
    wrong = schema.check("Thing", {"kind": "b", "n": "one"}).invalid
    assert wrong is not None and "n" in wrong
    assert schema.check("Thing", {"kind": "c", "n": 1}).invalid is not None


def test_a_value_two_variants_accept_is_refused(tmp_path: Path) -> None:
    schema = load_schema(_schema(tmp_path, catch_all=True))
    error = schema.check("Thing", {"kind": "a", "n": 1}).invalid
    assert error is not None and "more than one" in error
    assert schema.check("Thing", {"kind": "z"}).invalid is None  # only the catch-all accepts it


def test_the_v1_schema_checks_the_update_its_tag_names() -> None:
    v1 = Path(__file__).resolve().parents[2] / "src" / "acpio" / "schema" / "v1" / "schema.json"
    schema = load_schema(str(v1))
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}
    note = {"sessionId": "s", "update": chunk}
    assert schema.check("SessionNotification", note).invalid is None
    bad = {"sessionId": "s", "update": {**chunk, "content": {"type": "text", "text": 3}}}
    assert schema.check("SessionNotification", bad).invalid is not None
