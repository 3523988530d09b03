"""The "floor" bench agent: plain Python + msgspec, no SDK, protocol draft v2 (and v1).

It shows what straightforward Python can reach on this machine, so SDK numbers
can be read as "this fraction of what Python allows". Straightforward but not
naive: incoming lines are decoded with one typed msgspec decoder; outgoing lines
of the hot loops are pre-encoded as a fixed prefix and suffix around the one
varying part; lines are collected and written with one ``os.write`` per
~64 KiB (the default pipe capacity), bypassing ``sys.stdout``'s text layer.
One message per logical event: each terminal write becomes its own
``terminal_output_chunk`` (no coalescing of small writes), each notify its own
``tool_call_content_chunk``. Requests are handled in order on one thread; a
prompt's turn runs inline after its response, and permission answers are read
inline (the client sends nothing else during a bench turn).

Prompts (the bench contract): ``notify N``, ``reply N``, ``terminal BYTES CHUNK``,
``permission N``.

A client that asks for protocol v1 gets the same work in v1 terms, as the v1
peers do it (benchmarks/README.md): no ``messageId`` answer, echo or state
updates; the ``session/prompt`` answer ``{stopReason}`` ends the turn; notify and
terminal chunks as ``tool_call_update``s holding the one new item; ``reply``
chunks without ``messageId``; permission requests name the tool call.
"""

from __future__ import annotations

import binascii
import os
import sys
from typing import BinaryIO, NamedTuple

import msgspec

PATTERN = bytes(range(256))
FLUSH_AT = 1 << 16


class Block(msgspec.Struct):
    type: str = ""
    text: str | None = None


class Params(msgspec.Struct):
    protocolVersion: int | None = None
    sessionId: str | None = None
    prompt: list[Block] | None = None


class Outcome(msgspec.Struct):
    outcome: str = ""
    optionId: str | None = None


class Result(msgspec.Struct):
    outcome: Outcome | None = None


class Msg(msgspec.Struct):
    id: int | str | msgspec.UnsetType | None = msgspec.UNSET
    method: str | None = None
    params: Params | None = None
    result: Result | None = None
    error: object = None


class Turn(NamedTuple):
    """A prompt turn's update prefix and its work (``notify 100``: kind and numbers)."""

    pre: bytes
    kind: str
    args: list[int]
    mid: bytes  # the reply's encoded messageId (empty on v1)
    v1: bool


decode = msgspec.json.Decoder(Msg).decode
encode = msgspec.json.Encoder().encode


class Out:
    """Collects output lines and writes them to fd 1 in large blocks."""

    def __init__(self) -> None:
        self.lines: list[bytes] = []
        self.size = 0

    def add(self, line: bytes) -> None:
        self.lines.append(line)
        self.size += len(line)
        if self.size >= FLUSH_AT:
            self.flush()

    def flush(self) -> None:
        if not self.lines:
            return
        data = memoryview(b"".join(self.lines))
        self.lines.clear()
        self.size = 0
        while data:
            data = data[os.write(1, data) :]


def respond(out: Out, rid: object, result: bytes) -> None:
    out.add(b'{"jsonrpc":"2.0","id":' + encode(rid) + b',"result":' + result + b"}\n")


def update_prefix(sid: str) -> bytes:
    return (
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":'
        + encode(sid)
        + b',"update":'
    )


def _numbered_lines(out: Out, head: bytes, tail: bytes, n: int) -> None:
    """``head + str(i) + tail`` for i in range(n), written 512 lines per write."""
    step = 512
    for start in range(0, n, step):
        out.lines.append(
            b"".join([head + b"%d" % i + tail for i in range(start, min(n, start + step))])
        )
        out.flush()


def notify(out: Out, pre: bytes, n: int, v1: bool = False) -> None:
    if v1:
        notify_v1(out, pre, n)
        return
    head = pre + (
        b'{"sessionUpdate":"tool_call_content_chunk","toolCallId":"bench",'
        b'"content":{"type":"content","content":{"type":"text","text":"chunk '
    )
    tail = b'"}}}}}\n'
    out.add(pre + b'{"sessionUpdate":"tool_call_update","toolCallId":"bench","title":"bench"}}}\n')
    _numbered_lines(out, head, tail, n)
    out.add(
        pre + b'{"sessionUpdate":"tool_call_update","toolCallId":"bench","status":"completed"}}}\n'
    )


def notify_v1(out: Out, pre: bytes, n: int) -> None:
    head = pre + (
        b'{"sessionUpdate":"tool_call_update","toolCallId":"bench",'
        b'"content":[{"type":"content","content":{"type":"text","text":"chunk '
    )
    tail = b'"}}]}}}\n'
    out.add(pre + b'{"sessionUpdate":"tool_call","toolCallId":"bench","title":"bench"}}}\n')
    _numbered_lines(out, head, tail, n)
    out.add(
        pre + b'{"sessionUpdate":"tool_call_update","toolCallId":"bench","status":"completed"}}}\n'
    )


def reply(out: Out, pre: bytes, mid: bytes, n: int) -> None:
    """``reply N``: N ``agent_message_chunk``s of ``chunk <i>`` (v1: no ``messageId``)."""
    head = pre + b'{"sessionUpdate":"agent_message_chunk",'
    if mid:
        head += b'"messageId":' + mid + b","
    head += b'"content":{"type":"text","text":"chunk '
    tail = b'"}}}}\n'
    _numbered_lines(out, head, tail, n)


def terminal(out: Out, pre: bytes, total: int, size: int, v1: bool = False) -> None:
    if v1:
        terminal_v1(out, pre, total, size)
        return
    out.add(pre + b'{"sessionUpdate":"terminal_update","terminalId":"t1","command":"bench"}}}\n')
    head = pre + b'{"sessionUpdate":"terminal_output_chunk","terminalId":"t1","data":"'
    tail = b'"}}}\n'
    rep = memoryview(PATTERN * (size // 256 + 2))  # slices are views, as in the other agents
    b64 = binascii.b2a_base64
    off = 0
    while off < total:
        n = min(size, total - off)
        start = off & 255
        out.add(head + b64(rep[start : start + n], newline=False) + tail)
        off += n
    out.add(
        pre
        + b'{"sessionUpdate":"terminal_update","terminalId":"t1","exitStatus":{"exitCode":0}}}}\n'
    )


def terminal_v1(out: Out, pre: bytes, total: int, size: int) -> None:
    out.add(
        pre
        + b'{"sessionUpdate":"tool_call","toolCallId":"bench","title":"bench","kind":"execute"}}}\n'
    )
    head = pre + (
        b'{"sessionUpdate":"tool_call_update","toolCallId":"bench",'
        b'"content":[{"type":"content","content":{"type":"text","text":"'
    )
    tail = b'"}}]}}}\n'
    rep = memoryview(PATTERN * (size // 256 + 2))
    b64 = binascii.b2a_base64
    off = 0
    while off < total:
        n = min(size, total - off)
        start = off & 255
        out.add(head + b64(rep[start : start + n], newline=False) + tail)
        off += n
    out.add(
        pre + b'{"sessionUpdate":"tool_call_update","toolCallId":"bench","status":"completed"}}}\n'
    )


def permission_request_tail(sid: str, v1: bool = False) -> bytes:
    """A bench permission request after its id (the line is ``{"jsonrpc":"2.0","id":N`` + this)."""
    subject = b'"toolCall":{"toolCallId":"bench","title":"bench"},' if v1 else b'"title":"bench",'
    return (
        b',"method":"session/request_permission","params":{"sessionId":'
        + encode(sid)
        + b","
        + subject
        + b'"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"}]}}\n'
    )


def granted(m: Msg) -> bool:
    """Whether a permission answer selected the ``allow`` option."""
    r = m.result
    return r is not None and r.outcome is not None and r.outcome.optionId == "allow"


def permission(
    out: Out, stdin: BinaryIO, sid: str, n: int, next_id: int, *, v1: bool = False
) -> int:
    readline = stdin.readline
    req = permission_request_tail(sid, v1)
    for _ in range(n):
        rid = next_id
        next_id += 1
        out.add(b'{"jsonrpc":"2.0","id":%d' % rid + req)
        out.flush()
        while True:
            line = readline()
            if not line:
                raise SystemExit(0)
            m = decode(line)
            if m.method is None and m.id == rid:
                break
        if not granted(m):
            raise SystemExit(f"permission {rid} not granted: {line!r}")
    return next_id


IDLE: bytes = b'{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}}}\n'


def start_turn(
    out: Out, rid: object, sid: str, prompt: list[Block], turn: int, *, v1: bool = False
) -> Turn:
    """Accept a prompt: the ``{messageId}`` response, ``user_message`` and ``running``
    (v1: nothing; the answer ends the turn)."""
    pre = update_prefix(sid)
    words = " ".join(b.text or "" for b in prompt).split()
    kind, args = (words[0], [int(w) for w in words[1:]]) if words else ("", [])
    if v1:
        return Turn(pre, kind, args, b"", True)
    mid = b'"m%d"' % turn
    respond(out, rid, b'{"messageId":' + mid + b"}")
    out.add(
        pre
        + b'{"sessionUpdate":"user_message","messageId":'
        + mid
        + b',"content":'
        + encode(prompt)
        + b"}}}\n"
    )
    out.add(pre + b'{"sessionUpdate":"state_update","state":"running"}}}\n')
    return Turn(pre, kind, args, b'"r%d"' % turn, False)


def end_turn(out: Out, rid: object, turn: Turn) -> None:
    """The end of the turn: the idle state update (v1: the prompt's answer)."""
    if turn.v1:
        respond(out, rid, b'{"stopReason":"end_turn"}')
    else:
        out.add(turn.pre + IDLE)


def answer(out: Out, method: str, rid: object, params: Params | None, sessions: int) -> None:
    """Answer ``initialize``, ``session/new`` (as session ``s<sessions>``) or anything else."""
    if method == "initialize":
        version = min(2, params.protocolVersion or 2) if params else 2
        respond(
            out,
            rid,
            b'{"protocolVersion":%d,"capabilities":{"session":{}},'
            b'"info":{"name":"acpio-bench-floor","version":"1"}}' % version,
        )
    elif method == "session/new":
        respond(out, rid, b'{"sessionId":"s%d"}' % sessions)
    else:
        out.add(
            b'{"jsonrpc":"2.0","id":'
            + encode(rid)
            + b',"error":{"code":-32601,"message":"Method not found"}}\n'
        )


def main() -> None:
    stdin = sys.stdin.buffer
    out = Out()
    sessions = 0
    turns = 0
    next_id = 0
    v1 = False
    for line in iter(stdin.readline, b""):
        if not line.strip():
            continue
        m = decode(line)
        method, rid, params = m.method, m.id, m.params
        if method is None or rid is msgspec.UNSET:
            continue  # responses to nothing we sent, or notifications (session/cancel)
        if method == "session/prompt" and params and params.sessionId and params.prompt:
            turns += 1
            turn = start_turn(out, rid, params.sessionId, params.prompt, turns, v1=v1)
            if turn.kind == "notify":
                notify(out, turn.pre, turn.args[0], v1)
            elif turn.kind == "reply":
                reply(out, turn.pre, turn.mid, turn.args[0])
            elif turn.kind == "terminal":
                terminal(out, turn.pre, turn.args[0], turn.args[1], v1)
            elif turn.kind == "permission":
                next_id = permission(out, stdin, params.sessionId, turn.args[0], next_id, v1=v1)
            end_turn(out, rid, turn)
        else:
            if method == "initialize" and params is not None:
                v1 = params.protocolVersion == 1
            sessions += method == "session/new"
            answer(out, method, rid, params, sessions)
        out.flush()


if __name__ == "__main__":
    main()
