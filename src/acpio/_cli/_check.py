"""``acpio check``: a conformance scenario against any agent, reported rule by rule.

How this works: the agent is started twice. The first run goes through the
testing kit's mock client (lenient: violations are collected, not raised):
initialize, two sessions, a prompt, a cancelled prompt, session/close, then
end of input (:mod:`._check_client`). The second run speaks raw lines for
what a well-behaved client never sends: protocol version probes, invalid
JSON, unknown methods and notifications, batches, then end of input
(:mod:`._check_raw`). Each step is judged by a scenario rule
(:data:`SCENARIO`, in :mod:`._check_rules`); every message of both runs is
also judged by the conformance checker's rules (``acpio.testing``'s
``RULES``). The report has one line per rule (pass, fail with the message
that broke it, warn for a failed recommendation, skip when not exercised)
and a summary; the exit code is 0 only when no mandatory rule failed.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import tempfile

from rich.rule import Rule
from rich.text import Text

from .. import schema
from ..testing import ConformanceChecker
from ..testing._conformance import RULES
from ._check_client import _client_run
from ._check_raw import _raw_run
from ._check_rules import SCENARIO, CheckOptions, RuleReport, Status, _line, _Run
from ._failure import stderr_tail
from ._output import Output

__all__ = ["SCENARIO", "CheckOptions", "run_check"]


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
