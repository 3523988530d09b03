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
from typing import TYPE_CHECKING, Final

import anyio
import msgspec

from .. import schema
from .._connection import RequestContext
from .._errors import RequestError
from ._elicitation_policy import ElicitationPolicyError, ElicitationRequest
from ._policy import CANCELLED_OUTCOME, PermissionPolicyError, PermissionRequest
from ._rules import ConformanceError, Violation
from ._transcript import AGENT_TO_CLIENT, CLIENT_TO_AGENT, Direction

if TYPE_CHECKING:
    from ._client import MockClient
    from ._client_session import ClientSession
    from ._v1_client import V1Client

__all__ = ("ClientHandler", "Probe")

_decode_json = msgspec.json.Decoder().decode


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


class Probe:
    """Notes how many updates a session had when the response to one request arrived.

    Updates that precede a response on the wire were applied before the
    response was read, so this position splits "before" from "after" exactly
    (replayed history, the updates preceding a prompt's acceptance). Pass it as
    the request's ``on_sent``.
    """

    def __init__(self, handler: ClientHandler, session: ClientSession) -> None:
        self.handler = handler
        self.session = session
        self.position: int | None = None
        """The number of the session's updates when the response arrived."""
        self.request_id: int | None = None
        """The id of the request, once it was sent."""

    def __call__(self, request_id: int) -> None:
        self.request_id = request_id
        self.handler.probes[request_id] = self


class ClientHandler:
    """What the mock client does with each line (see the module docstring)."""

    def __init__(self, client: MockClient) -> None:
        self._client = client
        self.probes: dict[int, Probe] = {}
        """Probes by the id of the request they watch, until its response arrives."""
        self.pending_permissions: dict[int | str, PermissionRequest] = {}
        """Permission requests the policy has not answered yet, by request id."""
        self.pending_elicitations: dict[int | str, ElicitationRequest] = {}
        """Elicitation requests not answered yet, by request id."""
        self.prompts: dict[int, ClientSession] = {}
        """The session of each ``session/prompt`` sent and not answered yet, by request id."""
        self.permission_scopes: dict[int | str, anyio.CancelScope] = {}
        """v1: the scope of each pending permission's policy, cancelled by ``session/cancel``."""
        self._violations_seen = 0

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
            client._fail(exc)
        violation = self.unseen_violation()
        if client.strict and violation is not None and client.failure is None:
            client._fail(ConformanceError(violation))
        if wire == AGENT_TO_CLIENT:
            self._correlate(entry.data)
        else:
            self._track_sent(entry.data)
        # Also for the client's own lines: an answer is written after the change it
        # answers was announced, and a test may be waiting to see it.
        client._changed()

    def _correlate(self, data: bytes) -> None:
        try:
            peek = _decode_peek(data)
        except (msgspec.DecodeError, RecursionError):
            return
        if peek.method is None:
            if type(peek.id) is not int:
                return
            probe = self.probes.pop(peek.id, None)
            if probe is not None:
                probe.position = len(probe.session.updates)
            session = self.prompts.pop(peek.id, None)
            v1 = self._client.v1
            if v1 is not None and session is not None:
                self._v1_answered(v1, peek.id, data)
            elif session is not None:
                session._prompt_answered(peek.id, accepted=peek.error is msgspec.UNSET)
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
        if isinstance(message, dict):
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
        session = self._client.sessions.get(session_id) if isinstance(session_id, str) else None
        if session is None:
            return
        if peek.method != "session/prompt":
            session._cancel_sent()
        elif type(peek.id) is int:
            self.prompts[peek.id] = session
            session._prompt_sent(peek.id)
            if self._client.v1 is not None:
                self._client.v1.prompt_sent(session, peek.id, _decode_json(peek.params))

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
                self._client._changed()
            else:
                self._apply_update(params)
        elif method == "elicitation/complete" and params is not None:
            with contextlib.suppress(msgspec.DecodeError, RecursionError):
                done = _decode_json(params)
                elicitation_id = done.get("elicitationId") if isinstance(done, dict) else None
                for request in self._client.elicitation_requests:
                    if request.elicitation_id == elicitation_id:
                        request.completed = True
            self._client._changed()

    def _apply_update(self, params: msgspec.Raw) -> None:
        try:
            notification = schema.decode(params, schema.UpdateSessionNotification)
        except (msgspec.DecodeError, RecursionError):
            return  # the conformance checker reports it; the transcript keeps it
        self._client._session(notification.session_id)._receive(notification.update)
        self._client._changed()

    async def _answer_permission(
        self, params: msgspec.Raw | None, context: RequestContext
    ) -> object:
        client = self._client
        try:
            raw = _decode_json(params) if params is not None else {}
        except (msgspec.DecodeError, RecursionError) as exc:
            raise RequestError.invalid_params(str(exc)) from None
        if not isinstance(raw, dict):
            raise RequestError.invalid_params("params must be an object")
        record = PermissionRequest(context.id, raw, time.monotonic())
        client.permission_requests.append(record)
        self.pending_permissions[context.id] = record
        if client.v1 is not None:
            client.v1.apply_permission_tool_call(raw)
        else:
            self._apply_subject(params)
        client._changed()
        outcome: dict[str, object]
        scope = self.permission_scopes[context.id] = anyio.CancelScope()
        try:
            with scope:
                outcome = await self._decide(record)
            if scope.cancelled_caught:
                outcome = dict(CANCELLED_OUTCOME)  # v1: the client's own session/cancel
        finally:
            self.pending_permissions.pop(context.id, None)
            self.permission_scopes.pop(context.id, None)
        record._resolve(outcome, time.monotonic())
        client._changed()
        return {"outcome": outcome}

    def _apply_subject(self, params: msgspec.Raw | None) -> None:
        client = self._client
        with contextlib.suppress(msgspec.DecodeError):
            typed = schema.decode(params or b"{}", schema.RequestPermissionRequest)
            subject = typed.subject
            if isinstance(subject, schema.ToolCallPermissionSubject):
                # Editors show the subject like a tool_call_update before prompting.
                client._session(typed.session_id).view.apply_tool_call(subject.tool_call)

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
            client._fail(failure, cause=exc if failure is not exc else None)
            return dict(CANCELLED_OUTCOME)

    async def _answer_elicitation(
        self, params: msgspec.Raw | None, context: RequestContext
    ) -> object:
        client = self._client
        policy = client.elicitation_policy
        assert policy is not None
        try:
            raw = _decode_json(params) if params is not None else {}
        except (msgspec.DecodeError, RecursionError) as exc:
            raise RequestError.invalid_params(str(exc)) from None
        if not isinstance(raw, dict):
            raise RequestError.invalid_params("params must be an object")
        record = ElicitationRequest(context.id, raw)
        client.elicitation_requests.append(record)
        self.pending_elicitations[context.id] = record
        client._changed()
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
                client._fail(failure, cause=exc if failure is not exc else None)
                answer = {"action": "cancel"}
        finally:
            self.pending_elicitations.pop(context.id, None)
            # Withdrawn by the agent: the connection answers -32800 (request cancelled).
            record._resolve(answer)
            client._changed()
        return answer
