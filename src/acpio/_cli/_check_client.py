"""``acpio check``'s first run: the scenario through the testing kit's mock client.

How this works: the agent is driven the way an editor would drive it, by
the testing kit's :class:`~acpio.testing.MockClient` in lenient mode (the
conformance checker collects violations instead of raising): initialize, two
sessions, a prompt, a prompt cancelled while it runs, session/close, then
session/delete of a session that never existed (where the agent offers
delete), then end of input, timing how long the agent takes to exit. Permission requests
are answered as ``--allow`` says during the prompt, and never while the
cancelled turn runs, so the agent must withdraw them itself. Each step
records the verdict of its scenario rule; a step that cannot be reached
skips the rules after it, with the reason.
"""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Mapping
from typing import Final

import anyio

from .. import schema
from .._errors import AcpError, RemoteProtocolError, RequestError
from .._json import as_object, get_field
from ..testing import (
    AgentExitedError,
    AgentTimeoutError,
    ClientSession,
    MockClient,
    PermissionPolicy,
    PermissionRequest,
)
from ..testing._transcript import AGENT_TO_CLIENT
from ._check_rules import CheckOptions, CheckRun, short, shutdown_verdict, stderr_note

__all__ = ["client_run"]


class _Permissions:
    """Answers permission requests: allow or reject during the prompt, never while cancelling
    (the agent must withdraw the request when the turn is cancelled)."""

    def __init__(self, allow: bool) -> None:
        self.allow = allow
        self.hold = False

    async def __call__(self, request: PermissionRequest) -> Mapping[str, object]:
        if self.hold:
            await anyio.sleep_forever()
        kinds = ("allow_once", "allow_always") if self.allow else ("reject_once", "reject_always")
        option = request.option_of_kind(*kinds)
        if option is None:
            return {"outcome": "cancelled"}
        return {"outcome": "selected", "optionId": option}


_SESSION_RULES: Final = ["sessions", "prompt", "cancel", "close", "delete-unknown"]
NEVER_EXISTED: Final = "sess_acpio_check_never_existed"
_NO_V1: Final = (
    "the agent does not serve ACP v1, the version today's editors (Zed, JetBrains, ...) speak"
)
_V1_INITIALIZE_FIELDS: Final = ("agentCapabilities", "authMethods", "agentInfo")
_NO_V2: Final = (
    "the agent does not serve draft ACP v2 (today's editors speak v1); a v2 client falls "
    "back to v1 or disconnects, and nothing of v2 is checked"
)


async def client_run(
    run: CheckRun, command: list[str], options: CheckOptions, cwd: str, protocol_version: int = 2
) -> tuple[MockClient, schema.InitializeResponse | None]:
    """Drive the scenario over ``protocol_version`` (on v1: the v1 shapes, turns ended by the
    prompt's answer, the v1 schema and rules; an agent that does not serve v1 is a warning)."""
    permissions = _Permissions(options.allow)
    client = MockClient(
        command,
        protocol_version=protocol_version,
        policy=PermissionPolicy.call(permissions),
        strict=False,
        initialize=False,
        timeout=options.timeout,
        cwd=cwd,
        exit_timeout=options.exit_timeout,
        client_info=schema.Implementation(name="acpio-check", version="0.1.0", title="acpio check"),
    )
    response: schema.InitializeResponse | None = None
    closing_at: float | None = None
    try:
        async with client:
            run.output.status("initialize")
            response = await _start(run, client)
            if response is not None:
                await _sessions(run, client, response, options, permissions)
            closing_at = anyio.current_time()
            run.output.status("closing stdin, waiting for the agent to exit")
    except AcpError as exc:
        # Raised when the agent could not even be started.
        if "start" not in run.verdicts:
            run.verdict("start", False, _start_failure(command, client, exc))
    if closing_at is not None and response is not None:
        shutdown_verdict(run, client.returncode, anyio.current_time() - closing_at, options)
    return client, response


async def _delete_unknown(run: CheckRun, client: MockClient, capabilities: object) -> None:
    """Deleting a session that never existed SHOULD succeed silently (session-delete page)."""
    if client.v1 is not None:
        offered = _v1_offers(client.v1.initialize_result, "delete")
    else:
        delete = getattr(capabilities, "delete", None)
        offered = isinstance(delete, schema.SessionDeleteCapabilities)
    if not offered:
        run.verdict("delete-unknown", None, "the agent does not advertise session/delete")
        return
    run.output.status("session/delete of an unknown session")
    try:
        await client.request("session/delete", {"sessionId": NEVER_EXISTED})
    except RequestError as exc:
        run.verdict(
            "delete-unknown",
            False,
            f"session/delete of {NEVER_EXISTED} was answered with error {exc.code}: "
            f"{short(exc.message)}; it should succeed silently",
        )
    else:
        run.verdict("delete-unknown", True, "succeeded silently")


def _start_failure(command: list[str], client: MockClient, exc: BaseException) -> str:
    cause = exc.__cause__
    if isinstance(cause, OSError):
        return f"could not start `{shlex.join(command)}`: {cause.strerror or cause}"
    return f"the agent failed at start: {short(str(exc).split(chr(10))[0])}"


async def _start(run: CheckRun, client: MockClient) -> schema.InitializeResponse | None:
    detail: str
    try:
        response = await client.initialize()
    except AgentExitedError:
        detail = (
            f"the agent exited (exit code {client.returncode}) before answering initialize"
            + stderr_note(client.stderr)
        )
    except AgentTimeoutError:
        client.checker.give_up_pending()
        detail = (
            f"timed out after {client.timeout:g} s waiting for the answer to initialize; "
            "a slow agent? raise --timeout" + stderr_note(client.stderr)
        )
    except RequestError as exc:
        detail = f"initialize was answered with error {exc.code}: {short(exc.message)}"
        if exc.code == schema.UNSUPPORTED_PROTOCOL_VERSION:
            missing = _NO_V1 if client.v1 is not None else _NO_V2
            run.warn("start", missing + f" (it answered initialize with error {exc.code})")
            return None
    except RemoteProtocolError as exc:
        detail = f"the initialize result is invalid: {short(str(exc))}"
        older = _older_protocol(client) if client.v1 is None else None
        if older is not None:
            run.warn("start", _NO_V2 + f" ({older})")
            return None
    else:
        info = response.info
        if client.v1 is not None and response.protocol_version != 1:
            run.warn("start", _NO_V1 + f" (it answered protocol {response.protocol_version})")
            return None
        if client.v1 is None and response.protocol_version < schema.PROTOCOL_VERSION:
            run.warn("start", _NO_V2 + f" (it answered protocol {response.protocol_version})")
            return None
        if client.v1 is None and response.protocol_version != schema.PROTOCOL_VERSION:
            run.verdict(
                "start",
                False,
                f"asked for protocol {schema.PROTOCOL_VERSION}, the agent answered "
                f"{response.protocol_version}",
            )
            return None
        run.verdict(
            "start",
            True,
            f"{info.name} {info.version} answered initialize with protocol "
            f"{response.protocol_version}",
        )
        return response
    garbage = next((v.raw for v in client.checker.violations if v.rule == "stdout"), None)
    if garbage is not None:
        detail += f"; it wrote text that is not a protocol message to stdout: {short(garbage)!r}"
    run.verdict("start", False, detail)
    return None


def _older_protocol(client: MockClient) -> str | None:
    """Why the invalid answer to a draft v2 ``initialize`` is an older protocol's (v1's), or
    ``None`` when it is just invalid: it names an older version, or it names the requested
    version in v1's shape (``agentCapabilities``, no ``info``), as agents on the official
    Python SDK that echo the requested version do."""
    result = next(
        (
            fields["result"]
            for entry in client.transcript
            if entry.direction == AGENT_TO_CLIENT
            and (fields := as_object(entry.message)) is not None
            and "result" in fields
        ),
        None,
    )
    answer = as_object(result)
    if answer is None:
        return None
    version = answer.get("protocolVersion")
    if not isinstance(version, int) or isinstance(version, bool):
        return None
    if version < schema.PROTOCOL_VERSION:
        return f"it answered protocol {version}"
    v1_fields = [name for name in _V1_INITIALIZE_FIELDS if name in answer]
    if version == schema.PROTOCOL_VERSION and "info" not in answer and v1_fields:
        return (
            f"it answered protocolVersion {version} in v1's shape ({', '.join(v1_fields)}; no "
            "info): it echoes the requested version, where an agent should answer the latest "
            "version it supports"
        )
    return None


async def _sessions(
    run: CheckRun,
    client: MockClient,
    response: schema.InitializeResponse,
    options: CheckOptions,
    permissions: _Permissions,
) -> None:
    capabilities = response.capabilities
    session = capabilities.session if isinstance(capabilities, schema.AgentCapabilities) else None
    if client.v1 is None and not isinstance(session, schema.SessionCapabilities):
        run.skip_rest(_SESSION_RULES, "the agent advertises no session capability")
        return
    try:
        run.output.status("session/new")
        first = await client.new_session()
        second = await client.new_session()
        run.verdict(
            "sessions",
            first.id != second.id,
            "two sessions with distinct ids"
            if first.id != second.id
            else f"both session/new calls answered sessionId {first.id!r}",
        )
        run.output.status("prompt")
        await _prompt(run, client, first, options)
        run.output.status("cancelled prompt")
        await _cancel(run, client, first, options, permissions)
        run.output.status("session/close")
        if client.v1 is not None and not _v1_offers(client.v1.initialize_result, "close"):
            run.verdict("close", None, "the agent does not advertise session/close (v1)")
            return
        try:
            await second.close()
        except RequestError as exc:
            run.verdict(
                "close",
                False,
                f"session/close was answered with error {exc.code}: {short(exc.message)}",
            )
        else:
            run.verdict("close", True, f"session {second.id} closed")
        await _delete_unknown(run, client, session)
    except AgentExitedError:
        run.skip_rest(
            _SESSION_RULES,
            f"the agent exited (exit code {client.returncode})" + stderr_note(client.stderr),
        )
    except AgentTimeoutError as exc:
        client.checker.give_up_pending()
        first_line = str(exc).split("\n", 1)[0]  # "timed out after N s waiting for ..."
        run.skip_rest(_SESSION_RULES, f"not reached: {first_line}; raise --timeout")
    except (RequestError, RemoteProtocolError) as exc:
        run.skip_rest(_SESSION_RULES, f"not reached: session/new failed: {short(str(exc))}")


def _v1_offers(result: object, method: str) -> bool:
    """Whether a v1 initialize answer advertises ``session/<method>`` (close, delete, ...)."""
    sessions = as_object(get_field(get_field(result, "agentCapabilities"), "sessionCapabilities"))
    return sessions is not None and sessions.get(method) is not None


async def _prompt(
    run: CheckRun, client: MockClient, session: ClientSession, options: CheckOptions
) -> None:
    try:
        result = await session.prompt(options.prompt)
    except AgentTimeoutError:
        ending = (
            "an answer to session/prompt"
            if session.client.protocol_version == 1
            else "an idle state_update"
        )
        client.checker.give_up_pending()
        run.verdict(
            "prompt",
            False,
            f"timed out after {options.timeout:g} s waiting for {ending}; "
            "a slow agent? raise --timeout",
        )
        return
    except RequestError as exc:
        run.verdict(
            "prompt",
            False,
            f"session/prompt was answered with error {exc.code}: {short(exc.message)}",
        )
        return
    if result.stop_reason is None:
        run.verdict("prompt", False, "the turn ended with an idle state_update without stopReason")
        return
    answer = result.text.strip()
    run.verdict(
        "prompt",
        True,
        f"stopReason {result.stop_reason}"
        + (f"; the agent answered {short(answer, 80)!r}" if answer else ""),
    )


async def _cancel(
    run: CheckRun,
    client: MockClient,
    session: ClientSession,
    options: CheckOptions,
    permissions: _Permissions,
) -> None:
    permissions.hold = True
    try:
        before = len(session.updates)
        turn = await session.start_prompt(options.cancel_prompt or options.prompt)
        # Cancel once the work is seen running, as a user would (and so that the
        # conformance checker ties the cancel to that work).
        await session.wait_for(
            lambda: turn.done or session.view.state != "idle", what="the turn to start"
        )
        if client.v1 is not None:
            # v1 has no running state: wait for the agent's first sign of work instead
            # (the client's own echo and running mark are two updates).
            await session.wait_for(
                lambda: (
                    turn.done
                    or len(session.updates) > before + 2
                    or any(
                        r.pending for r in client.permission_requests if r.session_id == session.id
                    )
                ),
                what="the turn's first update or permission request",
            )
        ended_first = turn.done
        await session.cancel()
        # A request sent after the cancel and answered before the turn ended proves the
        # agent read the cancel while its work still ran (it reads in order).
        with contextlib.suppress(RequestError):
            await client.request("_acpio/check/sync", {})
        unread = turn.done
        try:
            result = await turn.wait()
        except AgentTimeoutError:
            client.checker.give_up_pending()
            run.verdict(
                "cancel",
                False,
                f"timed out after {options.timeout:g} s waiting for the turn to end after "
                "session/cancel; raise --timeout",
            )
            return
    finally:
        permissions.hold = False
    if result.stop_reason == "cancelled":
        run.verdict("cancel", True, "the turn ended with stopReason cancelled")
    elif ended_first or unread:
        run.verdict(
            "cancel",
            None,
            f"the turn ended (stopReason {result.stop_reason}) before the agent read "
            "session/cancel; pass a longer task with --cancel-prompt to exercise cancellation",
        )
    else:
        run.verdict(
            "cancel",
            False,
            f"the agent read session/cancel (it answered a later request first) but ended the "
            f"turn with stopReason {result.stop_reason}",
        )
