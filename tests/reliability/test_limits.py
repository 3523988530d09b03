"""Limits and session rules: each limit is reached with a clear error, never memory growth.

Every limit is configured small here (``AgentLimits``, ``SessionLimits``) and
reached on purpose: the request beyond it gets a clear error naming the
limit, nothing grows, and the connection keeps serving. The documented
defaults are pinned by :func:`test_documented_default_limits`.

The session rules: an unknown ``sessionId`` is ``-32002``, a closed session
refuses prompts, and every path is absolute: the agent never resolves one
against its own working directory.
"""

from __future__ import annotations

import base64
import copy
import tracemalloc
from pathlib import Path

import anyio
import pytest
from reliability_agents import ScriptAgent
from reliability_kit import (
    WAIT,
    Json,
    WireClient,
    agent_command,
    allow_answer,
    example_command,
    served,
    spawned,
)

import acpio
from acpio._limits import DEFAULT_MAX_NESTING_DEPTH

pytestmark = pytest.mark.anyio

KIB = 1024
MIB = 1024 * 1024


def error_of(message: Json) -> tuple[Json, int, str]:
    assert "error" in message, message
    return message["id"], message["error"]["code"], message["error"]["message"]


async def expect_error(client: Json, method: str, params: Json) -> tuple[int, str]:
    request_id = await client.send_request(method, params)
    answer_id, code, text = error_of(await client.response(request_id))
    assert answer_id == request_id
    return code, text


def test_documented_default_limits() -> None:
    # These numbers are promised in docs/guarantees.md.
    limits = acpio.AgentLimits()
    assert limits.max_message_size == 32 * MIB
    assert limits.max_concurrent_requests == 1024
    assert limits.max_sessions == 1000
    assert limits.write_buffer_size == 1 * MIB
    assert limits.session.max_queued_prompts == 16
    assert limits.session.max_pending_permissions == 64
    assert limits.session.cancel_grace == 2.0
    assert limits.session.client_request_timeout == 30.0
    assert limits.session.max_mcp_servers == 100
    assert limits.session.max_additional_directories == 100
    assert limits.session.max_mcp_server_items == 1000
    assert DEFAULT_MAX_NESTING_DEPTH == 256


# ---------------------------------------------------------------- message size


async def test_message_size_limit_is_configurable_and_the_connection_recovers() -> None:
    limits = acpio.AgentLimits(max_message_size=64 * KIB)
    async with served(ScriptAgent(), limits=limits) as state:
        client = state.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            session_id = await client.new_session("/tmp")
            big = {"sessionId": session_id, "prompt": [{"type": "text", "text": "x" * 80 * KIB}]}
            request_id = await client.send_request("session/prompt", big)
            # The id is read from the start of what was skipped.
            answer_id, code, text = error_of(await client.receive())
            assert (answer_id, code) == (request_id, -32600)
            assert str(64 * KIB) in text
            await client.prompt(session_id, "chunks 2 10")
            assert (await client.wait_idle(session_id))["stopReason"] == "end_turn"


async def test_an_endless_line_keeps_memory_bounded() -> None:
    # 32 MiB without a newline against a 1 MiB limit: memory stays near the limit.
    limits = acpio.AgentLimits(max_message_size=1 * MIB)
    async with served(ScriptAgent(), limits=limits) as state:
        client = state.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            tracemalloc.start()
            try:
                chunk = b"x" * (256 * KIB)
                for _ in range(128):
                    await client.send(chunk)
                await client.send(b"\n")
                answer_id, code, _ = error_of(await client.receive())
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
            assert (answer_id, code) == (None, -32600)
            assert peak < 8 * MIB, peak
            assert await client.call("_echo", [1]) == [1]


# ------------------------------------------- a v1 client's oversized answer (issue 24)

V1_INIT: Json = {
    "protocolVersion": 1,
    "clientCapabilities": {"terminal": True},
    "clientInfo": {"name": "scripted-v1-client", "version": "1"},
}


async def v1_prompt_serving_terminals(
    client: WireClient, session_id: str, text: str, output_lines: list[bytes]
) -> tuple[Json, list[str]]:
    """Send a v1 prompt and act as the client's terminal until the prompt is answered.

    ``terminal/output`` is answered with the next of ``output_lines`` (``%d``
    takes the request id), then with empty output; ``terminal/wait_for_exit``
    is answered once the agent kills the command. Returns the prompt's answer
    and the methods the agent asked for.
    """
    prompt_id = await client.send_request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
    )
    methods: list[str] = []
    waiting: list[Json] = []  # terminal/wait_for_exit requests, answered at the kill
    while True:
        message = await client.receive()
        if message.get("id") == prompt_id and "method" not in message:
            return message, methods
        method = message.get("method")
        if not isinstance(method, str) or "id" not in message:
            continue
        methods.append(method)
        request_id = message["id"]
        if method == "terminal/create":
            await client.respond(request_id, {"terminalId": "term-1"})
        elif method == "terminal/output":
            if output_lines:
                await client.send(output_lines.pop(0) % request_id)
            else:
                await client.respond(request_id, {"output": "", "truncated": False})
        elif method == "terminal/wait_for_exit":
            waiting.append(request_id)
        elif method == "terminal/kill":
            await client.respond(request_id, {})
            for waiter in waiting:
                await client.respond(waiter, {"exitCode": None, "signal": "SIGKILL"})
            waiting.clear()
        elif method == "terminal/release":
            await client.respond(request_id, {})


async def test_a_50_mib_terminal_output_answer_fails_the_poll_and_later_prompts_are_answered(
    anyio_backend: str, tmp_path: Path
) -> None:
    # A v1 client answers terminal/output with 50 MiB, past the 32 MiB message limit.
    big = b'{"jsonrpc":"2.0","id":%%d,"result":{"output":"%s","truncated":false}}\n' % (
        b"x" * (50 * MIB)
    )
    async with spawned(agent_command("script", anyio_backend)) as agent:
        client = agent.client
        with anyio.fail_after(4 * WAIT):
            await client.call("initialize", V1_INIT)
            new = await client.call("session/new", {"cwd": str(tmp_path), "mcpServers": []})
            session_id = new["sessionId"]
            answer, methods = await v1_prompt_serving_terminals(
                client, session_id, "tryrun sleep 30", [big]
            )
            # The command ended (killed, released) and the turn went on to its end.
            assert answer["result"] == {"stopReason": "end_turn"}, answer
            assert methods[0] == "terminal/create" and methods[-1] == "terminal/release"
            assert "terminal/kill" in methods
            texts = [
                u["content"]["text"]
                for u in client.updates(session_id)
                if u.get("sessionUpdate") == "agent_message_chunk"
            ]
            failure = texts[-1]
            assert failure.startswith("the command failed:")
            assert "terminal/output" in failure
            assert f"larger than the limit of {32 * MIB} bytes" in failure
            # Later prompts are answered.
            for _ in range(2):
                answer, _ = await v1_prompt_serving_terminals(client, session_id, "chunks 2 10", [])
                assert answer["result"] == {"stopReason": "end_turn"}
            # Nothing was answered to the oversized response itself.
            assert not [m for m in client.received if "error" in m and m.get("id") is None]


# ----------------------------------------------------------- session setup lists (issue 24)


class McpScriptAgent(ScriptAgent):
    """The script agent, accepting stdio MCP servers."""

    mcp_transports = ("stdio",)


def stdio_server(index: int, **extra: Json) -> Json:
    return {"type": "stdio", "name": f"s{index}", "command": "/bin/true", **extra}


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize(
    ("field", "params", "count", "setting"),
    [
        ("mcpServers", {"mcpServers": [stdio_server(i) for i in range(10_000)]}, 10_000, 100),
        (
            "additionalDirectories",
            {"additionalDirectories": [f"/tmp/d{i}" for i in range(101)]},
            101,
            100,
        ),
        (
            "mcpServers[1].args",
            {"mcpServers": [stdio_server(0), stdio_server(1, args=["-v"] * 1001)]},
            1001,
            1000,
        ),
        (
            "mcpServers[0].env",
            {"mcpServers": [stdio_server(0, env=[{"name": "A", "value": "1"}] * 5000)]},
            5000,
            1000,
        ),
    ],
)
async def test_session_setup_lists_beyond_the_limits_are_invalid_params(
    version: int, field: str, params: Json, count: int, setting: int
) -> None:
    params = copy.deepcopy(params)  # shared by the parametrized cases
    async with served(McpScriptAgent()) as state:
        client = state.client
        with anyio.fail_after(WAIT):
            if version == 1:
                await client.call("initialize", V1_INIT)
            else:
                await client.initialize()
            if version == 1 and "mcpServers" in params:
                for server in params["mcpServers"]:
                    server.pop("type")  # v1 stdio servers have no type, and env is required
                    server.setdefault("env", [])
            for method in ("session/new", "session/load" if version == 1 else "session/resume"):
                request: Json = {"cwd": "/tmp", "mcpServers": [], **params}
                if method != "session/new":
                    request["sessionId"] = "sess_none"
                code, text = await expect_error(client, method, request)
                assert code == -32602, text
                assert f"`{field}` has {count} entries; the limit is {setting}" in text
            # Within the limits the session is made, and serves prompts at once.
            session = await client.call("session/new", {"cwd": "/tmp", "mcpServers": []})
            assert session["sessionId"]


async def test_session_setup_limits_are_configurable() -> None:
    limits = acpio.AgentLimits(session=acpio.SessionLimits(max_mcp_servers=2))
    async with served(McpScriptAgent(), limits=limits) as state:
        client = state.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            servers = [stdio_server(i) for i in range(3)]
            code, text = await expect_error(
                client, "session/new", {"cwd": "/tmp", "mcpServers": servers}
            )
            assert code == -32602 and "the limit is 2 (SessionLimits.max_mcp_servers" in text
            two = await client.call("session/new", {"cwd": "/tmp", "mcpServers": servers[:2]})
            await client.prompt(two["sessionId"], "chunks 1 5")
            assert (await client.wait_idle(two["sessionId"]))["stopReason"] == "end_turn"


# ---------------------------------------------------------------- nesting depth


@pytest.mark.parametrize("kind", ["array", "object"])
@pytest.mark.parametrize("depth", [DEFAULT_MAX_NESTING_DEPTH + 1, 1000, 100_000])
async def test_nesting_deeper_than_the_limit_is_refused_with_the_request_id(
    kind: str, depth: int
) -> None:
    # msgspec recurses once per level: at 100,000 levels it raises RecursionError (and
    # crashes the process where the recursion limit was raised). The connection refuses
    # such messages before decoding and still answers the request, with its id.
    opening, closing = (b"[", b"]") if kind == "array" else (b'{"a":', b"}")
    nested = opening * depth + (b"" if kind == "array" else b"1") + closing * depth
    async with served(ScriptAgent()) as state:
        client = state.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            await client.send(
                b'{"jsonrpc":"2.0","id":"deep","method":"session/new","params":{"cwd":"/tmp",'
                b'"_meta":{"x":' + nested + b"}}}\n"
            )
            answer_id, code, text = error_of(await client.response("deep"))
            assert (answer_id, code) == ("deep", -32700)
            assert f"limit of {DEFAULT_MAX_NESTING_DEPTH} levels" in text
            # The id may also come after the nested part.
            await client.send(
                b'{"jsonrpc":"2.0","method":"_echo","params":' + nested + b',"id":"late"}\n'
            )
            assert error_of(await client.response("late"))[:2] == ("late", -32700)
            # A notification is never answered; the connection keeps serving.
            await client.send(
                b'{"jsonrpc":"2.0","method":"session/cancel","params":' + nested + b"}\n"
            )
            assert await client.call("_echo", {"after": True}) == {"after": True}


async def test_nesting_at_the_limit_is_accepted() -> None:
    # The message is level 1, params level 2, _meta level 3: 253 more reach the limit.
    nested = b"[" * (DEFAULT_MAX_NESTING_DEPTH - 3) + b"]" * (DEFAULT_MAX_NESTING_DEPTH - 3)
    async with served(ScriptAgent()) as state:
        client = state.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            await client.send(
                b'{"jsonrpc":"2.0","id":"ok","method":"session/new","params":{"cwd":"/tmp",'
                b'"_meta":{"x":' + nested + b"}}}\n"
            )
            assert "sessionId" in (await client.response("ok"))["result"]


async def test_a_deep_answer_to_a_permission_request_is_not_approval() -> None:
    async with served(ScriptAgent()) as state:
        client = state.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            session_id = await client.new_session("/tmp")
            await client.prompt(session_id, "permission")
            request = await client.wait_permission_request()
            deep = b"[" * 100_000 + b"]" * 100_000
            await client.send(
                b'{"jsonrpc":"2.0","id":%d,"result":{"outcome":%b}}\n' % (request["id"], deep)
            )
            assert (await client.wait_idle(session_id))["stopReason"] == "end_turn"
    texts = [
        u["content"][0]["text"]
        for u in state.client.updates(session_id)
        if u.get("sessionUpdate") == "agent_message"
    ]
    assert texts == ["outcome unknown allowed=False"]


async def test_deep_input_cannot_crash_an_agent_with_a_raised_recursion_limit(
    anyio_backend: str,
) -> None:
    # With sys.setrecursionlimit(10**6) msgspec would overflow the C stack (a segfault)
    # on 1,000,000 nested arrays: the depth check must refuse them before decoding.
    command = agent_command("script", anyio_backend, "--recursion-limit", "1000000")
    async with spawned(command) as agent:
        client = agent.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            deep = b"[" * 1_000_000 + b"]" * 1_000_000
            await client.send(
                b'{"jsonrpc":"2.0","id":"d","method":"_echo","params":' + deep + b"}\n"
            )
            assert error_of(await client.response("d"))[:2] == ("d", -32700)
            assert await client.call("_echo", [2]) == [2]
            await client.close_input()
            assert await agent.process.wait() == 0


# ------------------------------------------------------ concurrency and counts


async def test_concurrent_requests_beyond_the_limit_are_refused() -> None:
    limits = acpio.AgentLimits(max_concurrent_requests=8)
    async with served(ScriptAgent(), limits=limits) as state:
        client = state.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            hanging = [await client.send_request("_hang", {}) for _ in range(8)]
            code, text = await expect_error(client, "_echo", {})
            assert code == -32603
            assert "Too many concurrent requests (limit 8)" in text
            # Cancelling one makes room again.
            await client.notify("$/cancel_request", {"requestId": hanging[0]})
            assert error_of(await client.response(hanging[0]))[1] == -32800
            assert await client.call("_echo", {"room": 1}) == {"room": 1}
    # Shutdown answered the others (cancelled): nothing is left unanswered.
    for request_id in hanging[1:]:
        assert error_of(await state.client.response(request_id))[1] == -32800


async def test_sessions_beyond_the_limit_are_refused_until_one_closes() -> None:
    limits = acpio.AgentLimits(max_sessions=3)
    async with served(ScriptAgent(), limits=limits) as state:
        client = state.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            sessions = [await client.new_session("/tmp") for _ in range(3)]
            code, text = await expect_error(client, "session/new", {"cwd": "/tmp"})
            assert code == -32603
            assert "Too many active sessions (limit 3)" in text
            await client.call("session/close", {"sessionId": sessions[0]})
            fourth = await client.new_session("/tmp")
            await client.prompt(fourth, "chunks 1 5")
            assert (await client.wait_idle(fourth))["stopReason"] == "end_turn"


async def test_queued_prompts_beyond_the_limit_are_refused() -> None:
    limits = acpio.AgentLimits(session=acpio.SessionLimits(max_queued_prompts=2))
    async with served(ScriptAgent(), limits=limits) as state:
        client = state.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            session_id = await client.new_session("/tmp")
            await client.prompt(session_id, "hang")
            # Two may wait behind the running turn.
            await client.prompt(session_id, "chunks 1 1")
            await client.prompt(session_id, "chunks 1 1")
            code, text = await expect_error(
                client,
                "session/prompt",
                {"sessionId": session_id, "prompt": [{"type": "text", "text": "one more"}]},
            )
            assert code == -32603
            assert "limit 2" in text
            # session/cancel ends the turn and discards what was queued: room again.
            await client.notify("session/cancel", {"sessionId": session_id})
            assert (await client.wait_idle(session_id))["stopReason"] == "cancelled"
            await client.prompt(session_id, "chunks 1 1")
            assert (await client.wait_idle(session_id))["stopReason"] == "end_turn"


async def test_pending_permission_requests_beyond_the_limit_are_refused() -> None:
    limits = acpio.AgentLimits(session=acpio.SessionLimits(max_pending_permissions=4))
    async with served(ScriptAgent(), limits=limits) as state:
        client = state.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            session_id = await client.new_session("/tmp")
            await client.prompt(session_id, "permissions 6")
            requests = [await client.wait_permission_request() for _ in range(4)]
            for request in requests:
                await client.respond(request["id"], allow_answer(request))
            idle = await client.wait_idle(session_id)
            assert idle["stopReason"] == "end_turn"
    asked = [m for m in state.client.received if m.get("method") == "session/request_permission"]
    assert len(asked) == 4
    texts = [
        u["content"][0]["text"]
        for u in state.client.updates(session_id)
        if u.get("sessionUpdate") == "agent_message"
    ]
    assert texts[0].startswith("refused 2:")
    assert "too many pending permission requests" in texts[0]
    assert "limit 4" in texts[0]


# ------------------------------------------------------------------- sessions

UNKNOWN = "sess_does_not_exist"


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("session/prompt", {"sessionId": UNKNOWN, "prompt": [{"type": "text", "text": "x"}]}),
        ("session/resume", {"sessionId": UNKNOWN, "cwd": "/tmp"}),
        ("tool_call/cancel", {"sessionId": UNKNOWN, "toolCallId": "call_1"}),
        ("terminal/cancel", {"sessionId": UNKNOWN, "terminalId": "term_1"}),
    ],
)
async def test_unknown_session_is_resource_not_found(method: str, params: Json) -> None:
    async with served(ScriptAgent()) as state:
        client = state.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            code, text = await expect_error(client, method, params)
            assert code == -32002
            assert UNKNOWN in text


async def test_closing_an_unknown_session_succeeds() -> None:
    # The schema: closing a session that does not exist or is not active SHOULD succeed.
    async with served(ScriptAgent()) as state:
        with anyio.fail_after(WAIT):
            await state.client.initialize()
            assert await state.client.call("session/close", {"sessionId": UNKNOWN}) == {}


async def test_deleting_an_unknown_session_succeeds_silently() -> None:
    # The session-delete page: deleting an already-deleted session, or one that
    # never existed, SHOULD succeed silently.
    async with served(ScriptAgent()) as state:
        with anyio.fail_after(WAIT):
            await state.client.initialize()
            assert await state.client.call("session/delete", {"sessionId": UNKNOWN}) == {}
            assert await state.client.call("session/delete", {"sessionId": UNKNOWN}) == {}


@pytest.mark.parametrize("how", ["close", "delete"])
async def test_a_closed_or_deleted_session_refuses_prompts(how: str) -> None:
    async with served(ScriptAgent()) as state:
        client = state.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            session_id = await client.new_session("/tmp")
            await client.call(f"session/{how}", {"sessionId": session_id})
            code, _ = await expect_error(
                client,
                "session/prompt",
                {"sessionId": session_id, "prompt": [{"type": "text", "text": "chunks 1 1"}]},
            )
            assert code == -32002
            assert not [u for u in client.updates(session_id) if u.get("state") == "running"]


async def test_resume_racing_a_close_leaves_a_usable_session() -> None:
    # Close and resume sent back to back while a turn runs: both succeed, so the
    # session must be active afterwards.
    async with served(ScriptAgent()) as state:
        client = state.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            session_id = await client.new_session("/tmp")
            await client.prompt(session_id, "hang")
            close = await client.send_request("session/close", {"sessionId": session_id})
            resume = await client.send_request(
                "session/resume", {"sessionId": session_id, "cwd": "/tmp"}
            )
            assert (await client.response(close))["result"] == {}
            assert (await client.response(resume))["result"] == {}
            assert (await client.wait_idle(session_id))["stopReason"] == "cancelled"
            await client.prompt(session_id, "chunks 1 3")
            assert (await client.wait_idle(session_id))["stopReason"] == "end_turn"


async def test_a_second_close_answers_only_after_the_work_ended() -> None:
    # The schema: when closing cancels foreground work, its idle goes out before the
    # close is answered. That holds for every close of the session, not just the first.
    async with served(ScriptAgent()) as state:
        client = state.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            session_id = await client.new_session("/tmp")
            await client.prompt(session_id, "stubborn 5")  # ignores cancellation for 0.5 s
            await client.receive_until(
                lambda m: (
                    m.get("method") == "session/update"
                    and m["params"]["update"].get("state") == "running"
                )
            )
            first = await client.send_request("session/close", {"sessionId": session_id})
            second = await client.send_request("session/close", {"sessionId": session_id})
            await client.response(first)
            await client.response(second)
    received = state.client.received
    idle_at = next(
        i for i, m in enumerate(received) if m.get("params", {}).get("update", {}).get("stopReason")
    )
    for request_id in (first, second):
        answered_at = next(
            i for i, m in enumerate(received) if m.get("id") == request_id and "method" not in m
        )
        assert idle_at < answered_at, request_id


# ----------------------------------------------------------------------- paths


@pytest.mark.parametrize(
    ("method", "params", "field"),
    [
        ("session/new", {"cwd": "relative/dir"}, "cwd"),
        ("session/new", {"cwd": ""}, "cwd"),
        ("session/new", {"cwd": "/tmp\u0000/x"}, "cwd"),
        ("session/new", {"cwd": "/tmp", "additionalDirectories": ["lib"]}, "additionalDirectories"),
        (
            "session/new",
            {
                "cwd": "/tmp",
                "mcpServers": [{"type": "stdio", "name": "m", "command": "bin/server"}],
            },
            "command",
        ),
        ("session/list", {"cwd": "./here"}, "cwd"),
        ("session/resume", {"sessionId": "__SID__", "cwd": "tmp"}, "cwd"),
    ],
)
async def test_relative_paths_are_invalid_params(method: str, params: Json, field: str) -> None:
    async with served(ScriptAgent()) as state:
        client = state.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            session_id = await client.new_session("/tmp")
            if params.get("sessionId") == "__SID__":
                params = {**params, "sessionId": session_id}
            code, text = await expect_error(client, method, params)
            assert code == -32602
            assert field in text


async def test_resume_with_another_cwd_is_refused() -> None:
    async with served(ScriptAgent()) as state:
        client = state.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            session_id = await client.new_session("/tmp")
            code, _ = await expect_error(
                client, "session/resume", {"sessionId": session_id, "cwd": "/"}
            )
            assert code == -32602


def _terminal_output(updates: list[Json]) -> bytes:
    return b"".join(
        base64.b64decode(u["data"])
        for u in updates
        if u.get("sessionUpdate") == "terminal_output_chunk"
    )


async def test_commands_run_in_the_session_cwd_never_the_agents_own(tmp_path: Path) -> None:
    agent_dir = tmp_path / "agent-process-cwd"
    session_dir = tmp_path / "session-cwd"
    agent_dir.mkdir()
    session_dir.mkdir()
    async with spawned(example_command("shell_agent.py"), cwd=agent_dir) as agent:
        client = agent.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            session_id = await client.new_session(session_dir)
            await client.prompt(session_id, "run pwd; touch made-here")
            request = await client.wait_permission_request()
            assert request["params"]["subject"]["cwd"] == str(session_dir)
            await client.respond(request["id"], allow_answer(request))
            assert (await client.wait_idle(session_id))["stopReason"] == "end_turn"
            await client.close_input()
            assert await agent.process.wait() == 0
    assert _terminal_output(client.updates(session_id)) == f"{session_dir}\n".encode()
    assert (session_dir / "made-here").exists()
    assert not (agent_dir / "made-here").exists()


async def test_a_relative_path_in_a_prompt_is_the_sessions_not_the_agent_process(
    tmp_path: Path,
) -> None:
    # Issue 31: a relative path is resolved against the session's cwd (models write
    # them), never against the directory the agent process happens to run in.
    agent_dir = tmp_path / "agent-process-cwd"
    session_dir = tmp_path / "session-cwd"
    agent_dir.mkdir()
    session_dir.mkdir()
    async with spawned(example_command("edit_agent.py"), cwd=agent_dir) as agent:
        client = agent.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            session_id = await client.new_session(session_dir)
            await client.prompt(session_id, "write notes.txt\nhello\n")
            request = await client.wait_permission_request()
            await client.respond(request["id"], allow_answer(request))
            assert (await client.wait_idle(session_id))["stopReason"] == "end_turn"
            await client.close_input()
            assert await agent.process.wait() == 0
    assert request["params"]["title"] == f"Create {session_dir / 'notes.txt'}?"
    assert not (agent_dir / "notes.txt").exists()
    assert (session_dir / "notes.txt").read_text() == "hello\n"
