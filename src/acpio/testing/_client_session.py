"""The test's view of one session and its prompt turns: ClientSession, Turn, TurnResult.

How this works: the mock client folds every ``session/update`` of a session
into its :class:`ClientSession` in arrival order (``updates``, and the
editor's ``view``). Turns are found from the wire alone, with no bookkeeping
in the agent's favour. The client's handler tells the session, in wire order,
every ``session/prompt`` it sends (also raw ones), how each was answered, and
every ``session/cancel``, ``session/close`` and ``session/delete``. Foreground
work is a run: it starts with ``running`` (or ``requires_action``) while the
session is idle and ends with the next ``idle``. Turns run in the order their
prompts were sent, so each run belongs to the oldest prompt still waiting for
one: a prompt sent while the session is busy is echoed at once but ends with
the idle of its own run, not the first idle after its echo. A cancel ends the
running turn and discards the prompts queued behind it (sent before the same
cancel): when a run that a cancel applied to ends ``cancelled``, those end
with it. Which prompt a run belongs to is the agent's own turn machine's
answer (:class:`~acpio._session.turn_machine.TurnMachine`, fed what the wire
shows). Requests and waits go through the client, so they share its
deadlines and failures.
"""

from __future__ import annotations

import bisect
import contextlib
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Protocol, TypeAlias, TypeVar

import msgspec

from .. import schema
from .._json import as_list, decode_json, get_field
from .._session.turn_machine import (
    IDLE,
    REQUIRES_ACTION,
    RUNNING,
    SessionState,
    Transition,
    TurnMachine,
    TurnRecord,
    transition,
)
from ._client_link import ClientLink
from ._policy import PermissionRequest
from ._v1_shapes import config_options as v1_config_options
from ._view import SessionView, TerminalView, ToolCallView

__all__ = (
    "ClientSession",
    "ClientSessions",
    "Probe",
    "PromptInput",
    "SessionClient",
    "SessionTurns",
    "Turn",
    "TurnResult",
    "V1Turns",
    "apply_v1_setup",
    "decoder",
)

T = TypeVar("T")

PromptInput: TypeAlias = (
    str
    | schema.ContentBlock
    | Mapping[str, object]
    | Sequence[str | schema.ContentBlock | Mapping[str, object]]
)
"""A prompt: text, one content block, or a list of them (raw JSON objects are sent as is)."""


# --------------------------------------------------------------------------- turns


@dataclass(frozen=True, slots=True, eq=False)
class TurnResult:
    """How one prompt turn ended: the ``idle`` state update that closed it.

    ``updates`` are the session updates of the turn: its own user message,
    then everything from the prompt (or the end of the turn before it) up to
    and including that idle update, without the user messages of other
    prompts. A queued prompt discarded by a cancel has only its user message
    and the idle that ended the cancelled turn. ``stop_reason`` is ``None``
    when the idle update carried none; ``error`` is the error object of stop
    reason ``error``.
    """

    message_id: str
    stop_reason: str | None
    error: schema.Error | None
    updates: list[schema.SessionUpdate]

    @property
    def view(self) -> SessionView:
        """What an editor shows for this turn alone (its updates folded into a fresh view)."""
        view = SessionView()
        for update in self.updates:
            view.apply(update)
        return view

    @property
    def text(self) -> str:
        """The agent's answer text in this turn (thoughts excluded)."""
        return self.view.agent_text


@dataclass(eq=False)
class SentPrompt(TurnRecord):
    """One ``session/prompt`` as the wire showed it: the session's turn machine tracks it
    (its :class:`~acpio._session.turn_machine.TurnRecord` fields), what is added here is
    where its updates are."""

    sent_at: int = 0
    """How many updates the session had when the prompt was sent."""
    start: int | None = None
    """Index of the update that started its own run (``None``: never ran)."""
    end: int | None = None
    """Index of the idle that ended it (its run's, or the cancelled run's)."""
    result: TurnResult | None = None


class Turn:
    """A prompt the agent accepted (``session/prompt`` answered with its ``messageId``).

    :meth:`wait` returns the :class:`TurnResult` once the turn's idle state
    update arrived: the ``idle`` ending the run that follows this turn's own
    ``running`` (turns run in the order their prompts were sent), or, for a
    queued prompt discarded by ``session/cancel``, the idle of the cancelled
    turn.
    """

    def __init__(
        self, session: ClientSession, turns: SessionTurns, message_id: str, prompt: SentPrompt
    ) -> None:
        self.session: Final = session
        self.message_id: Final = message_id
        self._turns = turns
        self._prompt = prompt

    def __repr__(self) -> str:
        return f"<Turn {self.message_id} of session {self.session.id}>"

    @property
    def result(self) -> TurnResult | None:
        """The result once the turn ended, else ``None``."""
        return self._turns.turn_result(self.message_id, self._prompt)

    @property
    def done(self) -> bool:
        """True once the turn's idle state update arrived."""
        return self.result is not None

    async def wait(self, *, timeout: float | None = None) -> TurnResult:
        """Wait until the turn reached idle; returns how it ended.

        :raises AgentTimeoutError: when it did not end within ``timeout``
            seconds (default: the client's timeout).
        """
        return await self._turns.link.wait_until(
            lambda: self._turns.turn_result(self.message_id, self._prompt),
            timeout,
            f"the idle state_update ending turn {self.message_id}",
        )


# --------------------------------------------------------------------------- sessions

_STATES: Final[Mapping[type, SessionState]] = {
    schema.RunningStateUpdate: RUNNING,
    schema.RequiresActionStateUpdate: REQUIRES_ACTION,
    schema.IdleStateUpdate: IDLE,
}


def _blocks(content: PromptInput) -> list[object]:
    if isinstance(content, str):
        return [schema.TextContent(text=content)]
    if isinstance(content, Mapping) or not isinstance(content, Sequence):
        return [content]
    return [schema.TextContent(text=item) if isinstance(item, str) else item for item in content]


class SessionClient(Protocol):
    """What a :class:`ClientSession` offers of the client that owns it (a :class:`MockClient`)."""

    @property
    def protocol_version(self) -> int:
        """The ACP version the client speaks (``1``: the v1 wire)."""
        ...

    async def wait_for(
        self,
        predicate: Callable[[], T | None],
        *,
        timeout: float | None = None,
        what: str | None = None,
    ) -> T:
        """Wait until ``predicate()`` is truthy and return its value."""
        ...

    async def wait_for_permission_request(
        self,
        *,
        session_id: str | None = None,
        pending: bool | None = None,
        timeout: float | None = None,
    ) -> PermissionRequest:
        """Wait for a permission request (of ``session_id``, if given) and return its record."""
        ...


class V1Turns(Protocol):
    """What a session needs of the client's v1 side (see ``acpio.testing._v1_client``)."""

    def message_id(self, request_id: int) -> str:
        """The user messageId the client gave the prompt sent with ``request_id``."""
        ...

    def cancel_sent(self, session: ClientSession) -> None:
        """``session/cancel`` went out for ``session``."""
        ...

    def replay_starts(self, session: ClientSession) -> None:
        """A ``session/load`` of ``session`` is about to replay its history."""
        ...


class Probe:
    """Notes how many updates a session had when the response to one request arrived.

    Updates that precede a response on the wire were applied before the
    response was read, so this position splits "before" from "after" exactly
    (replayed history, the updates preceding a prompt's acceptance). Pass it as
    the request's ``on_sent``; the client's handler sets :attr:`position`.
    """

    def __init__(self, probes: dict[int, Probe], session: ClientSession) -> None:
        self.probes = probes
        self.session = session
        self.position: int | None = None
        """The number of the session's updates when the response arrived."""
        self.request_id: int | None = None
        """The id of the request, once it was sent."""

    def __call__(self, request_id: int) -> None:
        self.request_id = request_id
        self.probes[request_id] = self


class ClientSessions:
    """The mock client's sessions by id, each with its turn tracking, and what they share.

    ``client`` is the mock client, ``link`` its requests and waits. :attr:`v1`
    is the client's v1 side (``None`` on v2); :attr:`probes` the requests
    whose response position is watched, by request id, until it arrives.
    """

    def __init__(self, client: SessionClient, link: ClientLink) -> None:
        self.client: Final = client
        self.link: Final = link
        self.by_id: Final[dict[str, ClientSession]] = {}
        """Every session the client knows, by id (the client's ``sessions``)."""
        self.probes: Final[dict[int, Probe]] = {}
        """Probes by the id of the request they watch, until its response arrives."""
        self.v1: V1Turns | None = None
        self._turns: dict[str, SessionTurns] = {}

    def get(self, session_id: str, cwd: str | None = None) -> ClientSession:
        """The session ``session_id`` (made on first use); ``cwd``, when given, is its cwd."""
        return self.turns(session_id, cwd).session

    def turns(self, session_id: str, cwd: str | None = None) -> SessionTurns:
        """The turn tracking of session ``session_id`` (the session made on first use)."""
        turns = self._turns.get(session_id)
        if turns is None:
            turns = SessionTurns(ClientSession(self, session_id, cwd), self.link)
            self._turns[session_id] = turns
            self.by_id[session_id] = turns.session
        elif cwd is not None:
            turns.session.cwd = cwd
        return turns

    def known_turns(self, session_id: str) -> SessionTurns | None:
        """The turn tracking of session ``session_id`` if the client knows it."""
        return self._turns.get(session_id)

    def probe(self, session: ClientSession) -> Probe:
        """A probe for one request of ``session`` (see :class:`Probe`)."""
        return Probe(self.probes, session)


class SessionTurns:
    """One session's updates as they arrive, and the turns found from them (module docstring).

    The client's handler reports, in wire order, every update
    (:meth:`receive`), every prompt sent and how it was answered, and every
    cancel (or close, or delete) sent.
    """

    def __init__(self, session: ClientSession, link: ClientLink) -> None:
        self.session: Final = session
        self.link: Final = link
        self.prompts: dict[object, SentPrompt] = {}
        """Prompts by request id, until a :class:`Turn` takes them."""
        self.machine: Final = TurnMachine[SentPrompt]()
        """The session's turns, the agent's own turn machine fed with what the wire shows."""
        self._user_messages: dict[str, int] = {}
        self._run_ends: list[int] = []

    @property
    def in_run(self) -> bool:
        """Whether a run is active (the session reported work and no idle since)."""
        return self.machine.state is not IDLE

    @property
    def waiting(self) -> list[SentPrompt]:
        """Prompts sent, not refused, without a run yet; in wire order."""
        return self.machine.unstarted

    @property
    def current(self) -> SentPrompt | None:
        """The prompt whose run is active."""
        return self.machine.running

    def receive(self, update: schema.SessionUpdate) -> None:
        """Fold one update into the session (``updates``, ``view``) and its turns."""
        session = self.session
        index = len(session.updates)
        session.updates.append(update)
        session.view.apply(update)
        if isinstance(update, schema.UserMessage | schema.UserMessageChunk):
            self._user_messages.setdefault(update.message_id, index)
            return
        state = _STATES.get(type(update))
        if state is None:
            return
        change = transition(self.machine.state, state)
        if change is Transition.START:
            # Work the agent starts on its own has a run but no prompt.
            started = self.machine.observe_start(SentPrompt(message_id="", sent_at=index), state)
            started.start = index
        elif change is Transition.END:
            assert isinstance(update, schema.IdleStateUpdate)
            stop = update.stop_reason if isinstance(update.stop_reason, str) else ""
            self._run_ends.append(index)
            ended, discarded = self.machine.observe_idle(stop)
            for prompt in (ended, *discarded):
                if prompt is not None:
                    prompt.end = index
        elif change is not Transition.REPEAT:
            self.machine.state_reported(state)
        # A repeat (or a resume snapshot) while work runs starts nothing.

    def prompt_sent(self, request_id: object) -> None:
        """The client wrote a ``session/prompt`` for this session (called in wire order)."""
        prompt = SentPrompt(message_id="", sent_at=len(self.session.updates))
        self.prompts[request_id] = prompt
        self.machine.prompt_sent(prompt)

    def prompt_answered(self, request_id: object, accepted: bool) -> None:
        """The response to a ``session/prompt`` arrived; a refused prompt never runs."""
        prompt = self.prompts.get(request_id)
        if prompt is None:
            return
        if accepted:
            self.machine.responded(prompt)
        else:
            del self.prompts[request_id]
            self.machine.prompt_refused(prompt)

    def cancel_sent(self) -> None:
        """The client wrote ``session/cancel`` (or a close): it applies to every prompt sent
        so far whose turn has not ended."""
        self.machine.cancel_sent()

    def turn_result(self, message_id: str, prompt: SentPrompt) -> TurnResult | None:
        """The result of the turn of ``prompt`` (accepted as ``message_id``) once it ended."""
        if prompt.result is not None or prompt.end is None:
            return prompt.result
        updates_seen = self.session.updates
        end = prompt.end
        own = self._user_messages.get(message_id)
        if prompt.start is None:
            # Discarded while queued: nothing of the cancelled turn is this one's.
            begin = end
        else:
            # From the prompt, or from the end of the run before this one.
            position = bisect.bisect_left(self._run_ends, prompt.start)
            previous = self._run_ends[position - 1] if position else -1
            begin = max(prompt.sent_at, previous + 1)
        updates = [updates_seen[own]] if own is not None and own < begin else []
        updates += [
            update
            for update in updates_seen[begin : end + 1]
            if not isinstance(update, schema.UserMessage | schema.UserMessageChunk)
            or update.message_id == message_id
        ]
        idle = updates_seen[end]
        assert isinstance(idle, schema.IdleStateUpdate)
        stop_reason = idle.stop_reason if isinstance(idle.stop_reason, str) else None
        error = idle.error if isinstance(idle.error, schema.Error) else None
        prompt.result = TurnResult(message_id, stop_reason, error, updates)
        return prompt.result


def apply_v1_setup(session: ClientSession, result: object) -> None:
    """Take a v1 session setup answer's ``modes`` and ``configOptions`` into ``session``."""
    modes = get_field(result, "modes")
    mode = get_field(modes, "currentModeId")
    if isinstance(mode, str):
        session.current_mode_id = mode
    available = as_list(get_field(modes, "availableModes"))
    if available is not None:
        session.available_modes = {
            str(get_field(m, "id")): str(get_field(m, "name")) for m in available
        }
    options = v1_config_options(result)
    if options is not None:
        session.view.config_options = options


class ClientSession:
    """One session as the mock client sees it: its updates, its view and its requests.

    ``updates`` holds every decoded ``session/update`` of the session in
    arrival order (replays included); ``view`` is what an editor displays,
    rebuilt from them. Updates the schema rejects are not in ``updates``: the
    conformance checker reports them and the transcript keeps them.
    """

    def __init__(self, sessions: ClientSessions, session_id: str, cwd: str | None) -> None:
        self.client: Final = sessions.client
        """The client that owns the session."""
        self.id: Final = session_id
        self.cwd = cwd
        self.view: SessionView = SessionView(session_id)
        self.updates: list[schema.SessionUpdate] = []
        self.replayed: list[schema.SessionUpdate] = []
        self.closed: bool = False
        self.current_mode_id: str | None = None
        """v1 only: the session mode the agent reported (``modes`` or ``current_mode_update``)."""
        self.available_modes: dict[str, str] = {}
        """v1 only: the modes of the last session answer's ``modes``, id to name, in order."""
        self._sessions = sessions
        self._link = sessions.link

    def __repr__(self) -> str:
        return f"<ClientSession {self.id} cwd={self.cwd!r} state={self.view.state!r}>"

    def _tracking(self) -> SessionTurns:
        return self._sessions.turns(self.id)

    # ---------------------------------------------------------------- prompts

    async def start_prompt(
        self,
        content: PromptInput,
        *,
        timeout: float | None = None,
        meta: Mapping[str, object] | None = None,
    ) -> Turn:
        """Send ``session/prompt`` and return as soon as the agent accepted it.

        ``meta`` is sent as the request's ``_meta`` (a W3C ``traceparent``, say).

        Use it to act while the turn runs (cancel it, answer something);
        :meth:`Turn.wait` then gives the result. On v1, where the agent answers the
        prompt at the end of its turn, it returns once the prompt is on the wire, and the
        turn's ``message_id`` is the one the client gave the prompt's user message.
        """
        params: dict[str, object] = {"sessionId": self.id, "prompt": _blocks(content)}
        if meta is not None:
            params["_meta"] = dict(meta)
        if self._sessions.v1 is not None:
            return await self._start_v1_prompt(params, timeout)
        probe = self._sessions.probe(self)
        response = await self._link.request(
            "session/prompt",
            params,
            decoder(schema.PromptResponse),
            timeout=timeout,
            on_sent=probe,
        )
        # The handler registered the prompt when it went over the wire.
        turns = self._tracking()
        prompt = turns.prompts.pop(probe.request_id, None)
        if prompt is None:
            raise RuntimeError(f"session/prompt for session {self.id} was not seen on the wire")
        return Turn(self, turns, response.message_id, prompt)

    async def _start_v1_prompt(self, params: object, timeout: float | None) -> Turn:
        # A v1 prompt is answered at the end of its turn: the request runs in the client's
        # task group and the turn is handed out once the prompt is on the wire.
        v1 = self._sessions.v1
        group = self._link.task_group
        assert v1 is not None and group is not None
        probe = self._sessions.probe(self)

        async def send() -> None:
            # An error answer ended the turn (the handler saw it); anything else (the agent
            # gone, a recorded failure) is raised by the test's waits.
            with contextlib.suppress(Exception):
                await self._link.request(
                    "session/prompt", params, _raw_result, timeout=math.inf, on_sent=probe
                )

        group.start_soon(send)
        turns = self._tracking()
        prompt = await self._link.wait_until(
            lambda: turns.prompts.get(probe.request_id) if probe.request_id is not None else None,
            timeout,
            "session/prompt to be sent",
        )
        assert probe.request_id is not None
        del turns.prompts[probe.request_id]
        return Turn(self, turns, v1.message_id(probe.request_id), prompt)

    async def prompt(
        self,
        content: PromptInput,
        *,
        timeout: float | None = None,
        meta: Mapping[str, object] | None = None,
    ) -> TurnResult:
        """Send a prompt and wait until its turn reached idle; returns how it ended.

        ``timeout`` bounds the whole turn (default: the client's timeout); ``meta`` is
        the request's ``_meta``.
        """
        deadline = self._link.deadline(timeout)
        turn = await self.start_prompt(content, timeout=timeout, meta=meta)
        return await turn.wait(timeout=max(deadline - time.monotonic(), 0.0))

    async def cancel(self) -> None:
        """Send ``session/cancel`` (a notification; the turn then ends ``cancelled``).

        On v1 the client then answers the session's pending permission requests
        ``cancelled``, as v1 requires of a client.
        """
        await self._link.notify(
            "session/cancel", schema.CancelSessionNotification(session_id=self.id)
        )
        if self._sessions.v1 is not None:
            self._sessions.v1.cancel_sent(self)

    async def close(self, *, timeout: float | None = None) -> None:
        """Send ``session/close``: the agent cancels the work, then frees the session."""
        await self._link.request(
            "session/close",
            schema.CloseSessionRequest(session_id=self.id),
            decoder(schema.CloseSessionResponse),
            timeout=timeout,
        )
        self.closed = True

    async def delete(self, *, timeout: float | None = None) -> None:
        """Send ``session/delete`` (only for agents that advertise it)."""
        await self._link.request(
            "session/delete",
            schema.DeleteSessionRequest(session_id=self.id),
            decoder(schema.DeleteSessionResponse),
            timeout=timeout,
        )
        self.closed = True

    async def resume(
        self,
        *,
        replay: bool = True,
        additional_directories: Sequence[str] | None = None,
        timeout: float | None = None,
    ) -> list[schema.SessionUpdate]:
        """Send ``session/resume``; with ``replay`` ask for the history from the start.

        Returns the updates the agent sent before its response: the replayed
        history (and any state snapshot the agent sends on resume), also kept
        in ``replayed``. With ``replay`` the view is rebuilt from them alone,
        as an editor that reopens the session would.
        """
        if self.cwd is None:
            raise ValueError("the session's cwd is unknown; use MockClient.resume_session")
        if self._sessions.v1 is not None:
            return await self._v1_resume(replay, additional_directories, timeout)
        params = schema.ResumeSessionRequest(
            session_id=self.id,
            cwd=self.cwd,
            additional_directories=(
                list(additional_directories)
                if additional_directories is not None
                else msgspec.UNSET
            ),
            replay_from=schema.ReplayFromStart() if replay else msgspec.UNSET,
        )
        start = len(self.updates)
        previous_view = self.view
        if replay:
            self.view = SessionView(self.id)
        probe = self._sessions.probe(self)
        try:
            response = await self._link.request(
                "session/resume",
                params,
                decoder(schema.ResumeSessionResponse),
                timeout=timeout,
                on_sent=probe,
            )
        except BaseException:
            self.view = previous_view
            raise
        end = probe.position if probe.position is not None else len(self.updates)
        self.view.apply_setup(
            response.config_options, response.available_commands, later=self.updates[end:]
        )
        self.replayed = self.updates[start:end]
        self.closed = False
        return list(self.replayed)

    async def set_config_option(
        self, config_id: str, value: str | bool, *, timeout: float | None = None
    ) -> list[schema.SessionConfigOption]:
        """Send ``session/set_config_option`` (``type: "boolean"`` for a bool, else ``"id"``,
        on v1 no ``type``, as v1 clients send a value id);
        returns the full new state, also applied to :attr:`view`.

        :raises acpio.RequestError: when the agent refused (``-32602`` for an
            unknown option or value).
        """
        params: schema.SetSessionConfigOptionRequest
        if isinstance(value, bool):
            params = schema.SetSessionConfigOptionBooleanRequest(
                session_id=self.id, config_id=config_id, value=value
            )
        else:
            params = schema.SetSessionConfigOptionIdRequest(
                session_id=self.id, config_id=config_id, value=value
            )
        if self._sessions.v1 is not None:
            # As v1 clients send it: a value id has no `type` (v1 has no "id").
            v1_params: dict[str, object] = {
                "sessionId": self.id,
                "configId": config_id,
                "value": value,
            }
            if isinstance(value, bool):
                v1_params["type"] = "boolean"
            raw = await self._link.request(
                "session/set_config_option", v1_params, _raw_result, timeout=timeout
            )
            options = v1_config_options(raw) or []
            self.view.config_options = list(options)
            return list(options)
        response = await self._link.request(
            "session/set_config_option",
            params,
            decoder(schema.SetSessionConfigOptionResponse),
            timeout=timeout,
        )
        self.view.config_options = list(response.config_options)
        return list(response.config_options)

    async def set_mode(self, mode_id: str, *, timeout: float | None = None) -> None:
        """v1 only: send ``session/set_mode`` (the editor's mode selector); on success
        :attr:`current_mode_id` is ``mode_id``.

        :raises acpio.RequestError: when the agent refused (``-32602`` for a mode it
            does not offer); :raises RuntimeError: on a v2 connection, which has no
            modes (set the config option of category ``mode`` instead).
        """
        if self._sessions.v1 is None:
            raise RuntimeError(
                "session/set_mode is an ACP v1 method; on v2 use set_config_option with "
                "the config option of category mode"
            )
        await self._link.request(
            "session/set_mode",
            {"sessionId": self.id, "modeId": mode_id},
            _raw_result,
            timeout=timeout,
        )
        self.current_mode_id = mode_id

    async def _v1_resume(
        self,
        replay: bool,
        additional_directories: Sequence[str] | None,
        timeout: float | None,
    ) -> list[schema.SessionUpdate]:
        params: dict[str, object] = {"sessionId": self.id, "cwd": self.cwd}
        if additional_directories is not None:
            params["additionalDirectories"] = list(additional_directories)
        if replay:
            params["mcpServers"] = []
        start = len(self.updates)
        previous_view = self.view
        if replay:
            self.view = SessionView(self.id)
            assert self._sessions.v1 is not None
            self._sessions.v1.replay_starts(self)
        probe = self._sessions.probe(self)
        try:
            result = await self._link.request(
                "session/load" if replay else "session/resume",
                params,
                _raw_result,
                timeout=timeout,
                on_sent=probe,
            )
        except BaseException:
            self.view = previous_view
            raise
        apply_v1_setup(self, result)
        end = probe.position if probe.position is not None else len(self.updates)
        self.replayed = self.updates[start:end]
        self.closed = False
        return list(self.replayed)

    async def cancel_tool_call(self, tool_call_id: str, *, timeout: float | None = None) -> None:
        """Send ``tool_call/cancel`` for a tool call that advertises cancellation."""
        await self._link.request(
            "tool_call/cancel",
            schema.CancelToolCallRequest(session_id=self.id, tool_call_id=tool_call_id),
            decoder(schema.CancelToolCallResponse),
            timeout=timeout,
        )

    async def cancel_terminal(self, terminal_id: str, *, timeout: float | None = None) -> None:
        """Send ``terminal/cancel`` for a terminal that advertises cancellation."""
        await self._link.request(
            "terminal/cancel",
            schema.CancelTerminalRequest(session_id=self.id, terminal_id=terminal_id),
            decoder(schema.CancelTerminalResponse),
            timeout=timeout,
        )

    # ---------------------------------------------------------------- waiting

    async def wait_for(
        self,
        predicate: Callable[[], T | None],
        *,
        timeout: float | None = None,
        what: str | None = None,
    ) -> T:
        """Wait until ``predicate()`` is truthy (re-checked after every change); return it.

        A predicate returning ``X | None`` gives an ``X``: the wait never returns ``None``.
        """
        return await self.client.wait_for(predicate, timeout=timeout, what=what)

    async def wait_for_tool_call(
        self,
        tool_call_id: str | None = None,
        *,
        status: str | Sequence[str] | None = None,
        title: str | None = None,
        timeout: float | None = None,
    ) -> ToolCallView:
        """Wait for a tool call (this id, or the first that matches) with that status/title."""
        statuses = (status,) if isinstance(status, str) else status

        def find() -> ToolCallView | None:
            for call in self.view.tool_calls.values():
                if (
                    (tool_call_id is None or call.id == tool_call_id)
                    and (statuses is None or call.status in statuses)
                    and (title is None or call.title == title)
                ):
                    return call
            return None

        wanted = ", ".join(
            f"{name}={value!r}"
            for name, value in (("id", tool_call_id), ("status", status), ("title", title))
            if value is not None
        )
        return await self._link.wait_until(find, timeout, f"a tool call ({wanted or 'any'})")

    async def wait_for_terminal_output(
        self,
        terminal_id: str | None = None,
        *,
        contains: bytes | str = b"",
        exited: bool | None = None,
        timeout: float | None = None,
    ) -> TerminalView:
        """Wait until a terminal's output contains ``contains`` (and it exited, if asked)."""
        needle = contains.encode() if isinstance(contains, str) else contains

        def find() -> TerminalView | None:
            for terminal in self.view.terminals.values():
                if (
                    (terminal_id is None or terminal.id == terminal_id)
                    and needle in terminal.output
                    and (exited is None or terminal.exited == exited)
                ):
                    return terminal
            return None

        return await self._link.wait_until(
            find,
            timeout,
            f"terminal {terminal_id or '(any)'} output containing {needle!r}"
            + ("" if exited is None else f" with exited={exited}"),
        )

    async def wait_for_state(self, state: str, *, timeout: float | None = None) -> None:
        """Wait until the session's state is ``state`` (``running``, ``requires_action``, ...)."""
        await self._link.wait_until(
            lambda: self.view.state == state or None, timeout, f"session state {state!r}"
        )

    async def wait_for_permission_request(
        self,
        *,
        pending: bool | None = None,
        timeout: float | None = None,
    ) -> PermissionRequest:
        """Like :meth:`MockClient.wait_for_permission_request`, for this session only."""
        return await self.client.wait_for_permission_request(
            session_id=self.id, pending=pending, timeout=timeout
        )


_raw_result = decode_json


def decoder(type_: type[T]) -> Callable[[msgspec.Raw], T]:
    """Decode a raw result as ``type_`` (a schema type)."""

    def decode(raw: msgspec.Raw) -> T:
        return schema.decode(raw, type_)

    return decode
