"""Reading the top level of a JSON line without decoding it: for hostile input only.

How this works: the JSON decoder recurses once per level of nesting, so a
message nested deeply enough raises RecursionError at Python's default limit
and crashes a process that raised that limit. :func:`too_deep` finds such a
line before it reaches the decoder in one linear pass at C speed: escapes
are dropped (two ``replace`` calls), everything but brackets and quotes is
deleted (one ``translate``), and one regular expression built for the limit
walks what remains, skipping strings, with one nested possessive group per
allowed level, so it can only stop early at a bracket that opens a level
beyond the limit (see :func:`_depth_pattern`). Nothing is ever matched
twice: no backtracking, no pass per level. An ordinary message (fewer
opening brackets than the limit) still costs two ``count`` calls. Measured
bound (``benchmarks/nesting.py``): about 20 ns of CPU a byte, 0.6 s for the
worst legal line at the default 32 MiB size limit (it was 23 s with one
``replace`` pass per level); over pipes, reading, checking and answering
such a line holds up the connection for about 1.5 s.

A line that cannot be decoded is still answered properly:
:func:`top_level_members` reads the scalar members of its top-level object
(``id``, ``method``) and :func:`top_level_items` splits a batch into its
entries, both with one regular expression that treats a run of brackets as
a single token, so the nesting depth never costs more than the length of
the line. Both stop after a bounded number of tokens.
"""

from __future__ import annotations

import functools
import re
import sys
from typing import Final

import msgspec

from .wire import OPEN_BRACKET as _OPEN_BRACKET

_QUOTE: Final = ord('"')

__all__ = [
    "PATTERN_LIMIT",
    "_is_object",
    "_scalar",
    "_too_deep",
    "_top_level_items",
    "_top_level_members",
    "is_object",
    "decode_scalar",
    "leading_members",
    "too_deep",
    "too_deep_slowly",
    "top_level_items",
    "top_level_members",
]

# What the depth check keeps: brackets (braces become square ones) and quotes.
_TO_SQUARE: Final = bytes.maketrans(b"{}", b"[]")
_NOT_BRACKETS_OR_QUOTES: Final = bytes(b for b in range(256) if b not in b'[]{}"')
# Complete strings (escapes already dropped): what lies between two brackets.
_STRINGS: Final = rb'(?:"[^"]*+")*+'
# Beyond this limit the pattern would nest too deeply for the regex compiler.
PATTERN_LIMIT: Final = 1000


@functools.lru_cache(maxsize=4)
def _depth_pattern(limit: int) -> re.Pattern[bytes]:
    """A pattern matching brackets and strings nested at most ``limit`` levels.

    Level ``k`` is strings, then any number of ``[ <level k-1> ]`` each
    followed by strings; level 0 is strings only. Every repetition is
    possessive, and each level can only go on with one of ``"``, ``[``,
    ``]``, so the match advances through the line without ever backtracking.
    """
    pattern = _STRINGS
    for _ in range(limit):
        pattern = _STRINGS + rb"(?:\[" + pattern + rb"\]" + _STRINGS + rb")*+"
    # The regex parser recurses once or twice per group; never fail for want of frames.
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 8 * limit + 1000))
    try:
        return re.compile(pattern)
    finally:
        sys.setrecursionlimit(old)


def too_deep(line: bytes, limit: int) -> bool:
    """True when arrays and objects nest more than ``limit`` levels in ``line``.

    That is, when a bracket opens a level beyond ``limit`` before the first
    closing bracket without an opening one (where any decoder stops);
    brackets inside strings do not count. One linear pass at C speed (see
    the module doc), and an ordinary message, with no more opening brackets
    than ``limit``, costs two ``count`` calls.
    """
    if line.count(b"[") + line.count(b"{") <= limit:
        return False
    if b"\\" in line:
        # Escaped backslashes first, so that what is left of ``\\"`` is a real quote.
        line = line.replace(b"\\\\", b"").replace(b'\\"', b"")
    marks = line.translate(_TO_SQUARE, _NOT_BRACKETS_OR_QUOTES)
    if marks.count(b'"') % 2:
        marks += b'"'  # an unterminated string: nothing after its quote counts
    if limit > PATTERN_LIMIT:
        return too_deep_slowly(marks, limit)
    # Closing brackets for whatever is left open, so only depth stops the match.
    marks += b"]" * limit
    match = _depth_pattern(limit).match(marks)
    assert match is not None  # every part of the pattern may match nothing
    end = match.end()
    return end < len(marks) and marks[end] == _OPEN_BRACKET


def too_deep_slowly(marks: bytes, limit: int) -> bool:
    """:func:`too_deep` for limits too high for one pattern: a Python loop."""
    depth = 0
    in_string = False
    for byte in marks:
        if byte == _QUOTE:
            in_string = not in_string
        elif in_string:
            continue
        elif byte == _OPEN_BRACKET:
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
            if depth < 0:
                return False
    return False


# Top-level tokens of a message that is too deep to decode: strings, runs of
# brackets (one token for any depth), separators, and scalars.
_TOKEN: Final = re.compile(
    rb'\s*(?:("[^"\\]*(?:\\.[^"\\]*)*")|([\[{]+)|([\]}]+)|([:,])|([^\s\[\]{}",:]+))'
)
_TOKEN_BUDGET: Final = 1_000_000


def top_level_members(line: bytes) -> tuple[dict[str, bytes | None], bool] | None:
    """The members of a JSON object line without decoding its nested values.

    Each key maps to the raw token of a scalar value, or ``None`` for an array
    or object; the flag says whether the whole object was read (the scan
    stops after a bounded number of tokens). ``None`` when the line is not
    an object.
    """
    scanned = _scan_members(line)
    return None if scanned is None else scanned[:2]


def leading_members(head: bytes) -> tuple[dict[str, bytes | None], str | None] | None:
    """The top-level members read whole from ``head``, the start of a line that was cut off.

    As :func:`top_level_members`, except that a scalar running up to the
    cut (a number perhaps cut short) is left out, and the key whose value
    the cut fell into is returned beside the members (``None`` when the cut
    fell elsewhere). ``None`` when ``head`` does not start an object.
    """
    scanned = _scan_members(_UNFINISHED_SCALAR.sub(b"", head))
    return None if scanned is None else (scanned[0], scanned[2])


# A scalar (or the inside of a string) running up to the end of a line that was cut off.
_UNFINISHED_SCALAR: Final = re.compile(rb'[^\s\[\]{}",:]+\Z')


def _scan_members(line: bytes) -> tuple[dict[str, bytes | None], bool, str | None] | None:
    """:func:`top_level_members`, plus the key whose value the scan stopped in, if any."""
    members: dict[str, bytes | None] = {}
    depth = 0
    key: str | None = None
    open_key: str | None = None  # the member whose array or object is being skipped
    expect_value = False
    position = 0
    for _ in range(_TOKEN_BUDGET):
        match = _TOKEN.match(line, position)
        if match is None or match.end() == position:
            if not depth:
                return None
            return members, False, (key if expect_value else open_key if depth > 1 else None)
        position = match.end()
        string, opening, closing, separator, scalar = match.groups()
        if depth == 0:
            if opening != b"{":
                return None  # an array (a batch) or no object at all
            depth = 1
        elif opening is not None:
            if depth == 1 and expect_value and key is not None:
                members[key] = None
                open_key = key
            expect_value = False
            depth += len(opening)
        elif closing is not None:
            depth -= len(closing)
            if depth <= 0:
                # Anything after the object makes it something else than one message.
                return members, depth == 0 and not line[position:].strip(), None
            if depth == 1:
                open_key = None
        elif depth == 1:
            if separator is not None:
                expect_value = separator == b":" and key is not None
            elif expect_value:
                if key is not None:
                    members[key] = string if string is not None else scalar
                key = None
                expect_value = False
            elif string is not None:
                decoded = decode_scalar(string)
                key = decoded if isinstance(decoded, str) else None
    return members, False, None


def top_level_items(line: bytes) -> list[bytes] | None:
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


def is_object(data: bytes) -> bool:
    """Whether a JSON value's bytes are an object (its first non-blank byte is ``{``)."""
    return data.lstrip()[:1] == b"{"


def decode_scalar(token: bytes | None) -> object:
    """Decode a scalar token; ``None`` for anything that is not a valid one."""
    if token is None:
        return None
    try:
        return msgspec.json.decode(token)
    except msgspec.DecodeError:
        return None


# The names ``_incoming`` imports today (its owner switches to the plain ones; then drop these).
_is_object = is_object
_scalar = decode_scalar
_too_deep = too_deep
_top_level_items = top_level_items
_top_level_members = top_level_members
