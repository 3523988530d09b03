"""How a framework's tool call looks as an ACP tool call: kind, title, locations, raw output.

Shared by the framework adapters (it imports no framework): a tool's name
suggests its ACP ``kind``, its arguments make the title and the path
``locations``, and whatever it returned becomes ``rawOutput``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final, cast

from acpio import schema

__all__ = ["PATH_ARGUMENTS", "infer_kind", "jsonable", "locations_of", "title_of"]

#: Argument names whose string values are file paths (shown as tool-call locations).
PATH_ARGUMENTS: Final = frozenset(
    {"path", "file", "file_path", "filepath", "filename", "paths", "files", "target", "source"}
)
_TITLE_LIMIT: Final = 100
_KIND_WORDS: Final = (
    ("delete", ("delete", "remove", "unlink", "rm")),
    ("move", ("move", "rename", "mv")),
    ("edit", ("write", "edit", "patch", "replace", "create", "update", "append", "save")),
    ("execute", ("run", "exec", "execute", "shell", "bash", "command", "terminal")),
    ("search", ("search", "grep", "find", "glob", "query", "lookup")),
    ("fetch", ("fetch", "http", "download", "url", "web", "browse")),
    ("read", ("read", "view", "open", "cat", "get", "list", "ls", "load", "show")),
    ("think", ("think", "reason", "plan")),
)


def infer_kind(tool_name: str) -> str:
    """The ACP tool kind a tool's name suggests (``read_file`` -> ``read``), else ``other``.

    The name is split on ``_``, ``-`` and ``.``; the first kind one of whose words
    appears wins, in the order delete, move, edit, execute, search, fetch, read, think.
    """
    words = set(tool_name.lower().replace("-", "_").replace(".", "_").split("_"))
    for kind, keys in _KIND_WORDS:
        if words.intersection(keys):
            return kind
    return "other"


def title_of(name: str, args: Mapping[str, object]) -> str:
    """``name(key='value', ...)``, cut to 100 characters."""
    shown = ", ".join(f"{key}={value!r}" for key, value in args.items())
    title = f"{name}({shown})"
    return title if len(title) <= _TITLE_LIMIT else title[: _TITLE_LIMIT - 1] + "…"


def locations_of(args: Mapping[str, object], cwd: str) -> list[str] | None:
    """The absolute paths among the arguments named like paths (relative to ``cwd``)."""
    found: list[str] = []
    for key, value in args.items():
        if key.lower() not in PATH_ARGUMENTS:
            continue
        items = cast("list[object]", value) if isinstance(value, list | tuple) else [value]
        for item in items:
            if isinstance(item, str) and item:
                found.append(os.path.normpath(os.path.join(cwd, item)))
    return found or None


def jsonable(value: object) -> object:
    """``value`` as JSON values when msgspec can encode it, else its ``repr``."""
    try:
        return schema.to_builtins(value)
    except TypeError:
        return repr(value)
