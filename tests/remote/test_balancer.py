"""A replica killed mid-reply behind a real load balancer: HAProxy in front of two
``acpio serve`` replicas sharing one real PostgreSQL.

HAProxy runs the configuration ``docs/remote.md`` shows (cookie affinity on
``acp_affinity``, ``option redispatch``), only its addresses changed
(``haproxy_support.py``). The replicas serve ``long_reply_agent.py``. The client is the
official TypeScript SDK's (``tests/interop/balancer_client.mjs``: its http-client or
ws-client, one cookie store across connections, as a real client keeps one): through
the balancer it runs a first turn, then a long streamed reply that never ends on its
own. The replica serving it is killed (SIGKILL) in the middle of that reply; the client
connects again to the same address with the affinity cookie of the dead replica,
HAProxy sends it to the other one, and the client reopens the session there
(``session/load`` on v1, ``session/resume`` from the start on v2) and prompts on.

What "nothing lost, nothing repeated" can mean across a SIGKILL: a replica commits a
session's updates to PostgreSQL at every turn's end and, while a reply streams, in
flushes (``acpio_flush_interval``, and every 20 ms while text streams); what it sent
after its last commit dies with it. So the tests assert, of the replay the other
replica sends:

- every committed update comes back exactly once and in order: both prompts, the whole
  first turn, and the cut reply as far as it was committed (each chunk once, numbered
  from 0 without a gap);
- nothing the client saw live is contradicted: the cut reply it saw and the replayed
  one are prefixes of the same stream (the client may have seen chunks the dying
  replica never committed, and the replay may hold chunks that never reached the
  client live);
- the old connection is dead for the client: its next request fails;
- when the kill comes after the store committed everything the client saw (the test
  waits for the row in the database, then kills), the replay holds exactly what the
  client saw: nothing lost;
- the conversation goes on: a new prompt is answered by the other replica, with the
  durable agent state the dead one saved, and brings no replayed chunk again.

The client reattaches the way every client can today (``reattach`` in the client): a
stream that resumes from a cursor (``Last-Event-ID``, ``stream/resume``) is a step to
try there first; what the client holds in the end must meet the same assertions.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from .haproxy_support import Balancer, doc_config, haproxy, placed  # noqa: F401 - the fixture
from .long_reply_agent import part
from .server import REPO, serving

pytestmark = pytest.mark.anyio

AGENT = f"{Path(__file__).resolve().parent / 'long_reply_agent.py'}:LongReplyAgent"
CLIENT = REPO / "tests" / "interop" / "balancer_client.mjs"
TOKEN = "balancer-test-token"
TEXT_KINDS = {"agent_message_chunk", "agent_message"}
USER_KINDS = {"user_message_chunk", "user_message"}
_PART = re.compile(r"part (\d+) of pid (\d+); ")


def _node() -> list[str]:
    node = shutil.which("node")
    if node is None:
        pytest.fail("Node.js (`node`) is not on PATH; the balancer test needs it", pytrace=False)
    sdk = REPO / "tests" / "interop" / "node_modules" / "@agentclientprotocol" / "sdk"
    if not (sdk / "package.json").is_file():
        pytest.fail("run `npm ci --prefix tests/interop` first", pytrace=False)
    # Node 20 has a WebSocket client only behind a flag; later versions have it built in.
    probe = [node, "-e", "process.exit(typeof WebSocket === 'function' ? 0 : 1)"]
    built_in = subprocess.run(probe, capture_output=True, check=False).returncode == 0
    return [node, *([] if built_in else ["--experimental-websocket"]), "--no-warnings"]


def _address(url: str) -> str:
    """``host:port`` of ``http://host:port/acp``."""
    return url.split("//", 1)[1].split("/", 1)[0]


def _committed_text(url: str, session_id: str) -> bytes:
    """What the store committed of the session, together: its snapshot (rows folded
    into one), its rows in order, and its saved agent state, read in one snapshot of
    the database (a flush that folds rows lands wholly before or after it)."""
    with psycopg.connect(url) as conn:
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        rows = conn.execute(
            b"SELECT data FROM acpio_snapshots WHERE session_id = %s", (session_id,)
        ).fetchall()
        rows += conn.execute(
            b"SELECT data FROM acpio_events WHERE session_id = %s ORDER BY seq", (session_id,)
        ).fetchall()
        rows += conn.execute(
            b"SELECT state FROM acpio_agent_states WHERE session_id = %s", (session_id,)
        ).fetchall()
    return b"\n".join(bytes(row[0]) for row in rows if row[0] is not None)


async def _wait_committed(url: str, session_id: str, parts: Sequence[bytes]) -> None:
    """Wait until the database holds every one of ``parts`` for the session (the writer
    thread commits on its own schedule: there is no event to wait on but the rows)."""
    with anyio.fail_after(30):
        while True:
            found = await anyio.to_thread.run_sync(_committed_text, url, session_id)
            if all(p in found for p in parts):
                return
            await anyio.sleep(0.05)


async def _line(stream: BufferedByteReceiveStream, result: Path, balancer: Balancer) -> str:
    try:
        with anyio.fail_after(60):
            return (await stream.receive_until(b"\n", 1 << 16)).decode()
    except (anyio.EndOfStream, anyio.IncompleteRead):
        shown = result.read_text() if result.is_file() else "(no result)"
        pytest.fail(f"the client ended before MID-REPLY: {shown}\nHAProxy: {balancer.output()}")


def _texts(seen: list[list[str]], kinds: set[str]) -> str:
    return "".join(text for kind, text in seen if kind in kinds)


def _parts_in(text: str, pid: int) -> int:
    """How many chunks ``text`` holds: it must be chunks 0, 1, ... of ``pid``, whole."""
    count = len(_PART.findall(text))
    assert text == "".join(part(i, pid) for i in range(count)), text[:400]
    return count


async def _run(
    transport: str,
    protocol: int,
    chunks: int,
    seen: int,
    *,
    commit_all: bool,
    postgres_url: str,
    start_balancer: Callable[[Sequence[str]], Balancer],
    tmp_path: Path,
) -> None:
    """One failover through the balancer; the assertions of the module docstring."""
    # A lease far longer than the test: the other replica takes the session over because
    # the killed owner is a gone process of this machine, not because its lease ran out.
    store = f"{postgres_url}?acpio_lease=60&acpio_flush_interval=0.2"
    args = ("--store", store, "--affinity-cookie", "acp_affinity")
    result = tmp_path / "result.json"
    workdir = tmp_path / "work"
    workdir.mkdir()
    with (
        serving(AGENT, *args, token=TOKEN) as (url_1, replica_1),
        serving(AGENT, *args, token=TOKEN) as (url_2, replica_2),
    ):
        replicas = {replica_1.pid: replica_1, replica_2.pid: replica_2}
        balancer = start_balancer([_address(url_1), _address(url_2)])
        command = [
            *_node(),
            os.fspath(CLIENT),
            *("--url", f"{balancer.url}/acp", "--transport", transport),
            *("--protocol", str(protocol), "--token", TOKEN, "--workdir", os.fspath(workdir)),
            *("--chunks", str(chunks), "--seen", str(seen), "--result", os.fspath(result)),
        ]
        client: Process
        async with await anyio.open_process(command, stderr=None) as client:
            try:
                assert client.stdin is not None and client.stdout is not None
                ready = (
                    await _line(BufferedByteReceiveStream(client.stdout), result, balancer)
                ).split()
                assert ready[0] == "MID-REPLY", ready
                session_id, pid = ready[1], int(ready[2])
                assert pid in replicas, f"the reply came from pid {pid}, not a replica"
                dying, other = replicas.pop(pid), next(iter(replicas.values()))
                if commit_all:
                    last = part(seen - 1, pid).encode()
                    await _wait_committed(postgres_url, session_id, [last, b"long reply"])
                else:
                    # Mid-stream: at least one chunk committed, the stream still going on.
                    await _wait_committed(postgres_url, session_id, [part(0, pid).encode()])
                rows = await anyio.to_thread.run_sync(_committed_text, postgres_url, session_id)
                committed = len(_PART.findall(rows.decode(errors="replace")))
                dying.send_signal(signal.SIGKILL)
                code = await anyio.to_thread.run_sync(lambda: dying.wait(timeout=30))
                assert code == -signal.SIGKILL
                await client.stdin.send(b"GO\n")
                with anyio.fail_after(120):
                    status = await client.wait()
            finally:
                if client.returncode is None:  # a failed step: the client goes too
                    client.kill()
        assert other.poll() is None, "the surviving replica died"
        assert balancer.process.poll() is None, balancer.output()
    outcome: dict[str, Any] = json.loads(result.read_text())
    assert status == 0 and "error" not in outcome, (
        f"{json.dumps(outcome, indent=1)[:4000]}\nHAProxy: {balancer.output()}"
    )
    _check(
        outcome,
        transport=transport,
        chunks=chunks,
        seen=seen,
        pid=pid,
        other_pid=other.pid,
        committed=committed,
        commit_all=commit_all,
    )


def _check(
    outcome: dict[str, Any],
    *,
    transport: str,
    chunks: int,
    seen: int,
    pid: int,
    other_pid: int,
    committed: int,
    commit_all: bool,
) -> None:
    long_prompt = f"long reply {chunks}"
    # The affinity: the whole first connection stayed on one replica (its first turn and
    # its reply came from the same process). Over HTTP the second connection arrived with
    # that replica's cookie, was sent to the other, and got the other's cookie. Node's
    # WebSocket shows the client no upgrade headers, so over WebSocket it keeps no cookie:
    # one TCP connection needs none, and a new one goes wherever the balancer sends it.
    first_cookie, second_cookie = outcome["cookieOnFirst"], outcome["cookieOnSecond"]
    if transport == "http":
        assert first_cookie.startswith("acp_affinity=")
        assert second_cookie.startswith("acp_affinity=") and first_cookie != second_cookie
    else:
        assert first_cookie is None and second_cookie is None
    # The old connection is dead for the client: the SDK fails its next request
    # ("terminated", the SSE stream having been cut; "ACP connection closed" on WebSocket).
    assert set(outcome["oldConnection"]) == {"error", "code"}, outcome["oldConnection"]
    first_turn = f"heard first words; before: []; pid {pid}"
    assert outcome["firstStopReason"] == "end_turn"
    live = _texts(outcome["first"], TEXT_KINDS)
    assert live.startswith(first_turn), live[:400]
    live_parts = _parts_in(live.removeprefix(first_turn), pid)
    assert live_parts >= seen

    second: list[list[str]] = outcome["second"]
    split = next(i for i, (_, text) in enumerate(second) if "after the failover" in text)
    replay, after = second[:split], second[split:]
    # Every committed update once, in order: both prompts, the first turn, the cut reply
    # (chunks 0..n-1 of the dead replica, each once).
    assert _texts(replay, USER_KINDS) == "first words" + long_prompt
    replayed = _texts(replay, TEXT_KINDS)
    assert replayed.startswith(first_turn), replayed[:400]
    replayed_parts = _parts_in(replayed.removeprefix(first_turn), pid)
    assert replayed_parts >= committed  # what was committed before the kill came back
    if commit_all:
        assert replayed_parts == live_parts == chunks, (replayed_parts, live_parts)
    # Nothing the client saw is contradicted: both are prefixes of the one stream
    # (``_parts_in`` checked each is chunks 0, 1, ... of the dead replica).
    assert replayed_parts <= chunks and live_parts <= chunks
    # The conversation goes on on the other replica, with the dead one's agent state,
    # and nothing of the replay comes again.
    assert outcome["nextStopReason"] == "end_turn"
    before = json.dumps(["first words", long_prompt])
    assert _texts(after, TEXT_KINDS) == (
        f"heard after the failover; before: {before}; pid {other_pid}"
    )
    assert not _PART.search(_texts(after, TEXT_KINDS | USER_KINDS))


@pytest.mark.parametrize(
    ("transport", "protocol"), [("http", 1), ("http", 2), ("ws", 1), ("ws", 2)]
)
async def test_a_replica_killed_after_committing_what_the_client_saw_loses_nothing(
    transport: str,
    protocol: int,
    postgres_url: str,
    haproxy: Callable[[Sequence[str]], Balancer],  # noqa: F811 - the fixture
    tmp_path: Path,
) -> None:
    """The reply's 50 chunks reached the client and the database; then its replica is
    killed, the turn still running. Through the balancer the client lands on the other
    replica, whose replay holds exactly what the client saw, once; a new prompt goes on
    there with the saved agent state."""
    await _run(
        transport,
        protocol,
        50,
        50,
        commit_all=True,
        postgres_url=postgres_url,
        start_balancer=haproxy,
        tmp_path=tmp_path,
    )


@pytest.mark.parametrize(("transport", "protocol"), [("http", 2), ("ws", 1)])
async def test_a_replica_killed_in_the_middle_of_a_streaming_reply_contradicts_nothing(
    transport: str,
    protocol: int,
    postgres_url: str,
    haproxy: Callable[[Sequence[str]], Balancer],  # noqa: F811 - the fixture
    tmp_path: Path,
) -> None:
    """A reply of a million chunks streams; once the client has 1,000 of them and the
    database some, the replica is killed wherever the stream is. The replay holds the cut reply
    up to the dead replica's last commit (at least what was committed when the test
    looked), each chunk once, and agrees with what the client saw; the conversation
    goes on on the other replica."""
    await _run(
        transport,
        protocol,
        1_000_000,
        1_000,
        commit_all=False,
        postgres_url=postgres_url,
        start_balancer=haproxy,
        tmp_path=tmp_path,
    )


def test_the_balancer_runs_the_documented_configuration_with_only_its_addresses_changed() -> None:
    """What the tests give HAProxy is the block of docs/remote.md, line for line, but for
    the ``bind`` address and the ``server`` addresses; a configuration that does not have
    one ``bind`` and one ``server`` line per replica is refused."""
    shown = doc_config()
    run = placed(shown, "fd@3", ["127.0.0.1:1001", "127.0.0.1:1002"])
    changed = [(a, b) for a, b in zip(shown.splitlines(), run.splitlines(), strict=True) if a != b]
    assert [b.split() for _, b in changed] == [
        ["bind", "fd@3"],
        ["server", "replica1", "127.0.0.1:1001", "check"],
        ["server", "replica2", "127.0.0.1:1002", "check"],
    ]
    assert "stick on req.cook(acp_affinity)" in run and "option redispatch" in run
    with pytest.raises(AssertionError, match="2 server lines for 1 servers"):
        placed(shown, "fd@3", ["127.0.0.1:1001"])
