"""The file system half of safe edits: blocking POSIX calls, run in a worker thread.

Nothing here touches the event loop: :mod:`acpio._handles.edits` runs
:func:`inspect_all`, :func:`prepare` and :func:`commit` in a worker thread and
explains the scheme. Every path reaches the kernel only as one name relative
to a directory descriptor opened by :func:`_open_dir`, which walks from ``/``
one component at a time with ``O_DIRECTORY | O_NOFOLLOW``; every refusal is an
:class:`acpio.EditRefused` whose message is one sentence for a person.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from .. import schema
from .._errors import EditRefused, FileChanged
from .diff import diff_of, file_change

__all__ = [
    "Change",
    "EditOperation",
    "Handover",
    "Plan",
    "Prepared",
    "Seen",
    "Stopped",
    "check",
    "commit",
    "inspect_all",
    "inspect_path",
    "prepare",
]

EditOperation: TypeAlias = Literal["add", "modify", "delete", "move"]
"""What an edit does to the file system."""

_DIR_FLAGS: Final = (
    os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | getattr(os, "O_PATH", os.O_RDONLY)
)
_READ_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
_TEMP_FLAGS: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK: Final = 1 << 20
# Where a hard link cannot be made, an add or move falls back to a checked rename.
_NO_LINK: Final = frozenset({errno.EPERM, errno.EOPNOTSUPP, errno.ENOSYS, errno.EXDEV})


class Stopped(Exception):
    """The caller was cancelled; the worker stops at the next step."""


@dataclass(frozen=True, slots=True)
class Seen:
    """One path as inspected: where it really is and what it held."""

    real: str
    parent: str
    name: str
    dir_id: tuple[int, int]
    file_id: tuple[int, int] | None  # None: absent
    mode: int | None
    owner: tuple[int, int] | None
    content: bytes | None


@dataclass(frozen=True, slots=True)
class Change:
    """What apply needs: the paths as seen when the diff was made, and the bytes."""

    source: Seen
    target: Seen | None  # the destination of a move
    old: bytes | None
    new: bytes | None
    max_bytes: int


@dataclass(frozen=True, slots=True)
class Plan:
    """What :func:`propose_edit` asks the worker thread to inspect."""

    given: str
    destination: str | None
    data: bytes | None
    roots: tuple[str, ...]
    max_bytes: int
    operation: EditOperation


def check(stop: threading.Event) -> None:
    if stop.is_set():
        raise Stopped


# ------------------------------------------------------------------ inspecting


def inspect_all(stop: threading.Event, plan: Plan) -> tuple[Seen, Seen | None, schema.Diff]:
    given, destination, data, max_bytes = plan.given, plan.destination, plan.data, plan.max_bytes
    roots, operation = plan.roots, plan.operation
    real_roots = [os.path.realpath(root) for root in roots]
    verb = {"add": "write", "modify": "write", "delete": "delete", "move": "move"}[operation]
    source = _inspect(stop, given, real_roots, max_bytes, verb=verb)
    check(stop)
    target = None
    if operation == "delete" and source.file_id is None:
        raise EditRefused(f"{_shown(given, source.real)} does not exist; nothing was deleted.")
    if destination is not None:
        if source.file_id is None:
            raise EditRefused(f"{_shown(given, source.real)} does not exist; nothing was moved.")
        target = _inspect(
            stop, destination, real_roots, max_bytes, verb="move to", want_absent=True
        )
        if target.real == source.real:
            raise EditRefused(f"Refused: a move of {source.real} onto itself; nothing was moved.")
        diff = diff_of(
            file_change(
                target.real,
                source.content,
                source.content if data is None else data,
                old_path=source.real,
                operation="move",
            )
        )
    else:
        diff = diff_of(file_change(source.real, source.content, data))
    return source, target, diff


def _shown(given: str, real: str) -> str:
    return real if given == real else f"{given} (really {real})"


def _inside(real: str, roots: Sequence[str]) -> bool:
    for root in roots:
        prefix = root if root.endswith("/") else root + "/"
        if real == root or real.startswith(prefix):
            return True
    return False


def inspect_path(
    stop: threading.Event,
    given: str,
    roots: Sequence[str],
    max_bytes: int,
    *,
    verb: str,
) -> Seen:
    """One path inside ``roots`` (resolved here), inspected and read as an edit's source
    is: the same refusals (:class:`EditRefused`), for the other file helpers."""
    return _inspect(stop, given, [os.path.realpath(root) for root in roots], max_bytes, verb=verb)


def _inspect(
    stop: threading.Event,
    given: str,
    roots: Sequence[str],
    max_bytes: int,
    *,
    verb: str,
    want_absent: bool = False,
) -> Seen:
    real = os.path.realpath(given)
    shown = _shown(given, real)
    if not _inside(real, roots):
        raise EditRefused(
            f"Refused: {shown} is outside the session's directories "
            f"({', '.join(roots)}); nothing was touched."
        )
    try:
        # Follows every link but opens nothing, so a FIFO cannot block it; this is
        # what refuses /proc/self/fd/N, whose "real path" (pipe:[N]) names no file.
        followed: os.stat_result | None = os.stat(given)
    except OSError:
        followed = None
    if followed is not None:
        _require_regular(followed.st_mode, shown)
    parent, name = os.path.split(real)
    if not name:
        raise EditRefused(f"Cannot edit {shown}: it is a directory; nothing was touched.")
    try:
        dir_fd = _open_dir(parent)
    except FileNotFoundError:
        raise EditRefused(
            f"Could not {verb} {shown}: the directory {parent} does not exist; nothing was touched."
        ) from None
    except OSError as exc:
        raise EditRefused(
            f"Could not {verb} {shown}: cannot open the directory {parent} "
            f"({_reason(exc)}); nothing was touched."
        ) from None
    try:
        dir_stat = os.fstat(dir_fd)
        dir_id = (dir_stat.st_dev, dir_stat.st_ino)
        try:
            found = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            if followed is not None:
                raise EditRefused(
                    f"Cannot edit {given}: it exists but resolves to no file in a directory "
                    "(a /proc link?); nothing was touched."
                ) from None
            return Seen(real, parent, name, dir_id, None, None, None, None)
        if want_absent:
            raise EditRefused(f"Refused: {shown} already exists; nothing was moved.")
        _require_regular(found.st_mode, shown)
        content = _read(stop, dir_fd, name, expected=found, shown=shown, max_bytes=max_bytes)
        return Seen(
            real,
            parent,
            name,
            dir_id,
            (found.st_dev, found.st_ino),
            stat.S_IMODE(found.st_mode),
            (found.st_uid, found.st_gid),
            content,
        )
    finally:
        os.close(dir_fd)


def _open_dir(path: str) -> int:
    """Open directory ``path`` walking from ``/`` without following any symlink."""
    fd = os.open("/", _DIR_FLAGS)
    try:
        for part in path.split("/"):
            if not part:
                continue
            # realpath left no "." or ".." behind; a symlink here means a swap.
            following = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = following
    except BaseException:
        os.close(fd)
        raise
    return fd


def _require_regular(mode: int, shown: str) -> None:
    if stat.S_ISREG(mode):
        return
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symbolic link that does not resolve"),
    )
    kind = next((text for test, text in kinds if test(mode)), "not a regular file")
    raise EditRefused(
        f"Cannot read {shown}: it is {kind}, not a regular file; nothing was touched."
    )


def _read(
    stop: threading.Event,
    dir_fd: int,
    name: str,
    *,
    expected: os.stat_result,
    shown: str,
    max_bytes: int,
) -> bytes:
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        raise EditRefused(f"Cannot read {shown}: {_reason(exc)}; nothing was touched.") from None
    try:
        opened = os.fstat(fd)
        _require_regular(opened.st_mode, shown)
        if (opened.st_dev, opened.st_ino) != (expected.st_dev, expected.st_ino):
            raise FileChanged(f"{shown} was replaced while it was being read; nothing was touched.")
        if opened.st_size > max_bytes:
            raise _too_big(shown, max_bytes)
        chunks: list[bytes] = []
        size = 0
        while True:
            check(stop)
            chunk = os.read(fd, min(_CHUNK, max_bytes + 1 - size))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:
                raise _too_big(shown, max_bytes)
    except OSError as exc:
        raise EditRefused(f"Cannot read {shown}: {_reason(exc)}; nothing was touched.") from None
    finally:
        os.close(fd)


def _too_big(shown: str, max_bytes: int) -> EditRefused:
    return EditRefused(
        f"Cannot read {shown}: it is larger than {_size(max_bytes)}, the size limit; "
        "nothing was touched."
    )


def _size(count: int) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= scale and count % scale == 0:
            return f"{count // scale} {unit}"
    return f"{count} bytes"


def _reason(exc: OSError) -> str:
    return (exc.strerror or str(exc)).lower() if exc.errno != errno.ELOOP else "a symbolic link"


# ------------------------------------------------------------------ applying


class Prepared:
    """Open directory descriptors and a written temporary file, ready to be renamed in."""

    def __init__(self, dir_fd: int, source_dir_fd: int | None) -> None:
        self.dir_fd = dir_fd
        self.source_dir_fd = source_dir_fd
        self.temp: str | None = None

    def close(self) -> None:
        if self.temp is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.temp, dir_fd=self.dir_fd)
            self.temp = None
        os.close(self.dir_fd)
        if self.source_dir_fd is not None:
            os.close(self.source_dir_fd)
        self.source_dir_fd = None


class Handover:
    """Passes the prepared state from the worker to the caller, or back to the worker.

    Whoever takes the lock second learns what the first did: a worker that
    finds the caller gone cleans up itself; a caller cancelled after the
    worker finished cleans up what it left.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.prepared: Prepared | None = None


def prepare(stop: threading.Event, handover: Handover, change: Change) -> Prepared:
    source = change.source
    target = change.target if change.target is not None else source
    prepared = Prepared(_reopen_dir(target), None)
    try:
        if change.target is not None:
            prepared.source_dir_fd = _reopen_dir(source)
            _verify(prepared.source_dir_fd, source, change.old, change.max_bytes)
            _verify(prepared.dir_fd, target, None, change.max_bytes)
        else:
            _verify(prepared.dir_fd, source, change.old, change.max_bytes)
        check(handover.stop)
        if change.new is not None:
            prepared.temp = _write_temp(prepared.dir_fd, target, change.new, source)
        with handover.lock:
            check(handover.stop)
            handover.prepared = prepared
        return prepared
    except BaseException:
        prepared.close()
        raise


def _reopen_dir(seen: Seen) -> int:
    try:
        fd = _open_dir(seen.parent)
    except OSError:
        raise FileChanged(_dir_changed(seen)) from None
    found = os.fstat(fd)
    if (found.st_dev, found.st_ino) != seen.dir_id:
        os.close(fd)
        raise FileChanged(_dir_changed(seen))
    return fd


def _dir_changed(seen: Seen) -> str:
    return (
        f"The directory {seen.parent} was moved, replaced or turned into a symbolic link "
        "since the diff was shown; nothing was written."
    )


def _verify(dir_fd: int, seen: Seen, content: bytes | None, max_bytes: int) -> None:
    """Compare and swap, the compare half: the entry still is exactly what was shown."""
    try:
        found = os.stat(seen.name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        if seen.file_id is None:
            return
        raise FileChanged(
            f"{seen.real} was deleted or moved since the diff was shown; nothing was written."
        ) from None
    if seen.file_id is None:
        raise FileChanged(
            f"{seen.real} was created by someone else since the diff was shown; "
            "nothing was written."
        )
    if stat.S_ISLNK(found.st_mode):
        raise FileChanged(
            f"{seen.real} was replaced by a symbolic link since the diff was shown; "
            "nothing was written."
        )
    if not stat.S_ISREG(found.st_mode):
        raise FileChanged(
            f"{seen.real} is no longer a regular file since the diff was shown; "
            "nothing was written."
        )
    try:
        current = _read(
            threading.Event(),
            dir_fd,
            seen.name,
            expected=found,
            shown=seen.real,
            max_bytes=max_bytes,
        )
    except FileChanged:
        raise
    except EditRefused as refusal:
        raise FileChanged(str(refusal)) from None
    if current != content:
        raise FileChanged(
            f"{seen.real} changed since the diff was shown (another program wrote to it); "
            "nothing was written."
        )


def _write_temp(dir_fd: int, target: Seen, data: bytes, source: Seen) -> str:
    """Write ``data`` to a new temporary file beside ``target``, with ``source``'s mode."""
    import secrets  # noqa: PLC0415 - only when a file is edited

    mode = source.mode
    temp = f".{target.name[:200]}.{secrets.token_hex(6)}.acpio-edit"
    try:
        # A new file gets the usual mode (0o666 less the umask), a kept one its own.
        fd = os.open(temp, _TEMP_FLAGS, 0o600 if mode is not None else 0o666, dir_fd=dir_fd)
    except OSError as exc:
        raise EditRefused(
            f"Could not write {target.real}: {_reason(exc)}; nothing was changed."
        ) from None
    try:
        try:
            if source.owner is not None:
                # Only root may give a file away; for anyone else this is a no-op
                # (same owner) or refused, and the file stays the agent's own.
                with contextlib.suppress(OSError):
                    os.fchown(fd, *source.owner)
            if mode is not None:
                os.fchmod(fd, mode)  # after fchown, which clears set-id bits
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=dir_fd)
        raise EditRefused(
            f"Could not write {target.real}: {_reason(exc)}; nothing was changed."
        ) from None
    return temp


def commit(stop: threading.Event, prepared: Prepared, change: Change) -> None:
    try:
        _swap(prepared, change)
    finally:
        prepared.close()


def _swap(prepared: Prepared, change: Change) -> None:
    """Compare and swap, the swap half (with the compare again, as late as possible)."""
    source = change.source
    target = change.target if change.target is not None else source
    dir_fd = prepared.dir_fd
    source_dir_fd = prepared.source_dir_fd if prepared.source_dir_fd is not None else dir_fd
    temp = prepared.temp
    if source.file_id is not None:
        _verify(source_dir_fd, source, change.old, change.max_bytes)
    try:
        if temp is None:
            os.unlink(source.name, dir_fd=dir_fd)
        elif target.file_id is None:
            _link_new(dir_fd, temp, target)
        else:
            os.rename(temp, target.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            prepared.temp = None
    except OSError as exc:
        verb = "delete" if temp is None else "write"
        raise EditRefused(
            f"Could not {verb} {target.real}: {_reason(exc)}; nothing was changed."
        ) from None
    if change.target is not None:
        try:
            os.unlink(source.name, dir_fd=source_dir_fd)
        except OSError as exc:
            raise EditRefused(
                f"Wrote {target.real}, but could not remove {source.real}: {_reason(exc)}."
            ) from None
    _sync_dir(dir_fd)
    if prepared.source_dir_fd is not None:
        _sync_dir(prepared.source_dir_fd)


def _link_new(dir_fd: int, temp: str, target: Seen) -> None:
    """Put the temporary file at ``target`` only if that name is still free."""
    try:
        os.link(temp, target.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    except FileExistsError:
        raise FileChanged(
            f"{target.real} was created by someone else since the diff was shown; "
            "nothing was written."
        ) from None
    except OSError as exc:
        if exc.errno not in _NO_LINK:
            raise
        _verify(dir_fd, target, None, 0)
        os.rename(temp, target.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)


def _sync_dir(dir_fd: int) -> None:
    try:
        fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)
