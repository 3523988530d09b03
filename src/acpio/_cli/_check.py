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
and a summary; the exit code is 0 only when no mandatory rule failed and the
agent served at least one of the versions checked. An agent that answers
``initialize`` for one version with another (a v1-only agent asked for draft
v2) gets a warning for that version, whose other rules are not judged.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import tempfile
from collections.abc import Mapping
from typing import Final

from rich.rule import Rule
from rich.text import Text

from .. import schema
from ..testing import ConformanceChecker
from ..testing import Rule as TestingRule
from ..testing._conformance import RULES
from ..testing._v1_rules import v1_rule_table
from ._check_client import client_run
from ._check_raw import raw_run
from ._check_rules import (
    SCENARIO,
    CheckOptions,
    CheckRun,
    RuleReport,
    Status,
    print_rules,
    rule_line,
)
from ._failure import stderr_tail
from ._output import Output

__all__ = ["SCENARIO", "CheckOptions", "run_check"]

# The scenario rules the v1 run decides (the raw probes run over draft v2 only).
_V1_SCENARIO: Final = ("start", "sessions", "prompt", "cancel", "close", "shutdown")


def _checker_reports(
    checkers: list[ConformanceChecker], table: Mapping[str, TestingRule] = RULES
) -> list[RuleReport]:
    reports = [checker.check_report() for checker in checkers]
    results: list[RuleReport] = []
    for rule_id, rule in table.items():
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


_NOT_SERVED: Final = "not checked: the agent does not serve protocol {version}"


def _warned_start(run: CheckRun) -> bool:
    """Whether ``start`` ended in a warning: the agent serves another protocol version."""
    start = run.verdicts.get("start")
    return start is not None and start.status == "warn"


def _not_judged(reason: str, table: Mapping[str, TestingRule] = RULES) -> list[RuleReport]:
    return [
        RuleReport(rule_id, "checker", rule.description, rule.mandatory, "skip", reason)
        for rule_id, rule in table.items()
    ]


def _summary(reports: list[RuleReport]) -> dict[str, int]:
    counts = {"pass": 0, "fail": 0, "warn": 0, "skip": 0}
    for report in reports:
        counts[report.status] += 1
    return counts


async def run_check(output: Output, command: list[str], options: CheckOptions) -> int:
    """Run the scenario against the agent over each of ``options.protocols`` (default: v2,
    then v1), print one report per version; 0 unless a mandatory rule failed in one of them
    or the agent serves none of them. A version the agent does not serve (it answers
    ``initialize`` with another one) is a warning in its report, not a failure.

    With ``--json`` one document: the first version's report at the top level (as with one
    version), every version's under ``protocols``, and ``ok`` true only if all passed.
    """
    if options.json:
        # Only the JSON document goes to stdout; the report still goes to an SVG.
        output.quiet = True
    documents: dict[str, dict[str, object]] = {}
    for version in options.protocols:
        if len(options.protocols) > 1:
            output.print(Rule(Text(f"ACP protocol {version}", style="bold")))
        if version == 1:
            documents["1"] = await _check_v1(output, command, options)
        else:
            documents[str(version)] = await _check_v2(output, command, options)
    served = [version for version, document in documents.items() if document["served"]]
    ok = bool(served) and all(document["ok"] is True for document in documents.values())
    if len(documents) > 1 or not served:
        output.print(
            Text.assemble(
                ("Overall: ", "bold"),
                ("PASS", "bold green") if ok else ("FAIL", "bold red"),
                f" (protocols {', '.join(documents)}; served: "
                f"{', '.join(served) if served else 'none of them'})",
            )
        )
    if options.json:
        first = dict(next(iter(documents.values())))
        first["ok"] = ok
        first["protocols"] = documents
        output.write_raw(json.dumps(first, indent=2) + "\n")
    return 0 if ok else 1


async def _check_v1(output: Output, command: list[str], options: CheckOptions) -> dict[str, object]:
    """The scenario over ACP v1 (the version shipping editors speak): the mock client's run
    only (the raw probes are about draft v2 framing), judged by the v1 schema and rules."""
    run = CheckRun(output)
    owned = options.cwd is None
    cwd = os.path.realpath(options.cwd or tempfile.mkdtemp(prefix="acpio-check-"))
    output.print(Rule(Text(f"acpio check · ACP v1 · {shlex.join(command)}", style="bold")))
    output.print(Text("Scenario", style="bold underline"))
    try:
        client, response = await client_run(run, command, options, cwd, protocol_version=1)
    finally:
        output.status(None)
        if owned:
            shutil.rmtree(cwd, ignore_errors=True)
    served = response is not None
    if not served:
        run.skip_rest(
            [rule for rule in _V1_SCENARIO if rule not in ("start", "shutdown")],
            "not reached: the agent does not serve protocol 1"
            if run.verdicts.get("start") is not None and run.verdicts["start"].status == "warn"
            else "not reached: the agent did not start",
        )
    shutdown = run.verdicts.get("shutdown")
    if shutdown is not None:
        output.print(rule_line(shutdown))
    scenario = [run.verdicts[rule_id] for rule_id in _V1_SCENARIO if rule_id in run.verdicts]
    protocol = _checker_reports([client.checker], v1_rule_table())
    output.print(
        Text(
            f"Protocol rules, v1 (every message checked: {client.checker.report().messages})",
            style="bold underline",
        )
    )
    print_rules(output, protocol)
    everything = scenario + protocol
    counts = _summary(everything)
    ok = counts["fail"] == 0
    output.print(_verdict(counts, ok))
    return {
        "agent": command,
        "protocol": 1,
        "served": served,
        "agent_info": schema.to_builtins(response.info) if response is not None else None,
        "ok": ok,
        "summary": counts,
        "rules": [report.to_json() for report in everything],
        "stderr_tail": stderr_tail(client.stderr),
    }


def _verdict(counts: dict[str, int], ok: bool) -> Text:
    return Text.assemble(
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


async def _check_v2(output: Output, command: list[str], options: CheckOptions) -> dict[str, object]:
    """The draft v2 scenario: the mock client's run, then the raw probes."""
    run = CheckRun(output)
    owned = options.cwd is None
    cwd = os.path.realpath(options.cwd or tempfile.mkdtemp(prefix="acpio-check-"))
    output.print(Rule(Text(f"acpio check · {shlex.join(command)}", style="bold")))
    output.print(Text("Scenario", style="bold underline"))
    checkers: list[ConformanceChecker] = []
    agent_info: schema.Implementation | None = None
    stderr_tails: list[str] = []
    try:
        client, response = await client_run(run, command, options, cwd)
        checkers.append(client.checker)
        stderr_tails.append(stderr_tail(client.stderr))
        if response is not None:
            agent_info = response.info
            raw_checker = ConformanceChecker(strict=False)
            agent = await raw_run(run, command, options, cwd, raw_checker)
            checkers.append(raw_checker)
            if agent is not None:
                stderr_tails.append(stderr_tail(bytes(agent.stderr)))
        else:
            run.skip_rest(
                [rule for rule in SCENARIO if rule != "shutdown"],
                _NOT_SERVED.format(version=schema.PROTOCOL_VERSION)
                if _warned_start(run)
                else "not reached: the agent did not start",
            )
    finally:
        output.status(None)
        if owned:
            shutil.rmtree(cwd, ignore_errors=True)
    served = agent_info is not None
    older = not served and _warned_start(run)
    shutdown = run.verdicts.get("shutdown")
    if shutdown is None:
        shutdown = run.verdicts["shutdown"] = RuleReport(
            "shutdown",
            "scenario",
            SCENARIO["shutdown"].description,
            True,
            "skip",
            _NOT_SERVED.format(version=schema.PROTOCOL_VERSION)
            if older
            else "not reached: the agent did not start",
        )
    output.print(rule_line(shutdown))
    scenario = [run.verdicts[rule_id] for rule_id in SCENARIO if rule_id in run.verdicts]
    if older:
        # Its answer to initialize is an older protocol's: the v2 rules do not apply to it
        # (the v1 run judges every message of that protocol).
        protocol = _not_judged(_NOT_SERVED.format(version=schema.PROTOCOL_VERSION))
    else:
        protocol = _checker_reports(checkers)
    messages = sum(checker.report().messages for checker in checkers)
    output.print(
        Text(f"Protocol rules (every message checked: {messages})", style="bold underline")
    )
    print_rules(output, protocol)
    everything = scenario + protocol
    counts = _summary(everything)
    ok = counts["fail"] == 0
    output.print(_verdict(counts, ok))
    return {
        "agent": command,
        "protocol": schema.PROTOCOL_VERSION,
        "served": served,
        "agent_info": schema.to_builtins(agent_info) if agent_info is not None else None,
        "ok": ok,
        "summary": counts,
        "rules": [report.to_json() for report in everything],
        "stderr_tail": "\n".join(tail for tail in stderr_tails if tail),
    }
