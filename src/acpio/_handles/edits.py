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

The blocking half lives in :mod:`acpio._handles.edit_fs`. POSIX only (``dir_fd``).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Sequence
from typing import Final, Protocol, TypeAlias, TypeVar, final

import anyio
import anyio.lowlevel
from msgspec import UNSET, UnsetType

from .. import schema
from .._errors import EditRefused, FileChanged
from .._protocol.paths import is_local_absolute
from .edit_fs import Change, EditOperation, Handover, Plan, Seen, commit, inspect_all, prepare


class EditRoots(Protocol):
    """The session an edit belongs to: the directories it may write in."""

    @property
    def cwd(self) -> str: ...

    @property
    def additional_directories(self) -> Sequence[str]: ...


class EditedCall(Protocol):
    """The tool call that shows an edit (:class:`acpio.ToolCallHandle`)."""

    @property
    def session(self) -> EditRoots: ...

    async def fail(self, message: str | None = None) -> None:
        """Fail the call with ``message`` (an edit refused or in conflict)."""
        ...

    async def update(
        self,
        *,
        title: str | UnsetType | None = UNSET,
        content: Sequence[schema.ToolCallContent] | UnsetType | None = UNSET,
        locations: Sequence[str] | UnsetType | None = UNSET,
    ) -> None:
        """Show the edit: its title, its diff as the content, its path(s) as locations."""
        ...


__all__ = [
    "DEFAULT_MAX_EDIT_BYTES",
    "EditOperation",
    "EditRoots",
    "EditConflict",
    "EditedCall",
    "FileEdit",
    "in_thread",
    "propose_edit",
    "session_path",
]

DEFAULT_MAX_EDIT_BYTES: Final = 8 * 1024 * 1024
"""The largest file :func:`propose_edit` reads by default (8 MiB)."""


_StrPath: TypeAlias = str | os.PathLike[str]
_T = TypeVar("_T")


@final
class EditConflict(EditRefused):
    """Raised when a file changed between the diff shown and the apply; nothing was written.

    ``fresh`` is the edit proposed again against the current content when
    the author asked for it (``refresh_on_conflict=True``), else ``None``.
    """

    def __init__(self, message: str, *, fresh: FileEdit | None = None) -> None:
        super().__init__(message)
        self.fresh: FileEdit | None = fresh


class FileEdit:
    """One proposed file change, shown on its tool call as a diff; apply it once allowed.

    Made by :meth:`acpio.ToolCallHandle.propose_edit` (never constructed
    directly); the "File edits" promise of the Guarantees page says how each
    guarantee is kept and which test proves it.

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
        call: EditedCall,
        *,
        operation: EditOperation,
        source: Seen,
        target: Seen | None,
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
        self.applied: bool = False

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
            await self._apply_change()
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

    async def _apply_change(self) -> None:
        """Write the change: prepare it in a thread, then the short, final commit."""
        change = Change(self._source, self._target, self.old, self.new, self._max_bytes)
        handover = Handover()
        try:
            prepared = await _in_thread(prepare, handover, change, stop=handover.stop)
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
            await _in_thread(commit, prepared, change)
        self.applied = True


async def propose_edit(
    call: EditedCall,
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
    try:
        given = session_path(given, session.cwd, EditRefused)
        if destination is not None:
            destination = session_path(destination, session.cwd, EditRefused)
        _check_absolute(given, destination)
        data = _encoded(new, given)
        if destination is None:
            operation: EditOperation = "delete" if data is None else "modify"
        else:
            operation = "move"
        plan = Plan(given, destination, data, roots, max_bytes, operation)
        source, target, diff = await _in_thread(inspect_all, plan)
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


def session_path(path: str, cwd: str, refused: type[EditRefused]) -> str:
    """``path`` as given when absolute, else joined to the session's ``cwd`` (models write
    paths relative to the project); a relative path with no absolute ``cwd`` is ``refused``."""
    if "\x00" in path or is_local_absolute(path):
        return path
    if not is_local_absolute(cwd):
        raise refused(
            f"Refused: {path!r} is relative and the session's directory {cwd!r} is not an "
            "absolute path; nothing was touched."
        )
    return os.path.join(cwd, path)


def _check_absolute(*paths: str | None) -> None:
    for path in paths:
        # POSIX absolute only: realpath would resolve anything else against
        # the agent's own working directory.
        if path is not None and "\x00" not in path and not is_local_absolute(path):
            raise EditRefused(f"Refused: {path!r} is not an absolute path; nothing was touched.")
        if path is not None and "\x00" in path:
            raise EditRefused(f"Refused: {path!r} contains a NUL character; nothing was touched.")


def _encoded(new: str | bytes | None, path: str) -> bytes | None:
    if not isinstance(new, str):
        return new
    try:
        return new.encode("utf-8")
    except UnicodeEncodeError:
        raise EditRefused(
            f"Refused: the new content of {path} is not valid text (a lone surrogate) "
            "and cannot be written as UTF-8; nothing was touched."
        ) from None


def _title(operation: EditOperation, path: str, old_path: str | None) -> str:
    if operation == "move":
        return f"Move {old_path} to {path}"
    verb = {"add": "Create", "modify": "Edit", "delete": "Delete"}[operation]
    return f"{verb} {path}"


# ------------------------------------------------------------------ threads


async def in_thread(
    function: Callable[..., _T], *args: object, stop: threading.Event | None = None
) -> _T:
    """:func:`_in_thread`, for the other file helpers (reading)."""
    return await _in_thread(function, *args, stop=stop)


async def _in_thread(
    function: Callable[..., _T], *args: object, stop: threading.Event | None = None
) -> _T:
    """Run ``function(stop, *args)`` in a daemon thread; a cancelled caller stops waiting.

    Not ``anyio.to_thread``: its workers are not daemon threads, so one stuck
    in the kernel (a hung network mount) would keep the process from
    exiting after its client went away. Here the caller sets ``stop`` and
    leaves; the thread finishes (or not) on its own and never reports back.
    """
    from anyio.from_thread import run_sync  # noqa: PLC0415 - only when a file is edited

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
                run_sync(finished.set, token=token)

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
    if isinstance(value, FileChanged):
        raise EditConflict(str(value)) from None
    raise value
