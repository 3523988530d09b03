"""Elicitation: ask the user a structured question (a form) or send them to a URL.

How this works: :func:`elicit` sends ``elicitation/create`` scoped to the
session (and optionally one of its tool calls) and waits for the answer. Only
a mode the client advertised in ``initialize`` is used; otherwise
:class:`ElicitationUnsupported` is raised before anything is sent. While the
request is pending the session reports ``requires_action`` (the same
sequence as permission requests: :meth:`~acpio._session.channel.SessionChannel.ask`),
then ``running`` again.

Cancellation: when the turn (or the ``async with session.tool_call(...)``
block around the wait) is cancelled while the request is pending, the agent
withdraws it with ``$/cancel_request`` and the cancellation propagates out of
:func:`elicit`, so the block ends ``cancelled`` and the turn ``cancelled`` with
no extra branch. The user's own answers are an :class:`ElicitationResult`:
``accepted`` (with ``content``, checked against the requested schema),
``declined``, or ``dismissed`` (the protocol's ``cancel`` action: the user
closed the request without choosing).

URL mode (:func:`elicit_url`): an accepted URL means only that the user agreed
to open it; when the out-of-band interaction is done, the agent sends
``elicitation/complete`` (:func:`complete_elicitation`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, cast

import anyio
import msgspec
from msgspec import UNSET

from .. import schema
from .._errors import AcpError, LocalProtocolError, RemoteProtocolError
from .._protocol.ids import new_id
from .._session.work import current_work

if TYPE_CHECKING:
    from .._handles.host import HandleParts


class AnnouncedCall(Protocol):
    """A tool call an elicitation can be scoped to (announced before the question)."""

    @property
    def id(self) -> str: ...

    async def announce(self) -> object: ...


__all__ = [
    "ElicitationResult",
    "ElicitationUnsupported",
    "complete_elicitation",
    "elicit",
    "elicit_url",
]

logger = logging.getLogger(__name__)


class ElicitationUnsupported(AcpError):
    """Raised when the agent elicits in a mode the client did not advertise in ``initialize``.

    Nothing was sent; ask in another way (a message, a permission request) or
    check :attr:`acpio.Session.can_elicit` first.
    """


@dataclass(frozen=True, slots=True)
class ElicitationResult:
    """What the user answered to an elicitation.

    ``action`` is the client's action: ``"accept"``, ``"decline"``, ``"cancel"``
    (the user dismissed the request), or an unknown value kept as sent (then
    none of :attr:`accepted`, :attr:`declined`, :attr:`dismissed` is true).
    ``content`` holds the submitted values of an accepted form (empty
    otherwise); ``elicitation_id`` is set for URL mode. Cancelled work never
    gets a result: :func:`elicit` raises the cancellation instead.
    """

    action: str
    content: dict[str, object] = field(default_factory=lambda: {})
    elicitation_id: str | None = None
    raw: object = None

    @property
    def accepted(self) -> bool:
        """True when the user accepted (submitted the form, agreed to open the URL)."""
        return self.action == "accept"

    @property
    def declined(self) -> bool:
        """True when the user explicitly said no."""
        return self.action == "decline"

    @property
    def dismissed(self) -> bool:
        """True when the user closed the request without choosing (action ``cancel``)."""
        return self.action == "cancel"


def _requested_schema(
    value: schema.ElicitationSchema | Mapping[str, object],
) -> schema.ElicitationSchema:
    if isinstance(value, schema.ElicitationSchema):
        requested = value
    else:
        try:
            requested = schema.decode(msgspec.json.encode(dict(value)), schema.ElicitationSchema)
        except (msgspec.ValidationError, TypeError) as exc:
            raise LocalProtocolError(
                f"the requested schema is not an elicitation schema (an object of primitive "
                f"properties): {exc}"
            ) from None
    required = requested.required if isinstance(requested.required, list) else []
    missing = [name for name in required if name not in requested.properties]
    if missing:
        raise LocalProtocolError(
            f"the requested schema requires {missing}, which are not among its properties "
            f"({', '.join(requested.properties) or 'none'})"
        )
    return requested


async def _tool_call_id(tool_call: AnnouncedCall | str | None) -> str | object:
    if tool_call is None:
        return UNSET
    if isinstance(tool_call, str):
        return tool_call
    # The client must know the call before a question about it arrives.
    await tool_call.announce()
    return tool_call.id


_CHECKS: dict[type, tuple[tuple[type, ...], str]] = {
    schema.StringPropertySchema: ((str,), "a string"),
    schema.NumberPropertySchema: ((int, float), "a number"),
    schema.IntegerPropertySchema: ((int,), "an integer"),
    schema.BooleanPropertySchema: ((bool,), "a boolean"),
    schema.MultiSelectPropertySchema: ((list,), "an array of strings"),
}


def _check_content(requested: schema.ElicitationSchema, content: dict[str, object]) -> None:
    """Check an accepted answer's values against the schema the agent sent."""
    required = requested.required if isinstance(requested.required, list) else []
    for name in required:
        if name not in content:
            raise RemoteProtocolError(
                f"the client accepted the elicitation without the required field {name!r}"
            )
    for name, value in content.items():
        prop = requested.properties.get(name)
        check = _CHECKS.get(type(prop)) if prop is not None else None
        if check is None:
            continue
        types, what = check
        wrong = not isinstance(value, types) or (
            isinstance(value, bool) and bool not in types  # True is an int in Python
        )
        if not wrong and isinstance(value, list):
            items: list[object] = value  # pyright: ignore[reportUnknownVariableType]
            wrong = not all(isinstance(item, str) for item in items)
        if not wrong and isinstance(prop, schema.StringPropertySchema):
            allowed = prop.enum if isinstance(prop.enum, list) else None
            if allowed is None and isinstance(prop.one_of, list):
                allowed = [o.const for o in prop.one_of]
            if allowed is not None and value not in allowed:
                raise RemoteProtocolError(
                    f"the client's value {value!r} for {name!r} is not one of {allowed}"
                )
        if wrong:
            raise RemoteProtocolError(
                f"the client's value for {name!r} should be {what}, got {value!r}"
            )


async def elicit(
    channel: HandleParts,
    message: str,
    requested_schema: schema.ElicitationSchema | Mapping[str, object],
    *,
    tool_call: AnnouncedCall | str | None = None,
) -> ElicitationResult:
    """Ask the user to fill a form (form mode); see :meth:`acpio.Session.elicit`."""
    if not channel.peer.elicitation_form:
        raise ElicitationUnsupported(
            "the client did not advertise form elicitation "
            "(capabilities.elicitation.form) in initialize; it cannot show this question"
        )
    requested = _requested_schema(requested_schema)
    params = schema.ElicitationFormMode(
        session_id=channel.session_id,
        tool_call_id=await _tool_call_id(tool_call),  # type: ignore[arg-type]
        message=message,
        requested_schema=requested,
    )
    result = await _request(channel, params)
    if result.accepted:
        _check_content(requested, result.content)
    return result


async def elicit_url(
    channel: HandleParts,
    message: str,
    url: str,
    *,
    elicitation_id: str | None = None,
    tool_call: AnnouncedCall | str | None = None,
) -> ElicitationResult:
    """Ask the user to open ``url`` (URL mode); see :meth:`acpio.Session.elicit_url`."""
    if not channel.peer.elicitation_url:
        raise ElicitationUnsupported(
            "the client did not advertise URL elicitation "
            "(capabilities.elicitation.url) in initialize; it cannot open this URL"
        )
    elicitation_id = elicitation_id or new_id("elicit")
    params = schema.ElicitationUrlMode(
        session_id=channel.session_id,
        tool_call_id=await _tool_call_id(tool_call),  # type: ignore[arg-type]
        message=message,
        url=url,
        elicitation_id=elicitation_id,
    )
    result = await _request(channel, params)
    return ElicitationResult(result.action, result.content, elicitation_id, result.raw)


async def complete_elicitation(channel: HandleParts, elicitation_id: str) -> None:
    """Send ``elicitation/complete``: the out-of-band interaction of a URL elicitation ended."""
    await channel.notify(
        "elicitation/complete",
        schema.CompleteElicitationNotification(elicitation_id=elicitation_id),
    )


async def _request(
    channel: HandleParts, params: schema.CreateElicitationRequest
) -> ElicitationResult:
    question = channel.elicitation_question(params, _decode_response)
    work = current_work.get()
    wait = None
    if work is not None and work.trace is not None:
        tool_call_id = None
        if isinstance(params, schema.ElicitationFormMode | schema.ElicitationUrlMode):
            scope = params.tool_call_id
            tool_call_id = scope if isinstance(scope, str) else None
        wait = work.trace.wait("elicitation", None, tool_call_id)
    try:
        # A cancellation while waiting sends $/cancel_request (the connection
        # does) and propagates: cancelled work gets no answer.
        response = await channel.ask(question)
    except BaseException as exc:
        if wait is not None:
            cancelled = isinstance(exc, anyio.get_cancelled_exc_class())
            wait.end("cancelled", None if cancelled else type(exc).__qualname__)
        raise
    result = _result(response)
    if wait is not None:
        wait.end(result.action)
    return result


def _decode_response(raw: msgspec.Raw) -> schema.CreateElicitationResponse:
    response: schema.CreateElicitationResponse = schema.decode(
        raw, schema.CreateElicitationResponse
    )
    return response


def _result(response: schema.CreateElicitationResponse) -> ElicitationResult:
    raw: object = schema.to_builtins(response)
    if isinstance(response, schema.ElicitationAcceptAction):
        content = response.content if isinstance(response.content, dict) else {}
        return ElicitationResult("accept", dict(content), raw=raw)
    if isinstance(response, schema.ElicitationDeclineAction):
        return ElicitationResult("decline", raw=raw)
    if isinstance(response, schema.ElicitationCancelAction):
        return ElicitationResult("cancel", raw=raw)
    builtins = schema.to_builtins(response)
    fields = cast("dict[str, object]", builtins) if isinstance(builtins, dict) else {}
    return ElicitationResult(str(fields.get("action")), raw=raw)
