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
"""

from __future__ import annotations

import logging
from collections.abc import Generator, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Final

import anyio
import msgspec
from msgspec import UNSET, UnsetType

from . import schema
from ._connection import Connection
from ._errors import ConnectionClosed, LocalProtocolError, RequestError
from ._ids import new_id
from ._paths import require_absolute
from ._permission import (
    ALLOW_OR_REJECT,
    CANCELLED,
    Outcome,
    interpret_outcome,
    validate_options,
)
from ._terminal import TerminalHandle

if TYPE_CHECKING:
    from ._session import Session

__all__ = ["ToolCallHandle"]

logger = logging.getLogger(__name__)

KNOWN_KINDS: Final = schema.KNOWN_TOOL_KIND
KNOWN_STATUSES: Final = schema.KNOWN_TOOL_CALL_STATUS
FINAL_STATUSES: Final = frozenset({"completed", "failed", "cancelled"})
REMEMBERED_KINDS: Final = frozenset({"allow_always", "reject_always"})
_UNSET: Final = UNSET


def _check_open_value(value: object, known: frozenset[str], what: str) -> None:
    if value is _UNSET or value is None:
        return
    if not isinstance(value, str):
        raise LocalProtocolError(f"{what} must be a string, got {value!r}")
    if value not in known and not value.startswith("_"):
        raise LocalProtocolError(
            f"{what} {value!r} is not an ACP value (known: {', '.join(sorted(known))}); "
            "custom values must start with '_'"
        )


def _location(value: schema.ToolCallLocation | str) -> schema.ToolCallLocation:
    if isinstance(value, str):
        return schema.ToolCallLocation(path=require_absolute(value, "location path"))
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


class ToolCallHandle:
    """One tool call of a session: its updates, content, permission requests and terminals.

    Create it with :meth:`acpio.Session.tool_call`; ``await`` it (or enter it
    with ``async with``) to send the first update with the title.
    """

    def __init__(
        self,
        session: Session,
        tool_call_id: str,
        *,
        title: str,
        kind: str | None,
        status: str,
        name: str | None,
        raw_input: object,
        locations: Sequence[schema.ToolCallLocation | str] | None,
        content: Sequence[schema.ToolCallContent] | None,
        cancellable: bool,
        meta: dict[str, object] | None,
    ) -> None:
        _check_open_value(kind, KNOWN_KINDS, "tool kind")
        _check_open_value(status, KNOWN_STATUSES, "tool call status")
        self.session: Final = session
        self.id: Final = tool_call_id
        self.title = title
        self.status = status
        self.cancellable: Final = cancellable
        self.cancel_requested = False
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
        self._scope: anyio.CancelScope | None = None
        self._terminals: list[TerminalHandle] = []

    # ------------------------------------------------------------ announcing

    @property
    def final(self) -> bool:
        """True once the call reached ``completed``, ``failed`` or ``cancelled``."""
        return self.status in FINAL_STATUSES

    async def announce(self) -> ToolCallHandle:
        """Send the first update (title, status, ...) unless it was already sent."""
        if not self._announced:
            self.session._register_tool_call(self)
            self._announced = True
            await self.session.send(self._first)
        return self

    def __await__(self) -> Generator[object, None, ToolCallHandle]:
        return self.announce().__await__()

    async def __aenter__(self) -> ToolCallHandle:
        await self.announce()
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
        swallowed = scope.__exit__(exc_type, exc, tb)
        cancelled_cls = anyio.get_cancelled_exc_class()
        if exc is None or swallowed:
            if swallowed or (self.cancel_requested and exc is None and scope.cancel_called):
                await self._finish_quietly("cancelled")
            elif not self.final:
                await self._finish_quietly("completed")
            return bool(swallowed)
        if isinstance(exc, cancelled_cls) or _is_cancellation(exc):
            await self._finish_quietly("cancelled")
        elif isinstance(exc, Exception):
            if self.session._work_cancel_requested():
                await self._finish_quietly("cancelled")
            else:
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
        locations: Sequence[schema.ToolCallLocation | str] | UnsetType | None = _UNSET,
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
        if isinstance(status, str) and self.final and status != self.status:
            raise LocalProtocolError(
                f"tool call {self.id!r} already ended with status {self.status!r}; "
                f"it cannot become {status!r}"
            )
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

    async def _send_patch(self, patch: schema.ToolCallUpdate) -> None:
        if not self._announced:
            await self.announce()
        for terminal in self._terminals:
            await terminal.flush()
        await self.session.send(patch)
        if isinstance(patch.status, str):
            self.status = patch.status
        elif patch.status is None:
            self.status = "pending"
        if isinstance(patch.title, str):
            self.title = patch.title

    async def append(
        self, item: schema.ToolCallContent, *, meta: dict[str, object] | None = None
    ) -> None:
        """Append one content item (``tool_call_content_chunk``); ``meta`` is chunk-scoped."""
        if not self._announced:
            await self.announce()
        if type(item) is not schema.Content:
            _check_content((item,))
        for terminal in self._terminals:
            await terminal.flush()
        await self.session.send(
            schema.ToolCallContentChunk(
                tool_call_id=self.id, content=item, meta=_UNSET if meta is None else meta
            )
        )

    async def append_text(self, text: str) -> None:
        """Append a text content item."""
        item = schema.Content(content=schema.TextContent(text=text))
        if not self._announced or self._terminals:
            await self.append(item)
            return
        # The common streaming case, kept to one call into the session.
        await self.session.send(schema.ToolCallContentChunk(tool_call_id=self.id, content=item))

    # ---------------------------------------------------------------- statuses

    async def start(self) -> None:
        """Mark the call ``in_progress``."""
        await self.update(status="in_progress")

    async def complete(
        self,
        content: Sequence[schema.ToolCallContent] | UnsetType = _UNSET,
        *,
        raw_output: object = _UNSET,
    ) -> None:
        """Mark the call ``completed``, optionally replacing its content and giving raw output."""
        await self.update(status="completed", content=content, raw_output=raw_output)

    async def fail(self, message: str | None = None, *, raw_output: object = _UNSET) -> None:
        """Mark the call ``failed``; ``message`` is appended as text content."""
        if message is not None:
            await self.append_text(message)
        await self.update(status="failed", raw_output=raw_output)

    async def cancel(self) -> None:
        """Mark the call ``cancelled`` (and cancel its work if it runs inside ``async with``)."""
        self.cancel_requested = True
        if not self.final:
            await self.update(status="cancelled")
        if self._scope is not None:
            self._scope.cancel()

    async def _finish_quietly(self, status: str, message: str | None = None) -> None:
        """Finish with ``status`` unless final already; shielded, never raises."""
        if self.final:
            return
        with anyio.CancelScope(shield=True):
            try:
                if message is not None:
                    await self.append_text(message)
                await self.update(status=status)
            except (ConnectionClosed, LocalProtocolError):
                logger.debug("could not report tool call %s as %s", self.id, status)

    @property
    def running_in_scope(self) -> bool:
        """True while code runs inside this call's ``async with`` block."""
        return self._scope is not None

    def request_cancel(self) -> None:
        """Handle ``tool_call/cancel``: cancel the work inside this call's ``async with``."""
        self.cancel_requested = True
        if self._scope is not None:
            self._scope.cancel()

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
        """Ask the user for permission; returns the :class:`~acpio.Outcome`.

        The subject is this tool call, or a command subject when ``command``
        is given (``cwd`` defaults to the session's). While the request is
        pending the session reports ``requires_action``. If the work or the
        call is cancelled meanwhile, ``$/cancel_request`` is sent and the
        outcome is cancelled. With ``remember`` set, an earlier
        ``allow_always``/``reject_always`` answer for the same key is reused
        locally without asking. Only a selected, offered ``allow_*`` option
        has ``outcome.allowed``.
        """
        validate_options(options)
        session = self.session
        if remember is not None:
            remembered = self._remembered(remember, options)
            if remembered is not None:
                return remembered
        if not self._announced:
            await self.announce()
        subject: schema.RequestPermissionSubject
        if command is not None:
            subject = schema.CommandPermissionSubject(
                command=command,
                cwd=require_absolute(cwd if cwd is not None else session.cwd, "command cwd"),
                tool_call_id=self.id,
                terminal_id=_UNSET if terminal_id is None else terminal_id,
            )
        else:
            subject = schema.ToolCallPermissionSubject(
                tool_call=schema.ToolCallUpdateFields(tool_call_id=self.id)
            )
        params = schema.RequestPermissionRequest(
            session_id=session.id,
            title=title if title is not None else self.title,
            description=_UNSET if description is None else description,
            subject=subject,
            options=list(options),
        )
        for terminal in self._terminals:
            await terminal.flush()
        outcome = await request_permission(session, params)
        if (
            remember is not None
            and outcome.kind == "selected"
            and outcome.option_kind in (REMEMBERED_KINDS)
        ):
            session.remembered_permissions[remember] = outcome.option_kind
        return outcome

    def _remembered(self, key: str, options: Sequence[schema.PermissionOption]) -> Outcome | None:
        kind = self.session.remembered_permissions.get(key)
        if kind is None:
            return None
        for offered in options:
            if offered.kind == kind:
                return Outcome(
                    "selected", offered.option_id, offered.kind, raw=None, remembered=True
                )
        return None

    # ---------------------------------------------------------------- terminal

    async def terminal(
        self,
        *,
        command: str | None = None,
        cwd: str | None = None,
        terminal_id: str | None = None,
        size: tuple[int, int] | None = None,
        cancellable: bool = False,
    ) -> TerminalHandle:
        """Create a display-only terminal for this call and show it in the call's content."""
        handle = TerminalHandle(
            self.session,
            terminal_id or new_id("term"),
            command=command,
            cwd=cwd if cwd is not None else self.session.cwd,
            size=size,
            cancellable=cancellable,
        )
        await handle.announce()
        self._terminals.append(handle)
        await self.append(schema.Terminal(terminal_id=handle.id))
        return handle


async def request_permission(session: Session, params: schema.RequestPermissionRequest) -> Outcome:
    """Send ``session/request_permission`` and interpret the answer (never raises on cancel)."""
    connection: Connection = session._connection
    await session._permission_started()
    try:
        try:
            response = await connection.request(
                "session/request_permission",
                params,
                _decode_permission_response,
            )
        except anyio.get_cancelled_exc_class():
            # The connection already sent $/cancel_request; the late answer is ignored.
            return CANCELLED
        except ConnectionClosed:
            return CANCELLED
        except RequestError as exc:
            logger.warning("the client answered a permission request with an error: %s", exc)
            return Outcome("unknown", raw={"error": {"code": exc.code, "message": exc.message}})
    finally:
        await session._permission_finished()
    if response is None:
        return Outcome("unknown", raw=None)
    return interpret_outcome(response.outcome, params.options)


def _decode_permission_response(raw: msgspec.Raw) -> schema.RequestPermissionResponse | None:
    try:
        return schema.decode(raw, schema.RequestPermissionResponse)
    except msgspec.ValidationError as exc:
        logger.warning("malformed permission response (%s); treating it as not approved", exc)
        return None


def _is_cancellation(exc: BaseException) -> bool:
    if isinstance(exc, BaseExceptionGroup):
        return all(
            isinstance(inner, anyio.get_cancelled_exc_class()) or _is_cancellation(inner)
            for inner in exc.exceptions
        )
    return False
