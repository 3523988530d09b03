"""Where the default session store lives, and whether the process owning a session lives.

How this works: :func:`default_store_path` picks a per-user state directory
(``$XDG_STATE_HOME`` or ``~/.local/state`` on Linux and other Unixes,
``~/Library/Application Support`` on macOS, ``%LOCALAPPDATA%`` on Windows),
overridable with ``ACPIO_STATE_DIR``, and a file named after the agent in it;
``ACPIO_SESSION_STORE`` names the file itself (or ``memory`` for no file).
A session row names its owner by process id and that process's start time,
so a process id reused after a crash is not mistaken for the owner, and
an owner that exited but was not reaped yet (a zombie, on Linux) is dead.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Final

from .._protocol.paths import is_local_absolute

__all__ = [
    "MEMORY_VALUES",
    "SESSION_STORE_ENV",
    "STATE_DIR_ENV",
    "default_store_path",
    "owner_alive",
    "process_start",
    "state_dir",
]

STATE_DIR_ENV: Final = "ACPIO_STATE_DIR"
SESSION_STORE_ENV: Final = "ACPIO_SESSION_STORE"
MEMORY_VALUES: Final = frozenset({"memory", ":memory:", "none", "off"})
STORE_FILE: Final = "sessions.sqlite3"


def _state_home() -> Path:
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA")
        return Path(base) if base else Path.home() / "AppData" / "Local"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support"
    base = os.environ.get("XDG_STATE_HOME")
    # The XDG spec: a relative value is invalid and must be ignored.
    if base and is_local_absolute(base):
        return Path(base)
    return Path.home() / ".local" / "state"


def _safe_name(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")
    return cleaned[:100] or "acpio-agent"


def state_dir(agent_name: str) -> Path:
    """The per-user directory of what agent ``agent_name`` keeps (sessions, a stored key):
    ``<ACPIO_STATE_DIR or the platform's state directory>/<agent name>``."""
    base = os.environ.get(STATE_DIR_ENV)
    root = Path(base).expanduser() if base else _state_home()
    return root / _safe_name(agent_name)


def default_store_path(agent_name: str) -> Path | None:
    """The session store file of an agent named ``agent_name``; ``None`` for in memory.

    ``ACPIO_SESSION_STORE`` (a file path, or ``memory``) wins; else the file is
    ``<state dir>/<agent name>/sessions.sqlite3`` where the state directory is
    ``ACPIO_STATE_DIR`` or the platform's per-user state directory.
    """
    explicit = os.environ.get(SESSION_STORE_ENV)
    if explicit:
        if explicit.strip().lower() in MEMORY_VALUES:
            return None
        return Path(explicit).expanduser()
    base = os.environ.get(STATE_DIR_ENV)
    root = Path(base).expanduser() if base else _state_home()
    return root / _safe_name(agent_name) / STORE_FILE


def _proc_stat(pid: int) -> list[bytes]:
    """The fields of ``/proc/<pid>/stat`` after the command name (Linux); empty elsewhere."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return []


def process_start(pid: int) -> str:
    """A token of when process ``pid`` started (Linux: its start time in ticks); ``""``
    where the platform does not tell."""
    fields = _proc_stat(pid)
    # Field 22 of stat(5), counted after the command name's closing parenthesis.
    return fields[19].decode() if len(fields) > 19 else ""


_SELF_PID: Final = os.getpid()
_SELF_START: Final = process_start(_SELF_PID)


def _pid_alive(pid: int) -> bool:
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        import ctypes  # noqa: PLC0415 - Windows only

        kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
        handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return False
        try:
            code = ctypes.c_ulong()
            ok = kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
            return bool(ok) and code.value == 259  # STILL_ACTIVE
        finally:
            kernel32.CloseHandle(handle)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, another user's
    except OSError:
        return False
    return True


def owner_alive(pid: int | None, start: str | None) -> bool:
    """Whether the process recorded as ``pid`` (started at ``start``) still runs.

    This process counts as alive only when the start matches: a row left by
    an earlier process with the same id (after a crash) is not ours. A
    process that exited but was not reaped by its parent yet (state ``Z``
    or ``X`` in ``/proc/<pid>/stat``) is dead: it serves nothing any more.
    """
    if pid is None:
        return False
    if pid == os.getpid():
        return (start or "") == current_owner()[1]
    if not _pid_alive(pid):
        return False
    fields = _proc_stat(pid)
    if fields and fields[0] in (b"Z", b"X"):
        return False  # exited, not reaped yet
    if start and len(fields) > 19:
        now = fields[19].decode()
        if now != start:
            return False  # the id was reused by a newer process
    return True


def current_owner() -> tuple[int, str]:
    """This process's owner token: its id and its start time."""
    pid = os.getpid()
    if pid == _SELF_PID:
        return pid, _SELF_START
    return pid, process_start(pid)  # forked since import
