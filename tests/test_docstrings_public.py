"""What users read names public things only: no docstring of a public name, and no message
acpio builds, points at a private module (``acpio._handles.edits``), which a user can
neither import by contract nor find in the API reference.

The docstrings are read the way the API reference (mkdocstrings, through griffe) reads
them, attribute docstrings included; the messages are every string literal of the source
that is not a docstring.
"""

from __future__ import annotations

import ast
from pathlib import Path

import griffe
import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PUBLIC_MODULES = (
    "acpio",
    "acpio.rpc",
    "acpio.store",
    "acpio.testing",
    "acpio.remote",
    "acpio.mcp",
    "acpio.permission",
    "acpio.schema",
    "acpio.adapters.pydantic_ai",
    "acpio.adapters.langgraph",
)
PRIVATE = "acpio._"


def _package() -> griffe.Module:
    loader = griffe.GriffeLoader(search_paths=[str(SRC)])
    package = loader.load("acpio")
    assert isinstance(package, griffe.Module)
    loader.resolve_aliases(implicit=False, external=False)
    return package


def _docstrings(obj: griffe.Object | griffe.Alias, path: str, seen: set[str]) -> dict[str, str]:
    """The docstrings of ``obj`` and of its public members (methods, properties, fields)."""
    target = obj.final_target if isinstance(obj, griffe.Alias) else obj
    if target.path in seen:
        return {}
    seen.add(target.path)
    found = {path: target.docstring.value} if target.docstring else {}
    if isinstance(target, griffe.Class):
        for name, member in target.members.items():
            if not name.startswith("_") or name == "__init__":
                found.update(_docstrings(member, f"{path}.{name}", seen))
    return found


def _public_docstrings() -> dict[str, str]:
    package = _package()
    found: dict[str, str] = {}
    for name in PUBLIC_MODULES:
        module = package if name == "acpio" else package[name.removeprefix("acpio.")]
        seen: set[str] = set()
        if module.docstring:
            found[name] = module.docstring.value
        for member_name, member in module.members.items():
            if member.is_public:
                found.update(_docstrings(member, f"{name}.{member_name}", seen))
    return found


DOCSTRINGS = _public_docstrings()


def test_the_public_names_are_read() -> None:
    for name in ("acpio.FileEdit", "acpio.ToolCallHandle.propose_edit", "acpio.testing.MockClient"):
        assert name in DOCSTRINGS
    assert len(DOCSTRINGS) > 500


def test_no_public_docstring_points_at_a_private_module() -> None:
    private = {path: doc for path, doc in DOCSTRINGS.items() if PRIVATE in doc}
    assert private == {}, "public docstrings naming private modules: " + ", ".join(private)


def _messages(path: Path) -> list[tuple[int, str]]:
    """The string literals of a source file that are not docstrings (bare string statements)
    nor logger names (``logging.getLogger("acpio._rpc.connection")`` names a module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    docstrings |= {
        id(arg)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "getLogger"
        for arg in node.args
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


SOURCES = sorted(p for p in (SRC / "acpio").rglob("*.py") if p.name != "_generated.py")


@pytest.mark.parametrize("path", SOURCES, ids=[p.relative_to(SRC).as_posix() for p in SOURCES])
def test_no_message_names_a_private_module(path: Path) -> None:
    found = [(line, value) for line, value in _messages(path) if PRIVATE in value]
    assert found == []


def test_the_scan_sees_a_private_name(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        'def f():\n    """doc acpio._x"""\n    raise ValueError("see acpio._handles.edits")\n'
        'log = logging.getLogger("acpio._rpc")\n'
    )
    assert _messages(probe) == [(3, "see acpio._handles.edits")]
