"""The acpx profile against acpx itself: the same agent, the same wire, the same lines.

acpx 0.19.1 runs the example agents through ``wire_recorder.py``; the acpx profile renders
the recorded wire and must print exactly what acpx printed (acpx asks its ``(y/N)``
permission question only on a terminal, so that line is left out of the comparison here),
and a :class:`MockClient` playing acpx on the same agent must show the same lines (terminal
ids, which each run draws anew, aside). On a pseudo-terminal acpx asks its question, which
must be the profile's. The python-sdk profile is checked against the official SDK's own
``SessionAccumulator`` state (``py_sdk_profile_client.py``).
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest

from acpio.testing import PROFILES, MockClient, PermissionPolicy
from acpio.testing._profiles import python_sdk_lines

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent.parent / "examples"
ACPX = HERE / "node_modules" / ".bin" / "acpx"


def _run_acpx(
    tmp_path: Path, agent: str, approve: str, prompt: str
) -> tuple[list[str], list[object]]:
    log = tmp_path / "wire.log"
    command = (
        f"{sys.executable} {HERE / 'wire_recorder.py'} {log} {sys.executable} {EXAMPLES / agent}.py"
    )
    completed = subprocess.run(
        [str(ACPX), "--agent", command, "--cwd", str(tmp_path), approve, "exec", prompt],
        capture_output=True,
        timeout=120,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    printed = [line for line in completed.stdout.decode().splitlines() if line.strip()]
    assert printed, completed.stderr.decode()
    wire = [
        json.loads(line[2:]) for line in log.read_text().splitlines() if line[:2] in ("> ", "< ")
    ]
    return printed, wire


def _no_ids(lines: list[str]) -> list[str]:
    # How often the agent polls terminal/output depends on timing, not on the client.
    return [
        re.sub(r"\[terminal\] \S+", "[terminal] ID", line)
        for line in lines
        if line != "[client] terminal/output (running)"
    ]


SCENARIOS = [
    ("shell_agent", "--deny-all", "run echo real-acpx", PermissionPolicy.reject()),
    ("shell_agent", "--approve-all", "run echo real-acpx", PermissionPolicy.allow()),
    ("shell_agent", "--approve-all", "run exit 3", PermissionPolicy.allow()),
]


@pytest.mark.parametrize(("agent", "approve", "prompt", "policy"), SCENARIOS)
async def test_acpx_profile_prints_what_acpx_prints(
    agent: str, approve: str, prompt: str, policy: PermissionPolicy, tmp_path: Path
) -> None:
    printed, wire = _run_acpx(tmp_path, agent, approve, prompt)
    profile = PROFILES["acpx"]
    rendered = [line for line in profile.render(wire) if not line.startswith("[permission]")]
    assert rendered == printed

    async with MockClient(
        [sys.executable, str(EXAMPLES / f"{agent}.py")], profile="acpx", policy=policy
    ) as client:
        session = await client.new_session()
        await session.prompt(prompt)
        shown = [line for line in client.shown() if not line.startswith("[permission]")]
    assert _no_ids(shown) == _no_ids(printed)


async def test_acpx_edit_matches(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    printed, wire = _run_acpx(tmp_path, "edit_agent", "--approve-all", f"write {target}\nhello")
    rendered = [
        line for line in PROFILES["acpx"].render(wire) if not line.startswith("[permission]")
    ]
    assert rendered == printed
    # The question acpx asks on a terminal, from the same recorded request.
    assert f"[permission] Allow Create {target} [edit]? (y/N)" in PROFILES["acpx"].render(wire)


# ------------------------------------------------------------- the official Python SDK


def _sdk_report(tmp_path: Path, agent: str, prompt: str, choose: str) -> object:
    result = tmp_path / "sdk.json"
    completed = subprocess.run(
        [
            sys.executable,
            str(HERE / "py_sdk_profile_client.py"),
            "--agent",
            str(EXAMPLES / f"{agent}.py"),
            "--prompt",
            prompt,
            "--choose",
            choose,
            "--result",
            str(result),
            "--cwd",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0 and result.exists(), completed.stderr[-4000:]
    assert "ERROR" not in completed.stderr, completed.stderr[-4000:]  # the SDK logged nothing
    return json.loads(result.read_text())


SDK_SCENARIOS = [
    ("shell_agent", "run echo from-sdk", "reject_once", PermissionPolicy.reject()),
    ("shell_agent", "run echo from-sdk", "allow_once", PermissionPolicy.allow()),
    ("shell_agent", "run exit 4", "allow_once", PermissionPolicy.allow()),
    ("echo_agent", "hello sdk", "allow_once", PermissionPolicy.allow()),
]


@pytest.mark.parametrize(("agent", "prompt", "choose", "policy"), SDK_SCENARIOS)
async def test_python_sdk_profile_lists_what_the_sdk_holds(
    agent: str, prompt: str, choose: str, policy: PermissionPolicy, tmp_path: Path
) -> None:
    held = python_sdk_lines(_sdk_report(tmp_path, agent, prompt, choose))
    assert held  # the SDK's state is not empty
    command = [sys.executable, str(EXAMPLES / f"{agent}.py")]
    async with MockClient(command, profile="python-sdk", policy=policy, cwd=tmp_path) as client:
        session = await client.new_session()
        await session.prompt(prompt)
        shown = client.shown()
    assert shown == held


async def test_python_sdk_profile_edit(tmp_path: Path) -> None:
    target = tmp_path / "b.txt"
    prompt = f"write {target}\nhello"
    held = python_sdk_lines(_sdk_report(tmp_path, "edit_agent", prompt, "allow_once"))
    target.unlink()
    async with MockClient(
        [sys.executable, str(EXAMPLES / "edit_agent.py")],
        profile="python-sdk",
        policy=PermissionPolicy.allow(),
        cwd=tmp_path,
    ) as client:
        session = await client.new_session()
        await session.prompt(prompt)
        shown = client.shown()
    assert shown == held
    assert f"permission: Create {target} [edit] options: Allow once, Reject" in shown


# ------------------------------------------------- acpx's permission question, on a terminal


def _acpx_on_a_terminal(
    tmp_path: Path, agent: str, prompt: str, answer: bytes
) -> tuple[str, list[object]]:
    """Run acpx with its stdin and stderr on a pseudo-terminal (so it asks), answer its
    question with ``answer``; return what the terminal showed and the recorded wire."""
    log = tmp_path / "wire.log"
    command = (
        f"{sys.executable} {HERE / 'wire_recorder.py'} {log} {sys.executable} {EXAMPLES / agent}.py"
    )
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [str(ACPX), "--agent", command, "--cwd", str(tmp_path), "exec", prompt],
        stdin=slave,
        stderr=slave,
        stdout=subprocess.PIPE,
    )
    os.close(slave)
    seen = b""
    answered = False
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 60)
            if not ready:
                break
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the terminal closed: acpx exited
                break
            if not chunk:
                break
            seen += chunk
            if not answered and b"(y/N)" in seen:
                os.write(master, answer)
                answered = True
        process.wait(timeout=60)
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.stdout is not None
    process.stdout.close()
    assert answered, seen.decode(errors="replace")
    screen = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", seen.decode(errors="replace"))
    wire = [
        json.loads(line[2:]) for line in log.read_text().splitlines() if line[:2] in ("> ", "< ")
    ]
    return screen, wire


@pytest.mark.parametrize(
    ("agent", "prompt"),
    [("shell_agent", "run echo on-a-tty"), ("edit_agent", "write {dir}/c.txt\nhello")],
)
def test_acpx_asks_what_the_profile_says_it_asks(agent: str, prompt: str, tmp_path: Path) -> None:
    screen, wire = _acpx_on_a_terminal(tmp_path, agent, prompt.format(dir=tmp_path), b"n\n")
    (question,) = [
        line for line in PROFILES["acpx"].render(wire) if line.startswith("[permission]")
    ]
    asked = [
        line.strip() for line in screen.splitlines() if line.strip().startswith("[permission]")
    ]
    assert asked and asked[0].startswith(question), (question, screen)
    # The command or the edit's title is in the question, never a bare "tool [other]".
    assert ("on-a-tty" in question) if agent == "shell_agent" else ("Create " in question)
