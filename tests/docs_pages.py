"""The user-facing pages (README.md and every docs/*.md) and their fenced code blocks.

Tests that run a page's code read it from here, so a block is always read verbatim from
the page a reader sees. A fence is three backticks and a language at the start of a line
(indented fences, inside list items, count too); its block is dedented.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_FENCE = re.compile(r"^( *)```([\w-]*)\n(.*?)^\1```$", re.DOTALL | re.MULTILINE)
_NAMED = re.compile(r"# (\w+\.py)\b.*")


def pages() -> list[str]:
    """Every page, as a path relative to the repository: README.md, then docs/ in order."""
    docs = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "docs").rglob("*.md"))
    return ["README.md", *docs]


def text(page: str) -> str:
    """The text of ``page`` (``"README.md"``, ``"docs/testing.md"``)."""
    return (REPO / page).read_text(encoding="utf-8")


def section(page: str, heading: str) -> str:
    """The part of ``page`` from the line ``heading`` to the next heading of its level."""
    whole = text(page)
    start = (
        whole.index(f"{heading}\n") if whole.startswith(heading) else whole.index(f"\n{heading}\n")
    )
    level = heading.split(" ", 1)[0]
    fenced = [m.span() for m in _FENCE.finditer(whole)]  # a "# name.py" line is no heading
    ends = [
        m.start()
        for m in re.finditer(rf"^#{{1,{len(level)}}} ", whole, re.MULTILINE)
        if m.start() > start + 1 and not any(a <= m.start() < b for a, b in fenced)
    ]
    return whole[start : ends[0] if ends else len(whole)]


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: str
    line: int
    language: str
    code: str

    @property
    def file_name(self) -> str | None:
        """The file a Python block says it is (a first line ``# name.py``), else None."""
        first = self.code.splitlines()[0] if self.code else ""
        match = _NAMED.fullmatch(first)
        return match.group(1) if match else None

    def __str__(self) -> str:
        return f"{self.page}:{self.line} ({self.language or 'no language'})"


def blocks(page: str, language: str | None = None, *, within: str | None = None) -> list[Block]:
    """The fenced blocks of ``page`` (of ``language``; inside section ``within``), in order."""
    whole = text(page)
    part = section(page, within) if within else whole
    offset = whole.index(part)
    found = []
    for match in _FENCE.finditer(part):
        line = whole.count("\n", 0, offset + match.start()) + 1
        code = textwrap.dedent(match.group(3))
        found.append(Block(page, line, match.group(2), code))
    return [b for b in found if language is None or b.language == language]


def python(page: str, *, containing: str, within: str | None = None) -> str:
    """The one Python block of ``page`` that contains ``containing``."""
    (found,) = [b.code for b in blocks(page, "python", within=within) if containing in b.code]
    return found


def named_files(page: str, *, within: str | None = None) -> dict[str, str]:
    """The Python blocks of ``page`` that name their file, by file name."""
    return {
        b.file_name: b.code
        for b in blocks(page, "python", within=within)
        if b.file_name is not None
    }
