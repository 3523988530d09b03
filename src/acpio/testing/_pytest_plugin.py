"""pytest plugin of acpio (registered through the ``pytest11`` entry point as ``acpio``).

Two fixtures give a test a connected :class:`~acpio.testing.MockClient`; both
need an async test, run by anyio's pytest plugin (``@pytest.mark.anyio``), so
the test runs on whichever backends ``anyio_backend`` selects (asyncio and
trio, for example)::

    import pytest
    from acpio.testing import PermissionPolicy
    from my_agent import MyAgent

    pytestmark = pytest.mark.anyio

    # 1. A client for the agent named by the marker (on the test, class or module):
    @pytest.mark.acp_agent(agent=MyAgent, policy=PermissionPolicy.allow())
    async def test_answers(acp_client):
        session = await acp_client.new_session()
        result = await session.prompt("hello")
        assert result.stop_reason == "end_turn"

    # A subprocess agent, in any language:
    @pytest.mark.acp_agent(command=["node", "agent.js"])
    async def test_node_agent(acp_client): ...

    # 2. A factory, for several clients or options chosen inside the test:
    async def test_two_clients(acp_client_factory):
        async with acp_client_factory(MyAgent()) as first, acp_client_factory(MyAgent()) as second:
            ...

``acp_agent(agent=..., **options)``: an ``acpio.Agent`` subclass or a
zero-argument factory (called for each test, so tests never share agent
state) or an instance; or ``acp_agent(command=[...], **options)`` for a
subprocess. ``options`` are keyword arguments of ``MockClient`` (``policy``,
``strict``, ``timeout``, ``capabilities``, ...). Pass the agent as ``agent=``:
pytest takes a marker's single positional class argument for the decorated
object itself.
Sessions default to the test's ``tmp_path`` as working directory, and the agents
the fixtures start never write the user's session store (in-process: in memory;
a subprocess: a temporary ``ACPIO_STATE_DIR`` unless the environment sets
``ACPIO_STATE_DIR`` or ``ACPIO_SESSION_STORE``). Marker
options are made once, at import: give a policy with state
(``PermissionPolicy.scripted``) inside the test instead
(``acp_client.permission_policy = ...``), or each test would share its queue.

When a test fails, its report gets, for every MockClient the test created
(also those created directly, without a fixture), the last lines of the
transcript (``--acp-transcript-lines``, default 50), the agent's stderr and
any conformance violations; ``--acp-transcript-dir DIR`` also writes each
failing test's full transcripts there as JSON Lines.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import AsyncIterator, Callable, Generator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

import pytest

if TYPE_CHECKING:
    from _pytest.nodes import Node
    from _pytest.reports import TestReport
    from _pytest.runner import CallInfo

    from .._agent.agent import Agent
    from ._client import MockClient

# This module is loaded by every pytest run where acpio is installed, so it
# imports acpio itself only once a test uses it.
_CLIENT_MODULE = "acpio.testing._client"

__all__ = ["AcpClientFactory", "acp_client", "acp_client_factory"]

_CLIENTS = pytest.StashKey[list["MockClient"]]()
_STDERR_TAIL = 8000
_MARKER_HELP = (
    "acp_agent(agent=AgentClassOrFactory, **options) or acp_agent(command=[...], **options): "
    "the agent the acp_client fixture connects to; options are MockClient keyword arguments."
)


class AcpClientFactory(Protocol):
    """Makes a :class:`MockClient` whose sessions default to the test's ``tmp_path``."""

    def __call__(
        self, agent: Agent | type[Agent] | str | Sequence[str], **options: Any
    ) -> MockClient: ...


def pytest_addoption(parser: pytest.Parser) -> None:
    """Options for failure reports of tests that use the ACP mock client."""
    group = parser.getgroup("acpio", "acpio (ACP agent testing)")
    group.addoption(
        "--acp-transcript-lines",
        type=int,
        default=50,
        metavar="N",
        help="show the last N transcript lines of each ACP mock client in failure reports.",
    )
    group.addoption(
        "--acp-transcript-dir",
        default=None,
        metavar="DIR",
        help="write the full transcripts of failing tests to DIR as JSON Lines.",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``acp_agent`` marker (so ``--strict-markers`` accepts it)."""
    config.addinivalue_line("markers", _MARKER_HELP)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None]:
    """Collect every MockClient created while ``item`` runs (setup, call and teardown)."""
    clients = item.stash.setdefault(_CLIENTS, [])
    # Clients made directly in the test are found through the client module's
    # registry; it was imported by the test module if the test uses it.
    module = sys.modules.get(_CLIENT_MODULE)
    if module is not None:
        module.set_registry(clients)
    try:
        return (yield)
    finally:
        if module is not None:
            module.set_registry(None)
        item.stash[_CLIENTS] = []


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: CallInfo[None]
) -> Generator[None, TestReport, TestReport]:
    """Attach transcripts, stderr and violations of the test's clients to a failed report."""
    report = yield
    if report.failed:
        clients = item.stash.get(_CLIENTS, list["MockClient"]())
        lines = int(cast("int | str", item.config.getoption("--acp-transcript-lines")))
        for index, client in enumerate(clients):
            label = client.name if len(clients) == 1 else f"{client.name} #{index + 1}"
            for title, text in _sections(client, lines):
                report.sections.append((f"{title}: {label}", text))
        directory = item.config.getoption("--acp-transcript-dir")
        if directory and clients:
            _write_transcripts(Path(directory), item.nodeid, report.when, clients)
    return report


def _sections(client: MockClient, lines: int) -> list[tuple[str, str]]:
    sections = [
        (
            f"acp transcript (last {min(lines, len(client.transcript))} of "
            f"{len(client.transcript)})",
            client.transcript.format_tail(lines) or "(no messages)",
        )
    ]
    if client.returncode is not None or client.stderr:
        stderr = client.stderr.decode("utf-8", "backslashreplace")
        if len(stderr) > _STDERR_TAIL:
            stderr = "..." + stderr[-_STDERR_TAIL:]
        code = client.returncode
        title = "acp agent stderr" + ("" if code is None else f" (return code {code})")
        sections.append((title, stderr or "(empty)"))
    if client.violations:
        sections.append(
            ("acp conformance violations", "\n".join(str(v) for v in client.violations))
        )
    return sections


def _write_transcripts(
    directory: Path, nodeid: str, when: str, clients: Sequence[MockClient]
) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid).strip("_")
    for index, client in enumerate(clients):
        client.transcript.write_jsonl(directory / f"{stem}.{when}.{index}.jsonl")


@pytest.fixture
def acp_client_factory(request: pytest.FixtureRequest, tmp_path: Path) -> AcpClientFactory:
    """Make MockClients inside a test: ``async with acp_client_factory(MyAgent()) as client``.

    Sessions default to the test's ``tmp_path``; keyword arguments go to :class:`MockClient`.
    """

    from ._client import MockClient  # noqa: PLC0415

    def factory(agent: Agent | type[Agent] | str | Sequence[str], **options: Any) -> MockClient:
        options.setdefault("cwd", os.fspath(tmp_path))
        return _track(request.node, MockClient(agent, **options))

    return factory


def _track(node: Node, client: MockClient) -> MockClient:
    clients = node.stash.setdefault(_CLIENTS, [])
    if client not in clients:
        clients.append(client)
    return client


def _target(marker: pytest.Mark) -> tuple[Agent | str | Sequence[str], dict[str, Any]]:
    from .._agent.agent import Agent  # noqa: PLC0415 - see _CLIENT_MODULE

    options = dict(marker.kwargs)
    command = options.pop("command", None)
    targets = [*marker.args, *([options.pop("agent")] if "agent" in options else [])]
    if command is not None:
        if targets:
            raise pytest.UsageError("acp_agent takes agent=... or command=[...], not both")
        return command, options
    if len(targets) != 1:
        raise pytest.UsageError(_MARKER_HELP)
    target = targets[0]
    if isinstance(target, Agent):
        return target, options
    factory: Callable[[], object] = target
    agent = factory()
    if not isinstance(agent, Agent):
        raise pytest.UsageError(f"acp_agent({target!r}) did not make an acpio.Agent: {agent!r}")
    return agent, options


@pytest.fixture
async def acp_client(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[MockClient]:
    """A MockClient connected to (and initialized with) the agent of ``@pytest.mark.acp_agent``.

    The client is closed after the test; in strict mode (the default) a
    protocol violation found at any time fails the test.
    """
    marker = request.node.get_closest_marker("acp_agent")
    if marker is None:
        raise pytest.UsageError(
            "the acp_client fixture needs @pytest.mark.acp_agent(...) on the test, its class "
            "or its module (or use acp_client_factory)"
        )
    from ._client import MockClient  # noqa: PLC0415

    target, options = _target(marker)
    options.setdefault("cwd", os.fspath(tmp_path))
    async with _track(request.node, MockClient(target, **options)) as client:
        yield client
