"""The outgoing buffer of a connection: order, the size limit, and who is woken when.

The buffer is the one place every outgoing message passes; these tests drive
it directly, as the connection's senders and its writer task do.
"""

from __future__ import annotations

import anyio
import pytest

from acpio._errors import ConnectionClosed
from acpio._rpc.outgoing import OutgoingBuffer

pytestmark = pytest.mark.anyio


async def test_try_put_queues_only_what_fits_without_waiting() -> None:
    buffer = OutgoingBuffer(limit=10)
    assert buffer.try_put(b"123456\n")
    assert not buffer.try_put(b"abcde\n")  # 7 + 6 > 10: it would have to wait
    assert buffer.buffered == 7
    assert buffer.take_nowait() == b"123456\n"
    # An empty buffer takes one line larger than the limit, as put does.
    assert buffer.try_put(b"x" * 20 + b"\n")
    assert buffer.take_nowait() == b"x" * 20 + b"\n"
    buffer.close()
    assert not buffer.try_put(b"late\n")
    with pytest.raises(ConnectionClosed):
        await buffer.put(b"late\n")


async def test_try_put_never_overtakes_a_waiting_sender() -> None:
    buffer = OutgoingBuffer(limit=10)
    await buffer.put(b"12345678\n")
    async with anyio.create_task_group() as group:
        group.start_soon(buffer.put, b"waits\n")
        await anyio.wait_all_tasks_blocked()
        # Room or not, a sender is waiting: a try_put now would jump the queue.
        assert not buffer.try_put(b"x\n")
        assert await buffer.take() == b"12345678\n"
    assert await buffer.take() == b"waits\n"


async def test_take_with_takes_the_queue_and_the_line_or_nothing() -> None:
    buffer = OutgoingBuffer(limit=10)
    calls: list[int] = []
    buffer.on_data = lambda: calls.append(buffer.buffered)
    assert buffer.take_with(b"alone\n") == b"alone\n"  # written at once: nothing to wake
    assert buffer.try_put(b"a\n")
    assert buffer.take_with(b"b\n") == b"a\nb\n"  # everything queued first, in order
    assert buffer.buffered == 0
    assert calls == [2]  # only for the try_put into the empty buffer
    assert buffer.try_put(b"123456\n")
    assert buffer.take_with(b"abcde\n") is None  # it would have to wait: nothing queued
    assert buffer.take_nowait() == b"123456\n"
    async with anyio.create_task_group() as group:
        await buffer.put(b"12345678\n")
        group.start_soon(buffer.put, b"waits\n")
        await anyio.wait_all_tasks_blocked()
        assert buffer.take_with(b"x\n") is None  # never ahead of a waiting sender
        assert await buffer.take() == b"12345678\n"
    assert await buffer.take() == b"waits\n"
    buffer.close()
    assert buffer.take_with(b"late\n") is None


async def test_only_a_put_into_an_empty_buffer_calls_on_data() -> None:
    buffer = OutgoingBuffer(limit=1000)
    calls: list[int] = []
    buffer.on_data = lambda: calls.append(buffer.buffered)
    await buffer.put(b"a\n")
    assert buffer.try_put(b"b\n")
    assert buffer.put_nowait(b"c\n")
    assert calls == [2]
    assert buffer.take_nowait() == b"a\nb\nc\n"
    assert buffer.try_put(b"d\n")
    assert calls == [2, 2]
    # The hook replaces waking take(): a consumer waiting in take() is woken
    # only by wake_consumer (or unwrite, or close).
    buffer.take_nowait()
    got: list[bytes | None] = []
    async with anyio.create_task_group() as group:

        async def consume() -> None:
            got.append(await buffer.take())

        group.start_soon(consume)
        await anyio.wait_all_tasks_blocked()
        await buffer.put(b"e\n")
        await anyio.wait_all_tasks_blocked()
        assert got == []
        buffer.wake_consumer()
    assert got == [b"e\n"]


async def test_without_a_hook_a_put_wakes_the_waiting_consumer() -> None:
    buffer = OutgoingBuffer(limit=1000)
    got: list[bytes | None] = []
    async with anyio.create_task_group() as group:

        async def consume() -> None:
            got.append(await buffer.take())
            got.append(await buffer.take())

        group.start_soon(consume)
        await anyio.wait_all_tasks_blocked()
        await buffer.put(b"a\n")
        await anyio.wait_all_tasks_blocked()
        assert got == [b"a\n"]
        data = b"b\nc\n"
        buffer.unwrite(data[2:])  # a partial write puts the rest back and wakes the consumer
    assert got == [b"a\n", b"c\n"]
