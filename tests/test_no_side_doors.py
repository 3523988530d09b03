"""No module of ``src/acpio`` keeps a process-wide registry from public objects to internals.

A public object reaches what is behind it through what it holds, never through a
module-level table that any module could read (the ``core_of(session)`` lookup
this replaced). Read with ``ast`` (nothing is imported from the scanned modules);
a module-level statement is a violation when it

* binds a ``WeakKeyDictionary`` or ``WeakValueDictionary`` (a table keyed by
  objects that live and die elsewhere, which is what such a registry is), or
* is annotated as a mapping whose key type is a public class of acpio
  (``acpio``, ``acpio.store``, ``acpio.mcp``, ``acpio.testing``).

:data:`ALLOWED` names the exceptions, each with the reason it is not a door inward.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import acpio
import acpio.mcp
import acpio.store
import acpio.testing

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "acpio"

#: ``path:name`` of module-level tables that are not registries into internals.
ALLOWED: dict[str, str] = {
    "mcp.py:_by_session": (
        "connect()'s one McpServers per session: a public object for a public one, "
        "holding nothing of the session's inside"
    ),
}

WEAK_MAPPINGS = frozenset({"WeakKeyDictionary", "WeakValueDictionary"})
MAPPINGS = frozenset({"dict", "Dict", "Mapping", "MutableMapping", *WEAK_MAPPINGS})


def public_classes() -> frozenset[str]:
    """The names of the classes acpio's public modules export."""
    names: set[str] = set()
    for module in (acpio, acpio.store, acpio.mcp, acpio.testing):
        for name in module.__all__:
            if inspect.isclass(getattr(module, name)):
                names.add(name)
    return frozenset(names)


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.rsplit(".", 1)[-1]
    return ""


def _mapping_key(annotation: ast.expr | None) -> str:
    """The key type's name when ``annotation`` is a mapping type, else ``""``."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        annotation = ast.parse(annotation.value, mode="eval").body
    if not isinstance(annotation, ast.Subscript) or _name(annotation.value) not in MAPPINGS:
        return ""
    index = annotation.slice
    key = index.elts[0] if isinstance(index, ast.Tuple) and index.elts else index
    return _name(key)


def _builds_weak_mapping(value: ast.expr | None) -> bool:
    return isinstance(value, ast.Call) and _name(value.func) in WEAK_MAPPINGS


def violations(package: Path, public: frozenset[str]) -> list[str]:
    """Every module-level registry keyed by public objects, as ``path:line: name: what``."""
    found: list[str] = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in tree.body:
            if isinstance(node, ast.AnnAssign):
                targets, annotation, value = [node.target], node.annotation, node.value
            elif isinstance(node, ast.Assign):
                targets, annotation, value = node.targets, None, node.value
            else:
                continue
            for target in targets:
                name = _name(target)
                if f"{relative}:{name}" in ALLOWED:
                    continue
                where = f"{relative}:{node.lineno}: {name}"
                if _builds_weak_mapping(value):
                    found.append(f"{where}: a module-level weak mapping")
                elif _mapping_key(annotation) in public:
                    found.append(f"{where}: a module-level mapping keyed by a public class")
    return found


def test_no_module_keeps_a_registry_from_public_objects_to_internals() -> None:
    found = violations(PACKAGE, public_classes())
    assert not found, "registries from public objects to internals:\n" + "\n".join(found)


def test_every_allowed_table_exists() -> None:
    for entry in ALLOWED:
        relative, name = entry.split(":")
        tree = ast.parse((PACKAGE / relative).read_text(encoding="utf-8"))
        bound = {
            _name(target)
            for node in tree.body
            if isinstance(node, ast.Assign | ast.AnnAssign)
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        }
        assert name in bound, entry


def test_the_rule_catches_the_registry_it_replaced(tmp_path: Path) -> None:
    """The ``_cores`` table and its kin are found (the test can fail)."""
    (tmp_path / "_agent").mkdir()
    (tmp_path / "_agent" / "session.py").write_text(
        "import weakref\n"
        "from weakref import WeakValueDictionary\n"
        "_cores: weakref.WeakKeyDictionary[Session, SessionCore] = weakref.WeakKeyDictionary()\n"
        "_handles = WeakValueDictionary()\n"
        "_by_call: dict[ToolCallHandle, object] = {}\n"
        "_quoted: 'dict[Session, int]' = {}\n"
        "_fine: dict[str, bytes] = {}\n"
    )
    found = "\n".join(violations(tmp_path, public_classes()))
    for name in ("_cores", "_handles", "_by_call", "_quoted"):
        assert f": {name}: " in found, name
    assert "_fine" not in found
