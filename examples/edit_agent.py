"""An ACP agent that writes and deletes files, showing a diff before asking permission.

Prompts:

* ``write <absolute path>`` on the first line, the new file content after it;
* ``delete <absolute path>``.

The agent reports an ``edit`` (or ``delete``) tool call whose location is the
file and whose content is the diff, asks for permission with the tool call as
subject, and touches the file only if an allow option was selected. Relative
paths are refused: ACP paths are always absolute.

Run it as ``python examples/edit_agent.py`` (ACP draft v2 over stdio).
"""

from __future__ import annotations

import os

import anyio

import acpio

USAGE = (
    "Usage: `write <absolute path>` followed by a newline and the new content, "
    "or `delete <absolute path>`."
)


async def _read(path: str) -> bytes | None:
    """The file's bytes, or ``None`` when it does not exist."""
    try:
        return await anyio.Path(path).read_bytes()
    except FileNotFoundError:
        return None


class EditAgent(acpio.Agent):
    """Writes or deletes one file per prompt, after showing the diff and asking."""

    info = acpio.Implementation(name="edit-agent", version="1.0.0", title="Edit agent")

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        text = acpio.text_of(prompt)
        first_line, _, content = text.partition("\n")
        verb, _, path = first_line.strip().partition(" ")
        path = path.strip()
        if verb not in ("write", "delete") or not path:
            await session.message(USAGE)
            return "end_turn"

        kind = "edit" if verb == "write" else "delete"
        title = f"{'Write' if verb == 'write' else 'Delete'} {path}"
        if not os.path.isabs(path):
            # No location or diff: both would need the absolute path we do not have.
            async with session.tool_call(title, kind=kind, raw_input={"path": path}) as call:
                await call.fail(f"Refused: {path!r} is not an absolute path; nothing was touched.")
            return "end_turn"

        try:
            old = await _read(path)
        except OSError as exc:  # a directory, no permission, ...
            async with session.tool_call(title, kind=kind, raw_input={"path": path}) as call:
                await call.fail(f"Cannot read {path}: {exc.strerror or exc}; nothing was touched.")
            return "end_turn"
        if verb == "delete" and old is None:
            async with session.tool_call(title, kind=kind, raw_input={"path": path}) as call:
                await call.fail(f"{path} does not exist; nothing was deleted.")
            return "end_turn"
        new = content.encode() if verb == "write" else None

        # The diff is shown before asking, so the user approves exactly this change.
        async with session.tool_call(
            title,
            kind=kind,
            name=verb,
            raw_input={"path": path},
            locations=[path],
            content=[acpio.file_diff(path, old, new)],
        ) as call:
            outcome = await call.request_permission(
                acpio.permission.ALLOW_OR_REJECT, title=f"{title}?"
            )
            if outcome.dismissed:
                await call.cancel()
                return "cancelled"
            if not outcome.allowed:
                await call.fail("Permission denied: the file was not changed.")
                return "end_turn"
            await call.start()
            try:
                if new is None:
                    await anyio.Path(path).unlink()
                else:
                    await anyio.Path(path).write_bytes(new)
            except OSError as exc:
                await call.fail(f"Could not {verb} {path}: {exc.strerror or exc}.")
            else:
                await call.complete()
        return "end_turn"


if __name__ == "__main__":
    acpio.run(EditAgent())
