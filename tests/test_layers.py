"""The layers of ``src/acpio`` import only downwards (docs/architecture.md, "Layers").

Each module belongs to the layer of its top-level name under ``acpio``
(``acpio._rpc.connection`` to ``_rpc``). :data:`LAYERS` lists the layers
bottom up; a module may import modules of its own layer and of the layers
below it, never above, at module level (``TYPE_CHECKING`` imports included,
read with ``ast`` as in ``test_import_cycles.py``).
"""

from __future__ import annotations

import ast
from pathlib import Path

from import_graph import import_graph

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "acpio"

# Bottom up. One row is one layer; names in a row are the packages/modules it has.
LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"schema", "_errors", "_limits", "_json"}),
    frozenset({"_rpc"}),
    frozenset({"_protocol"}),
    frozenset({"_store"}),
    frozenset({"_session"}),
    frozenset({"_handles"}),
    frozenset({"_features"}),
    frozenset({"_agent"}),
    frozenset({"", "permission", "rpc", "store", "mcp", "auth"}),  # "": acpio/__init__.py
    frozenset({"testing", "remote"}),
    frozenset({"_cli", "adapters"}),
)

# The layer packages made for the layering alone (each ``__init__`` only a docstring).
LAYER_PACKAGES = ("_rpc", "_protocol", "_store", "_session", "_handles", "_features", "_agent")


def _layer(module: str) -> int:
    top = module.removeprefix("acpio").removeprefix(".").split(".")[0]
    for index, names in enumerate(LAYERS):
        if top in names:
            return index
    raise AssertionError(f"{module} is in no layer: add it to LAYERS and docs/architecture.md")


def test_every_import_points_down_the_layers() -> None:
    graph = import_graph(PACKAGE, "acpio")
    upward = sorted(
        f"{importer} -> {imported}"
        for importer, targets in graph.items()
        for imported in targets
        if _layer(imported) > _layer(importer)
    )
    assert not upward, "imports up the layers:\n" + "\n".join(upward)


def test_every_module_is_in_a_layer() -> None:
    for module in import_graph(PACKAGE, "acpio"):
        _layer(module)


def test_layer_packages_export_nothing() -> None:
    """A layer's ``__init__`` is only a docstring: importing one module never loads the layer."""
    for name in LAYER_PACKAGES:
        tree = ast.parse((PACKAGE / name / "__init__.py").read_text())
        assert len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr), name
