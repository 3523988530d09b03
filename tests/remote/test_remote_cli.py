"""``acpio serve``: what it refuses, and a graceful stop over Streamable HTTP."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading

import httpx
import pytest

from .server import EXAMPLES, REPO


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "acpio._cli", "serve", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--store", "postgresql://acpio@127.0.0.1:1/db", f"{EXAMPLES}/echo_agent.py:EchoAgent"],
            "cannot connect to the session store postgresql://acpio@127.0.0.1:1/db",
        ),
        (
            ["--store", "redis://host", f"{EXAMPLES}/echo_agent.py:EchoAgent"],
            "unknown session store redis://",
        ),
        ([f"{EXAMPLES}/echo_agent.py:Missing"], "has no 'Missing'"),
        (["nowhere.py:Agent"], "no such file"),
        (["--listen", "localhost", f"{EXAMPLES}/echo_agent.py:EchoAgent"], "HOST:PORT"),
        (["--token-env", "ACPIO_UNSET_VAR", f"{EXAMPLES}/echo_agent.py:EchoAgent"], "not set"),
    ],
    ids=[
        "postgresql-unreachable",
        "unknown-store",
        "missing-name",
        "missing-file",
        "bad-listen",
        "empty-token",
    ],
)
def test_serve_refuses_with_a_clear_message(args: list[str], message: str) -> None:
    completed = _serve(*args)
    assert completed.returncode == 2
    assert message in completed.stderr


def test_sigterm_reports_the_running_turn_on_its_sse_stream() -> None:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "acpio._cli",
            "serve",
            "--listen",
            "127.0.0.1:0",
            f"{EXAMPLES}/shell_agent.py:ShellAgent",
        ],
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    assert process.stderr is not None
    try:
        url = process.stderr.readline().split(" on ", 1)[1].strip()
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": 2, "info": {"name": "t", "version": "1"}},
        }
        with httpx.Client(timeout=20) as client:
            answer = client.post(url, json=init)
            headers = {
                "Content-Type": "application/json",
                "Acp-Connection-Id": answer.headers["acp-connection-id"],
            }
            listen = {**headers, "Accept": "text/event-stream"}
            with client.stream("GET", url, headers=listen) as stream:
                new = {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "session/new",
                    "params": {"cwd": str(REPO)},
                }
                client.post(url, json=new, headers=headers)
                lines = stream.iter_lines()
                session = next(json.loads(line[6:]) for line in lines if line.startswith("data: "))[
                    "result"
                ]["sessionId"]
            session_headers = {**listen, "Acp-Session-Id": session}
            seen: list[dict[str, object]] = []
            with client.stream("GET", url, headers=session_headers) as stream:
                prompt = {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "session/prompt",
                    "params": {
                        "sessionId": session,
                        "prompt": [{"type": "text", "text": "run echo hi"}],
                    },
                }
                client.post(url, json=prompt, headers={**headers, "Acp-Session-Id": session})
                signalled = threading.Event()
                for line in stream.iter_lines():  # ends when the server ends the stream
                    if not line.startswith("data: "):
                        continue
                    seen.append(json.loads(line[6:]))
                    if (
                        seen[-1].get("method") == "session/request_permission"
                        and not signalled.is_set()
                    ):
                        signalled.set()
                        os.kill(process.pid, signal.SIGTERM)
        states = [
            m["params"]["update"]  # type: ignore[index]
            for m in seen
            if m.get("method") == "session/update"
            and m["params"]["update"].get("sessionUpdate") == "state_update"  # type: ignore[index, union-attr]
        ]
        assert states[-1]["state"] == "idle", seen
        assert states[-1]["stopReason"] == "cancelled"
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        process.stderr.close()
