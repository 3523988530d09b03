"""Where knowledge of the protocol version may live in ``src/acpio`` (docs/v1.md, "One boundary").

The version is chosen once, at ``initialize``; from then on the session's encoding
(``_session/encoding.py``) and the v1 method table answer every version question.
This test reads every module with ``ast`` (nothing is imported) and, outside
:data:`ALLOWED`, finds

* an import of a v1 module (``v1_projection``, ``v1_types``, ``v1_schema``, ``v1_server``);
* a name, attribute, argument, keyword or definition containing ``v1``/``V1``,
  ``projection`` or ``protocol_version`` (the names of :data:`EXEMPT_NAMES` aside);
* a comparison of something named like a version with the literal ``1`` or ``2``
  or with ``PROTOCOL_VERSION``.

Docstrings and comments may speak of v1: they are prose, not branches.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "acpio"

#: Modules (paths under ``src/acpio``; a trailing ``/`` is a whole package) that may
#: know the version, each with the reason.
ALLOWED: dict[str, str] = {
    # The one object per wire version, chosen at initialize: the boundary itself.
    "_session/encoding.py": "the encodings of both versions",
    "_session/v1_projection.py": "what a v1 client is shown, held by V1Encoding",
    "_agent/v1_server.py": "the v1 method table",
    "_agent/agent_server.py": "initialize negotiates the version and picks the method table",
    "_protocol/v1_schema.py": "reading v1 messages as the vendored v1 schema says",
    "_protocol/v1_types.py": "the v1 shapes",
    "_protocol/v1_values.py": "the v1 value sets, read from the vendored v1 schema",
    "_protocol/peer.py": "what the client offers, the negotiated version included",
    "_errors.py": "the error initialize answers for an unsupported version",
    # terminal/* and fs/* are methods only a v1 client serves: these handles are
    # reached when the encoding says client_runs_terminals, or by Session's
    # read_text_file/write_text_file, which refuse on v2 with a clear message.
    "_handles/client_services.py": "the v1 client's terminal and file services",
    "schema/": "generated types and PROTOCOL_VERSION",
    "testing/": "a test client of both versions and their conformance rules",
    "_cli/": "tools that drive and check clients and agents of both versions",
}

#: Names allowed in one module, each with the reason (not version knowledge).
EXEMPT_NAMES: dict[str, dict[str, str]] = {
    "_store/sqlite_store.py": {"_V1": "the store's own first schema migration"},
    "_store/postgres_store.py": {"_V1": "the store's own first schema migration"},
}

V1_MODULES = frozenset({"v1_projection", "v1_types", "v1_schema", "v1_server"})
VERSION_NAME = re.compile(r"v1|projection|protocol_version", re.IGNORECASE)
VERSION_INTS = frozenset({1, 2})


def _allowed(relative: str) -> bool:
    return any(
        relative == entry or (entry.endswith("/") and relative.startswith(entry))
        for entry in ALLOWED
    )


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


def violations(package: Path) -> list[str]:
    """Every place outside :data:`ALLOWED` that knows the version, as ``path:line: what``."""
    found: list[str] = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package).as_posix()
        if _allowed(relative):
            continue
        exempt = EXEMPT_NAMES.get(relative, {})
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            line = getattr(node, "lineno", 0)
            if isinstance(node, ast.ImportFrom):
                modules = [*(node.module or "").split("."), *(a.name for a in node.names)]
                for module in modules:
                    if module in V1_MODULES:
                        found.append(f"{relative}:{line}: imports {module}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if V1_MODULES & set(alias.name.split(".")):
                        found.append(f"{relative}:{line}: imports {alias.name}")
            for name in _names(node):
                if VERSION_NAME.search(name) and name not in exempt:
                    found.append(f"{relative}:{line}: names {name!r}")
            if isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
                if any(_is_version_constant(x) for x in operands) and any(
                    _mentions_version(x) for x in operands if not _is_version_constant(x)
                ):
                    found.append(f"{relative}:{line}: compares a version with a version number")
    return sorted(set(found))


def test_only_the_boundary_knows_the_protocol_version() -> None:
    found = violations(PACKAGE)
    assert not found, "version knowledge outside the boundary:\n" + "\n".join(found)


def test_every_allowed_entry_exists() -> None:
    for entry in [*ALLOWED, *EXEMPT_NAMES]:
        assert (PACKAGE / entry).exists(), entry


def test_the_rules_catch_what_they_name(tmp_path: Path) -> None:
    """A module of each kind of version knowledge is found (the test can fail)."""
    (tmp_path / "_session").mkdir()
    (tmp_path / "_session" / "updates.py").write_text(
        "from .v1_projection import V1Projection\n"
        "from .._protocol import v1_types\n"
        "def send(self, peer):\n"
        "    if self.v1:\n"
        "        self.framing.projection.flush()\n"
        "    if peer.version == 1:\n"
        "        pass\n"
        "    return peer.protocol_version\n"
    )
    found = "\n".join(violations(tmp_path))
    for what in (
        "imports v1_projection",
        "imports v1_types",
        "names 'v1'",
        "names 'projection'",
        "compares a version",
        "names 'protocol_version'",
    ):
        assert what in found, what
