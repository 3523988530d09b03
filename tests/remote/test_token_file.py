"""``acpio serve --token-file``: one ``PRINCIPAL TOKEN`` per line, a file only its owner reads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from acpio.remote import read_token_file

from .server import EXAMPLES, REPO


def _write(path: Path, text: str, mode: int = 0o600) -> Path:
    path.write_text(text)
    path.chmod(mode)
    return path


def test_each_line_names_a_principal_and_its_token(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "tokens",
        "# who may connect\n\nalice  s3cret-a\n  bob\ts3cret-b  \n"
        "#carol s3cret-c\nalice s3cret-a2\n",
    )
    assert read_token_file(path) == {
        "s3cret-a": "alice",
        "s3cret-b": "bob",
        "s3cret-a2": "alice",  # a principal may have several tokens (rotation)
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("alice\n", "line 1: expected `PRINCIPAL TOKEN` (two fields), got 1 field"),
        ("# c\nalice a b\n", "line 2: expected `PRINCIPAL TOKEN` (two fields), got 3 fields"),
        ("alice tok\nbob tok\n", "line 2: this token is already given to 'alice'"),
        ("# nobody\n\n", "names no `PRINCIPAL TOKEN` line"),
    ],
)
def test_a_malformed_file_is_refused_without_showing_a_token(
    tmp_path: Path, text: str, message: str
) -> None:
    path = _write(tmp_path / "tokens", text)
    with pytest.raises(ValueError) as refused:
        read_token_file(path)
    assert message in str(refused.value)
    assert "tok\n" not in str(refused.value) and " b\n" not in str(refused.value)


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o620, 0o644])
def test_a_file_others_may_access_is_refused(tmp_path: Path, mode: int) -> None:
    path = _write(tmp_path / "tokens", "alice s3cret\n", mode)
    with pytest.raises(ValueError) as refused:
        read_token_file(path)
    text = str(refused.value)
    assert f"(mode {mode:04o})" in text
    assert f"chmod 600 {path}" in text


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"cannot read the token file .*nowhere"):
        read_token_file(tmp_path / "nowhere")


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "acpio._cli", "serve", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        check=False,
        env={**os.environ, "ACPIO_TEST_TOKEN": "x"},
    )


def test_serve_refuses_a_readable_token_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "tokens", "alice s3cret\n", 0o644)
    completed = _serve("--token-file", str(path), f"{EXAMPLES}/echo_agent.py:EchoAgent")
    assert completed.returncode == 2
    assert "accessible to its group or others" in completed.stderr
    assert "s3cret" not in completed.stderr


def test_serve_refuses_both_kinds_of_token(tmp_path: Path) -> None:
    path = _write(tmp_path / "tokens", "alice s3cret\n")
    completed = _serve(
        "--token-env",
        "ACPIO_TEST_TOKEN",
        "--token-file",
        str(path),
        f"{EXAMPLES}/echo_agent.py:EchoAgent",
    )
    assert completed.returncode == 2
    assert "--token-env or --token-file, not both" in completed.stderr


def test_serve_refuses_a_session_limit_below_one() -> None:
    completed = _serve("--max-sessions", "0", f"{EXAMPLES}/echo_agent.py:EchoAgent")
    assert completed.returncode == 2
    assert "--max-sessions must be at least 1" in completed.stderr
