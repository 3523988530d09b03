"""The client side of the mock client's connection: every line seen, every agent call served.

How this works: :meth:`ClientHandler.observe` is the connection's raw-message
tap, so every line in either direction passes through it before it is sent or
handled: it is recorded in the :class:`Transcript`, fed to the
:class:`ConformanceChecker` (a violation fails the test in strict mode), and
correlated: the response to a request a :class:`Probe` watches notes how many
session updates preceded it, and the agent's ``$/cancel_request`` for a
pending permission request marks it withdrawn. The prompts, cancels, closes
and deletes the client writes for a known session, and the answers to those
prompts, are reported to that :class:`ClientSession` in wire order (its turns
are found from them). Every line also wakes the client's waiters, including
lines the client writes itself (its answers), so a test waiting for them
needs no polling.

``session/update`` notifications are decoded and folded into their session in
arrival order; ``session/request_permission`` is answered by the client's
:class:`PermissionPolicy` in the request's own task; anything else the agent
calls is answered ``-32601``.
"""

from __future__ import annotations

import contextlib
import time
from typing import Final, Protocol

import anyio
import msgspec

from .. import schema
from .._errors import RequestError
from .._json import as_object, decode_json, get_field
from .._rpc.connection import RequestContext
from ._client_session import ClientSessions, SessionTurns
from ._conformance import ConformanceChecker
from ._elicitation_policy import ElicitationPolicy, ElicitationPolicyError, ElicitationRequest
from ._policy import CANCELLED_OUTCOME, PermissionPolicy, PermissionPolicyError, PermissionRequest
from ._rules import ConformanceError, Violation
from ._transcript import AGENT_TO_CLIENT, CLIENT_TO_AGENT, Direction, Transcript
from ._v1_client import V1Client, request_params

__all__ = ("ClientHandler", "HandlerHost")

_decode_json = decode_json


class _Peek(msgspec.Struct):
    """The fields of a line the client correlates (the rest stays raw)."""

    id: object = None
    method: object = None
    params: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    error: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


class _CancelParams(msgspec.Struct, rename="camel"):
    request_id: object = None


class _SessionParams(msgspec.Struct, rename="camel"):
    session_id: object = None


_decode_peek = msgspec.json.Decoder(_Peek).decode
_decode_cancel = msgspec.json.Decoder(_CancelParams).decode
_decode_session = msgspec.json.Decoder(_SessionParams).decode
# Client lines that shape a session's turns: a prompt, and what cancels its work.
_TURN_METHODS: Final = frozenset(
    {"session/prompt", "session/cancel", "session/close", "session/delete"}
)


class HandlerHost(Protocol):
    """What the handler reads of the mock client it serves (its public state)."""

    @property
    def strict(self) -> bool:
        """Whether a protocol violation fails the test."""
        ...

    @property
    def checker(self) -> ConformanceChecker:
        """The conformance checker every line is fed to."""
        ...

    @property
    def transcript(self) -> Transcript:
        """The record of every line."""
        ...

    @property
    def failure(self) -> BaseException | None:
        """The first failure the client recorded."""
        ...

    @property
    def v1(self) -> V1Client | None:
        """The client's v1 side (``None`` on v2)."""
        ...

    @property
    def permission_policy(self) -> PermissionPolicy:
        """Answers permission requests."""
        ...

    @property
    def elicitation_policy(self) -> ElicitationPolicy | None:
        """Answers ``elicitation/create`` (``None``: not served)."""
        ...

    @property
    def permission_requests(self) -> list[PermissionRequest]:
        """Every permission request, in arrival order."""
        ...

    @property
    def elicitation_requests(self) -> list[ElicitationRequest]:
        """Every elicitation request, in arrival order."""
        ...


class ClientHandler:
    """What the mock client does with each line (see the module docstring)."""

    def __init__(self, client: HandlerHost, sessions: ClientSessions) -> None:
        self._client = client
        self._sessions = sessions
        self._link = sessions.link
        self.pending_permissions: dict[int | str, PermissionRequest] = {}
        """Permission requests the policy has not answered yet, by request id."""
        self.pending_elicitations: dict[int | str, ElicitationRequest] = {}
        """Elicitation requests not answered yet, by request id."""
        self.prompts: dict[int, SessionTurns] = {}
        """The session of each ``session/prompt`` sent and not answered yet, by request id."""
        self.permission_scopes: dict[int | str, anyio.CancelScope] = {}
        """v1: the scope of each pending permission's policy, cancelled by ``session/cancel``."""
        self._violations_seen = 0
        self.received = 0
        """How many lines came from the agent (a remote client waits for its replay to be seen)."""

    def unseen_violation(self) -> Violation | None:
        """The first violation found since the last call, if any (all count as seen now)."""
        violations = self._client.checker.violations
        first = (
            violations[self._violations_seen] if len(violations) > self._violations_seen else None
        )
        self._violations_seen = len(violations)
        return first

    # ------------------------------------------------------------------ lines

    def observe(self, direction: str, line: bytes) -> None:
        """Every line, both ways, before it is sent or handled."""
        client = self._client
        wire: Direction = CLIENT_TO_AGENT if direction == "out" else AGENT_TO_CLIENT
        entry = client.transcript.record(wire, line)
        try:
            client.checker.observe(wire, entry.data)
        except Exception as exc:
            self._link.fail(exc)
        violation = self.unseen_violation()
        if client.strict and violation is not None and client.failure is None:
            self._link.fail(ConformanceError(violation))
        if wire == AGENT_TO_CLIENT:
            self.received += 1
            self._correlate(entry.data)
        else:
            self._track_sent(entry.data)
        # Also for the client's own lines: an answer is written after the change it
        # answers was announced, and a test may be waiting to see it.
        self._link.changed()

    def _correlate(self, data: bytes) -> None:
        try:
            peek = _decode_peek(data)
        except (msgspec.DecodeError, RecursionError):
            return
        if peek.method is None:
            if type(peek.id) is not int:
                return
            probe = self._sessions.probes.pop(peek.id, None)
            if probe is not None:
                probe.position = len(probe.session.updates)
            turns = self.prompts.pop(peek.id, None)
            v1 = self._client.v1
            if v1 is not None and turns is not None:
                self._v1_answered(v1, peek.id, data)
            elif turns is not None:
                turns.prompt_answered(peek.id, accepted=peek.error is msgspec.UNSET)
        elif peek.method == schema.CANCEL_REQUEST_METHOD and isinstance(peek.params, msgspec.Raw):
            try:
                request_id = _decode_cancel(peek.params).request_id
            except (msgspec.DecodeError, RecursionError):
                return
            if type(request_id) is int or type(request_id) is str:
                elicitation = self.pending_elicitations.get(request_id)
                if elicitation is not None:
                    elicitation.cancelled_by_agent = True
                record = self.pending_permissions.get(request_id)
                if record is not None:
                    # Seen before the connection cancels the handler, which then
                    # answers "cancelled" instead of -32800.
                    record.cancelled_by_agent = True

    @staticmethod
    def _v1_answered(v1: V1Client, request_id: int, data: bytes) -> None:
        try:
            message = _decode_json(data)
        except (msgspec.DecodeError, RecursionError):
            return
        message = as_object(message)
        if message is not None:
            v1.prompt_answered(request_id, message.get("result"), message.get("error"))

    def _track_sent(self, data: bytes) -> None:
        if b'"session/' not in data:
            return  # most client lines are answers to the agent: skip decoding them
        try:
            peek = _decode_peek(data)
            if peek.method not in _TURN_METHODS or not isinstance(peek.params, msgspec.Raw):
                return
            session_id = _decode_session(peek.params).session_id
        except (msgspec.DecodeError, RecursionError):
            return
        turns = self._sessions.known_turns(session_id) if isinstance(session_id, str) else None
        if turns is None:
            return
        if peek.method != "session/prompt":
            turns.cancel_sent()
        elif type(peek.id) is int:
            self.prompts[peek.id] = turns
            turns.prompt_sent(peek.id)
            if self._client.v1 is not None:
                self._client.v1.prompt_sent(turns, peek.id, _decode_json(peek.params))

    # ------------------------------------------------------------ agent calls

    async def on_request(
        self, method: str, params: msgspec.Raw | None, context: RequestContext
    ) -> object:
        """Serve a request from the agent: permission and elicitation requests, and on v1 the
        client services the client offered (terminals, files)."""
        if method == "session/request_permission":
            return await self._answer_permission(params, context)
        if method == "elicitation/create" and self._client.elicitation_policy is not None:
            return await self._answer_elicitation(params, context)
        v1 = self._client.v1
        if v1 is not None and v1.serves(method):
            return await v1.on_request(method, params, context)
        raise RequestError.method_not_found(method)

    async def on_notification(self, method: str, params: msgspec.Raw | None) -> None:
        """Apply ``session/update``; other notifications are only recorded."""
        if method == "session/update" and params is not None:
            v1 = self._client.v1
            if v1 is not None:
                v1.apply_update(params)
                self._link.changed()
            else:
                self._apply_update(params)
        elif method == "elicitation/complete" and params is not None:
            with contextlib.suppress(msgspec.DecodeError, RecursionError):
                done = _decode_json(params)
                elicitation_id = get_field(done, "elicitationId")
                for request in self._client.elicitation_requests:
                    if request.elicitation_id == elicitation_id:
                        request.completed = True
            self._link.changed()

    def _apply_update(self, params: msgspec.Raw) -> None:
        try:
            notification = schema.decode(params, schema.UpdateSessionNotification)
        except (msgspec.DecodeError, RecursionError):
            return  # the conformance checker reports it; the transcript keeps it
        self._sessions.turns(notification.session_id).receive(notification.update)
        self._link.changed()

    async def _answer_permission(
        self, params: msgspec.Raw | None, context: RequestContext
    ) -> object:
        client = self._client
        raw = request_params(params)
        record = PermissionRequest(context.id, raw, time.monotonic())
        client.permission_requests.append(record)
        self.pending_permissions[context.id] = record
        if client.v1 is not None:
            client.v1.apply_permission_tool_call(raw)
        else:
            self._apply_subject(params)
        self._link.changed()
        outcome: dict[str, object] = dict(CANCELLED_OUTCOME)
        scope = self.permission_scopes[context.id] = anyio.CancelScope()
        try:
            with scope:
                outcome = await self._decide(record)
            if scope.cancelled_caught:
                outcome = dict(CANCELLED_OUTCOME)  # v1: the client's own session/cancel
        finally:
            self.pending_permissions.pop(context.id, None)
            self.permission_scopes.pop(context.id, None)
        record.record_answer(outcome, time.monotonic())
        self._link.changed()
        return {"outcome": outcome}

    def _apply_subject(self, params: msgspec.Raw | None) -> None:
        with contextlib.suppress(msgspec.DecodeError):
            typed = schema.decode(params or b"{}", schema.RequestPermissionRequest)
            subject = typed.subject
            if isinstance(subject, schema.ToolCallPermissionSubject):
                # Editors show the subject like a tool_call_update before prompting.
                self._sessions.get(typed.session_id).view.apply_tool_call(subject.tool_call)

    async def _decide(self, record: PermissionRequest) -> dict[str, object]:
        client = self._client
        try:
            return await client.permission_policy.decide(record)
        except anyio.get_cancelled_exc_class():
            if not record.cancelled_by_agent:
                raise
            return dict(CANCELLED_OUTCOME)
        except Exception as exc:
            # Never approval: the agent gets "cancelled", the test gets the error.
            failure = (
                exc
                if isinstance(exc, PermissionPolicyError)
                else PermissionPolicyError(
                    f"the permission policy {client.permission_policy!r} raised {exc!r} "
                    f"for {record.describe()}"
                )
            )
            self._link.fail(failure, cause=exc if failure is not exc else None)
            return dict(CANCELLED_OUTCOME)

    async def _answer_elicitation(
        self, params: msgspec.Raw | None, context: RequestContext
    ) -> object:
        client = self._client
        policy = client.elicitation_policy
        assert policy is not None
        raw = request_params(params)
        record = ElicitationRequest(context.id, raw)
        client.elicitation_requests.append(record)
        self.pending_elicitations[context.id] = record
        self._link.changed()
        answer: dict[str, object] | None = None
        try:
            try:
                answer = await policy.decide(record)
            except Exception as exc:
                failure = (
                    exc
                    if isinstance(exc, ElicitationPolicyError)
                    else ElicitationPolicyError(
                        f"the elicitation policy {policy!r} raised {exc!r} for {record.describe()}"
                    )
                )
                self._link.fail(failure, cause=exc if failure is not exc else None)
                answer = {"action": "cancel"}
        finally:
            self.pending_elicitations.pop(context.id, None)
            # Withdrawn by the agent: the connection answers -32800 (request cancelled).
            record.record_answer(answer)
            self._link.changed()
        return answer
