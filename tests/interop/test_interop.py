"""Interoperability: the example agents driven by the official TypeScript SDK's v2 client.

``interop_client.mjs`` (Node) launches ``examples/shell_agent.py`` and
``examples/edit_agent.py`` with this interpreter, talks to them only through
``@agentclientprotocol/sdk/experimental/v2`` (pinned in package.json and
package-lock.json here), rebuilds tool calls and terminals from the updates it
receives and compares them with each scenario's expectations. Every message the
agents send must pass the SDK's own validators without losing anything.

Node and ``node_modules`` are prerequisites installed by CI
(``npm ci --prefix tests/interop``); when either is missing the tests fail with
that explanation instead of skipping.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
PROGRAM = HERE / "interop_client.mjs"
SDK = "@agentclientprotocol/sdk"
INSTALL_COMMAND = "npm ci --prefix tests/interop"
# A stuck agent is bounded inside the program (20 s per turn); this only stops
# a wedged Node process from hanging the suite.
PROGRAM_TIMEOUT_S = 600

SCENARIOS = (
    "shell_allowed_output",
    "shell_large_binary_output",
    "shell_nonzero_exit",
    "shell_rejected",
    "shell_cancel_while_running",
    "shell_permission_cancelled",
    "shell_two_turns_cwd",
    "shell_usage",
    "edit_write_new_file",
    "edit_modify_file",
    "edit_rejected",
    "edit_delete_file",
    "edit_permission_cancelled",
    "edit_usage",
)


@dataclass
class InteropRun:
    """Outcome of one run of the Node program, or why it could not run."""

    problem: str | None = None
    result: dict[str, object] = field(default_factory=dict)
    output: str = ""

    def require(self) -> dict[str, object]:
        """Return the program's JSON result, failing the calling test if there is none."""
        if self.problem is not None:
            pytest.fail(self.problem, pytrace=False)
        return self.result


def _run_program(result_file: Path) -> InteropRun:
    node = shutil.which("node")
    if node is None:
        return InteropRun(
            problem="Node.js (`node`) is not on PATH; the interop test needs Node >= 20.6 "
            f"and the pinned SDK (`{INSTALL_COMMAND}` from the repository root)"
        )
    installed = HERE / "node_modules" / "@agentclientprotocol" / "sdk" / "package.json"
    if not installed.is_file():
        return InteropRun(
            problem=f"{SDK} is not installed in {HERE / 'node_modules'}; "
            f"run `{INSTALL_COMMAND}` from the repository root"
        )
    command = [
        node,
        str(PROGRAM),
        "--python",
        sys.executable,
        "--examples",
        str(REPO / "examples"),
        "--result",
        str(result_file),
    ]
    try:
        completed = subprocess.run(
            command,
            cwd=HERE,
            capture_output=True,
            text=True,
            timeout=PROGRAM_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        return InteropRun(
            problem=f"the interop program did not finish in {PROGRAM_TIMEOUT_S} s: {exc}"
        )
    output = f"{completed.stdout}{completed.stderr}"
    if not result_file.is_file():
        return InteropRun(
            problem=f"the interop program wrote no result (exit {completed.returncode}):\n{output}",
            output=output,
        )
    result = json.loads(result_file.read_text(encoding="utf-8"))
    if result.get("error"):
        return InteropRun(problem=f"interop run failed: {result['error']}\n{output}", output=output)
    return InteropRun(result=result, output=output)


@pytest.fixture(scope="module")
def interop_run(tmp_path_factory: pytest.TempPathFactory) -> InteropRun:
    """Run every scenario once for the module; each test reads its part of the result."""
    run = _run_program(tmp_path_factory.mktemp("interop") / "result.json")
    # Shown with -s and in failure reports: which SDK the agents were checked against.
    print(run.output)
    return run


def _pinned_versions() -> tuple[str, str]:
    package = json.loads((HERE / "package.json").read_text(encoding="utf-8"))
    lock = json.loads((HERE / "package-lock.json").read_text(encoding="utf-8"))
    return (
        package["dependencies"][SDK],
        lock["packages"][f"node_modules/{SDK}"]["version"],
    )


def test_ran_with_the_pinned_sdk(interop_run: InteropRun) -> None:
    """The SDK the program loaded is the exact version pinned in package.json and the lock."""
    result = interop_run.require()
    sdk = result["sdk"]
    assert isinstance(sdk, dict)
    declared, locked = _pinned_versions()
    assert declared == locked, "package.json and package-lock.json disagree on the SDK version"
    assert sdk["name"] == SDK
    assert sdk["version"] == locked


def test_every_scenario_ran(interop_run: InteropRun) -> None:
    """The program ran exactly the scenarios this module reports on."""
    result = interop_run.require()
    scenarios = result["scenarios"]
    assert isinstance(scenarios, list)
    assert [scenario["name"] for scenario in scenarios] == list(SCENARIOS)


@pytest.mark.parametrize("name", SCENARIOS)
def test_scenario(interop_run: InteropRun, name: str) -> None:
    """One scenario: the SDK accepted every message and the rebuilt state matched."""
    result = interop_run.require()
    scenarios = result["scenarios"]
    assert isinstance(scenarios, list)
    outcome = next((scenario for scenario in scenarios if scenario["name"] == name), None)
    assert outcome is not None, f"scenario {name} did not run:\n{interop_run.output}"
    if not outcome["ok"]:
        failures = "\n".join(f"  - {failure}" for failure in outcome["failures"])
        stderr = outcome.get("agentStderr") or ""
        pytest.fail(
            f"{name} ({outcome['description']}) against {SDK} "
            f"{result['sdk']['version']}:\n{failures}\nagent stderr (tail):\n{stderr}",  # type: ignore[index]
            pytrace=False,
        )
