"""The "asyncio floor" bench agent: the least an event-loop agent can do, no SDK.

The floor agent (``floor_agent.py``) reads and writes with blocking calls on one
thread: it shows what Python can reach, but no SDK can work that way, since an
agent must read the client's messages while its prompt turns run. This agent
is the same floor on an asyncio event loop, the way any asyncio or anyio SDK
must run: standard input is read by a callback registered once with the loop
(``add_reader``), the prompt turn is a coroutine, and each permission request
is awaited on a bare future that the read callback resolves. Lines are
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

from floor_agent import Msg, Out, encode, notify, terminal, update_prefix

decode_lines = msgspec.json.Decoder(Msg).decode_lines


class Agent:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.out = Out()
        self.partial = b""
        self.answers: dict[int, asyncio.Future[Msg]] = {}
        self.done: asyncio.Future[None] = loop.create_future()
        self.sessions = 0
        self.messages = 0
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
            return
        self.turn = self.loop.create_task(self.handle(m))

    async def handle(self, m: Msg) -> None:
        out, method, rid, params = self.out, m.method, m.id, m.params
        if method == "initialize":
            out.add(
                b'{"jsonrpc":"2.0","id":'
                + encode(rid)
                + b',"result":{"protocolVersion":2,"capabilities":{"session":{}},'
                b'"info":{"name":"acpio-bench-loop-floor","version":"1"}}}\n'
            )
        elif method == "session/new":
            self.sessions += 1
            out.add(
                b'{"jsonrpc":"2.0","id":'
                + encode(rid)
                + b',"result":{"sessionId":"s%d"}}\n' % self.sessions
            )
        elif method == "session/prompt" and params and params.sessionId and params.prompt:
            await self.prompt(rid, params.sessionId, params.prompt)
        else:
            out.add(
                b'{"jsonrpc":"2.0","id":'
                + encode(rid)
                + b',"error":{"code":-32601,"message":"Method not found"}}\n'
            )
        out.flush()

    async def prompt(self, rid: object, sid: str, prompt: list) -> None:  # type: ignore[type-arg]
        out = self.out
        self.messages += 1
        mid = b'"m%d"' % self.messages
        out.add(
            b'{"jsonrpc":"2.0","id":' + encode(rid) + b',"result":{"messageId":' + mid + b"}}\n"
        )
        pre = update_prefix(sid)
        out.add(
            pre
            + b'{"sessionUpdate":"user_message","messageId":'
            + mid
            + b',"content":'
            + encode(prompt)
            + b"}}}\n"
        )
        out.add(pre + b'{"sessionUpdate":"state_update","state":"running"}}}\n')
        words = " ".join(b.text or "" for b in prompt).split()
        kind, args = (words[0], [int(w) for w in words[1:]]) if words else ("", [])
        if kind == "notify":
            notify(out, pre, args[0])
        elif kind == "terminal":
            terminal(out, pre, args[0], args[1])
        elif kind == "permission":
            await self.permission(sid, args[0])
        out.add(
            pre + b'{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}}}\n'
        )

    async def permission(self, sid: str, n: int) -> None:
        out = self.out
        req = (
            b',"method":"session/request_permission","params":{"sessionId":'
            + encode(sid)
            + b',"title":"bench",'
            + b'"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"}]}}\n'
        )
        for _ in range(n):
            rid = self.next_id
            self.next_id += 1
            answer = self.answers[rid] = self.loop.create_future()
            out.add(b'{"jsonrpc":"2.0","id":%d' % rid + req)
            out.flush()
            m = await answer
            r = m.result
            if r is None or r.outcome is None or r.outcome.optionId != "allow":
                raise SystemExit(f"permission {rid} not granted")


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
