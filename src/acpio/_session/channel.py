"""The session channel: the one object through which the layers above the core talk to it.

How this works: a session's core is its update path
(:class:`~acpio._session.updates.UpdatePath`) and its turn runner
(:class:`~acpio._session.turn.Turns`). Handles (``_handles/*``), features
(``_features/*``) and the session facade (``_agent/session.py``) never reach
into either: they get a :class:`SessionChannel` and use its verbs.

* **send an update**: :attr:`SessionChannel.send` (and :attr:`~SessionChannel.send_ending`,
  a tool call's last item and final patch);
* **stream text**: a tool call's text (:meth:`~SessionChannel.tool_text_prefix`,
  :attr:`~SessionChannel.try_send_text_chunk`, :attr:`~SessionChannel.send_text_chunk`),
  a reply's or thought's (:meth:`~SessionChannel.message_text_prefix`,
  :attr:`~SessionChannel.try_send_message_text`, :attr:`~SessionChannel.send_message_text`);
* **stream terminal bytes**: :meth:`~SessionChannel.terminal_prefix`,
  :attr:`~SessionChannel.send_terminal_bytes`, :attr:`~SessionChannel.mark_terminal_pending`;
* **ask the user**: :meth:`~SessionChannel.ask` of a :class:`Question` made by
  :meth:`~SessionChannel.permission_question` or :meth:`~SessionChannel.elicitation_question`;
  the whole sequence (see :meth:`~SessionChannel.ask`) is written here only;
* **talk to the client otherwise**: :meth:`~SessionChannel.client_request`,
  :meth:`~SessionChannel.notify` (after pending terminal output);
* **replay** and **close**: :meth:`~SessionChannel.replay`, :meth:`~SessionChannel.close`;
* **tasks**: :meth:`~SessionChannel.start_soon` (lives as long as the session),
  :meth:`~SessionChannel.spawn` (lives as long as the connection),
  :meth:`~SessionChannel.add_close_callback`.

The channel is the fast path, not a layer on top of it: the verbs of every
update and chunk (``send``, the ``try_send_*`` ones, the terminal ones) are
the update path's own bound methods, stored on the channel once, so a chunk
costs no call and no ``await`` more than it would without it; the rarer verbs
(a tool call's ending, the waiting fallbacks of the ``try_`` ones) are
properties, so that an idle session does not hold them. On a hot
path take the verb first and call it then (``send = channel.send`` and
``await send(update)``): CPython specializes that attribute read, but not
``channel.send(update)``, which looks for a method of the class first.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from typing import Final, Generic, NamedTuple, Protocol, TypeVar, TypeVarTuple, cast

import anyio
import anyio.abc
import msgspec

from .. import schema
from .._errors import ConnectionClosed, LocalProtocolError
from .._limits import SessionLimits
from .._protocol.peer import Peer
from .turn import REQUIRES_ACTION, RUNNING, Turns
from .updates import Flushable, UpdatePath
from .work import current_work

__all__ = [
    "ELICITATION_METHOD",
    "CloseStep",
    "PERMISSION_METHOD",
    "Flushable",
    "OwningSession",
    "Question",
    "SessionChannel",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")
HostT = TypeVar("HostT")
_PosArgsT = TypeVarTuple("_PosArgsT")

#: The request that asks the user for permission.
PERMISSION_METHOD: Final = "session/request_permission"
#: The request that asks the user a question (a form or a URL).
ELICITATION_METHOD: Final = "elicitation/create"


class OwningSession(Protocol):
    """The session a tool call or terminal belongs to, as the handle sees it.

    :class:`acpio.Session` is the one implementation; handles are typed by
    this protocol so that the handle layer never imports the session facade
    (which imports the handles to create them). Every update a handle sends
    goes through :meth:`send`, so it passes the same value checks, ordering
    and admission as the agent's own updates.
    """

    @property
    def id(self) -> str:
        """The ``sessionId``."""
        ...

    @property
    def cwd(self) -> str:
        """The session's absolute working directory."""
        ...

    @property
    def additional_directories(self) -> list[str]:
        """The further absolute directories the client gave the session."""
        ...

    @property
    def remembered_permissions(self) -> dict[str, str]:
        """``allow_always``/``reject_always`` answers kept for the session, by subject."""
        ...

    async def send(self, update: schema.SessionUpdate) -> None:
        """Send one update through the session's update path (see :meth:`acpio.Session.send`)."""
        ...


class Question(NamedTuple, Generic[T]):
    """A request that asks the user and how to read its answer (made by
    :meth:`SessionChannel.permission_question` or :meth:`SessionChannel.elicitation_question`,
    sent by :meth:`SessionChannel.ask`).

    ``tail``: the request encoded once, when it depends on nothing but its own
    arguments; an equal request may then be asked again with this same question
    (a fresh id each time, :attr:`reusable`). Otherwise it is None and
    :meth:`SessionChannel.ask` encodes ``params`` when it asks, after the
    output before it went out (what the client is shown may depend on it).
    """

    method: str
    params: object
    tail: bytes | None
    decode: Callable[[msgspec.Raw], T]

    @property
    def reusable(self) -> bool:
        """Whether an equal request may be asked again with this question."""
        return self.tail is not None


class CloseStep(Protocol):
    """What a session's close does first once its work ended (see :meth:`SessionChannel.close`)."""

    def session_closed(self) -> None:
        """The session closed: release what must go before the close callbacks run."""
        ...


class SessionChannel(Generic[HostT]):
    """The verbs of one session's core for everything above it (see the module doc).

    The invariants it keeps are the core's: updates, streamed chunks, terminal
    bytes, questions and other requests reach the client in the order they
    were made, each after the terminal bytes written before it; while the user
    is asked, the turn reports ``requires_action`` and afterwards ``running``;
    once closed, nothing more goes out.
    """

    __slots__ = (
        "_background",
        "_close_done",
        "_connection",
        "_encoding",
        "_on_close",
        "_task_group",
        "_turns",
        "_updates",
        "close_step",
        "cwd",
        "host",
        "mark_terminal_pending",
        "peer",
        "send",
        "send_terminal_bytes",
        "session_id",
        "try_send_message_text",
        "try_send_text_chunk",
    )

    def __init__(
        self,
        session_id: str,
        cwd: str,
        peer: Peer,
        *,
        updates: UpdatePath,
        turns: Turns,
        task_group: anyio.abc.TaskGroup,
        host: HostT,
    ) -> None:
        self.session_id: Final = session_id
        self.cwd: Final = cwd
        #: What the client offers (capabilities negotiated at ``initialize``).
        self.peer: Final = peer
        #: Who runs the session's commands and serves its editor files, as the wire
        #: version chose (``_handles/host.py`` ``CommandHost``).
        self.host: Final = host
        self._updates: Final = updates
        self._turns: Final = turns
        self._encoding: Final = updates.encoding
        self._connection: Final = updates.connection
        # The verbs on the hot paths are the update path's own bound methods, stored once;
        # the rarer ones (send_ending, send_text_chunk, send_message_text, spawn) are
        # properties: an idle session does not pay for them.
        #: Send one update (already checked): admitted, recorded, encoded, in order.
        self.send: Final = updates.send
        #: A tool call's text chunk without an ``await``; False: use :attr:`send_text_chunk`.
        self.try_send_text_chunk: Final = updates.try_send_text_chunk
        #: A reply's text chunk without an ``await``; False: use :attr:`send_message_text`.
        self.try_send_message_text: Final = updates.try_send_message_text
        #: Record and send bytes of an agent-side terminal (prefix from :meth:`terminal_prefix`).
        self.send_terminal_bytes: Final = updates.send_terminal_bytes
        #: ``mark_terminal_pending(terminal, listed)``: the terminal holds bytes that go out
        #: before the next update; returns the list it is on now (pass it next time).
        self.mark_terminal_pending: Final = updates.mark_terminal_pending
        self._task_group: Final = task_group
        #: The first step of a close once the work ended, before the close callbacks (the
        #: session's core: it stops the terminals' processes); a field, not a callback,
        #: so that a session that never closes pays for no list and no bound method.
        self.close_step: CloseStep | None = None
        self._on_close: list[Callable[[], object]] | None = None  # made by the first callback
        self._background: set[anyio.CancelScope] | None = None  # made by the first task
        self._close_done: anyio.Event | None = None

    @property
    def send_ending(
        self,
    ) -> Callable[[schema.ToolCallContentChunk, schema.ToolCallUpdate], Awaitable[None]]:
        """Send a tool call's last content item and the patch that ends it."""
        return self._updates.send_ending

    @property
    def send_text_chunk(self) -> Callable[[str, bytes, str], Awaitable[None]]:
        """A tool call's text chunk (line prefix from :meth:`tool_text_prefix`)."""
        return self._updates.send_text_chunk

    @property
    def send_message_text(self) -> Callable[[bytes, str, str, bool], Awaitable[None]]:
        """A reply's or thought's text chunk (line prefix from :meth:`message_text_prefix`)."""
        return self._updates.send_message_text

    def spawn(
        self, func: Callable[[*_PosArgsT], Coroutine[object, object, object]], *args: *_PosArgsT
    ) -> None:
        """Start a task that lives as long as the connection (flushes, cleanup of what the
        client runs): it outlives the session's close, unlike :meth:`start_soon`."""
        self._task_group.start_soon(func, *args)

    # ------------------------------------------------------------- what it is

    @property
    def limits(self) -> SessionLimits:
        """The session's limits (they may be replaced while it lives)."""
        return self._turns.limits

    @property
    def in_setup(self) -> bool:
        """True while ``session/new`` or ``session/resume`` is being answered."""
        return self._updates.in_setup

    @property
    def connection_closed(self) -> bool:
        """True once the connection to the client closed: nothing reaches it any more."""
        return self._connection.closed

    @staticmethod
    def work_cancelled() -> bool:
        """Whether the foreground work of the calling task was cancelled."""
        work = current_work.get()
        return work is not None and work.cancel_requested

    # ----------------------------------------------------------- stream prefixes

    def tool_text_prefix(self, tool_call_id: str) -> bytes:
        """The line of a tool call's one-text-item chunk up to the text (made once per call)."""
        return self._encoding.text_chunk_prefix(tool_call_id)

    def message_text_prefix(self, message_id: str, *, thought: bool) -> bytes:
        """The line of a reply's (or ``thought``'s) text chunk up to the text."""
        return self._encoding.message_chunk_prefix(message_id, thought=thought)

    def terminal_prefix(self, terminal_id: str) -> bytes:
        """The line of an agent-side terminal's output chunk up to its data."""
        return self._encoding.terminal_chunk_prefix(terminal_id)

    def show_client_terminal(self, terminal_id: str) -> None:
        """``terminal_id`` names a terminal the client runs: updates show it as such."""
        self._encoding.client_terminal(terminal_id)

    # ---------------------------------------------------------- asking the user

    def permission_question(
        self, params: schema.RequestPermissionRequest, decode: Callable[[msgspec.Raw], T]
    ) -> Question[T]:
        """``session/request_permission`` with ``params``, its answer read with ``decode``."""
        encoding = self._encoding
        return Question(
            PERMISSION_METHOD,
            params,
            encoding.reusable_request(self._connection.prepare_request, PERMISSION_METHOD, params),
            encoding.answer_decoder(decode, "RequestPermissionResponse"),
        )

    def elicitation_question(
        self, params: schema.CreateElicitationRequest, decode: Callable[[msgspec.Raw], T]
    ) -> Question[T]:
        """``elicitation/create`` with ``params``, its answer read with ``decode``."""
        return Question(
            ELICITATION_METHOD,
            params,
            None,
            self._encoding.answer_decoder(decode, "CreateElicitationResponse"),
        )

    def _encode_question(self, method: str, params: object) -> bytes:
        """The request line after its id, with the params the connection's version asks."""
        if method == PERMISSION_METHOD:
            params = self._encoding.permission_params(
                cast("schema.RequestPermissionRequest", params)
            )
        return self._connection.prepare_request(method, params)

    async def ask(self, question: Question[T]) -> T:
        """Ask the user ``question`` and return the decoded answer: the one place that does.

        In order: refuse when the connection is closed (never ``requires_action``
        for a question that cannot be sent); flush pending terminal bytes, so the
        question never overtakes output written before it; report
        ``requires_action`` for the caller's foreground work; send the request
        and wait; report ``running`` again (shielded, also when the wait failed or
        was cancelled, even while ``requires_action`` was still waiting to go
        out). A cancelled wait withdraws the request with ``$/cancel_request``
        (where the client takes it) and propagates.

        :raises ConnectionClosed: when the client went away, before or while asking.
        :raises RequestError: for an error answer.
        :raises LocalProtocolError: when too many questions are pending in the session.
        """
        connection = self._connection
        if connection.closed:
            raise ConnectionClosed("the connection is closed; the user cannot be asked")
        updates = self._updates
        if updates.dirty_terminals:
            await updates.flush_terminals()
        tail = question.tail
        if tail is None:
            tail = self._encode_question(question.method, question.params)
        turns = self._turns
        reported = turns.permission_started_now()  # (raises before it counts the question)
        try:
            if not reported:
                await turns.set_state(REQUIRES_ACTION)
            return await connection.request_prepared(question.method, tail, question.decode)
        finally:
            if not turns.permission_finished_now():
                with anyio.CancelScope(shield=True):
                    await turns.set_state(RUNNING)

    # ------------------------------------------------------ the client otherwise

    async def client_request(
        self, method: str, params: object, decode: Callable[[msgspec.Raw], T]
    ) -> T:
        """Send a request to the client (``terminal/*``, ``fs/*``) after pending output.

        ``params`` is sent as given: it must already have the shape of the
        connection's protocol version. For questions to the user use :meth:`ask`.

        :raises RequestError: for an error answer; :raises ConnectionClosed:
            when the connection ends first.
        """
        updates = self._updates
        if updates.dirty_terminals:
            await updates.flush_terminals()
        return await self._connection.request(method, params, decode)

    async def notify(self, method: str, params: object) -> None:
        """Send a notification to the client after pending output (not a session update)."""
        updates = self._updates
        if updates.dirty_terminals:
            await updates.flush_terminals()
        await self._connection.notify(method, params)

    # -------------------------------------------------------- replay and close

    async def replay(self, updates: Iterable[schema.SessionUpdate] | None) -> None:
        """Send ``updates`` (a history replay, if any), then the state the client was last
        told; live updates wait until both went out."""
        await self._updates.replay(updates, self._turns.state_snapshot)

    async def close(self) -> None:
        """Close the session: cancel its work, wait for its idle, then go silent.

        No prompt is accepted from the start; once the work reported idle (or
        ``cancel_grace`` and a second passed), nothing more is sent, the close
        callbacks run in order (one that raises is logged) and the tasks of
        :meth:`start_soon` are cancelled. A second call waits for the first.
        """
        if self._close_done is not None:
            await self._close_done.wait()
            return
        turns = self._turns
        turns.closed = True
        done = self._close_done = anyio.Event()
        try:
            turns.cancel()
            with anyio.move_on_after(turns.limits.cancel_grace + 1.0):
                await turns.wait_idle()
        finally:
            self._updates.release()
            turns.drop_all()
            turns.notify_idle()
            step = self.close_step
            if step is not None:
                try:
                    step.session_closed()
                except Exception:
                    logger.exception("a close callback of session %s failed", self.session_id)
            for release in self._on_close or ():
                try:
                    release()
                except Exception:
                    logger.exception("a close callback of session %s failed", self.session_id)
            for scope in list(self._background or ()):
                scope.cancel()
            done.set()

    # ------------------------------------------------------------------ tasks

    def start_soon(
        self, func: Callable[[*_PosArgsT], Awaitable[object]], *args: *_PosArgsT
    ) -> None:
        """Run ``await func(*args)`` for as long as the session lives (see
        :meth:`acpio.Session.start_soon`); cancelled when it closes.

        :raises LocalProtocolError: when the session is closed.
        """
        self._refuse_if_closed("start a background task")
        scope = anyio.CancelScope()
        background = self._background
        if background is None:
            background = self._background = set()
        background.add(scope)
        self._task_group.start_soon(self._run_background, scope, func, args)

    async def _run_background(
        self,
        scope: anyio.CancelScope,
        func: Callable[[*_PosArgsT], Awaitable[object]],
        args: tuple[*_PosArgsT],
    ) -> None:
        try:
            with scope:
                await func(*args)
        except Exception:
            logger.exception("a background task of session %s failed", self.session_id)
        finally:
            if self._background is not None:
                self._background.discard(scope)

    def add_close_callback(self, callback: Callable[[], object]) -> None:
        """Call ``callback()`` once when the session closes (see :meth:`close`).

        :raises LocalProtocolError: when the session is closed.
        """
        self._refuse_if_closed("add a close callback")
        if self._on_close is None:
            self._on_close = [callback]
        else:
            self._on_close.append(callback)

    def _refuse_if_closed(self, what: str) -> None:
        if self._turns.closed:
            raise LocalProtocolError(f"session {self.session_id} is closed; cannot {what}")
