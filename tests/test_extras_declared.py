"""Each extra declares every distribution its modules import (read with ``ast``).

The suite runs with every extra installed, where a dependency one extra forgot can come with
another (``sniffio`` came with trio). Here the modules an extra makes importable are followed
through acpio's own imports (module level and inside functions, not under ``TYPE_CHECKING``),
and every other import outside the standard library must name a distribution that the core
dependencies or that extra list in pyproject.toml. ``scripts/extras.sh`` then installs each
extra alone and runs it.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "acpio"


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _entries() -> dict[str, list[str]]:
    """The modules each extra makes importable: scripts/extras.sh's MODULES table ("core" is
    no extra; ``NAME.*`` is a package and every module in it but ``__main__``)."""
    script = (ROOT / "scripts" / "extras.sh").read_text()
    table = script.split("declare -A MODULES=(", 1)[1].split("\n)", 1)[0]
    entries: dict[str, list[str]] = {}
    for extra, names in re.findall(r'^\s*\[([\w-]+)\]="([^"]*)"', table, re.MULTILINE):
        modules: list[str] = []
        for name in names.split():
            package = name.removesuffix(".*")
            walk = name != package
            modules += [
                module
                for module in MODULES
                if module == package
                or (walk and module.startswith(package + ".") and not module.endswith("__main__"))
            ]
        entries[extra] = modules
    return entries


ENTRIES = _entries()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _catches_import_error(node: ast.Try) -> bool:
    caught: list[ast.expr] = []
    for handler in node.handlers:
        if isinstance(handler.type, ast.Tuple):
            caught += handler.type.elts
        elif handler.type is not None:
            caught.append(handler.type)
    return any(
        isinstance(name, ast.Name) and name.id in ("ImportError", "ModuleNotFoundError")
        for name in caught
    )


def _imports(module: str) -> tuple[set[str], set[str]]:
    """(acpio modules, other top-level names) that running ``module`` may import."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    internal: set[str] = set()
    external: set[str] = set()
    guarded: set[str] = set()
    stack: list[ast.AST] = [ast.parse(path.read_text(encoding="utf-8"))]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                stack.extend(child.orelse)
                continue
            if isinstance(child, ast.Try) and _catches_import_error(child):
                # An optional dependency, imported where it is used and refused with a
                # clear error naming its extra when missing (the PostgreSQL store's psycopg):
                # the module's other imports of it run only once this one succeeded.
                guarded |= {
                    alias.name.split(".")[0]
                    for statement in child.body
                    if isinstance(statement, ast.Import)
                    for alias in statement.names
                }
            names: list[str] = []
            if isinstance(child, ast.Import):
                names = [alias.name for alias in child.names]
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")[: len(package.split(".")) - (child.level - 1)]
                    target = ".".join([*base, child.module] if child.module else base)
                else:
                    target = child.module or ""
                if target.split(".")[0] != "acpio":
                    names = [target]
                else:  # `from acpio.x import y`: y may be a module too
                    names = [target, *(f"{target}.{alias.name}" for alias in child.names)]
            for name in names:
                parts = name.split(".")
                if parts[0] != "acpio":
                    external.add(parts[0])
                    continue
                # The module itself, and every package loaded on the way to it.
                internal |= {
                    ".".join(parts[:n])
                    for n in range(1, len(parts) + 1)
                    if ".".join(parts[:n]) in MODULES
                }
            stack.append(child)
    return internal, external - guarded


def _reachable_imports(entries: list[str]) -> dict[str, set[str]]:
    """Other top-level names imported -> the acpio modules that import them."""
    seen: set[str] = set()
    todo = list(entries)
    found: dict[str, set[str]] = {}
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        internal, external = _imports(module)
        todo.extend(internal - seen)
        for name in external:
            found.setdefault(name, set()).add(module)
    return found


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> dict[str, set[str]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = {_normalized(Requirement(r).name) for r in project["dependencies"]}
    declared = {"core": core}
    for extra, requirements in project["optional-dependencies"].items():
        declared[extra] = core | {_normalized(Requirement(r).name) for r in requirements}
    return declared


@pytest.mark.parametrize("extra", sorted(ENTRIES))
def test_every_import_of_an_extra_is_declared_by_it(extra: str) -> None:
    declared = _declared()[extra]
    distributions = packages_distributions()
    undeclared: dict[str, list[str]] = {}
    for name, importers in sorted(_reachable_imports(ENTRIES[extra]).items()):
        if name in sys.stdlib_module_names or name == "__future__":
            continue
        owners = {_normalized(d) for d in distributions.get(name, [name])}
        if not owners & declared:
            undeclared[f"{name} ({', '.join(sorted(owners))})"] = sorted(importers)
    assert not undeclared, (
        f"acpio[{extra}] imports distributions it does not declare in pyproject.toml: {undeclared}"
    )


def test_the_walk_sees_a_third_party_import() -> None:
    # The check can fail: the pydantic-ai adapter's own imports are found.
    assert set(ENTRIES) >= {"core", "cli", "testing", "mcp", "pydantic-ai"}
    found = _reachable_imports(ENTRIES["pydantic-ai"])
    assert {"pydantic_ai", "fastmcp", "anyio", "msgspec"} <= set(found)
    assert "rich" not in _reachable_imports(ENTRIES["core"])
