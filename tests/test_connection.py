"""JSON-RPC 2.0 over one connection, driven from a raw peer over an in-memory pair.

Most tests put a :class:`Connection` on one side of ``memory_stream_pair()``
and a :class:`RawPeer` on the other: the peer writes exact bytes and reads
the exact JSON the connection answers, so ids, error codes and ordering are
checked on the wire. A few tests connect two Connections to each other.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import msgspec
import pytest
from support import PairMaker

from acpio import ConnectionClosed, RemoteProtocolError, RequestError
from acpio._limits import DEFAULT_MAX_MESSAGE_SIZE
from acpio._rpc.transport import LineReader, _FdReceiveStream, _FdSendStream
from acpio.rpc import Connection, RequestContext, StreamPair, memory_stream_pair

pytestmark = pytest.mark.anyio

# Decoded JSON from the wire; tests index into it freely.
Json = Any


class RawPeer:
    """The other end of the wire: writes bytes, reads decoded JSON lines."""

    def __init__(self, streams: StreamPair) -> None:
        self.streams = streams
        self._reader = LineReader(streams.receive, 64 * 1024 * 1024)
        self._lines: list[bytes] = []

    async def send(self, message: Json | bytes) -> None:
        if isinstance(message, bytes):
            await self.streams.send.send(message)
        else:
            await self.streams.send.send(msgspec.json.encode(message) + b"\n")

    async def receive_line(self) -> bytes:
        while not self._lines:
            lines = await self._reader.receive_lines()
            if not lines:
                raise EOFError
            self._lines.extend(line for line in lines if isinstance(line, bytes))
        return self._lines.pop(0)

    async def receive(self) -> Json:
        return msgspec.json.decode(await self.receive_line())

    async def request(self, request_id: Json, method: str, params: Json = None) -> Json:
        message: dict[str, object] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        return await self.receive()

    async def at_eof(self) -> bool:
        try:
            await self.receive_line()
        except EOFError:
            return True
        return False


class Handler:
    """A handler with one method per behaviour the tests need."""

    def __init__(self) -> None:
        self.notifications: list[tuple[str, Json]] = []
        self.release = anyio.Event()
        self.started: dict[object, anyio.Event] = {}
        self.cancelled: list[object] = []
        self.notified = anyio.Event()

    def started_event(self, request_id: object) -> anyio.Event:
        return self.started.setdefault(request_id, anyio.Event())

    async def on_request(
        self, method: str, params: msgspec.Raw | None, context: RequestContext
    ) -> object:
        assert context.method == method
        decoded = None if params is None else msgspec.json.decode(params)
        if method == "echo":
            return decoded
        if method == "context":
            return {"id": context.id, "method": context.method}
        if method == "slow":
            self.started_event(context.id).set()
            try:
                await self.release.wait()
            except anyio.get_cancelled_exc_class():
                self.cancelled.append(context.id)
                raise
            return "slow done"
        if method == "bug":
            raise ValueError("secret detail\nsecond line with more")
        if method == "unencodable":
            return object()
        if method == "grouped":
            raise ExceptionGroup("wrapped", [RequestError.invalid_params("bad field")])
        if method == "self_cancel":
            context.cancel_scope.cancel()
            await anyio.sleep_forever()
        raise RequestError.method_not_found(method)

    async def on_notification(self, method: str, params: msgspec.Raw | None) -> None:
        if method == "boom":
            raise RuntimeError("notification handler bug")
        self.notifications.append((method, None if params is None else msgspec.json.decode(params)))
        self.notified.set()


@asynccontextmanager
async def serving(
    handler: Handler | None = None,
    *,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    max_concurrent_requests: int = 1024,
) -> AsyncIterator[tuple[Connection, RawPeer, Handler]]:
    handler = handler or Handler()
    ours, theirs = memory_stream_pair()
    try:
        async with Connection(
            ours,
            handler,
            max_message_size=max_message_size,
            max_concurrent_requests=max_concurrent_requests,
        ) as connection:
            yield connection, RawPeer(theirs), handler
    finally:
        await theirs.aclose()


def error_of(response: Json) -> tuple[object, int]:
    assert isinstance(response, dict), response
    assert response["jsonrpc"] == "2.0"
    assert "result" not in response
    return response["id"], response["error"]["code"]


# ---------------------------------------------------------------- basic traffic


@pytest.mark.parametrize(
    "request_id", ["abc", "", "ünï 😀", 0, -5, 1, 2**53 + 1, 2**64, -(2**70), 10**30]
)
async def test_response_echoes_the_id_exactly(request_id: int | str) -> None:
    async with serving() as (_, peer, _handler):
        with anyio.fail_after(5):
            response = await peer.request(request_id, "context", {})
    assert response == {
        "jsonrpc": "2.0",
        "id": request_id,
        "result": {"id": request_id, "method": "context"},
    }
    assert type(response["id"]) is type(request_id)


async def test_params_may_be_an_array_or_omitted() -> None:
    async with serving() as (_, peer, _handler):
        with anyio.fail_after(5):
            assert (await peer.request(1, "echo", [1, "two"]))["result"] == [1, "two"]
            assert (await peer.request(2, "echo"))["result"] is None


async def test_notifications_are_never_answered_and_keep_order() -> None:
    async with serving() as (_, peer, handler):
        with anyio.fail_after(5):
            for index in range(20):
                await peer.send({"jsonrpc": "2.0", "method": "note", "params": {"i": index}})
            await peer.send({"jsonrpc": "2.0", "method": "bare"})
            # The next message on the wire is the request's answer, nothing before it.
            assert (await peer.request(1, "echo", {}))["id"] == 1
    assert handler.notifications == [("note", {"i": i}) for i in range(20)] + [("bare", None)]


async def test_unknown_method_is_method_not_found() -> None:
    async with serving() as (_, peer, _handler):
        with anyio.fail_after(5):
            response = await peer.request("x", "_vendor/unknown", {})
    assert error_of(response) == ("x", -32601)
    assert response["error"]["data"] == {"method": "_vendor/unknown"}


async def test_both_directions_between_two_connections(make_pair: PairMaker) -> None:
    left, right = make_pair()
    left_handler, right_handler = Handler(), Handler()
    with anyio.fail_after(5):
        async with (
            Connection(left, left_handler) as a,
            Connection(right, right_handler) as b,
        ):
            assert await a.request("echo", {"from": "a"}, msgspec.json.decode) == {"from": "a"}
            assert await b.request("echo", ["from b"], msgspec.json.decode) == ["from b"]
            await a.notify("note", {"n": 1})
            await b.send_raw_params("note", b'{"raw":true}')
            await a.notify("bare", None)
            with pytest.raises(RequestError) as caught:
                await a.request("missing", {}, msgspec.json.decode)
            assert caught.value.code == -32601
            # The request with id 2 above followed the notification, so it was seen.
            assert right_handler.notifications == [("note", {"n": 1}), ("bare", None)]
            await a.request("echo", None, msgspec.json.decode)
            assert left_handler.notifications == [("note", {"raw": True})]


async def test_a_prepared_request_goes_out_with_a_fresh_id_each_time(make_pair: PairMaker) -> None:
    left, right = make_pair()
    seen: list[bytes] = []
    with anyio.fail_after(5):
        async with (
            Connection(left, Handler()) as a,
            Connection(right, Handler(), on_raw_message=lambda way, m: seen.append(m)),
        ):
            tail = a.prepare_request("echo", {"n": 1})
            for _ in range(3):
                assert await a.request_prepared("echo", tail, msgspec.json.decode) == {"n": 1}
            bare = a.prepare_request("echo", None)
            assert await a.request_prepared("echo", bare, msgspec.json.decode) is None
            await a.aclose()
            with pytest.raises(ConnectionClosed):
                await a.request_prepared("echo", tail, msgspec.json.decode)
    requests = [msgspec.json.decode(m) for m in seen if b'"method"' in m]
    assert requests == [
        {"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"n": 1}},
        {"jsonrpc": "2.0", "id": 2, "method": "echo", "params": {"n": 1}},
        {"jsonrpc": "2.0", "id": 3, "method": "echo", "params": {"n": 1}},
        {"jsonrpc": "2.0", "id": 4, "method": "echo"},
    ]


# --------------------------------------------------------------- error handling


@pytest.mark.parametrize(
    "line",
    [
        b"{not json}\n",
        b'{"jsonrpc":"2.0","id":1,"method":"echo"\n',
        b'{"jsonrpc":"2.0","id":1,"method":"echo"}{"x":1}\n',
        b"[1,2\n",
        b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"s":"\xff"}}\n',
        b'{"jsonrpc":"2.0","id":1,"method":"ech\xc3"}\n',
        b"[" * 10000 + b"]" * 10000 + b"\n",
    ],
)
async def test_parse_errors_answer_null_id_and_the_connection_keeps_working(
    line: bytes,
) -> None:
    async with serving() as (_, peer, _handler):
        with anyio.fail_after(5):
            await peer.send(line)
            assert error_of(await peer.receive()) == (None, -32700)
            assert (await peer.request(2, "echo", {"ok": 1}))["result"] == {"ok": 1}


@pytest.mark.parametrize(
    ("message", "answered_id"),
    [
        (b'{"id":1,"method":"echo"}', 1),
        (b'{"jsonrpc":"1.0","id":1,"method":"echo"}', 1),
        (b'{"jsonrpc":2.0,"id":1,"method":"echo"}', 1),
        (b'{"jsonrpc":"2.0","id":1,"method":5}', 1),
        (b'{"jsonrpc":"2.0","id":1,"method":null}', 1),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"echo"}', None),
        (b'{"jsonrpc":"2.0","id":1.0,"method":"echo"}', None),
        (b'{"jsonrpc":"2.0","id":true,"method":"echo"}', None),
        (b'{"jsonrpc":"2.0","id":null,"method":"echo"}', None),
        (b'{"jsonrpc":"2.0","id":{"a":1},"method":"echo"}', None),
        (b'{"jsonrpc":"2.0","id":[1],"method":"echo"}', None),
        (b'{"jsonrpc":"2.0","id":1,"method":"echo","params":3}', 1),
        (b'{"jsonrpc":"2.0","id":"s","method":"echo","params":"x"}', "s"),
        (b'{"jsonrpc":"2.0","id":1,"method":"echo","params":null}', 1),
        (b'{"jsonrpc":"2.0","method":"note","params":true}', None),
        (b'{"jsonrpc":"2.0","method":1,"params":"bar"}', None),
        (b'{"jsonrpc":"2.0","id":1}', 1),
        (b'{"jsonrpc":"2.0"}', None),
        (b"{}", None),
        (b"1", None),
        (b'"text"', None),
        (b"null", None),
    ],
)
async def test_invalid_envelopes_are_invalid_requests(message: bytes, answered_id: object) -> None:
    async with serving() as (_, peer, handler):
        with anyio.fail_after(5):
            await peer.send(message + b"\n")
            assert error_of(await peer.receive()) == (answered_id, -32600)
            assert (await peer.request(2, "echo", {"ok": 1}))["result"] == {"ok": 1}
    assert handler.notifications == []


async def test_handler_bug_is_internal_error_without_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with serving() as (_, peer, _handler):
        with anyio.fail_after(5):
            response = await peer.request(1, "bug", {})
            assert (await peer.request(2, "echo", {"ok": 1}))["result"] == {"ok": 1}
    assert error_of(response) == (1, -32603)
    message = response["error"]["message"]
    assert message == "Internal error: ValueError: secret detail"
    assert "Traceback" not in msgspec.json.encode(response).decode()
    records = [record for record in caplog.records if "request handler for bug" in record.message]
    assert len(records) == 1
    assert records[0].exc_info is not None
    assert records[0].levelno == logging.ERROR


async def test_unencodable_result_is_internal_error() -> None:
    async with serving() as (_, peer, _handler):
        with anyio.fail_after(5):
            response = await peer.request(1, "unencodable", {})
    assert error_of(response) == (1, -32603)
    assert response["error"]["message"].startswith("Could not encode result")


async def test_request_error_wrapped_by_a_task_group_keeps_its_code() -> None:
    async with serving() as (_, peer, _handler):
        with anyio.fail_after(5):
            response = await peer.request(1, "grouped", {})
    assert error_of(response) == (1, -32602)
    assert response["error"]["message"] == "Invalid params: bad field"


async def test_notification_handler_that_raises_is_logged_and_ignored(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with serving() as (_, peer, handler):
        with anyio.fail_after(5):
            await peer.send({"jsonrpc": "2.0", "method": "boom", "params": {}})
            await peer.send({"jsonrpc": "2.0", "method": "after", "params": {}})
            assert (await peer.request(1, "echo", {}))["id"] == 1
    assert handler.notifications == [("after", {})]
    assert any(record.exc_info for record in caplog.records if "boom" in record.message)


# ---------------------------------------------------------------------- batches


async def test_empty_batch_is_one_invalid_request() -> None:
    async with serving() as (_, peer, _handler):
        with anyio.fail_after(5):
            await peer.send(b"[]\n")
            assert error_of(await peer.receive()) == (None, -32600)
            await peer.send(b"  [ ]\n")
            assert error_of(await peer.receive()) == (None, -32600)


async def test_notification_only_batch_gets_no_reply() -> None:
    async with serving() as (_, peer, handler):
        with anyio.fail_after(5):
            await peer.send(
                [
                    {"jsonrpc": "2.0", "method": "note", "params": {"i": 1}},
                    {"jsonrpc": "2.0", "method": "note", "params": {"i": 2}},
                ]
            )
            assert (await peer.request(9, "echo", {}))["id"] == 9
    assert handler.notifications == [("note", {"i": 1}), ("note", {"i": 2})]


async def test_batch_answers_come_back_as_one_array() -> None:
    async with serving() as (_, peer, handler):
        with anyio.fail_after(5):
            await peer.send(
                [
                    {"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"a": 1}},
                    1,
                    {"jsonrpc": "2.0", "method": "note", "params": {}},
                    {"foo": "boo"},
                    {"jsonrpc": "2.0", "id": "x", "method": "missing"},
                    {"jsonrpc": "2.0", "id": 2, "method": "echo", "params": 5},
                ]
            )
            answers = await peer.receive()
    assert isinstance(answers, list)
    by_id: dict[object, list[Json]] = {}
    for answer in answers:
        by_id.setdefault(answer["id"], []).append(answer.get("result", answer.get("error")))
    assert by_id[1] == [{"a": 1}]
    assert [error["code"] for error in by_id["x"]] == [-32601]
    assert [error["code"] for error in by_id[2]] == [-32600]
    assert [error["code"] for error in by_id[None]] == [-32600, -32600]
    assert len(answers) == 5
    assert handler.notifications == [("note", {})]


async def test_batch_of_invalid_entries_and_invalid_batch_json() -> None:
    async with serving() as (_, peer, _handler):
        with anyio.fail_after(5):
            await peer.send(b"[1,2,3]\n")
            answers = await peer.receive()
            assert [error_of(answer) for answer in answers] == [(None, -32600)] * 3
            await peer.send(b'[{"jsonrpc":"2.0","method":"sum"},{"jsonrpc"]\n')
            assert error_of(await peer.receive()) == (None, -32700)


async def test_slow_batch_does_not_block_the_reader_and_can_be_cancelled() -> None:
    async with serving() as (_, peer, handler):
        with anyio.fail_after(5):
            await peer.send(
                [
                    {"jsonrpc": "2.0", "id": "slow", "method": "slow", "params": {}},
                    {"jsonrpc": "2.0", "id": "fast", "method": "echo", "params": {}},
                ]
            )
            await handler.started_event("slow").wait()
            # The reader is free: a later request is answered while the batch runs.
            assert (await peer.request(3, "echo", {"later": 1}))["id"] == 3
            await peer.send(
                {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "slow"}}
            )
            answers = await peer.receive()
    assert sorted((answer["id"], "error" in answer) for answer in answers) == [
        ("fast", False),
        ("slow", True),
    ]
    assert error_of(next(a for a in answers if a["id"] == "slow")) == ("slow", -32800)
    assert handler.cancelled == ["slow"]


async def test_duplicate_id_inside_a_batch() -> None:
    async with serving() as (_, peer, _handler):
        with anyio.fail_after(5):
            await peer.send(
                [
                    {"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {}},
                    {"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {}},
                ]
            )
            answers = await peer.receive()
    assert sorted(("error" in answer) for answer in answers) == [False, True]


# ------------------------------------------------------------------ size limit


async def test_oversized_message_is_rejected_and_the_connection_recovers() -> None:
    async with serving(max_message_size=64 * 1024) as (_, peer, _handler):
        with anyio.fail_after(30):
            chunk = b"x" * (1024 * 1024)

            async def flood() -> None:
                for _ in range(20):
                    await peer.send(chunk)
                await peer.send(b"\n" + b'{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]}\n')

            async with anyio.create_task_group() as group:
                group.start_soon(flood)
                rejected = await peer.receive()
                assert error_of(rejected) == (None, -32600)
                assert "65536 bytes" in rejected["error"]["message"]
                assert await peer.receive() == {"jsonrpc": "2.0", "id": 1, "result": [1]}
            # A message just under the limit is still fine.
            big = ["y" * (60 * 1024)]
            assert (await peer.request(2, "echo", big))["result"] == big


def test_default_message_limit_is_32_mib() -> None:
    assert DEFAULT_MAX_MESSAGE_SIZE == 32 * 1024 * 1024


# ------------------------------------------------------- concurrency and cancel


async def test_slow_handler_does_not_delay_a_fast_one() -> None:
    async with serving() as (_, peer, handler):
        with anyio.fail_after(5):
            await peer.send({"jsonrpc": "2.0", "id": "slow", "method": "slow", "params": {}})
            await handler.started_event("slow").wait()
            assert (await peer.request("fast", "echo", {}))["id"] == "fast"
            handler.release.set()
            assert await peer.receive() == {"jsonrpc": "2.0", "id": "slow", "result": "slow done"}


async def test_cancel_request_cancels_the_handler_with_32800() -> None:
    async with serving() as (_, peer, handler):
        with anyio.fail_after(5):
            await peer.send({"jsonrpc": "2.0", "id": 5, "method": "slow", "params": {}})
            await handler.started_event(5).wait()
            await peer.send(
                {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 5}}
            )
            assert error_of(await peer.receive()) == (5, -32800)
            assert handler.cancelled == [5]
            # The id is free again once answered.
            assert (await peer.request(5, "echo", {}))["id"] == 5


async def test_cancel_arriving_with_the_request_in_one_read() -> None:
    async with serving() as (_, peer, _handler):
        with anyio.fail_after(5):
            await peer.send(
                b'{"jsonrpc":"2.0","id":"a","method":"slow","params":{}}\n'
                b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"a"}}\n'
            )
            assert error_of(await peer.receive()) == ("a", -32800)


async def test_handler_cancelling_its_own_scope_answers_32800() -> None:
    async with serving() as (_, peer, _handler):
        with anyio.fail_after(5):
            assert error_of(await peer.request(1, "self_cancel", {})) == (1, -32800)


@pytest.mark.parametrize(
    "params",
    [{"requestId": 99}, {"requestId": "nope"}, {"requestId": 1.5}, {}, [1], {"requestId": None}],
)
async def test_cancel_for_unknown_or_malformed_id_is_ignored(params: Json) -> None:
    async with serving() as (_, peer, handler):
        with anyio.fail_after(5):
            await peer.send({"jsonrpc": "2.0", "id": 1, "method": "slow", "params": {}})
            await handler.started_event(1).wait()
            await peer.send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": params})
            await peer.send({"jsonrpc": "2.0", "method": "$/cancel_request"})
            assert (await peer.request(2, "echo", {}))["id"] == 2
            handler.release.set()
            assert (await peer.receive())["result"] == "slow done"
    assert handler.cancelled == []


async def test_duplicate_in_flight_id_is_invalid_request() -> None:
    async with serving() as (_, peer, handler):
        with anyio.fail_after(5):
            await peer.send({"jsonrpc": "2.0", "id": 7, "method": "slow", "params": {}})
            await handler.started_event(7).wait()
            assert error_of(await peer.request(7, "echo", {})) == (7, -32600)
            # The same number as a string is a different id.
            assert (await peer.request("7", "echo", {}))["id"] == "7"
            handler.release.set()
            assert await peer.receive() == {"jsonrpc": "2.0", "id": 7, "result": "slow done"}


async def test_too_many_concurrent_requests_is_a_clear_error() -> None:
    async with serving(max_concurrent_requests=2) as (_, peer, handler):
        with anyio.fail_after(5):
            for request_id in (1, 2):
                await peer.send(
                    {"jsonrpc": "2.0", "id": request_id, "method": "slow", "params": {}}
                )
                await handler.started_event(request_id).wait()
            refused = await peer.request(3, "echo", {})
            assert error_of(refused) == (3, -32603)
            assert "Too many concurrent requests (limit 2)" in refused["error"]["message"]
            handler.release.set()
            assert {(await peer.receive())["id"] for _ in range(2)} == {1, 2}
            assert (await peer.request(4, "echo", {}))["id"] == 4


# ------------------------------------------------------------ outgoing requests


async def test_outgoing_request_ids_and_params() -> None:
    async with serving() as (connection, peer, _handler):
        with anyio.fail_after(5):
            async with anyio.create_task_group() as group:
                results: list[object] = []

                async def call(params: object) -> None:
                    results.append(await connection.request("m", params, msgspec.json.decode))

                group.start_soon(call, {"a": 1})
                first = await peer.receive()
                group.start_soon(call, None)
                second = await peer.receive()
                assert first == {"jsonrpc": "2.0", "id": 1, "method": "m", "params": {"a": 1}}
                # JSON-RPC forbids "params": null, so None leaves params out.
                assert second == {"jsonrpc": "2.0", "id": 2, "method": "m"}
                await peer.send({"jsonrpc": "2.0", "id": 2, "result": "two"})
                await peer.send({"jsonrpc": "2.0", "id": 1, "result": None})
    assert sorted(results, key=str) == [None, "two"]


async def test_cancelled_outgoing_request_sends_cancel_and_ignores_late_answer() -> None:
    async with serving() as (connection, peer, _handler):
        with anyio.fail_after(5):
            sent: list[int] = []
            async with anyio.create_task_group() as group:

                async def call() -> None:
                    await connection.request("m", {}, msgspec.json.decode, on_sent=sent.append)

                group.start_soon(call)
                request = await peer.receive()
                group.cancel_scope.cancel()
            assert request["id"] == sent[0] == 1
            assert await peer.receive() == {
                "jsonrpc": "2.0",
                "method": "$/cancel_request",
                "params": {"requestId": 1},
            }
            # The late answer is ignored, and the connection goes on.
            await peer.send({"jsonrpc": "2.0", "id": 1, "result": "late"})
            await peer.send({"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "x"}})
            assert (await peer.request("p", "echo", {}))["id"] == "p"


async def test_request_cancelled_before_it_was_queued_sends_nothing(make_pair: PairMaker) -> None:
    ours, theirs = make_pair(max_buffered_chunks=1)
    peer = RawPeer(theirs)
    with anyio.fail_after(5):
        async with Connection(ours, Handler(), write_buffer_size=200) as connection:
            for _ in range(3):
                # Fill the stream, the writer's hands and the buffer.
                await connection.notify("fill", {"x": "f" * 150})
                await anyio.wait_all_tasks_blocked()
            async with anyio.create_task_group() as group:
                group.start_soon(connection.request, "never", {}, msgspec.json.decode)
                await anyio.wait_all_tasks_blocked()
                group.cancel_scope.cancel()
            methods: list[str] = []

            async def collect() -> None:
                methods.extend([(await peer.receive())["method"] for _ in range(4)])

            async with anyio.create_task_group() as group:
                group.start_soon(collect)
                await connection.notify("after", {})
    # Neither the request nor a $/cancel_request for it went out.
    assert methods == ["fill", "fill", "fill", "after"]


async def test_responses_to_requests_never_sent_are_ignored() -> None:
    async with serving() as (connection, peer, _handler):
        with anyio.fail_after(5):
            for response in (
                {"jsonrpc": "2.0", "id": 12345, "result": {}},
                {"jsonrpc": "2.0", "id": "str", "result": {}},
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "bad"}},
                {"jsonrpc": "2.0", "id": True, "result": 1},
            ):
                await peer.send(response)
            async with anyio.create_task_group() as group:
                got: list[object] = []

                async def call() -> None:
                    got.append(await connection.request("m", {}, msgspec.json.decode))

                group.start_soon(call)
                assert (await peer.receive())["id"] == 1
                # ``true`` is not the id 1.
                await peer.send({"jsonrpc": "2.0", "id": True, "result": "wrong"})
                await peer.send({"jsonrpc": "2.0", "id": 1, "result": "right"})
    assert got == ["right"]


@pytest.mark.parametrize(
    ("response", "code"),
    [
        ({"error": {"code": -32602, "message": "bad", "data": [1]}}, -32602),
        ({"error": {"code": "x", "message": "bad"}}, -32603),
        ({"error": {"code": True, "message": "bad"}}, -32603),
        ({"error": {"code": 1}}, -32603),
        ({"error": "just a string"}, -32603),
        ({"error": None}, -32603),
        ({}, -32603),
    ],
)
async def test_error_responses_become_request_errors(
    response: dict[str, object], code: int
) -> None:
    async with serving() as (connection, peer, _handler):
        with anyio.fail_after(5):
            async with anyio.create_task_group() as group:
                caught: list[RequestError] = []

                async def call() -> None:
                    try:
                        await connection.request("m", {}, msgspec.json.decode)
                    except RequestError as exc:
                        caught.append(exc)

                group.start_soon(call)
                request = await peer.receive()
                await peer.send({"jsonrpc": "2.0", "id": request["id"], **response})
    assert [error.code for error in caught] == [code]
    if code == -32602:
        assert caught[0].data == [1]


async def test_result_rejected_by_decode_is_a_remote_protocol_error() -> None:
    async with serving() as (connection, peer, _handler):
        with anyio.fail_after(5):
            async with anyio.create_task_group() as group:
                caught: list[BaseException] = []

                async def call() -> None:
                    try:
                        await connection.request("m", {}, msgspec.json.Decoder(int).decode)
                    except RemoteProtocolError as exc:
                        caught.append(exc)

                group.start_soon(call)
                await peer.receive()
                await peer.send({"jsonrpc": "2.0", "id": 1, "result": "not an int"})
    assert len(caught) == 1
    assert "Expected `int`" in str(caught[0])


# ------------------------------------------------------------ close and shutdown


async def test_peer_closing_fails_pending_requests_and_cancels_handlers() -> None:
    async with serving() as (connection, peer, handler):
        with anyio.fail_after(5):
            failures: list[BaseException] = []
            async with anyio.create_task_group() as group:

                async def call() -> None:
                    try:
                        await connection.request("m", {}, msgspec.json.decode)
                    except ConnectionClosed as exc:
                        failures.append(exc)

                group.start_soon(call)
                group.start_soon(call)
                await peer.send({"jsonrpc": "2.0", "id": "h", "method": "slow", "params": {}})
                await handler.started_event("h").wait()
                await peer.receive()
                await peer.receive()
                await peer.streams.send.aclose()
                await connection.wait_closed()
            assert connection.closed
            assert len(failures) == 2
            assert failures[0] is not failures[1]
            assert handler.cancelled == ["h"]
            # The cancelled handler still answered, while the peer reads.
            assert error_of(await peer.receive()) == ("h", -32800)
            with pytest.raises(ConnectionClosed):
                await connection.request("m", {}, msgspec.json.decode)


async def test_leaving_answers_running_handlers_and_flushes_in_order(make_pair: PairMaker) -> None:
    handler = Handler()
    ours, theirs = make_pair(max_buffered_chunks=1)
    peer = RawPeer(theirs)
    received: list[Json] = []
    start_reading = anyio.Event()

    async def collect() -> None:
        await start_reading.wait()
        while True:
            try:
                received.append(await peer.receive())
            except EOFError:
                return

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(collect)
            async with Connection(ours, handler, write_buffer_size=4096) as connection:
                await peer.send({"jsonrpc": "2.0", "id": 1, "method": "slow", "params": {}})
                await handler.started_event(1).wait()
                for index in range(100):
                    if index % 2:
                        await connection.notify("n", {"i": index})
                    else:
                        await connection.send_raw_params("n", b'{"i":%d}' % index)
                # Still queued when we leave; the peer only starts reading now.
                assert connection.buffered_bytes > 0
                start_reading.set()
    notes = [message for message in received if message.get("method") == "n"]
    assert [note["params"]["i"] for note in notes] == list(range(100))
    assert len(received) == 101
    assert received[-1] == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32800, "message": "Request cancelled"},
    }
    assert handler.cancelled == [1]
    with pytest.raises(ConnectionClosed):
        await connection.notify("late", {})


async def test_slow_reader_makes_senders_wait_with_bounded_memory(make_pair: PairMaker) -> None:
    limit = 8192
    ours, theirs = make_pair(max_buffered_chunks=1)
    peer = RawPeer(theirs)
    message = {"text": "z" * 200}
    line_size = len(b'{"jsonrpc":"2.0","method":"n","params":}\n' + msgspec.json.encode(message))
    with anyio.fail_after(10):
        async with Connection(ours, Handler(), write_buffer_size=limit) as connection:
            produced = 0
            largest = 0

            async def produce() -> None:
                nonlocal produced, largest
                for _ in range(2000):
                    await connection.notify("n", message)
                    largest = max(largest, connection.buffered_bytes)
                    produced += 1

            async with anyio.create_task_group() as group:
                group.start_soon(produce)
                await anyio.wait_all_tasks_blocked()
                # The peer never read: the producer is parked, the buffer is bounded.
                assert 0 < produced < 2000
                assert connection.buffered_bytes <= limit + line_size
                stalled_at = produced
                await anyio.wait_all_tasks_blocked()
                assert produced == stalled_at
                received = [await peer.receive() for _ in range(2000)]
            assert largest <= limit + line_size
    assert received == [{"jsonrpc": "2.0", "method": "n", "params": message}] * 2000


async def test_waiting_senders_are_served_in_arrival_order(make_pair: PairMaker) -> None:
    ours, theirs = make_pair(max_buffered_chunks=1)
    peer = RawPeer(theirs)
    with anyio.fail_after(5):
        async with Connection(ours, Handler(), write_buffer_size=1000) as connection:
            # Fill the stream and the buffer while the peer is not reading.
            await connection.notify("fill", {"x": "a" * 900})
            await anyio.wait_all_tasks_blocked()
            await connection.notify("fill", {"x": "b" * 900})
            await anyio.wait_all_tasks_blocked()
            # Half full: a small message would fit now, the big one does not.
            await connection.notify("fill", {"x": "c" * 450})
            order: list[str] = []
            async with anyio.create_task_group() as group:

                async def send(name: str, size: int) -> None:
                    await connection.notify(name, {"x": "d" * size})
                    order.append(name)

                group.start_soon(send, "big", 900)
                await anyio.wait_all_tasks_blocked()
                for index in range(5):
                    group.start_soon(send, f"small{index}", 1)
                    await anyio.wait_all_tasks_blocked()
                assert order == []
                received = [await peer.receive() for _ in range(9)]
    methods = [message["method"] for message in received]
    assert methods == ["fill"] * 3 + ["big"] + [f"small{index}" for index in range(5)]
    assert order[0] == "big"


async def test_leaving_does_not_hang_when_the_peer_never_reads(make_pair: PairMaker) -> None:
    ours, _theirs = make_pair(max_buffered_chunks=1)
    handler = Handler()
    with anyio.fail_after(10):
        async with (
            Connection(ours, handler, write_buffer_size=1024) as connection,
            anyio.create_task_group() as group,
        ):

            async def produce() -> None:
                with pytest.raises(ConnectionClosed):
                    while True:
                        await connection.notify("n", {"x": "y" * 100})

            group.start_soon(produce)
            await anyio.wait_all_tasks_blocked()
            await connection.aclose(flush_timeout=0.05)
    assert connection.closed


async def test_body_exception_propagates_unwrapped_and_pending_requests_fail(
    make_pair: PairMaker,
) -> None:
    ours, theirs = make_pair()
    peer = RawPeer(theirs)
    failures: list[BaseException] = []

    async def call(connection: Connection) -> None:
        try:
            await connection.request("m", {}, msgspec.json.decode)
        except ConnectionClosed as exc:
            failures.append(exc)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            with pytest.raises(KeyError):
                async with Connection(ours, Handler()) as connection:
                    group.start_soon(call, connection)
                    await peer.receive()
                    raise KeyError("mine")
    assert len(failures) == 1


async def test_aclose_from_inside_a_handler_does_not_deadlock(make_pair: PairMaker) -> None:
    class Closer(Handler):
        connection: Connection | None = None

        async def on_request(
            self, method: str, params: msgspec.Raw | None, context: RequestContext
        ) -> object:
            if method == "shutdown":
                assert self.connection is not None
                await self.connection.aclose()
                return "bye"
            return await super().on_request(method, params, context)

    handler = Closer()
    ours, theirs = make_pair()
    peer = RawPeer(theirs)
    with anyio.fail_after(5):
        async with Connection(ours, handler) as connection:
            handler.connection = connection
            await peer.send({"jsonrpc": "2.0", "id": 1, "method": "shutdown", "params": {}})
            await connection.wait_closed()
        assert await peer.at_eof()


async def test_raw_message_hook_sees_both_directions(make_pair: PairMaker) -> None:
    seen: list[tuple[str, bytes]] = []
    ours, theirs = make_pair()
    peer = RawPeer(theirs)
    with anyio.fail_after(5):
        async with Connection(ours, Handler(), on_raw_message=lambda d, b: seen.append((d, b))):
            await peer.request(1, "echo", {"k": 1})
    assert seen == [
        ("in", b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"k":1}}'),
        ("out", b'{"jsonrpc":"2.0","id":1,"result":{"k":1}}'),
    ]


def test_connection_can_be_built_outside_the_event_loop() -> None:
    for backend in ("asyncio", "trio"):
        ours, theirs = memory_stream_pair()
        connection = Connection(ours, Handler())
        peer = RawPeer(theirs)

        async def use(connection: Connection = connection, peer: RawPeer = peer) -> object:
            try:
                with anyio.fail_after(5):
                    async with connection:
                        return await peer.request(1, "echo", {})
            finally:
                await peer.streams.aclose()

        assert anyio.run(use, backend=backend) == {"jsonrpc": "2.0", "id": 1, "result": {}}


# ------------------------------------------------------------- over OS pipes


@asynccontextmanager
async def pipe_pair() -> AsyncIterator[tuple[StreamPair, StreamPair, list[int]]]:
    """Two StreamPairs joined by two OS pipes; the third item lists the open fds."""
    to_us, from_them = os.pipe()
    to_them, from_us = os.pipe()
    fds = [to_us, from_them, to_them, from_us]
    ours = StreamPair(_FdReceiveStream(to_us), _FdSendStream(from_us))
    theirs = StreamPair(_FdReceiveStream(to_them), _FdSendStream(from_them))
    try:
        yield ours, theirs, fds
    finally:
        await ours.aclose()
        await theirs.aclose()
        for fd in fds:
            os.close(fd)


async def test_backpressure_over_a_real_pipe() -> None:
    limit = 16 * 1024
    message = {"text": "p" * 300}
    line_size = len(b'{"jsonrpc":"2.0","method":"n","params":}\n' + msgspec.json.encode(message))
    async with pipe_pair() as (ours, theirs, _fds):
        peer = RawPeer(theirs)
        with anyio.fail_after(20):
            async with Connection(ours, Handler(), write_buffer_size=limit) as connection:
                produced = 0

                async def produce() -> None:
                    nonlocal produced
                    for _ in range(6000):
                        await connection.notify("n", message)
                        assert connection.buffered_bytes <= limit + line_size
                        produced += 1

                async with anyio.create_task_group() as group:
                    group.start_soon(produce)
                    await anyio.wait_all_tasks_blocked()
                    # The pipe (1 MiB on Linux) and the buffer are full; the producer waits.
                    assert 0 < produced < 6000
                    received = [await peer.receive() for _ in range(6000)]
    assert received == [{"jsonrpc": "2.0", "method": "n", "params": message}] * 6000


async def test_requests_and_peer_close_over_a_real_pipe() -> None:
    async with pipe_pair() as (ours, theirs, fds):
        peer = RawPeer(theirs)
        with anyio.fail_after(10):
            async with Connection(ours, Handler()) as connection:
                # A request split inside a UTF-8 character, then a partial line.
                await peer.send(b'{"jsonrpc":"2.0","id":1,"method":"echo","params":["\xe2\x9c')
                await peer.send(b'\x93"]}\n{"jsonrpc":"2.0",')
                assert await peer.receive() == {"jsonrpc": "2.0", "id": 1, "result": ["\u2713"]}
                failures: list[BaseException] = []

                async def call() -> None:
                    try:
                        await connection.request("m", {}, msgspec.json.decode)
                    except ConnectionClosed as exc:
                        failures.append(exc)

                async with anyio.create_task_group() as group:
                    group.start_soon(call)
                    assert (await peer.receive())["method"] == "m"
                    # The peer goes away: its end of our input pipe closes.
                    os.close(fds[1])
                    fds[1] = os.open(os.devnull, os.O_RDONLY)
                await connection.wait_closed()
            assert len(failures) == 1


async def test_a_request_larger_than_the_pipe_arrives_whole_and_in_order() -> None:
    # The requesting task writes inline what fits in the pipe; the writer task sends the rest.
    big = "r" * (3 * 1024 * 1024)
    async with pipe_pair() as (ours, theirs, _fds):
        peer = RawPeer(theirs)
        with anyio.fail_after(20):
            async with Connection(ours, Handler()) as connection:
                await connection.notify("before", {"n": 1})
                async with anyio.create_task_group() as group:
                    results: list[object] = []

                    async def ask() -> None:
                        results.append(
                            await connection.request("big", {"x": big}, msgspec.json.decode)
                        )

                    group.start_soon(ask)
                    first = await peer.receive()
                    request = await peer.receive()
                    assert first == {"jsonrpc": "2.0", "method": "before", "params": {"n": 1}}
                    assert request["method"] == "big"
                    assert request["params"] == {"x": big}
                    await peer.send({"jsonrpc": "2.0", "id": request["id"], "result": "ok"})
                assert results == ["ok"]


class SequenceHandler(Handler):
    """Also records the position of each notification and answers ``seq`` with its own."""

    def __init__(self) -> None:
        super().__init__()
        self.connection: Connection | None = None
        self.positions: list[int] = []

    async def on_request(
        self, method: str, params: msgspec.Raw | None, context: RequestContext
    ) -> object:
        if method == "seq":
            return context.sequence
        return await super().on_request(method, params, context)

    async def on_notification(self, method: str, params: msgspec.Raw | None) -> None:
        assert self.connection is not None
        self.positions.append(self.connection.received)
        await super().on_notification(method, params)


async def ask_into(outcomes: dict[str, object], connection: Connection, name: str) -> None:
    """Send request ``name``; record its result, or an error's ``(code, message)``."""
    try:
        outcomes[name] = await connection.request(name, None, msgspec.json.decode)
    except RequestError as exc:
        outcomes[name] = (exc.code, exc.message)


async def test_responses_in_one_read_with_other_messages_keep_the_order(
    monkeypatch: pytest.MonkeyPatch, anyio_backend: str
) -> None:
    # On asyncio, responses at the start of a read are handled by the read
    # callback; from the first other message on, the reader task takes over.
    taken: list[bytes] = []
    original = Connection._take_responses

    def spy(self: Connection, reader: LineReader, data: bytes) -> bytes:
        rest = original(self, reader, data)
        taken.append(data[: len(data) - len(rest)])
        return rest

    monkeypatch.setattr(Connection, "_take_responses", spy)
    handler = SequenceHandler()
    async with pipe_pair() as (ours, theirs, _fds):
        peer = RawPeer(theirs)
        with anyio.fail_after(10):
            async with Connection(ours, handler) as connection:
                handler.connection = connection
                outcomes: dict[str, object] = {}
                async with anyio.create_task_group() as group:
                    for name in ("r1", "r2", "r3"):
                        group.start_soon(ask_into, outcomes, connection, name)
                    ids = {}
                    for _ in range(3):
                        request = await peer.receive()
                        ids[request["method"]] = request["id"]
                    lines = [
                        {"jsonrpc": "2.0", "id": ids["r1"], "result": "one"},
                        {"jsonrpc": "2.0", "method": "n", "params": {"k": 1}},
                        {"jsonrpc": "2.0", "id": ids["r2"], "result": "two \u2713"},
                        {
                            "jsonrpc": "2.0",
                            "id": ids["r3"],
                            "error": {"code": -32000, "message": "no"},
                        },
                        {"jsonrpc": "2.0", "id": 7, "method": "seq"},
                    ]
                    await peer.send(b"".join(msgspec.json.encode(m) + b"\n" for m in lines))
                    answer = await peer.receive()
    assert outcomes == {"r1": "one", "r2": "two \u2713", "r3": (-32000, "no")}
    assert handler.notifications == [("n", {"k": 1})]
    assert handler.positions == [2]  # the response before it was counted first
    assert answer == {"jsonrpc": "2.0", "id": 7, "result": 5}
    if anyio_backend == "asyncio":
        # Only the first response was taken by the callback: the notification stops it.
        assert taken == [b'{"jsonrpc":"2.0","id":%d,"result":"one"}\n' % ids["r1"]]
    else:
        assert taken == []


async def test_split_and_malformed_responses_over_a_real_pipe() -> None:
    async with pipe_pair() as (ours, theirs, _fds):
        peer = RawPeer(theirs)
        with anyio.fail_after(10):
            async with Connection(ours, Handler()) as connection:
                outcomes: dict[str, object] = {}
                async with anyio.create_task_group() as group:
                    group.start_soon(ask_into, outcomes, connection, "split")
                    split_id = (await peer.receive())["id"]
                    line = msgspec.json.encode({"jsonrpc": "2.0", "id": split_id, "result": [1, 2]})
                    await peer.send(line[:9])
                    await anyio.wait_all_tasks_blocked()
                    assert outcomes == {}
                    await peer.send(line[9:] + b"\n")
                    await anyio.wait_all_tasks_blocked()
                    group.start_soon(ask_into, outcomes, connection, "malformed")
                    bad_id = (await peer.receive())["id"]
                    # Neither result nor error, then a blank line: both for the reader task.
                    await peer.send(b'{"jsonrpc":"2.0","id":%d}\n   \n' % bad_id)
    assert outcomes["split"] == [1, 2]
    code, message = outcomes["malformed"]  # type: ignore[misc]
    assert code == -32603 and "neither result nor error" in message


async def test_many_responses_in_one_read_each_reach_their_request() -> None:
    async with pipe_pair() as (ours, theirs, _fds):
        peer = RawPeer(theirs)
        with anyio.fail_after(20):
            async with Connection(ours, Handler()) as connection:
                results: dict[int, object] = {}

                async def ask(n: int) -> None:
                    results[n] = await connection.request("double", {"n": n}, msgspec.json.decode)

                async with anyio.create_task_group() as group:
                    for n in range(200):
                        group.start_soon(ask, n)
                    requests = [await peer.receive() for _ in range(200)]
                    answers = [
                        {"jsonrpc": "2.0", "id": r["id"], "result": 2 * r["params"]["n"]}
                        for r in reversed(requests)
                    ]
                    await peer.send(b"".join(msgspec.json.encode(a) + b"\n" for a in answers))
    assert results == {n: 2 * n for n in range(200)}


# ------------------------------------------------- responses that cannot be used (issue 24)


@pytest.mark.parametrize("shape", ["oversized", "oversized error", "truncated", "garbled"])
async def test_an_unusable_response_fails_the_request_it_answers(shape: str) -> None:
    # Whatever the peer sent in answer, the request ends: with -32603 naming it and why.
    async with serving(max_message_size=1024) as (connection, peer, _):
        outcomes: dict[str, object] = {}
        with anyio.fail_after(5):
            async with anyio.create_task_group() as group:
                group.start_soon(ask_into, outcomes, connection, "terminal/output")
                request_id = (await peer.receive())["id"]
                start = b'{"jsonrpc":"2.0","id":%d,' % request_id
                body = {
                    "oversized": b'"result":{"output":"%s"}}' % (b"x" * 4096),
                    "oversized error": b'"error":{"code":1,"message":"%s"}}' % (b"x" * 4096),
                    "truncated": b'"result":{"output":"abc"}',
                    "garbled": b'"result":{"output":"abc"}}}',
                }[shape]
                await peer.send(start + body + b"\n")
            # The response was not answered: the next line the peer reads answers this.
            answer = await peer.request("after", "echo", [1])
    code, message = outcomes["terminal/output"]  # type: ignore[misc]
    assert code == -32603
    assert f"response to terminal/output (request {request_id}) was refused" in message
    expected = "larger than the limit of 1024 bytes" if "oversized" in shape else "malformed"
    assert expected in message
    assert answer == {"jsonrpc": "2.0", "id": "after", "result": [1]}


async def test_an_oversized_request_is_answered_with_the_id_read_from_its_start() -> None:
    async with serving(max_message_size=1024) as (_, peer, _handler):
        with anyio.fail_after(5):
            await peer.send(
                b'{"jsonrpc":"2.0","id":"big","method":"echo","params":["%s"]}\n' % (b"x" * 4096)
            )
            answer = await peer.receive()
    assert error_of(answer) == ("big", -32600)
    assert "larger than the limit of 1024 bytes" in answer["error"]["message"]


async def test_an_oversized_response_whose_id_comes_last_is_not_answered() -> None:
    # The id cannot be read from the start: nothing to fail, and a response is never
    # answered; the request itself is left to its caller's bound.
    async with serving(max_message_size=1024) as (connection, peer, _):
        with anyio.fail_after(5):
            async with anyio.create_task_group() as group:
                outcomes: dict[str, object] = {}
                group.start_soon(ask_into, outcomes, connection, "slow")
                request_id = (await peer.receive())["id"]
                await peer.send(
                    b'{"jsonrpc":"2.0","result":"%s","id":%d}\n' % (b"x" * 4096, request_id)
                )
                answer = await peer.request("after", "echo", [2])
                assert outcomes == {}
                await peer.send({"jsonrpc": "2.0", "id": request_id, "result": "small"})
    assert answer == {"jsonrpc": "2.0", "id": "after", "result": [2]}
    assert outcomes == {"slow": "small"}
