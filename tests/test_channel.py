"""The line channel: which backend a connection gets, and what every channel keeps.

Each test runs on asyncio and trio; over memory streams and over real pipes,
the two channels must write in order, hand out lines, and wake waiters alike.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import msgspec
import pytest
from support import PairMaker

from acpio._rpc.channel import AnyioChannel, LineChannel, open_channel
from acpio._rpc.fd import AsyncioChannel, FdReceiveStream, FdSendStream
from acpio._rpc.outgoing import OutgoingBuffer
from acpio.rpc import StreamPair, memory_stream_pair

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def pipes() -> AsyncIterator[tuple[StreamPair, StreamPair]]:
    """Two StreamPairs joined by OS pipes, as stdio would be."""
    to_us, from_them = os.pipe()
    to_them, from_us = os.pipe()
    ours = StreamPair(FdReceiveStream(to_us), FdSendStream(from_us))
    theirs = StreamPair(FdReceiveStream(to_them), FdSendStream(from_them))
    try:
        yield ours, theirs
    finally:
        await ours.aclose()
        await theirs.aclose()
        for fd in (to_us, from_them, to_them, from_us):
            os.close(fd)


def _channel(streams: StreamPair, outgoing: OutgoingBuffer) -> LineChannel:
    return open_channel(streams.receive, streams.send, outgoing, max_line=1 << 20)


def test_outside_an_event_loop_the_anyio_channel_is_chosen() -> None:
    ours, theirs = memory_stream_pair()
    try:
        assert isinstance(_channel(ours, OutgoingBuffer(100)), AnyioChannel)
    finally:
        for side in (ours, theirs):
            anyio.run(side.aclose)


async def test_the_channel_follows_the_running_backend(
    anyio_backend: str, make_pair: PairMaker
) -> None:
    ours, _ = make_pair()
    expected = AsyncioChannel if anyio_backend == "asyncio" else AnyioChannel
    assert type(_channel(ours, OutgoingBuffer(100))) is expected
    async with pipes() as (ours, _):
        assert type(_channel(ours, OutgoingBuffer(100))) is expected


async def _written_in_order(ours: StreamPair, theirs: StreamPair) -> None:
    outgoing = OutgoingBuffer(64)
    channel = _channel(ours, outgoing)
    lines = [b'{"n":%d}\n' % i for i in range(200)]
    received: list[bytes] = []
    peer = _channel(theirs, OutgoingBuffer(64))
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(channel.write_all)

            async def read() -> None:
                while len(received) < len(lines):
                    batch = await peer.reader.receive_lines()
                    assert batch
                    received.extend(line for line in batch if isinstance(line, bytes))

            group.start_soon(read)
            for line in lines:
                # Every tenth line as a request is sent: queued and possibly written at once.
                if not (line.endswith(b"7}\n") and channel.send_request(line)):
                    await outgoing.put(line)  # waits while 64 bytes are queued
            outgoing.close()
    assert received == [line[:-1] for line in lines]


async def test_lines_are_written_in_order_over_memory_streams(make_pair: PairMaker) -> None:
    await _written_in_order(*make_pair())


async def test_lines_are_written_in_order_over_pipes() -> None:
    async with pipes() as (ours, theirs):
        await _written_in_order(ours, theirs)


async def test_a_waiter_is_set_once_and_a_late_answer_is_harmless(make_pair: PairMaker) -> None:
    ours, _ = make_pair()
    channel = _channel(ours, OutgoingBuffer(100))
    new_waiter = channel.waiter_factory()
    waiter = new_waiter()
    assert not waiter.done()
    waiter.set_result(msgspec.Raw(b"1"))
    channel.waiter_set()
    assert waiter.done()
    with anyio.fail_after(5):
        answer = await waiter
    assert isinstance(answer, msgspec.Raw) and bytes(answer) == b"1"
    # A waiter whose task stopped waiting may still get a (late) answer, if not done.
    abandoned = new_waiter()
    with anyio.move_on_after(0):
        await abandoned
    if not abandoned.done():
        abandoned.set_result(msgspec.Raw(b"2"))
    channel.waiter_set()


async def test_a_line_queued_by_a_woken_requester_reaches_the_peer() -> None:
    # On asyncio the wake-up also schedules the flush that writes it.
    async with pipes() as (ours, theirs):
        outgoing = OutgoingBuffer(1000)
        channel = _channel(ours, outgoing)
        peer = _channel(theirs, OutgoingBuffer(1000))
        waiter = channel.waiter_factory()()
        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                group.start_soon(channel.write_all)

                async def requester() -> None:
                    await waiter
                    assert outgoing.try_put(b'{"state":"running"}\n')

                group.start_soon(requester)
                await anyio.wait_all_tasks_blocked()
                waiter.set_result(msgspec.Raw(b"{}"))
                channel.waiter_set()
                assert await peer.reader.receive_lines() == [b'{"state":"running"}']
                outgoing.close()
