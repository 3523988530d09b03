"""Safe file edits (``ToolCallHandle.propose_edit`` / ``FileEdit.apply``), driven like an editor.

Every test runs a real agent in process through the testing kit's MockClient
(strict conformance checking, both anyio backends) and checks the proof on
disk: what was written, what was not, and what the user was shown (the
diff, the locations, the titles) while deciding. Concurrent changes are made
by the permission policy, that is while the user is being asked.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.to_thread
import pytest
from docs_pages import blocks as page_blocks
from docs_pages import text as page_text

import acpio
from acpio import schema
from acpio._handles.edits import _in_thread
from acpio.testing import MockClient, PermissionRequest, ToolCallView

pytestmark = pytest.mark.anyio

ALLOW: Mapping[str, object] = {"outcome": "selected", "optionId": "allow_once"}
Decide = Callable[[PermissionRequest], Mapping[str, object]]


@dataclass
class Seen:
    """What one edit turn showed and did."""

    call: ToolCallView
    requests: list[PermissionRequest]
    refusals: list[acpio.EditRefused] = field(default_factory=list)
    edits: list[acpio.FileEdit] = field(default_factory=list)
    shown: list[tuple[str | None, list[str], list[schema.Diff]]] = field(default_factory=list)

    @property
    def diff(self) -> schema.Diff:
        (diff,) = self.call.diffs
        return diff


class EditOnce(acpio.Agent):
    """Proposes one edit, asks, applies it if allowed; records what happened."""

    def __init__(self, path: str | Path, new: str | bytes | None, **options: object) -> None:
        self.path = path
        self.new = new
        self.options = options
        self.refusals: list[acpio.EditRefused] = []
        self.edits: list[acpio.FileEdit] = []

    async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
        async with session.tool_call("Edit a file", kind="edit") as call:
            try:
                edit = await call.propose_edit(self.path, self.new, **self.options)  # type: ignore[arg-type]
                self.edits.append(edit)
                outcome = await call.request_permission(title=f"{edit.title}?")
                if not outcome.allowed:
                    await call.fail("Permission denied.")
                    return "end_turn"
                await edit.apply()
            except acpio.EditRefused as refusal:
                self.refusals.append(refusal)
        return "end_turn"


async def edit_once(
    cwd: Path,
    path: str | Path,
    new: str | bytes | None,
    *,
    decide: Decide | None = None,
    additional_directories: Sequence[str] | None = None,
    **options: object,
) -> Seen:
    agent = EditOnce(path, new, **options)
    shown: list[tuple[str | None, list[str], list[schema.Diff]]] = []

    def policy(request: PermissionRequest) -> Mapping[str, object]:
        # What the user sees while deciding.
        (call,) = client.sessions[str(request.session_id)].view.tool_calls.values()
        shown.append((call.title, [loc.path for loc in call.locations], call.diffs))
        return decide(request) if decide is not None else ALLOW

    async with MockClient(agent, policy=policy, cwd=cwd) as client:
        session = await client.new_session(additional_directories=additional_directories)
        with anyio.fail_after(10):
            result = await session.prompt("edit")
        assert result.stop_reason == "end_turn"
        (call,) = session.view.tool_calls.values()
        assert client.violations == []
        return Seen(call, list(client.permission_requests), agent.refusals, agent.edits, shown)


def refused(seen: Seen, *phrases: str) -> str:
    """The refusal is a failed call with a sentence; nothing was asked or shown."""
    (refusal,) = seen.refusals
    assert seen.call.status == "failed"
    assert str(refusal) in seen.call.text
    for phrase in phrases:
        assert phrase in str(refusal), str(refusal)
    assert seen.requests == []
    assert seen.call.diffs == [] and seen.call.locations == []
    return str(refusal)


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    """``tmp_path/proj`` (the session's cwd) beside ``tmp_path/outside/target.txt``."""
    (tmp_path / "proj").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "target.txt").write_text("outside\n")
    return tmp_path / "proj"


def outside_untouched(proj: Path) -> None:
    outside = proj.parent / "outside"
    assert sorted(p.name for p in outside.iterdir()) == ["target.txt"]
    assert (outside / "target.txt").read_text() == "outside\n"


# ---------------------------------------------------------------- where


async def test_a_directory_symlink_out_of_the_project_is_refused(proj: Path) -> None:
    (proj / "link").symlink_to("../outside")
    seen = await edit_once(proj, proj / "link" / "new.txt", "x\n")
    message = refused(seen, "outside the session's directories", "nothing was touched")
    # The person reads both the path given and where it really leads.
    assert f"{proj}/link/new.txt (really {proj.parent}/outside/new.txt)" in message
    outside_untouched(proj)


async def test_a_file_symlink_out_of_the_project_is_refused(proj: Path) -> None:
    (proj / "f.txt").symlink_to(proj.parent / "outside" / "target.txt")
    seen = await edit_once(proj, proj / "f.txt", "overwritten\n")
    refused(seen, "outside the session's directories")
    outside_untouched(proj)
    assert (proj / "f.txt").is_symlink()


async def test_dot_dot_out_of_the_project_is_refused(proj: Path) -> None:
    (proj / "sub").mkdir()
    seen = await edit_once(proj, f"{proj}/sub/../../outside/x", "x\n")
    refused(seen, f"(really {proj.parent}/outside/x)", "outside the session's directories")
    outside_untouched(proj)


async def test_relative_paths_are_relative_to_the_sessions_cwd(proj: Path) -> None:
    # Issue 31: models write paths relative to the project; the session knows its cwd.
    (proj / "sub").mkdir()
    seen = await edit_once(proj, "sub/notes.txt", "x\n")
    assert seen.call.status == "completed"
    assert (proj / "sub" / "notes.txt").read_text() == "x\n"
    assert seen.call.title == f"Create {proj}/sub/notes.txt"
    seen = await edit_once(proj, "../outside/target.txt", "overwritten\n")
    refused(seen, f"(really {proj.parent}/outside/target.txt)", "outside the session's")
    outside_untouched(proj)


async def test_everything_shown_is_the_real_path(proj: Path) -> None:
    # A symlink inside the project, and ".." after a symlinked directory: the
    # real path of deep/../x.txt is a/x.txt, not proj/x.txt.
    (proj / "a" / "b").mkdir(parents=True)
    (proj / "a" / "x.txt").write_text("old\n")
    (proj / "deep").symlink_to(proj / "a" / "b")
    real = str(proj / "a" / "x.txt")
    seen = await edit_once(proj, f"{proj}/deep/../x.txt", "new\n")

    assert (proj / "a" / "x.txt").read_text() == "new\n"
    assert not (proj / "x.txt").exists()
    ((title, locations, diffs),) = seen.shown
    assert title == f"Edit {real}"
    assert locations == [real]
    (change,) = diffs[0].changes
    assert isinstance(change, schema.ModifyChange) and change.path == real
    assert isinstance(diffs[0].patch, schema.DiffPatch)
    assert f"--- {real}\n+++ {real}\n" in diffs[0].patch.text
    (request,) = seen.requests
    assert request.title == f"Edit {real}?"
    assert seen.call.status == "completed"


async def test_a_symlink_inside_the_project_edits_its_target(proj: Path) -> None:
    (proj / "real.txt").write_text("one\n")
    (proj / "alias.txt").symlink_to("real.txt")
    seen = await edit_once(proj, proj / "alias.txt", "two\n")
    assert seen.edits[0].path == str(proj / "real.txt")
    assert (proj / "real.txt").read_text() == "two\n"
    assert (proj / "alias.txt").is_symlink()


async def test_additional_directories_and_explicit_allowances_are_roots(proj: Path) -> None:
    extra = proj.parent / "extra"
    extra.mkdir()
    seen = await edit_once(proj, extra / "a.txt", "a\n", additional_directories=[str(extra)])
    assert seen.call.status == "completed" and (extra / "a.txt").read_text() == "a\n"

    outside = proj.parent / "outside"
    seen = await edit_once(proj, outside / "b.txt", "b\n", allow_outside=[outside])
    assert seen.call.status == "completed" and (outside / "b.txt").read_text() == "b\n"


# ---------------------------------------------------------------- what


async def test_a_fifo_is_refused_at_once(proj: Path) -> None:
    os.mkfifo(proj / "pipe")
    (proj / "to-pipe").symlink_to("pipe")
    for path in (proj / "pipe", proj / "to-pipe"):
        seen = await edit_once(proj, path, "x\n")
        refused(seen, "it is a named pipe (FIFO), not a regular file")
    assert stat.S_ISFIFO(os.lstat(proj / "pipe").st_mode)


async def test_dev_zero_is_refused_even_when_allowed(proj: Path) -> None:
    seen = await edit_once(proj, "/dev/zero", "x\n")
    refused(seen, "outside the session's directories")
    seen = await edit_once(proj, "/dev/zero", "x\n", allow_outside=["/dev"])
    refused(seen, "Cannot read /dev/zero: it is a character device, not a regular file")


async def test_the_agents_own_pipe_is_refused(proj: Path) -> None:
    # /proc/self/fd/N of a pipe: what an agent's protocol stdin is. Its "real
    # path" is /proc/<pid>/fd/pipe:[inode], which names no file.
    read_end, write_end = os.pipe()
    try:
        path = f"/proc/self/fd/{read_end}"
        refused(await edit_once(proj, path, "x\n"), "outside the session's directories")
        seen = await edit_once(proj, path, "x\n", allow_outside=["/proc"])
        refused(seen, f"Cannot read {path} (really /proc/", "named pipe (FIFO)")
    finally:
        os.close(read_end)
        os.close(write_end)


async def test_a_directory_is_refused(proj: Path) -> None:
    (proj / "dir").mkdir()
    refused(await edit_once(proj, proj / "dir", "x\n"), "Cannot read", "it is a directory")


async def test_a_file_over_the_bound_is_refused_without_reading_it(proj: Path) -> None:
    small = proj / "small.txt"
    small.write_bytes(b"x" * 1001)
    refused(
        await edit_once(proj, small, "y\n", max_bytes=1000),
        "larger than 1000 bytes, the size limit",
    )
    # Sparse: its size says it all; nothing is read or kept in memory.
    huge = proj / "huge.bin"
    with huge.open("wb") as f:
        f.truncate(acpio.DEFAULT_MAX_EDIT_BYTES + 1)
    refused(await edit_once(proj, huge, "y\n"), "larger than 8 MiB")
    assert small.read_bytes() == b"x" * 1001
    seen = await edit_once(proj, small, "y\n", max_bytes=1001)
    assert seen.call.status == "completed" and small.read_text() == "y\n"


async def test_a_missing_directory_is_refused(proj: Path) -> None:
    seen = await edit_once(proj, proj / "missing" / "f.txt", "x\n")
    refused(seen, "Could not write", f"the directory {proj}/missing does not exist")
    seen = await edit_once(proj, proj / "missing" / "f.txt", None)
    refused(seen, f"Could not delete {proj}/missing/f.txt: the directory")


# ---------------------------------------------------------------- compare and swap


async def test_a_change_between_the_diff_and_the_allow_is_not_overwritten(proj: Path) -> None:
    path = proj / "f.txt"
    path.write_text("one\n")

    def formatter_runs(request: PermissionRequest) -> Mapping[str, object]:
        path.write_text("one, formatted\n")
        return ALLOW

    seen = await edit_once(proj, path, "two\n", decide=formatter_runs)
    assert path.read_text() == "one, formatted\n"
    assert seen.call.status == "failed"
    assert f"{path} changed since the diff was shown" in seen.call.text
    assert isinstance(seen.refusals[0], acpio.EditConflict)
    assert seen.refusals[0].fresh is None


async def test_a_conflict_can_show_a_fresh_diff(proj: Path) -> None:
    path = proj / "f.txt"
    path.write_text("one\n")
    diffs: list[str] = []

    class Retrying(acpio.Agent):
        async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
            async with session.tool_call("Edit", kind="edit") as call:
                edit = await call.propose_edit(path, "two\n")
                for _ in range(2):
                    assert (await call.request_permission()).allowed
                    try:
                        await edit.apply(refresh_on_conflict=True)
                        break
                    except acpio.EditConflict as conflict:
                        assert conflict.fresh is not None
                        edit = conflict.fresh
            return "end_turn"

    def decide(request: PermissionRequest) -> Mapping[str, object]:
        (call,) = client.sessions[str(request.session_id)].view.tool_calls.values()
        patch = call.diffs[0].patch
        assert isinstance(patch, schema.DiffPatch)
        diffs.append(patch.text)
        if len(diffs) == 1:
            path.write_text("zero\n")
        return ALLOW

    async with MockClient(Retrying(), policy=decide, cwd=proj) as client:
        session = await client.new_session()
        await session.prompt("edit")
        (call,) = session.view.tool_calls.values()

    assert path.read_text() == "two\n"
    assert call.status == "completed"
    # The second question showed the diff against what was really there.
    assert "-one\n+two\n" in diffs[0]
    assert "-zero\n+two\n" in diffs[1]


async def test_a_file_swapped_for_a_symlink_after_the_diff_is_not_followed(proj: Path) -> None:
    path = proj / "f.txt"
    path.write_text("one\n")
    target = proj.parent / "outside" / "target.txt"

    def swap(request: PermissionRequest) -> Mapping[str, object]:
        path.unlink()
        path.symlink_to(target)
        return ALLOW

    seen = await edit_once(proj, path, "two\n", decide=swap)
    assert seen.call.status == "failed"
    assert "replaced by a symbolic link since the diff was shown" in seen.call.text
    assert path.is_symlink()
    outside_untouched(proj)


async def test_a_directory_swapped_for_a_symlink_after_the_diff_is_not_followed(
    proj: Path,
) -> None:
    sub = proj / "sub"
    sub.mkdir()
    (sub / "target.txt").write_text("one\n")

    def swap(request: PermissionRequest) -> Mapping[str, object]:
        sub.rename(proj / "sub.old")
        sub.symlink_to(proj.parent / "outside")
        return ALLOW

    seen = await edit_once(proj, sub / "target.txt", "two\n", decide=swap)
    assert seen.call.status == "failed"
    assert f"The directory {sub} was moved, replaced or turned into a symbolic link" in (
        seen.call.text
    )
    outside_untouched(proj)
    assert (proj / "sub.old" / "target.txt").read_text() == "one\n"


async def test_an_add_does_not_clobber_a_file_created_meanwhile(proj: Path) -> None:
    path = proj / "new.txt"

    def create(request: PermissionRequest) -> Mapping[str, object]:
        path.write_text("theirs\n")
        return ALLOW

    seen = await edit_once(proj, path, "ours\n", decide=create)
    assert [c.operation for c in seen.shown[0][2][0].changes] == ["add"]
    assert seen.call.status == "failed" and "created by someone else" in seen.call.text
    assert path.read_text() == "theirs\n"


# ---------------------------------------------------------------- writing


async def test_the_mode_and_owner_are_kept_and_a_new_file_gets_the_umask(proj: Path) -> None:
    path = proj / "script.sh"
    path.write_text("echo one\n")
    # Root can give the file to someone else, and the edit keeps that owner too.
    owner = (1234, 1234) if os.geteuid() == 0 else (os.getuid(), os.getgid())
    os.chown(path, *owner)
    path.chmod(0o751)
    await edit_once(proj, path, "echo two\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert (path.stat().st_uid, path.stat().st_gid) == owner
    assert path.read_text() == "echo two\n"

    umask = os.umask(0o022)
    os.umask(umask)
    await edit_once(proj, proj / "new.txt", "new\n")
    assert stat.S_IMODE((proj / "new.txt").stat().st_mode) == 0o666 & ~umask


async def test_the_write_replaces_the_file_whole(proj: Path) -> None:
    # A reader holding the old file sees it complete: the new content is a new
    # file renamed over the old name, never written into the old one.
    path = proj / "f.txt"
    path.write_text("old content\n")
    before = path.stat().st_ino
    with path.open() as reader:
        seen = await edit_once(proj, path, "new\n")
        assert reader.read() == "old content\n"
    assert seen.call.status == "completed"
    assert path.read_text() == "new\n" and path.stat().st_ino != before
    assert sorted(p.name for p in proj.iterdir()) == ["f.txt"]  # no temporary file left


async def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(
    proj: Path, anyio_backend: str
) -> None:
    # The write of the temporary file fails half way (the file size limit):
    # the target keeps its old content and nothing else is left behind.
    path = proj / "f.txt"
    path.write_text("old\n")
    script = f"""
import resource, signal, sys
import anyio
sys.path.insert(0, {str(Path(__file__).parent)!r})
from test_edits import edit_once
from pathlib import Path
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.RLIM_INFINITY))
async def main():
    seen = await edit_once(Path({str(proj)!r}), {str(path)!r}, "x" * 100_000)
    print(seen.call.status, "|", seen.call.text)
anyio.run(main, backend={anyio_backend!r})
"""
    done = await anyio.run_process([sys.executable, "-c", script], check=False)
    assert done.returncode == 0, done.stderr.decode()
    status, _, text = done.stdout.decode().partition(" | ")
    assert status == "failed"
    assert f"Could not write {path}: file too large; nothing was changed." in text
    assert path.read_text() == "old\n"
    assert sorted(p.name for p in proj.iterdir()) == ["f.txt"]


async def test_delete_and_move(proj: Path) -> None:
    gone = proj / "gone.txt"
    gone.write_text("bye\n")
    seen = await edit_once(proj, gone, None)
    assert [c.operation for c in seen.diff.changes] == ["delete"]
    assert seen.call.status == "completed" and not gone.exists()
    refused(await edit_once(proj, gone, None), "does not exist; nothing was deleted")

    source = proj / "a.txt"
    source.write_text("one\ntwo\n")
    source.chmod(0o600)
    (proj / "dir").mkdir()
    moved = proj / "dir" / "b.txt"
    seen = await edit_once(proj, source, "one\n2\n", move_to=moved)
    (change,) = seen.diff.changes
    assert isinstance(change, schema.MoveChange)
    assert (change.old_path, change.path) == (str(source), str(moved))
    assert seen.shown[0][0] == f"Move {source} to {moved}"
    assert seen.shown[0][1] == [str(source), str(moved)]
    assert not source.exists() and moved.read_text() == "one\n2\n"
    assert stat.S_IMODE(moved.stat().st_mode) == 0o600

    # Unchanged content; onto an existing file, or out of the project: refused.
    seen = await edit_once(proj, moved, None, move_to=proj / "c.txt")
    assert seen.call.status == "completed" and (proj / "c.txt").read_text() == "one\n2\n"
    (proj / "d.txt").write_text("d\n")
    refused(
        await edit_once(proj, proj / "c.txt", None, move_to=proj / "d.txt"),
        "already exists; nothing was moved",
    )
    refused(
        await edit_once(proj, proj / "c.txt", None, move_to=proj.parent / "outside" / "c.txt"),
        "outside the session's directories",
    )
    assert (proj / "c.txt").exists() and (proj / "d.txt").read_text() == "d\n"
    outside_untouched(proj)


async def test_apply_twice_is_an_error(proj: Path) -> None:
    errors: list[Exception] = []

    class Twice(acpio.Agent):
        async def prompt(self, session: acpio.Session, prompt: list[acpio.ContentBlock]) -> str:
            async with session.tool_call("Edit", kind="edit") as call:
                edit = await call.propose_edit(proj / "f.txt", "x")
                await edit.apply()
                assert edit.applied
                try:
                    await edit.apply()
                except RuntimeError as exc:
                    errors.append(exc)
            return "end_turn"

    async with MockClient(Twice(), cwd=proj) as client:
        session = await client.new_session()
        await session.prompt("go")
    assert len(errors) == 1 and "already applied" in str(errors[0])
    assert (proj / "f.txt").read_text() == "x"


# ---------------------------------------------------------------- threads and the README


async def test_a_cancelled_caller_never_waits_for_a_stuck_thread() -> None:
    # What a read stuck in the kernel looks like to the caller: a thread that
    # does not return. The caller leaves at once; the thread is a daemon, so
    # it cannot keep the process alive either, and it is told to stop.
    started, release = threading.Event(), threading.Event()
    told: list[bool] = []
    before = set(threading.enumerate())

    def stuck(stop: threading.Event) -> None:
        started.set()
        release.wait()
        told.append(stop.is_set())

    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as group:

            async def cancel_once_started() -> None:
                await anyio.to_thread.run_sync(started.wait)
                scope.cancel()

            group.start_soon(cancel_once_started)
            await _in_thread(stuck)
    assert scope.cancelled_caught
    (thread,) = [t for t in set(threading.enumerate()) - before if t.name == "acpio file edit"]
    assert thread.daemon
    release.set()
    await anyio.to_thread.run_sync(thread.join)
    assert told == [True]


def readme_block(heading: str) -> str:
    """The first ``python`` code block of the page docs/edits.md (titled ``heading``)."""
    (block, *_) = page_blocks("docs/edits.md", "python", within=heading)
    return block.code


async def test_the_readme_example_runs(proj: Path) -> None:
    namespace: dict[str, object] = {"__name__": "readme_safe_edits"}
    exec(compile(readme_block("# Safe file edits"), "docs/edits.md", "exec"), namespace)
    agent_class = namespace["WriteAgent"]
    assert isinstance(agent_class, type) and issubclass(agent_class, acpio.Agent)
    (proj / "link").symlink_to("../outside")
    async with MockClient(agent_class(), policy=lambda r: ALLOW, cwd=proj) as client:
        session = await client.new_session()
        written = await session.prompt(f"{proj}/notes.txt\nhello\n")
        escaped = await session.prompt(f"{proj}/link/target.txt\nmine\n")
    assert (proj / "notes.txt").read_text() == "hello\n"
    (call,) = written.view.tool_calls.values()
    assert call.status == "completed" and call.title == f"Create {proj}/notes.txt"
    (call,) = escaped.view.tool_calls.values()
    assert call.status == "failed" and "outside the session's directories" in call.text
    outside_untouched(proj)
    assert len(client.permission_requests) == 1


def test_the_readme_promise_names_tests_that_exist() -> None:
    page = page_text("docs/guarantees.md")
    promise = page[page.index("**File edits.**") : page.index("**No leaks.**")]
    named = set(re.findall(r"\b(test_\w+)`", promise)) - {"test_edits", "test_edit_safety"}
    here = Path(__file__).resolve().parent
    sources = "".join(
        (here / name).read_text()
        for name in ("test_edits.py", "test_edit_agent.py", "reliability/test_edit_safety.py")
    )
    assert len(named) >= 15
    assert {name for name in named if f"def {name}(" not in sources} == set()


async def test_a_delete_or_move_of_a_file_changed_meanwhile_does_nothing(proj: Path) -> None:
    path = proj / "f.txt"
    path.write_text("one\n")

    def change(request: PermissionRequest) -> Mapping[str, object]:
        path.write_text("two\n")
        return ALLOW

    seen = await edit_once(proj, path, None, decide=change)
    assert seen.call.status == "failed" and "changed since the diff was shown" in seen.call.text
    assert path.read_text() == "two\n"

    def occupy(request: PermissionRequest) -> Mapping[str, object]:
        (proj / "g.txt").write_text("theirs\n")
        return ALLOW

    seen = await edit_once(proj, path, None, move_to=proj / "g.txt", decide=occupy)
    assert seen.call.status == "failed" and "created by someone else" in seen.call.text
    assert path.read_text() == "two\n" and (proj / "g.txt").read_text() == "theirs\n"


async def test_text_that_cannot_be_utf_8_is_refused(proj: Path) -> None:
    seen = await edit_once(proj, proj / "f.txt", "half a pair: \ud800")
    refused(seen, "cannot be written as UTF-8")
    assert list(proj.iterdir()) == []
