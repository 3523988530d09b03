"""``acpio demo``: the example shell and edit agents, driven like an editor would drive them.

Both agents run as real subprocesses (this Python and the files in the
repository's ``examples/``) in a scratch project directory. A short script
plays the user: a command that is allowed and streams its output, one that is
rejected, a file edit shown as a diff and approved, and a long command that is
cancelled. The session log shows what an editor would; the conformance checker
watches every message, and any violation makes the demo fail.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Final

import anyio
from rich.rule import Rule
from rich.text import Text

import acpio

from .._errors import RequestError
from ..testing import MockClient, PermissionPolicy, Violation
from ._drive import CommandStep, open_agent
from ._failure import CliError
from ._log import SessionLog, violation_text
from ._output import Output

__all__ = ["find_examples", "run_demo"]

EXAMPLES: Final = ("shell_agent.py", "edit_agent.py")
STREAM_COMMAND: Final = 'for step in lint test build; do echo "$step: ok"; sleep 0.2; done'
REJECTED_COMMAND: Final = "rm -rf build/"
V1_COMMAND: Final = "echo hello-from-v1"
LONG_COMMAND: Final = 'echo "fetching 2 GB of dependencies..."; sleep 60; echo done'
OLD_FILE: Final = 'def greet(name):\n    return "Hello " + name\n'
NEW_FILE: Final = 'def greet(name: str) -> str:\n    return f"Hello, {name}!"\n'
FILE_NAME: Final = "greeting.py"
#: In a terminal, let the spinner of the long command be seen before it is cancelled.
_SHOW_RUNNING: Final = 0.6


def find_examples(override: str | None = None) -> Path:
    """The repository's ``examples/`` directory, next to the package's source tree.

    :raises CliError: when the example agents are not there (acpio installed
        from a wheel has no examples).
    """
    if override is not None:
        candidates = [Path(override)]
    else:
        # src/acpio/__init__.py -> the checkout's root holds examples/.
        candidates = [Path(acpio.__file__).resolve().parent.parent.parent / "examples"]
    for directory in candidates:
        if all((directory / name).is_file() for name in EXAMPLES):
            return directory
    where = ", ".join(str(directory) for directory in candidates)
    raise CliError(
        "acpio demo runs the example agents (examples/shell_agent.py and "
        f"examples/edit_agent.py) of the acpio source repository, but they are not in {where}. "
        "They are not part of an installed wheel: run the demo from a checkout "
        "(`pip install -e '.[cli]'` in the repository, or `bash scripts/demo.sh`), "
        "or point --examples at a directory that holds them.",
        code=2,
    )


def _step(output: Output, number: int, text: str) -> None:
    output.print("")
    output.print(Text.assemble((f"{number} ", "bold magenta"), (text, "magenta")))


async def run_demo(
    output: Output,
    *,
    examples: str | None = None,
    workdir: str | None = None,
    timeout: float = 10.0,  # noqa: ASYNC109 - the client's default request timeout
) -> int:
    """Run the scripted session against both example agents; 0 when all went as expected."""
    directory = find_examples(examples)
    shell_command = [sys.executable, str(directory / "shell_agent.py")]
    edit_command = [sys.executable, str(directory / "edit_agent.py")]
    owned = workdir is None
    project = (
        os.path.realpath(tempfile.mkdtemp(prefix="acpio-demo-"))
        if workdir is None
        else os.path.realpath(workdir)
    )
    os.makedirs(project, exist_ok=True)
    target = os.path.join(project, FILE_NAME)
    await anyio.Path(target).write_text(OLD_FILE, encoding="utf-8")
    output.print(
        Rule(Text("acpio demo · what an editor shows while ACP agents work", style="bold"))
    )
    output.note(
        "Two example agents run as subprocesses, speaking ACP (draft v2) over stdio. "
        f"A scripted user answers their permission prompts. Project directory: {project}"
    )
    step = CommandStep()
    shell_log = SessionLog(
        output, answered_by="the demo's user", label="examples/shell_agent.py", show_sessions=False
    )
    edit_log = SessionLog(
        output, answered_by="the demo's user", label="examples/edit_agent.py", show_sessions=False
    )
    shell_policy = PermissionPolicy.scripted(
        [PermissionPolicy.allow(), PermissionPolicy.reject(), PermissionPolicy.allow()]
    )
    problems: list[str] = []
    stop_reasons: list[str | None] = []
    try:
        async with (
            open_agent(
                shell_command,
                shell_log,
                output,
                step,
                policy=shell_policy,
                cwd=project,
                timeout=timeout,
            ) as shell,
            open_agent(
                edit_command,
                edit_log,
                output,
                step,
                policy=PermissionPolicy.allow(),
                cwd=project,
                timeout=timeout,
            ) as edit,
        ):
            step.doing = "creating sessions"
            shell_session = await shell.new_session(project)
            edit_session = await edit.new_session(project)

            _step(output, 1, "An allowed command: the agent asks first, then its output streams")
            step.doing = "running the first command"
            result = await shell_session.prompt(f"run {STREAM_COMMAND}")
            stop_reasons.append(result.stop_reason)
            shell_log.sync(shell.transcript)
            if (
                result.stop_reason != "end_turn"
                or "build: ok"
                not in result.view.agent_text
                + "".join(terminal.text for terminal in result.view.terminals.values())
            ):
                problems.append("the allowed command did not stream its output")

            _step(output, 2, "A rejected command is never run")
            step.doing = "asking for a command that is rejected"
            result = await shell_session.prompt(f"run {REJECTED_COMMAND}")
            stop_reasons.append(result.stop_reason)
            shell_log.sync(shell.transcript)
            if any(call.status != "failed" for call in result.view.tool_calls.values()):
                problems.append("the rejected command's tool call did not fail")

            _step(output, 3, "A file edit: the diff is shown with the prompt, then approved")
            step.doing = "editing a file"
            result = await edit_session.prompt(f"write {target}\n{NEW_FILE}")
            stop_reasons.append(result.stop_reason)
            edit_log.sync(edit.transcript)
            if await anyio.Path(target).read_text(encoding="utf-8") != NEW_FILE:
                problems.append(f"{FILE_NAME} was not written")

            _step(output, 4, "A long command, cancelled while it runs (Ctrl-C in an editor)")
            step.doing = "running the long command"
            turn = await shell_session.start_prompt(f"run {LONG_COMMAND}")
            await shell_session.wait_for_terminal_output(contains="fetching")
            shell_log.sync(shell.transcript)
            if output.live_enabled:
                await anyio.sleep(_SHOW_RUNNING)
            step.doing = "cancelling the long command"
            await shell_session.cancel()
            result = await turn.wait()
            stop_reasons.append(result.stop_reason)
            shell_log.sync(shell.transcript)
            if result.stop_reason != "cancelled":
                problems.append(f"the cancelled turn ended with {result.stop_reason!r}")
            violations = _violations(shell) + _violations(edit)

            _step(output, 5, "The same shell agent, unchanged, for today's editors (ACP v1)")
            step.doing = "driving the shell agent over ACP v1"
            v1_problems, v1_violations = await _v1_step(output, shell_command, project, timeout)
            problems += v1_problems
            violations += v1_violations
    finally:
        output.close()
        if owned:
            shutil.rmtree(project, ignore_errors=True)
    output.print("")
    for violation in violations:
        output.print(violation_text(violation))
    for problem in problems:
        output.print(Text(f"✗ {problem}", style="bold red"))
    if violations or problems:
        output.print(Text("The demo did not go as expected.", style="bold red"))
        return 1
    output.print(
        Text.assemble(
            ("✓ ", "bold green"),
            (f"{len(stop_reasons)} turns, ", "bold"),
            f"stop reasons {', '.join(str(reason) for reason in stop_reasons)}; ",
            "the conformance checker found no protocol violation.",
        )
    )
    output.note(
        "Next: `acpio inspect -- python examples/shell_agent.py` to try an agent yourself "
        "(`--protocol 1` to speak ACP v1 as editors do), "
        "`acpio check -- python my_agent.py` to test yours over both versions."
    )
    return 0


async def _v1_step(
    output: Output,
    command: list[str],
    project: str,
    timeout: float,  # noqa: ASYNC109 - the client's default request timeout
) -> tuple[list[str], list[Violation]]:
    """One allowed command over ACP v1, as Zed or JetBrains would send it: the editor runs
    the command in its own terminal. An agent that does not serve v1 yet is only noted."""
    client = MockClient(
        command,
        protocol_version=1,
        client_terminal=True,
        client_fs=True,
        policy=PermissionPolicy.allow(),
        strict=False,
        timeout=timeout,
        cwd=project,
    )
    try:
        async with client:
            session = await client.new_session(project)
            result = await session.prompt(f"run {V1_COMMAND}")
            shown = result.view.agent_text + "".join(
                call.text for call in session.view.tool_calls.values()
            )
            shown += "".join(terminal.text for terminal in session.view.terminals.values())
            info = client.agent_info
            output.print(
                Text.assemble(
                    ("● ", "green"),
                    (info.name, "bold"),
                    f" {info.version} · protocol 1 · examples/shell_agent.py",
                )
            )
            for call in session.view.tool_calls.values():
                output.print(Text(f"  tool call {call.title!r}: {call.kind}, {call.status}"))
            where = (
                "the editor's own terminal (terminal/create)"
                if client.v1 and client.v1.terminals.terminals
                else "the tool call's content"
            )
            if "hello-from-v1" in shown:
                output.print(Text(f"  the command's output is shown in {where}"))
            output.print(Text(f"  session/prompt answered {{stopReason: {result.stop_reason}}}"))
            problems = (
                []
                if "hello-from-v1" in shown and result.stop_reason == "end_turn"
                else ["the command run over ACP v1 did not show its output"]
            )
            client.conformance_report()
            return problems, list(client.checker.violations)
    except RequestError as exc:
        if exc.code != acpio.schema.UNSUPPORTED_PROTOCOL_VERSION:
            raise
        output.note(
            f"examples/shell_agent.py does not serve ACP v1 yet: initialize was answered "
            f"{exc.code} ({exc.message}). Agents that serve it are driven here as Zed or "
            "JetBrains would drive them."
        )
        return [], []


def _violations(client: MockClient) -> list[Violation]:
    return list(client.checker.violations)
