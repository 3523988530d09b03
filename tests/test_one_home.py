"""One home per rule: a rule the protocol states is written down in one module only.

These checks read the source (its syntax tree, so docstrings and comments do
not count) and fail when a rule is spelled out again somewhere else.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest

import acpio
from acpio import schema
from acpio._protocol.values import FINAL_TOOL_CALL_STATUSES
from acpio.testing import ElicitationPolicy, PermissionPolicy
from acpio.testing._policy_base import AnswerPolicy

SRC = Path(acpio.__file__).parent
GENERATED = SRC / "schema" / "_generated.py"


def modules() -> list[Path]:
    return sorted(path for path in SRC.rglob("*.py") if path != GENERATED)


def constants(path: Path) -> list[object]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found: list[object] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and id(node) not in docstrings:
            found.append(node.value)
        elif (
            isinstance(node, ast.UnaryOp)
            and isinstance(node.op, ast.USub)
            and isinstance(node.operand, ast.Constant)
            and isinstance(node.operand.value, int)
        ):
            found.append(-node.operand.value)
    return found


def where(predicate: Callable[[object], bool]) -> list[str]:
    """The modules (outside the generated schema) holding a constant ``predicate`` accepts."""
    return [
        str(path.relative_to(SRC)) for path in modules() if any(map(predicate, constants(path)))
    ]


@pytest.mark.parametrize(
    "code", [schema.INTERNAL_ERROR, schema.INVALID_PARAMS, schema.REQUEST_CANCELLED]
)
def test_error_codes_are_spelled_only_in_the_schema(code: int) -> None:
    assert where(lambda value: value == code) == []


def test_the_cancel_request_method_is_spelled_only_in_the_schema() -> None:
    # As a value (a method to compare with, or a line to send); messages may name it.
    def spelled(value: object) -> bool:
        return value in ("$/cancel_request", b"$/cancel_request") or (
            isinstance(value, bytes | str) and '"$/cancel_request"' in str(value)
        )

    assert where(spelled) == []


def test_the_custom_value_rule_lives_in_values() -> None:
    # "known or _-prefixed": only acpio._protocol.values tests a value for a leading "_" (method
    # names of extensions are a rule of their own, in the agent server and the checker).
    users = []
    for path in modules():
        text = path.read_text(encoding="utf-8")
        if 'startswith("_")' in text:
            users.append(str(path.relative_to(SRC)))
    assert sorted(users) == [
        "_agent/agent_server.py",  # _-prefixed extension methods
        "_protocol/values.py",
        "testing/_conformance.py",  # _-prefixed extension methods
        "testing/_schema_check.py",  # the schema's catch-all union variants
        "testing/_view.py",  # private attribute names left out of dir(), not protocol values
    ]


def test_final_statuses_are_defined_once_from_the_schema() -> None:
    assert FINAL_TOOL_CALL_STATUSES < schema.KNOWN_TOOL_CALL_STATUS
    spelled = where(lambda value: value == "completed")
    # Each module that names "completed" uses it as a status, not as a copy of the set.
    for path in spelled:
        text = (SRC / path).read_text(encoding="utf-8")
        assert (
            '{"completed", "failed", "cancelled"}' not in text or path == "_protocol/values.py"
        ), path


def test_paths_are_judged_absolute_in_one_place() -> None:
    users = [
        str(path.relative_to(SRC))
        for path in modules()
        if "isabs" in path.read_text(encoding="utf-8")
        or "_WINDOWS_DRIVE" in path.read_text(encoding="utf-8")
    ]
    assert users == []
    assert issubclass(acpio.RelativePathError, acpio.LocalProtocolError)


def test_updates_are_checked_only_through_check_update() -> None:
    # check_values walks any object; every update goes through check_update, which
    # knows per class (from the schema) whether there is anything to walk.
    callers = [
        str(path.relative_to(SRC))
        for path in modules()
        if "check_values(" in path.read_text(encoding="utf-8")
    ]
    assert callers == ["_protocol/values.py"]
    users = [
        str(path.relative_to(SRC))
        for path in modules()
        if "check_update(" in path.read_text(encoding="utf-8")
    ]
    assert sorted(users) == ["_agent/session.py", "_features/config.py", "_protocol/values.py"]


def test_the_policy_combinators_are_written_once() -> None:
    # never (sleep_forever), scripted (popleft) and call (isawaitable) of the testing kit's
    # permission and elicitation policies live in testing/_policy_base.py; each policy
    # class only names them (with its own parameter names and docs).
    marks = {"sleep_forever", "popleft", "isawaitable"}
    homes: dict[str, set[str]] = {}
    for path in modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.AsyncFunctionDef) and node.name == "decide":
                used = {sub.attr for sub in ast.walk(node) if isinstance(sub, ast.Attribute)}
                for mark in used & marks:
                    homes.setdefault(mark, set()).add(str(path.relative_to(SRC)))
    assert homes == {mark: {"testing/_policy_base.py"} for mark in marks}
    assert where(lambda v: isinstance(v, str) and "scripted answers were used" in v) == [
        "testing/_policy_base.py"
    ]
    assert issubclass(PermissionPolicy, AnswerPolicy)
    assert issubclass(ElicitationPolicy, AnswerPolicy)
