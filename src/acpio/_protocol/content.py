"""Small helpers for content blocks, the unit of every prompt and message."""

from __future__ import annotations

from collections.abc import Iterable

from .. import schema

__all__ = ["text_of"]


def text_of(blocks: Iterable[schema.ContentBlock], separator: str = "") -> str:
    """The text of every text block, joined; other block types are skipped.

    Typical use: ``command = acpio.text_of(prompt)`` in :meth:`acpio.Agent.prompt`.
    """
    return separator.join(block.text for block in blocks if isinstance(block, schema.TextContent))
