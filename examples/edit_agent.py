"""An ACP agent that writes, deletes and moves files, showing a diff before asking permission.

Prompts:

* ``write <absolute path>`` on the first line, the new file content after it;
* ``delete <absolute path>``;
* ``move <absolute path>`` on the first line, the absolute destination on the second.

The agent opens an ``edit`` (``delete``, ``move``) tool call and lets the SDK's
safe-edit API do the rest: :meth:`acpio.ToolCallHandle.propose_edit` resolves
the path (symlinks and ``..``), refuses anything outside the session's
directories, anything that is not a regular file (a FIFO, ``/dev/zero``, the
agent's own pipes) or larger than the size bound, and shows the diff with the
real path as the call's content, location and title. Only an allow answer
leads to :meth:`acpio.FileEdit.apply`, which writes atomically and only if the
file is still exactly what the diff was computed from; if another program
changed it meanwhile, the agent shows a fresh diff and asks once more. Every
refusal is a failed tool call with a sentence saying why; nothing is touched.

Run it as ``python examples/edit_agent.py`` (ACP draft v2 over stdio).
"""

from __future__ import annotations

import acpio

USAGE = (
    "Usage: `write <absolute path>` followed by a newline and the new content, "
    "`delete <absolute path>`, or `move <absolute path>` followed by a newline "
    "and the absolute destination."
)
KINDS = {"write": "edit", "delete": "delete", "move": "move"}


class EditAgent(acpio.Agent):
    """Writes, deletes or moves one file per prompt, after showing the diff and asking."""

    info = acpio.Implementation(name="edit-agent", version="1.1.0", title="Edit agent")

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        text = acpio.text_of(prompt)
        first_line, _, rest = text.partition("\n")
        verb, _, path = first_line.strip().partition(" ")
        path = path.strip()
        destination = rest.strip() if verb == "move" else None
        if verb not in KINDS or not path or destination == "":
            await session.message(USAGE)
            return "end_turn"
        new = rest.encode() if verb == "write" else None

        # The title names no path yet: propose_edit sets one with the real path.
        async with session.tool_call(
            f"{verb.capitalize()} a file",
            kind=KINDS[verb],
            name=verb,
            raw_input={"path": path} | ({"to": destination} if destination else {}),
        ) as call:
            try:
                edit = await call.propose_edit(path, new, move_to=destination)
                refreshed = False
                while True:
                    outcome = await call.request_permission(
                        acpio.permission.ALLOW_OR_REJECT, title=f"{edit.title}?"
                    )
                    if outcome.dismissed:
                        await call.cancel()
                        return "cancelled"
                    if not outcome.allowed:
                        await call.fail("Permission denied: the file was not changed.")
                        return "end_turn"
                    await call.start()
                    try:
                        # Once, a file changed meanwhile gets a fresh diff and a new question.
                        await edit.apply(refresh_on_conflict=not refreshed)
                    except acpio.EditConflict as conflict:
                        if conflict.fresh is None:
                            raise
                        edit, refreshed = conflict.fresh, True
                        continue
                    return "end_turn"  # leaving the block completes the call
            except acpio.EditRefused:
                return "end_turn"  # the call was failed with the reason


if __name__ == "__main__":
    acpio.run(EditAgent())
