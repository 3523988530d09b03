"""Permission options and outcomes.

How this works: the agent offers a list of :class:`PermissionOption`; the
client answers with an outcome. :func:`interpret_outcome` is the single place
that decides what an answer means: only a ``selected`` outcome naming an
option that was offered *in that very request* counts as a choice, and only a
choice of an ``allow_*`` kind is approval. Dismissed, cancelled, unknown and
malformed answers are never approval.

An :class:`Outcome` says by name which of four things happened: the user chose
an option (``allowed``, ``rejected``, or a custom kind), the prompt was
``dismissed`` (the client answered ``cancelled`` without acpio withdrawing the
request), the work was ``cancelled`` (acpio withdrew the request because the
call or the connection went away), or the answer was not understood.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

import msgspec

from .. import schema
from .._errors import LocalProtocolError
from .._protocol.values import require_value

if TYPE_CHECKING:
    from .._session.channel import Question

__all__ = [
    "ALLOW_ALWAYS",
    "ALLOW_ONCE",
    "ALLOW_OR_REJECT",
    "ALL_OPTIONS",
    "REJECT_ALWAYS",
    "REJECT_ONCE",
    "CancelledAnswer",
    "Outcome",
    "PermissionAnswer",
    "PermissionResponse",
    "PreparedPermission",
    "SelectedAnswer",
    "copy_options",
    "decode_permission_response",
    "interpret_outcome",
    "option",
    "remembered_outcome",
    "validate_options",
]

logger = logging.getLogger(__name__)

ALLOW_KINDS: Final = frozenset({"allow_once", "allow_always"})
REJECT_KINDS: Final = frozenset({"reject_once", "reject_always"})
KNOWN_OPTION_KINDS: Final = schema.KNOWN_PERMISSION_OPTION_KIND
assert ALLOW_KINDS | REJECT_KINDS == KNOWN_OPTION_KINDS


def _check_kind(kind: str) -> None:
    require_value(kind, KNOWN_OPTION_KINDS, "permission option kind")


def option(option_id: str, name: str, kind: str) -> schema.PermissionOption:
    """Build one permission option; ``kind`` is a known kind or starts with ``_``."""
    _check_kind(kind)
    return schema.PermissionOption(option_id=option_id, name=name, kind=kind)


ALLOW_ONCE: Final = option("allow_once", "Allow once", "allow_once")
ALLOW_ALWAYS: Final = option("allow_always", "Always allow", "allow_always")
REJECT_ONCE: Final = option("reject_once", "Reject", "reject_once")
REJECT_ALWAYS: Final = option("reject_always", "Always reject", "reject_always")
ALLOW_OR_REJECT: Final = (ALLOW_ONCE, REJECT_ONCE)
ALL_OPTIONS: Final = (ALLOW_ONCE, ALLOW_ALWAYS, REJECT_ONCE, REJECT_ALWAYS)


def validate_options(options: Sequence[schema.PermissionOption]) -> None:
    """Check what the protocol requires of offered options before sending them.

    :raises LocalProtocolError: when the list is empty, an option id repeats,
        or a kind is neither known nor ``_``-prefixed.
    """
    if not options:
        raise LocalProtocolError("a permission request needs at least one option")
    seen: set[str] = set()
    for offered in options:
        if offered.option_id in seen:
            raise LocalProtocolError(f"permission option id {offered.option_id!r} is offered twice")
        seen.add(offered.option_id)
        kind = offered.kind
        if type(kind) is not str or kind not in KNOWN_OPTION_KINDS:
            _check_kind(kind)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the client answered to a permission request, as acpio understood it.

    ``kind`` is one of:

    - ``"selected"``: an option that was offered in this request was chosen
      (``option_id`` and ``option_kind`` name it); :attr:`allowed` for an
      ``allow_*`` kind, :attr:`rejected` for a ``reject_*`` kind;
    - ``"dismissed"``: the client answered ``cancelled`` on its own (the user
      dismissed the prompt, or the client declined it by policy);
    - ``"cancelled"``: the work was cancelled and acpio withdrew the request
      (``tool_call/cancel`` of a call driven without ``async with``, or the
      connection closed). A cancelled turn, or a call cancelled inside its
      ``async with`` block, raises the cancellation instead of returning;
    - ``"unknown"``: anything else (a custom or future outcome, an option id
      that was never offered, a malformed or error answer).

    ``raw`` keeps the client's payload. ``remembered`` is true when the answer
    came from an earlier ``allow_always``/``reject_always`` choice instead of
    the client. Only :attr:`allowed` is approval.
    """

    kind: Literal["selected", "dismissed", "cancelled", "unknown"]
    option_id: str | None = None
    option_kind: str | None = None
    raw: object = None
    remembered: bool = False

    @property
    def allowed(self) -> bool:
        """True only for a selected, offered option of kind ``allow_once`` or ``allow_always``."""
        return self.kind == "selected" and self.option_kind in ALLOW_KINDS

    @property
    def rejected(self) -> bool:
        """True when the user said no: a selected option of a ``reject_*`` kind."""
        return self.kind == "selected" and self.option_kind in REJECT_KINDS

    @property
    def dismissed(self) -> bool:
        """True when the client answered ``cancelled`` without acpio withdrawing the request."""
        return self.kind == "dismissed"

    @property
    def cancelled(self) -> bool:
        """True when the work was cancelled and the request withdrawn rather than answered."""
        return self.kind == "cancelled"


CANCELLED: Final = Outcome("cancelled")

# Outcome's generated __init__ sets each frozen field through object.__setattr__;
# outcomes of answered requests are built on every round trip, so they are made
# by setting the slots directly (the same object, three times cheaper).
_new_outcome = object.__new__
_SetSlot = Callable[[Outcome, object], None]
_slots = Outcome.__dict__
_set_kind: _SetSlot = _slots["kind"].__set__
_set_option_id: _SetSlot = _slots["option_id"].__set__
_set_option_kind: _SetSlot = _slots["option_kind"].__set__
_set_raw: _SetSlot = _slots["raw"].__set__
_set_remembered: _SetSlot = _slots["remembered"].__set__


def _answered(
    kind: Literal["selected", "dismissed", "unknown"],
    option_id: str | None,
    option_kind: str | None,
    raw: object,
) -> Outcome:
    """``Outcome(kind, option_id, option_kind, raw)``, built without the dataclass __init__."""
    outcome = _new_outcome(Outcome)
    _set_kind(outcome, kind)
    _set_option_id(outcome, option_id)
    _set_option_kind(outcome, option_kind)
    _set_raw(outcome, raw)
    _set_remembered(outcome, False)
    return outcome


# An "always" answer stands for every option of its polarity: the same kind is
# preferred, then the "once" variant, so a later request that offers only
# "allow once" is still answered by an earlier "always allow".
_REMEMBERED_PREFERENCE: Final = {
    "allow_always": ("allow_always", "allow_once"),
    "reject_always": ("reject_always", "reject_once"),
}


def remembered_outcome(kind: str, options: Sequence[schema.PermissionOption]) -> Outcome | None:
    """The local answer for an earlier ``allow_always``/``reject_always`` choice of ``kind``.

    Picks the offered option of the same polarity (the same kind first); ``None``
    when no such option is offered this time, so the user is asked again.
    """
    for wanted in _REMEMBERED_PREFERENCE.get(kind, ()):
        for offered in options:
            if offered.kind == wanted:
                return Outcome("selected", offered.option_id, offered.kind, remembered=True)
    return None


def interpret_outcome(outcome: object, options: Sequence[schema.PermissionOption]) -> Outcome:
    """Map the client's outcome onto the options offered in the same request.

    Keeps the protocol's rule that only an offered option can be chosen: a
    ``selected`` outcome naming an id that is not in ``options`` is
    ``unknown``, as is any custom or future outcome; none of them is approval.
    A ``cancelled`` outcome is ``dismissed``: acpio stops waiting for the
    requests it withdraws, so a ``cancelled`` answer it reads is the client's own.
    ``outcome`` is a ``schema.RequestPermissionOutcome`` (or the one-pass
    decoder's mirror of a selected or cancelled one, which means the same).
    """
    kind = type(outcome)
    option_id: object
    if kind is SelectedAnswer:
        assert isinstance(outcome, SelectedAnswer)
        option_id = outcome.option_id
        raw: object = (
            {"outcome": "selected", "optionId": option_id}
            if outcome.meta is msgspec.UNSET
            else {"outcome": "selected", "optionId": option_id, "_meta": outcome.meta}
        )
    elif kind is CancelledAnswer:
        assert isinstance(outcome, CancelledAnswer)
        raw = {"outcome": "cancelled"}
        if outcome.meta is not msgspec.UNSET:
            raw = {"outcome": "cancelled", "_meta": outcome.meta}
        # Requests acpio withdrew are no longer waited for: this answer is the client's own.
        return _answered("dismissed", None, None, raw)
    elif isinstance(outcome, schema.SelectedPermissionOutcome):
        option_id = outcome.option_id
        raw = schema.to_builtins(outcome)
    elif isinstance(outcome, schema.CancelledPermissionOutcome):
        return _answered("dismissed", None, None, schema.to_builtins(outcome))
    else:
        return _answered("unknown", None, None, schema.to_builtins(outcome))
    for offered in options:
        if offered.option_id == option_id:
            return _answered("selected", offered.option_id, offered.kind, raw)
    # No option_id either: code comparing ids must not match one that was never offered.
    return _answered("unknown", None, None, raw)


# ------------------------------------------------------------- asking again

_decode_options = msgspec.json.Decoder(list[schema.PermissionOption]).decode


def copy_options(
    options: Sequence[schema.PermissionOption],
) -> list[schema.PermissionOption] | None:
    """Independent copies of ``options`` for a :class:`PreparedPermission`; None if one has
    ``_meta`` (equal ``_meta`` values may encode differently, ``1`` and ``true``) or
    does not encode as an option."""
    try:
        copies = _decode_options(schema.encode(options))
    except (msgspec.EncodeError, msgspec.DecodeError, TypeError):
        return None
    if copies != list(options) or any(copy.meta is not msgspec.UNSET for copy in copies):
        return None
    return copies


class PreparedPermission:
    """A tool call's permission request, encoded once, for when the same is asked again.

    A request with an equal ``title``, ``description`` and ``options`` is the
    same request (the session and the subject are the call's own), so it is
    asked as ``question`` (a reusable :class:`~acpio._session.channel.Question`)
    with a fresh id, with nothing validated, built or encoded again. ``options`` are copies
    (:func:`copy_options`): changing the objects that were offered can never
    make a later, different request match.
    """

    __slots__ = ("description", "options", "question", "title")

    def __init__(
        self,
        title: str,
        description: str | None,
        options: list[schema.PermissionOption],
        question: Question[PermissionResponse],
    ) -> None:
        self.title: Final = title
        self.description: Final = description
        self.options: Final = options
        self.question: Final = question


# ------------------------------------------------------------- decoding answers
# The general decoder reads an open union in two passes (JSON to builtins, then
# builtins to the variant). The answers clients actually send, a selected or a
# cancelled outcome, are read here in one pass into these mirrors of the
# generated types (same wire names, same field types, unknown fields ignored as
# there); anything else takes the general path, so every answer means exactly
# what ``schema.decode`` makes of it.

_Meta = dict[str, object] | None | msgspec.UnsetType


class SelectedAnswer(
    msgspec.Struct,
    tag_field="outcome",
    tag="selected",
    rename={"option_id": "optionId", "meta": "_meta"},
):
    """A ``selected`` outcome, as ``schema.SelectedPermissionOutcome`` reads it."""

    option_id: str
    meta: _Meta = msgspec.UNSET


class CancelledAnswer(
    msgspec.Struct, tag_field="outcome", tag="cancelled", rename={"meta": "_meta"}
):
    """A ``cancelled`` outcome, as ``schema.CancelledPermissionOutcome`` reads it."""

    meta: _Meta = msgspec.UNSET


class PermissionAnswer(msgspec.Struct, rename={"meta": "_meta"}):
    """A permission result with a selected or cancelled outcome (``RequestPermissionResponse``)."""

    outcome: SelectedAnswer | CancelledAnswer
    meta: _Meta = msgspec.UNSET


_decode_answer = msgspec.json.Decoder(PermissionAnswer).decode


#: What :func:`decode_permission_response` reads from an answer.
PermissionResponse = PermissionAnswer | schema.RequestPermissionResponse | None


def decode_permission_response(raw: msgspec.Raw) -> PermissionResponse:
    """The ``session/request_permission`` result, or None when it is malformed (never approval).

    A selected or cancelled outcome is read in one pass (a
    :class:`PermissionAnswer`, encoding back to the same JSON as the general
    decoder's result); anything else is ``schema.decode(raw,
    RequestPermissionResponse)``. Either way its ``outcome`` goes to
    :func:`interpret_outcome`.
    """
    try:
        return _decode_answer(raw)
    except (msgspec.DecodeError, RecursionError):
        pass
    try:
        return schema.decode(raw, schema.RequestPermissionResponse)
    except msgspec.ValidationError as exc:
        logger.warning("malformed permission response (%s); treating it as not approved", exc)
        return None
