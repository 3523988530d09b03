"""Safe file edits: propose a change as a diff, ask, then apply exactly what was shown.

How this works. :meth:`acpio.ToolCallHandle.propose_edit` (a thin wrapper
around :func:`propose_edit`) resolves the path and reads the file in a worker
thread, shows the diff on the tool call and returns a :class:`FileEdit`; after
permission, :meth:`FileEdit.apply` writes it. Each step refuses rather than
guesses, and every refusal fails the tool call with one plain sentence before
:class:`acpio.EditRefused` is raised.

* **Where.** The path must be absolute. It is resolved with every symlink and
  ``..`` followed (``os.path.realpath``), and that *real* path must lie inside
  one of the session's roots (``cwd`` and ``additional_directories``, resolved
  the same way) or a directory the author passed in ``allow_outside``. The
  diff, the locations and the title show the real path only.
* **What.** Only a regular file (or nothing, for an add) is read: its type is
  checked with ``lstat`` before it is opened, it is opened with
  ``O_NOFOLLOW | O_NONBLOCK`` (a FIFO or device swapped in meanwhile can
  neither block nor be followed) and checked again with ``fstat``; at most
  ``max_bytes`` + 1 bytes are ever read. A pipe, ``/dev/zero`` or the
  agent's own ``/proc/self/fd/0`` is refused at once.
* **No symlink race.** No path is ever handed to the kernel whole. The parent
  directory is opened by walking from ``/`` one component at a time with
  ``O_DIRECTORY | O_NOFOLLOW``; every later operation is relative to that
  directory descriptor (``dir_fd``). A symlink swapped into any component
  after the check makes the walk fail; one swapped in for the file itself is
  never opened (``O_NOFOLLOW``), and the final ``rename`` replaces a
  directory entry, never what a symlink points to. At apply time the
  directory must be the very one seen at propose time (same device and
  inode), so a directory replaced meanwhile is refused too.
* **Compare and swap.** Apply reads the file again and compares it byte for
  byte (and its type) with what the diff was computed from; an add requires
  the name to be still free. Any difference raises :class:`acpio.EditConflict`;
  with ``refresh_on_conflict=True`` a fresh diff is shown instead, for a new
  permission request.
* **Atomic.** The new content goes to a temporary file in the same directory
  (``O_CREAT | O_EXCL | O_NOFOLLOW``), gets the old file's mode (and owner,
  where the agent may set it), is
  ``fsync``-ed, and is renamed over the target (an add or a move links it in,
  so an existing file is never clobbered); then the directory is ``fsync``-ed.
  Readers see the old file or the new one, never a part; on any failure the
  temporary file is removed. A hard link elsewhere keeps the old content.

Blocking calls run in a daemon worker thread that a cancelled caller stops
waiting for (``_in_thread``), so a cancelled turn, or an agent shutting down,
never waits for the file system.
The worker checks a stop flag between steps; apply hands its prepared
temporary file back under a lock, so an abandoned apply cleans up after
itself and never renames anything after its cancellation was seen. Only the
final rename (microseconds) runs without abandon: once it began, the edit is
applied (:attr:`FileEdit.applied`).

POSIX only (``dir_fd`` support).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal, TypeAlias, TypeVar, final

import anyio
import anyio.from_thread
import anyio.lowlevel

from . import schema
from ._diff import diff_of, file_change
from ._errors import EditConflict, EditRefused

if TYPE_CHECKING:
    from ._tool_call import ToolCallHandle

__all__ = ["DEFAULT_MAX_EDIT_BYTES", "EditOperation", "FileEdit", "propose_edit"]

DEFAULT_MAX_EDIT_BYTES: Final = 8 * 1024 * 1024
"""The largest file :func:`propose_edit` reads by default (8 MiB)."""

EditOperation: TypeAlias = Literal["add", "modify", "delete", "move"]
"""What a :class:`FileEdit` does to the file system."""

_StrPath: TypeAlias = str | os.PathLike[str]
_T = TypeVar("_T")

_DIR_FLAGS: Final = (
    os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | getattr(os, "O_PATH", os.O_RDONLY)
)
_READ_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
_TEMP_FLAGS: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK: Final = 1 << 20
# Where a hard link cannot be made, an add or move falls back to a checked rename.
_NO_LINK: Final = frozenset({errno.EPERM, errno.EOPNOTSUPP, errno.ENOSYS, errno.EXDEV})


class _Stopped(Exception):
    """The caller was cancelled; the worker stops at the next step."""


@dataclass(frozen=True, slots=True)
class _Seen:
    """One path as inspected: where it really is and what it held."""

    real: str
    parent: str
    name: str
    dir_id: tuple[int, int]
    file_id: tuple[int, int] | None  # None: absent
    mode: int | None
    owner: tuple[int, int] | None
    content: bytes | None


@final
class FileEdit:
    """One proposed file change, shown on its tool call as a diff; apply it once allowed.

    Made by :meth:`acpio.ToolCallHandle.propose_edit` (never constructed
    directly); see :mod:`acpio._edits` for how each guarantee is kept.

    * ``operation``: ``"add"``, ``"modify"``, ``"delete"`` or ``"move"``.
    * ``path``: the normalised real path written (for a move, the
      destination; for a delete, the deleted file); ``old_path``: the real
      source of a move, else ``None``. The diff, the locations and the title
      show exactly these.
    * ``old``: the exact bytes the diff was computed from (``None`` for an
      add); :meth:`apply` writes only if the file still holds them.
      ``new``: the bytes written (``None`` for a delete).
    * ``diff``: the ``diff`` content item shown on the call; ``title``: the
      call's title (``"Edit /real/path"`` unless the author gave one).
    * ``applied``: true once :meth:`apply` made the change.
    """

    __slots__ = (
        "_allow_outside",
        "_call",
        "_max_bytes",
        "_requested",
        "_source",
        "_target",
        "_title_given",
        "applied",
        "diff",
        "new",
        "old",
        "old_path",
        "operation",
        "path",
        "title",
    )  # fmt: skip

    def __init__(
        self,
        call: ToolCallHandle,
        *,
        operation: EditOperation,
        source: _Seen,
        target: _Seen | None,
        new: bytes | None,
        diff: schema.Diff,
        allow_outside: tuple[str, ...],
        max_bytes: int,
        requested: bytes | None,
        title: str | None,
    ) -> None:
        self._call = call
        self._requested = requested
        self._title_given = title
        self._source = source
        self._target = target
        self._allow_outside = allow_outside
        self._max_bytes = max_bytes
        self.operation: Final = operation
        self.path: Final = target.real if target is not None else source.real
        self.old_path: Final = source.real if target is not None else None
        self.old: Final = source.content
        self.new: Final = new
        self.diff: Final = diff
        self.title: Final = title or _title(operation, self.path, self.old_path)
        self.applied = False

    def __repr__(self) -> str:
        return f"<FileEdit {self.operation} {self.path!r} applied={self.applied}>"

    async def apply(self, *, refresh_on_conflict: bool = False) -> None:
        """Make the change shown, atomically, if the file still is what the diff was made from.

        Call it after the user allowed the edit. The file must still hold
        exactly :attr:`old` (an add: the name is still free; a move: the
        destination too), in the same directory reached without a symlink;
        then the new content is written to a temporary file beside it, with
        the old file's mode, synced and renamed into place. Sets
        :attr:`applied`; the tool call is left open for the author to finish.

        :param refresh_on_conflict: when the file changed meanwhile, show a
            fresh diff against its current content on the call instead of
            failing it; the :class:`acpio.EditConflict` raised then carries
            that new edit in ``fresh`` (ask for permission again before
            applying it).
        :raises EditConflict: when the file (or its directory) changed since
            the diff was shown; nothing was written. The call is failed with
            a sentence saying so, unless ``refresh_on_conflict``.
        :raises EditRefused: when the write itself fails (the sentence says
            why; nothing was changed); the call is failed.
        :raises RuntimeError: when applied twice.
        """
        if self.applied:
            raise RuntimeError(f"{self!r} was already applied")
        try:
            await _apply(self)
        except EditConflict as conflict:
            if not refresh_on_conflict:
                await self._call.fail(str(conflict))
                raise
            fresh = await self.refresh()
            raise EditConflict(str(conflict), fresh=fresh) from None
        except EditRefused as refusal:
            await self._call.fail(str(refusal))
            raise

    async def refresh(self) -> FileEdit:
        """Propose the same new content again against the file as it is now (a fresh diff).

        :raises EditRefused: as :meth:`acpio.ToolCallHandle.propose_edit`.
        """
        return await propose_edit(
            self._call,
            self.old_path if self.old_path is not None else self.path,
            self._requested,
            move_to=self.path if self.old_path is not None else None,
            allow_outside=self._allow_outside,
            max_bytes=self._max_bytes,
            title=self._title_given,
        )


async def propose_edit(
    call: ToolCallHandle,
    path: _StrPath,
    new: str | bytes | None,
    *,
    move_to: _StrPath | None = None,
    allow_outside: Sequence[_StrPath] = (),
    max_bytes: int = DEFAULT_MAX_EDIT_BYTES,
    title: str | None = None,
) -> FileEdit:
    """Inspect ``path`` safely and show the change to ``new`` on ``call``; see ToolCallHandle."""
    if max_bytes < 0:
        raise ValueError(f"max_bytes must be >= 0, got {max_bytes}")
    given = os.fspath(path)
    destination = None if move_to is None else os.fspath(move_to)
    session = call.session
    extra = tuple(os.fspath(p) for p in allow_outside)
    roots = (session.cwd, *session.additional_directories, *extra)
    data = new.encode("utf-8") if isinstance(new, str) else new
    if destination is None:
        operation: EditOperation = "delete" if data is None else "modify"
    else:
        operation = "move"
    plan = _Plan(given, destination, data, roots, max_bytes, operation)
    try:
        _check_absolute(given, destination)
        source, target, diff = await _in_thread(_inspect_all, plan)
    except EditRefused as refusal:
        await call.fail(str(refusal))
        raise
    if operation == "modify" and source.file_id is None:
        operation = "add"
    requested = data
    if operation == "move" and data is None:
        data = source.content
    edit = FileEdit(
        call,
        operation=operation,
        source=source,
        target=target,
        new=data,
        diff=diff,
        allow_outside=extra,
        max_bytes=max_bytes,
        requested=requested,
        title=title,
    )
    locations = [edit.path] if edit.old_path is None else [edit.old_path, edit.path]
    await call.update(title=edit.title, content=[diff], locations=locations)
    return edit


@dataclass(frozen=True, slots=True)
class _Plan:
    """What :func:`propose_edit` asks the worker thread to inspect."""

    given: str
    destination: str | None
    data: bytes | None
    roots: tuple[str, ...]
    max_bytes: int
    operation: EditOperation


def _check_absolute(*paths: str | None) -> None:
    for path in paths:
        # POSIX absolute only: realpath would resolve anything else against
        # the agent's own working directory.
        if path is not None and not os.path.isabs(path):
            raise EditRefused(f"Refused: {path!r} is not an absolute path; nothing was touched.")
        if path is not None and "\x00" in path:
            raise EditRefused(f"Refused: {path!r} contains a NUL character; nothing was touched.")


def _title(operation: EditOperation, path: str, old_path: str | None) -> str:
    if operation == "move":
        return f"Move {old_path} to {path}"
    verb = {"add": "Create", "modify": "Edit", "delete": "Delete"}[operation]
    return f"{verb} {path}"


# ------------------------------------------------------------------ threads


async def _in_thread(
    function: Callable[..., _T], *args: object, stop: threading.Event | None = None
) -> _T:
    """Run ``function(stop, *args)`` in a daemon thread; a cancelled caller stops waiting.

    Not ``anyio.to_thread``: its workers are not daemon threads, so one stuck
    in the kernel (a hung network mount) would keep the process from
    exiting after its client went away. Here the caller sets ``stop`` and
    leaves; the thread finishes (or not) on its own and never reports back.
    """
    stop = stop if stop is not None else threading.Event()
    token = anyio.lowlevel.current_token()
    finished = anyio.Event()
    outcome: list[tuple[bool, object]] = []

    def work() -> None:
        try:
            outcome.append((True, function(stop, *args)))
        except BaseException as exc:  # handed to the caller
            outcome.append((False, exc))
        if not stop.is_set():
            with contextlib.suppress(RuntimeError):  # the event loop is gone
                anyio.from_thread.run_sync(finished.set, token=token)

    threading.Thread(target=work, name="acpio file edit", daemon=True).start()
    try:
        await finished.wait()
    except BaseException:
        stop.set()
        raise
    ((ok, value),) = outcome
    if ok:
        return value  # type: ignore[return-value]
    assert isinstance(value, BaseException)
    raise value


def _check(stop: threading.Event) -> None:
    if stop.is_set():
        raise _Stopped


# ------------------------------------------------------------------ inspecting


def _inspect_all(stop: threading.Event, plan: _Plan) -> tuple[_Seen, _Seen | None, schema.Diff]:
    given, destination, data, max_bytes = plan.given, plan.destination, plan.data, plan.max_bytes
    roots, operation = plan.roots, plan.operation
    real_roots = [os.path.realpath(root) for root in roots]
    verb = {"add": "write", "modify": "write", "delete": "delete", "move": "move"}[operation]
    source = _inspect(stop, given, real_roots, max_bytes, verb=verb)
    _check(stop)
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


def _inspect(
    stop: threading.Event,
    given: str,
    roots: Sequence[str],
    max_bytes: int,
    *,
    verb: str,
    want_absent: bool = False,
) -> _Seen:
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
            return _Seen(real, parent, name, dir_id, None, None, None, None)
        if want_absent:
            raise EditRefused(f"Refused: {shown} already exists; nothing was moved.")
        _require_regular(found.st_mode, shown)
        content = _read(stop, dir_fd, name, expected=found, shown=shown, max_bytes=max_bytes)
        return _Seen(
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
            raise EditConflict(
                f"{shown} was replaced while it was being read; nothing was touched."
            )
        if opened.st_size > max_bytes:
            raise _too_big(shown, max_bytes)
        chunks: list[bytes] = []
        size = 0
        while True:
            _check(stop)
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
        f"Cannot read {shown}: it is larger than {_size(max_bytes)}, the limit for edits; "
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


class _Prepared:
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


class _Handover:
    """Passes the prepared state from the worker to the caller, or back to the worker.

    Whoever takes the lock second learns what the first did: a worker that
    finds the caller gone cleans up itself; a caller cancelled after the
    worker finished cleans up what it left.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.prepared: _Prepared | None = None


async def _apply(edit: FileEdit) -> None:
    handover = _Handover()
    try:
        prepared = await _in_thread(_prepare, handover, edit, stop=handover.stop)
    except BaseException:
        with handover.lock:
            handover.stop.set()
            left = handover.prepared
            handover.prepared = None
        if left is not None:
            # Not on the event loop: even unlinking can hang on a stuck mount.
            threading.Thread(target=left.close, name="acpio file edit", daemon=True).start()
        raise
    # Short and final: once the rename starts, the edit is applied.
    with anyio.CancelScope(shield=True):
        await _in_thread(_commit, prepared, edit)
    edit.applied = True


def _prepare(stop: threading.Event, handover: _Handover, edit: FileEdit) -> _Prepared:
    source = edit._source
    target = edit._target if edit._target is not None else source
    prepared = _Prepared(_reopen_dir(target), None)
    try:
        if edit._target is not None:
            prepared.source_dir_fd = _reopen_dir(source)
            _verify(prepared.source_dir_fd, source, edit.old, edit._max_bytes)
            _verify(prepared.dir_fd, target, None, edit._max_bytes)
        else:
            _verify(prepared.dir_fd, source, edit.old, edit._max_bytes)
        _check(handover.stop)
        if edit.new is not None:
            prepared.temp = _write_temp(prepared.dir_fd, target, edit.new, source)
        with handover.lock:
            _check(handover.stop)
            handover.prepared = prepared
        return prepared
    except BaseException:
        prepared.close()
        raise


def _reopen_dir(seen: _Seen) -> int:
    try:
        fd = _open_dir(seen.parent)
    except OSError:
        raise EditConflict(_dir_changed(seen)) from None
    found = os.fstat(fd)
    if (found.st_dev, found.st_ino) != seen.dir_id:
        os.close(fd)
        raise EditConflict(_dir_changed(seen))
    return fd


def _dir_changed(seen: _Seen) -> str:
    return (
        f"The directory {seen.parent} was moved, replaced or turned into a symbolic link "
        "since the diff was shown; nothing was written."
    )


def _verify(dir_fd: int, seen: _Seen, content: bytes | None, max_bytes: int) -> None:
    """Compare and swap, the compare half: the entry still is exactly what was shown."""
    try:
        found = os.stat(seen.name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        if seen.file_id is None:
            return
        raise EditConflict(
            f"{seen.real} was deleted or moved since the diff was shown; nothing was written."
        ) from None
    if seen.file_id is None:
        raise EditConflict(
            f"{seen.real} was created by someone else since the diff was shown; "
            "nothing was written."
        )
    if stat.S_ISLNK(found.st_mode):
        raise EditConflict(
            f"{seen.real} was replaced by a symbolic link since the diff was shown; "
            "nothing was written."
        )
    if not stat.S_ISREG(found.st_mode):
        raise EditConflict(
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
    except EditConflict:
        raise
    except EditRefused as refusal:
        raise EditConflict(str(refusal)) from None
    if current != content:
        raise EditConflict(
            f"{seen.real} changed since the diff was shown (another program wrote to it); "
            "nothing was written."
        )


def _write_temp(dir_fd: int, target: _Seen, data: bytes, source: _Seen) -> str:
    """Write ``data`` to a new temporary file beside ``target``, with ``source``'s mode."""
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


def _commit(stop: threading.Event, prepared: _Prepared, edit: FileEdit) -> None:
    try:
        _swap(prepared, edit)
    finally:
        prepared.close()


def _swap(prepared: _Prepared, edit: FileEdit) -> None:
    """Compare and swap, the swap half (with the compare again, as late as possible)."""
    source = edit._source
    target = edit._target if edit._target is not None else source
    dir_fd = prepared.dir_fd
    source_dir_fd = prepared.source_dir_fd if prepared.source_dir_fd is not None else dir_fd
    temp = prepared.temp
    if source.file_id is not None:
        _verify(source_dir_fd, source, edit.old, edit._max_bytes)
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
    if edit._target is not None:
        try:
            os.unlink(source.name, dir_fd=source_dir_fd)
        except OSError as exc:
            raise EditRefused(
                f"Wrote {target.real}, but could not remove {source.real}: {_reason(exc)}."
            ) from None
    _sync_dir(dir_fd)
    if prepared.source_dir_fd is not None:
        _sync_dir(prepared.source_dir_fd)


def _link_new(dir_fd: int, temp: str, target: _Seen) -> None:
    """Put the temporary file at ``target`` only if that name is still free."""
    try:
        os.link(temp, target.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    except FileExistsError:
        raise EditConflict(
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
