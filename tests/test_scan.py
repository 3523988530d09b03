"""The nesting check of :mod:`acpio._rpc.scan` against a byte-by-byte reference.

``too_deep`` answers in one C-speed pass (escapes dropped, a translate,
one possessive regular expression); the reference below walks the line one
byte at a time, as a JSON decoder would: strings (with their escapes) are
skipped, and it stops at the first closing bracket that closes nothing.
"""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from acpio._rpc.scan import PATTERN_LIMIT, leading_members, too_deep, too_deep_slowly

_QUOTE = ord('"')
_BACKSLASH = ord("\\")


def reference_too_deep(line: bytes, limit: int) -> bool:
    """The depth a decoder reaches exceeds ``limit``; stray backslashes stop it."""
    depth = 0
    in_string = False
    position = 0
    while position < len(line):
        byte = line[position]
        if in_string:
            if byte == _BACKSLASH:
                position += 2
                continue
            if byte == _QUOTE:
                in_string = False
        elif byte == _QUOTE:
            in_string = True
        elif byte == _BACKSLASH:
            return False  # a syntax error: the decoder stops here
        elif byte in b"[{":
            depth += 1
            if depth > limit:
                return True
        elif byte in b"]}":
            depth -= 1
            if depth < 0:
                return False
        position += 1
    return False


# Strings whose content is full of what must not count: brackets, quotes and
# backslashes, escaped or escaping.
_string_content = st.lists(
    st.sampled_from(
        [b"a", b"[", b"]", b"{", b"}", b"\\\\", b'\\"', b"\\n", b"\\u005b", b" ", b"\xc3\xa9"]
    ),
    max_size=6,
).map(b"".join)
_strings = _string_content.map(lambda content: b'"' + content + b'"')
_tokens = st.one_of(
    st.sampled_from([b"[", b"]", b"{", b"}", b",", b":", b"1", b" ", b"[]", b"{}"]),
    _strings,
    st.integers(min_value=1, max_value=12).map(lambda n: b"[" * n),
    st.integers(min_value=1, max_value=12).map(lambda n: b"]" * n),
)
# Lines a JSON decoder could read up to its first error (no backslash outside
# a string), possibly ending inside an unterminated string.
_lines = st.tuples(
    st.lists(_tokens, max_size=60).map(b"".join),
    st.one_of(st.just(b""), _string_content.map(lambda content: b'"' + content)),
).map(b"".join)


@settings(max_examples=600, deadline=None)
@given(line=_lines, limit=st.integers(min_value=1, max_value=12))
@example(line=b'["[[[[", [[[', limit=3)
@example(line=b'[["\\\\"]]]', limit=1)
@example(line=b'[["\\\\\\"]]]"]]', limit=2)
@example(line=b"[[[[]]]]]", limit=3)
@example(line=b'[[[["', limit=3)
def test_too_deep_agrees_with_the_byte_by_byte_reference(line: bytes, limit: int) -> None:
    expected = reference_too_deep(line, limit)
    assert too_deep(line, limit) == expected
    assert too_deep_slowly(_marks(line), limit) == expected


@settings(max_examples=300, deadline=None)
@given(line=st.binary(max_size=80), limit=st.integers(min_value=1, max_value=8))
def test_too_deep_never_misses_what_a_decoder_would_reach(line: bytes, limit: int) -> None:
    # Any bytes at all: where the decoder would go beyond the limit, the check says so.
    if reference_too_deep(line, limit):
        assert too_deep(line, limit)


@settings(max_examples=200, deadline=None)
@given(
    value=st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.text(alphabet='[]{}"\\ab\n\u202e', max_size=5),
        lambda children: (
            st.lists(children, max_size=3)
            | st.dictionaries(st.text(alphabet='[]"\\k', max_size=3), children, max_size=3)
        ),
        max_leaves=30,
    )
)
def test_too_deep_of_real_json_is_its_depth(value: object) -> None:
    line = msgspec.json.encode(value)
    depth = _depth(value)
    for limit in range(1, depth + 2):
        assert too_deep(line, limit) == (depth > limit)


@pytest.mark.parametrize("limit", [1, 2, 255, 256, 257])
def test_the_limit_itself_is_allowed(limit: int) -> None:
    at_limit = b"[" * limit + b'"]]]]"' + b"]" * limit
    assert not too_deep(at_limit, limit)
    assert too_deep(b"[" + at_limit + b"]", limit)
    # Beside each other, many levels at the limit are still legal.
    assert not too_deep(
        b"[" + b",".join([b"[" * (limit - 1) + b"]" * (limit - 1)] * 50) + b"]", limit
    )


def test_escaped_quotes_neither_end_a_string_nor_cost_a_pass_each() -> None:
    # Once quadratic: every escaped quote restarted a failed string match.
    line = b"[" * 300 + b'"' + b'\\"' * 200_000
    assert too_deep(line, 256)
    assert not too_deep(b"[" + b'"' + b'\\"[' * 200_000 + b'"]', 1)
    assert too_deep(b"[" * 257 + b'"\\\\"' + b"]" * 257, 256)


def test_limits_beyond_one_pattern_use_the_loop() -> None:
    limit = PATTERN_LIMIT + 1
    assert not too_deep(b"[" * limit + b"]" * limit, limit)
    assert too_deep(b"[" * (limit + 1) + b"]" * (limit + 1), limit)


def _marks(line: bytes) -> bytes:
    """What ``too_deep`` hands its loop: escapes dropped, only brackets and quotes kept."""
    line = line.replace(b"\\\\", b"").replace(b'\\"', b"")
    marks = line.translate(
        bytes.maketrans(b"{}", b"[]"), bytes(b for b in range(256) if b not in b'[]{}"')
    )
    return marks + b'"' if marks.count(b'"') % 2 else marks


def _depth(value: object) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(item) for item in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(item) for item in value.values()), default=0)
    return 0


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        # The id read, the result being skipped when the line was cut.
        (
            b'{"jsonrpc":"2.0","id":12,"result":{"output":"xx',
            ({"jsonrpc": b'"2.0"', "id": b"12", "result": None}, "result"),
        ),
        # A number running up to the cut may be cut short: left out.
        (b'{"jsonrpc":"2.0","id":12', ({"jsonrpc": b'"2.0"'}, "id")),
        (b'{"id":12 ', ({"id": b"12"}, None)),
        # A string value cut: its key is the one the cut fell into.
        (b'{"id":3,"result":"abc\\"de', ({"id": b"3"}, "result")),
        (b'{"id":3,"method":"session/pro', ({"id": b"3"}, "method")),
        # A key cut: nothing open.
        (b'{"id":3,"meth', ({"id": b"3"}, None)),
        (b'[{"id":3', None),
        (b"garbage", None),
    ],
)
def test_leading_members_of_a_line_cut_off(
    head: bytes, expected: tuple[dict[str, bytes | None], str | None] | None
) -> None:
    assert leading_members(head) == expected
