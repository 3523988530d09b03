"""``acpio inspect`` for config options, slash commands and elicitation.

Pure renderables (no I/O): :func:`config_block` (the session's pickers and
their current values), :func:`commands_block` (the advertised slash commands),
:func:`elicitation_block` and :func:`elicitation_answer_line` (a form or URL
request and what the client answered). Plus what inspect needs to let the
user act on them: :func:`parse_config_command` reads ``/config <id> <value>``
typed at the prompt, and :class:`ElicitationAsker` asks for each field of a
form (or whether to open a URL) at the keyboard. Every string that comes from
the agent is shown as plain text (no markup, control characters made visible).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

import anyio
from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.text import Text

from .. import schema
from .._json import as_list, as_object
from ..testing import ElicitationRequest
from ._input import LineInput
from ._output import Output
from ._safe_text import visible

__all__ = [
    "CONFIG_HELP",
    "ElicitationAsker",
    "commands_block",
    "config_block",
    "elicitation_answer_line",
    "elicitation_block",
    "parse_config_command",
]

CONFIG_HELP: Final = "/config shows the session's options; /config <id> <value> changes one"
_TRUE: Final = frozenset({"on", "true", "yes", "y", "1"})
_FALSE: Final = frozenset({"off", "false", "no", "n", "0"})
_DECLINE: Final = frozenset({"n", "no", "decline"})
_DISMISS: Final = frozenset({"c", "cancel"})


def _plain(value: object) -> str:
    """Agent-supplied text as one safe line (the CLI's one rule: :mod:`._safe_text`)."""
    return visible(str(value), one_line=True)


def _options(option: schema.SessionConfigSelect) -> list[schema.SessionConfigSelectOption]:
    found: list[schema.SessionConfigSelectOption] = []
    for item in option.options:
        if isinstance(item, schema.SessionConfigSelectGroup):
            found.extend(item.options)
        else:
            found.append(item)
    return found


def config_block(options: Sequence[schema.SessionConfigOption]) -> RenderableType:
    """The session's config options: name, id, current value and the values offered."""
    if not options:
        return Text("⚙ no config options", style="dim")
    lines = Text("⚙ config options", style="bold")
    for option in options:
        lines.append("\n  ")
        if isinstance(option, schema.SessionConfigSelect):
            lines.append(_plain(option.name), style="bold")
            lines.append(f" [{_plain(option.config_id)}]", style="dim")
            lines.append(": ")
            for index, choice in enumerate(_options(option)):
                if index:
                    lines.append(" · ", style="dim")
                current = choice.value == option.current_value
                label = _plain(choice.value)
                if current:
                    lines.append(f"{label}*", style="bold cyan")
                else:
                    lines.append(label)
        elif isinstance(option, schema.SessionConfigBoolean):
            lines.append(_plain(option.name), style="bold")
            lines.append(f" [{_plain(option.config_id)}]", style="dim")
            lines.append(": ")
            lines.append("on" if option.current_value else "off", style="bold cyan")
        else:
            lines.append("(an option of unknown type, not shown)", style="dim")
    return lines


def commands_block(commands: Sequence[schema.AvailableCommand]) -> RenderableType:
    """The advertised slash commands, each with its input hint and description."""
    if not commands:
        return Text("/ no slash commands", style="dim")
    lines = Text("/ slash commands", style="bold")
    for entry in commands:
        lines.append("\n  ")
        if not isinstance(entry, schema.Command):
            lines.append("(a command of unknown type, not shown)", style="dim")
            continue
        lines.append(f"/{_plain(entry.name)}", style="bold cyan")
        if isinstance(entry.input, schema.TextCommandInput):
            lines.append(f" <{_plain(entry.input.hint)}>", style="dim")
        lines.append(f"  {_plain(entry.description)}")
    return lines


def _field_line(name: str, declared: object, required: bool) -> Text:
    prop = as_object(declared) or {}
    line = Text.assemble(("• ", "dim"), (_plain(prop.get("title", name)), "bold"))
    kind = prop.get("type", "?")
    choices = as_list(prop.get("enum"))
    one_of = as_list(prop.get("oneOf"))
    if choices is None and one_of is not None:
        choices = [o.get("const") for item in one_of if (o := as_object(item)) is not None]
    detail = f"{_plain(kind)}" + (f": {', '.join(map(_plain, choices))}" if choices else "")
    line.append(f" ({detail}{', required' if required else ''})", style="dim")
    if "default" in prop:
        line.append(f" default {_plain(prop['default'])}", style="dim")
    description = prop.get("description")
    if isinstance(description, str):
        line.append(f"  {_plain(description)}")
    return line


def elicitation_block(request: ElicitationRequest) -> RenderableType:
    """An elicitation request: its message, then the form's fields or the URL to open."""
    head = Text.assemble(("? ", "bold yellow"), (_plain(request.message or ""), "bold"))
    body: list[RenderableType] = []
    if request.mode == "url":
        body.append(Text.assemble(("open ", "dim"), (_plain(request.url or ""), "underline")))
    elif request.mode == "form":
        schema_ = request.requested_schema
        required_names = set(as_list(schema_.get("required")) or ())
        properties = as_object(schema_.get("properties"))
        if properties is not None:
            for name, prop in properties.items():
                body.append(_field_line(name, prop, name in required_names))
    else:
        body.append(Text(f"(an elicitation of unknown mode {_plain(request.mode)})", style="dim"))
    return Group(head, Padding(Group(*body), (0, 0, 0, 2), expand=False))


def elicitation_answer_line(request: ElicitationRequest, by: str) -> Text:
    """What the client answered to an elicitation, and who decided (``by``)."""
    who = f"  ({by})" if by else ""
    if request.cancelled_by_agent:
        return Text.assemble(("  ⊘ withdrawn by the agent", "bold yellow"), (who, "dim"))
    answer = request.answer or {}
    action = answer.get("action")
    if action == "accept":
        content = as_object(answer.get("content"))
        values = (
            ", ".join(f"{_plain(k)}={_plain(v)}" for k, v in content.items())
            if content is not None
            else ""
        )
        shown = f" {values}" if values else ""
        return Text.assemble(("  ✓ accepted", "bold green"), shown, (who, "dim"))
    if action == "decline":
        return Text.assemble(("  ✗ declined", "bold red"), (who, "dim"))
    if action == "cancel":
        return Text.assemble(("  ⊘ dismissed", "bold yellow"), (who, "dim"))
    return Text.assemble(("  → ", "magenta"), _plain(action), (who, "dim"))


def parse_config_command(
    text: str, options: Sequence[schema.SessionConfigOption]
) -> tuple[str, str | bool] | str | None:
    """Read ``/config``: ``None`` when ``text`` is not one, ``""`` to show the options,
    ``(config_id, value)`` to set one, or a sentence saying what is wrong."""
    words = text.split()
    if not words or words[0] != "/config":
        return None
    if len(words) == 1:
        return ""
    if len(words) != 3:
        return f"usage: {CONFIG_HELP}"
    config_id, raw = words[1], words[2]
    for option in options:
        if isinstance(option, schema.SessionConfigBoolean) and option.config_id == config_id:
            word = raw.lower()
            if word in _TRUE:
                return (config_id, True)
            if word in _FALSE:
                return (config_id, False)
            return f"{config_id} is on or off, not {raw!r}"
    # A select, or an id the agent does not know: the agent's answer says what is wrong.
    return (config_id, raw)


def _value(prop: Mapping[str, object], text: str) -> object:
    kind = prop.get("type")
    if kind == "boolean":
        word = text.lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
        raise ValueError("type y or n")
    if kind == "integer":
        return int(text)
    if kind == "number":
        return float(text)
    if kind == "array":
        return [part.strip() for part in text.split(",") if part.strip()]
    return text


class ElicitationAsker:
    """Answers elicitation requests at the keyboard, one field at a time (one request at a time).

    An empty line keeps a field's default (or leaves an optional field out);
    ``n`` at the first question declines, ``c`` dismisses.
    """

    def __init__(self, output: Output, reader: LineInput, lock: anyio.Lock) -> None:
        self.output = output
        self.reader = reader
        self.lock = lock  # shared with the permission asker: one question at a time
        self.before: list[object] = []  # hooks run before asking (the log catches up)

    async def _ask(self, question: str) -> str | None:
        if self.reader.interactive:
            self.output.print(Text(f"  {question}: ", style="bold"), end="")
        return await self.reader.readline()

    async def __call__(self, request: ElicitationRequest) -> Mapping[str, object]:
        async with self.lock:
            for hook in self.before:
                if callable(hook):
                    hook()
            self.output.pause()
            try:
                return await self._answer(request)
            finally:
                self.output.resume()

    async def _answer(self, request: ElicitationRequest) -> Mapping[str, object]:
        if request.mode != "form":
            line = await self._ask("open it? (y, n to decline, c to dismiss)")
            word = (line or "c").strip().lower()
            if word in _DECLINE:
                return {"action": "decline"}
            if word in _DISMISS or line is None:
                return {"action": "cancel"}
            return {"action": "accept"}
        schema_ = request.requested_schema
        properties = as_object(schema_.get("properties")) or {}
        required_names = set(as_list(schema_.get("required")) or ())
        content: dict[str, object] = {}
        first = True
        for name, declared in properties.items():
            prop = as_object(declared) or {}
            while True:
                hint = " (n declines, c dismisses)" if first else ""
                line = await self._ask(f"{_plain(prop.get('title', name))}{hint}")
                if line is None:
                    return {"action": "cancel"}
                text = line.strip()
                if first and text.lower() in _DECLINE | _DISMISS and prop.get("type") != "boolean":
                    return {"action": "decline" if text.lower() in _DECLINE else "cancel"}
                if not text:
                    if "default" in prop:
                        content[str(name)] = prop["default"]
                        break
                    if name not in required_names:
                        break
                    self.output.print(Text(f"  {name} is required", style="yellow"))
                    continue
                try:
                    content[str(name)] = _value(prop, text)
                    break
                except ValueError as exc:
                    self.output.print(Text(f"  not a {prop.get('type')}: {exc}", style="yellow"))
            first = False
        return {"action": "accept", "content": content}
