"""Diff content for tool calls: structured file changes plus ``git_patch`` text.

How this works: :func:`file_change` turns one file's old and new content into a
:class:`FileChange`, which holds the structured entry of the ``changes`` list and
that file's own ``diff --git`` section. :func:`diff_of` joins any number of them
into one ``diff`` tool-call content item (:class:`acpio.schema.Diff`): one
``changes`` entry per file, and a patch that is the concatenation of the
sections that have useful text.
:func:`file_diff` does both for the common single-file case.

The patch follows what ``git apply`` needs to reproduce the new bytes exactly:

* Lines are split on ``"\\n"`` only, as Git does; a ``"\\r"`` stays inside its
  line, so CRLF and lone CR endings survive. A last line without ``"\\n"`` is
  followed by ``\\ No newline at end of file``.
* Hunks come from a patience diff (see :func:`_matching_runs`). Any edit
  script is a correct patch; the matcher only affects how small and readable
  it is, and how long it takes.
* Paths are absolute and carry no ``a/``/``b/`` prefix. They are quoted the way
  Git quotes them with ``core.quotePath=false``: control characters, ``"`` and
  ``\\`` force C-style quoting, other non-ASCII text stays readable UTF-8. A
  ``---``/``+++`` name containing a space gets Git's trailing tab.
* Added and deleted files always carry ``---``/``+++`` lines, even when empty.
  Git itself omits them for an empty file, but ``git apply`` can only take the
  name of such a file from the ``diff --git`` line, and it refuses absolute
  names there; with the explicit lines the section applies.

A client holding the absolute paths applies the whole patch with
``git apply -p0 --unsafe-paths`` (``-p0`` keeps the names whole,
``--unsafe-paths`` allows paths outside the current directory); the tests do
exactly that.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias, get_args

from msgspec import UNSET

from .._errors import RelativePathError
from .._protocol.diff_texts import with_texts
from .._protocol.paths import require_absolute
from .._protocol.values import require_value
from ..schema import (
    KNOWN_DIFF_FILE_TYPE,
    AddChange,
    CopyChange,
    DeleteChange,
    Diff,
    DiffChange,
    DiffPatch,
    ModifyChange,
    MoveChange,
    UnknownDiffChange,
)

__all__ = [
    "FileChange",
    "FileContent",
    "FileOperation",
    "RelativePathError",
    "diff_of",
    "file_change",
    "file_diff",
]

FileContent: TypeAlias = str | bytes | None
"""A file's content for :func:`file_change`; ``None`` means the file does not exist."""

FileOperation: TypeAlias = Literal["add", "delete", "modify", "move", "copy"]
"""The ACP-defined values of ``changes[].operation``."""
_OPERATIONS: frozenset[str] = frozenset(get_args(FileOperation))

_StrPath: TypeAlias = str | os.PathLike[str]

# Git only distinguishes regular files here; acpio has no notion of the mode.
_MODE = "100644"
_DEV_NULL = "/dev/null"
_NO_NEWLINE = "\\ No newline at end of file\n"
# Characters Git writes with a letter escape inside a quoted path (quote.c).
_LETTER_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\v": "\\v",
    "\f": "\\f",
    "\r": "\\r",
    '"': '\\"',
    "\\": "\\\\",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class FileChange:
    """One file's part of a diff: its ``changes`` entry and its patch section.

    Build it with :func:`file_change`, which keeps ``patch`` consistent with the
    structured fields; construct it directly only for changes that have no text
    patch (directories, symlinks), leaving ``patch`` as ``None``.

    :param operation: the ACP operation (``add``, ``delete``, ``modify``,
        ``move``, ``copy``), or a custom one starting with ``_``.
    :param path: absolute path after the operation; for ``delete`` the deleted path.
    :param old_path: absolute path before the operation; required for ``move``
        and ``copy``, absent otherwise.
    :param file_type: kind of content after the operation (for ``delete``, of
        the deleted file): ``text``, ``binary``, ``directory``, ``symlink``, a
        custom ``_``-prefixed kind, or ``None`` when unknown.
    :param mime_type: MIME type of that content; ``None`` when unknown.
    :param patch: this file's ``diff --git`` section with absolute paths, or
        ``None`` when there is no useful text patch (binary content, no change).
    :raises RelativePathError: if ``path`` or ``old_path`` is not absolute.
    :raises ValueError: if ``old_path`` is missing for ``move``/``copy`` or
        given for another ACP operation, or if ``operation`` or ``file_type`` is
        neither an ACP value nor ``_``-prefixed.
    """

    operation: FileOperation | str
    path: str
    old_path: str | None = None
    file_type: str | None = None
    mime_type: str | None = None
    patch: str | None = None
    #: The whole texts before and after (None: no such file, or not text), for
    #: an encoding whose diffs show texts instead of a patch; set by
    #: :func:`file_change`, None for a change built by hand.
    texts: tuple[str | None, str | None] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        _check_absolute(self.path, "path")
        if self.old_path is not None:
            _check_absolute(self.old_path, "old_path")
        if self.operation in ("move", "copy"):
            if self.old_path is None:
                raise ValueError(f"operation {self.operation!r} requires old_path")
        elif self.operation in ("add", "delete", "modify"):
            if self.old_path is not None:
                raise ValueError(f"operation {self.operation!r} takes no old_path")
        else:
            # Other values are reserved for future ACP versions; this catches typos too.
            require_value(self.operation, _OPERATIONS, "operation")
        if self.file_type is not None:
            require_value(self.file_type, KNOWN_DIFF_FILE_TYPE, "file_type")

    def to_schema(self) -> DiffChange:
        """This change as the protocol's ``changes`` entry (``None`` fields are omitted)."""
        file_type = UNSET if self.file_type is None else self.file_type
        mime_type = UNSET if self.mime_type is None else self.mime_type
        if self.operation == "add":
            return AddChange(path=self.path, file_type=file_type, mime_type=mime_type)
        if self.operation == "delete":
            return DeleteChange(path=self.path, file_type=file_type, mime_type=mime_type)
        if self.operation == "modify":
            return ModifyChange(path=self.path, file_type=file_type, mime_type=mime_type)
        if self.operation in ("move", "copy"):
            assert self.old_path is not None  # checked on construction
            pair = MoveChange if self.operation == "move" else CopyChange
            return pair(
                old_path=self.old_path, path=self.path, file_type=file_type, mime_type=mime_type
            )
        raw: dict[str, object] = {"operation": self.operation, "path": self.path}
        for key, value in (
            ("oldPath", self.old_path),
            ("fileType", self.file_type),
            ("mimeType", self.mime_type),
        ):
            if value is not None:
                raw[key] = value
        return UnknownDiffChange(raw)


def file_change(
    path: _StrPath,
    old: FileContent,
    new: FileContent,
    *,
    old_path: _StrPath | None = None,
    operation: Literal["move", "copy"] | None = None,
    mime_type: str | None = None,
    context: int = 3,
) -> FileChange:
    """Describe how one file changes from ``old`` to ``new``.

    The operation follows from the contents: ``None`` to content is ``add``,
    content to ``None`` is ``delete``, content to content is ``modify``. A
    ``move`` or ``copy`` is explicit: pass ``old_path`` (where ``old`` lives) and
    ``operation``; ``path`` is then where ``new`` lives.

    Content is text when it is valid UTF-8 without NUL characters (a ``str``
    must also be encodable as UTF-8); the change then gets ``file_type="text"``
    and a patch section that ``git apply -p0 --unsafe-paths`` applies to
    reproduce ``new`` byte for byte. Otherwise ``file_type`` is ``"binary"``
    and there is no patch, except for an unchanged move or copy, whose
    header-only section is exact for any content. A modify that changes
    nothing also has no patch: Git has no text for it.

    :param path: absolute path after the change (the deleted path for a delete).
    :param old: content before, or ``None`` if the file did not exist.
    :param new: content after, or ``None`` if the file no longer exists.
    :param old_path: absolute source path of a move or copy.
    :param operation: ``"move"`` or ``"copy"``, together with ``old_path``.
    :param mime_type: MIME type to report; guessed from the file name when
        ``None`` (and left out if the name says nothing).
    :param context: unchanged lines around each hunk, as ``git diff -U``.
    :raises RelativePathError: if ``path`` or ``old_path`` is not absolute,
        checked before anything else.
    :raises ValueError: for an impossible combination: both contents ``None``,
        ``old_path`` without ``operation`` or the reverse, a move or copy onto
        its own path or of a missing file, or a negative ``context``.
    """
    new_path = _check_absolute(os.fspath(path), "path")
    source = None if old_path is None else _check_absolute(os.fspath(old_path), "old_path")
    if (source is None) != (operation is None):
        raise ValueError("old_path and operation go together (a move or a copy)")
    if context < 0:
        raise ValueError(f"context must be >= 0, got {context}")

    op: FileOperation
    if operation is not None:
        if operation not in ("move", "copy"):
            raise ValueError(f"operation must be 'move' or 'copy', got {operation!r}")
        if old is None or new is None:
            raise ValueError(f"a {operation} needs both old and new content")
        if source == new_path:
            raise ValueError(f"a {operation} needs old_path to differ from path")
        op = operation
    elif old is None and new is None:
        raise ValueError("old and new are both None: nothing changes")
    elif old is None:
        op = "add"
    elif new is None:
        op = "delete"
    else:
        op = "modify"

    # The reported kind is that of the content after the change, or of the
    # deleted content; the patch needs text on both sides.
    old_text = None if old is None else _as_text(old)
    new_text = None if new is None else _as_text(new)
    is_text = (old_text if new is None else new_text) is not None
    both_text = (old is None or old_text is not None) and (new is None or new_text is not None)

    if mime_type is None:
        import mimetypes  # noqa: PLC0415 - only when no mime type is given

        mime_type = mimetypes.guess_type(new_path)[0]

    if both_text:
        patch = _text_section(
            op, source, new_path, old=old_text or "", new=new_text or "", context=context
        )
    elif op in ("move", "copy") and _raw(old) == _raw(new):
        patch = _header(op, source, new_path, 100)
    else:
        patch = None
    change = FileChange(
        operation=op,
        path=new_path,
        old_path=source,
        file_type="text" if is_text else "binary",
        mime_type=mime_type,
        patch=patch,
    )
    object.__setattr__(change, "texts", (old_text, new_text) if both_text else (None, None))
    return change


def _check_absolute(path: str, what: str) -> str:
    if not isinstance(path, str):  # pyright: ignore[reportUnnecessaryIsInstance]
        # What the type says; an untyped caller may pass anything.
        raise TypeError(f"{what} must be a str or os.PathLike[str], got {type(path).__name__}")
    return require_absolute(path, what)


def _as_text(content: str | bytes) -> str | None:
    """The content as text, or ``None`` if it must be treated as binary."""
    if isinstance(content, bytes):
        if b"\0" in content:
            return None
        try:
            return content.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if "\0" in content:
        return None
    try:
        # A lone surrogate can be neither written to the file nor sent as JSON.
        content.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return content


def _raw(content: FileContent) -> bytes | None:
    if content is None or isinstance(content, bytes):
        return content
    return content.encode("utf-8", "surrogatepass")


def _lines(text: str) -> list[str]:
    """Split like Git: on ``"\\n"`` only, each line keeping its terminator."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _quote(name: str) -> str:
    """Quote ``name`` as Git does with ``core.quotePath=false``."""
    if not any(c in _LETTER_ESCAPES or c < " " or c == "\x7f" for c in name):
        return name
    out: list[str] = []
    for c in name:
        if c in _LETTER_ESCAPES:
            out.append(_LETTER_ESCAPES[c])
        elif c < " " or c == "\x7f":
            out.append(f"\\{ord(c):03o}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def _label(name: str | None) -> str:
    """A ``---``/``+++`` name; Git ends one that contains a space with a tab."""
    if name is None:
        return _DEV_NULL
    return _quote(name) + ("\t" if " " in name else "")


def _header(op: FileOperation, source: str | None, path: str, similarity: int) -> str:
    a = path if source is None else source
    head = f"diff --git {_quote(a)} {_quote(path)}\n"
    if op == "add":
        return head + f"new file mode {_MODE}\n"
    if op == "delete":
        return head + f"deleted file mode {_MODE}\n"
    if op in ("move", "copy"):
        verb = "rename" if op == "move" else "copy"
        return (
            head
            + f"similarity index {similarity}%\n"
            + f"{verb} from {_quote(a)}\n{verb} to {_quote(path)}\n"
        )
    return head


def _text_section(
    op: FileOperation, source: str | None, path: str, *, old: str, new: str, context: int
) -> str | None:
    a, b = _lines(old), _lines(new)
    blocks = _changed_blocks(a, b)
    if op == "modify" and not blocks:
        return None
    similarity = _similarity(a, b, blocks) if op in ("move", "copy") else 100
    out = [_header(op, source, path, similarity)]
    if op == "add":
        out.append(f"--- {_DEV_NULL}\n+++ {_label(path)}\n")
    elif op == "delete":
        out.append(f"--- {_label(path)}\n+++ {_DEV_NULL}\n")
    elif blocks:
        out.append(f"--- {_label(path if source is None else source)}\n+++ {_label(path)}\n")
    _render_hunks(out, a, b, blocks, context)
    return "".join(out)


_Block: TypeAlias = tuple[int, int, int, int]
"""A replaced region: ``a[i1:i2]`` becomes ``b[j1:j2]``; everything between blocks is equal."""


def _changed_blocks(a: Sequence[str], b: Sequence[str]) -> list[_Block]:
    blocks: list[_Block] = []
    i_prev = j_prev = 0
    for i, j, size in [*_matching_runs(a, b), (len(a), len(b), 0)]:
        if i > i_prev or j > j_prev:
            blocks.append((i_prev, i, j_prev, j))
        i_prev, j_prev = i + size, j + size
    return blocks


def _matching_runs(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int, int]]:
    """Runs ``a[i:i+n] == b[j:j+n]``, in order, that leave the rest to replace.

    Patience diff: lines that occur exactly once on each side and keep their
    relative order anchor the match, and each gap between anchors is solved the
    same way. Only a gap without such lines goes to ``SequenceMatcher``, whose
    cost grows with the square of its size; unique anchors keep that small for
    real source files (a plain matcher took minutes on 20k lines with many
    repeated ``}``). An explicit stack avoids deep recursion.
    """
    runs: list[tuple[int, int, int]] = []
    stack = [(0, len(a), 0, len(b))]
    while stack:
        a_lo, a_hi, b_lo, b_hi = stack.pop()
        start_a, start_b = a_lo, b_lo
        while a_lo < a_hi and b_lo < b_hi and a[a_lo] == b[b_lo]:
            a_lo += 1
            b_lo += 1
        if a_lo > start_a:
            runs.append((start_a, start_b, a_lo - start_a))
        end_a = a_hi
        while a_lo < a_hi and b_lo < b_hi and a[a_hi - 1] == b[b_hi - 1]:
            a_hi -= 1
            b_hi -= 1
        if a_hi < end_a:
            runs.append((a_hi, b_hi, end_a - a_hi))
        if a_lo == a_hi or b_lo == b_hi:
            continue
        anchors = _unique_anchors(a, b, (a_lo, a_hi, b_lo, b_hi))
        if anchors:
            for i, j in anchors:
                stack.append((a_lo, i, b_lo, j))
                runs.append((i, j, 1))
                a_lo, b_lo = i + 1, j + 1
            stack.append((a_lo, a_hi, b_lo, b_hi))
        else:
            import difflib  # noqa: PLC0415 - only when texts differ

            matcher = difflib.SequenceMatcher(None, a[a_lo:a_hi], b[b_lo:b_hi])
            runs.extend(
                (a_lo + i, b_lo + j, size) for i, j, size in matcher.get_matching_blocks() if size
            )
    runs.sort()
    return runs


def _unique_anchors(a: Sequence[str], b: Sequence[str], region: _Block) -> list[tuple[int, int]]:
    """The longest in-order chain of lines unique on both sides of ``region``."""
    a_lo, a_hi, b_lo, b_hi = region
    # line -> its index, or -1 once it is seen twice
    in_a: dict[str, int] = {}
    for i in range(a_lo, a_hi):
        in_a[a[i]] = -1 if a[i] in in_a else i
    in_b: dict[str, int] = {}
    for j in range(b_lo, b_hi):
        line = b[j]
        if in_a.get(line, -1) >= 0:
            in_b[line] = -1 if line in in_b else j
    pairs = sorted((in_a[line], j) for line, j in in_b.items() if j >= 0)
    # Longest increasing subsequence of the b indices (patience sorting).
    tails: list[int] = []  # b index ending the best chain of each length
    tail_pair: list[int] = []  # position in pairs of that chain's last element
    previous = [-1] * len(pairs)
    for k, (_, j) in enumerate(pairs):
        length = bisect.bisect_left(tails, j)
        if length == len(tails):
            tails.append(j)
            tail_pair.append(k)
        else:
            tails[length] = j
            tail_pair[length] = k
        previous[k] = tail_pair[length - 1] if length else -1
    chain: list[tuple[int, int]] = []
    k = tail_pair[-1] if tail_pair else -1
    while k >= 0:
        chain.append(pairs[k])
        k = previous[k]
    chain.reverse()
    return chain


def _similarity(a: Sequence[str], b: Sequence[str], blocks: Sequence[_Block]) -> int:
    """Percentage of shared content, like Git's ``similarity index`` (an estimate).

    Git counts bytes of the source found again in the destination, over the
    larger size, and says 100% only for identical content.
    """
    if not blocks:
        return 100
    size_a = sum(len(line.encode()) for line in a)
    changed = sum(len(line.encode()) for i1, i2, _, _ in blocks for line in a[i1:i2])
    larger = max(size_a, sum(len(line.encode()) for line in b))
    return min(99, (size_a - changed) * 100 // larger) if larger else 99


def _render_hunks(
    out: list[str], a: Sequence[str], b: Sequence[str], blocks: Sequence[_Block], context: int
) -> None:
    start = 0
    while start < len(blocks):
        # Blocks whose gap fits in twice the context share one hunk, as in Git.
        stop = start + 1
        while stop < len(blocks) and blocks[stop][0] - blocks[stop - 1][1] <= 2 * context:
            stop += 1
        group = blocks[start:stop]
        first, last = group[0], group[-1]
        lead = min(context, first[0])
        trail = min(context, len(a) - last[1])
        a_lo, a_hi = first[0] - lead, last[1] + trail
        b_lo, b_hi = first[2] - lead, last[3] + trail
        out.append(f"@@ -{_range(a_lo, a_hi)} +{_range(b_lo, b_hi)} @@\n")
        pos = a_lo
        for i1, i2, j1, j2 in group:
            _emit(out, " ", a[pos:i1])
            _emit(out, "-", a[i1:i2])
            _emit(out, "+", b[j1:j2])
            pos = i2
        _emit(out, " ", a[pos:a_hi])
        start = stop


def _range(lo: int, hi: int) -> str:
    """A unified-diff range; an empty one names the line before it."""
    if hi - lo == 1:
        return str(lo + 1)
    return f"{lo if hi == lo else lo + 1},{hi - lo}"


def _emit(out: list[str], sign: str, lines: Sequence[str]) -> None:
    for line in lines:
        out.append(sign)
        out.append(line)
        if not line.endswith("\n"):
            out.append("\n" + _NO_NEWLINE)


def diff_of(*changes: FileChange) -> Diff:
    """Join file changes into one ``diff`` tool-call content item.

    ``changes`` gets one entry per file, in the given order; the ``git_patch``
    text is the concatenation of their sections, so it covers exactly the
    changes that have useful text and stays consistent with ``changes``. The
    patch is omitted when no change has text (binary updates, no-op modifies).
    When every change knows its whole texts (made by :func:`file_change`), the
    item also carries them (old and new text per file) for an encoding that shows them,
    encoded and compared exactly as the ``Diff``.
    """
    sections = [change.patch for change in changes if change.patch is not None]
    diff = Diff(
        changes=[change.to_schema() for change in changes],
        patch=DiffPatch(format="git_patch", text="".join(sections)) if sections else UNSET,
    )
    if all(change.texts is not None for change in changes):
        # The whole texts ride along with the item for the encoding (never encoded).
        return with_texts(
            diff,
            [
                (str(change.operation), change.path, *change.texts)
                for change in changes
                if change.texts is not None
            ],
        )
    return diff


def file_diff(
    path: _StrPath,
    old: FileContent,
    new: FileContent,
    *,
    old_path: _StrPath | None = None,
    operation: Literal["move", "copy"] | None = None,
    mime_type: str | None = None,
    context: int = 3,
) -> Diff:
    """The ``diff`` tool-call content item for one file: ``diff_of(file_change(...))``.

    Put the result straight into a tool call's ``content``. Takes the
    arguments of :func:`file_change` and raises what it raises.
    """
    return diff_of(
        file_change(
            path,
            old,
            new,
            old_path=old_path,
            operation=operation,
            mime_type=mime_type,
            context=context,
        )
    )
