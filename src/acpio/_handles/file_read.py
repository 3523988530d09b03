"""Reading a file safely: through the editor when it offers ``fs.readTextFile``, else from disk.

How this works: :func:`read_file` resolves the path (relative to the session's
``cwd``, every symlink and ``..`` followed) and refuses, with
:class:`~acpio.ReadRefused` and one sentence for a person, whatever
:meth:`acpio.ToolCallHandle.propose_edit` would refuse: a real path outside the
session's directories (``cwd``, ``additional_directories``, ``allow_outside``),
something that is not a regular file (a FIFO, a device, ``/proc/self/fd/0``),
a file over ``max_bytes``. The same inspection as an edit's does it
(:mod:`acpio._handles.edit_fs`: no symlink followed while opening, a file
swapped in meanwhile refused, at most ``max_bytes`` + 1 bytes read), in a
daemon thread a cancelled caller stops waiting for.

When the client offers ``fs.readTextFile`` (v1), the text comes from the
editor instead, so the agent sees unsaved changes: the same containment
check is made first (and a file that exists on disk must be a regular one);
a path that exists only as an unsaved buffer is read too. The editor's error
answer, or no answer within ``SessionLimits.client_request_timeout``, becomes
a :class:`~acpio.ReadRefused` naming the path, the editor's message and its
code: never a bare JSON-RPC error text.

Bytes from disk are decoded as UTF-8, undecodable bytes replaced (U+FFFD).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from .._errors import (
    ConnectionClosed,
    EditRefused,
    ReadRefused,
    RemoteProtocolError,
    RequestError,
    RequestTimeout,
)
from .edit_fs import check, inspect_path
from .edits import in_thread, session_path

if TYPE_CHECKING:
    from .host import HandleParts

__all__ = ["DEFAULT_MAX_READ_BYTES", "read_file"]

DEFAULT_MAX_READ_BYTES: Final = 8 * 1024 * 1024
"""The largest file :func:`read_file` reads by default (8 MiB), as for edits."""


async def read_file(
    channel: HandleParts,
    cwd: str,
    roots: Sequence[str],
    path: str | os.PathLike[str],
    *,
    max_bytes: int = DEFAULT_MAX_READ_BYTES,
) -> str:
    """The text of ``path`` (see the module docstring); :raises ReadRefused: saying why."""
    if max_bytes < 0:
        raise ValueError(f"max_bytes must be >= 0, got {max_bytes}")
    given = session_path(os.fspath(path), cwd, ReadRefused)
    if "\x00" in given:
        raise ReadRefused(f"Refused: {given!r} contains a NUL character; nothing was read.")
    through_editor = channel.peer.read_text_file  # (a v1 client service)
    try:
        seen = await in_thread(_inspect, given, tuple(roots), max_bytes, through_editor)
    except ReadRefused:
        raise
    except EditRefused as refusal:
        raise ReadRefused(_as_read(str(refusal))) from None
    real, data = seen
    if through_editor:
        return await _from_editor(channel, real, max_bytes)
    assert data is not None
    return data.decode("utf-8", "replace")


def _inspect(
    stop: threading.Event, given: str, roots: tuple[str, ...], max_bytes: int, editor: bool
) -> tuple[str, bytes | None]:
    """The real path and, unless the editor is to be asked, the bytes on disk."""
    seen = inspect_path(stop, given, roots, max_bytes, verb="read")
    check(stop)
    if seen.file_id is None and not editor:
        shown = seen.real if given == seen.real else f"{given} (really {seen.real})"
        raise ReadRefused(f"Cannot read {shown}: there is no such file.")
    return seen.real, (None if editor else (seen.content or b""))


def _as_read(sentence: str) -> str:
    """An edit's refusal as a read's (nothing was read, rather than touched)."""
    return sentence.replace("nothing was touched", "nothing was read")


async def _from_editor(channel: HandleParts, real: str, max_bytes: int) -> str:
    try:
        text = await channel.host.read_text_file(channel, real, None, None)
    except RequestError as exc:
        raise ReadRefused(
            f"The editor could not read {real}: {exc.message} (error {exc.code})."
        ) from None
    except RequestTimeout as exc:
        raise ReadRefused(f"The editor did not give {real}: {exc}.") from None
    except (RemoteProtocolError, ConnectionClosed) as exc:
        raise ReadRefused(f"The editor did not give {real}: {exc}.") from None
    if len(text) > max_bytes or len(text.encode("utf-8", "replace")) > max_bytes:
        raise ReadRefused(
            f"Cannot read {real}: the editor's text is larger than {max_bytes} bytes, the "
            "limit; nothing was read."
        )
    return text
