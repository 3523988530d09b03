"""One home for asking the user: only the session channel does it (docs/architecture.md).

Asking the user (a permission request, an elicitation) is one sequence: flush
pending terminal bytes, report ``requires_action``, send the request, await the
answer, decode it, report ``running``. ``SessionChannel.ask``
(``_session/channel.py``) is the one place that carries it out; the turn runner
(``_session/turn.py``) keeps the state it reports. These checks read the source
with ``ast`` (docstrings and comments do not count) and fail when another module
of the agent side names the request methods or sets the requires-action state
itself. The testing kit (the client side), the CLI (which reads logs) and the
schema are not the agent side.
"""

from __future__ import annotations

import ast
from pathlib import Path

import acpio

SRC = Path(acpio.__file__).parent

#: Folders that are not the agent side.
NOT_AGENT_SIDE = ("testing/", "_cli/", "schema/")

CHANNEL = "_session/channel.py"
TURNS = "_session/turn.py"
MACHINE = "_session/turn_machine.py"

#: The methods that ask the user, as the wire names them.
ASKING_METHODS = frozenset({"session/request_permission", "elicitation/create"})

#: Code names of asking and of the requires-action state, and the modules that may use them.
HOMES: dict[str, frozenset[str]] = {
    # the methods, as constants
    "PERMISSION_METHOD": frozenset({CHANNEL}),
    "ELICITATION_METHOD": frozenset({CHANNEL}),
    # a question is made and asked by the channel only
    "Question": frozenset({CHANNEL}),
    # the state around a question: the turn runner keeps it, the channel drives it
    "permission_started_now": frozenset({CHANNEL, TURNS}),
    "permission_finished_now": frozenset({CHANNEL, TURNS}),
    "set_state": frozenset({CHANNEL, TURNS}),
    "REQUIRES_ACTION": frozenset({CHANNEL, TURNS, MACHINE}),
}

#: Names whose every use counts (not only calls): they hold the rule themselves.
CALL_ONLY = frozenset({"Question"})


def agent_modules() -> list[tuple[str, ast.Module]]:
    found: list[tuple[str, ast.Module]] = []
    for path in sorted(SRC.rglob("*.py")):
        relative = path.relative_to(SRC).as_posix()
        if relative.startswith(NOT_AGENT_SIDE):
            continue
        found.append((relative, ast.parse(path.read_text(encoding="utf-8"))))
    return found


def _docstrings(tree: ast.Module) -> set[int]:
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def method_literals(tree: ast.Module) -> list[str]:
    """The asking methods spelled as string constants in ``tree`` (docstrings aside)."""
    docstrings = _docstrings(tree)
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and id(node) not in docstrings
        and node.value in ASKING_METHODS
    ]


def named(tree: ast.Module) -> set[str]:
    """The names of :data:`HOMES` that ``tree`` uses: as a name, an attribute or an import
    (only calls of :data:`CALL_ONLY` names: annotations may name them)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if name in CALL_ONLY:
                found.add(name)
            continue
        if isinstance(node, ast.Name):
            name = node.id
        elif isinstance(node, ast.Attribute):
            name = node.attr
        elif isinstance(node, ast.alias | ast.FunctionDef | ast.AsyncFunctionDef):
            name = node.name
        else:
            continue
        if name in HOMES and name not in CALL_ONLY:
            found.add(name)
    return found


def test_only_the_channel_names_the_asking_methods() -> None:
    spelled = {path: method_literals(tree) for path, tree in agent_modules()}
    assert {path for path, found in spelled.items() if found} == {CHANNEL}


def test_only_the_channel_asks_and_sets_requires_action() -> None:
    strays = [
        f"{path} uses {name}"
        for path, tree in agent_modules()
        for name in sorted(named(tree))
        if path not in HOMES[name]
    ]
    assert not strays, "ask the user through SessionChannel.ask: " + "; ".join(strays)


def test_only_the_turn_runner_builds_the_requires_action_update() -> None:
    builders = sorted(
        path
        for path, tree in agent_modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute | ast.Name)
        and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
        == "RequiresActionStateUpdate"
    )
    assert builders == [TURNS]


def test_the_checks_see_a_stray_asker() -> None:
    """A module that sends a permission request itself is caught (the checks are not blind)."""
    stray = ast.parse(
        "async def ask(connection, turns):\n"
        "    turns.permission_started_now()\n"
        '    await connection.request("session/request_permission", {}, None)\n'
    )
    assert method_literals(stray) == ["session/request_permission"]
    assert named(stray) == {"permission_started_now"}
