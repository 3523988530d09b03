"""No import cycles in ``src/acpio``, counting every import (see ``import_graph.py``).

The graph is read with ``ast``: module-level imports, those under ``if
TYPE_CHECKING:`` (a type checker follows them, and they turn into real cycles
the day someone moves one out of the block), and imports deferred into a
function or made with ``importlib.import_module("...")`` (a lazy import keeps a
heavy dependency off the start; it does not make a cycle through it any less
one: ``adapters/pydantic_ai.py`` <-> ``adapters/_pydantic_ai_bridge.py`` was one,
missed while deferred imports were left out). Where a lower module needs to
name an object of a higher one, it declares a ``Protocol`` of what it uses (for
example ``_session/channel.py`` ``OwningSession``, ``_handles/process.py``
``CommandTerminal``), or the piece both need moves below both.
"""

from __future__ import annotations

from pathlib import Path

from import_graph import cycles, import_graph

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "acpio"


def _short(module: str) -> str:
    return module.removeprefix("acpio.")


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen = {start}
    stack = [start]
    while stack:
        for step in graph[stack.pop()]:
            if step not in seen:
                seen.add(step)
                stack.append(step)
    return seen


def _on_cycles(graph: dict[str, set[str]]) -> tuple[set[str], set[tuple[str, str]]]:
    """The modules on some cycle, and the imports that are part of one."""
    reach = {module: _reachable(graph, module) for module in graph}
    edges = {(a, b) for a, targets in graph.items() for b in targets if a in reach[b]}
    return {a for a, _ in edges}, edges


def test_no_import_cycle() -> None:
    graph = import_graph(PACKAGE, "acpio")
    found = [" -> ".join(map(_short, (*cycle, cycle[0]))) for cycle in cycles(graph)]
    assert not found, "import cycles:\n" + "\n".join(found[:20])
    modules, edges = _on_cycles(graph)
    assert not modules and not edges


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "pkg"


def test_the_graph_counts_every_import(tmp_path: Path) -> None:
    """Module level, ``TYPE_CHECKING``, deferred into a function, ``import_module("...")``."""
    package = _package(
        tmp_path,
        {
            "__init__.py": "from ._a import A as A\n",
            "_a.py": (
                "from typing import TYPE_CHECKING\n"
                "import pkg._b\n"
                "if TYPE_CHECKING:\n"
                "    from ._c import C\n"
                "class A:\n"
                "    from .sub import _d\n"
                "def later():\n"
                "    from . import _e\n"
            ),
            "_f.py": (
                "import importlib\n"
                "def load(name):\n"
                "    importlib.import_module('pkg._e')\n"
                "    importlib.import_module(name)\n"  # not literal: no edge
                "    importlib.import_module('json')\n"  # outside the package
            ),
            "_b.py": "try:\n    from .sub._d import D\nexcept ImportError:\n    pass\n",
            "_c.py": "from . import _b\nfrom .sub import value\n",
            "_e.py": "from .. import nothing_outside\n",
            "sub/__init__.py": "from .. import _e\nvalue = 1\n",
            "sub/_d.py": "from ..sub import value\nfrom .._a import A\n",
        },
    )
    assert import_graph(package, "pkg") == {
        "pkg": {"pkg._a"},
        "pkg._a": {"pkg._b", "pkg._c", "pkg.sub._d", "pkg._e"},
        "pkg._b": {"pkg.sub._d"},
        "pkg._c": {"pkg._b", "pkg.sub"},
        "pkg._e": set(),  # outside the package: not a node
        "pkg._f": {"pkg._e"},
        "pkg.sub": {"pkg._e"},
        "pkg.sub._d": {"pkg.sub", "pkg._a"},
    }


def test_each_cycle_is_reported_once_from_its_smallest_module() -> None:
    graph = {"a": {"b"}, "b": {"c", "a"}, "c": {"a", "c"}, "d": {"a"}}
    assert cycles(graph) == [("a", "b"), ("a", "b", "c"), ("c",)]
    modules, edges = _on_cycles(graph)
    assert modules == {"a", "b", "c"}
    assert ("d", "a") not in edges and ("b", "c") in edges
