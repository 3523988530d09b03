"""Reading a diff's ``git_patch`` text and checking it against the diff's ``changes``.

How this works: `parse_git_patch` splits the text into its ``diff --git`` sections and reads
from each section's headers which path it changes and how (modify, add, delete, move, copy),
decoding git's quoted paths. Hunks are not read: only the framing and the headers matter for
consistency. `check_diff` then compares every section with the ``changes`` the diff declares
(``patch-consistency``) and checks that the patch names absolute paths (``absolute-paths``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Final

from .._json import as_list, get_field
from ._rules import short as _short
from ._schema_check import is_absolute

__all__ = ("PatchSection", "check_diff", "parse_git_patch")


@dataclass(slots=True)
class PatchSection:
    """One ``diff --git`` section: the paths its headers name and what it does to them."""

    header: tuple[str, str] | None = None
    minus: str | None = None  # path on the --- line; "" for /dev/null
    plus: str | None = None
    operation: str = "modify"
    rename_from: str | None = None
    rename_to: str | None = None

    @property
    def path(self) -> str | None:
        """The path the section changes (the new path of a move or copy)."""
        if self.operation in ("move", "copy"):
            return self.rename_to
        if self.operation == "delete":
            return self.minus or (self.header[0] if self.header else None)
        return self.plus or (self.header[1] if self.header else None)

    @property
    def old_path(self) -> str | None:
        """The source path of a move or copy, else `None`."""
        return self.rename_from if self.operation in ("move", "copy") else None

    def paths(self) -> list[str]:
        """Every path the section's headers name."""
        found = [*(self.header or ())]
        found.extend(p for p in (self.minus, self.plus, self.rename_from, self.rename_to) if p)
        return found


_ESCAPES: Final = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def _unquote(text: str) -> tuple[str, str]:
    """Read one git-quoted path (C-style escapes, octal UTF-8 bytes); return it and the rest."""
    out = bytearray()
    i = 1
    while i < len(text):
        char = text[i]
        if char == '"':
            return out.decode("utf-8", "replace"), text[i + 1 :]
        if char == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt in "01234567" and i + 3 < len(text):
                out.append(int(text[i + 1 : i + 4], 8) & 0xFF)
                i += 4
                continue
            out.append(_ESCAPES.get(nxt, ord(nxt) & 0xFF))
            i += 2
            continue
        out += char.encode()
        i += 1
    return out.decode("utf-8", "replace"), ""


def _patch_path(text: str) -> str:
    # ---/+++/rename lines: a quoted or plain path; git may add a TAB after names with spaces.
    if text.startswith('"'):
        return _unquote(text)[0]
    return text[:-1] if text.endswith("\t") else text


def _header_paths(rest: str) -> tuple[str, str]:
    if rest.startswith('"'):
        first, tail = _unquote(rest)
        tail = tail.lstrip(" ")
        return first, _patch_path(tail)
    half = len(rest) // 2
    if len(rest) % 2 == 1 and rest[half] == " " and rest[:half] == rest[half + 1 :]:
        return rest[:half], rest[half + 1 :]
    if rest.endswith('"'):
        start = rest.rfind(' "')
        if start >= 0:
            return rest[:start], _unquote(rest[start + 1 :])[0]
    spaces = [i for i, char in enumerate(rest) if char == " "]
    for i in spaces:
        if is_absolute(rest[i + 1 :]):
            return rest[:i], rest[i + 1 :]
    if spaces:
        return rest[: spaces[0]], rest[spaces[0] + 1 :]
    return rest, rest


def parse_git_patch(text: str) -> tuple[list[PatchSection], str | None]:
    """The sections of a ``git_patch`` text, and a problem with its framing (or `None`)."""
    sections: list[PatchSection] = []
    problem = None
    current: PatchSection | None = None
    in_hunks = False
    for line in text.split("\n"):
        if line.startswith("diff --git "):
            current = PatchSection(header=_header_paths(line[len("diff --git ") :]))
            sections.append(current)
            in_hunks = False
            continue
        if current is None:
            if line.strip() and problem is None:
                problem = (
                    f"text before the first 'diff --git' line ({_short(line, 60)}): commit "
                    "metadata and email envelopes must not be included"
                )
            continue
        if in_hunks:
            continue
        if line.startswith(("@@", "Binary files ", "GIT binary patch")):
            in_hunks = True
        elif line.startswith("--- "):
            path = _patch_path(line[4:])
            current.minus = "" if path == "/dev/null" else path
        elif line.startswith("+++ "):
            path = _patch_path(line[4:])
            current.plus = "" if path == "/dev/null" else path
        elif line.startswith("new file mode"):
            current.operation = "add"
        elif line.startswith("deleted file mode"):
            current.operation = "delete"
        elif line.startswith(("rename from ", "copy from ")):
            current.operation = "move" if line.startswith("rename") else "copy"
            current.rename_from = _patch_path(line.split(" from ", 1)[1])
        elif line.startswith(("rename to ", "copy to ")):
            current.rename_to = _patch_path(line.split(" to ", 1)[1])
    if not sections:
        problem = "git_patch text has no 'diff --git' section"
    return sections, problem


_field = get_field


def check_diff(diff: object) -> Iterator[tuple[str, str | None]]:
    """Check one diff content item: yields ``(rule, None)`` each time a rule examines it and
    ``(rule, message)`` for each violation, in the order they are found (a caller that stops at
    the first violation sees exactly what came before it)."""
    patch = _field(diff, "patch")
    changes = as_list(_field(diff, "changes"))
    if changes is None:
        return
    yield "patch-consistency", None
    if _field(patch, "format") != "git_patch":
        return
    text = _field(patch, "text")
    if not isinstance(text, str):
        return
    sections, problem = parse_git_patch(text)
    if problem is not None:
        yield "patch-consistency", problem
    declared = {
        (_field(change, "operation"), _field(change, "path"), _field(change, "oldPath"))
        for change in changes
    }
    by_path = {_field(change, "path"): _field(change, "operation") for change in changes}
    for section in sections:
        paths = section.paths()
        if paths:
            yield "absolute-paths", None
        relative = [path for path in paths if not is_absolute(path)]
        for path in dict.fromkeys(relative):
            yield "absolute-paths", f"the git patch names the relative path {path!r}"
        if relative:
            continue
        problem = _section_problem(section, declared, by_path)
        if problem is not None:
            yield "patch-consistency", problem


def _section_problem(
    section: PatchSection,
    declared: set[tuple[object, object, object]],
    by_path: Mapping[object, object],
) -> str | None:
    operation, path, old_path = section.operation, section.path, section.old_path
    if path is None:
        return None
    if section.header is not None and section.operation == "modify":
        for label, named in (("---", section.minus), ("+++", section.plus)):
            if named is not None and named != section.header[1]:
                return (
                    f"the section 'diff --git' for {section.header[1]!r} has a {label} line "
                    f"naming {named or '/dev/null'!r}"
                )
    if (operation, path, old_path if operation in ("move", "copy") else None) in declared:
        return None
    if operation in ("move", "copy") and any(
        entry[0] == operation and entry[1] == path and entry[2] == old_path for entry in declared
    ):
        return None
    if operation in ("move", "copy") and by_path.get(path) == operation:
        return (
            f"the patch shows {path!r} as {operation} from {old_path!r}, but changes names "
            "a different oldPath"
        )
    if path in by_path:
        return f"the patch shows {path!r} as {operation}, but changes says {_short(by_path[path])}"
    return f"the patch changes {path!r} ({operation}), which is not in changes"
