"""Where knowledge of ACP v1 may live in ``src/acpio`` (docs/v1.md, "One boundary").

The rule: only the v1 wire package, ``_wire/v1/``, knows v1 (with the testing
kit's v1 client and rules, the CLI built on it, and the generated and vendored
schema: :data:`KNOWS_V1`). The version is chosen once, at ``initialize``, by
picking a wire object (``_wire/v1`` or ``_wire/v2``); from then on that object
and the session's encoding answer every version question, so the session core,
the handles and the features have no version branch.

Outside :data:`KNOWS_V1`, at most :data:`MAX_NAMED` modules, each listed in
:data:`NAMED` with its reason, may

* import a module of ``_wire/v1`` (``from .._wire.v1 import V1_WIRE``);
* use a code name (a name, attribute, argument, keyword, import or definition)
  containing ``v1`` in any case (a schema-migration constant named ``_V1`` counts);
* compare something named like a version with the literal ``1`` or ``2`` or
  with ``PROTOCOL_VERSION``.

This test reads every module with ``ast`` (nothing is imported), finds each of
those, and fails on any in a module not named, or when more modules are named
than allowed. Docstrings, comments and strings may speak of v1: they are prose,
not branches.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "acpio"

#: Packages that may know v1 (paths under ``src/acpio``), each with the reason.
KNOWS_V1: dict[str, str] = {
    "_wire/v1/": "the v1 wire package: its method table, encoding, terminals, schema reading",
    "testing/": "a test client of both versions and their conformance rules",
    "_cli/": "tools that drive and check clients and agents of both versions",
    "schema/": "the generated types, PROTOCOL_VERSION and the vendored v1 schema",
}

#: The modules outside :data:`KNOWS_V1` that may know v1, each with the reason.
NAMED: dict[str, str] = {
    "_agent/agent_server.py": "initialize negotiates the version and picks the v1 wire object",
}

#: How many modules :data:`NAMED` may hold (docs/v1.md, "One boundary").
MAX_NAMED = 2

V1_PACKAGE = "acpio._wire.v1"
V1_NAME = re.compile(r"v1", re.IGNORECASE)
VERSION_INTS = frozenset({1, 2})


def _knows_v1(relative: str) -> bool:
    return any(relative.startswith(entry) for entry in KNOWS_V1)


def _names(node: ast.AST) -> list[str]:
    """The identifiers ``node`` itself introduces or uses."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.keyword) and node.arg is not None:
        return [node.arg]
    if isinstance(node, ast.alias):
        return [node.name, *([node.asname] if node.asname else [])]
    return []


def _is_version_constant(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return type(node.value) is int and node.value in VERSION_INTS
    return any(name.endswith("PROTOCOL_VERSION") for name in _names(node))


def _mentions_version(node: ast.expr) -> bool:
    return any("version" in name.lower() for sub in ast.walk(node) for name in _names(sub))


def _module_of(relative: str) -> str:
    parts = relative.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["acpio", *parts])


def _imported(node: ast.Import | ast.ImportFrom, importer: str, is_package: bool) -> list[str]:
    """The absolute modules (and ``module.name``) that ``node`` in ``importer`` names."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = importer.split(".")
    if node.level:
        if not is_package:
            base.pop()
        base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
        target = ".".join([*base, *([node.module] if node.module else [])])
    else:
        target = node.module or ""
    return [target, *(f"{target}.{alias.name}" for alias in node.names)]


def _in_v1(module: str) -> bool:
    return module == V1_PACKAGE or module.startswith(V1_PACKAGE + ".")


def findings(package: Path) -> dict[str, list[str]]:
    """Each module outside :data:`KNOWS_V1` that knows v1, with what it does (``line: what``)."""
    found: dict[str, list[str]] = {}
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package).as_posix()
        if _knows_v1(relative):
            continue
        importer = _module_of(relative)
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        what: set[str] = set()
        for node in ast.walk(tree):
            line = getattr(node, "lineno", 0)
            if isinstance(node, ast.Import | ast.ImportFrom):
                for module in _imported(node, importer, is_package):
                    if _in_v1(module):
                        what.add(f"{line}: imports {module}")
            for name in _names(node):
                if V1_NAME.search(name):
                    what.add(f"{line}: names {name!r}")
            if isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
                if any(_is_version_constant(x) for x in operands) and any(
                    _mentions_version(x) for x in operands if not _is_version_constant(x)
                ):
                    what.add(f"{line}: compares a version with a version number")
        if what:
            found[relative] = sorted(what)
    return found


def test_only_the_v1_package_knows_v1() -> None:
    """Outside the v1 package (and the kit, the CLI, the schema) only NAMED modules know v1."""
    found = findings(PACKAGE)
    unnamed = {module: what for module, what in found.items() if module not in NAMED}
    assert not unnamed, "v1 knowledge outside the v1 package:\n" + "\n".join(
        f"{module}:{item}" for module, items in unnamed.items() for item in items
    )


def test_at_most_two_other_modules_know_v1() -> None:
    assert len(NAMED) <= MAX_NAMED, sorted(NAMED)
    assert set(findings(PACKAGE)) <= set(NAMED)


def test_every_named_module_exists_and_still_needs_to_be_named() -> None:
    """A NAMED module that no longer knows v1 is taken off the list (the list stays true)."""
    found = findings(PACKAGE)
    for entry in KNOWS_V1:
        assert (PACKAGE / entry).is_dir(), entry
    for module in NAMED:
        assert (PACKAGE / module).is_file(), module
        assert module in found, f"{module} no longer knows v1: take it off NAMED"


def test_the_session_core_handles_and_features_know_no_version() -> None:
    """None of the named modules is in the session core, the handles or the features."""
    for module in NAMED:
        assert not module.startswith(("_session/", "_handles/", "_features/")), module


def test_the_rules_catch_what_they_name(tmp_path: Path) -> None:
    """A module of each kind of v1 knowledge is found (the test can fail)."""
    (tmp_path / "_session").mkdir()
    (tmp_path / "_session" / "updates.py").write_text(
        "from .._wire.v1.projection import Projection\n"
        "from .._wire import v1\n"
        "import acpio._wire.v1.encoding\n"
        "def send(self, peer):\n"
        "    if self.is_v1:\n"
        "        pass\n"
        "    if peer.version == 1:\n"
        "        pass\n"
    )
    (tmp_path / "_store").mkdir()
    (tmp_path / "_store" / "sqlite_store.py").write_text("_V1 = 'CREATE TABLE t (x)'\n")
    (tmp_path / "_wire" / "v1").mkdir(parents=True)
    (tmp_path / "_wire" / "v1" / "methods.py").write_text("V1_TABLE = {}\nif version == 1: pass\n")
    found = findings(tmp_path)
    assert set(found) == {"_session/updates.py", "_store/sqlite_store.py"}
    updates = "\n".join(found["_session/updates.py"])
    for what in (
        "imports acpio._wire.v1.projection",
        "imports acpio._wire.v1",
        "imports acpio._wire.v1.encoding",
        "names 'is_v1'",
        "compares a version",
    ):
        assert what in updates, what
    assert "names '_V1'" in "\n".join(found["_store/sqlite_store.py"])
