"""A routed connection (``acpio.rpc.Routes``): each message sent on its route, nothing read back.

The transport here is a plain recorder: one list of lines per route, and a
route can be made full (its senders then wait) and opened again. What the
tests check is what a transport gets: answers on their request's route, a
session's messages on its route, a request's cancellation on the route the
request went on, backpressure per route, and the end of input.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

import anyio
import msgspec
import pytest

from acpio import ConnectionClosed
from acpio.rpc import Connection, Inbound, RequestContext, RouteOut, RouteView

pytestmark = pytest.mark.anyio

Json = Any


class Recorded:
    """One route: the lines put on it, in order; while ``full``, ``try_put`` refuses."""

    def __init__(self, changed: Changed) -> None:
        self.lines: list[bytes] = []
        self.full = False
        self._room = anyio.Event()
        self._changed = changed

    def try_put(self, line: bytes, /) -> bool:
        if self.full:
            return False
        self._append(line)
        return True

    async def put(self, line: bytes, /) -> None:
        while self.full:
            await self._room.wait()
        self._append(line)

    def put_nowait(self, line: bytes, /) -> bool:
        self._append(line)
        return True

    def _append(self, line: bytes) -> None:
        self.lines.append(line)
        self._changed.set()

    def open(self) -> None:
        self.full = False
        self._room.set()
        self._room = anyio.Event()

    def messages(self) -> list[Json]:
        return [msgspec.json.decode(line) for line in self.lines]


class Changed:
    """Wakes whoever waits for a line to be put on any route."""

    def __init__(self) -> None:
        self._event = anyio.Event()

    def set(self) -> None:
        self._event.set()
        self._event = anyio.Event()

    async def until(self, predicate: Callable[[], object]) -> None:
        with anyio.fail_after(10):
            while not predicate():
                await self._event.wait()


class Recorder:
    """The transport: a :class:`Recorded` per route, made on first use."""

    def __init__(self) -> None:
        self.changed = Changed()
        self.routes: defaultdict[object, Recorded] = defaultdict(lambda: Recorded(self.changed))
        self.connection: Inbound | None = None

    def attach(self, connection: Inbound, /) -> None:
        self.connection = connection

    def out(self, route: object, /) -> RouteOut:
        return self.routes[route]


class Handler:
    """Answers ``echo`` with its params, ``ask`` by asking the peer ``question`` on route s1."""

    def __init__(self) -> None:
        self.connection: Connection | None = None

    async def on_request(self, method: str, params: msgspec.Raw | None, _: RequestContext) -> Json:
        if method == "echo":
            return msgspec.json.decode(params) if params is not None else None
        if method == "ask":
            assert self.connection is not None
            view = self.connection.for_route("s1")
            return await view.request("question", {"n": 1}, msgspec.json.decode)
        if method == "wait":
            await anyio.sleep_forever()
        raise AssertionError(method)

    async def on_notification(self, method: str, params: msgspec.Raw | None) -> None:
        return None


def request(request_id: Json, method: str, params: Json = None) -> bytes:
    message: dict[str, Json] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return msgspec.json.encode(message)


async def test_an_answer_goes_on_the_route_its_request_came_on() -> None:
    routes = Recorder()
    async with Connection(routes, Handler()) as connection:
        assert routes.connection is connection
        await connection.receive_message(request(1, "echo", {"a": 1}), "s1")
        await connection.receive_message(request(2, "echo", {"b": 2}))
        await routes.changed.until(lambda: routes.routes["s1"].lines and routes.routes[None].lines)
    assert routes.routes["s1"].messages() == [{"jsonrpc": "2.0", "id": 1, "result": {"a": 1}}]
    assert routes.routes[None].messages() == [{"jsonrpc": "2.0", "id": 2, "result": {"b": 2}}]


async def test_a_refusal_goes_on_the_route_of_the_message_refused() -> None:
    routes = Recorder()
    async with Connection(routes, Handler()) as connection:
        await connection.receive_message(b'{"jsonrpc":"2.0","id":7,"method":5}', "s2")
        await connection.receive_message(b"not json", "s2")
    errors = routes.routes["s2"].messages()
    assert [(e["id"], e["error"]["code"]) for e in errors] == [(7, -32600), (None, -32700)]
    assert not routes.routes[None].lines


async def test_a_sessions_messages_go_on_its_route_and_the_rest_on_the_connections() -> None:
    routes = Recorder()
    async with Connection(routes, Handler()) as connection:
        view = connection.for_route("s1")
        assert isinstance(view, RouteView)
        assert connection.for_route(None) is connection
        await view.notify("update", {"n": 1})
        assert view.line_try_sender(b'{"jsonrpc":"2.0","method":"update","params":{"n":2}}\n')
        await view.line_sender(b'{"jsonrpc":"2.0","method":"update","params":{"n":3}}\n')
        await connection.notify("other", None)
    assert [m["params"]["n"] for m in routes.routes["s1"].messages()] == [1, 2, 3]
    assert routes.routes[None].messages() == [{"jsonrpc": "2.0", "method": "other"}]


async def test_a_request_on_a_route_is_answered_from_any_route() -> None:
    routes = Recorder()
    handler = Handler()
    async with Connection(routes, handler) as connection:
        handler.connection = connection
        await connection.receive_message(request(1, "ask"), "s1")
        await routes.changed.until(lambda: routes.routes["s1"].lines)
        question = routes.routes["s1"].messages()[0]
        assert question["method"] == "question"
        assert connection.asked(question["id"]) == (True, "s1")
        assert connection.asked("1") == (False, None)
        answer = {"jsonrpc": "2.0", "id": question["id"], "result": {"yes": True}}
        await connection.receive_message(msgspec.json.encode(answer))
        await routes.changed.until(lambda: len(routes.routes["s1"].lines) == 2)
        assert connection.asked(question["id"]) == (False, None)
    assert routes.routes["s1"].messages()[1] == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"yes": True},
    }


async def test_a_request_given_up_is_withdrawn_on_its_own_route() -> None:
    routes = Recorder()
    async with Connection(routes, Handler()) as connection:
        view = connection.for_route("s1")
        with anyio.move_on_after(0.05):
            await view.request("question", {}, msgspec.json.decode)
    sent, cancel = routes.routes["s1"].messages()
    assert cancel == {
        "jsonrpc": "2.0",
        "method": "$/cancel_request",
        "params": {"requestId": sent["id"]},
    }
    assert not routes.routes[None].lines


async def test_a_full_route_holds_back_its_own_senders_only() -> None:
    routes = Recorder()
    async with Connection(routes, Handler()) as connection:
        slow, fast = connection.for_route("slow"), connection.for_route("fast")
        routes.routes["slow"].full = True
        assert not slow.line_try_sender(b'{"jsonrpc":"2.0","method":"a","params":{}}\n')
        async with anyio.create_task_group() as group:
            group.start_soon(slow.notify, "held", {"n": 1})
            await fast.notify("goes", {"n": 2})
            await connection.notify("goes too", {"n": 3})
            await anyio.wait_all_tasks_blocked()
            assert not routes.routes["slow"].lines
            routes.routes["slow"].open()
        assert [m["method"] for m in routes.routes["slow"].messages()] == ["held"]
    assert [m["method"] for m in routes.routes["fast"].messages()] == ["goes"]
    assert [m["method"] for m in routes.routes[None].messages()] == ["goes too"]


async def test_the_end_of_input_fails_what_waits_and_cancels_what_runs() -> None:
    routes = Recorder()
    async with Connection(routes, Handler()) as connection:
        await connection.receive_message(request(1, "wait"), "s1")
        view = connection.for_route("s1")
        failed: list[BaseException] = []

        async def ask() -> None:
            try:
                await view.request("question", {}, msgspec.json.decode)
            except ConnectionClosed as exc:
                failed.append(exc)

        async with anyio.create_task_group() as group:
            group.start_soon(ask)
            await routes.changed.until(lambda: len(routes.routes["s1"].lines) == 1)
            connection.end_input("the client left")
            with anyio.fail_after(5):
                await connection.wait_closed()
        assert connection.closed
        assert failed and "the client left" in str(failed[0])
        await routes.changed.until(lambda: len(routes.routes["s1"].lines) == 2)
    cancelled = routes.routes["s1"].messages()[1]
    assert cancelled["id"] == 1
    assert cancelled["error"]["code"] == -32800
