"""Serve a ``pydantic_ai.Agent`` as an ACP agent (the ``acpio[pydantic-ai]`` extra).

How this works: :class:`ACPAgent` is an :class:`acpio.Agent` whose turn runs the
pydantic-ai agent once, with the session's pydantic-ai message history and a
capability (the bridge, ``_pydantic_ai_bridge``) that pydantic-ai calls for
every event and every tool execution of the run, in the turn's own task:

- text and thinking parts stream as ACP message and thought chunks (one message
  per part), usage after every model response becomes a ``usage_update``;
- every tool execution runs inside an acpio :class:`~acpio.ToolCallHandle`
  (title, kind, ``rawInput``, path ``locations``; ``in_progress`` while it runs;
  its result as text ``content`` and as ``rawOutput``; final status from the
  result or the exception), so cancellation and errors finish the call as acpio
  always does;
- a tool registered with ``requires_approval=True`` is deferred by pydantic-ai;
  the bridge asks the user with ``session/request_permission`` (allow or reject,
  once or always; "always" is remembered per session and per tool) and hands
  pydantic-ai the approval, or a denial the model reads as a rejection; a mode
  with ``auto_approve`` approves without asking;
- tools from :func:`editor_tools` report their own tool calls (diffs, live
  terminals) and are left alone by the bridge.

The message history is the session's durable agent state
(:attr:`acpio.Session.agent_state`, saved at the end of every turn): a session
reopened after a restart (v2 ``session/resume``, v1 ``session/load``) gives the
model its earlier turns, and acpio restores the model and mode picks.

``session/cancel`` cancels the turn's task, and so the pydantic-ai run; what the
run completed (including the partial response) stays in the history, with
unanswered tool calls closed out by pydantic-ai before the next request. The
session's MCP servers become MCP toolsets of each run (opened at the start of a
turn, closed at its end, so no server outlives the session); the MCP client is
imported only then. pydantic-ai runs on asyncio only: a turn on trio ends with an
error that says so.

This module imports pydantic-ai only when it is used: given a factory instead
of an agent, :class:`ACPAgent` builds the pydantic-ai agent in a thread while
the client initializes, so the editor gets its ``initialize`` answer first.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import logging
import threading
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final, Generic, TypeVar

import anyio
import anyio.to_thread

import acpio
from acpio import schema

from ._pydantic_ai_context import (
    SELF_REPORTING,
    Reporting,
    current_session,
    end_session_scope,
    is_self_reporting,
    session_scope,
)
from ._pydantic_ai_tools import PlanItem, editor_tools
from ._tool_calls import infer_kind as infer_kind

if TYPE_CHECKING:
    from pydantic_ai import Agent as PydanticAgent
    from pydantic_ai import messages as pai
    from pydantic_ai.models import Model

__all__ = [
    "SELF_REPORTING",
    "ACPAgent",
    "ModeChoice",
    "ModelChoice",
    "PlanItem",
    "current_session",
    "editor_tools",
    "infer_kind",
    "is_self_reporting",
]

logger: logging.Logger = logging.getLogger(__name__)

DepsT = TypeVar("DepsT")


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """One value of the model picker: ``id`` on the wire, ``name`` shown, ``model`` run.

    ``model`` is a pydantic-ai model, a model name, or a zero-argument function
    that returns one (called once, in the thread that builds the agent, so that
    pydantic-ai's import stays off the agent's start).
    """

    id: str
    name: str
    model: Model | str | Callable[[], Model | str]
    description: str | None = None


@dataclass(frozen=True, slots=True)
class ModeChoice:
    """One value of the mode picker: ``id`` on the wire, ``name`` shown, ``instructions`` added.

    The chosen mode's ``instructions`` are given to the model on top of the
    agent's own (``None``: none added). With ``auto_approve`` the mode runs tools
    that need approval without asking the user (``requires_approval=True`` tools
    and the writes and commands of :func:`editor_tools`); they still show as
    tool calls.
    """

    id: str
    name: str
    instructions: str | None = None
    description: str | None = None
    auto_approve: bool = False


MODEL_OPTION: Final = "model"
MODE_OPTION: Final = "mode"

_UNSET: Final[Any] = object()


class _SessionState:
    """What the adapter keeps in memory per open ACP session."""

    __slots__ = ("deps", "deps_made", "history")

    def __init__(self, history: list[pai.ModelMessage]) -> None:
        self.history = history
        self.deps: object = None
        self.deps_made = False


class _Built:
    """The pydantic-ai agent and the models, built once (in a thread when given as factories)."""

    def __init__(self, build: Callable[[], PydanticAgent[Any, Any]], models: Sequence[ModelChoice]):
        self._build = build
        self._models = models
        self.agent: PydanticAgent[Any, Any] | None = None
        self.models: dict[str, Model | str] = {}
        self.error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _run(self) -> None:
        try:
            # The bridge imports the rest of pydantic-ai that a turn needs.
            importlib.import_module("acpio.adapters._pydantic_ai_bridge")

            agent = self._build()
            models: dict[str, Model | str] = {}
            for choice in self._models:
                model = choice.model
                models[choice.id] = model() if callable(model) else model
            self.agent, self.models = agent, models
        except BaseException as exc:  # kept and raised in the turn that needs the agent
            self.error = exc

    def start(self) -> None:
        """Start building in a daemon thread (once)."""
        with self._lock:
            if self._thread is None and self.agent is None and self.error is None:
                self._thread = threading.Thread(
                    target=self._run, name="acpio-pydantic-ai-build", daemon=True
                )
                self._thread.start()

    def ready(self) -> PydanticAgent[Any, Any]:
        """The agent: waits for the building thread, or builds in this one when none started.

        :raises RuntimeError: saying what the build raised.
        """
        with self._lock:
            thread = self._thread
            if thread is None and self.agent is None and self.error is None:
                self._run()
        if thread is not None:
            thread.join()
        if self.error is not None:
            raise RuntimeError(f"building the pydantic-ai agent failed: {self.error}") from (
                self.error
            )
        assert self.agent is not None
        return self.agent


class ACPAgent(acpio.Agent, Generic[DepsT]):
    """Serves one ``pydantic_ai.Agent`` over ACP; each session keeps its own conversation.

    ``agent`` is the pydantic-ai agent, or a zero-argument function that builds
    it: the function runs in a thread as soon as the client initializes, so an
    agent script that imports pydantic-ai only inside it answers ``initialize``
    without waiting for that import.

    ``models`` and ``modes`` (optional) become the session's ``model`` and
    ``mode`` config options (ACP pickers): the first choice is the default, and a
    change takes effect on the session's next turn (the model runs it; the mode's
    instructions are added to the agent's, and an ``auto_approve`` mode stops
    asking before tools). ``tool_kinds`` maps tool names to ACP kinds where
    :func:`infer_kind` guesses wrong. ``context_window`` is the size reported in
    ``usage_update``; without it the model profile's size is used, and no usage is
    reported when neither is known.

    For an agent with a ``deps_type``, give ``deps=`` (one value, shared by
    every session and turn) or ``deps_factory=`` (called with the
    :class:`acpio.Session` the first time one of its turns runs, sync or async;
    its value serves every turn of that session while it is open in this
    process, and is made again for a session reopened later). Tools reach it as
    ``ctx.deps``.

    The conversation is the session's durable agent state: this adapter owns
    :attr:`acpio.Session.agent_state` (a dict with the pydantic-ai message
    history), so a subclass keeps its own state elsewhere.
    """

    # pydantic-ai connects to stdio and streamable-HTTP MCP servers (see mcp_toolsets).
    mcp_transports: ClassVar[Collection[str]] = ("stdio", "http")

    def __init__(
        self,
        agent: PydanticAgent[DepsT, Any] | Callable[[], PydanticAgent[DepsT, Any]],
        *,
        info: acpio.Implementation | None = None,
        models: Sequence[ModelChoice] = (),
        modes: Sequence[ModeChoice] = (),
        tool_kinds: Mapping[str, str] | None = None,
        context_window: int | None = None,
        deps: DepsT = _UNSET,
        deps_factory: Callable[[acpio.Session], DepsT | Awaitable[DepsT]] | None = None,
    ) -> None:
        super().__init__()
        if deps is not _UNSET and deps_factory is not None:
            raise ValueError("give deps= or deps_factory=, not both")
        build: Callable[[], PydanticAgent[DepsT, Any]]
        name: str | None = None
        if callable(agent):
            build = agent
        else:
            built_agent = agent
            build = lambda: built_agent  # noqa: E731
            name = agent.name
            _check_deps(agent, deps is not _UNSET or deps_factory is not None)
        self.info: acpio.Implementation = info or acpio.Implementation(
            name=name or "pydantic-ai-agent", version=_version()
        )
        self.models: Final = tuple(models)
        self.modes: Final = tuple(modes)
        self.tool_kinds: Final = dict(tool_kinds or {})
        self.context_window: Final = context_window
        self._reporting = Reporting(self.tool_kinds, context_window)
        self._deps: object = deps
        self._deps_factory = deps_factory
        self._sessions: dict[str, _SessionState] = {}
        self._built = _Built(build, self.models)
        for choices in (self.models, self.modes):
            if len({choice.id for choice in choices}) != len(choices):
                raise ValueError("model and mode choices need distinct ids")
        if not callable(agent):
            self._built.ready()  # nothing to build: the models are resolved at once

    @property
    def agent(self) -> PydanticAgent[DepsT, Any]:
        """The pydantic-ai agent (built now if it was given as a factory and is not yet)."""
        return self._built.ready()

    # ------------------------------------------------------------------ sessions

    async def on_initialize(self, request: schema.InitializeRequest) -> None:
        """Start building the pydantic-ai agent (when given as a factory) while the client waits."""
        self._built.start()

    async def _ready(self) -> PydanticAgent[Any, Any]:
        built = self._built
        if built.agent is None and built.error is None:
            await anyio.to_thread.run_sync(built.ready)
        agent = built.ready()
        _check_deps(agent, self._deps is not _UNSET or self._deps_factory is not None)
        return agent

    def _state(self, session: acpio.Session) -> _SessionState:
        state = self._sessions.get(session.id)
        if state is None:
            from ._pydantic_ai_bridge import load_history  # noqa: PLC0415 - imports pydantic-ai

            state = _SessionState(load_history(session.agent_state))
            self._sessions[session.id] = state
        return state

    def history(self, session_id: str) -> list[pai.ModelMessage]:
        """The pydantic-ai message history of an open session (what the model sees next turn)."""
        state = self._sessions.get(session_id)
        return list(state.history) if state is not None else []

    def _pickers(self) -> list[schema.SessionConfigOption]:
        pickers: list[schema.SessionConfigOption] = []
        if self.models:
            pickers.append(
                acpio.select_option(
                    MODEL_OPTION,
                    "Model",
                    [(c.id, c.name) for c in self.models],
                    category="model",
                )
            )
        if self.modes:
            pickers.append(
                acpio.select_option(
                    MODE_OPTION, "Mode", [(c.id, c.name) for c in self.modes], category="mode"
                )
            )
        return pickers

    async def on_new_session(self, session: acpio.Session) -> None:
        """Give the session the model and mode pickers (sent in the ``session/new`` answer)."""
        if self.models or self.modes:
            await session.config.replace([*session.config.options, *self._pickers()])

    async def on_resume_session(self, session: acpio.Session) -> None:
        """A reopened session gets the pickers (acpio then restores the saved picks).

        Its conversation comes back from the durable agent state on its next turn.
        """
        if (self.models or self.modes) and not (
            {MODEL_OPTION, MODE_OPTION} & set(session.config.ids)
        ):
            await session.config.replace([*session.config.options, *self._pickers()])

    def _chosen(self, session: acpio.Session) -> tuple[Model | str | None, ModeChoice | None]:
        config = session.config
        model: Model | str | None = None
        mode: ModeChoice | None = None
        if MODEL_OPTION in config.ids:
            model = self._built.models[str(config[MODEL_OPTION])]
        if MODE_OPTION in config.ids:
            mode = next(c for c in self.modes if c.id == config[MODE_OPTION])
        return model, mode

    def model_provider(self, session: acpio.Session) -> str | None:
        """The provider of the next turn's model (``gen_ai.provider.name`` of traces).

        As pydantic-ai names it for its own spans (``Model.system``: ``openai``,
        ``anthropic``, ...; the prefix of a ``"provider:model"`` name); ``None``
        while the agent is still being built.
        """
        built = self._built
        if built.agent is None:
            return None
        model: object = None
        if MODEL_OPTION in session.config.ids:
            model = built.models.get(str(session.config[MODEL_OPTION]))
        if model is None:
            model = built.agent.model
        if isinstance(model, str):
            return model.partition(":")[0] if ":" in model else None
        system: object = getattr(model, "system", None)
        return system if isinstance(system, str) else None

    async def _deps_of(self, session: acpio.Session, state: _SessionState) -> object:
        if self._deps_factory is None:
            return None if self._deps is _UNSET else self._deps
        if not state.deps_made:
            made: object = self._deps_factory(session)
            if inspect.isawaitable(made):
                made = await made
            state.deps, state.deps_made = made, True
        return state.deps

    async def on_close_session(self, session: acpio.Session) -> None:
        """Forget the session's in-memory state (its conversation is durable)."""
        self._sessions.pop(session.id, None)

    # ---------------------------------------------------------------------- turns

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        """Run the pydantic-ai agent on the prompt, reporting everything through ``session``."""
        if not _on_asyncio():
            raise RuntimeError("pydantic-ai runs only on asyncio; serve this agent with asyncio")
        agent = await self._ready()
        from ._pydantic_ai_bridge import run_turn  # noqa: PLC0415 - imported by _ready

        state = self._state(session)
        model, mode = self._chosen(session)
        deps = await self._deps_of(session, state)
        token = session_scope(session, auto_approve=mode is not None and mode.auto_approve)
        try:
            await run_turn(
                self._reporting,
                agent,
                session,
                state,
                prompt,
                model=model,
                instructions=mode.instructions if mode is not None else None,
                deps=deps,
            )
        finally:
            end_session_scope(token)
        return "end_turn"


def _on_asyncio() -> bool:
    # Only an asyncio task has a current asyncio task (not trio, nor trio-asyncio's trio
    # side); anyio no longer ships sniffio, so ask asyncio itself.
    try:
        return asyncio.current_task() is not None
    except RuntimeError:  # no running asyncio loop
        return False


def _check_deps(agent: PydanticAgent[Any, Any], given: bool) -> None:
    deps_type = getattr(agent, "deps_type", object)
    if not given and deps_type not in (object, type(None)):
        raise ValueError(
            f"this pydantic-ai agent has deps_type={getattr(deps_type, '__name__', deps_type)}: "
            "give ACPAgent deps= (one value) or deps_factory= (one value per session)"
        )


def _version() -> str:
    # importlib.metadata costs tens of milliseconds to import: only when no info is given.
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415

    try:
        return version("acpio")
    except PackageNotFoundError:  # run from a source tree without metadata
        return "0"
