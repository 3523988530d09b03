"""examples/langgraph_agent.py as an editor runs it: a subprocess over stdio, offline.

Over v2 with acpio's MockClient, over v1 with the official Python SDK client
(``langgraph_py_sdk_client.py``). Its session store is a SQLite file under the
test's own temporary state directory (``ACPIO_STATE_DIR`` and ``XDG_STATE_HOME``
point there, never at the user's home). The restart tests kill the agent with
SIGKILL after a turn, start a new one and reopen the session (v2
``session/resume``, v1 ``session/load``): the model of the new process is given
the earlier prompts and the chosen mode; on v1 the model and the mode are picked
with the SDK's own ``set_config_option`` and ``set_session_mode``, and the load
answer's ``configOptions`` and ``modes.currentModeId`` name them.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from support import EXAMPLES

import acpio
from acpio.testing import MockClient, PermissionPolicy

pytestmark = pytest.mark.anyio

EXAMPLE = EXAMPLES / "langgraph_agent.py"
COMMAND = [sys.executable, str(EXAMPLE)]
HERE = Path(__file__).parent
# Importing LangGraph takes seconds of CPU; on a busy machine the first answer can be slow.
SLOW = 60.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def env_for(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "ACPIO_STATE_DIR": os.fspath(tmp_path / "state"),
        "XDG_STATE_HOME": os.fspath(tmp_path / "xdg"),
    }


def _saved_mode(state_dir: Path) -> object:
    """The ``mode`` value committed to the example's SQLite store (None before any)."""
    for path in state_dir.rglob("*.sqlite3"):
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = db.execute("SELECT config_values FROM agent_states").fetchall()
        except sqlite3.OperationalError:  # the schema is not written yet
            return None
        finally:
            db.close()
        for (values,) in rows:
            mode = json.loads(values).get("mode")
            if mode is not None:
                return mode
    return None


def _reply(session: object) -> str:
    return acpio.text_of(session.view.agent_messages[-1].content)  # type: ignore[attr-defined]


async def test_example_streams_runs_approved_tools_and_refuses_rejected_ones(
    tmp_path: Path,
) -> None:
    (tmp_path / "notes.txt").write_text("remember the milk\n")
    (tmp_path / "old.txt").write_text("x")
    (tmp_path / "keep.txt").write_text("y")
    async with MockClient(
        COMMAND, cwd=tmp_path, env=env_for(tmp_path), timeout=SLOW, policy=PermissionPolicy.allow()
    ) as client:
        assert client.agent_info.name == "langgraph-example"
        session = await client.new_session()
        first = await session.prompt("hello")
        chunks = [
            u for u in first.updates if getattr(u, "session_update", None) == "agent_message_chunk"
        ]
        assert len(chunks) > 5
        assert _reply(session) == "You said: hello. Before that: nothing."
        assert session.view.usage is not None and session.view.usage.size == 8192

        await session.prompt("read notes.txt")
        (read,) = session.view.tool_calls.values()
        assert read.kind == "read" and read.status == "completed"
        assert "remember the milk" in _reply(session)

        await session.prompt("delete old.txt")
        assert not (tmp_path / "old.txt").exists()
        assert len(client.permission_requests) == 1

    async with MockClient(
        COMMAND, cwd=tmp_path, env=env_for(tmp_path), timeout=SLOW, policy=PermissionPolicy.reject()
    ) as client:
        session = await client.new_session()
        result = await session.prompt("delete keep.txt")
        assert result.stop_reason == "end_turn"
        (call,) = session.view.tool_calls.values()
        assert call.status == "failed"
        assert "did not allow" in _reply(session)
    assert (tmp_path / "keep.txt").exists()


async def test_example_cancels_mid_stream(tmp_path: Path) -> None:
    async with MockClient(COMMAND, cwd=tmp_path, env=env_for(tmp_path), timeout=SLOW) as client:
        session = await client.new_session()
        turn = await session.start_prompt("/story")
        await session.wait_for(
            lambda: (
                sum(
                    getattr(u, "session_update", None) == "agent_message_chunk"
                    for u in session.updates
                )
                >= 10
            ),
            what="ten chunks of the story",
        )
        await session.cancel()
        result = await turn.wait()
        assert result.stop_reason == "cancelled"
        told = "".join(acpio.text_of(m.content) for m in session.view.agent_messages)
        assert told.startswith("Once upon a time") and "word1999" not in told
        assert (await session.prompt("hi")).stop_reason == "end_turn"


async def test_example_restart_then_v2_resume_continues_the_conversation(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "pid"
    wrapped = ["sh", "-c", f'echo $$ > "{pid_file}"; exec "$0" "$@"', *COMMAND]
    async with MockClient(
        wrapped, cwd=tmp_path, env=env_for(tmp_path), strict=False, timeout=SLOW
    ) as client:
        session = await client.new_session()
        await session.prompt("remember the apples")
        await session.set_config_option("mode", "code")
        # The store commits from its writer thread after the answer: kill once it has.
        with anyio.fail_after(SLOW):
            while _saved_mode(tmp_path / "state") != "code":  # noqa: ASYNC110 - another process
                await anyio.sleep(0.05)
        os.kill(int(pid_file.read_text()), signal.SIGKILL)
    assert client.returncode == -signal.SIGKILL

    async with MockClient(COMMAND, cwd=tmp_path, env=env_for(tmp_path), timeout=SLOW) as client:
        resumed = await client.resume_session(session.id, tmp_path)
        assert resumed.view.config_values["mode"] == "code"
        await resumed.prompt("what did I say?")
        reply = acpio.text_of(resumed.view.agent_messages[-1].content)
    # The model of the new process was given the first turn again, and the chosen mode.
    assert reply == "You said: what did I say?. Before that: remember the apples. [mode: code]"


def test_example_over_v1_with_the_official_python_sdk(tmp_path: Path) -> None:
    result_file = tmp_path / "result.json"
    workdir = tmp_path / "work"
    workdir.mkdir()
    done = subprocess.run(
        [
            sys.executable,
            str(HERE / "langgraph_py_sdk_client.py"),
            "--example",
            str(EXAMPLE),
            "--workdir",
            str(workdir),
            "--result",
            str(result_file),
        ],
        env=env_for(tmp_path),
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert result_file.exists(), done.stderr
    results = json.loads(result_file.read_text())
    assert set(results) == {
        "streamed_reply",
        "allowed",
        "rejected",
        "cancel_mid_stream",
        "restart_and_load",
    }
    assert results == {name: [] for name in results}, done.stderr
    assert done.returncode == 0
