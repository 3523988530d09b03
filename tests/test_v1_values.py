"""ACP v1's value sets come from the vendored v1 schema, and live in one module only."""

from __future__ import annotations

import ast
import json
from importlib import resources
from pathlib import Path

import pytest

import acpio
from acpio import schema
from acpio._wire.v1 import values as v1_values
from acpio._wire.v1.values import schema_values

SRC = Path(acpio.__file__).parent
GENERATED = SRC / "schema" / "_generated.py"

# Each v1 set, the v1 definition it is read from, and the v2 known set it narrows.
SETS = {
    "V1_TOOL_KINDS": ("ToolKind", schema.KNOWN_TOOL_KIND),
    "V1_TOOL_STATUSES": ("ToolCallStatus", schema.KNOWN_TOOL_CALL_STATUS),
    "V1_OPTION_KINDS": ("PermissionOptionKind", schema.KNOWN_PERMISSION_OPTION_KIND),
    "V1_PLAN_STATUSES": ("PlanEntryStatus", schema.KNOWN_PLAN_ENTRY_STATUS),
    "V1_PLAN_PRIORITIES": ("PlanEntryPriority", schema.KNOWN_PLAN_ENTRY_PRIORITY),
    "V1_STOP_REASONS": ("StopReason", schema.KNOWN_STOP_REASON),
}


def schema_file() -> dict[str, dict[str, object]]:
    text = resources.files("acpio.schema").joinpath("v1", "schema.json").read_text("utf-8")
    return json.loads(text)["$defs"]  # type: ignore[no-any-return]


def enum_of(node: dict[str, object]) -> set[str]:
    """A v1 enum's values, read the other way: every string ``const`` anywhere below it."""
    found: set[str] = set()

    def walk(value: object) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "const" and isinstance(item, str):
                    found.add(item)
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(node)
    return found


@pytest.mark.parametrize("name", sorted(SETS))
def test_each_v1_set_is_its_schema_enum(name: str) -> None:
    definition, v2_known = SETS[name]
    values = getattr(v1_values, name)
    assert values == enum_of(schema_file()[definition])
    # v1 is the older, smaller protocol: the projection maps v2 values onto these.
    assert values <= v2_known


def test_the_v1_sets_differ_from_v2_where_the_projection_maps() -> None:
    assert {"cancelled", "paused"} & v1_values.V1_TOOL_STATUSES == set()
    assert "error" not in v1_values.V1_STOP_REASONS
    assert {
        "end_turn",
        "max_tokens",
        "max_turn_requests",
        "refusal",
        "cancelled",
    } == v1_values.V1_STOP_REASONS


def test_the_v1_session_updates_are_the_schema_discriminators() -> None:
    branches = schema_file()["SessionUpdate"]["oneOf"]
    assert isinstance(branches, list)
    tags = {branch["properties"]["sessionUpdate"]["const"] for branch in branches}
    assert tags == v1_values.V1_SESSION_UPDATES
    assert {"tool_call", "plan", "current_mode_update"} <= tags


def test_a_definition_of_another_shape_is_refused() -> None:
    with pytest.raises(ValueError):
        schema_values("McpCapabilities")
    with pytest.raises(KeyError):
        schema_values("NoSuchDefinition")


def string_collections(path: Path) -> list[frozenset[str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    # Literal[...] types (tool schemas for an LLM) are types, not value sets the rules use.
    literals = {
        id(node.slice)
        for node in ast.walk(tree)
        if isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name | ast.Attribute)
        and (node.value.id if isinstance(node.value, ast.Name) else node.value.attr) == "Literal"
    }
    found = []
    for node in ast.walk(tree):
        if id(node) in literals:
            continue
        if isinstance(node, ast.Set | ast.Tuple | ast.List) and node.elts:
            items = [e.value for e in node.elts if isinstance(e, ast.Constant)]
            if len(items) == len(node.elts) and all(isinstance(i, str) for i in items):
                found.append(frozenset(items))
    return found


def test_no_module_spells_a_v1_set_out_again() -> None:
    sets = {getattr(v1_values, name) for name in [*SETS, "V1_SESSION_UPDATES"]}
    copies = [
        str(path.relative_to(SRC))
        for path in sorted(SRC.rglob("*.py"))
        if path != GENERATED and any(found in sets for found in string_collections(path))
    ]
    assert copies == []
