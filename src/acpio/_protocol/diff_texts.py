"""Whole file texts that travel with the ``diff`` item they belong to.

How this works: a v2 ``diff`` carries structured changes and a patch; an ACP v1
diff carries the whole old and new text of a file instead. :func:`acpio.file_diff`
and :func:`acpio.diff_of` know those texts, so the item they return is a
:class:`TextsDiff`: a :class:`acpio.schema.Diff` that also holds the texts as a
plain attribute, never encoded (its wire bytes are exactly the ``Diff``'s), and
that compares equal to the ``Diff`` of the same fields. The v1 encoding reads
them with :func:`whole_texts`; a ``Diff`` without them (built by hand, decoded,
loaded from a store after a restart) is described by its changes and patch.
Nothing is kept anywhere else: the texts live and die with the item, and a
history that keeps items for replay lets go of the texts of older ones
(:func:`forget_texts`, bounded by ``HistoryLimits.diff_text_chars``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import msgspec

from .. import schema

__all__ = ["DiffTexts", "TextsDiff", "forget_texts", "texts_size", "whole_texts", "with_texts"]

#: One file of a diff: ``(operation, path, old_text, new_text)``; a ``None`` text means
#: no such file, or (both ``None``) no text form (binary).
DiffTexts = tuple[str, str, str | None, str | None]

_TEXTS = "whole_texts"


class TextsDiff(schema.Diff, kw_only=True, dict=True):
    """A ``diff`` item carrying its files' whole texts (see the module docstring).

    Encodes to exactly the bytes of the :class:`~acpio.schema.Diff` of the same
    fields, and equals it: agent code never sees the difference.
    """

    def __eq__(self, other: object) -> bool:
        if isinstance(other, schema.Diff):
            return msgspec.structs.astuple(self) == msgspec.structs.astuple(other)
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None  # type: ignore[assignment]  # mutable, like every Struct


def with_texts(diff: schema.Diff, texts: Sequence[DiffTexts]) -> TextsDiff:
    """``diff`` as a :class:`TextsDiff` holding ``texts`` (one entry per file, in order)."""
    out = TextsDiff(changes=diff.changes, patch=diff.patch, meta=diff.meta)
    vars(out)[_TEXTS] = tuple(texts)
    return out


def whole_texts(diff: schema.Diff) -> tuple[DiffTexts, ...] | None:
    """The whole texts ``diff`` carries, or None (a ``Diff`` that has none)."""
    if not isinstance(diff, TextsDiff):
        return None
    return cast("tuple[DiffTexts, ...] | None", vars(diff).get(_TEXTS))


def texts_size(diff: schema.Diff) -> int:
    """How many characters of whole texts ``diff`` carries (0 for a plain ``Diff``)."""
    texts = whole_texts(diff)
    if not texts:
        return 0
    return sum(len(old or "") + len(new or "") for _, _, old, new in texts)


def forget_texts(diff: schema.Diff) -> None:
    """Let go of the whole texts ``diff`` carries: from now on it is described by its
    changes and patch, like a ``Diff`` loaded from a store."""
    if isinstance(diff, TextsDiff):
        vars(diff).pop(_TEXTS, None)
