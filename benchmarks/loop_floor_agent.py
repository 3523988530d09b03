"""The "asyncio floor" bench agent: the least an event-loop agent can do, no SDK.

The floor agent (``floor_agent.py``) reads and writes with blocking calls on one
thread: it shows what Python can reach, but no SDK can work that way, since an
agent must read the client's messages while its prompt turns run. This agent
is the same floor on an asyncio event loop, the way any asyncio or anyio SDK
must run: standard input is read by a callback registered once with the loop
(``add_reader``), the prompt turn is a coroutine, and each permission request
is awaited on a bare future that the read callback resolves. Around each
request it sends what the protocol asks of every agent: ``requires_action``
before it (in the same write) and ``running`` once the answer is in (written
with the next request, or at the end of the turn). Lines are
pre-encoded and written exactly as in the floor agent, whose code it reuses
(``notify`` and ``terminal`` are the floor's own loops). There are no other
layers: no cancel scopes, no history, no session state, no validation.

Its permission figures are the floor for an event-loop agent: the syscalls an
event loop adds (``epoll_wait`` per wake-up) and one loop iteration between
reading an answer and resuming the coroutine that waits for it.
"""

from __future__ import annotations

import asyncio
import os
import sys

import msgspec

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from floor_agent import (
    IDLE,
    Msg,
    Out,
    answer,
    granted,
    notify,
    permission_request_tail,
    reply,
    start_turn,
    terminal,
)

decode_lines = msgspec.json.Decoder(Msg).decode_lines

REQUIRES_ACTION: bytes = b'{"sessionUpdate":"state_update","state":"requires_action"}}}\n'
RUNNING: bytes = b'{"sessionUpdate":"state_update","state":"running"}}}\n'


class Agent:
    """Reads standard input from a loop callback; each request is answered by a task."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.out = Out()
        self.partial = b""
        self.answers: dict[int, asyncio.Future[Msg]] = {}
        self.done: asyncio.Future[None] = loop.create_future()
        self.sessions = 0
        self.turns = 0
        self.next_id = 0
        self.turn: asyncio.Task[None] | None = None

    def on_readable(self) -> None:
        block = os.read(0, 1 << 16)  # under the allocator's mmap threshold
        if not block:
            self.loop.remove_reader(0)
            if not self.done.done():
                self.done.set_result(None)
            return
        block = self.partial + block
        end = block.rfind(b"\n") + 1
        self.partial = block[end:]
        for m in decode_lines(block[:end]):
            self.dispatch(m)

    def dispatch(self, m: Msg) -> None:
        if m.method is None:
            if isinstance(m.id, int):
                answer = self.answers.pop(m.id, None)
                if answer is not None:
                    answer.set_result(m)
            return
        if m.id is msgspec.UNSET:
            return  # notifications (session/cancel)
        self.turn = self.loop.create_task(self.handle(m))

    async def handle(self, m: Msg) -> None:
        out, method, rid, params = self.out, m.method, m.id, m.params
        assert method is not None
        if method == "session/prompt" and params and params.sessionId and params.prompt:
            self.turns += 1
            turn = start_turn(out, rid, params.sessionId, params.prompt, self.turns)
            if turn.kind == "notify":
                notify(out, turn.pre, turn.args[0])
            elif turn.kind == "reply":
                reply(out, turn.pre, turn.mid, turn.args[0])
            elif turn.kind == "terminal":
                terminal(out, turn.pre, turn.args[0], turn.args[1])
            elif turn.kind == "permission":
                await self.permission(turn.pre, params.sessionId, turn.args[0])
            out.add(turn.pre + IDLE)
        else:
            self.sessions += method == "session/new"
            answer(out, method, rid, params, self.sessions)
        out.flush()

    async def permission(self, pre: bytes, sid: str, n: int) -> None:
        out = self.out
        req = permission_request_tail(sid)
        requires_action, running = pre + REQUIRES_ACTION, pre + RUNNING
        for _ in range(n):
            rid = self.next_id
            self.next_id += 1
            waiter = self.answers[rid] = self.loop.create_future()
            # What the protocol asks around a request: requires_action before it
            # (written with it), running once the answer is in (written with the
            # next request, or at the end of the turn).
            out.add(requires_action)
            out.add(b'{"jsonrpc":"2.0","id":%d' % rid + req)
            out.flush()
            if not granted(await waiter):
                raise SystemExit(f"permission {rid} not granted")
            out.add(running)


async def main() -> None:
    loop = asyncio.get_running_loop()
    os.set_blocking(0, False)
    agent = Agent(loop)
    loop.add_reader(0, agent.on_readable)
    await agent.done
    if agent.turn is not None:
        await agent.turn


if __name__ == "__main__":
    asyncio.run(main())
