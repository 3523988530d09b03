"""The public surface: ``acpio`` for agent authors, ``acpio.rpc`` and ``acpio.store`` for the layers
below, and the limits, defined once and nested under ``AgentLimits``.

Each public module's ``__all__`` is a sorted tuple of exactly its public names,
each importable and documented; no name of ``acpio.rpc`` or ``acpio.store`` is
reachable from the top level (no compatibility aliases are kept); and the two
submodules import without any optional extra installed.
"""

from __future__ import annotations

import dataclasses
import inspect
import subprocess
import sys
import types
from typing import Any

import pytest

import acpio
import acpio.auth
import acpio.remote
import acpio.rpc
import acpio.store
from acpio import schema
from acpio.testing import MockClient

pytestmark_anyio = pytest.mark.anyio

SUBMODULES = (acpio.rpc, acpio.store, acpio.remote, acpio.auth)
PUBLIC_MODULES = (acpio, *SUBMODULES)
# What the package imports besides its own modules: anyio and msgspec are the core.
OPTIONAL_EXTRAS = (
    "mcp",
    "pydantic_ai",
    "langgraph",
    "langchain_core",
    "rich",
    "jsonschema",
    "pytest",
    "trio",
    "uvicorn",
    "websockets",
)


def _public_names(module: types.ModuleType) -> set[str]:
    return {
        name
        for name, value in vars(module).items()
        if name.isidentifier()
        and not name.startswith("_")
        # Subpackages imported by name (the testing kit, mcp, adapters) become attributes.
        and not (isinstance(value, types.ModuleType) and name not in module.__all__)
    }


def _documented(value: object) -> bool:
    doc = value.__dict__.get("__doc__") if isinstance(value, type) else value.__doc__
    return isinstance(doc, str) and bool(doc.strip())


@pytest.mark.parametrize("module", PUBLIC_MODULES, ids=lambda m: m.__name__)
def test_all_is_a_sorted_tuple_of_exactly_the_public_names(module: types.ModuleType) -> None:
    names: tuple[str, ...] = module.__all__
    assert isinstance(names, tuple)
    assert len(set(names)) == len(names), "duplicates in __all__"
    assert list(names) == sorted(names, key=lambda n: (n[0].islower(), n))
    assert set(names) == _public_names(module)


@pytest.mark.parametrize("module", PUBLIC_MODULES, ids=lambda m: m.__name__)
def test_the_module_and_every_name_in_it_are_documented(module: types.ModuleType) -> None:
    assert _documented(module), f"{module.__name__} has no docstring"
    undocumented = [name for name in module.__all__ if not _documented(getattr(module, name))]
    assert undocumented == [], f"{module.__name__}: no docstring on {undocumented}"


@pytest.mark.parametrize("module", SUBMODULES, ids=lambda m: m.__name__)
def test_no_name_of_a_submodule_is_also_at_the_top_level(module: types.ModuleType) -> None:
    assert set(module.__all__).isdisjoint(acpio.__all__)
    assert [name for name in module.__all__ if hasattr(acpio, name)] == []
    assert getattr(acpio, module.__name__.rpartition(".")[2]) is module


@pytest.mark.parametrize("module", SUBMODULES, ids=lambda m: m.__name__)
def test_star_import_of_a_submodule_gives_its_all(module: types.ModuleType) -> None:
    namespace: dict[str, object] = {}
    exec(f"from {module.__name__} import *", namespace)
    namespace.pop("__builtins__")
    assert set(namespace) == set(module.__all__)


def test_rpc_and_store_import_without_any_optional_extra() -> None:
    # A fresh interpreter where every optional extra is missing (its import fails).
    script = f"""
import sys
class Missing:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {OPTIONAL_EXTRAS!r}:
            raise ImportError(f"{{name}} is not installed")
        return None
sys.meta_path.insert(0, Missing())
import acpio.remote
import acpio.rpc
import acpio.store
from acpio.rpc import *
from acpio.store import *
left = sorted(n for n in sys.modules if n.partition(".")[0] in {OPTIONAL_EXTRAS!r})
assert not left, left
print("ok")
"""
    done = subprocess.run(
        [sys.executable, "-c", script], check=False, capture_output=True, text=True
    )
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stderr


# ---------------------------------------------------------------- limits

LIMIT_CLASSES = (acpio.AgentLimits, acpio.SessionLimits, acpio.HistoryLimits)


@pytest.mark.parametrize("cls", LIMIT_CLASSES, ids=lambda cls: cls.__name__)
def test_every_limits_class_is_frozen_and_keyword_only(cls: Any) -> None:
    limits = cls()
    field = dataclasses.fields(limits)[0]
    with pytest.raises(TypeError):
        cls(getattr(limits, field.name))
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(limits, field.name, getattr(limits, field.name))
    changed = dataclasses.replace(limits, **{field.name: getattr(limits, field.name)})
    assert changed == limits


def test_the_limits_nest_under_agent_limits() -> None:
    limits = acpio.AgentLimits()
    assert limits.session == acpio.SessionLimits()
    assert limits.history == acpio.HistoryLimits()
    custom = acpio.AgentLimits(
        session=acpio.SessionLimits(max_queued_prompts=2),
        history=acpio.HistoryLimits(records=5),
    )
    assert custom.session.max_queued_prompts == 2
    assert custom.history.records == 5
    assert custom.max_sessions == limits.max_sessions


def test_documented_default_history_limits() -> None:
    # Promised in docs/sessions.md and in docs/session-store.md.
    history = acpio.AgentLimits().history
    assert history.records == 10_000
    assert history.terminal_bytes == 1024 * 1024
    assert history.tool_call_items == 1000


def test_the_connection_and_the_agent_share_the_connection_defaults() -> None:
    limits = acpio.AgentLimits()
    parameters = inspect.signature(acpio.rpc.Connection).parameters
    for name in ("max_message_size", "write_buffer_size", "max_concurrent_requests"):
        assert parameters[name].default == getattr(limits, name), name
    assert parameters["max_nesting_depth"].default == limits.max_nesting_depth


def test_the_default_store_keeps_the_history_limits_it_is_given(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    bounds = acpio.HistoryLimits(records=3, terminal_bytes=100)
    monkeypatch.setenv("ACPIO_SESSION_STORE", "memory")
    store = acpio.store.default_session_store("a", limits=bounds)
    assert isinstance(store, acpio.store.InMemorySessionStore)
    monkeypatch.setenv("ACPIO_SESSION_STORE", f"{tmp_path}/sessions.db")
    sqlite = acpio.store.default_session_store("a", limits=bounds)
    assert isinstance(sqlite, acpio.store.SqliteSessionStore)
    memory = acpio.store.open_session_store("memory", limits=bounds)
    assert isinstance(memory, acpio.store.InMemorySessionStore)
    try:
        assert sqlite.limits == bounds
    finally:
        sqlite.close()


class FiveMessages(acpio.Agent):
    info = acpio.Implementation(name="five-messages", version="1.0.0")

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        for index in range(5):
            await session.message(f"message {index}")
        return "end_turn"


def _replayed_messages(updates: list[schema.SessionUpdate]) -> int:
    return sum(isinstance(u, schema.UserMessage | schema.AgentMessage) for u in updates)


@pytestmark_anyio
@pytest.mark.parametrize(("records", "replayed"), [(None, 6), (3, 3)])
async def test_agent_limits_history_bounds_the_store_acpio_creates(
    records: int | None, replayed: int
) -> None:
    limits = (
        acpio.AgentLimits()
        if records is None
        else acpio.AgentLimits(history=acpio.HistoryLimits(records=records))
    )
    async with MockClient(FiveMessages(), limits=limits) as client:
        session = await client.new_session()
        assert (await session.prompt("go")).stop_reason == "end_turn"
        assert _replayed_messages(await session.resume(replay=True)) == replayed
        assert client.violations == []


@pytestmark_anyio
async def test_a_store_that_is_passed_keeps_its_own_history_limits() -> None:
    store = acpio.store.InMemorySessionStore(acpio.HistoryLimits(records=2))
    limits = acpio.AgentLimits(history=acpio.HistoryLimits(records=4))
    async with MockClient(FiveMessages(), store=store, limits=limits) as client:
        session = await client.new_session()
        assert (await session.prompt("go")).stop_reason == "end_turn"
        assert _replayed_messages(await session.resume(replay=True)) == 2


# ---------------------------------------------------------- durable agent state


def test_the_durable_agent_state_api() -> None:
    # Agent side: the state's version, the migration hook, the error, the limit.
    assert acpio.Agent.agent_state_version == 1
    assert inspect.iscoroutinefunction(acpio.Agent.migrate_agent_state)
    assert list(inspect.signature(acpio.Agent.migrate_agent_state).parameters) == [
        "self",
        "session",
        "version",
        "state",
    ]
    assert isinstance(inspect.getattr_static(acpio.Session, "agent_state"), property)
    assert inspect.iscoroutinefunction(acpio.Session.save_agent_state)
    assert issubclass(acpio.AgentStateError, ValueError)
    assert acpio.SessionLimits().max_agent_state_bytes == 16 * 1024 * 1024
    # Store side: the record's fields and SessionStore.save_state, which both stores have.
    record = acpio.store.SessionRecord("s", "/", [], acpio.store.InMemoryHistory())
    assert (record.agent_state, record.agent_state_version, record.config_values) == (
        None,
        1,
        {},
    )
    assert "save_state" in dir(acpio.store.SessionStore)
    for store in (
        acpio.store.InMemorySessionStore,
        acpio.store.SqliteSessionStore,
        acpio.store.PostgresSessionStore,
    ):
        assert inspect.iscoroutinefunction(store.save_state)
