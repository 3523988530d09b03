"""Each public class or type alias name in ``src/acpio`` is defined once.

Two modules defining the same name (a ``SessionState`` enum in the turn
machine and a ``SessionState`` record in the checker, say) make a reader, an
import or a docs reference land on the wrong one. The test reads every module
under ``src/acpio`` with :mod:`ast` and collects the top-level classes and type
aliases whose names do not start with ``_`` (re-exports are imports, not
definitions, so they do not count). The few names defined twice on purpose are
listed in :data:`PARALLEL` with the reason.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import acpio

SOURCE = Path(acpio.__file__).parent

PARALLEL = {
    # Each framework adapter offers the same public shape under its own module.
    "ACPAgent": "one per framework adapter (acpio.adapters.langgraph, .pydantic_ai)",
    "ModeChoice": "one per framework adapter",
    "ModelChoice": "one per framework adapter",
    # The v1 wire types mirror the v2 schema types of the same name on purpose.
    "EnvVariable": "the v1 wire type beside the v2 schema type",
    "TerminalExitStatus": "the v1 wire type beside the v2 schema type",
    "Handler": "the method-table handler type, one per wire version's server",
}

TURN_NAMES = ("SessionState", "Turn", "TurnRecord", "TurnEnding", "Outcome", "Step")


def _defined_names(tree: ast.Module) -> list[str]:
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            annotation = node.annotation
            if isinstance(annotation, ast.Name) and annotation.id == "TypeAlias":
                names.append(node.target.id)
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Subscript)
        ):
            names.append(node.targets[0].id)  # an alias such as ``X = tuple[str, int]``
        elif type(node).__name__ == "TypeAlias":  # ``type X = ...`` (Python 3.12+)
            alias_name: object = getattr(getattr(node, "name", None), "id", None)
            if isinstance(alias_name, str):
                names.append(alias_name)
    return [name for name in names if not name.startswith("_")]


def definitions() -> dict[str, list[str]]:
    """Every public class or alias name in src/acpio, to the modules that define it."""
    found: defaultdict[str, list[str]] = defaultdict(list)
    for path in sorted(SOURCE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for name in _defined_names(tree):
            found[name].append(path.relative_to(SOURCE).as_posix())
    return found


def test_each_public_name_is_defined_once() -> None:
    twice = {
        name: modules
        for name, modules in definitions().items()
        if len(modules) > 1 and name not in PARALLEL
    }
    assert not twice, f"names defined in more than one module: {twice}"


def test_the_turn_names_mean_one_thing() -> None:
    found = definitions()
    for name in TURN_NAMES:
        assert len(found.get(name, [])) <= 1, (name, found[name])
    # The machine's names, the checker's and the testing kit's are told apart.
    assert found["SessionState"] == ["_session/turn_machine.py"]
    assert found["TurnRecord"] == ["_session/turn_machine.py"]
    assert found["TurnEnding"] == ["_session/turn_machine.py"]
    # The public names (acpio.testing.Turn, acpio.Outcome) are the kit's and the handles'.
    assert len(found["Turn"]) == 1 and found["Turn"][0].startswith("testing/")
    assert len(found["Outcome"]) == 1 and not found["Outcome"][0].startswith("_session/")
