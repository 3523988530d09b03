"""``Session.read_file``: the edits' containment, regular-file and size rules for reading,
paths relative to the session's cwd, and refusals a person can act on (issue 31).

From disk here (the mock client offers no ``fs``); through the editor in
``tests/test_client_services.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import acpio
from acpio.testing import MockClient

pytestmark = pytest.mark.anyio


class Reader(acpio.Agent):
    """Reads the path of its prompt; keeps the text or the refusal."""

    def __init__(self, **options: object) -> None:
        self.options = options
        self.texts: list[str] = []
        self.refusals: list[acpio.ReadRefused] = []

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        try:
            self.texts.append(await session.read_file(acpio.text_of(prompt), **self.options))  # type: ignore[arg-type]
        except acpio.ReadRefused as refusal:
            self.refusals.append(refusal)
        return "end_turn"


async def read(cwd: Path, path: str, **options: object) -> Reader:
    agent = Reader(**options)
    async with MockClient(agent, cwd=cwd) as client:
        session = await client.new_session()
        await session.prompt(path)
    return agent


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    (tmp_path / "proj" / "src").mkdir(parents=True)
    (tmp_path / "proj" / "src" / "main.py").write_text("print('hi')\n")
    (tmp_path / "secret.txt").write_text("secret\n")
    return tmp_path / "proj"


async def test_a_relative_path_is_read_from_the_sessions_cwd(proj: Path) -> None:
    agent = await read(proj, "src/main.py")
    assert agent.texts == ["print('hi')\n"]
    agent = await read(proj, str(proj / "src" / "main.py"))
    assert agent.texts == ["print('hi')\n"]


@pytest.mark.parametrize("path", ["../secret.txt", "{tmp}/secret.txt", "link"])
async def test_outside_the_sessions_directories_is_refused(proj: Path, path: str) -> None:
    (proj / "link").symlink_to(proj.parent / "secret.txt")
    agent = await read(proj, path.format(tmp=proj.parent))
    (refusal,) = agent.refusals
    message = str(refusal)
    assert "outside the session's directories" in message and "nothing was read" in message
    assert str(proj.parent / "secret.txt") in message
    assert isinstance(refusal, acpio.EditRefused)


async def test_allow_outside_and_additional_directories_are_roots(proj: Path) -> None:
    agent = await read(proj, "../secret.txt", allow_outside=[proj.parent])
    assert agent.texts == ["secret\n"]


async def test_a_fifo_a_directory_and_a_missing_file_are_refused_plainly(proj: Path) -> None:
    os.mkfifo(proj / "pipe")
    for path, phrase in (
        ("pipe", "a named pipe (FIFO), not a regular file"),
        ("missing.txt", "there is no such file"),
        ("/dev/zero", "a character device"),
    ):
        agent = await read(proj, path, allow_outside=["/dev"])
        (refusal,) = agent.refusals
        assert phrase in str(refusal), str(refusal)
        assert "JSON-RPC" not in str(refusal)


async def test_a_file_over_the_size_bound_is_refused(proj: Path) -> None:
    (proj / "big.txt").write_text("x" * 2000)
    agent = await read(proj, "big.txt", max_bytes=1000)
    (refusal,) = agent.refusals
    assert "larger than 1000 bytes, the size limit" in str(refusal)
    agent = await read(proj, "big.txt", max_bytes=2000)
    assert agent.texts == ["x" * 2000]
