"""Rich renderables for what an editor shows: messages, tool calls, terminals, diffs, prompts.

Pure functions of the testing kit's views (no I/O, no state): the log renderer
decides when to print them, these decide how they look. Paths under the
session's working directory are shown relative to it, as editors show paths
relative to the open project. Every string from the agent is shown through
:mod:`._safe_text` (control characters visible, never obeyed); titles,
commands and paths stay on one line.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from msgspec import UnsetType
from rich import box
from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.spinner import Spinner
from rich.text import Text

from .. import schema
from ..testing import MessageView, PermissionRequest, PlanView, TerminalView, ToolCallView
from ._safe_text import safe, safe_markdown, terminal_text, visible

__all__ = [
    "answer_line",
    "message_block",
    "notice_line",
    "permission_block",
    "plan_block",
    "stop_line",
    "terminal_block",
    "tool_call_block",
]

STATUS_ICONS: Final[Mapping[str, tuple[str, str]]] = {
    "pending": ("◌", "dim"),
    "in_progress": ("●", "cyan"),
    "paused": ("‖", "yellow"),
    "completed": ("✓", "green"),
    "failed": ("✗", "red"),
    "cancelled": ("⊘", "yellow"),
}
STOP_STYLES: Final[Mapping[str, str]] = {
    "end_turn": "green",
    "cancelled": "yellow",
    "error": "bold red",
    "refusal": "magenta",
    "max_tokens": "magenta",
    "max_turn_requests": "magenta",
}
PLAN_MARKS: Final[Mapping[str, str]] = {"pending": "☐", "in_progress": "◐", "completed": "☑"}
NOTICE_STYLES: Final[Mapping[str, str]] = {"error": "red", "warning": "yellow", "info": "cyan"}
COMMITTED_TERMINAL_LINES: Final = 40
LIVE_TERMINAL_LINES: Final = 8
LIVE_MESSAGE_LINES: Final = 6
USER_MESSAGE_LINES: Final = 6
#: Marks the user's prompt, as a chat client would.
PROMPT_MARK: Final = "\u203a "

_PATCH_HEADERS: Final = (
    "index ",
    "--- ",
    "+++ ",
    "new file mode",
    "deleted file mode",
    "old mode",
    "new mode",
    "similarity index",
    "dissimilarity index",
    "rename from",
    "rename to",
    "copy from",
    "copy to",
)


def display_path(path: str, cwd: str | None) -> str:
    """``path`` relative to ``cwd`` when it lies inside it, else as given; on one line,
    :func:`~._safe_text.visible`."""
    if cwd and path != cwd and path.startswith(cwd.rstrip(os.sep) + os.sep):
        path = os.path.relpath(path, cwd)
    return visible(path, one_line=True)


def _block_text(block: schema.ContentBlock) -> str:
    if isinstance(block, schema.TextContent):
        return block.text
    if isinstance(block, schema.ImageContent):
        return f"[image {block.mime_type}]"
    if isinstance(block, schema.AudioContent):
        return f"[audio {block.mime_type}]"
    if isinstance(block, schema.ResourceLink):
        return f"[{block.name}]({block.uri})"
    if isinstance(block, schema.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, schema.TextResourceContents):
            return f"[resource {resource.uri}]\n{resource.text}"
        return f"[resource {getattr(resource, 'uri', '?')}]"
    return f"[{getattr(block, 'type', 'unknown')} content]"


def blocks_text(blocks: Iterable[schema.ContentBlock]) -> str:
    """The content blocks as display text (non-text blocks as short placeholders), with
    control characters :func:`~._safe_text.visible`."""
    return visible("".join(_block_text(block) for block in blocks))


def _tail(lines: list[str], limit: int) -> tuple[list[str], int]:
    if len(lines) <= limit:
        return lines, 0
    return lines[-limit:], len(lines) - limit


# -- messages -----------------------------------------------------------------------------------


def message_block(message: MessageView, *, live: bool = False) -> RenderableType:
    """A user prompt, an agent answer (Markdown) or the agent's reasoning."""
    text = blocks_text(message.content)
    if message.role == "user":
        first, _, rest = text.partition("\n")
        line = Text.assemble((PROMPT_MARK, "bold cyan"), (first, "bold"))
        if not rest:
            return line
        more = rest.splitlines()
        body = Text("\n".join(more[:USER_MESSAGE_LINES]), style="dim")
        if len(more) > USER_MESSAGE_LINES:
            body.append(f"\n… {len(more) - USER_MESSAGE_LINES} more lines", style="dim italic")
        return Group(line, Padding(body, (0, 0, 0, 2), expand=False))
    if live:
        lines, hidden = _tail(text.splitlines() or [""], LIVE_MESSAGE_LINES)
        prefix = "thinking: " if message.role == "thought" else ""
        tail = Text(prefix + "\n".join(lines), style="dim italic" if prefix else "")
        return Group(Text(f"… {hidden} lines", style="dim"), tail) if hidden else tail
    if message.role == "thought":
        return Text.assemble(("thinking: ", "dim italic bold"), (text, "dim italic"))
    return safe_markdown(text) if text.strip() else Text("(empty message)", style="dim")


# -- terminals ----------------------------------------------------------------------------------


def _screen_lines(text: str) -> list[str]:
    # A carriage return rewrites the line, as on a terminal (progress bars).
    lines: list[str] = []
    for raw in text.split("\n"):
        line = raw[:-1] if raw.endswith("\r") else raw
        lines.append(line.rsplit("\r", 1)[-1])
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def exit_text(terminal: TerminalView) -> Text:
    """How the terminal's command ended, or that it still runs."""
    if not terminal.exited:
        return Text("running…", style="cyan")
    if terminal.signal is not None:
        return Text(f"killed by {terminal.signal}", style="yellow")
    code = terminal.exit_code
    if code is None:
        return Text("exited", style="dim")
    return Text(f"exit code {code}", style="green" if code == 0 else "red")


def terminal_block(
    terminal: TerminalView, *, cwd: str | None, live: bool = False
) -> RenderableType:
    """A display-only terminal: its command, its output (the last lines) and its exit."""
    parts: list[RenderableType] = []
    if terminal.command is not None:
        header = Text.assemble(("$ ", "dim"), safe(terminal.command, "bold"))
        if terminal.cwd is not None and terminal.cwd != cwd:
            header.append(f"   (in {display_path(terminal.cwd, cwd)})", style="dim")
        parts.append(header)
    lines, hidden = _tail(
        _screen_lines(terminal.text), LIVE_TERMINAL_LINES if live else COMMITTED_TERMINAL_LINES
    )
    if hidden:
        parts.append(Text(f"… {hidden} earlier lines", style="dim italic"))
    if lines:
        parts.append(terminal_text("\n".join(lines)))
    parts.append(exit_text(terminal))
    return Group(*parts)


# -- diffs --------------------------------------------------------------------------------------


def _change_line(change: schema.DiffChange, cwd: str | None) -> Text:
    operation = getattr(change, "operation", "change")
    path = getattr(change, "path", None)
    old = getattr(change, "old_path", None)
    style = {"add": "green", "delete": "red", "move": "yellow", "copy": "yellow"}.get(
        str(operation), "bold"
    )
    operation = visible(str(operation), one_line=True)
    line = Text.assemble((f"{operation} ", style), (display_path(str(path), cwd), "bold"))
    if isinstance(old, str):
        line = Text.assemble(
            (f"{operation} ", style),
            (display_path(old, cwd), "bold"),
            " → ",
            (display_path(str(path), cwd), "bold"),
        )
    file_type = getattr(change, "file_type", None)
    if isinstance(file_type, str) and file_type != "text":
        line.append(f" ({visible(file_type, one_line=True)})", style="dim")
    return line


def _patch_lines(text: str) -> Text:
    out = Text()
    in_header = False
    for line in visible(text).splitlines():
        if line.startswith("diff --git "):
            in_header = True
            continue
        if line.startswith("@@"):
            in_header = False
            style = "cyan"
        elif in_header:
            if line.startswith(_PATCH_HEADERS):
                continue
            style = "dim"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("\\"):
            style = "dim italic"
        else:
            style = ""
        if out:
            out.append("\n")
        out.append(line, style=style)
    return out


def diff_block(diff: schema.Diff, *, cwd: str | None) -> RenderableType:
    """A diff: one line per changed path, then the coloured patch when there is one."""
    parts: list[RenderableType] = [_change_line(change, cwd) for change in diff.changes]
    patch = diff.patch
    if isinstance(patch, schema.DiffPatch):
        if patch.format == "git_patch":
            body = _patch_lines(patch.text)
            if body:
                parts.append(body)
        else:
            parts.append(safe(f"({patch.format} patch not shown)", "dim"))
    return Group(*parts)


# -- tool calls ---------------------------------------------------------------------------------


def content_block(
    item: schema.ToolCallContent,
    terminals: Mapping[str, TerminalView],
    *,
    cwd: str | None,
    live: bool = False,
) -> RenderableType:
    """One tool-call content item: text, a diff, a terminal, or a placeholder."""
    if isinstance(item, schema.Content):
        return Text(blocks_text([item.content]))
    if isinstance(item, schema.Diff):
        return diff_block(item, cwd=cwd)
    if isinstance(item, schema.Terminal):
        terminal = terminals.get(item.terminal_id)
        if terminal is None:
            return safe(f"terminal {item.terminal_id} (no output yet)", "dim")
        return terminal_block(terminal, cwd=cwd, live=live)
    return safe(f"[{getattr(item, 'type', 'unknown')} content]", "dim")


def tool_call_header(call: ToolCallView) -> Text:
    """Icon, title, kind and status on one line."""
    icon, style = STATUS_ICONS.get(call.status, ("?", "magenta"))
    return Text.assemble(
        (f"{icon} ", style),
        safe(call.title or "(untitled tool call)", "bold"),
        ("  ", ""),
        safe(f"{call.kind} · {call.status}", style if call.status != "pending" else "dim"),
    )


def tool_call_block(
    call: ToolCallView,
    terminals: Mapping[str, TerminalView],
    *,
    cwd: str | None,
    skip: Sequence[schema.ToolCallContent] = (),
    live: bool = False,
) -> RenderableType:
    """A tool call as an editor shows it: a box titled with its status, holding its content.

    Content already shown (the diff of a permission prompt) is in ``skip``.
    """
    icon, style = STATUS_ICONS.get(call.status, ("?", "magenta"))
    body: list[RenderableType] = []
    skipped = 0
    for item in call.content:
        if any(item is shown or item == shown for shown in skip):
            skipped += 1
        else:
            body.append(content_block(item, terminals, cwd=cwd, live=live))
    if skipped:
        body.insert(0, Text("(content shown with the permission prompt above)", style="dim"))
    if call.locations:
        where = ", ".join(
            display_path(location.path, cwd)
            + (
                f":{location.line}"
                if not isinstance(location.line, UnsetType) and location.line is not None
                else ""
            )
            for location in call.locations
        )
        body.append(safe(f"at {where}", "dim"))
    if live and not call.is_final:
        header = Text.assemble(
            safe(call.title or "(untitled tool call)", "bold"),
            ("  ", ""),
            safe(f"{call.kind} · {call.status}", style),
        )
        spinner = Spinner("dots", header, style="cyan")
        return (
            Group(spinner, Padding(Group(*body), (0, 0, 0, 2), expand=False)) if body else spinner
        )
    if not body:
        return tool_call_header(call)
    return Panel(
        Group(*body),
        title=Text.assemble(
            (f"{icon} ", style), safe(call.title or "(untitled tool call)", "bold")
        ),
        title_align="left",
        subtitle=safe(f"{call.kind} · {call.status}", style),
        subtitle_align="right",
        border_style=style if call.status != "pending" else "dim",
        box=box.ROUNDED,
        expand=True,
    )


# -- permission prompts -------------------------------------------------------------------------


def permission_block(
    request: PermissionRequest,
    call: ToolCallView | None,
    terminals: Mapping[str, TerminalView],
    *,
    cwd: str | None,
    numbered: bool = False,
) -> RenderableType:
    """The permission prompt: its title, what it is about, and the options offered.

    Nothing in it can move the cursor or hide a line (see :mod:`._safe_text`); a command
    to run is always shown on a line of its own, and its directory on the next, whatever
    the title says.
    """
    parts: list[RenderableType] = [
        Text.assemble(("? ", "bold yellow"), safe(request.title or "Permission requested", "bold"))
    ]
    description = request.params.get("description")
    body: list[RenderableType] = []
    if isinstance(description, str):
        body.append(safe(description, one_line=False))
    subject = request.subject
    if request.command is not None:
        where = subject.get("cwd") if subject is not None else None
        body.append(Text.assemble(("command: ", "dim"), safe(request.command, "bold")))
        if isinstance(where, str):
            body.append(Text.assemble(("in: ", "dim"), safe(where, "bold")))
    elif call is not None:
        if call.title and call.title not in (request.title or ""):
            body.append(tool_call_header(call))
        body.extend(content_block(item, terminals, cwd=cwd) for item in call.content)
    elif subject is not None:
        body.append(safe(f"about: {subject.get('type', 'unknown subject')}", "dim"))
    options = Text("options: ", style="dim")
    for index, option in enumerate(request.options, start=1):
        if index > 1:
            options.append(" · ", style="dim")
        if numbered:
            options.append(f"[{index}] ", style="bold")
        kind = str(option.get("kind", ""))
        options.append(
            visible(str(option.get("name", option.get("optionId", "?"))), one_line=True),
            style="green"
            if kind.startswith("allow")
            else "red"
            if kind.startswith("reject")
            else "",
        )
    body.append(options)
    parts.append(Padding(Group(*body), (0, 0, 0, 2), expand=False))
    return Group(*parts)


def answer_line(request: PermissionRequest, by: str) -> Text:
    """What the client answered, and who decided (``by``)."""
    answer = request.answer or {}
    who = f"  ({by})" if by else ""
    outcome = answer.get("outcome")
    if outcome == "selected":
        option_id = answer.get("optionId")
        option = next((o for o in request.options if o.get("optionId") == option_id), None)
        kind = str(option.get("kind", "")) if option is not None else ""
        name = str(option.get("name", option_id)) if option is not None else f"{option_id}"
        if kind.startswith("allow"):
            mark, style = "✓ allowed", "green"
        elif kind.startswith("reject"):
            mark, style = "✗ rejected", "red"
        else:
            mark, style = "→ selected", "magenta"
        return Text.assemble(("  ", ""), (f"{mark}: ", f"bold {style}"), safe(name), (who, "dim"))
    if outcome == "cancelled":
        why = " (the agent withdrew the request)" if request.cancelled_by_agent else ""
        return Text.assemble(("  ⊘ cancelled", "bold yellow"), (why + who, "dim"))
    return Text.assemble(("  → ", "magenta"), safe(outcome), (who, "dim"))


# -- the rest -----------------------------------------------------------------------------------


def usage_line(usage: schema.UsageUpdate) -> Text:
    """The context window the agent reported (``usage_update``), and its cost if given."""
    share = f" ({usage.used / usage.size:.0%})" if usage.size > 0 else ""
    line = Text(f"◔ context {usage.used:,} / {usage.size:,} tokens{share}", style="dim")
    cost = usage.cost
    if isinstance(cost, schema.Cost):
        line.append(visible(f" · cost {cost.amount:.4g} {cost.currency}", one_line=True))
    return line


def plan_block(plan: PlanView) -> RenderableType:
    """A plan's entries with their status marks."""
    if not plan.entries:
        return Text("plan (content of an unknown type)", style="dim")
    lines = Text("plan", style="bold")
    for entry in plan.entries:
        mark = PLAN_MARKS.get(entry.status, "·")
        lines.append("\n  ")
        lines.append(f"{mark} ", style="green" if entry.status == "completed" else "cyan")
        lines.append(
            visible(entry.content, one_line=True),
            style="dim" if entry.status == "completed" else "",
        )
    return lines


def stop_line(stop_reason: str | None, error: schema.Error | None) -> Text:
    """The end of a turn: its stop reason (and the error of stop reason ``error``)."""
    if stop_reason is None:
        return Text("■ idle (no stop reason)", style="red")
    line = Text.assemble(("■ ", STOP_STYLES.get(stop_reason, "magenta")), safe(stop_reason, "bold"))
    if error is not None:
        line.append(visible(f": {error.message} ({error.code})", one_line=True), style="red")
    return line


def notice_line(notice: schema.Notice) -> Text:
    """A notice, coloured by severity."""
    severity = str(notice.severity)
    return Text.assemble(
        ("! ", NOTICE_STYLES.get(severity, "magenta")),
        safe(f"{severity}: ", "bold"),
        safe(notice.title),
    )
