"""The layers of ``src/acpio`` import only downwards (docs/architecture.md, "Layers").

Each module belongs to the layer of its top-level name under ``acpio``
(``acpio._rpc.connection`` to ``_rpc``). :data:`LAYERS` lists the layers
bottom up; a module may import modules of its own layer and of the layers
below it, never above, by any import (module level, ``TYPE_CHECKING``,
deferred into a function, ``importlib.import_module``; read with ``ast``, see
``import_graph.py``).

The second half holds docs/architecture.md to the code: each structural claim
it makes that code can check (the layer table, what ``_rpc/`` and the adapters
may import, the order inside ``_rpc/``, the protocols it names, where each rule
lives) has a test here; which modules may know the protocol version is
``test_version_boundary.py``.
"""

from __future__ import annotations

import ast
import re
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
    frozenset({"_wire"}),
    frozenset({"_agent"}),
    frozenset({"", "permission", "rpc", "store", "mcp", "auth"}),  # "": acpio/__init__.py
    frozenset({"testing", "remote"}),
    frozenset({"_cli", "adapters"}),  # the doc's "tools"
)

# The layer packages made for the layering alone (each ``__init__`` only a docstring).
LAYER_PACKAGES = (
    "_rpc",
    "_protocol",
    "_store",
    "_session",
    "_handles",
    "_features",
    "_wire",
    "_agent",
)


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


# ------------------------------------------------ claims of docs/architecture.md

DOC = PACKAGE.parents[1] / "docs" / "architecture.md"

#: The public modules (docs/architecture.md, "The public surface"): what the adapters may import.
PUBLIC_MODULES = frozenset(
    {"acpio", "acpio.schema", "acpio.rpc", "acpio.store", "acpio.permission", "acpio.mcp"}
)


def _acpio_imports(path: Path) -> list[tuple[str, list[str]]]:
    """Each import of ``acpio`` in ``path`` as (absolute module, names imported from it)."""
    relative = path.relative_to(PACKAGE).with_suffix("")
    package = ["acpio", *relative.parts[:-1]]
    found: list[tuple[str, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(a.name, []) for a in node.names if a.name.split(".")[0] == "acpio"]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            if module.split(".")[0] == "acpio":
                found.append((module, [a.name for a in node.names]))
    return found


def _layer_table() -> list[list[str]]:
    """The Layers table of the doc, bottom up: each row's backticked folders and modules."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## Layers") : text.index("## The public surface")]
    rows = [line for line in section.splitlines() if line.startswith("| ")][2:]
    return [re.findall(r"`([^`]+)`", row.split("|")[2]) for row in rows]


def test_the_doc_lists_the_layers_of_layers_py() -> None:
    """Each row of the doc's Layers table names the folders and modules of one ``LAYERS`` row."""
    table = _layer_table()
    names = [
        frozenset(
            "" if entry == "__init__.py" else entry.removesuffix("/").removesuffix(".py")
            for entry in row
        )
        for row in table
    ]
    assert names == list(LAYERS)


def test_rpc_knows_no_acp_type() -> None:
    """``_rpc/`` imports its own modules, the errors and the limits; of ``schema`` only the
    name of the request cancellation it implements (``CANCEL_REQUEST_METHOD``)."""
    allowed = {"acpio._errors", "acpio._limits"}
    for path in sorted((PACKAGE / "_rpc").glob("*.py")):
        for module, names in _acpio_imports(path):
            if module.startswith("acpio._rpc") or module in allowed:
                continue
            assert module == "acpio.schema" and names == ["CANCEL_REQUEST_METHOD"], (
                f"{path.name} imports {module} {names}"
            )


def test_adapters_use_the_public_api_only() -> None:
    """The framework adapters import acpio's public modules and their own package only."""
    for path in sorted((PACKAGE / "adapters").glob("*.py")):
        for module, names in _acpio_imports(path):
            if module.startswith("acpio.adapters"):
                continue
            assert module in PUBLIC_MODULES, f"adapters/{path.name} imports {module}"
            if module == "acpio":
                assert not any(name.startswith("_") for name in names), path.name


#: What the layers above the session core may import of ``_session/`` (docs/architecture.md,
#: "The session channel"): the channel, the work item of the running turn (its context
#: variable) and the trace types a handle's spans are made with; never the update path or
#: the turn runner behind the channel.
SESSION_SEEN_FROM_ABOVE = frozenset(
    {"acpio._session.channel", "acpio._session.work", "acpio._session.observe"}
)


def test_above_the_core_only_the_channel_is_seen() -> None:
    """Handles, features, ``mcp.py`` and the adapters reach the session core through its
    channel only: no import of ``_session.updates``, ``_session.turn`` or any other module
    of ``_session/`` but those of :data:`SESSION_SEEN_FROM_ABOVE`."""
    graph = import_graph(PACKAGE, "acpio")
    above = ("acpio._handles", "acpio._features", "acpio.mcp", "acpio.adapters")
    reaching = sorted(
        f"{importer} -> {imported}"
        for importer, targets in graph.items()
        if importer.startswith(above)
        for imported in targets
        if imported.startswith("acpio._session") and imported not in SESSION_SEEN_FROM_ABOVE
    )
    assert not reaching, "past the session channel:\n" + "\n".join(reaching)
    # The rule holds for the modules it names: the channel is what they import.
    assert any(
        "acpio._session.channel" in targets
        for importer, targets in graph.items()
        if importer.startswith("acpio._handles")
    )


#: Inside ``_rpc/``, bottom up (docs/architecture.md, "The JSON-RPC layer"): a module
#: imports modules of lower rank only; ``wire`` and ``scan`` are for every module.
RPC_RANKS: dict[str, int] = {
    "lines": 0,
    "outgoing": 0,
    "handler": 0,
    "routes": 0,
    "fd": 1,
    "tasks": 2,
    "channel": 2,
    "transport": 2,
    "incoming": 3,
    "connection": 4,
}


def test_rpc_modules_import_down_their_order() -> None:
    graph = import_graph(PACKAGE, "acpio")
    modules = {m.removeprefix("acpio._rpc.") for m in graph if m.startswith("acpio._rpc.")}
    assert modules == {*RPC_RANKS, "wire", "scan"}, "every _rpc module has a rank"
    for name, rank in RPC_RANKS.items():
        for target in graph[f"acpio._rpc.{name}"]:
            other = target.removeprefix("acpio._rpc.")
            if target.startswith("acpio._rpc.") and other not in ("wire", "scan"):
                assert RPC_RANKS[other] < rank, f"_rpc/{name} imports _rpc/{other}"


def _defined_names(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name | ast.arg):
            names.add(node.id if isinstance(node, ast.Name) else node.arg)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
    return names


CODE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def test_each_rule_lives_where_the_doc_says() -> None:
    """Every file of "Where each rule lives" exists, and each name it gives is in one of them."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## Where each rule lives") :]
    section = section[: section.index("\n## ")]
    rows = [line for line in section.splitlines() if line.startswith("| ")][2:]
    assert rows
    for row in rows:
        home = row.split("|")[2]
        tokens = re.findall(r"`([^`]+)`", home)
        paths = [t for t in tokens if t.endswith((".py", "/"))]
        assert paths, row
        files: list[Path] = []
        for token in paths:
            path = (PACKAGE.parents[1] if token.startswith("tests/") else PACKAGE) / token
            assert path.exists(), f"{token} (rule: {row.split('|')[1].strip()})"
            files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
        defined = set().union(*(_defined_names(f) for f in files))
        texts = "".join(f.read_text(encoding="utf-8") for f in files)
        for token in tokens:
            if (
                token in paths
                or not CODE_NAME.match(token)
                or (token.islower() and "_" not in token)
            ):
                continue  # a path, a value (`idle`), a word
            for part in token.split("."):
                # a code name, or a name in the code's text (an SQL table)
                assert part in defined or part in texts, f"{token} is not in {', '.join(paths)}"


def test_the_lower_layers_name_higher_objects_through_protocols() -> None:
    """The protocols the doc names exist where it says, as ``Protocol`` classes."""
    text = DOC.read_text(encoding="utf-8")
    for path, name in re.findall(r"`(_\w+/\w+\.py)` `(\w+)`", text[: text.index("Bottom up")]):
        tree = ast.parse((PACKAGE / path).read_text(encoding="utf-8"))
        (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name]
        assert any(ast.unparse(base) == "Protocol" for base in cls.bases), f"{path} {name}"


def test_the_version_boundary_lists_modules_that_exist() -> None:
    """Which modules may know v1 is ``test_version_boundary.py``'s lists: each entry
    names a module or package that exists, so the lists cannot go stale."""
    from test_version_boundary import KNOWS_V1, NAMED  # noqa: PLC0415

    for entry in [*KNOWS_V1, *NAMED]:
        path = PACKAGE / entry
        assert path.is_dir() if entry.endswith("/") else path.is_file(), entry
