"""What a hostile agent sends reaches the user's terminal visible, never obeyed; Ctrl-C and
Ctrl-D always quit ``acpio inspect``.

The end-to-end tests run ``acpio inspect`` on a real pseudo-terminal (``pty.fork``: the CLI
sees a terminal, draws its live footer, and gets SIGINT from a typed Ctrl-C like in a
terminal emulator) against ``hostile_agent.py``, and look at the raw bytes the CLI wrote to
the terminal.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest
from rich.console import Console
from rich.text import Text

from acpio._cli._blocks import permission_block, terminal_block
from acpio._cli._input import LineInput
from acpio._cli._safe_text import terminal_text, visible
from acpio.testing import PermissionRequest, TerminalView

HOSTILE_AGENT = str(Path(__file__).with_name("hostile_agent.py"))
#: Generous bound for one step of a pty session (the machine may be loaded).
STEP = 30.0
#: How long quitting may take while the agent floods (it ignores end of input too).
QUIT_BOUND = 30.0

# Sequences a terminal would obey; none may come from the agent. (The CLI's own drawing
# uses SGR and cursor moves on the current line only: never these.)
OBEYED = {
    "OSC (52 clipboard, 8 link, 0 title)": b"\x1b]",
    "clear screen": b"\x1b[2J",
    "cursor home": b"\x1b[H",
    "alternate screen": b"\x1b[?1049h",
    "C1 CSI U+009B": "\x9b".encode(),
    "bidi override U+202E": "\u202e".encode(),
    "BEL": b"\x07",
    "carriage return into agent text": b"\rOVERWRITE",
}


# -- the rule --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\x1b]52;c;aGk=\x07", "\\x1b]52;c;aGk=\\x07"),
        ("\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H"),
        ("\x9b2J", "\\x9b2J"),
        ("a\u202eb\u2066c\u200fd", "a\\u202eb\\u2066c\\u200fd"),
        ("del\x7f nul\x00 cr\r", "del\\x7f nul\\x00 cr\\r"),
        ("line\u2028sep", "line\\u2028sep"),
        ("plain, with ünïcode ✓ and emoji 🙂", "plain, with ünïcode ✓ and emoji 🙂"),
    ],
)
def test_visible_escapes_what_a_terminal_would_obey(text: str, shown: str) -> None:
    assert visible(text) == shown
    assert visible(text, one_line=True) == shown


def test_newlines_and_tabs_stay_unless_one_line() -> None:
    assert visible("a\nb\tc") == "a\nb\tc"
    assert visible("a\nb\tc", one_line=True) == "a\\nb\\tc"


def _rendered(renderable: object) -> str:
    console = Console(width=100, force_terminal=True, color_system="truecolor")
    with console.capture() as capture:
        console.print(renderable)
    return capture.get()


def test_the_terminal_pane_keeps_colours_and_escapes_the_rest() -> None:
    text = terminal_text("\x1b[31mred\x1b[0m \x1b]0;title\x07 \x9b2J \u202e \x1b[8mhidden\x1b[0m")
    assert text.plain == "red \\x1b]0;title\\x07 \\x9b2J \\u202e hidden"
    styles = [span.style for span in text.spans if not isinstance(span.style, str)]
    assert any(style.color is not None and style.color.number == 1 for style in styles)
    assert not any(style.conceal for style in styles)
    out = _rendered(text)
    for name, sequence in OBEYED.items():
        assert sequence not in out.encode(), name
    assert "\x1b[8m" not in out  # concealed text is shown


def test_a_terminal_block_shows_its_command_escaped() -> None:
    terminal = TerminalView("t1", command="make \x1b[2J\x1b[H", cwd="/x\u202e")
    terminal._output += b"ok \x1b]52;c;aGk=\x07\n"
    out = _rendered(terminal_block(terminal, cwd="/home"))
    plain = Text.from_ansi(out).plain
    assert "$ make \\x1b[2J\\x1b[H   (in /x\\u202e)" in plain
    assert "ok \\x1b]52;c;aGk=\\x07" in plain
    assert b"\x1b]" not in out.encode() and b"\x1b[2J" not in out.encode()


def test_the_permission_prompt_shows_command_and_cwd_on_their_own_lines() -> None:
    request = PermissionRequest(
        1,
        {
            "sessionId": "s1",
            "title": "Run `ls`?\x1b[2J\x1b[H\n? Run `ls`?",
            "subject": {"type": "command", "command": "rm -rf ~\r\x1b[Kls", "cwd": "/\x1b[8m"},
            "options": [{"optionId": "a", "name": "Allow\x1b[1A", "kind": "allow_once"}],
        },
        0.0,
    )
    out = Text.from_ansi(_rendered(permission_block(request, None, {}, cwd="/home"))).plain
    lines = [line.strip() for line in out.splitlines()]
    assert lines[0] == "? Run `ls`?\\x1b[2J\\x1b[H\\n? Run `ls`?"
    assert "command: rm -rf ~\\r\\x1b[Kls" in lines
    assert "in: /\\x1b[8m" in lines
    assert "options: Allow\\x1b[1A" in lines


# -- stdin shared by its waiters -------------------------------------------------------------


@pytest.mark.anyio
async def test_ctrl_d_is_seen_by_the_eof_watch_while_a_line_waits_for_its_reader() -> None:
    read_end, write_end = os.pipe()
    try:
        reader = LineInput(read_end)
        async with anyio.create_task_group() as group:
            lines: list[str | None] = []

            async def read_two() -> None:
                lines.append(await reader.readline())
                lines.append(await reader.readline())

            group.start_soon(read_two)
            group.start_soon(reader.wait_eof)
            await anyio.lowlevel.checkpoint()
            os.write(write_end, b"typed ahead\n")
            os.close(write_end)
            write_end = -1
        assert lines == ["typed ahead", None]
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)


# -- a real pty ------------------------------------------------------------------------------


class Pty:
    """``acpio inspect`` on a pseudo-terminal, and every byte it wrote there."""

    def __init__(self, pid: int, fd: int) -> None:
        self.pid = pid
        self.fd = fd
        self.seen = bytearray()
        self.closed = False
        self.status: int | None = None

    def _read(self, timeout: float) -> None:
        ready, _, _ = select.select([self.fd], [], [], max(timeout, 0.0))
        if not ready:
            return
        try:
            data = os.read(self.fd, 65536)
        except OSError:  # EIO: the other side is gone
            data = b""
        if data:
            self.seen += data
        else:
            self.closed = True

    def until(self, needle: bytes, timeout: float = STEP) -> None:
        """Read until ``needle`` was written (fails after ``timeout`` seconds)."""
        deadline = time.monotonic() + timeout
        while needle not in self.seen:
            assert not self.closed, f"the CLI ended before writing {needle!r}"
            left = deadline - time.monotonic()
            assert left > 0, f"no {needle!r} within {timeout}s: {self.text[-2000:]}"
            self._read(left)

    def type(self, data: bytes) -> None:
        os.write(self.fd, data)

    def wait_exit(self, timeout: float) -> float:
        """Read until the CLI exited; the seconds it took."""
        start = time.monotonic()
        deadline = start + timeout
        while not self.closed and time.monotonic() < deadline:
            self._read(deadline - time.monotonic())
        while self.status is None and time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = status
            else:
                self._read(0.05)
        assert self.status is not None, f"still running after {timeout}s: {self.text[-2000:]}"
        return time.monotonic() - start

    @property
    def text(self) -> str:
        """What was written, with the CLI's own SGR and cursor sequences taken out."""
        return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", self.seen.decode("utf-8", "replace"))


@contextmanager
def inspect_on_a_pty(mode: str) -> Iterator[Pty]:
    pid, fd = pty.fork()
    if pid == 0:  # the child: the pty is its controlling terminal
        env = {
            key: value
            for key, value in os.environ.items()
            if key not in ("FORCE_COLOR", "NO_COLOR", "COLUMNS", "LINES")
        }
        env["TERM"] = "xterm-256color"
        argv = [sys.executable, "-m", "acpio._cli", "inspect", "--"]
        os.execve(sys.executable, [*argv, sys.executable, HOSTILE_AGENT, mode], env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    session = Pty(pid, fd)
    try:
        yield session
    finally:
        if session.status is None:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)


def test_escapes_from_a_hostile_agent_reach_the_pty_only_escaped() -> None:
    with inspect_on_a_pty("escapes") as terminal:
        terminal.until(b"\xe2\x80\xba ")  # the prompt mark
        terminal.type(b"hi\r")
        terminal.until(b"answer (")
        terminal.type(b"n\r")
        terminal.until(b"end_turn")
        terminal.until(b"\xe2\x80\xba ", timeout=STEP)
        terminal.type(b"\x04")  # Ctrl-D at the prompt quits
        terminal.wait_exit(STEP)
    raw = bytes(terminal.seen)
    for name, sequence in OBEYED.items():
        assert sequence not in raw, f"{name} reached the terminal"
    text = terminal.text
    # Each place an agent string is shown, with its escapes visible (wrapped or not).
    for where in ("hostile", "thinking: said:", "notice", "step", r"\$ make", "tool", "tool text"):
        assert re.search(where + r"[\s│]*\\x1b\]52;c;aGFja2Vk\\x07", text), where
    assert text.count("\\x1b]52;c;aGFja2Vk\\x07") >= 10
    assert "\\x9b2J" in text and "\\u202etxt.exe" in text and "\\x1b[?1049h" in text
    # The permission prompt: its command and directory on lines of their own, escaped.
    assert re.search(r"\n\s*command:\s*\n?\s*ls\\x1b\]52", text)
    assert re.search(r"\n\s*in:\s*\n?\s*/tmp\\x1b\]52", text)


@pytest.mark.parametrize(("keys", "by"), [(b"\x03", "Ctrl-C"), (b"\x04", "Ctrl-D")])
def test_quitting_while_an_agent_floods_permission_requests(keys: bytes, by: str) -> None:
    with inspect_on_a_pty("flood") as terminal:
        terminal.until(b"\xe2\x80\xba ")
        terminal.type(b"flood\r")
        terminal.until(b"answer (")
        terminal.until(b"dismissed unseen")  # the flood is on, and bounded
        terminal.type(keys)
        if by == "Ctrl-C":
            terminal.until(b"cancelling the turn")
            terminal.type(keys)  # the agent ignores the cancel: a second Ctrl-C quits
        took = terminal.wait_exit(QUIT_BOUND)
    assert took < QUIT_BOUND
    text = terminal.text
    assert f"quit ({by})" in text
    assert re.search(r"\d+ permission requests dismissed unseen", text)
    # Only the few that waited for an answer were drawn, never the flood.
    assert text.count("options:") <= 8
