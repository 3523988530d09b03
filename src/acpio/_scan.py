"""Reading the top level of a JSON line without decoding it: for hostile input only.

How this works: the JSON decoder recurses once per level of nesting, so a
message nested deeply enough raises RecursionError at Python's default limit
and crashes a process that raised that limit. :func:`_too_deep` finds such a
line before it reaches the decoder, with C-speed byte passes (strings
removed, every innermost bracket pair removed per round) rather than a
byte-by-byte Python loop, and an ordinary message (fewer opening brackets
than the limit) costs two ``count`` calls. A line that cannot be decoded is
still answered properly: :func:`_top_level_members` reads the scalar members
of its top-level object (``id``, ``method``) and :func:`_top_level_items`
splits a batch into its entries, both with one regular expression that
treats a run of brackets as a single token, so the nesting depth never
costs more than the length of the line. Both stop after a bounded number of
tokens.
"""

from __future__ import annotations

import re
from typing import Final

import msgspec

from ._wire import _OPEN_BRACKET

__all__ = ["_is_object", "_scalar", "_too_deep", "_top_level_items", "_top_level_members"]

# Strings (escapes included) and every byte that is not a bracket: what the
# depth check skips.
_JSON_STRING: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS: Final = bytes(b for b in range(256) if b not in b"[]{}")
_TO_SQUARE: Final = bytes.maketrans(b"{}", b"[]")


def _too_deep(line: bytes, limit: int) -> bool:
    """True when arrays and objects nest more than ``limit`` levels in ``line``.

    Cheap for ordinary messages: only a line with more than ``limit`` opening
    brackets is looked at closely, with C-speed passes (strings removed, every
    innermost pair removed per round), never a byte-by-byte Python loop.
    """
    if line.count(b"[") + line.count(b"{") <= limit:
        return False
    brackets = _JSON_STRING.sub(b"", line).translate(_TO_SQUARE, _NOT_BRACKETS)
    if b"[" * (limit + 1) in brackets:
        return True
    for _ in range(limit):
        shorter = brackets.replace(b"[]", b"")
        if len(shorter) == len(brackets):
            # Unbalanced: not JSON, which the decoder reports (shallowly) itself.
            return False
        brackets = shorter
        if not brackets:
            return False
    return bool(brackets)


# Top-level tokens of a message that is too deep to decode: strings, runs of
# brackets (one token for any depth), separators, and scalars.
_TOKEN: Final = re.compile(
    rb'\s*(?:("[^"\\]*(?:\\.[^"\\]*)*")|([\[{]+)|([\]}]+)|([:,])|([^\s\[\]{}",:]+))'
)
_TOKEN_BUDGET: Final = 1_000_000


def _top_level_members(line: bytes) -> tuple[dict[str, bytes | None], bool] | None:
    """The members of a JSON object line without decoding its nested values.

    Each key maps to the raw token of a scalar value, or ``None`` for an array
    or object; the flag says whether the whole object was read (the scan
    stops after a bounded number of tokens). ``None`` when the line is not
    an object.
    """
    members: dict[str, bytes | None] = {}
    depth = 0
    key: str | None = None
    expect_value = False
    position = 0
    for _ in range(_TOKEN_BUDGET):
        match = _TOKEN.match(line, position)
        if match is None or match.end() == position:
            return (members, False) if depth else None
        position = match.end()
        string, opening, closing, separator, scalar = match.groups()
        if depth == 0:
            if opening != b"{":
                return None  # an array (a batch) or no object at all
            depth = 1
        elif opening is not None:
            if depth == 1 and expect_value and key is not None:
                members[key] = None
            expect_value = False
            depth += len(opening)
        elif closing is not None:
            depth -= len(closing)
            if depth <= 0:
                # Anything after the object makes it something else than one message.
                return members, depth == 0 and not line[position:].strip()
        elif depth == 1:
            if separator is not None:
                expect_value = separator == b":" and key is not None
            elif expect_value:
                if key is not None:
                    members[key] = string if string is not None else scalar
                key = None
                expect_value = False
            elif string is not None:
                decoded = _scalar(string)
                key = decoded if isinstance(decoded, str) else None
    return members, False


def _top_level_items(line: bytes) -> list[bytes] | None:
    """The entries of a JSON array line, as bytes, without decoding them.

    ``None`` when the line is not one array or cannot be split within a
    bounded number of tokens.
    """
    items: list[bytes] = []
    depth = 0
    start = 0
    position = 0
    for _ in range(_TOKEN_BUDGET):
        match = _TOKEN.match(line, position)
        if match is None or match.end() == position:
            return None
        position = match.end()
        _, opening, closing, separator, _ = match.groups()
        if depth == 0:
            if opening is None or opening[0] != _OPEN_BRACKET:
                return None
            start = match.start(2) + 1
        if opening is not None:
            depth += len(opening)
        elif closing is not None:
            if len(closing) >= depth:
                # The bracket that closes the array ends the last entry.
                end = match.start(3) + depth - 1
                if line[start:end].strip():
                    items.append(line[start:end])
                if len(closing) > depth or line[end + 1 :].strip():
                    return None
                return items
            depth -= len(closing)
        elif separator == b"," and depth == 1:
            items.append(line[start : match.start(4)])
            start = match.end()
    return None


def _is_object(data: bytes) -> bool:
    return data.lstrip()[:1] == b"{"


def _scalar(token: bytes | None) -> object:
    """Decode a scalar token; ``None`` for anything that is not a valid one."""
    if token is None:
        return None
    try:
        return msgspec.json.decode(token)
    except msgspec.DecodeError:
        return None
