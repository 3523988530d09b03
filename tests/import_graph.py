"""The import graph of a package, read with ``ast`` (nothing is imported).

How this works: every ``.py`` file under the package directory is a module
(``__init__.py`` is its package). An edge ``a -> b`` means that module ``a``
names module ``b`` in an ``import`` statement anywhere in its text, or in a call
``importlib.import_module("b")`` with a literal name: statements at the top, in
classes, under ``try``, under ``if TYPE_CHECKING:`` and inside functions all
count. A type checker follows ``TYPE_CHECKING`` imports, and they turn into a
real cycle the day someone moves one out of the block; an import deferred into
a function (to keep a heavy dependency off the start) is a dependency all the
same, and a cycle through one is a cycle that only happens to load. ``from X
import y`` names ``X.y`` when that is a module of the package, else the module
``X`` (the names it defines); relative imports are resolved against the
importing module's package. Only modules of the package itself become nodes.

:func:`cycles` lists every elementary cycle of the graph (each module at most
once per cycle), rotated to start at its smallest module name, so a cycle has
one spelling however it was found.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

__all__ = ["cycles", "import_graph", "module_name"]


def module_name(path: Path, root: Path, package: str) -> str:
    """The dotted name of the module in ``path`` (``root`` is the package directory)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([package, *parts])


def _imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement of the module, and each ``importlib.import_module("x")``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif (
            isinstance(node, ast.Call)
            and _names_import_module(node.func)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            # import_module("a.b") loads a.b as ``import a.b`` does; relative names
            # (with a package argument) are not used in acpio.
            yield ast.Import(names=[ast.alias(name=node.args[0].value)])


def _names_import_module(func: ast.expr) -> bool:
    if isinstance(func, ast.Attribute):
        return func.attr == "import_module"
    return isinstance(func, ast.Name) and func.id == "import_module"


def _resolve(
    node: ast.Import | ast.ImportFrom, importer: str, is_package: bool, modules: set[str]
) -> set[str]:
    """The package's modules that ``node``, in module ``importer``, names."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in modules}
    if node.level:
        base = importer.split(".")
        if not is_package:
            base.pop()  # a module's relative imports start at its package
        if node.level > 1:
            base = base[: len(base) - (node.level - 1)]
        target = ".".join([*base, node.module] if node.module else base)
    else:
        target = node.module or ""
    found: set[str] = set()
    names_only_submodules = True
    for alias in node.names:
        submodule = f"{target}.{alias.name}"
        if submodule in modules:
            found.add(submodule)
        else:
            names_only_submodules = False
    if target in modules and not names_only_submodules:
        # ``from pkg import submodule`` needs only what ``pkg`` already is while
        # its submodules load; a name defined in ``pkg`` itself needs ``pkg``.
        found.add(target)
    return found


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Module -> the package's modules it imports, anywhere in its text (see the module doc)."""
    files = {module_name(path, root, package): path for path in sorted(root.rglob("*.py"))}
    modules = set(files)
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        edges: set[str] = set()
        for node in _imports(tree):
            edges |= _resolve(node, name, is_package, modules)
        edges.discard(name)  # `from . import x` inside x's own package __init__ names itself
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """Every elementary cycle, each rotated to start at its smallest module, sorted.

    A depth-first search from each module finds the cycles through it whose
    other modules all sort after it, so each cycle is found exactly once.
    """
    found: list[tuple[str, ...]] = []
    for start in sorted(graph):
        path = [start]
        on_path = {start}
        iterators = [iter(sorted(graph[start]))]
        while iterators:
            step = next(iterators[-1], None)
            if step is None:
                iterators.pop()
                on_path.discard(path.pop())
                continue
            if step == start:
                found.append(tuple(path))
            elif step > start and step not in on_path:
                path.append(step)
                on_path.add(step)
                iterators.append(iter(sorted(graph.get(step, ()))))
    return sorted(found)
