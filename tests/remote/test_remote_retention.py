"""A stream's retention (:class:`acpio.remote._connection.Outbox`): what a cursor can resume.

A stream keeps the last ``retention_messages`` messages its readers took, each for
``retention_seconds`` after it was taken, plus what no reader took yet; a cursor resumes
when every message after it is still kept, and the messages after it are handed out again
once each, in order. The clock is the test's own: nothing waits.
"""

from __future__ import annotations

import pytest

from acpio.remote import RemoteLimits
from acpio.remote._connection import Outbox, ResumeRefused

pytestmark = pytest.mark.anyio


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _outbox(messages: int, seconds: float = 60.0, clock: Clock | None = None) -> Outbox:
    return Outbox(retention_messages=messages, retention_seconds=seconds, clock=clock or Clock())


def _fill(outbox: Outbox, count: int) -> list[bytes]:
    lines = [b'{"n":%d}' % n for n in range(1, count + 1)]
    for line in lines:
        outbox.push(line)
    return lines


async def test_a_cursor_within_the_last_n_messages_replays_what_followed_once() -> None:
    outbox = _outbox(50)
    lines = _fill(outbox, 100)
    first, taken = outbox.take_now()
    assert (first, taken) == (1, lines)
    outbox.rewind(outbox.cursor(50))  # messages 51..100 are the 50 kept
    assert outbox.take_now() == (51, lines[50:])
    outbox.rewind(outbox.cursor(50))  # resuming twice gives the same
    assert outbox.take_now() == (51, lines[50:])
    outbox.rewind(outbox.cursor(100))  # the client had everything: nothing again
    assert outbox.take_now() == (101, [])


async def test_a_cursor_older_than_the_last_n_messages_is_expired() -> None:
    outbox = _outbox(50)
    _fill(outbox, 100)
    outbox.take_now()
    with pytest.raises(ResumeRefused) as refused:
        outbox.rewind(outbox.cursor(49))
    assert refused.value.reason == "expired"
    assert "session/resume" in refused.value.text


async def test_messages_older_than_the_retention_seconds_are_no_longer_kept() -> None:
    clock = Clock()
    outbox = _outbox(1000, seconds=30, clock=clock)
    lines = _fill(outbox, 10)
    outbox.take_now()
    clock.now = 29.0
    outbox.rewind(outbox.cursor(5))
    assert outbox.take_now()[1] == lines[5:]  # taken again at 29 s
    clock.now = 31.0  # 1 to 5 were taken at 0: gone; 6 to 10 at 29: kept
    with pytest.raises(ResumeRefused):
        outbox.rewind(outbox.cursor(4))
    outbox.rewind(outbox.cursor(5))
    assert outbox.take_now()[1] == lines[5:]


async def test_what_no_reader_took_is_never_dropped_by_the_retention() -> None:
    outbox = _outbox(3)
    lines = _fill(outbox, 10)
    outbox.rewind(outbox.cursor(0))  # a client that saw nothing yet
    assert outbox.take_now() == (1, lines)
    assert outbox.buffered == 0


async def test_foreign_malformed_and_future_cursors_are_unknown() -> None:
    outbox, other = _outbox(10), _outbox(10)
    _fill(outbox, 5)
    _fill(other, 5)
    outbox.take_now()
    for cursor in [other.cursor(3), "garbage", f"{outbox.tag}.x", outbox.cursor(6)]:
        with pytest.raises(ResumeRefused) as refused:
            outbox.rewind(cursor)
        assert refused.value.reason == "unknown_cursor", cursor


async def test_without_retention_nothing_is_kept() -> None:
    outbox = _outbox(0)
    _fill(outbox, 3)
    outbox.take_now()
    outbox.rewind(outbox.cursor(3))  # up to date: fine
    with pytest.raises(ResumeRefused):
        outbox.rewind(outbox.cursor(2))


def test_retention_limits_are_checked() -> None:
    assert not RemoteLimits(retention_messages=0).resumable
    with pytest.raises(ValueError, match="retention_messages"):
        RemoteLimits(retention_messages=-1)
    with pytest.raises(ValueError, match="retention_seconds"):
        RemoteLimits(retention_seconds=0)
