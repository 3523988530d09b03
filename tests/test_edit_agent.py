"""``examples/edit_agent.py`` over the testing kit: what the user sees is what gets written.

The cases of the hostile-input review (issue 14): symlinks and ``..`` out of
the project, a file changed or swapped for a symlink while the user decides,
special files. The MockClient checks every message (strict), and each test
checks the disk and what was shown while the user was deciding: the title,
the locations, the diff and the permission title, all real paths.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pytest
from support import load_example

import acpio
from acpio import schema
from acpio.testing import ClientSession, MockClient, PermissionRequest, ToolCallView

pytestmark = pytest.mark.anyio

EditAgent: type[acpio.Agent] = load_example("edit_agent").EditAgent
ALLOW: Mapping[str, object] = {"outcome": "selected", "optionId": "allow_once"}


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    (tmp_path / "proj").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "target.txt").write_text("outside\n")
    return tmp_path / "proj"


def outside_untouched(proj: Path) -> None:
    outside = proj.parent / "outside"
    assert sorted(p.name for p in outside.iterdir()) == ["target.txt"]
    assert (outside / "target.txt").read_text() == "outside\n"


async def one_call(session: ClientSession, prompt: str) -> ToolCallView:
    result = await session.prompt(prompt)
    assert result.stop_reason == "end_turn"
    (call,) = result.view.tool_calls.values()
    return call


@pytest.mark.parametrize("case", ["dir-link", "file-link", "dot-dot"])
async def test_the_issues_escapes_are_refused(case: str, proj: Path) -> None:
    outside = proj.parent / "outside"
    if case == "dir-link":
        (proj / "link").symlink_to("../outside")
        path, real = f"{proj}/link/new.txt", f"{outside}/new.txt"
    elif case == "file-link":
        (proj / "f.txt").symlink_to(outside / "target.txt")
        path, real = f"{proj}/f.txt", f"{outside}/target.txt"
    else:
        (proj / "sub").mkdir()
        path, real = f"{proj}/sub/../../outside/x", f"{outside}/x"
    async with MockClient(EditAgent(), policy=lambda r: ALLOW, cwd=proj) as client:
        session = await client.new_session()
        call = await one_call(session, f"write {path}\noverwritten\n")
        assert client.permission_requests == []

    assert call.status == "failed"
    assert call.text == (
        f"Refused: {path} (really {real}) is outside the session's directories ({proj}); "
        "nothing was touched."
    )
    # Nothing shown names a path inside the project that is really outside.
    assert call.title == "Write a file"
    assert call.locations == [] and call.diffs == []
    outside_untouched(proj)


async def test_the_diff_locations_and_titles_show_the_real_path(proj: Path) -> None:
    (proj / "src").mkdir()
    real = proj / "src" / "notes.txt"
    real.write_text("one\n")
    (proj / "notes-link.txt").symlink_to("src/notes.txt")
    shown: list[tuple[str | None, list[str], list[str]]] = []

    def decide(request: PermissionRequest) -> Mapping[str, object]:
        (call,) = client.sessions[str(request.session_id)].view.tool_calls.values()
        patch = call.diffs[0].patch
        assert isinstance(patch, schema.DiffPatch)
        shown.append((call.title, [loc.path for loc in call.locations], [patch.text]))
        return ALLOW

    async with MockClient(EditAgent(), policy=decide, cwd=proj) as client:
        session = await client.new_session()
        first = await one_call(session, f"write {proj}/src/../notes-link.txt\ntwo\n")
        (request,) = client.permission_requests

    assert real.read_text() == "two\n" and (proj / "notes-link.txt").is_symlink()
    assert first.status == "completed"
    ((title, locations, (patch,)),) = shown
    assert title == f"Edit {real}" and request.title == f"Edit {real}?"
    assert locations == [str(real)]
    assert patch.startswith(f"diff --git {real} {real}\n")
    assert ".." not in patch and "notes-link" not in patch


async def test_a_concurrent_change_gets_a_fresh_diff_then_a_clear_failure(proj: Path) -> None:
    path = proj / "f.txt"
    path.write_text("v1\n")
    patches: list[str] = []

    def someone_else_writes(request: PermissionRequest) -> Mapping[str, object]:
        (call,) = client.sessions[str(request.session_id)].view.tool_calls.values()
        patch = call.diffs[0].patch
        assert isinstance(patch, schema.DiffPatch)
        patches.append(patch.text)
        path.write_text(f"v{len(patches) + 1}\n")
        return ALLOW

    async with MockClient(EditAgent(), policy=someone_else_writes, cwd=proj) as client:
        session = await client.new_session()
        call = await one_call(session, f"write {path}\nmine\n")
        requests = len(client.permission_requests)

    # Asked twice, each time with the diff against what was there; the second
    # change is not overwritten either.
    assert requests == 2
    assert "-v1\n+mine\n" in patches[0] and "-v2\n+mine\n" in patches[1]
    assert path.read_text() == "v3\n"
    assert call.status == "failed"
    assert (
        call.text == f"{path} changed since the diff was shown (another program wrote to it); "
        "nothing was written."
    )


async def test_a_concurrent_change_then_allow_writes_what_the_fresh_diff_showed(
    proj: Path,
) -> None:
    path = proj / "f.txt"
    path.write_text("v1\n")
    asked = 0

    def decide(request: PermissionRequest) -> Mapping[str, object]:
        nonlocal asked
        asked += 1
        if asked == 1:
            path.write_text("v2\n")
        return ALLOW

    async with MockClient(EditAgent(), policy=decide, cwd=proj) as client:
        session = await client.new_session()
        call = await one_call(session, f"write {path}\nmine\n")
    assert asked == 2 and path.read_text() == "mine\n" and call.status == "completed"


async def test_a_swap_to_a_symlink_after_the_diff_writes_nothing(proj: Path) -> None:
    path = proj / "f.txt"
    path.write_text("one\n")

    def swap(request: PermissionRequest) -> Mapping[str, object]:
        path.unlink()
        path.symlink_to(proj.parent / "outside" / "target.txt")
        return ALLOW

    async with MockClient(EditAgent(), policy=swap, cwd=proj) as client:
        session = await client.new_session()
        call = await one_call(session, f"write {path}\ntwo\n")
        assert len(client.permission_requests) == 1

    # The fresh look sees where the path now leads, and refuses.
    assert call.status == "failed"
    assert "outside the session's directories" in call.text
    assert path.is_symlink()
    outside_untouched(proj)


async def test_special_files_are_refused_before_asking(proj: Path) -> None:
    os.mkfifo(proj / "fifo")
    async with MockClient(EditAgent(), policy=lambda r: ALLOW, cwd=proj) as client:
        session = await client.new_session()
        fifo = await one_call(session, f"write {proj}/fifo\nx")
        zero = await one_call(session, "write /dev/zero\nx")
        assert client.permission_requests == []
    assert fifo.status == zero.status == "failed"
    assert "it is a named pipe (FIFO), not a regular file" in fifo.text
    assert "/dev/zero is outside the session's directories" in zero.text


async def test_move(proj: Path) -> None:
    (proj / "a.txt").write_text("a\n")
    (proj / "dir").mkdir()
    async with MockClient(EditAgent(), policy=lambda r: ALLOW, cwd=proj) as client:
        session = await client.new_session()
        call = await one_call(session, f"move {proj}/a.txt\n{proj}/dir/b.txt")
        usage = await session.prompt(f"move {proj}/a.txt")
    assert call.status == "completed" and call.kind == "move"
    assert call.title == f"Move {proj}/a.txt to {proj}/dir/b.txt"
    assert [c.operation for c in call.diffs[0].changes] == ["move"]
    assert not (proj / "a.txt").exists() and (proj / "dir" / "b.txt").read_text() == "a\n"
    assert "Usage" in usage.text


async def test_a_move_after_a_concurrent_change_moves_the_changed_file(proj: Path) -> None:
    source = proj / "a.txt"
    source.write_text("v1\n")
    asked = 0

    def decide(request: PermissionRequest) -> Mapping[str, object]:
        nonlocal asked
        asked += 1
        if asked == 1:
            source.write_text("v2\n")
        return ALLOW

    async with MockClient(EditAgent(), policy=decide, cwd=proj) as client:
        session = await client.new_session()
        call = await one_call(session, f"move {source}\n{proj}/b.txt")
    # The move keeps the content unchanged: the fresh diff moves what is there now.
    assert asked == 2 and call.status == "completed"
    assert not source.exists() and (proj / "b.txt").read_text() == "v2\n"


async def test_a_nul_in_the_path_is_refused(proj: Path) -> None:
    async with MockClient(EditAgent(), policy=lambda r: ALLOW, cwd=proj) as client:
        session = await client.new_session()
        call = await one_call(session, f"write {proj}/a\x00b\nx")
        assert client.permission_requests == []
    assert call.status == "failed" and "contains a NUL character" in call.text
    assert list(proj.iterdir()) == []
