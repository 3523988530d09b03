"""``acpio check``: a conformance scenario against any agent, reported rule by rule.

How this works: the agent is started twice. The first run goes through the
testing kit's mock client (lenient: violations are collected, not raised):
initialize, two sessions, a prompt, a cancelled prompt, session/close, then
end of input. The second run speaks raw lines for what a well-behaved client
never sends: protocol version probes, invalid JSON, unknown methods and
notifications, batches, then end of input. Each step is judged by a scenario
rule (:data:`SCENARIO`); every message of both runs is also judged by the
conformance checker's rules (``acpio.testing``'s ``RULES``). The report has
one line per rule (pass, fail with the message that broke it, warn for a
failed recommendation, skip when not exercised) and a summary; the exit code
is 0 only when no mandatory rule failed.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

import anyio
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from .. import schema
from .._errors import AcpError, RemoteProtocolError, RequestError
from ..testing import (
    AgentExitedError,
    AgentTimeoutError,
    ClientSession,
    ConformanceChecker,
    MockClient,
    PermissionPolicy,
    PermissionRequest,
)
from ..testing._conformance import RULES, Violation
from ._failure import stderr_tail
from ._output import Output
from ._probe import RawAgent, parse

__all__ = ["SCENARIO", "CheckOptions", "run_check"]

Status = Literal["pass", "fail", "warn", "skip"]


@dataclass(frozen=True)
class ScenarioRule:
    """One step of the scenario and what it requires."""

    id: str
    description: str
    mandatory: bool


def _table(*rules: ScenarioRule) -> Mapping[str, ScenarioRule]:
    return {rule.id: rule for rule in rules}


SCENARIO: Final[Mapping[str, ScenarioRule]] = _table(
    ScenarioRule(
        "start",
        "the agent starts and answers initialize (protocolVersion 2) with its name and version",
        True,
    ),
    ScenarioRule("sessions", "session/new answers a distinct sessionId for each new session", True),
    ScenarioRule(
        "prompt",
        "a prompt is accepted with a messageId and its turn ends with idle and a stop reason",
        True,
    ),
    ScenarioRule(
        "cancel",
        "after session/cancel the running turn ends with stopReason cancelled "
        "(a permission request it waits on is withdrawn)",
        True,
    ),
    ScenarioRule(
        "close", "session/close is answered (part of the baseline session capability)", True
    ),
    ScenarioRule(
        "version-newer",
        "initialize with protocolVersion 65535 is answered with the newest supported version (2)",
        True,
    ),
    ScenarioRule(
        "version-older",
        "initialize with protocolVersion 1 fails with -32022 {requested, supported}, "
        "unless the agent supports a version at or below 1",
        True,
    ),
    ScenarioRule("parse-error", "a line that is not JSON is answered -32700 with id null", True),
    ScenarioRule("unknown-method", "a request for an unknown method is answered -32601", True),
    ScenarioRule(
        "unknown-extension", "a request for an unknown _-prefixed method is answered -32601", True
    ),
    ScenarioRule(
        "unknown-notification",
        "unknown notifications (plain and _-prefixed) are ignored, never answered",
        True,
    ),
    ScenarioRule("batch-empty", "an empty batch [] is answered with one -32600 (id null)", True),
    ScenarioRule(
        "batch-mixed",
        "a batch of a request, a notification and an invalid entry is answered with one array "
        "(the request's answer and a -32600), or with one -32600 where batches are unsupported",
        False,
    ),
    ScenarioRule(
        "shutdown",
        "when its stdin closes, the agent exits on its own with exit code 0 within the exit "
        "timeout",
        True,
    ),
)

CLIENT_INFO: Final[dict[str, object]] = {
    "name": "acpio-check",
    "version": "0.1.0",
    "title": "acpio check",
}
OLDER_VERSION: Final = 1
NEWER_VERSION: Final = 65535
_SHOWN: Final = 200
_ID_WIDTH: Final = 24


@dataclass
class CheckOptions:
    """What ``acpio check`` was asked to do."""

    prompt: str = "Hello from acpio check! Please answer briefly."
    cancel_prompt: str | None = None
    allow: bool = False
    timeout: float = 10.0
    exit_timeout: float = 3.0
    cwd: str | None = None
    json: bool = False


@dataclass
class RuleReport:
    """The verdict on one rule."""

    id: str
    source: Literal["scenario", "checker"]
    description: str
    mandatory: bool
    status: Status
    detail: str = ""
    violations: list[Violation] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        """The verdict as JSON-compatible values."""
        return {
            "id": self.id,
            "source": self.source,
            "description": self.description,
            "mandatory": self.mandatory,
            "status": self.status,
            "detail": self.detail,
            "violations": [
                {"message": v.message, "hint": v.hint, "offending_message": v.raw}
                for v in self.violations
            ],
        }


def _short(text: str, limit: int = _SHOWN) -> str:
    text = " ".join(text.split()) if "\n" in text else text
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _error_of(message: object) -> tuple[int | None, str]:
    if not isinstance(message, dict):
        return None, ""
    error = message.get("error")
    if not isinstance(error, dict):
        return None, ""
    code = error.get("code")
    return (code if isinstance(code, int) else None), str(error.get("message", ""))


class _Run:
    """Collects verdicts and prints scenario lines as they are decided."""

    def __init__(self, output: Output) -> None:
        self.output = output
        self.verdicts: dict[str, RuleReport] = {}

    def verdict(self, rule_id: str, passed: bool | None, detail: str) -> None:
        """Record a scenario verdict: True pass, False fail (warn if optional), None skip."""
        rule = SCENARIO[rule_id]
        status: Status
        if passed is None:
            status = "skip"
        elif passed:
            status = "pass"
        else:
            status = "fail" if rule.mandatory else "warn"
        report = RuleReport(rule.id, "scenario", rule.description, rule.mandatory, status, detail)
        self.verdicts[rule_id] = report
        self.output.print(_line(report))

    def skip_rest(self, rule_ids: list[str], reason: str) -> None:
        """Skip every listed rule not decided yet."""
        for rule_id in rule_ids:
            if rule_id not in self.verdicts:
                self.verdict(rule_id, None, reason)


_STATUS_STYLES: Final = {
    "pass": ("pass", "green"),
    "fail": ("FAIL", "bold red"),
    "warn": ("warn", "yellow"),
    "skip": ("skip", "dim"),
}


def _line(report: RuleReport) -> Table:
    label, style = _STATUS_STYLES[report.status]
    grid = Table.grid(padding=(0, 1))
    grid.add_column(width=4, no_wrap=True)
    grid.add_column(width=_ID_WIDTH, no_wrap=True)
    grid.add_column()
    detail = Text(report.detail or report.description, style="" if report.detail else "dim")
    for violation in report.violations[:1]:
        detail = Text.assemble(
            (violation.message, ""),
            ("\nmessage: ", "dim"),
            (_short(violation.raw), "dim"),
            ("\nhint: ", "dim"),
            (violation.hint, "dim"),
        )
        if len(report.violations) > 1:
            detail.append(f"\n(+{len(report.violations) - 1} more)", style="dim")
    grid.add_row(Text(label, style=style), Text(report.id, style="bold"), detail)
    return grid


# -- the mock-client run ---------------------------------------------------------------------


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


_SESSION_RULES: Final = ["sessions", "prompt", "cancel", "close"]


async def _client_run(
    run: _Run, command: list[str], options: CheckOptions, cwd: str
) -> tuple[MockClient, schema.InitializeResponse | None]:
    permissions = _Permissions(options.allow)
    client = MockClient(
        command,
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
        _shutdown_verdict(run, client.returncode, anyio.current_time() - closing_at, options)
    return client, response


def _start_failure(command: list[str], client: MockClient, exc: BaseException) -> str:
    cause = exc.__cause__
    if isinstance(cause, OSError):
        return f"could not start `{shlex.join(command)}`: {cause.strerror or cause}"
    return f"the agent failed at start: {_short(str(exc).split(chr(10))[0])}"


async def _start(run: _Run, client: MockClient) -> schema.InitializeResponse | None:
    detail: str
    try:
        response = await client.initialize()
    except AgentExitedError:
        detail = (
            f"the agent exited (exit code {client.returncode}) before answering initialize"
            + _stderr_note(client.stderr)
        )
    except AgentTimeoutError:
        detail = f"no answer to initialize within {client.timeout:g}s" + _stderr_note(client.stderr)
    except RequestError as exc:
        detail = f"initialize was answered with error {exc.code}: {_short(exc.message)}"
    except RemoteProtocolError as exc:
        detail = f"the initialize result is invalid: {_short(str(exc))}"
    else:
        info = response.info
        if response.protocol_version != schema.PROTOCOL_VERSION:
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
        detail += f"; it wrote text that is not a protocol message to stdout: {_short(garbage)!r}"
    run.verdict("start", False, detail)
    return None


def _stderr_note(stderr: bytes) -> str:
    tail = stderr_tail(stderr, 6)
    return f"; its stderr ends with: {_short(tail, 400)}" if tail else "; its stderr is empty"


async def _sessions(
    run: _Run,
    client: MockClient,
    response: schema.InitializeResponse,
    options: CheckOptions,
    permissions: _Permissions,
) -> None:
    capabilities = response.capabilities
    session = capabilities.session if isinstance(capabilities, schema.AgentCapabilities) else None
    if not isinstance(session, schema.SessionCapabilities):
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
        await _prompt(run, first, options)
        run.output.status("cancelled prompt")
        await _cancel(run, client, first, options, permissions)
        run.output.status("session/close")
        try:
            await second.close()
        except RequestError as exc:
            run.verdict(
                "close",
                False,
                f"session/close was answered with error {exc.code}: {_short(exc.message)}",
            )
        else:
            run.verdict("close", True, f"session {second.id} closed")
    except AgentExitedError:
        run.skip_rest(
            _SESSION_RULES,
            f"the agent exited (exit code {client.returncode})" + _stderr_note(client.stderr),
        )
    except AgentTimeoutError as exc:
        first_line = str(exc).split("\n", 1)[0]
        run.skip_rest(_SESSION_RULES, f"not reached: {first_line}")
    except (RequestError, RemoteProtocolError) as exc:
        run.skip_rest(_SESSION_RULES, f"not reached: session/new failed: {_short(str(exc))}")


async def _prompt(run: _Run, session: ClientSession, options: CheckOptions) -> None:
    try:
        result = await session.prompt(options.prompt)
    except AgentTimeoutError:
        run.verdict(
            "prompt",
            False,
            f"the turn did not end with an idle state_update within {options.timeout:g}s",
        )
        return
    except RequestError as exc:
        run.verdict(
            "prompt",
            False,
            f"session/prompt was answered with error {exc.code}: {_short(exc.message)}",
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
        + (f"; the agent answered {_short(answer, 80)!r}" if answer else ""),
    )


async def _cancel(
    run: _Run,
    client: MockClient,
    session: ClientSession,
    options: CheckOptions,
    permissions: _Permissions,
) -> None:
    permissions.hold = True
    try:
        turn = await session.start_prompt(options.cancel_prompt or options.prompt)
        # Cancel once the work is seen running, as a user would (and so that the
        # conformance checker ties the cancel to that work).
        await session.wait_for(
            lambda: turn.done or session.view.state != "idle", what="the turn to start"
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
            run.verdict(
                "cancel",
                False,
                f"the turn did not end within {options.timeout:g}s after session/cancel",
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


def _shutdown_verdict(
    run: _Run, returncode: int | None, elapsed: float, options: CheckOptions, *, what: str = ""
) -> None:
    if returncode == 0 and elapsed <= options.exit_timeout + 0.5:
        detail = f"exited with code 0 after {elapsed:.2f}s{what}"
        previous = run.verdicts.get("shutdown")
        if previous is None:
            run.verdicts["shutdown"] = RuleReport(
                "shutdown", "scenario", SCENARIO["shutdown"].description, True, "pass", detail
            )
        return
    if returncode is None or returncode < 0:
        detail = (
            f"still running {options.exit_timeout:g}s after its stdin closed{what}; "
            "it had to be terminated"
        )
    else:
        detail = f"exited with code {returncode}{what}"
    run.verdicts["shutdown"] = RuleReport(
        "shutdown", "scenario", SCENARIO["shutdown"].description, True, "fail", detail
    )


# -- the raw run -----------------------------------------------------------------------------

_RAW_RULES: Final = [
    "version-older",
    "version-newer",
    "parse-error",
    "unknown-method",
    "unknown-extension",
    "unknown-notification",
    "batch-empty",
    "batch-mixed",
]


def _initialize(version: int) -> dict[str, object]:
    return {"protocolVersion": version, "info": CLIENT_INFO, "capabilities": {}}


async def _raw_run(
    run: _Run, command: list[str], options: CheckOptions, cwd: str, checker: ConformanceChecker
) -> RawAgent | None:
    agent = RawAgent(command, checker, timeout=options.timeout, cwd=None)
    try:
        async with agent:
            run.output.status("protocol version probes")
            await _versions(run, agent)
            run.output.status("malformed and unknown messages")
            await _malformed(run, agent)
            run.output.status("batches")
            await _batches(run, agent)
            run.output.status("closing stdin, waiting for the agent to exit")
            code, elapsed = await agent.close_stdin(options.exit_timeout)
            _shutdown_verdict(run, code, elapsed, options, what=" (after the raw probes)")
    except OSError as exc:
        run.skip_rest(_RAW_RULES, f"could not start the agent again: {exc.strerror or exc}")
        return None
    except anyio.BrokenResourceError:
        pass
    run.skip_rest(
        _RAW_RULES,
        f"not reached: the agent stopped reading (exit code {agent.returncode})"
        + _stderr_note(bytes(agent.stderr)),
    )
    return agent


async def _versions(run: _Run, agent: RawAgent) -> None:
    answer = await agent.request("check-v1", "initialize", _initialize(OLDER_VERSION))
    code, message = _error_of(answer)
    result = answer.get("result") if isinstance(answer, dict) else None
    version = result.get("protocolVersion") if isinstance(result, dict) else None
    if answer is None:
        run.verdict("version-older", False, f"no answer within {agent.timeout:g}s")
    elif code == schema.UNSUPPORTED_PROTOCOL_VERSION:
        data = answer.get("error", {}).get("data") if isinstance(answer, dict) else None
        supported = data.get("supported") if isinstance(data, dict) else None
        run.verdict(
            "version-older",
            True,
            f"error -32022 (supported: {supported})"
            if supported is not None
            else "error -32022 (its data should list {requested, supported})",
        )
    elif isinstance(version, int) and version <= OLDER_VERSION:
        run.verdict("version-older", True, f"the agent speaks protocol {version}")
    elif isinstance(version, int):
        run.verdict(
            "version-older",
            False,
            f"asked for protocol {OLDER_VERSION}, the agent answered {version}: with no "
            "supported version at or below the requested one, initialization fails with "
            "-32022 {requested, supported}",
        )
    else:
        run.verdict(
            "version-older",
            False,
            f"answered with error {code}: {_short(message)}"
            if code is not None
            else f"unexpected answer {_short(str(answer))}",
        )
    answer = await agent.request("check-v65535", "initialize", _initialize(NEWER_VERSION))
    result = answer.get("result") if isinstance(answer, dict) else None
    version = result.get("protocolVersion") if isinstance(result, dict) else None
    if answer is None:
        run.verdict("version-newer", False, f"no answer within {agent.timeout:g}s")
    elif isinstance(version, int) and schema.PROTOCOL_VERSION <= version <= NEWER_VERSION:
        run.verdict("version-newer", True, f"protocolVersion {version}")
    else:
        code, message = _error_of(answer)
        run.verdict(
            "version-newer",
            False,
            f"answered error {code}: {_short(message)}"
            if code is not None
            else f"answered protocolVersion {version!r}",
        )


def _is_error_reply(line: bytes, request_id: object) -> bool:
    message = parse(line)
    return (
        isinstance(message, dict)
        and "method" not in message
        and message.get("id", "missing") == request_id
    )


async def _expect_error(
    run: _Run, agent: RawAgent, rule: str, *, mark: int, request_id: object, code: int
) -> None:
    line = await agent.wait_line(lambda data: _is_error_reply(data, request_id), mark)
    if line is None:
        run.verdict(
            rule, False, f"no answer with id {json.dumps(request_id)} within {agent.timeout:g}s"
        )
        return
    got, message = _error_of(parse(line))
    if got == code:
        run.verdict(rule, True, f"error {code}: {_short(message, 80)}")
    else:
        run.verdict(
            rule, False, f"expected error {code}, got {_short(line.decode(errors='replace'))}"
        )


async def _malformed(run: _Run, agent: RawAgent) -> None:
    mark = await agent.send(b'{"jsonrpc": "2.0", "id": 7, "method": "initialize", ')
    await _expect_error(run, agent, "parse-error", mark=mark, request_id=None, code=-32700)
    mark = await agent.send_json(
        {"jsonrpc": "2.0", "id": "check-unknown", "method": "acpio/checkUnknownMethod"}
    )
    await _expect_error(
        run, agent, "unknown-method", mark=mark, request_id="check-unknown", code=-32601
    )
    mark = await agent.send_json(
        {"jsonrpc": "2.0", "id": "check-ext", "method": "_acpio/check/unknown", "params": {}}
    )
    await _expect_error(
        run, agent, "unknown-extension", mark=mark, request_id="check-ext", code=-32601
    )
    mark = await agent.send_json(
        {"jsonrpc": "2.0", "method": "acpio/checkUnknownNotification", "params": {}}
    )
    await agent.send_json({"jsonrpc": "2.0", "method": "_acpio/check/notification", "params": {}})
    synced = await agent.request("check-sync", "_acpio/check/sync", {})
    replies = [
        line
        for line in agent.lines[mark:]
        if isinstance(message := parse(line), dict)
        and "method" not in message
        and message.get("id") != "check-sync"
    ]
    if replies:
        run.verdict(
            "unknown-notification",
            False,
            f"the agent answered a notification: {_short(replies[0].decode(errors='replace'))}",
        )
    elif synced is None:
        run.verdict(
            "unknown-notification",
            False,
            "after two unknown notifications the agent no longer answered requests",
        )
    else:
        run.verdict("unknown-notification", True, "both ignored")


def _batch_reply(line: bytes) -> bool:
    message = parse(line)
    if isinstance(message, list):
        return True
    if not isinstance(message, dict) or "method" in message:
        return False
    # A stray error for the batch's notification is judged by no-reply-to-notification.
    return message.get("id") == "check-b1" or (
        message.get("id") is None and _error_of(message)[0] == -32600
    )


async def _batches(run: _Run, agent: RawAgent) -> None:
    mark = await agent.send(b"[]")
    line = await agent.wait_line(_batch_reply, mark)
    message = parse(line) if line is not None else None
    code, _ = _error_of(message)
    if line is None:
        run.verdict("batch-empty", False, f"no answer within {agent.timeout:g}s")
    elif code == -32600 and isinstance(message, dict) and message.get("id") is None:
        run.verdict("batch-empty", True, "one -32600 error")
    else:
        run.verdict(
            "batch-empty",
            False,
            f"expected one -32600 error object, got {_short(line.decode(errors='replace'))}",
        )
    batch = [
        {"jsonrpc": "2.0", "id": "check-b1", "method": "_acpio/check/batch", "params": {}},
        {"jsonrpc": "2.0", "method": "_acpio/check/batchNotification", "params": {}},
        1,
    ]
    mark = await agent.send(json.dumps(batch, separators=(",", ":")).encode())
    line = await agent.wait_line(_batch_reply, mark)
    run.verdict("batch-mixed", *_judge_mixed(line))


def _judge_mixed(line: bytes | None) -> tuple[bool, str]:
    if line is None:
        return False, "no answer to the batch"
    message = parse(line)
    shown = _short(line.decode(errors="replace"))
    if isinstance(message, dict):
        code, _ = _error_of(message)
        if code == -32600 and message.get("id") is None:
            return True, "batches unsupported: one -32600 for the whole batch"
        return False, f"answered the batch entries one by one, not as an array: {shown}"
    if not isinstance(message, list):
        return False, f"unexpected answer {shown}"
    ids = [entry.get("id", "missing") for entry in message if isinstance(entry, dict)]
    codes = [_error_of(entry)[0] for entry in message]
    if sorted(map(str, ids)) == ["None", "check-b1"] and -32600 in codes:
        return True, "one array: the request's answer and a -32600 for the invalid entry"
    return False, f"the array should hold the request's answer and one -32600, got {shown}"


# -- the report ------------------------------------------------------------------------------


def _checker_reports(checkers: list[ConformanceChecker]) -> list[RuleReport]:
    reports = [checker.check_report() for checker in checkers]
    results: list[RuleReport] = []
    for rule_id, rule in RULES.items():
        exercised = sum(
            result.exercised
            for report in reports
            for result in report.results
            if result.rule.id == rule_id
        )
        violations = [v for report in reports for v in report.violations if v.rule == rule_id]
        status: Status
        if violations:
            status = "fail" if rule.mandatory else "warn"
        elif exercised:
            status = "pass"
        else:
            status = "skip"
        detail = "" if status != "skip" else "not exercised by this run"
        results.append(
            RuleReport(
                rule_id, "checker", rule.description, rule.mandatory, status, detail, violations
            )
        )
    return results


def _summary(reports: list[RuleReport]) -> dict[str, int]:
    counts = {"pass": 0, "fail": 0, "warn": 0, "skip": 0}
    for report in reports:
        counts[report.status] += 1
    return counts


async def run_check(output: Output, command: list[str], options: CheckOptions) -> int:
    """Run the scenario against the agent and print the report; 0 unless a mandatory rule
    failed."""
    quiet = options.json
    if quiet:
        # Only the JSON document goes to stdout; the report still goes to an SVG.
        output.quiet = True
    run = _Run(output)
    owned = options.cwd is None
    cwd = os.path.realpath(options.cwd or tempfile.mkdtemp(prefix="acpio-check-"))
    output.print(Rule(Text(f"acpio check · {shlex.join(command)}", style="bold")))
    output.print(Text("Scenario", style="bold underline"))
    checkers: list[ConformanceChecker] = []
    agent_info: schema.Implementation | None = None
    stderr_tails: list[str] = []
    try:
        client, response = await _client_run(run, command, options, cwd)
        checkers.append(client.checker)
        stderr_tails.append(stderr_tail(client.stderr))
        if response is not None:
            agent_info = response.info
            raw_checker = ConformanceChecker(strict=False)
            agent = await _raw_run(run, command, options, cwd, raw_checker)
            checkers.append(raw_checker)
            if agent is not None:
                stderr_tails.append(stderr_tail(bytes(agent.stderr)))
        else:
            run.skip_rest(
                [rule for rule in SCENARIO if rule != "shutdown"],
                "not reached: the agent did not start",
            )
    finally:
        output.status(None)
        if owned:
            shutil.rmtree(cwd, ignore_errors=True)
    shutdown = run.verdicts.get("shutdown")
    if shutdown is None:
        shutdown = run.verdicts["shutdown"] = RuleReport(
            "shutdown",
            "scenario",
            SCENARIO["shutdown"].description,
            True,
            "skip",
            "not reached: the agent did not start",
        )
    output.print(_line(shutdown))
    scenario = [run.verdicts[rule_id] for rule_id in SCENARIO if rule_id in run.verdicts]
    protocol = _checker_reports(checkers)
    messages = sum(checker.report().messages for checker in checkers)
    output.print(
        Text(f"Protocol rules (every message checked: {messages})", style="bold underline")
    )
    for report in protocol:
        output.print(_line(report))
    everything = scenario + protocol
    counts = _summary(everything)
    ok = counts["fail"] == 0
    verdict = Text.assemble(
        ("Summary: ", "bold"),
        (f"{counts['pass']} passed", "green"),
        ", ",
        (f"{counts['fail']} failed", "bold red" if counts["fail"] else ""),
        ", ",
        (f"{counts['warn']} warnings", "yellow" if counts["warn"] else ""),
        ", ",
        f"{counts['skip']} not exercised",
        " → ",
        ("PASS", "bold green") if ok else ("FAIL", "bold red"),
    )
    output.print(verdict)
    if quiet:
        document = {
            "agent": command,
            "agent_info": schema.to_builtins(agent_info) if agent_info is not None else None,
            "ok": ok,
            "summary": counts,
            "rules": [report.to_json() for report in everything],
            "stderr_tail": "\n".join(tail for tail in stderr_tails if tail),
        }
        output.write_raw(json.dumps(document, indent=2) + "\n")
    return 0 if ok else 1
