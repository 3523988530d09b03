"""Protocol rules checked on the wire: a conformance checker for everything an agent sends.

How this works: `ConformanceChecker.observe` is fed every line in both directions, in the order
the client sent or received them (no I/O here: bytes in, violations out). Agent lines are
checked; client lines only update what the checker knows (pending requests, batches, prompts,
cancels). Each rule has a stable ID in `RULES`; a violation names its rule, says what is wrong
and how to fix it, and carries the offending message.

The work is split by layer:

* this module: JSON-RPC envelopes and their correlation (ids, one response per request,
  notifications never answered), the methods the agent may call, permission options, and the
  end-of-stream checks;
* `_batches`: client batches and the agent's array replies;
* `_schema_check`: every agent request, notification and response against the official draft v2
  JSON Schema, with the schema-derived ``custom-values``, ``absolute-paths`` and ``base64``
  findings;
* `_patch_reader`: a diff's git patch text against its changes (``patch-consistency``);
* `_session_rules` (the checker's base class): the rules that span a session's messages (tool
  call titles, the prompt turn, cancellation, session close, background work);
* `_v1_rules`: on a v1 connection (``protocol_version=1``), the v1 schema and the v1 rules in
  place of the draft v2 session rules.

Where the wire cannot tell who was first (a cancel crossing an idle in flight), a rule only
fires when the order proves the agent wrong.
"""

from __future__ import annotations

import importlib.resources
import os
from collections import Counter
from collections.abc import Iterable
from typing import Final, cast

import msgspec

from .._json import as_list, as_object, decode_json
from .._protocol.values import is_known_or_custom
from ..schema import CANCEL_REQUEST_METHOD, KNOWN_PERMISSION_OPTION_KIND
from ._batches import Batches, id_key, valid_id
from ._feature_rules import setup_problems
from ._rules import RULES as RULES
from ._rules import ConformanceError as ConformanceError
from ._rules import ConformanceReport as ConformanceReport
from ._rules import Rule as Rule
from ._rules import RuleResult as RuleResult
from ._rules import Violation as Violation
from ._rules import short as _short
from ._schema_check import Finding, load_schema
from ._session_rules import JsonObject, Request, SessionRules, get
from ._transcript import Direction
from ._v1_rules import V1_HINTS, V1Rules, v1_rule_table

__all__ = (
    "RULES",
    "ConformanceChecker",
    "ConformanceError",
    "ConformanceReport",
    "Direction",
    "Rule",
    "RuleResult",
    "Violation",
)

_AGENT: Final = "agent->client"
_CLIENT: Final = "client->agent"
_KNOWN_OPTION_KINDS: Final = KNOWN_PERMISSION_OPTION_KIND
_NULL_ID_ERRORS: Final = frozenset({-32700, -32600})
# Answers that carry the session's config options and commands.
_SETUP_ANSWERS: Final = frozenset({"session/new", "session/resume", "session/set_config_option"})
_V1_SCHEMA: Final = str(importlib.resources.files("acpio.schema").joinpath("v1", "schema.json"))
_decode_json = decode_json
_encode_json = msgspec.json.encode


def _json(value: object) -> str:
    return _encode_json(value).decode()


def _session_of(params: object) -> str | None:
    session = get(params, "sessionId")
    return session if isinstance(session, str) else None


def _excused(finding: Finding, instance: object) -> bool:
    """Whether a schema-derived finding belongs to another rule or is not the agent's doing."""
    path = list(finding.path)
    if (
        finding.rule == "custom-values"
        and len(path) == 3
        and path[0] == "options"
        and path[2] == "kind"
    ):
        return True  # permission-options reports option kinds itself
    # A user message echoes the client's prompt: unknown blocks in it came from the client.
    return path[:2] == ["update", "content"] and get(instance, "update", "sessionUpdate") in (
        "user_message",
        "user_message_chunk",
    )


class ConformanceChecker(SessionRules):
    """Checks every message an agent sends against the ACP draft v2 rules in `RULES` (or, with
    ``protocol_version=1``, the official v1 schema and `V1_RULES`).

    Feed it every line in both directions with `observe`, in the order the client wrote and
    read them. Client lines are not judged; they tell the checker which requests are pending,
    which prompts and cancels were sent. `violations` lists what was found; a strict checker
    also raises `ConformanceError` on the first one. Call `check_report` at the end of a
    stream for the end-of-stream rules (unanswered requests, unfinished work) and a summary.

    :param schema_path: a draft v2 JSON Schema file to validate against; by default the copy
        vendored in `acpio.schema`.
    :param strict: raise `ConformanceError` on the first violation (it is still recorded).
    :param rules: the rule IDs to check (default: all of `RULES`).
    :param schema_every_n: validate only every n-th agent message against the schema (and the
        schema-derived custom-values/absolute-paths/base64 findings); 1, the default, validates
        all. Meant for soak tests of huge streams; terminal base64 is still checked on every
        message.
    :param protocol_version: the ACP version of the connection: 2 (draft v2, the default) or
        1, which validates against the official v1 schema (vendored in ``acpio/schema/v1``) and
        checks the envelope rules both versions share plus `V1_RULES` instead of the draft v2
        session rules.
    :raises ValueError: for an unknown rule ID, a `schema_every_n` below 1 or an unknown
        protocol version.
    """

    def __init__(
        self,
        schema_path: str | os.PathLike[str] | None = None,
        strict: bool = True,
        *,
        rules: Iterable[str] | None = None,
        schema_every_n: int = 1,
        protocol_version: int = 2,
    ) -> None:
        if protocol_version not in (1, 2):
            raise ValueError(f"protocol_version must be 1 or 2, got {protocol_version!r}")
        self.protocol_version: int = protocol_version
        """The ACP version whose schema and rules this checker applies."""
        self._table = RULES if protocol_version == 2 else v1_rule_table()
        enabled = list(self._table) if rules is None else list(rules)
        unknown = [rule for rule in enabled if rule not in self._table]
        if unknown:
            raise ValueError(f"unknown conformance rules: {', '.join(unknown)}")
        if schema_every_n < 1:
            raise ValueError("schema_every_n must be at least 1")
        if schema_path is None and protocol_version == 1:
            schema_path = _V1_SCHEMA
        self._schema = load_schema(None if schema_path is None else os.fspath(schema_path))
        super().__init__(frozenset(enabled), strict)
        self._v1: V1Rules | None = None
        if protocol_version == 1:
            self._hints = {**self._hints, **V1_HINTS}
            self._v1 = V1Rules(self._violate, self._exercise)
        self._every = schema_every_n
        self._agent_messages = 0
        self._agent_request_ids: set[object] = set()
        self._batches = Batches(self._client_requests)
        self._finished = False

    # -- reporting -----------------------------------------------------------------------------

    def report(self) -> ConformanceReport:
        """The per-rule results and violations so far (no end-of-stream checks)."""
        counts = Counter(violation.rule for violation in self.violations)
        results = tuple(
            RuleResult(rule, self._exercised[rule_id], counts[rule_id])
            for rule_id, rule in self._table.items()
            if rule_id in self.rules
        )
        return ConformanceReport(results, tuple(self.violations), self._index)

    def check_report(self) -> ConformanceReport:
        """Run the end-of-stream checks (once), then return the report.

        Call it when the stream is complete: every client request should have been answered,
        every accepted prompt's work should have ended with idle, and every prompt's user
        message should have been reported. A strict checker raises on the first of these.
        """
        self.finish()
        return self.report()

    # -- input ---------------------------------------------------------------------------------

    def observe(self, direction: Direction, line: bytes | str) -> None:
        """Check one line as it went over the wire (without its trailing newline).

        :raises ConformanceError: in strict mode, on the first violation.
        :raises ValueError: for an unknown `direction`.
        """
        if direction not in (_AGENT, _CLIENT):
            raise ValueError(f"unknown direction {direction!r}")
        self._index += 1
        data = line.encode("utf-8") if isinstance(line, str) else bytes(line)
        data = data.rstrip(b"\r\n")
        if direction == _CLIENT:
            self._observe_client(data)
        else:
            self._observe_agent(data)

    def _observe_client(self, data: bytes) -> None:
        try:
            message = _decode_json(data)
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            return
        raw = data.decode("utf-8", "replace")
        if isinstance(message, list):
            self._batches.sent(message, lambda item: self._client_message(item, raw))
        elif isinstance(message, dict):
            self._client_message(message, raw)

    def _observe_agent(self, data: bytes) -> None:
        raw = data.decode("utf-8", "replace")
        self._agent_messages += 1
        self._exercise("stdout")
        self._exercise("jsonrpc")
        if not data.strip():
            self._violate("stdout", "blank line on stdout", raw)
            return
        try:
            message = _decode_json(data)
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            self._violate("stdout", f"not a JSON-RPC message: {_short(raw, 120)}", raw)
            return
        if isinstance(message, list):
            for event in self._batches.reply(message):
                if isinstance(event, dict):
                    self._agent_message(event, raw)
                elif event[1] is None:
                    self._exercise(event[0])
                else:
                    self._violate(event[0], event[1], raw)
            return
        if not isinstance(message, dict):
            self._violate("stdout", f"a JSON {type(message).__name__}, not a message object", raw)
            return
        self._agent_message(message, raw)
        if (
            message.get("id", 0) is None
            and "method" not in message
            and get(message, "error", "code") == -32600
            and self._batches.pending
        ):
            self._batches.refused()

    # -- agent messages ------------------------------------------------------------------------

    def _agent_message(self, message: JsonObject, raw: str) -> None:
        if message.get("jsonrpc") != "2.0":
            self._violate(
                "jsonrpc", f'"jsonrpc" is {_short(message.get("jsonrpc"))}, not "2.0"', raw
            )
        has_result = "result" in message
        has_error = "error" in message
        if "method" in message:
            method = message["method"]
            if has_result or has_error:
                self._violate(
                    "jsonrpc", "a message with a method must not carry result or error", raw
                )
            if not isinstance(method, str):
                self._violate("jsonrpc", f'"method" is {_short(method)}, not a string', raw)
                return
            if "id" in message:
                self._agent_request(message, method, raw)
            else:
                self._agent_notification(message, method, raw)
        elif has_result or has_error:
            self._agent_response(message, raw)
        else:
            self._violate("jsonrpc", "neither a request, a notification nor a response", raw)

    def _validate(
        self, def_name: str | None, instance: object, raw: str, what: str, v1_schema: bool = False
    ) -> bool:
        """Validate `instance` against a schema definition; whether it was validated."""
        if def_name is None or (self._every > 1 and self._agent_messages % self._every != 0):
            return False
        schema = load_schema(_V1_SCHEMA) if v1_schema else self._schema
        checked = schema.check(def_name, instance)
        self._exercise("schema")
        for rule in checked.examined:
            self._exercise(rule)
        if checked.invalid is not None:
            self._violate("schema", f"{what} does not match {def_name}: {checked.invalid}", raw)
        seen: set[tuple[str, str]] = set()
        for finding in checked.findings:
            text = f"{what}: {finding.text}"
            if (finding.rule, text) not in seen and not _excused(finding, instance):
                seen.add((finding.rule, text))
                self._violate(finding.rule, text, raw)
        return True

    def _agent_request(self, message: JsonObject, method: str, raw: str) -> None:
        request_id = message["id"]
        params = message.get("params")
        self._exercise("methods")
        if not valid_id(request_id):
            self._violate(
                "jsonrpc", f"request id {_short(request_id)} is not a string or an integer", raw
            )
        key = id_key(request_id)
        if key in self._agent_requests:
            self._violate(
                "jsonrpc",
                f"request id {_short(request_id)} reused while a request with it is still pending",
                raw,
            )
        defs = self._schema.client_methods.get(method)
        if defs is not None and defs.result is None:
            self._violate("methods", f"{method} is a notification: send it without an id", raw)
        elif defs is None and not method.startswith("_"):
            self._violate("methods", f"{method!r} is not a method the client implements", raw)
        validated = defs is not None and self._validate(
            defs.params, params, raw, f"{method} params"
        )
        session = _session_of(params)
        if session is None and method == "elicitation/create":
            scope = self._client_requests.get(id_key(get(params, "requestId")))
            session = scope.session if scope is not None else None
        subjects: set[str] = set()
        if self._v1 is not None:
            self._v1.agent_request(method, session, params, raw)
            if method == "session/request_permission":
                self._v1.permission_tool_call(session, get(params, "toolCall"), raw)
        if method == "session/request_permission":
            subjects = self._permission_request(params, session, raw, validated)
        elif method == "elicitation/create":
            tool_call = get(params, "toolCallId")
            if isinstance(tool_call, str):
                subjects.add(f"tool:{tool_call}")
        self._agent_requests[key] = Request(method, session, self._index, raw, frozenset(subjects))
        self._agent_request_ids.add(key)
        if session is not None:
            state = self._session(session)
            self._check_closed(state, session, raw)
            if state.silenced is not None:
                self._violate(
                    "cancel-silence",
                    f"{method} for session {session} after its cancelled work reported idle",
                    raw,
                )
            if state.unbacked is not None:
                state.unbacked = None

    def _permission_request(
        self, params: object, session: str | None, raw: str, validated: bool
    ) -> set[str]:
        self._exercise("permission-options")
        options = as_list(get(params, "options"))
        subjects: set[str] = set()
        if options is not None:
            if not options and not validated:  # else the schema (minItems) reported it
                self._violate(
                    "permission-options", "session/request_permission offers no options", raw
                )
            seen: set[object] = set()
            for option in options:
                option_id = get(option, "optionId")
                if option_id in seen:
                    self._violate(
                        "permission-options", f"optionId {_short(option_id)} is offered twice", raw
                    )
                seen.add(option_id)
                kind = get(option, "kind")
                if isinstance(kind, str) and not is_known_or_custom(kind, _KNOWN_OPTION_KINDS):
                    self._violate(
                        "permission-options",
                        f"option {_short(option_id)} has kind {kind!r}, which is neither a known "
                        "kind nor _-prefixed",
                        raw,
                    )
        subject = get(params, "subject")
        subject_type = get(subject, "type")
        if subject_type == "tool_call":
            tool_call = as_object(get(subject, "toolCall"))
            tool_call_id = get(tool_call, "toolCallId")
            if isinstance(tool_call_id, str) and tool_call is not None and session is not None:
                subjects.add(f"tool:{tool_call_id}")
                # Clients apply the subject like a tool_call_update (a first-seen id creates it).
                self._tool_call_update(self._session(session), tool_call, raw, subject=True)
        elif subject_type == "command":
            for key, prefix in (("toolCallId", "tool:"), ("terminalId", "term:")):
                value = get(subject, key)
                if isinstance(value, str):
                    subjects.add(prefix + value)
        return subjects

    def _agent_notification(self, message: JsonObject, method: str, raw: str) -> None:
        params = message.get("params")
        self._exercise("methods")
        defs = self._schema.client_methods.get(method)
        if defs is not None and defs.result is not None:
            self._violate("methods", f"{method} is a request: send it with an id", raw)
        elif defs is None and not method.startswith("_"):
            self._violate("methods", f"{method!r} is not a notification the client implements", raw)
        validated = False
        if defs is not None:
            validated = self._validate(defs.params, params, raw, f"{method} params")
        if method == "session/update" and (fields := as_object(params)) is not None:
            session = fields.get("sessionId")
            update = as_object(fields.get("update"))
            if isinstance(session, str) and update is not None:
                if self._v1 is not None:
                    self._v1.session_update(session, update, raw)
                else:
                    self._session_update(session, update, raw, validated)
        elif method == CANCEL_REQUEST_METHOD:
            key = id_key(get(params, "requestId"))
            request = self._agent_requests.get(key)
            if request is not None:
                request.withdrawn = True
                if request.session is not None:
                    cancel = self._session(request.session).cancel
                    if cancel is not None:
                        cancel.proven = True
            elif key not in self._agent_request_ids:
                self._violate(
                    "jsonrpc",
                    f"$/cancel_request names request {_short(get(params, 'requestId'))}, "
                    "which the agent never sent",
                    raw,
                )

    def _agent_response(self, message: JsonObject, raw: str) -> None:
        self._exercise("no-reply-to-notification")
        has_result = "result" in message
        error = message.get("error")
        if has_result and "error" in message:
            self._violate("jsonrpc", "a response must carry exactly one of result and error", raw)
        if "id" not in message:
            self._violate("jsonrpc", "a response without an id", raw)
            return
        response_id = message["id"]
        if response_id is None:
            code = get(error, "code")
            if has_result or code not in _NULL_ID_ERRORS:
                self._violate(
                    "no-reply-to-notification",
                    "a response with id null (only parse errors and invalid requests may use "
                    "it): notifications must not be answered",
                    raw,
                )
            elif error is not None:
                self._validate("Error", error, raw, "error")
            return
        if not valid_id(response_id):
            self._violate(
                "jsonrpc", f"response id {_short(response_id)} is not a string or an integer", raw
            )
            return
        self._exercise("id-fidelity")
        request = self._client_requests.pop(id_key(response_id), None)
        if request is None and (twin := self._lookalike(response_id)) is not None:
            key, request = twin
            del self._client_requests[key]
            self._violate(
                "id-fidelity",
                f"answered request id {_json(key[1])} ({request.method}) with id "
                f"{_json(response_id)}: a response carries its request's id exactly, the same "
                "type and value",
                raw,
            )
            return
        if request is None and self._v1 is not None:
            self._v1.duplicate_answer(id_key(response_id), raw)
        if request is None:
            self._violate(
                "jsonrpc",
                f"response to id {_short(response_id)}, which is not a pending client request "
                "(never sent, or already answered)",
                raw,
            )
            return
        defs = self._schema.agent_methods.get(request.method)
        validated = False
        if has_result:
            result = message["result"]
            if (
                request.method == "initialize"
                and self._v1 is None
                and get(result, "protocolVersion") == 1
            ):
                # An agent that also serves v1 answers a v1 initialize in v1's shape.
                validated = self._validate(
                    "InitializeResponse", result, raw, "initialize result (v1)", v1_schema=True
                )
            elif defs is not None:
                validated = self._validate(defs.result, result, raw, f"{request.method} result")
        else:
            self._validate("Error", error, raw, "error")
        if has_result and request.method in _SETUP_ANSWERS:
            self._config_and_commands(setup_problems(message["result"]), raw)
        if (
            self._v1 is not None
            and has_result
            and request.method in ("session/new", "session/load", "session/resume")
        ):
            answered = request.session or _session_of(message.get("result"))
            if answered is not None:
                self._v1.modes_offered(answered, get(message.get("result"), "modes"), raw)
        session = request.session
        if session is None:
            if request.method in ("session/new", "session/resume") and has_result:
                new = _session_of(message.get("result"))
                if new is not None:
                    self._session(new)
            return
        if self._v1 is not None:
            if request.method == "session/prompt":
                self._v1.prompt_answered(id_key(response_id), session, request.index, message, raw)
            else:
                self._v1.answered_other(session, request.index)
                if request.method == "session/load":
                    self._v1.load_answered(session)
            return
        state = self._session(session)
        if state.cancel is not None and request.index > state.cancel.index:
            state.cancel.proven = True  # the agent read the cancel before answering this
        if request.method == "session/prompt":
            self._prompt_answered(state, request, message, raw, validated)
        elif request.method == "session/resume":
            self._resume_answered(state, has_result)
        elif request.method == "session/close" and has_result:
            self._exercise("session-close")
            if state.span:
                self._violate(
                    "session-close",
                    f"session/close answered while session {session} is still {state.state}: "
                    "report idle with stopReason cancelled first",
                    raw,
                )
            state.closed = True
            if self._v1 is None:
                self._open_calls(state)  # nothing of the session may follow

    def _lookalike(self, response_id: object) -> tuple[tuple[str, object], Request] | None:
        """The pending client request whose id is `response_id` in another type, if any
        (``"42"`` for ``42``, ``42`` for ``"42"``): a response that lost its id's type."""
        shown = str(response_id)
        for key, request in self._client_requests.items():
            if not isinstance(key, tuple):
                continue
            pair = cast("tuple[str, object]", key)  # id_key's (type name, id)
            if pair[0] in ("str", "int") and str(pair[1]) == shown:
                return pair, request
        return None

    # -- client messages -----------------------------------------------------------------------

    def _client_message(self, message: JsonObject, raw: str) -> Request | None:
        """Note what one client message changes; return the request it registered, if any."""
        method = message.get("method")
        if isinstance(method, str):
            params = message.get("params")
            session = _session_of(params)
            if "id" in message:
                request = Request(method, session, self._index, raw)
                self._client_requests[id_key(message["id"])] = request
                if self._v1 is not None:
                    self._v1.client_request(method, session, self._index)
                elif session is not None:
                    self._client_request(self._session(session), request)
                return request
            if method == "session/cancel" and session is not None:
                if self._v1 is not None:
                    self._v1.client_cancel(session, bool(self._pending_for(session)))
                else:
                    self._client_cancel(self._session(session), session)
        elif "result" in message or "error" in message:
            answered = self._agent_requests.pop(id_key(message.get("id")), None)
            if answered is not None and answered.session is not None:
                # The agent may report requires_action after the answer crossed it in flight.
                state = self._session(answered.session)
                state.answered_since_state = True
                state.answered_subjects |= answered.subjects
        return None

    # -- end of stream -------------------------------------------------------------------------

    def give_up_pending(self) -> None:
        """The client stopped waiting (its own timeout ran out): the client requests still
        unanswered are not reported as never answered at the end of the stream. A slow
        agent is not a protocol violation; the caller reports the timeout itself."""
        for request in self._client_requests.values():
            request.refused = True

    def finish(self) -> None:
        """Run the end-of-stream checks once: client requests never answered, foreground work
        that never reported idle, accepted prompts that never started, prompt user messages
        never reported, and requires_action never backed by a request.

        :raises ConformanceError: in strict mode, on the first violation.
        """
        if self._finished:
            return
        self._finished = True
        for request in list(self._client_requests.values()):
            if request.refused:  # refused in a batch, or given up by the client
                continue
            self._violate(
                "jsonrpc",
                f"{request.method} (client request) was never answered",
                request.raw,
                request.index,
            )
        for session, state in self._sessions.items():
            if state.unbacked is not None:
                self._violate(
                    "turn-lifecycle",
                    "requires_action while no permission or elicitation request was pending",
                    *state.unbacked,
                )
            if state.span:
                self._violate(
                    "turn-lifecycle",
                    f"session {session} is still {state.state}: its work never reported idle",
                    *state.span_start,
                )
            if self._v1 is None:  # (v1: judged at each prompt's answer)
                self._open_calls(state)
            for raw, index in state.accepted_unstarted:
                self._violate(
                    "turn-lifecycle",
                    "an accepted prompt whose work never reported running",
                    raw,
                    index,
                )
            self._missing_user_messages(state)
