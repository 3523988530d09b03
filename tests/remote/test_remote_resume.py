"""Resumable streams (the "Durable & Resumable HTTP/WS Transport" RFD), driven by the testing
kit's mock client over Streamable HTTP and WebSocket against a real server (uvicorn).

A client drops its streams in the middle of a long reply and resumes from its cursors: it
receives every chunk exactly once. A cursor older than the retention is refused (409,
``stream/resume_failed``) and the RFD's fallback, ``session/resume`` with ``replayFrom`` (v2) or
``session/load`` (v1) from a new connection, replays the whole history. Nothing here waits on
time: the drop happens once the client holds a given number of updates.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import websockets.exceptions
import websockets.sync.client

import acpio
from acpio.remote import RemoteApp, RemoteLimits
from acpio.testing import MockClient, Remote, ResumeFailed

from .inprocess import serving

pytestmark = pytest.mark.anyio

CHUNKS = 100_000
TRANSPORTS = ["http", "websocket"]
VERSIONS = [1, 2]


class ChunkAgent(acpio.Agent):
    """``reply N`` streams the numbers 0 to N-1 as N message chunks."""

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        count = int(acpio.text_of(prompt).split()[1])
        stream = session.message_stream()
        for number in range(count):
            await stream.write(f"{number} ")
        return "end_turn"


def _numbers(count: int, start: int = 0) -> str:
    return "".join(f"{number} " for number in range(start, start + count))


def _agent_text(session: acpio.testing.ClientSession) -> str:
    return "".join(m.text for m in session.view.messages if m.role == "agent")


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[str]:
    # A slow client (the mock client checks every message) is not a stalled one here.
    default = RemoteLimits(retention_messages=2 * CHUNKS, stall_timeout=3600)
    limits = getattr(request, "param", default)
    with serving(RemoteApp(ChunkAgent, limits=limits)) as url:
        yield url


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_stream_dropped_mid_reply_resumes_with_every_chunk_once(
    server: str, transport: str, version: int, tmp_path: Path
) -> None:
    remote = Remote(server, transport="http" if transport == "http" else "websocket")
    async with MockClient(remote, protocol_version=version, timeout=300, cwd=tmp_path) as client:
        session = await client.new_session()
        turn = await session.start_prompt(f"reply {CHUNKS}")
        await session.wait_for(lambda: len(session.updates) >= CHUNKS // 2)
        await client.drop_stream()
        result = await turn.wait()
        assert result.stop_reason == "end_turn"
        assert client.remote is not None
        # One resume asked for (and any after the server closed a socket behind which this
        # slow client fell 20 s behind: its keepalive ping timed out).
        assert client.remote.resumes == 1 + client.remote.auto_resumes
        text = _agent_text(session)
        assert text == _numbers(CHUNKS), "a chunk was lost or repeated across the resume"
        # The session goes on over the resumed stream.
        assert (await session.prompt("reply 3")).stop_reason == "end_turn"
        assert _agent_text(session).endswith(_numbers(3))


SMALL = RemoteLimits(retention_messages=50)


@pytest.mark.parametrize("server", [SMALL], indirect=True)
@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_stale_cursor_is_refused_and_session_resume_replays_without_loss(
    server: str, transport: str, version: int, tmp_path: Path
) -> None:
    remote = Remote(server, transport="http" if transport == "http" else "websocket")
    async with MockClient(remote, protocol_version=version, cwd=tmp_path) as client:
        session = await client.new_session()
        await session.prompt("reply 10")
        assert client.remote is not None
        old = dict(client.remote.cursors)
        await session.prompt("reply 200")  # more than the 50 messages a stream keeps
        with pytest.raises(ResumeFailed) as refused:
            await client.drop_stream(cursors=old)
        assert refused.value.reason == "expired"
        session_id = session.id
    # The RFD's fallback: reattach the session, its history replayed from the start.
    async with MockClient(remote, protocol_version=version, cwd=tmp_path) as fresh:
        again = await fresh.resume_session(session_id, tmp_path, replay=True)
        # Over HTTP a v1 session/load is answered on the connection's stream, the replay
        # comes on the session's: the answer may overtake the end of the replay.
        history = _numbers(10) + _numbers(200)
        await again.wait_for(lambda: _agent_text(again) == history, what="the whole history")
        assert (await again.prompt("reply 2")).stop_reason == "end_turn"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_resume_within_the_retention_replays_only_what_followed(
    server: str, transport: str, tmp_path: Path
) -> None:
    remote = Remote(server, transport="http" if transport == "http" else "websocket")
    async with MockClient(remote, cwd=tmp_path) as client:
        session = await client.new_session()
        await session.prompt("reply 5")
        await client.drop_stream()  # nothing in flight: nothing replayed, nothing lost
        await client.drop_stream()  # and again (resuming is idempotent)
        await session.prompt("reply 5")
        assert _agent_text(session) == _numbers(5) + _numbers(5)
        assert client.remote is not None and client.remote.resumes == 2


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_malformed_and_foreign_cursors_are_refused_as_unknown(
    server: str, transport: str, tmp_path: Path
) -> None:
    remote = Remote(server, transport="http" if transport == "http" else "websocket")
    async with MockClient(remote, cwd=tmp_path) as other:
        await (await other.new_session()).prompt("reply 3")
        assert other.remote is not None
        foreign = other.remote.cursors[""]
    for cursor in ["not a cursor", foreign]:
        async with MockClient(remote, cwd=tmp_path) as client:
            await (await client.new_session()).prompt("reply 3")
            with pytest.raises(ResumeFailed) as refused:
                await client.drop_stream(cursors={"": cursor})
            assert refused.value.reason == "unknown_cursor"
            assert refused.value.stream == ""


@pytest.fixture
def principals_server() -> Iterator[str]:
    app = RemoteApp(ChunkAgent, tokens={"alice-token": "alice", "bob-token": "bob"})
    with serving(app) as url:
        yield url


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_another_principals_stream_cannot_be_resumed(
    principals_server: str, transport: str, tmp_path: Path
) -> None:
    kind = "http" if transport == "http" else "websocket"
    alice_remote = Remote(principals_server, transport=kind, token="alice-token")
    bob_remote = Remote(principals_server, transport=kind, token="bob-token")
    async with MockClient(alice_remote, cwd=tmp_path) as alice:
        await (await alice.new_session()).prompt("reply 3")
        assert alice.remote is not None
        async with MockClient(bob_remote, cwd=tmp_path) as bob:
            assert bob.remote is not None
            bob.remote.connection_id = alice.remote.connection_id  # bob tries alice's stream
            with pytest.raises(ResumeFailed) as refused:
                await bob.drop_stream(cursors=alice.remote.cursors)
            assert refused.value.reason == "unknown_connection"
        # Alice's stream was not touched: her connection goes on.
        session = next(iter(alice.sessions.values()))
        assert (await session.prompt("reply 2")).stop_reason == "end_turn"


@pytest.mark.parametrize(
    "server", [RemoteLimits(retention_messages=7, retention_seconds=30)], indirect=True
)
@pytest.mark.parametrize("version", VERSIONS)
def test_the_retention_is_advertised_in_initialize(server: str, version: int) -> None:
    info = {"name": "t", "version": "1"}
    params = (
        {"protocolVersion": 2, "info": info}
        if version == 2
        else {"protocolVersion": 1, "clientCapabilities": {}, "clientInfo": info}
    )
    body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    answer = httpx.post(server, json=body, timeout=10).json()["result"]
    capabilities = answer["capabilities" if version == 2 else "agentCapabilities"]
    resumable = capabilities["transport"]["resumable"]
    assert resumable == {"retentionMessages": 7, "retentionSeconds": 30}


def test_an_unknown_connection_with_a_cursor_is_409_without_it_404(server: str) -> None:
    headers = {"accept": "text/event-stream", "acp-connection-id": "gone"}
    refused = httpx.get(server, headers={**headers, "last-event-id": "x.1"}, timeout=10)
    assert refused.status_code == 409
    assert refused.headers["acp-resume-failed"] == "unknown_connection"
    assert httpx.get(server, headers=headers, timeout=10).status_code == 404


def test_stream_resume_for_an_unknown_connection_answers_resume_failed(server: str) -> None:
    with websockets.sync.client.connect(server.replace("http", "ws", 1)) as socket:
        request = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "stream/resume",
            "params": {"connectionId": "gone", "cursor": "x.1"},
        }
        socket.send(json.dumps(request))
        failed = json.loads(socket.recv(timeout=10))
        assert failed["method"] == "stream/resume_failed"
        assert failed["params"]["reason"] == "unknown_connection"
        with pytest.raises(websockets.exceptions.ConnectionClosed) as closed:
            socket.recv(timeout=10)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4409


async def test_a_resume_takes_the_stream_over_from_a_reader_still_attached(
    server: str, tmp_path: Path
) -> None:
    # A half-open connection (the client's network gone without a FIN) keeps its reader
    # attached on the server: the client resuming from elsewhere takes the stream over.
    async with MockClient(Remote(server, transport="http"), cwd=tmp_path) as client:
        await (await client.new_session()).prompt("reply 3")
        assert client.remote is not None and client.remote.connection_id is not None
        headers = {"accept": "text/event-stream", "acp-connection-id": client.remote.connection_id}
        async with httpx.AsyncClient(timeout=10) as http:
            busy = await http.get(server, headers=headers)
            assert busy.status_code == 409  # without a cursor, a held stream is refused
            resumed = {**headers, "last-event-id": client.remote.cursors[""]}
            async with http.stream("GET", server, headers=resumed) as taken:
                assert taken.status_code == 200
