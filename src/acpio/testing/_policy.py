"""How the mock client answers ``session/request_permission``: permission policies.

How this works: a :class:`PermissionPolicy` turns one :class:`PermissionRequest`
into the ``outcome`` object of the response (``{"outcome": "selected",
"optionId": ...}``, ``{"outcome": "cancelled"}``, or anything else for tests of
unknown outcomes). A policy may also never answer: the request then stays
pending until the agent withdraws it with ``$/cancel_request``, which the
client answers with the ``cancelled`` outcome, as the protocol requires of a
client. Every request is recorded, with the answer and when it was given, in
``MockClient.permission_requests``.

A policy that cannot answer (``allow()`` when no allow option was offered, a
``scripted`` queue that ran out, a callable that raised) fails the test: the
client answers ``cancelled`` so the agent is not left waiting, and raises the
:class:`PermissionPolicyError` from its next wait and when it closes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Final, TypeAlias

import anyio

from .. import schema
from .._errors import AcpError
from .._json import as_list, as_object, get_field
from ._policy_base import AnswerPolicy, JsonObject

__all__ = [
    "ALLOW_KINDS",
    "REJECT_KINDS",
    "PermissionPolicy",
    "PermissionPolicyError",
    "PermissionRequest",
    "PolicyDecision",
]

ALLOW_KINDS: Final = ("allow_once", "allow_always")
REJECT_KINDS: Final = ("reject_once", "reject_always")
CANCELLED_OUTCOME: Final = {"outcome": "cancelled"}


class PermissionPolicyError(AcpError):
    """Raised when a permission policy could not answer a request the way the test asked.

    For example ``allow()`` when the agent offered no allow option, or a
    ``scripted`` policy with no answers left. The agent was answered
    ``cancelled`` (never approval).
    """


@dataclass(eq=False)
class PermissionRequest:
    """One ``session/request_permission`` the agent sent, and what the client answered.

    ``params`` are the request's params as received (JSON). ``answer`` is the
    ``outcome`` object the client sent (``None`` while pending or when the
    request was never answered); ``cancelled_by_agent`` is true when the agent
    withdrew the request with ``$/cancel_request`` while it was pending (the
    answer is then ``{"outcome": "cancelled"}``, as the protocol requires).
    Times are ``time.monotonic()`` values.
    """

    request_id: int | str
    params: JsonObject
    received_at: float
    answer: JsonObject | None = None
    answered_at: float | None = None
    cancelled_by_agent: bool = False
    cancelled_by_client: bool = False
    """v1: the client answered ``cancelled`` because it cancelled the turn (``session/cancel``)."""
    _done: anyio.Event = field(default_factory=anyio.Event, repr=False)

    @property
    def session_id(self) -> str | None:
        """The ``sessionId`` of the request."""
        value = self.params.get("sessionId")
        return value if isinstance(value, str) else None

    def _v1_detail(self, key: str) -> object:
        # v1 has no title or command subject: an acpio agent keeps the draft v2 request's in
        # toolCall._meta.acpio; otherwise the tool call's own field is the best there is.
        tool_call = as_object(self.params.get("toolCall"))
        if tool_call is None:
            return None
        kept = get_field(get_field(tool_call, "_meta"), "acpio")
        detail = get_field(kept, key)
        if isinstance(detail, str):
            return detail
        return tool_call.get(key) if key == "title" else None

    @property
    def title(self) -> str | None:
        """The ``title`` shown with the prompt (v1: see `_v1_detail`)."""
        value = self.params.get("title")
        if value is None:
            value = self._v1_detail("title")
        return value if isinstance(value, str) else None

    @property
    def options(self) -> list[JsonObject]:
        """The offered options (``optionId``, ``name``, ``kind``), as received."""
        return [
            option
            for item in as_list(self.params.get("options")) or ()
            if (option := as_object(item)) is not None
        ]

    @property
    def option_ids(self) -> list[str]:
        """The ``optionId`` of every offered option, in order."""
        return [i for o in self.options if isinstance(i := o.get("optionId"), str)]

    @property
    def subject(self) -> JsonObject | None:
        """The ``subject`` (``tool_call`` or ``command``), if any."""
        return as_object(self.params.get("subject"))

    @property
    def tool_call_id(self) -> str | None:
        """The tool call the request is about (from either kind of subject), if any."""
        subject = self.subject
        if subject is None:
            subject = self.params  # v1: {sessionId, toolCall, options}
        value = subject.get("toolCallId")
        if value is None:
            value = get_field(subject.get("toolCall"), "toolCallId")
        return value if isinstance(value, str) else None

    @property
    def command(self) -> str | None:
        """The command of a ``command`` subject, if any (v1: see `_v1_detail`)."""
        subject = self.subject
        value = subject.get("command") if subject is not None else self._v1_detail("command")
        return value if isinstance(value, str) else None

    @property
    def pending(self) -> bool:
        """True until the request was answered."""
        return self.answer is None

    @property
    def selected_option_id(self) -> str | None:
        """The ``optionId`` the client selected, if it selected one."""
        answer = self.answer
        if answer is None or answer.get("outcome") != "selected":
            return None
        value = answer.get("optionId")
        return value if isinstance(value, str) else None

    def option_of_kind(self, *kinds: str) -> str | None:
        """The ``optionId`` of the first offered option whose kind is one of ``kinds``."""
        for option in self.options:
            option_id = option.get("optionId")
            if option.get("kind") in kinds and isinstance(option_id, str):
                return option_id
        return None

    def describe(self) -> str:
        """A one-line description for messages."""
        offered = ", ".join(f"{o.get('optionId')}:{o.get('kind')}" for o in self.options)
        return f"permission request {self.request_id!r} {self.title!r} (options: {offered})"

    def record_answer(self, answer: JsonObject, when: float) -> None:
        """Record the ``outcome`` the client sent at ``when`` (the client calls it)."""
        self.answer = answer
        self.answered_at = when
        self._done.set()

    async def wait_answered(self) -> None:
        """Wait until the client answered (or the connection ended)."""
        await self._done.wait()


class PermissionPolicy(AnswerPolicy[PermissionRequest]):
    """Decides the answer to each permission request; build one with the class methods.

    * :meth:`allow` / :meth:`reject`: select the first offered option of an
      allow (reject) kind;
    * :meth:`select`: select a given option id, even one that was never
      offered (agents must not treat that as approval);
    * :meth:`cancelled`: answer the ``cancelled`` outcome;
    * :meth:`raw`: answer any outcome object, e.g. ``{"outcome": "_maybe"}``;
    * :meth:`never`: never answer; the request stays pending until the agent
      sends ``$/cancel_request`` (then it is answered ``cancelled``);
    * :meth:`scripted`: one policy per request, in order;
    * :meth:`call`: a function (sync or async) of the :class:`PermissionRequest`.

    :meth:`decide` gives the ``outcome`` object for a request and raises
    :class:`PermissionPolicyError` when the policy cannot answer as asked.
    """

    __slots__ = ()

    _error: ClassVar[type[AcpError]] = PermissionPolicyError

    _expected: ClassVar[str] = (
        "a permission policy must return an outcome object (a mapping such as "
        '{"outcome": "cancelled"}, a schema outcome, or a PermissionPolicy)'
    )

    @classmethod
    def _answer_of(cls, decision: object) -> JsonObject:
        if isinstance(decision, schema.AcpStruct | schema.UnknownVariant):
            built = as_object(schema.to_builtins(decision))
            if built is not None:
                return built
        return super()._answer_of(decision)

    # ----------------------------------------------------------- constructors

    @classmethod
    def allow(cls, *kinds: str) -> PermissionPolicy:
        """Select the first offered option of kind ``allow_once`` or ``allow_always``.

        Pass ``kinds`` to choose among other kinds, e.g. ``allow("allow_always")``.
        Fails the test when no such option was offered.
        """
        return cls._by_kind("allow", kinds or ALLOW_KINDS)

    @classmethod
    def reject(cls, *kinds: str) -> PermissionPolicy:
        """Select the first offered option of kind ``reject_once`` or ``reject_always``.

        Fails the test when no such option was offered.
        """
        return cls._by_kind("reject", kinds or REJECT_KINDS)

    @classmethod
    def _by_kind(cls, verb: str, kinds: Sequence[str]) -> PermissionPolicy:
        async def decide(request: PermissionRequest) -> JsonObject:
            option_id = request.option_of_kind(*kinds)
            if option_id is None:
                raise PermissionPolicyError(
                    f"{verb}(): the agent offered no option of kind {' or '.join(kinds)} "
                    f"in {request.describe()}"
                )
            return {"outcome": "selected", "optionId": option_id}

        return cls(decide, f"{verb}({', '.join(map(repr, kinds))})")

    @classmethod
    def select(cls, option_id: str) -> PermissionPolicy:
        """Select ``option_id`` whether or not it was offered."""
        return cls._fixed({"outcome": "selected", "optionId": option_id}, f"select({option_id!r})")

    @classmethod
    def cancelled(cls) -> PermissionPolicy:
        """Answer ``{"outcome": "cancelled"}`` (the user dismissed the prompt)."""
        return cls._fixed(CANCELLED_OUTCOME, "cancelled()")

    @classmethod
    def raw(cls, outcome: Mapping[str, object]) -> PermissionPolicy:
        """Answer exactly ``{"outcome": outcome}``; for custom, future or malformed outcomes."""
        return cls._fixed(outcome, f"raw({dict(outcome)!r})")

    @classmethod
    def never(cls) -> PermissionPolicy:
        """Never answer; the agent must withdraw the request with ``$/cancel_request``.

        When it does, the client answers ``{"outcome": "cancelled"}`` (the
        protocol requires the client to answer cancelled requests that way).
        """
        return cls._never()

    @classmethod
    def scripted(cls, answers: Sequence[PermissionPolicy]) -> PermissionPolicy:
        """Answer the first request with ``answers[0]``, the second with ``answers[1]``, ...

        A request beyond the last answer fails the test.
        """
        return cls._scripted(answers)

    @classmethod
    def call(
        cls,
        function: Callable[[PermissionRequest], PolicyDecision | Awaitable[PolicyDecision]],
    ) -> PermissionPolicy:
        """Ask ``function`` (sync or async): it returns an outcome object or a policy."""
        return cls._call(function)


#: What a policy callable may return: an ``outcome`` object (a mapping or a
#: schema outcome such as ``schema.SelectedPermissionOutcome``), or another
#: policy to delegate this request to.
PolicyDecision: TypeAlias = (
    Mapping[str, object] | schema.RequestPermissionOutcome | PermissionPolicy
)


def as_policy(
    value: PermissionPolicy
    | Callable[[PermissionRequest], PolicyDecision | Awaitable[PolicyDecision]],
) -> PermissionPolicy:
    """``value`` itself when it is a policy, else :meth:`PermissionPolicy.call` of it."""
    if isinstance(value, PermissionPolicy):
        return value
    if callable(value):
        return PermissionPolicy.call(value)
    raise TypeError(f"expected a PermissionPolicy or a callable, got {value!r}")
