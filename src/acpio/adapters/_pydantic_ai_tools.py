"""Built-in tools an editor user expects, for agents served by the pydantic-ai adapter.

Each tool reports its own ACP tool call (the adapter's bridge leaves tools with
the ``acpio_self_reporting`` metadata alone), because what the editor should show
is richer than "a call with input and output": the file read as a location, the
edit as a diff before the user approves it, the command's live terminal. Each
returns to the model what it needs to go on, and a refusal or a rejection is a
result the model reads, never an exception that ends the turn.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Final, Literal

from typing_extensions import TypedDict

import acpio
from acpio import schema

from ._pydantic_ai_context import SELF_REPORTING, approval_needed, current_session

if TYPE_CHECKING:
    from pydantic_ai.toolsets import FunctionToolset

__all__ = ["PlanItem", "editor_tools"]

#: Files larger than this are read in part (the model is told so).
READ_LIMIT_BYTES: Final = 256 * 1024


class PlanItem(TypedDict):
    """One entry of the agent's plan (its todo list), as the model writes it."""

    content: str
    status: Literal["pending", "in_progress", "completed"]
    priority: Literal["high", "medium", "low"]


def _absolute(path: str, session: acpio.Session) -> str:
    return os.path.normpath(os.path.join(session.cwd, os.path.expanduser(path)))


async def read_file(path: str) -> str:
    """Read a text file of the project.

    Args:
        path: The file's path, absolute or relative to the project directory.
    """
    session = current_session()
    target = _absolute(path, session)
    # What the model gets when the client cancels the call (its block then ends early).
    text = f"Reading {target} was cancelled."
    async with session.tool_call(
        f"Read {target}",
        kind="read",
        name="read_file",
        raw_input={"path": path},
        locations=[target],
    ) as call:
        try:
            # Inside the session's directories, a regular file, through the editor's
            # buffers when it offers them (acpio.Session.read_file).
            text = await session.read_file(target)
        except acpio.ReadRefused as refusal:
            await call.fail(str(refusal))
            return str(refusal)
        size = len(text)
        if size > READ_LIMIT_BYTES:
            text = text[:READ_LIMIT_BYTES]
            text += f"\n[only the first {READ_LIMIT_BYTES} characters of the file are shown]"
        await call.update(raw_output={"characters": min(size, READ_LIMIT_BYTES)})
    return text


async def write_file(path: str, content: str) -> str:
    """Write a text file of the project (the user sees the diff and approves it first).

    Args:
        path: The file's path, absolute or relative to the project directory.
        content: The file's complete new content.
    """
    session = current_session()
    target = _absolute(path, session)
    written = f"Writing {target} was cancelled."  # unless the block runs to its end
    async with session.tool_call(
        "Write a file", kind="edit", name="write_file", raw_input={"path": path}
    ) as call:
        try:
            edit = await call.propose_edit(target, content)
            if approval_needed():
                outcome = await call.request_permission(
                    acpio.permission.ALL_OPTIONS, remember="pydantic-ai write_file"
                )
                if not outcome.allowed:
                    await call.fail("The user rejected this edit.")
                    return f"The user rejected the edit of {edit.path}; it was not written."
            await edit.apply()
        except acpio.EditRefused as refused:  # the call is failed with the same sentence
            return f"The edit was refused: {refused}"
        written = f"Wrote {len(content.encode())} bytes to {edit.path}."
    return written


async def run_command(command: str) -> str:
    """Run a shell command in the project directory (the user approves it first).

    The user watches its output live; you get the exit code and the output (long
    output keeps its beginning and its end).

    Args:
        command: The command line, run with /bin/sh.
    """
    session = current_session()
    summary = f"`{command}` was cancelled."  # unless the block runs to its end
    async with session.tool_call(
        f"Run `{command}`", kind="execute", name="run_command", raw_input={"command": command}
    ) as call:
        if approval_needed():
            outcome = await call.request_permission(
                acpio.permission.ALLOW_OR_REJECT, command=command, cwd=session.cwd
            )
            if not outcome.allowed:
                await call.fail("The user rejected this command.")
                return f"The user rejected the command `{command}`; it did not run."
        terminal = await call.terminal(command=command, cwd=session.cwd)
        result = await terminal.run_shell(command)
        await call.update(raw_output={"exitCode": result.exit_code, "signal": result.signal})
        if not result.success:
            await call.fail(f"exit code {result.exit_code}")
        ending = (
            f"exit code {result.exit_code}" if result.signal is None else f"signal {result.signal}"
        )
        summary = f"`{command}` finished with {ending}. Output:\n{result.text}"
    return summary


async def update_plan(entries: list[PlanItem]) -> str:
    """Show the user your plan (a todo list); send the whole list each time it changes.

    Args:
        entries: Every step of the plan, in order, with its status and priority.
    """
    session = current_session()
    await session.plan(
        [
            schema.PlanEntry(
                content=entry["content"], status=entry["status"], priority=entry["priority"]
            )
            for entry in entries
        ]
    )
    return "The plan is shown to the user."


def editor_tools(
    *, read: bool = True, write: bool = True, shell: bool = True, plan: bool = True
) -> FunctionToolset[Any]:
    """The built-in editor tools as a pydantic-ai toolset: add it to your agent's toolsets.

    ``read_file`` shows the file as a location; ``write_file`` shows the diff and
    asks before writing ("always" remembered for the session), through acpio's
    safe edits (inside the session's directories, compare and swap, atomic);
    ``run_command`` asks, then runs the command in a live terminal and gives its
    output back to the model; ``update_plan`` shows the agent's todo list as an
    ACP plan. In a mode with ``auto_approve``, writes and commands run without asking.
    """
    from pydantic_ai.toolsets import FunctionToolset  # noqa: PLC0415 - keeps pydantic-ai off the start

    toolset: FunctionToolset[Any] = FunctionToolset(metadata={SELF_REPORTING: True})
    if read:
        toolset.add_function(read_file)
    if write:
        toolset.add_function(write_file)
    if shell:
        toolset.add_function(run_command)
    if plan:
        toolset.add_function(update_plan)
    return toolset
