"""Writing a WebSocket's queued messages from the sender's task, and reading ahead.

:meth:`acpio.remote._connection.Outbox.write_queued` lets a task that has just queued
the end of a turn write it at once instead of waking the socket's writer task; the
socket's writer and such a sender never write at the same time, so the client gets
every message once, in order. uvicorn's WebSocket protocol as ``acpio serve`` runs it
reads on while fewer than two messages wait for the app.
"""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import pytest
from websockets.protocol import State
from websockets.server import ServerProtocol

from acpio.remote._app import SEND_TEXTS
from acpio.remote._connection import Outbox
from acpio.remote._server import _QUEUED_BEFORE_PAUSE, _ws_protocol

pytestmark = pytest.mark.anyio


class Socket:
    """Keeps what is written; a write waits while ``blocked`` is set."""

    def __init__(self) -> None:
        self.lines: list[bytes] = []
        self.writers: list[int | None] = []
        self.blocked: anyio.Event | None = None
        self.writing = anyio.Event()

    async def write(self, batch: list[bytes]) -> None:
        self.writers.append(anyio.get_current_task().id)
        for line in batch:
            if self.blocked is not None:
                self.writing.set()
                await self.blocked.wait()
            self.lines.append(line)


async def test_write_queued_writes_what_is_queued_in_the_callers_task() -> None:
    outbox, socket = Outbox(), Socket()
    assert not await outbox.write_queued()  # no writer attached: the receiver's task writes
    outbox.writer = socket.write
    assert not await outbox.write_queued()  # nothing queued
    outbox.push(b"1")
    outbox.push(b"2")
    assert await outbox.write_queued()
    assert socket.lines == [b"1", b"2"]
    assert socket.writers == [anyio.get_current_task().id]
    assert outbox.buffered == 0 and not outbox.writing


async def test_the_writer_task_and_a_sender_never_interleave() -> None:
    outbox, socket = Outbox(), Socket()
    outbox.writer = socket.write

    async def writer_task() -> None:
        while (batch := await outbox.take_to_write()) is not None:
            try:
                await socket.write(batch)
            finally:
                outbox.done_writing()

    async def sender() -> None:
        assert await outbox.write_queued()

    socket.blocked = anyio.Event()
    outbox.push(b"1")
    outbox.push(b"2")
    async with anyio.create_task_group() as group:
        with anyio.fail_after(5):
            group.start_soon(sender)
            await socket.writing.wait()  # the sender holds the stream, stuck in its write
            group.start_soon(writer_task)
            outbox.push(b"3")  # queued meanwhile: the writer task waits its turn
            assert not await outbox.write_queued()  # and so does a second sender
            await anyio.wait_all_tasks_blocked()
            assert socket.lines == [] and outbox.writing
            socket.blocked.set()
            socket.blocked = None
            while len(socket.lines) < 3:
                await anyio.wait_all_tasks_blocked()
        outbox.close()
    assert socket.lines == [b"1", b"2", b"3"]
    assert len(socket.writers) == 2  # the sender's batch, then the writer task's


async def test_a_sender_stuck_writing_lets_go_when_the_socket_is_released() -> None:
    outbox, socket = Outbox(retention_messages=10, retention_seconds=60), Socket()
    outbox.writer = socket.write
    socket.blocked = anyio.Event()  # a client that reads nothing more
    outbox.acquire()
    outbox.push(b"1")
    async with anyio.create_task_group() as group:
        group.start_soon(outbox.write_queued)
        with anyio.fail_after(5):
            await socket.writing.wait()
            outbox.release()  # the socket is gone: the write stops
            await anyio.wait_all_tasks_blocked()
        assert not outbox.writing
    # What the sender took is kept for the client to resume from.
    outbox.rewind(outbox.cursor(0))
    assert outbox.take_now()[1] == [b"1"]


class Transport:
    def __init__(self) -> None:
        self.paused = False
        self.pauses = 0

    def pause_reading(self) -> None:
        self.paused = True
        self.pauses += 1

    def resume_reading(self) -> None:
        self.paused = False

    def is_closing(self) -> bool:
        return False


def _protocol() -> Any:
    cls = _ws_protocol()
    assert not isinstance(cls, str), "uvicorn's sans-I/O WebSocket protocol is installed"
    protocol = object.__new__(cls)  # only what a received message touches
    protocol.read_paused = False
    protocol.close_sent = False
    protocol.queue = asyncio.Queue()
    protocol.transport = Transport()
    return protocol


def _arrives(protocol: Any, text: str) -> None:
    protocol.curr_msg_data_type = "text"
    protocol.frames = [text.encode()]
    protocol.send_receive_event_to_app()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_websocket_reads_on_until_two_messages_wait(anyio_backend: str) -> None:
    protocol = _protocol()
    transport: Transport = protocol.transport
    for n in range(5):  # a request, its answer awaited: reading never stops
        _arrives(protocol, f"request {n}")
        assert not transport.paused
        assert (await protocol.receive())["text"] == f"request {n}"
    assert transport.pauses == 0
    # A client that sends faster than the agent takes is held back, two messages in.
    for n in range(_QUEUED_BEFORE_PAUSE):
        _arrives(protocol, f"burst {n}")
    assert transport.paused and transport.pauses == 1
    assert (await protocol.receive())["text"] == "burst 0"
    assert transport.paused  # one still waits
    assert (await protocol.receive())["text"] == "burst 1"
    assert not transport.paused


def _text_frames(data: bytes) -> list[bytes]:
    """The payloads of the unmasked, unfragmented text frames in ``data`` (short ones)."""
    payloads: list[bytes] = []
    while data:
        assert data[0] == 0x81, "a final text frame"
        length = data[1]
        assert length < 126
        payloads.append(data[2 : 2 + length])
        data = data[2 + length :]
    return payloads


class WritingTransport(Transport):
    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(data)


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_messages_sent_together_go_out_in_one_write(anyio_backend: str) -> None:
    protocol = _protocol()
    protocol.transport = transport = WritingTransport()
    protocol.conn = ServerProtocol()
    protocol.conn.state = State.OPEN
    protocol.writable = asyncio.Event()
    protocol.writable.set()
    protocol.disconnected = False
    protocol.handshake_complete = True
    protocol.initial_response = None
    texts = [b'{"jsonrpc":"2.0","method":"a"}', b'{"jsonrpc":"2.0","id":1,"result":{}}']
    await protocol.send({"type": SEND_TEXTS, "texts": texts})
    assert len(transport.writes) == 1
    assert _text_frames(transport.writes[0]) == texts
    # After the app closed the socket, uvicorn's own rules apply, message by message.
    protocol.close_sent = True
    with pytest.raises(RuntimeError):
        await protocol.send({"type": SEND_TEXTS, "texts": texts})
