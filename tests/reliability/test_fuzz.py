"""Hostile input at a live agent: whatever arrives, it answers clearly and keeps serving.

Each example serves a fresh :class:`ScriptAgent` in-process, opens a session,
sends the generated lines, then checks the properties that matter to an
editor:

* every line the agent writes is a JSON-RPC 2.0 message (checked as read);
* every request with a usable id is answered exactly once, with that id,
  and nothing is ever answered with an id nobody sent; notifications and
  responses are never answered;
* no answer is an internal error (``-32603``, a bug) except a stated limit,
  and nothing is logged with a traceback;
* a valid session, prompt and turn still work afterwards, and the agent
  returns cleanly when its input ends.

Input comes from ``acpio.schema.AGENT_METHODS`` (every agent-bound method,
each field of its params replaced by values of the wrong type, removed, or
nested too deeply), plus arbitrary bytes, arbitrary JSON, truncated
messages, huge numbers, unknown methods, duplicate and missing ids, and
responses to requests never sent. The examples are derandomized, so CI sees
the same inputs every run; any input that ever failed is kept in
``corpus/`` (see its README) and replayed by :func:`test_corpus_replays_cleanly`.
"""

from __future__ import annotations

import base64
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reliability_agents import ScriptAgent
from reliability_kit import (
    INIT_PARAMS,
    WAIT,
    Json,
    collect_logs,
    is_idle,
    responses_in,
    served,
)

from acpio import schema
from acpio._limits import DEFAULT_MAX_NESTING_DEPTH
from acpio.testing import ConformanceChecker

pytestmark = pytest.mark.anyio

CORPUS = Path(__file__).with_name("corpus")
SID = "__SID__"  # replaced by the live session's id
CWD = "/tmp"

#: A valid params object for every method the agent serves.
BASE_PARAMS: dict[str, dict[str, Json]] = {
    "initialize": INIT_PARAMS,
    "auth/login": {"methodId": "password"},
    "auth/logout": {},
    "session/new": {"cwd": CWD, "mcpServers": [], "additionalDirectories": [CWD]},
    "session/set_config_option": {"sessionId": SID, "configId": "mode", "value": "fast"},
    "session/prompt": {
        "sessionId": SID,
        "prompt": [{"type": "text", "text": "chunks 3 8"}, {"type": "text", "text": "!"}],
    },
    "session/cancel": {"sessionId": SID},
    "session/list": {"cwd": CWD, "cursor": "0"},
    "session/delete": {"sessionId": SID},
    "session/resume": {
        "sessionId": SID,
        "cwd": CWD,
        "mcpServers": [
            {"type": "stdio", "name": "m", "command": "/bin/true", "args": [], "env": []}
        ],
        "replayFrom": {"type": "start"},
    },
    "session/close": {"sessionId": SID},
    "tool_call/cancel": {"sessionId": SID, "toolCallId": "call_x"},
    "terminal/cancel": {"sessionId": SID, "terminalId": "term_x"},
}

#: Raw JSON tokens spliced into messages: numbers no decoder should choke on.
HUGE_NUMBERS = [
    b"1e400",
    b"-1e400",
    b"1" + b"0" * 400,
    b"-" + b"9" * 64,
    b"1E-400",
    b"-0",
    b"18446744073709551616",
    b"9223372036854775808",
]
LIMIT = DEFAULT_MAX_NESTING_DEPTH
DEEP = [LIMIT - 10, LIMIT + 1, 1000, 100_000]
MARK = "\u0000splice:"  # a JSON string value replaced by raw bytes after encoding


def deep_value(depth: int, kind: str) -> bytes:
    if kind == "array":
        return b"[" * depth + b"]" * depth
    return b'{"a":' * depth + b"1" + b"}" * depth


# ----------------------------------------------------------------- generation


@dataclass
class Line:
    """One generated line and what it is, for the oracle."""

    data: bytes
    shape: Json = None  # what was generated, before raw tokens were spliced in (for reports)

    def __repr__(self) -> str:
        # Failing examples are printed: keep 100,000-level nestings readable.
        if self.shape is not None:
            return f"Line(shape={self.shape!r})"
        text = repr(self.data)
        return f"Line(data={text[:300]}{'...' if len(text) > 300 else ''})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))  # hypothesis prints failing examples with this


json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.sampled_from(["", "relative/dir", "../up", "C:\\win", "\u0000", "/" * 3, "x" * 300])
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=8,
)
request_ids = st.sampled_from(["r1", "r2", "r3", 1001, 1002, -5, 0, "", "é"])
splices = st.sampled_from(HUGE_NUMBERS).map(lambda raw: MARK + raw.decode()) | st.builds(
    lambda depth, kind: MARK + f"deep:{depth}:{kind}",
    st.sampled_from(DEEP),
    st.sampled_from(["array", "object"]),
)


def paths_of(value: Json, prefix: tuple[object, ...] = ()) -> Iterator[tuple[object, ...]]:
    """Every path into a JSON value (keys and indexes), the value itself included."""
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths_of(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths_of(item, (*prefix, index))


def replaced(value: Json, path: tuple[object, ...], new: Json, *, delete: bool = False) -> Json:
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    head, rest = path[0], path[1:]
    if rest:
        copy[head] = replaced(value[head], rest, new, delete=delete)  # type: ignore[index]
    elif delete:
        del copy[head]  # type: ignore[arg-type]
    else:
        copy[head] = new  # type: ignore[index]
    return copy


def value_at(value: Json, path: tuple[object, ...]) -> Json:
    for step in path:
        value = value[step]
    return value


def encode(shape: Json) -> bytes:
    """Encode, splicing raw tokens for the marked string values."""
    data = msgspec.json.encode(shape)
    while (start := data.find(msgspec.json.encode(MARK)[:-1])) >= 0:
        end = data.index(b'"', start + 1)
        spec = msgspec.json.decode(data[start : end + 1])[len(MARK) :]
        if spec.startswith("deep:"):
            _, depth, kind = spec.split(":")
            raw = deep_value(int(depth), kind)
        else:
            raw = spec.encode()
        data = data[:start] + raw + data[end + 1 :]
    return data + b"\n"


@st.composite
def mutated_requests(draw: st.DrawFn) -> Line:
    """A request or notification of an agent method with one part of its params broken."""
    method = draw(st.sampled_from(sorted(BASE_PARAMS)))
    params: Json = BASE_PARAMS[method]
    path = draw(st.sampled_from(list(paths_of(params))))
    how = draw(st.sampled_from(["wrong", "wrong", "splice", "delete", "extra"]))
    if how == "delete" and path:
        params = replaced(params, path, None, delete=True)
    elif how == "extra":
        objects = [p for p in paths_of(params) if isinstance(value_at(params, p), dict)]
        target = draw(st.sampled_from(objects))
        params = replaced(
            params, (*target, draw(st.sampled_from(["_fuzz", "_meta", "x"]))), draw(json_values)
        )
    elif how == "splice":
        params = replaced(params, path, draw(splices))
    else:
        params = replaced(params, path, draw(json_values))
    shape: dict[str, Json] = {"jsonrpc": "2.0", "method": method}
    if draw(st.booleans()) or method == "session/cancel":
        shape["params"] = params
    if method != "session/cancel" or draw(st.booleans()):
        shape["id"] = draw(request_ids)
    return Line(encode(shape), shape)


@st.composite
def envelopes(draw: st.DrawFn) -> Line:
    """Requests with a broken envelope: odd ids, versions, methods and params."""
    shape: dict[str, Json] = {}
    if draw(st.booleans()):
        shape["jsonrpc"] = draw(st.sampled_from(["2.0", "2.0", "1.0", 2, None]))
    if draw(st.booleans()):
        shape["method"] = draw(
            st.sampled_from(["session/new", "bogus", "_ext", "$/x", "", "session/"]) | json_values
        )
    if draw(st.booleans()):
        shape["id"] = draw(request_ids | json_values | splices)
    if draw(st.booleans()):
        shape["params"] = draw(json_values | splices)
    return Line(encode(shape), shape)


@st.composite
def stray_responses(draw: st.DrawFn) -> Line:
    """Responses to requests the agent never sent (or sent and forgot)."""
    shape: dict[str, Json] = {
        "jsonrpc": "2.0",
        "id": draw(st.integers(min_value=-3, max_value=5) | st.text(max_size=4) | st.none()),
    }
    if draw(st.booleans()):
        shape["result"] = draw(json_values)
    else:
        shape["error"] = draw(
            st.fixed_dictionaries({"code": st.integers(), "message": st.text(max_size=8)})
            | json_values
        )
    return Line(encode(shape), shape)


@st.composite
def cancels(draw: st.DrawFn) -> Line:
    """``$/cancel_request`` for ids in flight, unknown ids and malformed params."""
    params = draw(st.fixed_dictionaries({"requestId": request_ids | json_values}) | json_values)
    shape = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": params}
    return Line(encode(shape), shape)


@st.composite
def truncated(draw: st.DrawFn) -> Line:
    full = draw(mutated_requests()).data.rstrip(b"\n")
    cut = draw(st.integers(min_value=1, max_value=max(1, len(full) - 1)))
    return Line(full[:cut] + b"\n")


def one_line(data: bytes) -> bytes:
    return data.replace(b"\n", b" ") + b"\n"


lines = st.one_of(
    mutated_requests(),
    mutated_requests(),
    envelopes(),
    stray_responses(),
    cancels(),
    truncated(),
    st.binary(min_size=1, max_size=60).map(lambda b: Line(one_line(b))),
    json_values.map(lambda v: Line(msgspec.json.encode(v) + b"\n")),
    st.lists(mutated_requests(), min_size=1, max_size=3).map(
        lambda items: Line(b"[" + b",".join(i.data.rstrip(b"\n") for i in items) + b"]\n")
    ),
)


# ------------------------------------------------------------------- oracle


def id_key(value: Json) -> tuple[str, Json] | None:
    """A hashable key for a usable request id (an integer or a string, never a bool)."""
    if type(value) is int or type(value) is str:
        return (type(value).__name__, value)
    return None


@dataclass
class Expectation:
    must: Counter[tuple[str, Json]] = field(default_factory=Counter)
    may: Counter[tuple[str, Json]] = field(default_factory=Counter)
    lines: int = 0

    def add_object(self, item: Json) -> None:
        if not isinstance(item, dict) or "id" not in item:
            return
        key = id_key(item["id"])
        if key is None:
            return
        if "method" in item:
            self.must[key] += 1  # a request: answered once, with its id, whatever else is wrong
        elif "result" not in item and "error" not in item:
            self.may[key] += 1  # invalid, or a malformed answer to one of the agent's requests

    def add(self, line: Line) -> None:
        self.lines += 1
        try:
            shape = grammar_json(line.data)
        except ValueError:
            return  # not JSON: at most an answer with a null id
        except RecursionError:
            shape = shallow(line.data)
        for item in shape if isinstance(shape, list) else [shape]:
            self.lines += 1
            self.add_object(item)


def grammar_json(data: bytes) -> Json:
    """Decode by the JSON grammar alone (RFC 8259), independent of the agent's decoder.

    Numbers of any size and lone surrogate escapes are valid JSON even where
    a decoder cannot represent them; ``NaN`` and ``Infinity`` are not JSON.

    :raises ValueError: when ``data`` is not UTF-8 JSON.
    """

    def reject(constant: str) -> Json:
        raise ValueError(f"{constant} is not JSON")

    return json.loads(data.decode("utf-8"), parse_constant=reject)


def shallow(data: bytes) -> Json:
    """The top level of JSON too deep to decode: nested values become ``[]``.

    Objects keep their members, arrays (batches) their entries, each entry
    reduced the same way. A plain character loop, independent of the agent's
    own scanner.
    """
    text = data.decode("utf-8", "replace").strip()
    if not text or text[0] not in "[{":
        return None
    pieces: list[str] = []  # the text with every value nested too deep cut out
    cut = 2 if text[0] == "{" else 3  # an array keeps its entries' own members
    depth = 0
    in_string = escaped = False
    start = 1
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth == cut:
                pieces.append(text[start:index] + "[]")
        elif char in "]}":
            depth -= 1
            if depth == cut - 1:
                start = index + 1
            elif depth == 0:
                pieces.append(text[start:index])
                break
    try:
        return json.loads(text[0] + "".join(pieces) + ("}" if text[0] == "{" else "]"))
    except ValueError:
        return None


def check_answers(received: list[Json], expected: Expectation, own_ids: set[str]) -> None:
    answered: Counter[tuple[str, Json]] = Counter()
    nulls = 0
    for message in received:
        for response in responses_in(message):
            error = response.get("error")
            if error is not None:
                # -32603 is a bug in the agent, unless a stated limit was reached.
                assert error["code"] != -32603 or error["message"].startswith("Too many"), response
            if response["id"] is None:
                nulls += 1
                continue
            key = id_key(response["id"])
            assert key is not None, response
            if response["id"] not in own_ids:
                answered[key] += 1
    for key in expected.must.keys() | expected.may.keys() | answered.keys():
        low = expected.must[key]
        high = low + expected.may[key]
        assert low <= answered[key] <= high, (key, answered[key], low, high)
    assert nulls <= expected.lines


# ---------------------------------------------------------------------- runner


async def run_lines(generated: list[Line]) -> None:
    """Serve a fresh agent, send ``generated`` after a session opened, check everything."""
    expected = Expectation()
    with collect_logs() as logs:
        async with served(ScriptAgent()) as state:
            client = state.client
            with anyio.fail_after(WAIT):
                await client.initialize()
                session_id = await client.new_session(CWD)
                start = len(client.received)
                for line in generated:
                    expected.add(line)
                    await client.send(line.data.replace(SID.encode(), session_id.encode()))
                # A valid session and turn still work afterwards.
                probe = await client.new_session(CWD)
                await client.prompt(probe, "chunks 2 4")
                idle = await client.wait_idle(probe)
                assert idle["stopReason"] == "end_turn"
                assert await client.call("_echo", {"n": 1}) == {"n": 1}
        check_answers(state.client.received[start:], expected, state.client.own_ids)
    bugs = [r for r in logs.tracebacks() if "boom" not in str(r.exc_info[1] if r.exc_info else "")]
    assert not bugs, [r.getMessage() for r in bugs]


FUZZ = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@FUZZ
@given(st.lists(lines, min_size=1, max_size=6))
async def test_any_input_is_answered_clearly_and_the_agent_keeps_serving(
    generated: list[Line],
) -> None:
    await run_lines(generated)


@FUZZ
@given(st.lists(mutated_requests(), min_size=1, max_size=4))
async def test_wrong_types_in_every_field_of_every_method(generated: list[Line]) -> None:
    await run_lines(generated)


def test_every_agent_method_is_fuzzed() -> None:
    # A method added to the schema must get a valid base here, so that it is fuzzed too.
    assert set(BASE_PARAMS) == set(schema.AGENT_METHODS)
    for method, spec in schema.AGENT_METHODS.items():
        if method != "session/set_config_option":  # a union with no fields of its own
            schema.decode(msgspec.json.encode(BASE_PARAMS[method]), spec.params)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        (method, path)
        for method in sorted(BASE_PARAMS)
        for path in paths_of(BASE_PARAMS[method])
        if path
    ],
    ids=lambda value: value if isinstance(value, str) else "/".join(map(str, value)),
)
async def test_each_field_with_each_wrong_type(method: str, path: tuple[object, ...]) -> None:
    # Exhaustive over the fields of every agent method: each JSON type in turn, and absent.
    wrong: list[Json] = [None, True, 7, -1.5, "text", [], {}, [1, "a"], {"x": {"y": []}}]
    generated: list[Line] = []
    for index, value in enumerate(wrong):
        shape = {"jsonrpc": "2.0", "id": f"w{index}", "method": method}
        shape["params"] = replaced(BASE_PARAMS[method], path, value)
        generated.append(Line(encode(shape), shape))
    shape = {"jsonrpc": "2.0", "id": "gone", "method": method}
    shape["params"] = replaced(BASE_PARAMS[method], path, None, delete=True)
    generated.append(Line(encode(shape), shape))
    await run_lines(generated)


# ---------------------------------------------------------- interleavings


@dataclass
class Op:
    kind: str
    session: int = 0
    text: str = ""


ops = st.one_of(
    st.builds(
        Op,
        st.just("prompt"),
        st.integers(0, 2),
        st.sampled_from(
            ["chunks 5 20", "terminal 3 100", "permission", "hang", "raise", "nonsense"]
        ),
    ),
    st.builds(Op, st.sampled_from(["cancel", "close", "resume", "delete"]), st.integers(0, 2)),
    st.builds(Op, st.sampled_from(["list", "new", "cancel_last_request"])),
)
answers = st.sampled_from(["allow", "reject", "cancelled", "unknown", "garbage", "error", "none"])


def permission_answer(request: Json, how: str) -> Json:
    options = request["params"]["options"]
    by_kind = {o["kind"]: o["optionId"] for o in options}
    if how == "allow":
        return {"outcome": {"outcome": "selected", "optionId": by_kind["allow_once"]}}
    if how == "reject":
        return {"outcome": {"outcome": "selected", "optionId": by_kind["reject_once"]}}
    if how == "cancelled":
        return {"outcome": {"outcome": "cancelled"}}
    if how == "unknown":
        return {"outcome": {"outcome": "_maybe"}}
    return {"outcomes": 5}


@settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(ops, min_size=1, max_size=10), st.lists(answers, min_size=1, max_size=4))
async def test_random_interleavings_of_valid_messages(
    operations: list[Op], permission_answers: list[str]
) -> None:
    """Valid messages fired without waiting, in any order: the agent stays consistent.

    Permission requests are answered as they arrive (cycling through allow,
    reject, cancelled, unknown, malformed, error and no answer at all). Then
    every request must have been answered once, every accepted prompt must
    have its user message, every turn that ran must have ended with exactly
    one idle, and the testing kit's conformance checker must find nothing
    wrong in the whole transcript.
    """
    agent = ScriptAgent()
    with collect_logs() as logs:
        async with served(agent) as state:
            client = state.client
            with anyio.fail_after(WAIT):
                await client.initialize()
                sessions = [await client.new_session(CWD) for _ in range(3)]
                request_ids: list[Json] = []
                sent_prompts: list[Json] = []
                for op in operations:
                    sid = sessions[op.session]
                    if op.kind == "prompt":
                        params = {"sessionId": sid, "prompt": [{"type": "text", "text": op.text}]}
                        request_ids.append(await client.send_request("session/prompt", params))
                        sent_prompts.append(request_ids[-1])
                    elif op.kind == "cancel":
                        await client.notify("session/cancel", {"sessionId": sid})
                    elif op.kind in ("close", "delete"):
                        method = f"session/{op.kind}"
                        request_ids.append(await client.send_request(method, {"sessionId": sid}))
                    elif op.kind == "resume":
                        params = {"sessionId": sid, "cwd": CWD, "mcpServers": []}
                        request_ids.append(await client.send_request("session/resume", params))
                    elif op.kind == "list":
                        request_ids.append(await client.send_request("session/list", {}))
                    elif op.kind == "new":
                        params = {"cwd": CWD, "mcpServers": []}
                        request_ids.append(await client.send_request("session/new", params))
                    elif request_ids:
                        await client.notify("$/cancel_request", {"requestId": request_ids[-1]})
                probe = await client.send_request("_echo", {"probe": True})
                answered = 0
                while True:
                    message = await client.receive()
                    if message.get("method") == "session/request_permission":
                        how = permission_answers[answered % len(permission_answers)]
                        answered += 1
                        if how == "error":
                            await client.send(
                                {
                                    "jsonrpc": "2.0",
                                    "id": message["id"],
                                    "error": {"code": -32603, "message": "client failed"},
                                }
                            )
                        elif how != "none":
                            await client.respond(message["id"], permission_answer(message, how))
                    if message.get("id") == probe and "method" not in message:
                        break
        transcript = list(state.client.transcript)
    # Every request was answered exactly once (shutdown answers what still ran).
    answers_by_id = Counter(
        r["id"] for m in state.client.received for r in responses_in(m) if r["id"] is not None
    )
    for request_id in request_ids:
        assert answers_by_id[request_id] == 1, request_id
    # The testing kit's checker validates every agent line and the per-session rules.
    checker = ConformanceChecker(strict=False)
    for direction, line in transcript:
        checker.observe(direction, line)
    report = checker.check_report()
    assert not report.violations, report.summary()
    # At most one idle per accepted prompt, in every session.
    accepted = Counter(
        m["params"]["sessionId"]
        for m in state.client.received
        if m.get("method") == "session/update"
        and m["params"]["update"].get("sessionUpdate") == "user_message"
    )
    for sid in sessions:
        idles = [m for m in state.client.received if is_idle(m, sid)]
        assert len(idles) <= accepted[sid], (sid, len(idles), accepted[sid])
    bugs = [r for r in logs.tracebacks() if "boom" not in str(r.exc_info[1] if r.exc_info else "")]
    assert not bugs, [r.getMessage() for r in bugs]


# ---------------------------------------------------------------------- corpus


def corpus_files() -> list[Path]:
    return sorted(CORPUS.glob("*.txt"))


def expand(data: bytes) -> bytes:
    """Expand ``<<repeat N TEXT>>`` (TEXT without spaces or ``>``) in a corpus file."""
    out = bytearray()
    position = 0
    while (start := data.find(b"<<repeat ", position)) >= 0:
        end = data.index(b">>", start)
        _, count, text = data[start + 2 : end].split(b" ", 2)
        out += data[position:start] + text * int(count)
        position = end + 2
    out += data[position:]
    return bytes(out)


def decode_corpus(path: Path) -> list[Line]:
    """A corpus file: one message per line; ``b64:`` lines hold bytes that are not text."""
    generated: list[Line] = []
    for raw in path.read_bytes().splitlines():
        if not raw.strip() or raw.startswith(b"#"):
            continue
        data = base64.b64decode(raw[4:]) if raw.startswith(b"b64:") else expand(raw)
        generated.append(Line(data + b"\n"))
    return generated


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.stem)
async def test_corpus_replays_cleanly(path: Path) -> None:
    await run_lines(decode_corpus(path))


def test_the_corpus_is_not_empty() -> None:
    assert corpus_files()
