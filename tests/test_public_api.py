"""The public surface: ``acpio.__all__`` is exactly the public names, each documented."""

from __future__ import annotations

import ast
import importlib
import inspect
import types
from pathlib import Path

import pytest

import acpio

# Subpackages that become attributes of ``acpio`` once imported (the pytest
# plugin imports the testing kit); they are imported by name, not re-exported.
SUBPACKAGES = {"testing", "mcp", "adapters", "remote"}


def _public_names() -> set[str]:
    loaded = {
        name
        for name, value in vars(acpio).items()
        if name.isidentifier()  # pytest's assertion rewriting adds "@py_builtins"
        and not name.startswith("_")
        and not (isinstance(value, types.ModuleType) and name in SUBPACKAGES)
    }
    return loaded | set(acpio._LAZY)  # pyright: ignore[reportPrivateUsage]


def test_lazy_names_are_what_type_checkers_see() -> None:
    """Each name loaded on first use is its module's object, and the ``TYPE_CHECKING``
    imports of ``acpio/__init__.py`` name exactly those names, from the same modules."""
    lazy: dict[str, str] = acpio._LAZY  # pyright: ignore[reportPrivateUsage]
    tree = ast.parse(Path(inspect.getfile(acpio)).read_text(encoding="utf-8"))
    (block,) = [n for n in tree.body if isinstance(n, ast.If)]
    seen: dict[str, str] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.level == 1
        for alias in node.names:
            assert alias.asname == alias.name
            module = f".{node.module}" if node.module else f".{alias.name}"
            seen[alias.name] = module
    assert seen == lazy
    for name, module in lazy.items():
        value = getattr(acpio, name)
        expected = importlib.import_module(module, "acpio")
        assert value is (expected if module == f".{name}" else getattr(expected, name))


def test_all_is_exactly_the_public_names() -> None:
    assert isinstance(acpio.__all__, tuple)
    assert len(set(acpio.__all__)) == len(acpio.__all__), "duplicates in __all__"
    assert list(acpio.__all__) == sorted(acpio.__all__, key=lambda n: (n[0].islower(), n))
    assert set(acpio.__all__) == _public_names()


def test_star_import_gives_all_and_nothing_else() -> None:
    namespace: dict[str, object] = {}
    exec("from acpio import *", namespace)
    namespace.pop("__builtins__")
    assert set(namespace) == set(acpio.__all__)


@pytest.mark.parametrize("name", acpio.__all__)
def test_every_public_name_has_its_own_docstring(name: str) -> None:
    value = getattr(acpio, name)
    if isinstance(value, type):
        doc = value.__dict__.get("__doc__")
    else:
        doc = getattr(value, "__doc__", None)
    assert isinstance(doc, str) and doc.strip(), f"acpio.{name} has no docstring"


AGENT_FRAMEWORK = [
    acpio.Agent,
    acpio.AgentLimits,
    acpio.Session,
    acpio.SessionLimits,
    acpio.MessageStream,
    acpio.store.History,
    acpio.HistoryLimits,
    acpio.store.InMemoryHistory,
    acpio.store.InMemorySessionStore,
    acpio.store.SessionRecord,
    acpio.store.SessionStore,
    acpio.store.SqliteSessionStore,
    acpio.store.PostgresSessionStore,
]


@pytest.mark.parametrize("cls", AGENT_FRAMEWORK, ids=lambda cls: cls.__name__)
def test_public_methods_of_the_agent_framework_are_documented(cls: type) -> None:
    missing = []
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue
        function = member.fget if isinstance(member, property) else member
        is_method = inspect.isfunction(function) or isinstance(member, property)
        if is_method and not (function.__doc__ or "").strip():
            missing.append(name)
    assert missing == [], f"{cls.__name__} methods without a docstring: {missing}"


def test_version_is_a_string() -> None:
    assert isinstance(acpio.__version__, str) and acpio.__version__
