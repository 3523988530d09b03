"""The ``config-and-commands`` rule: config options and slash commands the agent advertises.

How this works: the schema checks each option's and command's shape; these pure
functions check what the schema cannot express, on the JSON as received: a
``configId`` is unique in its list, a select offers at least one value, each
value once (across groups), and its ``currentValue`` is one of them; a command
name is non-empty, has no whitespace and is unique in its list. The checker
applies them to ``config_option_update`` and ``available_commands_update`` and
to the ``configOptions``/``availableCommands`` of the ``session/new``,
``session/resume`` and ``session/set_config_option`` answers.
"""

from __future__ import annotations

from .._json import as_list, as_object

__all__ = ["command_problems", "config_problems", "setup_problems"]


def _values(option: dict[str, object]) -> list[object]:
    values: list[object] = []
    for value in as_list(option.get("options")) or ():
        item = as_object(value)
        if item is None:
            continue
        if "value" in item:
            values.append(item["value"])
        for member in as_list(item.get("options")) or ():
            entry = as_object(member)
            if entry is not None and "value" in entry:
                values.append(entry["value"])
    return values


def config_problems(options: object) -> list[str]:
    """What is wrong with a list of config options (empty when nothing is)."""
    problems: list[str] = []
    seen: set[object] = set()
    for value in as_list(options) or ():
        option = as_object(value)
        if option is None:
            continue
        config_id = option.get("configId")
        if config_id in seen:
            problems.append(f"config option id {config_id!r} appears twice in one list")
        seen.add(config_id)
        if option.get("type") != "select":
            continue
        values = _values(option)
        if not values:
            problems.append(f"config option {config_id!r} is a select that offers no values")
        elif len(set(map(repr, values))) != len(values):
            problems.append(f"config option {config_id!r} offers a value twice: {values!r}")
        current = option.get("currentValue")
        if values and current not in values:
            problems.append(
                f"config option {config_id!r} has currentValue {current!r}, which it does not "
                f"offer ({values!r})"
            )
    return problems


def command_problems(commands: object) -> list[str]:
    """What is wrong with a list of slash commands (empty when nothing is)."""
    problems: list[str] = []
    seen: set[object] = set()
    for value in as_list(commands) or ():
        command = as_object(value)
        if command is None or command.get("type", "command") != "command":
            continue
        name = command.get("name")
        if isinstance(name, str) and (not name or any(c.isspace() for c in name)):
            problems.append(f"command name {name!r} is empty or contains whitespace")
        if name in seen:
            problems.append(f"command {name!r} is advertised twice in one list")
        seen.add(name)
    return problems


def setup_problems(result: object) -> list[str]:
    """What is wrong with the options and commands of a session answer."""
    fields = as_object(result)
    if fields is None:
        return []
    return config_problems(fields.get("configOptions")) + command_problems(
        fields.get("availableCommands")
    )
