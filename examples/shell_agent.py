"""An ACP agent that runs shell commands, with permission, live output and cancellation.

Prompt ``run <shell command>``. The agent reports a tool call, asks the user
for permission (a command subject, so the editor shows the exact command and
directory), and only if an allow option was selected runs the command with
``/bin/sh`` in the session's working directory, streaming its stdout and
stderr bytes into a terminal shown in the tool call. ``session/cancel`` kills
the command's whole process group and the turn ends ``cancelled``. The editor
may also stop just the command (``terminal/cancel``: the call fails with the
signal) or the whole tool call (``tool_call/cancel``: the call is cancelled);
the turn then ends normally.

Run it as ``python examples/shell_agent.py`` (ACP draft v2 over stdio).
"""

from __future__ import annotations

import acpio

USAGE = "Usage: `run <shell command>`, for example `run ls -la`."


class ShellAgent(acpio.Agent):
    """Runs one shell command per prompt, after asking for permission."""

    info = acpio.Implementation(name="shell-agent", version="1.0.0", title="Shell agent")

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        text = acpio.text_of(prompt).strip()
        command = text[len("run ") :].strip() if text.startswith("run ") else ""
        if not command:
            await session.message(USAGE)
            return "end_turn"

        # Leaving this block finishes the call for us: completed on normal exit,
        # failed on an exception, cancelled when the turn is cancelled.
        async with session.tool_call(
            f"Run `{command}`",
            kind="execute",
            name="shell",
            raw_input={"command": command},
            cancellable=True,
        ) as call:
            outcome = await call.request_permission(
                acpio.permission.ALLOW_OR_REJECT, title=f"Run `{command}`?", command=command
            )
            # A cancelled turn (session/cancel) or call (tool_call/cancel) never gets
            # here: the cancellation is raised, and this block ends the call cancelled.
            if outcome.dismissed:
                # The user dismissed the prompt: treat it as stopping the turn.
                await call.cancel()
                return "cancelled"
            if not outcome.allowed:
                # Rejected, or an answer we do not understand: never run anything.
                await call.fail("Permission denied: the command was not run.")
                return "end_turn"

            await call.start()
            terminal = await call.terminal(command=command, cwd=session.cwd, cancellable=True)
            status = await terminal.run_shell(command, cwd=session.cwd)
            raw_output = {"exitCode": status.exit_code, "signal": status.signal}
            if status.success:
                await call.complete(raw_output=raw_output)
            else:
                reason = (
                    f"exit code {status.exit_code}"
                    if status.signal is None
                    else f"signal {status.signal}"
                )
                await call.fail(f"The command failed ({reason}).", raw_output=raw_output)
        return "end_turn"


if __name__ == "__main__":
    acpio.run(ShellAgent())
