"""Line framing and the byte transports: in-memory pairs, OS pipes, a child's stdio.

The stdio tests start a small Python child that serves a :class:`Connection`
over :func:`stdio_streams` and drive it through ``anyio.open_process`` pipes,
so the real file descriptors 0 and 1 of a process are exercised.
"""

from __future__ import annotations

import itertools
import os
import sys
import textwrap
import tracemalloc

import anyio
import anyio.abc
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import PairMaker

from acpio import RequestError
from acpio._rpc.lines import HEAD_SIZE, Oversized
from acpio._rpc.transport import (
    DEFAULT_READ_SIZE,
    OVERSIZED,
    LineReader,
    _FdReceiveStream,
    _FdSendStream,
    process_streams,
)
from acpio.rpc import Connection, RequestContext, StreamPair, memory_stream_pair

MiB = 1024 * 1024


async def _lines_from(
    chunks: list[bytes], max_line: int = 1024, read_size: int = DEFAULT_READ_SIZE
) -> list[bytes | object]:
    """Send ``chunks`` through an in-memory pair and frame what arrives."""
    ours, theirs = memory_stream_pair(max_buffered_chunks=len(chunks) + 1)
    try:
        for chunk in chunks:
            await theirs.send.send(chunk)
        await theirs.send.aclose()
        reader = LineReader(ours.receive, max_line, read_size)
        lines: list[bytes | object] = []
        while batch := await reader.receive_lines():
            lines.extend(batch)
        return lines
    finally:
        await ours.aclose()
        await theirs.aclose()


# ------------------------------------------------------------------ LineReader


@pytest.mark.anyio
async def test_many_messages_in_one_read_come_back_together(make_pair: PairMaker) -> None:
    ours, theirs = make_pair()
    await theirs.send.send(b'{"a":1}\n{"b":2}\n{"c":3}\n{"d":')
    reader = LineReader(ours.receive, 1024)
    assert await reader.receive_lines() == [b'{"a":1}', b'{"b":2}', b'{"c":3}']
    await theirs.send.send(b"4}\n")
    assert await reader.receive_lines() == [b'{"d":4}']


@pytest.mark.anyio
async def test_message_split_byte_by_byte_inside_utf8_characters() -> None:
    message = '{"text":"héllo wörld 😀 ✓"}'.encode()
    chunks = [bytes([byte]) for byte in message + b"\n" + message + b"\n"]
    lines = await _lines_from(chunks, read_size=1)
    assert lines == [message, message]
    assert msgspec.json.decode(lines[0]) == {"text": "héllo wörld 😀 ✓"}  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_blank_lines_and_crlf() -> None:
    lines = await _lines_from([b"\n\n  \r\n", b'{"a":1}\r\n', b"\t\n", b'{"b":2}\n'])
    assert lines == [b'{"a":1}\r', b'{"b":2}']
    # msgspec accepts the trailing carriage return of a CRLF line.
    assert msgspec.json.decode(lines[0]) == {"a": 1}  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_final_line_without_newline_is_delivered_at_the_end() -> None:
    assert await _lines_from([b'{"a":1}\n{"b"', b":2}"]) == [b'{"a":1}', b'{"b":2}']
    assert await _lines_from([b'{"a":1}\n  \r']) == [b'{"a":1}']
    assert await _lines_from([]) == []


@pytest.mark.anyio
@pytest.mark.parametrize("split", ["whole", "bytes", "middle", "after"])
async def test_size_limit_is_exact(split: str) -> None:
    limit = 64
    fits = b"[" + b"1" * (limit - 2) + b"]"
    too_big = b"[" + b"1" * (limit - 1) + b"]"
    stream = fits + b"\n" + too_big + b"\n" + fits + b"\n"
    if split == "whole":
        chunks = [stream]
    elif split == "bytes":
        chunks = [bytes([byte]) for byte in stream]
    elif split == "middle":
        chunks = [stream[:90], stream[90:]]
    else:
        chunks = [stream[: len(fits) + 5], stream[len(fits) + 5 :]]
    lines = await _lines_from(chunks, max_line=limit, read_size=len(stream))
    assert lines == [fits, OVERSIZED, fits]


@pytest.mark.anyio
async def test_oversized_tail_of_a_read_is_skipped_up_to_its_newline() -> None:
    lines = await _lines_from(
        [b'{"a":1}\n' + b"x" * 100, b"x" * 100, b'x\n{"b":2}\n', b"y" * 100], max_line=50
    )
    # The unterminated oversized tail at the end of input is dropped, reported once.
    assert lines == [b'{"a":1}', OVERSIZED, b'{"b":2}', OVERSIZED]


@pytest.mark.anyio
@pytest.mark.parametrize("chunk", [None, 1000, 7, 4096])
async def test_an_oversized_line_keeps_its_first_bytes(chunk: int | None) -> None:
    # Where a message's id usually is: enough to answer it, or to fail what it answers.
    line = b'{"jsonrpc":"2.0","id":7,"result":"' + b"x" * 20_000 + b'"}'
    stream = b'{"a":1}\n' + line + b'\n{"b":2}\n'
    chunks = (
        [stream] if chunk is None else [stream[i : i + chunk] for i in range(0, len(stream), chunk)]
    )
    lines = await _lines_from(chunks, max_line=5000, read_size=len(stream))
    assert lines == [b'{"a":1}', OVERSIZED, b'{"b":2}']
    marker = lines[1]
    assert isinstance(marker, Oversized) and marker.head == line[:HEAD_SIZE]


class _Watched(anyio.abc.ByteReceiveStream):
    """Passes reads through and records the reader's buffer size before each one."""

    def __init__(self, stream: anyio.abc.ByteReceiveStream) -> None:
        self.stream = stream
        self.reader: LineReader | None = None
        self.largest = 0
        self.reads = 0

    async def receive(self, max_bytes: int = 65536) -> bytes:
        assert self.reader is not None
        self.largest = max(self.largest, self.reader.buffered)
        self.reads += 1
        return await self.stream.receive(max_bytes)

    async def aclose(self) -> None:
        await self.stream.aclose()


@pytest.mark.anyio
async def test_100_mb_without_newline_keeps_memory_bounded_and_recovers(
    make_pair: PairMaker,
) -> None:
    ours, theirs = make_pair(max_buffered_chunks=2)
    watched = _Watched(ours.receive)
    limit = 32 * MiB
    reader = watched.reader = LineReader(watched, limit)
    chunk = b"x" * MiB

    async def feed() -> None:
        for _ in range(100):
            await theirs.send.send(chunk)
        await theirs.send.send(b'\n{"after":1}\n')
        await theirs.send.aclose()

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(feed)
            assert await reader.receive_lines() == [OVERSIZED]
            # The rest of the line is skipped without buffering it.
            assert await reader.receive_lines() == [b'{"after":1}']
            assert await reader.receive_lines() == []
    assert watched.reads > 100 * MiB // DEFAULT_READ_SIZE
    assert 0 < watched.largest <= limit + DEFAULT_READ_SIZE
    assert reader.buffered == 0


@settings(max_examples=60, deadline=None)
@given(
    messages=st.lists(
        st.dictionaries(st.text(max_size=5), st.text(max_size=8), max_size=3),
        min_size=1,
        max_size=6,
    ),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12),
)
def test_any_split_gives_the_same_lines(messages: list[dict[str, str]], cuts: list[int]) -> None:
    encoded = [msgspec.json.encode(message) for message in messages]
    stream = b"".join(line + b"\n" for line in encoded)
    points = sorted({0, len(stream), *(cut for cut in cuts if cut < len(stream))})
    chunks = [stream[start:end] for start, end in itertools.pairwise(points)]
    for backend in ("asyncio", "trio"):
        assert anyio.run(_lines_from, chunks, 4096, backend=backend) == encoded


# --------------------------------------------------------------- memory pairs


@pytest.mark.anyio
async def test_memory_pair_backpressure_order_and_end_of_input(make_pair: PairMaker) -> None:
    left, right = make_pair(max_buffered_chunks=2)
    sent: list[int] = []

    async def produce() -> None:
        for index in range(5):
            await left.send.send(b"%d\n" % index)
            sent.append(index)
        await left.send.aclose()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(produce)
            await anyio.wait_all_tasks_blocked()
            # Two writes are buffered; the third waits for the reader.
            assert sent == [0, 1]
            received = b""
            while True:
                try:
                    received += await right.receive.receive()
                except anyio.EndOfStream:
                    break
    assert received == b"0\n1\n2\n3\n4\n"
    assert sent == [0, 1, 2, 3, 4]


@pytest.mark.anyio
async def test_memory_pair_large_write_is_read_in_small_pieces(make_pair: PairMaker) -> None:
    left, right = make_pair()
    payload = bytes(range(256)) * 1000
    await left.send.send(payload)
    pieces = [await right.receive.receive(1000) for _ in range(256)]
    assert all(len(piece) == 1000 for piece in pieces)
    assert b"".join(pieces) == payload
    await right.receive.aclose()
    with pytest.raises(anyio.BrokenResourceError):
        await left.send.send(b"x")
    await StreamPair(right.receive, right.send).aclose()  # closing twice is harmless
    await left.aclose()


# ------------------------------------------------------------------- OS pipes


@pytest.mark.anyio
async def test_pipe_partial_line_does_not_block_the_event_loop() -> None:
    read_fd, write_fd = os.pipe()
    receive = _FdReceiveStream(read_fd)
    try:
        reader = LineReader(receive, 1024)
        got: list[bytes | object] = []
        with anyio.fail_after(5):
            async with anyio.create_task_group() as group:

                async def read() -> None:
                    got.extend(await reader.receive_lines())

                group.start_soon(read)
                os.write(write_fd, b'{"half":')
                # The reader parks in the event loop; this task keeps running.
                await anyio.wait_all_tasks_blocked()
                assert got == []
                assert reader.buffered == len(b'{"half":')
                os.write(write_fd, b'"done"}\n{"next"')
        assert got == [b'{"half":"done"}']
        os.close(write_fd)
        write_fd = -1
        assert await reader.receive_lines() == [b'{"next"']
        assert await reader.receive_lines() == []
    finally:
        await receive.aclose()
        os.close(read_fd)
        if write_fd >= 0:
            os.close(write_fd)


@pytest.mark.anyio
async def test_pipe_large_message_larger_than_the_pipe_buffer() -> None:
    read_fd, write_fd = os.pipe()
    send = _FdSendStream(write_fd)
    receive = _FdReceiveStream(read_fd)
    message = b'{"data":"' + b"z" * (3 * MiB) + b'"}'
    try:
        with anyio.fail_after(20):
            async with anyio.create_task_group() as group:

                async def write() -> None:
                    await send.send(message + b"\n" + message + b"\n")
                    await send.aclose()
                    os.close(write_fd)

                group.start_soon(write)
                reader = LineReader(receive, 4 * MiB)
                lines: list[bytes | object] = []
                while batch := await reader.receive_lines():
                    lines.extend(batch)
        assert lines == [message, message]
        with pytest.raises(anyio.ClosedResourceError):
            await send.send(b"more")
        assert not os.get_blocking(read_fd)
        await receive.aclose()
        # Descriptors are left blocking, as they were found, and no longer read.
        assert os.get_blocking(read_fd)
        with pytest.raises(anyio.ClosedResourceError):
            await receive.receive()
    finally:
        await receive.aclose()
        os.close(read_fd)


@pytest.mark.anyio
async def test_pipe_reads_allocate_only_what_arrived() -> None:
    # A read of DEFAULT_READ_SIZE must not allocate DEFAULT_READ_SIZE bytes per
    # call: for sizes above the C allocator's mmap threshold that is an mmap,
    # an mremap, a munmap and page faults per message, however short.
    read_fd, write_fd = os.pipe()
    receive = _FdReceiveStream(read_fd)
    message = b'{"jsonrpc":"2.0","id":1,"result":{"outcome":{"outcome":"selected"}}}\n'
    try:
        with anyio.fail_after(10):
            os.write(write_fd, message)
            assert await receive.receive(DEFAULT_READ_SIZE) == message  # the buffer is made
            tracemalloc.start()
            try:
                for _ in range(50):
                    os.write(write_fd, message)
                    assert await receive.receive(DEFAULT_READ_SIZE) == message
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
        assert peak < DEFAULT_READ_SIZE // 8, f"{peak} bytes at peak for 50 short reads"
        os.write(write_fd, b"x" * 100)
        assert await receive.receive(10) == b"x" * 10  # a smaller max_bytes is kept to
        assert await receive.receive(DEFAULT_READ_SIZE) == b"x" * 90
    finally:
        await receive.aclose()
        os.close(read_fd)
        os.close(write_fd)


@pytest.mark.anyio
async def test_pipe_send_to_a_closed_reader_is_a_broken_resource() -> None:
    read_fd, write_fd = os.pipe()
    send = _FdSendStream(write_fd)
    os.close(read_fd)
    try:
        with pytest.raises(anyio.BrokenResourceError):
            await send.send(b"x\n")
        assert not os.get_blocking(write_fd)
        await send.aclose()
        assert os.get_blocking(write_fd)
    finally:
        os.close(write_fd)


# ---------------------------------------------------- a child serving on stdio

_CHILD = textwrap.dedent(
    """
    import os
    import subprocess
    import sys

    import anyio
    import msgspec

    from acpio import RequestError
    from acpio.rpc import Connection, stdio_streams

    connection = None


    class Handler:
        async def on_request(self, method, params, context):
            if method == "echo":
                return msgspec.json.decode(params)
            if method == "noise":
                print("print noise")
                sys.stdout.flush()
                os.write(1, b"fd noise\\n")
                subprocess.run(
                    [sys.executable, "-c", "print('grandchild noise')"], check=True
                )
                return {"stdin": sys.stdin.read()}
            if method == "ask":
                answer = await connection.request(
                    "parent/hello", {"from": "child"}, msgspec.json.decode
                )
                return {"parent said": answer}
            raise RequestError.method_not_found(method)

        async def on_notification(self, method, params):
            pass


    async def main():
        global connection
        async with stdio_streams() as streams:
            async with Connection(streams, Handler()) as connection:
                await connection.wait_closed()
        if "--report" in sys.argv:
            print("stdout restored")


    anyio.run(main, backend=sys.argv[1])
    """
)


async def _drain(stream: anyio.abc.ByteReceiveStream, into: bytearray) -> None:
    async for chunk in stream:
        into += chunk


@pytest.mark.anyio
async def test_stdio_child_speaks_only_protocol_on_stdout(anyio_backend: str) -> None:
    stderr = bytearray()
    with anyio.fail_after(30):
        async with await anyio.open_process(
            [sys.executable, "-c", _CHILD, anyio_backend, "--report"]
        ) as process:
            assert process.stdin is not None
            assert process.stdout is not None
            assert process.stderr is not None
            async with anyio.create_task_group() as group:
                group.start_soon(_drain, process.stderr, stderr)
                # Two requests in one write, the second split in the middle.
                await process.stdin.send(
                    b'{"jsonrpc":"2.0","id":"n","method":"noise","params":{}}\n'
                    b'{"jsonrpc":"2.0","id":7,"method":"echo","params":{"t":"\xc3'
                )
                await process.stdin.send(b'\xa9"}}\n')
                reader = LineReader(process.stdout, MiB)
                lines: list[bytes | object] = []
                while len(lines) < 2:
                    lines.extend(await reader.receive_lines())
                await process.stdin.aclose()
                while batch := await reader.receive_lines():
                    lines.extend(batch)
            assert await process.wait() == 0, stderr.decode()
    responses = [msgspec.json.decode(line) for line in lines[:2]]  # type: ignore[arg-type]
    assert sorted(responses, key=lambda response: str(response["id"])) == [
        {"jsonrpc": "2.0", "id": 7, "result": {"t": "é"}},
        {"jsonrpc": "2.0", "id": "n", "result": {"stdin": ""}},
    ]
    # Only after the protocol ended does stdout belong to the program again.
    assert lines[2:] == [b"stdout restored"]
    for noise in (b"print noise", b"fd noise", b"grandchild noise"):
        assert noise in stderr


class _Parent:
    async def on_request(
        self, method: str, params: msgspec.Raw | None, context: RequestContext
    ) -> object:
        if method == "parent/hello":
            return {"hello": msgspec.json.decode(params or b"null")}
        raise RequestError.method_not_found(method)

    async def on_notification(self, method: str, params: msgspec.Raw | None) -> None:
        pass


@pytest.mark.anyio
async def test_connection_over_subprocess_pipes_both_directions(anyio_backend: str) -> None:
    stderr = bytearray()
    with anyio.fail_after(30):
        async with await anyio.open_process(
            [sys.executable, "-c", _CHILD, anyio_backend]
        ) as process:
            assert process.stderr is not None
            async with anyio.create_task_group() as group:
                group.start_soon(_drain, process.stderr, stderr)
                async with Connection(process_streams(process), _Parent()) as connection:
                    echoed = await connection.request("echo", {"x": [1, 2]}, msgspec.json.decode)
                    asked = await connection.request("ask", {}, msgspec.json.decode)
                    with pytest.raises(RequestError) as caught:
                        await connection.request("nope", {}, msgspec.json.decode)
            assert await process.wait() == 0, stderr.decode()
    assert echoed == {"x": [1, 2]}
    assert asked == {"parent said": {"hello": {"from": "child"}}}
    assert caught.value.code == -32601
    assert b"Traceback" not in stderr


@pytest.mark.anyio
async def test_process_streams_needs_pipes() -> None:
    async with await anyio.open_process(
        [sys.executable, "-c", "pass"], stdin=None, stdout=None, stderr=None
    ) as process:
        with pytest.raises(ValueError, match="pipes"):
            process_streams(process)
        await process.wait()


@pytest.mark.anyio
async def test_a_cancelled_pipe_receive_loses_nothing() -> None:
    read_fd, write_fd = os.pipe()
    receive = _FdReceiveStream(read_fd)
    try:
        with anyio.fail_after(5):
            # A receive that is cancelled while waiting ...
            with anyio.move_on_after(0.05):
                await receive.receive()
            # ... must not swallow bytes that arrive afterwards (or were buffered meanwhile).
            os.write(write_fd, b"first ")
            os.write(write_fd, b"second")
            data = b""
            while len(data) < len(b"first second"):
                data += await receive.receive()
        assert data == b"first second"
    finally:
        await receive.aclose()
        os.close(write_fd)


@pytest.mark.anyio
async def test_pipe_on_data_hook_sees_fresh_reads_only_while_the_reader_waits(
    anyio_backend: str,
) -> None:
    read_fd, write_fd = os.pipe()
    receive = _FdReceiveStream(read_fd)
    seen: list[bytes] = []

    called = anyio.Event()

    def hook(data: bytes) -> bytes:
        seen.append(data)
        called.set()
        return data[data.index(b"\n") + 1 :]  # consume the first line

    receive.on_data = hook
    try:
        with anyio.fail_after(5):
            got: list[bytes] = []
            async with anyio.create_task_group() as group:

                async def read() -> None:
                    got.append(await receive.receive())

                group.start_soon(read)
                await anyio.wait_all_tasks_blocked()
                os.write(write_fd, b"taken\n")
                if anyio_backend == "asyncio":
                    await called.wait()
                    await anyio.sleep(0.01)
                    # The hook consumed the whole read: the reader still waits.
                    assert seen == [b"taken\n"] and got == []
                    os.write(write_fd, b"taken\nleft\n")
            if anyio_backend == "asyncio":
                assert seen == [b"taken\n", b"taken\nleft\n"]
                assert got == [b"left\n"]
            else:
                # Elsewhere the descriptor is read on demand and the hook is never used.
                assert seen == [] and got == [b"taken\n"]
            # Data that arrives while nobody waits is buffered, not given to the hook.
            seen.clear()
            os.write(write_fd, b"buffered\n")
            await anyio.sleep(0.01)
            assert await receive.receive() == b"buffered\n"
            assert seen == []
    finally:
        await receive.aclose()
        os.close(read_fd)
        os.close(write_fd)
