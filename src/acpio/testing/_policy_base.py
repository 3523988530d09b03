"""What permission and elicitation policies share: the policy combinators, written once.

How this works: a policy is a named async function from one recorded request to
the JSON object the mock client answers it with. :class:`AnswerPolicy` holds that
function and builds the combinators every kind of policy has: a fixed answer,
never answering, one policy per request in order, and a user's function (sync or
async) that returns an answer or another policy to delegate to.
:class:`~acpio.testing.PermissionPolicy` and :class:`~acpio.testing.ElicitationPolicy`
subclass it with their request type, their error, how a function's return is
read (:meth:`AnswerPolicy._answer_of`), and the public constructors that name
these combinators (``raw``, ``never``, ``scripted``, ``call``) with their own
parameter names and documentation.
"""

from __future__ import annotations

import inspect
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import ClassVar, Generic, Protocol, Self, TypeVar, cast

import anyio
import msgspec

from .._errors import AcpError
from .._json import JsonObject, as_object, decode_json

__all__ = ["AnswerPolicy", "JsonObject"]


class _Described(Protocol):
    def describe(self) -> str: ...


RequestT = TypeVar("RequestT", bound=_Described)


class AnswerPolicy(Generic[RequestT]):
    """Decides the answer to each request of one kind; subclasses name the constructors.

    A policy answers each request with a fresh JSON object (changing one never
    changes the next), or never (:meth:`_never`); a policy that cannot answer as
    the test asked raises the subclass's :attr:`_error`.
    """

    __slots__ = ("_decide", "name")

    #: What a policy of this kind raises when it cannot answer as the test asked.
    _error: ClassVar[type[AcpError]] = AcpError
    #: What a user's function must return, as :attr:`_error` says when it returned something else.
    _expected: ClassVar[str] = "a policy must return an answer object or a policy"

    def __init__(self, decide: Callable[[RequestT], Awaitable[JsonObject]], name: str) -> None:
        self._decide = decide
        self.name: str = name

    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    async def decide(self, request: RequestT) -> JsonObject:
        """The object to answer ``request`` with (may wait forever: ``never``).

        :raises AcpError: :class:`~acpio.testing.PermissionPolicyError` or
            :class:`~acpio.testing.ElicitationPolicyError` (the policy's kind) when it
            cannot answer as asked.
        """
        return await self._decide(request)

    @classmethod
    def _answer_of(cls, decision: object) -> JsonObject:
        """The answer a user's function returned (not a policy), as a JSON object.

        :raises AcpError: :attr:`_error`, saying :attr:`_expected`, for a value that is no answer.
        """
        if isinstance(decision, Mapping):
            mapping = cast("Mapping[object, object]", decision)
            return {str(key): value for key, value in mapping.items()}
        raise cls._error(f"{cls._expected}, got {decision!r}")

    # ----------------------------------------------------------- combinators

    @classmethod
    def _fixed(cls, answer: Mapping[str, object], name: str) -> Self:
        """Answer every request with (a fresh copy of) ``answer``."""
        frozen = msgspec.json.encode(dict(answer))

        async def decide(request: RequestT) -> JsonObject:
            value = as_object(decode_json(frozen))
            assert value is not None
            return value

        return cls(decide, name)

    @classmethod
    def _never(cls) -> Self:
        """Never answer: the request stays pending until the agent withdraws it."""

        async def decide(request: RequestT) -> JsonObject:
            await anyio.sleep_forever()
            raise AssertionError("unreachable")  # pragma: no cover

        return cls(decide, "never()")

    @classmethod
    def _scripted(cls, answers: Sequence[AnswerPolicy[RequestT]]) -> Self:
        """Answer the n-th request as ``answers[n]`` does; one more raises :attr:`_error`."""
        queue = deque(answers)
        total = len(queue)

        async def decide(request: RequestT) -> JsonObject:
            if not queue:
                raise cls._error(
                    f"scripted(): all {total} scripted answers were used; "
                    f"unexpected {request.describe()}"
                )
            return await queue.popleft().decide(request)

        return cls(decide, f"scripted({list(answers)!r})")

    @classmethod
    def _call(cls, function: Callable[[RequestT], object]) -> Self:
        """Ask ``function`` (sync or async): an answer (read by :meth:`_answer_of`) or a policy."""

        async def decide(request: RequestT) -> JsonObject:
            # Checked at run time: a user's function may return anything.
            decision = function(request)
            if inspect.isawaitable(decision):
                decision = await decision
            if isinstance(decision, cls):
                return await decision.decide(request)
            return cls._answer_of(decision)

        return cls(decide, f"call({getattr(function, '__qualname__', repr(function))})")
