"""ToolCallHandle: report one tool call from first sight to its final status.

How this works: the handle keeps what the client was told (status, whether
it is final, which terminals belong to it) and turns each method into one
``tool_call_update`` patch or ``tool_call_content_chunk``. Patches carry
exactly the fields given: a left-out argument is ``UNSET`` and is omitted on
the wire, ``None`` is sent as ``null``. Values the protocol restricts (kinds,
statuses, paths) are checked before anything is sent.

As an async context manager the handle guarantees a final status: completed
on normal exit, failed (with the error text) on an exception, cancelled when
the work or the call itself was cancelled. Status updates that finish a call
are sent shielded from cancellation, so a cancelled turn still reports them
before its idle.

Client-initiated cancellation (``tool_call/cancel``) reaches only this call:
the body of its ``async with`` block and any permission request it is waiting
for each run in a cancel scope of their own, and :meth:`request_cancel`
cancels exactly those.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Generator, Mapping, Sequence
from types import MappingProxyType, TracebackType
from typing import TYPE_CHECKING, Final

import anyio
import anyio.lowlevel
from msgspec import UNSET, UnsetType

from .. import schema
from .._errors import ConnectionClosed, LibraryCreated, LocalProtocolError, RequestError
from .._protocol.ids import new_id
from .._protocol.paths import require_absolute
from .._protocol.values import FINAL_TOOL_CALL_STATUSES, check_frame, require_value
from .._session.channel import OwningSession, Question
from .._session.work import current_work
from .edits import DEFAULT_MAX_EDIT_BYTES, FileEdit, propose_edit
from .host import HandleParts
from .permission import (
    ALLOW_OR_REJECT,
    CANCELLED,
    Outcome,
    PermissionResponse,
    PreparedPermission,
    copy_options,
    decode_permission_response,
    interpret_outcome,
    remembered_outcome,
    validate_options,
)
from .terminal import DEFAULT_FLUSH_DELAY, DEFAULT_MAX_CHUNK, TerminalHandle

if TYPE_CHECKING:
    from .._session.observe import Restore, SpanTrace, TurnTrace

__all__ = ["SessionHandles", "ToolCallHandle", "request_permission"]

logger = logging.getLogger(__name__)

KNOWN_KINDS: Final = schema.KNOWN_TOOL_KIND
KNOWN_STATUSES: Final = schema.KNOWN_TOOL_CALL_STATUS
FINAL_STATUSES: Final = FINAL_TOOL_CALL_STATUSES
REMEMBERED_KINDS: Final = frozenset({"allow_always", "reject_always"})
_UNSET: Final = UNSET

# The update append_text sends as a pre-encoded line, the text spliced in: proven to
# hold no enum value whatever the text.
check_frame(
    schema.ToolCallContentChunk(
        tool_call_id="", content=schema.Content(content=schema.TextContent(text=""))
    ),
    ("content", "content", "text"),
)


def _check_open_value(value: object, known: frozenset[str], what: str) -> None:
    if value is not _UNSET and value is not None:
        require_value(value, known, what)


LocationLike = schema.ToolCallLocation | str | os.PathLike[str]


def _location(value: LocationLike) -> schema.ToolCallLocation:
    if not isinstance(value, schema.ToolCallLocation):
        path = os.fspath(value)
        return schema.ToolCallLocation(path=require_absolute(path, "location path"))
    require_absolute(value.path, "location path")
    if isinstance(value.line, int) and value.line < 1:
        raise LocalProtocolError(f"location line numbers are 1-based, got {value.line}")
    return value


def _check_content(items: Sequence[schema.ToolCallContent]) -> list[schema.ToolCallContent]:
    for item in items:
        if isinstance(item, schema.Diff):
            for change in item.changes:
                if isinstance(change, schema.UnknownDiffChange):
                    continue
                require_absolute(change.path, "diff path")
                if isinstance(change, schema.MoveChange | schema.CopyChange):
                    require_absolute(change.old_path, "diff old path")
    return list(items)


#: The handles of a session that has none yet (most sessions' terminals, every idle
#: session's calls): one read-only empty mapping, until the first handle is registered.
_NO_CALLS: Final[Mapping[str, ToolCallHandle]] = MappingProxyType({})
_NO_TERMINALS: Final[Mapping[str, TerminalHandle]] = MappingProxyType({})


class SessionHandles:
    """The tool calls and terminals of one session, by id: each id names one handle for good."""

    __slots__ = ("session_id", "terminals", "tool_calls")

    def __init__(self, session_id: str) -> None:
        self.session_id: Final = session_id
        #: The tool calls by id (changed only by :meth:`register_tool_call`).
        self.tool_calls: Mapping[str, ToolCallHandle] = _NO_CALLS
        #: The terminals by id (changed only by :meth:`register_terminal`).
        self.terminals: Mapping[str, TerminalHandle] = _NO_TERMINALS

    def refuse_reused_tool_call_id(
        self, tool_call_id: str, handle: ToolCallHandle | None = None
    ) -> None:
        """:raises LocalProtocolError: when ``tool_call_id`` names another call already."""
        existing = self.tool_calls.get(tool_call_id)
        if existing is not None and existing is not handle:
            # A finished call would silently reopen on the client (completed, then pending).
            raise LocalProtocolError(
                f"tool call id {tool_call_id!r} was already used in this session"
                + (f" (that call ended {existing.status})" if existing.final else "")
                + "; ids must not be reused: use a fresh id, or reattach_tool_call() "
                "to go on reporting the existing call"
            )

    def register_tool_call(self, handle: ToolCallHandle) -> None:
        """Keep ``handle`` under its id (:raises LocalProtocolError: for a reused id)."""
        self.refuse_reused_tool_call_id(handle.id, handle)
        calls = self.tool_calls
        if not isinstance(calls, dict):
            calls = self.tool_calls = {}
        calls[handle.id] = handle

    def register_terminal(self, handle: TerminalHandle) -> None:
        """Keep ``handle`` under its id (:raises LocalProtocolError: for a reused id)."""
        if handle.id in self.terminals and self.terminals[handle.id] is not handle:
            raise LocalProtocolError(
                f"terminal id {handle.id!r} was already used in this session; "
                "ids must not be reused"
            )
        terminals = self.terminals
        if not isinstance(terminals, dict):
            terminals = self.terminals = {}
        terminals[handle.id] = handle

    def reattach(self, tool_call_id: str) -> ToolCallHandle:
        """The handle of a call already reported (:raises LocalProtocolError: when none)."""
        handle = self.tool_calls.get(tool_call_id)
        if handle is None:
            raise LocalProtocolError(f"no tool call {tool_call_id!r} in session {self.session_id}")
        return handle


class ToolCallHandle(metaclass=LibraryCreated):
    """One tool call of a session: its updates, content, permission requests and terminals.

    Create it with :meth:`acpio.Session.tool_call`; ``await`` it (or enter it
    with ``async with``) to send the first update with the title. Every
    method sends exactly one patch or chunk (``fail`` with a message sends a
    chunk and a patch, which a v1 client is shown as one update); values the
    protocol restricts are checked before anything is sent. ``status`` is the
    last status reported; once it is final (``completed``, ``failed``,
    ``cancelled``) it never changes again. A call of a turn still open when
    the turn ends (awaited rather than entered, and never finished) is ended
    ``failed`` with a note saying the agent did not finish it, so no editor
    shows it running forever.
    ``cancel_requested`` becomes true when the client cancelled the call
    (``tool_call/cancel``), for code that polls instead of using ``async with``.

    Tool calls are created by :meth:`acpio.Session.tool_call`; calling
    ``ToolCallHandle(...)`` raises :class:`TypeError`.
    """

    def __init__(
        self,
        channel: HandleParts,
        handles: SessionHandles,
        session: OwningSession,
        tool_call_id: str,
        *,
        title: str,
        kind: str | None,
        status: str,
        name: str | None,
        raw_input: object,
        locations: Sequence[LocationLike] | None,
        content: Sequence[schema.ToolCallContent] | None,
        cancellable: bool,
        meta: dict[str, object] | None,
    ) -> None:
        _check_open_value(kind, KNOWN_KINDS, "tool kind")
        _check_open_value(status, KNOWN_STATUSES, "tool call status")
        self._channel: Final = channel
        self._handles: Final = handles
        self.session: Final = session
        self.id: Final = tool_call_id
        self.title: str = title
        self.status: str = status
        self.cancellable: Final = cancellable
        self.cancel_requested: bool = False
        # append_text's line up to the text: a tool_call_content_chunk of one text item.
        self._text_chunk_prefix = channel.tool_text_prefix(tool_call_id)
        self._first = schema.ToolCallUpdate(
            tool_call_id=tool_call_id,
            title=title,
            kind=_UNSET if kind is None else kind,
            status=status,
            name=_UNSET if name is None else name,
            raw_input=raw_input,
            locations=_UNSET if locations is None else [_location(x) for x in locations],
            content=_UNSET if content is None else _check_content(content),
            capabilities=(
                schema.ToolCallCapabilities(cancel=schema.ToolCallCancelCapabilities())
                if cancellable
                else _UNSET
            ),
            meta=_UNSET if meta is None else meta,
        )
        self._announced = False
        # The body of the ``async with`` block, and permission waits: what
        # tool_call/cancel stops.
        self._scope: anyio.CancelScope | None = None
        self._waits: set[anyio.CancelScope] = set()
        self._subject: schema.ToolCallPermissionSubject | None = None
        self._prepared: PreparedPermission | None = None
        #: The trace's name of the call: low cardinality (never the title).
        self._trace_name: str = name or kind or "tool"
        # While the turn is traced: the call's span, until its final status.
        self._trace: SpanTrace | None = None
        self._restore: Restore | None = None
        self._error_type: str | None = None

    # ------------------------------------------------------------ announcing

    @property
    def final(self) -> bool:
        """True once the call reached ``completed``, ``failed`` or ``cancelled``."""
        return self.status in FINAL_STATUSES

    async def announce(self) -> ToolCallHandle:
        """Send the first update (title, status, ...) unless it was already sent."""
        if not self._announced:
            self._handles.register_tool_call(self)
            work = current_work.get()
            if work is not None:
                work.tool_call_finishers.append(self._finish_quietly)
                if work.trace is not None:
                    self._trace = work.trace.tool_call(self.id, self._trace_name)
                    if self.final:  # reported after the fact: a span of no length
                        self._trace.end(self.status, "_OTHER" if self.status == "failed" else None)
                        self._trace = None
            self._announced = True
            await self.session.send(self._first)
        return self

    def __await__(self) -> Generator[object, None, ToolCallHandle]:
        return self.announce().__await__()

    async def __aenter__(self) -> ToolCallHandle:
        await self.announce()
        if self._trace is not None:
            # Spans made inside the block (an MCP call, an HTTP request) nest under the call's.
            self._restore = self._trace.enter()
        self._scope = anyio.CancelScope()
        self._scope.__enter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        scope = self._scope
        assert scope is not None
        self._scope = None
        if self._restore is not None:
            self._restore()
            self._restore = None
        # trio's __exit__ returns True when there was no exception at all.
        swallowed = bool(scope.__exit__(exc_type, exc, tb)) and exc is not None
        cancelled_cls = anyio.get_cancelled_exc_class()
        if exc is None or swallowed:
            if (
                swallowed
                or (self.cancel_requested and scope.cancel_called)
                # Cancelled work can run on to the end of the block (code that
                # shields itself, or catches the cancellation): not a completion.
                or self._channel.work_cancelled()
            ):
                await self._finish_quietly("cancelled")
            elif not self.final:
                await self._finish_quietly("completed")
            return swallowed
        if isinstance(exc, cancelled_cls) or _is_cancellation(exc):
            await self._finish_quietly("cancelled")
        elif isinstance(exc, Exception):
            if self.cancel_requested or self._channel.work_cancelled():
                # Aborted operations raise; a cancelled call is reported cancelled, not failed.
                await self._finish_quietly("cancelled")
            else:
                self._error_type = type(exc).__qualname__
                await self._finish_quietly("failed", f"{type(exc).__name__}: {exc}")
        return False

    # ---------------------------------------------------------------- patches

    async def update(
        self,
        *,
        title: str | UnsetType | None = _UNSET,
        kind: str | UnsetType | None = _UNSET,
        status: str | UnsetType | None = _UNSET,
        name: str | UnsetType | None = _UNSET,
        content: Sequence[schema.ToolCallContent] | UnsetType | None = _UNSET,
        locations: Sequence[LocationLike] | UnsetType | None = _UNSET,
        raw_input: object = _UNSET,
        raw_output: object = _UNSET,
        meta: dict[str, object] | UnsetType | None = _UNSET,
    ) -> None:
        """Send a patch with exactly the fields given.

        A left-out field is omitted (the client keeps its value), ``None``
        sends ``null`` (the client clears it), a value replaces it; ``content``
        and ``locations`` replace whole arrays (including streamed chunks).

        :raises LocalProtocolError: for an unknown kind/status not starting
            with ``_``, a relative path, or a status change after a final status.
        """
        _check_open_value(kind, KNOWN_KINDS, "tool kind")
        _check_open_value(status, KNOWN_STATUSES, "tool call status")
        if status is not _UNSET:
            self._check_status_change(status)
        patch = schema.ToolCallUpdate(
            tool_call_id=self.id,
            title=title,
            kind=kind,
            status=status,
            name=name,
            content=content if not isinstance(content, Sequence) else _check_content(content),
            locations=(
                [_location(x) for x in locations] if isinstance(locations, Sequence) else locations
            ),
            raw_input=raw_input,
            raw_output=raw_output,
            meta=meta,
        )
        if isinstance(status, str) and status in FINAL_STATUSES and self.cancellable:
            patch.capabilities = None
        await self._send_patch(patch)

    def _check_status_change(self, status: str | None) -> None:
        # ``None`` resets the status to pending on the client: a change like any other.
        if self.status in FINAL_STATUSES and status != self.status:
            raise LocalProtocolError(
                f"tool call {self.id!r} already ended with status {self.status!r}; "
                f"it cannot become {status!r}"
            )

    async def _send_patch(self, patch: schema.ToolCallUpdate) -> None:
        if not self._announced:
            await self.announce()
        # Session.send flushes every terminal's buffered bytes first, so this
        # call's terminal output always precedes the patch.
        await self.session.send(patch)
        if isinstance(patch.status, str):
            self.status = patch.status
        elif patch.status is None:
            self.status = "pending"
        if isinstance(patch.title, str):
            self.title = patch.title
        self._end_trace_if_final()

    def _end_trace_if_final(self) -> None:
        # The call's span ends with the status it last reported, once that is final.
        if self._trace is not None and self.status in FINAL_STATUSES:
            self._trace.end(
                self.status,
                (self._error_type or "_OTHER") if self.status == "failed" else None,
            )
            self._trace = None

    async def append(
        self, item: schema.ToolCallContent, *, meta: dict[str, object] | None = None
    ) -> None:
        """Append one content item (``tool_call_content_chunk``); ``meta`` is chunk-scoped."""
        if not self._announced:
            await self.announce()
        if type(item) is not schema.Content:
            _check_content((item,))
        await self.session.send(
            schema.ToolCallContentChunk(
                tool_call_id=self.id, content=item, meta=_UNSET if meta is None else meta
            )
        )

    async def append_text(self, text: str) -> None:
        """Append a text content item (``tool_call_content_chunk``)."""
        # The common streaming case: the line is pre-encoded up to the text, and
        # the session does for it what send() does for every update, without
        # a further await when nothing has to be waited for.
        channel = self._channel
        if self._announced:
            try_send = channel.try_send_text_chunk  # (see _session/channel.py: bound once)
            if try_send(self.id, self._text_chunk_prefix, text):
                return
        else:
            await self.announce()
        send = channel.send_text_chunk
        await send(self.id, self._text_chunk_prefix, text)

    # ---------------------------------------------------------------- statuses

    @property
    def _cancelled_by_client(self) -> bool:
        return self.cancel_requested and self.status == "cancelled"

    async def start(self) -> None:
        """Mark the call ``in_progress``.

        Like every status helper it does nothing once the client cancelled the
        call (``tool_call/cancel``) and it was reported cancelled: that answer
        may race with the work, and the call stays cancelled.

        :raises LocalProtocolError: when the call already has another final status.
        """
        if not self._cancelled_by_client:
            await self.update(status="in_progress")

    async def complete(
        self,
        content: Sequence[schema.ToolCallContent] | UnsetType = _UNSET,
        *,
        raw_output: object = _UNSET,
    ) -> None:
        """Mark the call ``completed``, optionally replacing its content and giving raw output.

        :raises LocalProtocolError: when the call already ended otherwise.
        """
        if not self._cancelled_by_client:
            await self.update(status="completed", content=content, raw_output=raw_output)

    async def fail(self, message: str | None = None, *, raw_output: object = _UNSET) -> None:
        """Mark the call ``failed``; ``message`` is appended as text content first.

        :raises LocalProtocolError: when the call already ended otherwise
            (checked before anything is sent).
        """
        if self._cancelled_by_client:
            return
        self._check_status_change("failed")
        if message is not None:
            await self._end_with_text("failed", message, raw_output)
        else:
            await self.update(status="failed", raw_output=raw_output)

    async def _end_with_text(self, status: str, message: str, raw_output: object) -> None:
        """Append ``message`` and end the call with ``status``: on v1 one update."""
        if not self._announced:
            await self.announce()
        patch = schema.ToolCallUpdate(
            tool_call_id=self.id,
            status=status,
            raw_output=raw_output,
            capabilities=None if self.cancellable else _UNSET,
        )
        chunk = schema.ToolCallContentChunk(
            tool_call_id=self.id, content=schema.Content(content=schema.TextContent(text=message))
        )
        await self._channel.send_ending(chunk, patch)
        self.status = status
        self._end_trace_if_final()

    async def mark_cancelled(self) -> None:
        """Report the call ``cancelled`` (a status report; it does not stop any work).

        To stop work, cancel the turn (:meth:`acpio.Session.cancel`) or the
        call's block; the client's ``tool_call/cancel`` does the latter.

        :raises LocalProtocolError: when the call already ended otherwise.
        """
        if self.status != "cancelled":
            await self.update(status="cancelled")

    #: The former name of :meth:`mark_cancelled`, kept for existing agents.
    cancel = mark_cancelled

    async def _finish_quietly(self, status: str, message: str | None = None) -> None:
        """Finish with ``status`` unless final already; shielded, never raises."""
        if self.final:
            return
        with anyio.CancelScope(shield=True):
            try:
                if message is not None:
                    await self._end_with_text(status, message, _UNSET)
                else:
                    await self.update(status=status)
            except (ConnectionClosed, LocalProtocolError):
                logger.debug("could not report tool call %s as %s", self.id, status)

    @property
    def running_in_scope(self) -> bool:
        """True when :meth:`request_cancel` handles ``tool_call/cancel`` for this call.

        That is for every cancellable call that was announced and is not
        final: whether its work runs inside its ``async with`` block, waits
        for a permission answer, or is driven by the author without either.
        """
        return self.cancellable and self._announced and not self.final

    def request_cancel(self) -> bool:
        """Handle ``tool_call/cancel``: stop this call's work and nothing else.

        Sets :attr:`cancel_requested`, cancels the body of its ``async with``
        block and abandons its pending permission requests (their outcome is
        cancelled); the cancelled status follows once that work has unwound.
        A call with neither is reported cancelled right away, from a task of
        its own; whichever of that report and the author's own final status
        comes first stands. Returns True when running work was stopped, False
        when there was none (as :meth:`acpio.TerminalHandle.request_cancel`).
        """
        self.cancel_requested = True
        if self._scope is not None:
            self._scope.cancel()
        for wait in self._waits:
            wait.cancel()
        if self._scope is None and not self._waits:
            self._channel.spawn(self._finish_quietly, "cancelled")
            return False
        return True

    # ------------------------------------------------------------- permission

    async def request_permission(
        self,
        options: Sequence[schema.PermissionOption] = ALLOW_OR_REJECT,
        *,
        title: str | None = None,
        description: str | None = None,
        command: str | None = None,
        cwd: str | None = None,
        terminal_id: str | None = None,
        remember: str | None = None,
    ) -> Outcome:
        """Ask the user for permission (``session/request_permission``); returns the Outcome.

        The subject is this tool call, or, when ``command`` is given, a
        command subject (``command``, absolute ``cwd`` defaulting to the
        session's, this call's ``toolCallId`` and the optional
        ``terminal_id``). ``title`` defaults to the call's title. While any
        request of the session is pending the session reports
        ``requires_action``, then ``running`` again.

        Cancellation needs no branch of its own: if the turn is cancelled
        (``session/cancel``) or, inside this call's ``async with`` block, the
        call is cancelled (``tool_call/cancel``) while the request waits, the
        request is withdrawn with ``$/cancel_request``, a later answer is
        ignored, and the cancellation is raised here, so the block ends the
        call ``cancelled`` (and a cancelled turn ends ``cancelled``) whatever
        the code after this line would have done. A call driven without a
        block is reported cancelled at once and the outcome is
        :attr:`~acpio.permission.Outcome.cancelled`.

        Only a selected option that was offered here, of kind ``allow_once``
        or ``allow_always``, has ``outcome.allowed``; ``outcome.rejected`` is
        the user's "no", ``outcome.dismissed`` a prompt the user (or the
        client) dismissed; a custom, malformed or error answer, or an option
        id never offered, is none of these and never approval.
        With ``remember`` (a key the author chooses, such as the command), an
        ``allow_always``/``reject_always`` answer is kept for the session and
        later requests with the same key are answered locally.

        :raises LocalProtocolError: for invalid options (none, a repeated id,
            a kind neither known nor ``_``-prefixed) or a relative ``cwd``,
            before anything is sent.
        """
        session = self.session
        prepared = self._prepared
        if prepared is not None and not (
            command is None
            and prepared.title == (title if title is not None else self.title)
            and prepared.description == description
            and prepared.options == (options if isinstance(options, list) else list(options))
        ):
            prepared = None  # not the request asked last time
        if prepared is None:
            validate_options(options)
        if remember is not None:
            kind = session.remembered_permissions.get(remember)
            if kind is not None:
                local = remembered_outcome(kind, options)
                if local is not None:
                    return local
        offered: Sequence[schema.PermissionOption]
        question: Question[PermissionResponse]
        if prepared is not None:
            offered, question = prepared.options, prepared.question
        else:
            params = self._permission_params(
                options,
                title=title,
                description=description,
                command=command,
                cwd=cwd,
                terminal_id=terminal_id,
            )
            offered = params.options
            question = self._channel.permission_question(params, decode_permission_response)
            if command is None and question.reusable:
                # The params depend on nothing but these: the next equal request is sent as is.
                copies = copy_options(params.options)
                if copies is not None:
                    self._prepared = PreparedPermission(params.title, description, copies, question)
        if not self._announced:
            # (A question that is not reusable is encoded when asked, once the call is known.)
            await self.announce()
        work = current_work.get()
        if work is not None and work.trace is not None:
            outcome = await self._traced_permission(work.trace, offered, question)
        elif not self.cancellable:
            outcome = await request_permission(self._channel, offered, question)
        else:
            outcome = await self._cancellable_permission(offered, question)
        if (
            remember is not None
            and outcome.kind == "selected"
            and outcome.option_kind in REMEMBERED_KINDS
        ):
            session.remembered_permissions[remember] = outcome.option_kind
        return outcome

    async def _traced_permission(
        self,
        trace: TurnTrace,
        offered: Sequence[schema.PermissionOption],
        question: Question[PermissionResponse],
    ) -> Outcome:
        """The request of :meth:`request_permission` within a wait span of the turn's trace."""
        wait = trace.wait("permission", self._trace, self.id)
        try:
            if not self.cancellable:
                outcome = await request_permission(self._channel, offered, question)
            else:
                outcome = await self._cancellable_permission(offered, question)
        except BaseException as exc:
            wait.end("cancelled", None if _is_cancelled(exc) else type(exc).__qualname__)
            raise
        # The kind of the option chosen (allow_once, ...), else how it ended (dismissed, ...).
        wait.end(outcome.option_kind if outcome.option_kind is not None else outcome.kind)
        return outcome

    def _permission_params(
        self,
        options: Sequence[schema.PermissionOption],
        *,
        title: str | None,
        description: str | None,
        command: str | None,
        cwd: str | None,
        terminal_id: str | None,
    ) -> schema.RequestPermissionRequest:
        """The ``session/request_permission`` params of :meth:`request_permission`."""
        session = self.session
        subject: schema.RequestPermissionSubject
        if command is not None:
            subject = schema.CommandPermissionSubject(
                command=command,
                cwd=require_absolute(cwd if cwd is not None else session.cwd, "command cwd"),
                tool_call_id=self.id,
                terminal_id=_UNSET if terminal_id is None else terminal_id,
            )
        else:
            cached = self._subject
            if cached is None:
                # The same for every request of this call: built once, never changed.
                cached = self._subject = schema.ToolCallPermissionSubject(
                    tool_call=schema.ToolCallUpdateFields(tool_call_id=self.id)
                )
            subject = cached
        return schema.RequestPermissionRequest(
            session_id=session.id,
            title=title if title is not None else self.title,
            description=_UNSET if description is None else description,
            subject=subject,
            options=list(options),
        )

    async def _cancellable_permission(
        self,
        offered: Sequence[schema.PermissionOption],
        question: Question[PermissionResponse],
    ) -> Outcome:
        # Its own scope, so tool_call/cancel abandons the wait even outside ``async with``.
        outcome = CANCELLED
        wait = anyio.CancelScope()
        self._waits.add(wait)
        try:
            with wait:
                outcome = await request_permission(self._channel, offered, question)
        finally:
            self._waits.discard(wait)
        if wait.cancel_called:
            if self._scope is not None:
                # Inside the ``async with`` block, whose scope tool_call/cancel cancelled
                # too: the cancellation goes on to the block, which ends the call cancelled.
                await anyio.lowlevel.checkpoint_if_cancelled()
            # Driven without a block: nothing else will finish the call, so report it now.
            await self._finish_quietly("cancelled")
            return CANCELLED
        return outcome

    # ------------------------------------------------------------------ edits

    async def propose_edit(
        self,
        path: str | os.PathLike[str],
        new: str | bytes | None,
        *,
        move_to: str | os.PathLike[str] | None = None,
        allow_outside: Sequence[str | os.PathLike[str]] = (),
        max_bytes: int = DEFAULT_MAX_EDIT_BYTES,
        title: str | None = None,
    ) -> FileEdit:
        """Propose a file change: read the file safely and show its diff on this call.

        ``new`` is the content after the change (``str`` is written as
        UTF-8); ``None`` deletes the file, or, with ``move_to``, moves it
        unchanged. A missing file is an add. A relative path (and ``move_to``)
        is relative to the session's ``cwd``. The path is resolved (symlinks,
        ``..``) and must lie inside the session's ``cwd`` or
        ``additional_directories`` or a directory in ``allow_outside``; the
        target must be a regular file of at most ``max_bytes`` (or absent for
        an add). The call's content becomes the diff, its locations the real
        path(s), its title ``edit.title`` (or ``title``); nothing is written
        until :meth:`acpio.FileEdit.apply`. See :class:`acpio.FileEdit`.

        :raises EditRefused: with a sentence for a person, after failing this
            call with it: a path outside the roots, not a
            regular file, too large, unreadable, a missing directory, a delete
            of a missing file, a move onto an existing one.
        """
        return await propose_edit(
            self,
            path,
            new,
            move_to=move_to,
            allow_outside=allow_outside,
            max_bytes=max_bytes,
            title=title,
        )

    # ---------------------------------------------------------------- terminal

    async def terminal(
        self,
        *,
        command: str | None = None,
        cwd: str | None = None,
        terminal_id: str | None = None,
        size: tuple[int, int] | None = None,
        cancellable: bool = False,
        max_chunk: int = DEFAULT_MAX_CHUNK,
        flush_delay: float = DEFAULT_FLUSH_DELAY,
    ) -> TerminalHandle:
        """Create a display-only terminal for this call and show it in the call's content.

        Sends the terminal's first ``terminal_update`` (command, absolute
        ``cwd`` defaulting to the session's, optional ``size`` as ``(cols,
        rows)``), then appends the ``{type: "terminal", terminalId}`` item to
        the call's content. ``max_chunk`` and ``flush_delay`` bound how writes
        are coalesced (see :class:`TerminalHandle`). With ``cancellable`` the
        terminal advertises ``terminal/cancel`` until it exits. On a v1
        connection whose client runs terminals, the content item is added once
        the terminal shows something: the client's own terminal (by the
        client's id) when a command runs there, else this one.

        :raises LocalProtocolError: for a relative ``cwd`` or a terminal id
            already used in this session.
        """
        handle = object.__new__(TerminalHandle)
        TerminalHandle.__init__(
            handle,
            self._channel,
            self._handles.register_terminal,
            self.session,
            terminal_id or new_id("term"),
            command=command,
            cwd=cwd if cwd is not None else self.session.cwd,
            size=size,
            cancellable=cancellable,
            max_chunk=max_chunk,
            flush_delay=flush_delay,
        )
        await handle.announce()
        await self._channel.host.show_terminal(self, handle)
        return handle


async def request_permission(
    channel: HandleParts,
    offered: Sequence[schema.PermissionOption],
    question: Question[PermissionResponse],
) -> Outcome:
    """Ask ``question`` (``session/request_permission``) and interpret the answer against
    ``offered``, the options it offers.

    The channel asks (:meth:`~acpio._session.channel.SessionChannel.ask`);
    here the answer becomes an :class:`Outcome`. Cancellation of the waiting
    task (the turn was cancelled) propagates: the connection withdraws the
    request with ``$/cancel_request`` and ignores a late answer. An answer
    that arrives once the work was cancelled is dropped the same way, never
    returned as if the work went on.
    """
    try:
        response = await channel.ask(question)
    except ConnectionClosed:
        return await _client_gone(channel)
    except RequestError as exc:
        logger.warning("the client answered a permission request with an error: %s", exc)
        return Outcome("unknown", raw={"error": {"code": exc.code, "message": exc.message}})
    work = current_work.get()
    if work is not None and work.cancel_requested:
        # The answer raced session/cancel: the work is cancelled, let that reach it.
        await anyio.lowlevel.checkpoint_if_cancelled()
    if response is None:
        return Outcome("unknown", raw=None)
    return interpret_outcome(response.outcome, offered)


async def _client_gone(channel: HandleParts) -> Outcome:
    """The outcome of a request whose client went away: the work's cancellation, if any.

    A closed connection is followed by the shutdown, which cancels every
    session's foreground work; that cancellation ends the wait (so the call
    ends ``cancelled``, as for ``session/cancel``). Other tasks, or work that
    is not cancelled within the grace period, get a cancelled outcome.
    """
    if current_work.get() is not None:
        with anyio.move_on_after(channel.limits.cancel_grace):
            await anyio.sleep_forever()
    return CANCELLED


def _is_cancelled(exc: BaseException) -> bool:
    return isinstance(exc, anyio.get_cancelled_exc_class()) or _is_cancellation(exc)


def _is_cancellation(exc: BaseException) -> bool:
    if isinstance(exc, BaseExceptionGroup):
        inners: tuple[BaseException, ...] = exc.exceptions  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        return all(
            isinstance(inner, anyio.get_cancelled_exc_class()) or _is_cancellation(inner)
            for inner in inners
        )
    return False
