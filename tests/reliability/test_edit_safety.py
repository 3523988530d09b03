"""The edit agent as a real subprocess: special files are refused at once, and it still exits.

``examples/edit_agent.py`` is asked to write ``/dev/zero``, a FIFO and its
own protocol pipes (``/proc/self/fd/0`` and ``/1``, resolved in the agent's
process), with session directories that contain them, so that only the
regular-file check stands between the agent and a read that would never end
(or never start). Each is refused with a failed tool call before anything
is asked; then the client closes the agent's stdin, and the agent exits with
status 0 within 3 s (the README's cleanup promise), as it does when its
input ends while an edit waits for permission.
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest
from reliability_kit import WAIT, Spawned, WireClient, example_command, spawned

pytestmark = pytest.mark.anyio

EXIT_WITHIN = 3.0


def tool_call_text(client: WireClient, session_id: str) -> str:
    return "".join(
        u["content"]["content"]["text"]
        for u in client.updates(session_id)
        if u.get("sessionUpdate") == "tool_call_content_chunk"
    )


async def exits_within_3s(agent: Spawned) -> None:
    await agent.client.close_input()
    with anyio.fail_after(EXIT_WITHIN):
        code = await agent.process.wait()
    assert code == 0, agent.stderr.decode(errors="replace")


@pytest.mark.parametrize(
    ("cwd", "path", "reason"),
    [
        ("/dev", "/dev/zero", "it is a character device, not a regular file"),
        ("{tmp}", "/dev/zero", "outside the session's directories"),
        ("{tmp}", "{tmp}/fifo", "it is a named pipe (FIFO), not a regular file"),
        ("/proc/self/fd", "/proc/self/fd/0", "outside the session's directories"),
    ],
    ids=["dev-zero-inside", "dev-zero-outside", "fifo", "fd-0-is-dev-null"],
)
async def test_special_files_are_refused_at_once_and_the_agent_exits(
    cwd: str, path: str, reason: str, tmp_path: Path
) -> None:
    os.mkfifo(tmp_path / "fifo")
    cwd, path = cwd.format(tmp=tmp_path), path.format(tmp=tmp_path)
    async with spawned(example_command("edit_agent.py")) as agent:
        client = agent.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            session_id = await client.new_session(cwd)
            await client.prompt(session_id, f"write {path}\nx")
            idle = await client.wait_idle(session_id)
        assert idle["stopReason"] == "end_turn"
        text = tool_call_text(client, session_id)
        assert reason in text and "nothing was touched" in text
        statuses = [u.get("status") for u in client.updates(session_id) if "status" in u]
        assert statuses[-1] == "failed"
        assert not any(m.get("method") == "session/request_permission" for m in client.received)
        await exits_within_3s(agent)


async def test_the_agents_own_protocol_pipes_are_refused_and_it_exits() -> None:
    # acpio.run moves the protocol off fds 0 and 1 (which become /dev/null and
    # stderr): find the pipes the agent really reads and writes, then ask it
    # to write each one, as /proc/<its pid>/fd/N inside that very directory.
    async with spawned(example_command("edit_agent.py")) as agent:
        client = agent.client
        fds = f"/proc/{agent.pid}/fd"
        with anyio.fail_after(WAIT):
            await client.initialize()
            pipes = [n for n in os.listdir(fds) if os.readlink(f"{fds}/{n}").startswith("pipe:")]
            assert len(pipes) >= 3  # protocol in, protocol out, stderr
            session_id = await client.new_session(fds)
            for n in pipes:
                await client.prompt(session_id, f"write {fds}/{n}\nx")
                idle = await client.wait_idle(session_id)
                assert idle["stopReason"] == "end_turn"
        text = tool_call_text(client, session_id)
        for n in pipes:
            assert f"Cannot read {fds}/{n} (really {fds}/pipe:[" in text
        assert text.count("it is a named pipe (FIFO), not a regular file") == len(pipes)
        assert not any(m.get("method") == "session/request_permission" for m in client.received)
        await exits_within_3s(agent)


async def test_end_of_input_while_a_special_file_prompt_is_in_flight(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    async with spawned(example_command("edit_agent.py")) as agent:
        client = agent.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            session_id = await client.new_session(tmp_path)
            await client.send_request(
                "session/prompt",
                {
                    "sessionId": session_id,
                    "prompt": [{"type": "text", "text": f"write {tmp_path}/fifo\nx"}],
                },
            )
        await exits_within_3s(agent)


async def test_end_of_input_while_an_edit_waits_for_permission(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("old\n")
    async with spawned(example_command("edit_agent.py")) as agent:
        client = agent.client
        with anyio.fail_after(WAIT):
            await client.initialize()
            session_id = await client.new_session(tmp_path)
            await client.prompt(session_id, f"write {path}\nnew\n")
            await client.wait_permission_request()
        await exits_within_3s(agent)
    assert path.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]
