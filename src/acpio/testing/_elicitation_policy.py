"""How the mock client answers ``elicitation/create``: elicitation policies.

How this works: an :class:`ElicitationPolicy` turns one :class:`ElicitationRequest`
into the response object (``{"action": "accept", "content": {...}}``,
``{"action": "decline"}``, ``{"action": "cancel"}``, or anything else for tests
of unknown actions), like :class:`~acpio.testing.PermissionPolicy` does for
permission requests. :meth:`ElicitationPolicy.never` leaves the request
pending until the agent withdraws it with ``$/cancel_request`` (the request is
then answered ``-32800``, request cancelled). Every request is recorded, with
its answer, in ``MockClient.elicitation_requests``; every
``elicitation/complete`` the agent sends marks the matching URL request
``completed``. A policy that raises fails the test; the agent then gets
``{"action": "cancel"}``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, TypeAlias

import anyio
import msgspec

from .._errors import AcpError
from .._json import as_object
from ._policy_base import AnswerPolicy, JsonObject

__all__ = ["ElicitationPolicy", "ElicitationPolicyError", "ElicitationRequest"]


class ElicitationPolicyError(AcpError):
    """Raised when an elicitation policy could not answer (a ``scripted`` list ran out,
    a function raised); the agent was answered ``{"action": "cancel"}``."""


@dataclass(eq=False)
class ElicitationRequest:
    """One ``elicitation/create`` the agent sent, and what the client answered.

    ``params`` are the request's params as received (JSON); ``answer`` is the
    response object the client sent (``None`` while pending, or when the agent
    withdrew the request: ``cancelled_by_agent`` is then true). ``completed``
    becomes true when the agent sent ``elicitation/complete`` for a URL request.
    """

    request_id: int | str
    params: JsonObject
    answer: JsonObject | None = None
    cancelled_by_agent: bool = False
    completed: bool = False
    _done: anyio.Event = field(default_factory=anyio.Event, repr=False)

    def _get(self, key: str) -> str | None:
        value = self.params.get(key)
        return value if isinstance(value, str) else None

    @property
    def mode(self) -> str | None:
        """``"form"`` or ``"url"`` (or an unknown mode, as sent)."""
        return self._get("mode")

    @property
    def message(self) -> str | None:
        """The message shown to the user."""
        return self._get("message")

    @property
    def session_id(self) -> str | None:
        """The ``sessionId`` the request is scoped to, if any."""
        return self._get("sessionId")

    @property
    def tool_call_id(self) -> str | None:
        """The ``toolCallId`` the request is scoped to, if any."""
        return self._get("toolCallId")

    @property
    def url(self) -> str | None:
        """The URL of a URL-mode request."""
        return self._get("url")

    @property
    def elicitation_id(self) -> str | None:
        """The ``elicitationId`` of a URL-mode request."""
        return self._get("elicitationId")

    @property
    def requested_schema(self) -> JsonObject:
        """The ``requestedSchema`` of a form request (empty for URL mode)."""
        return as_object(self.params.get("requestedSchema")) or {}

    @property
    def fields(self) -> list[str]:
        """The property names of a form request, in order."""
        return list(as_object(self.requested_schema.get("properties")) or ())

    @property
    def pending(self) -> bool:
        """True until the request was answered or withdrawn."""
        return not self._done.is_set()

    def describe(self) -> str:
        """A one-line description for messages."""
        return f"elicitation request {self.request_id!r} ({self.mode}) {self.message!r}"

    def record_answer(self, answer: JsonObject | None) -> None:
        """Record the answer the client sent (``None``: withdrawn; the client calls it)."""
        self.answer = answer
        self._done.set()

    async def wait_answered(self) -> None:
        """Wait until the client answered or the agent withdrew the request."""
        await self._done.wait()


#: What a policy callable may return: a response object, or a policy to delegate to.
_Decision: TypeAlias = "Mapping[str, object] | ElicitationPolicy"


class ElicitationPolicy(AnswerPolicy[ElicitationRequest]):
    """Decides the answer to each elicitation request; build one with the class methods.

    * :meth:`accept`: accept, with ``content`` for a form (the form's
      ``default`` values fill what ``content`` leaves out);
    * :meth:`decline` / :meth:`dismiss`: the ``decline`` / ``cancel`` actions;
    * :meth:`raw`: any response object, e.g. ``{"action": "_later"}``;
    * :meth:`never`: never answer (the agent must withdraw the request);
    * :meth:`scripted`: one policy per request, in order;
    * :meth:`call`: a function (sync or async) of the :class:`ElicitationRequest`
      returning a response object or a policy.

    :meth:`decide` gives the response object for a request and raises
    :class:`ElicitationPolicyError` when the policy cannot answer as asked.
    """

    __slots__ = ()

    _error: ClassVar[type[AcpError]] = ElicitationPolicyError

    _expected: ClassVar[str] = "an elicitation policy must return a response object or a policy"

    @classmethod
    def accept(cls, content: Mapping[str, object] | None = None) -> ElicitationPolicy:
        """Accept; a form gets ``content`` plus the defaults of the fields it leaves out."""
        frozen = msgspec.json.encode(dict(content or {}))

        async def decide(request: ElicitationRequest) -> JsonObject:
            if request.mode != "form":
                return {"action": "accept"}
            values: JsonObject = {}
            properties = as_object(request.requested_schema.get("properties")) or {}
            for name, declared in properties.items():
                prop = as_object(declared)
                if prop is not None and "default" in prop:
                    values[name] = prop["default"]
            values.update(msgspec.json.decode(frozen))
            return {"action": "accept", "content": values}

        return cls(decide, f"accept({dict(content or {})!r})")

    @classmethod
    def decline(cls) -> ElicitationPolicy:
        """Answer ``{"action": "decline"}`` (the user said no)."""
        return cls.raw({"action": "decline"})

    @classmethod
    def dismiss(cls) -> ElicitationPolicy:
        """Answer ``{"action": "cancel"}`` (the user closed the request without choosing)."""
        return cls.raw({"action": "cancel"})

    @classmethod
    def raw(cls, response: Mapping[str, object]) -> ElicitationPolicy:
        """Answer exactly ``response``; for custom, future or malformed answers."""
        return cls._fixed(response, f"raw({dict(response)!r})")

    @classmethod
    def never(cls) -> ElicitationPolicy:
        """Never answer; the agent must withdraw the request with ``$/cancel_request``."""
        return cls._never()

    @classmethod
    def scripted(cls, answers: Sequence[ElicitationPolicy]) -> ElicitationPolicy:
        """Answer the n-th request with ``answers[n]``; one more fails the test."""
        return cls._scripted(answers)

    @classmethod
    def call(
        cls,
        function: Callable[[ElicitationRequest], _Decision | Awaitable[_Decision]],
    ) -> ElicitationPolicy:
        """Ask ``function`` (sync or async): it returns a response object or a policy."""
        return cls._call(function)
