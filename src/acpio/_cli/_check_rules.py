"""``acpio check``'s rules, the options it runs with, and how each verdict is shown.

How this works: the scenario is a table of :class:`ScenarioRule` (its id,
what it requires, whether it is mandatory). Both runs of the scenario
record their verdicts in one :class:`CheckRun`, which prints each verdict's line
as soon as it is decided; every verdict becomes a :class:`RuleReport`, the
same shape as the verdicts on the conformance checker's rules, so the final
report and its JSON treat both alike. A failed optional rule is a warning,
an undecided one a skip.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

from rich.table import Table
from rich.text import Text

from .._json import as_object, get_field
from ..testing._conformance import Violation
from ._failure import stderr_tail
from ._output import Output
from ._safe_text import safe

__all__ = [
    "SCENARIO",
    "CheckOptions",
    "RuleReport",
    "ScenarioRule",
    "Status",
    "CheckRun",
    "error_of",
    "rule_line",
    "short",
    "shutdown_verdict",
    "stderr_note",
]

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
        "delete-unknown",
        "where the agent offers session/delete, deleting a session that never existed "
        "succeeds silently",
        False,
    ),
    ScenarioRule(
        "version-newer",
        "initialize with protocolVersion 65535 is answered with the newest supported version (2)",
        True,
    ),
    ScenarioRule(
        "version-older",
        "initialize with protocolVersion 0 fails with -32022 {requested, supported}, "
        "unless the agent supports a version at or below 0",
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
    ScenarioRule(
        "ids",
        'a request with the string id "42" is answered with id "42", one with the number 42 '
        "with 42: ids keep their type and value",
        True,
    ),
    ScenarioRule("batch-empty", "an empty batch [] is answered with one -32600 (id null)", True),
    ScenarioRule(
        "batch-notifications",
        "a batch of only notifications gets no reply (not [], not an answer per notification), "
        "or one -32600 (id null) where batches are unsupported",
        True,
    ),
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
    protocols: tuple[int, ...] = (2, 1)
    """The ACP versions to check, each reported on its own (default: both, v2 first)."""


@dataclass
class RuleReport:
    """The verdict on one rule."""

    id: str
    source: Literal["scenario", "checker"]
    description: str
    mandatory: bool
    status: Status
    detail: str = ""
    violations: list[Violation] = field(default_factory=list[Violation])

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


def short(text: str, limit: int = _SHOWN) -> str:
    """``text`` on one line, cut to ``limit`` characters (with an ellipsis)."""
    text = " ".join(text.split()) if "\n" in text else text
    return text if len(text) <= limit else text[: limit - 1] + "…"


def error_of(message: object) -> tuple[int | None, str]:
    """The code and message of a JSON-RPC error response (``(None, "")`` for anything else)."""
    error = as_object(get_field(message, "error"))
    if error is None:
        return None, ""
    code = error.get("code")
    return (code if isinstance(code, int) else None), str(error.get("message", ""))


class CheckRun:
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
        self.output.print(rule_line(report))

    def warn(self, rule_id: str, detail: str) -> None:
        """Record a scenario warning: the rule did not pass, and it fails nothing."""
        rule = SCENARIO[rule_id]
        report = RuleReport(rule.id, "scenario", rule.description, rule.mandatory, "warn", detail)
        self.verdicts[rule_id] = report
        self.output.print(rule_line(report))

    def skip_rest(self, rule_ids: list[str], reason: str) -> None:
        """Skip every listed rule not decided yet (printed as one line)."""
        skipped: list[RuleReport] = []
        for rule_id in rule_ids:
            if rule_id not in self.verdicts:
                rule = SCENARIO[rule_id]
                report = RuleReport(
                    rule.id, "scenario", rule.description, rule.mandatory, "skip", reason
                )
                self.verdicts[rule_id] = report
                skipped.append(report)
        print_rules(self.output, skipped)


def print_rules(output: Output, reports: list[RuleReport]) -> None:
    """One line per decided rule; the skipped ones one line per reason, naming them all
    (a report of an agent that serves only one version stays short)."""
    groups: dict[str, list[RuleReport]] = {}
    for report in reports:
        if report.status == "skip":
            groups.setdefault(report.detail, []).append(report)
        else:
            output.print(rule_line(report))
    for detail, skipped in groups.items():
        if len(skipped) == 1:
            output.print(rule_line(skipped[0]))
            continue
        label, style = _STATUS_STYLES["skip"]
        grid = Table.grid(padding=(0, 1))
        grid.add_column(width=4, no_wrap=True)
        grid.add_column()
        ids = ", ".join(report.id for report in skipped)
        grid.add_row(
            Text(label, style=style),
            Text.assemble((f"{len(skipped)} rules", "bold"), f" {detail}: ", (ids, "dim")),
        )
        output.print(grid)


_STATUS_STYLES: Final = {
    "pass": ("pass", "green"),
    "fail": ("FAIL", "bold red"),
    "warn": ("warn", "yellow"),
    "skip": ("skip", "dim"),
}


def rule_line(report: RuleReport) -> Table:
    """One scenario rule's line: its status, id and detail (agent text made safe)."""
    label, style = _STATUS_STYLES[report.status]
    grid = Table.grid(padding=(0, 1))
    grid.add_column(width=4, no_wrap=True)
    grid.add_column(width=_ID_WIDTH, no_wrap=True)
    grid.add_column()
    # Details and violations quote the agent: shown through the safe-text rule.
    detail = safe(
        report.detail or report.description, "" if report.detail else "dim", one_line=False
    )
    for violation in report.violations[:1]:
        detail = Text.assemble(
            safe(violation.message, one_line=False),
            ("\nmessage: ", "dim"),
            safe(short(violation.raw), "dim"),
            ("\nhint: ", "dim"),
            (violation.hint, "dim"),
        )
        if len(report.violations) > 1:
            detail.append(f"\n(+{len(report.violations) - 1} more)", style="dim")
    grid.add_row(Text(label, style=style), Text(report.id, style="bold"), detail)
    return grid


def stderr_note(stderr: bytes) -> str:
    """A note on the end of the agent's stderr, for a verdict's detail."""
    tail = stderr_tail(stderr, 6)
    return f"; its stderr ends with: {short(tail, 400)}" if tail else "; its stderr is empty"


def shutdown_verdict(
    run: CheckRun, returncode: int | None, elapsed: float, options: CheckOptions, *, what: str = ""
) -> None:
    """The ``shutdown`` verdict: the agent exited with code 0 in time once its input ended."""
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
