"""Diff content: structured changes and git_patch text that real ``git apply`` accepts.

Every patch test writes the old files under a temporary directory, builds the
patch for their absolute paths, runs ``git apply -p0 --unsafe-paths`` on it and
compares the whole directory, byte for byte, with the expected new state.

Why that invocation: ``-p0`` keeps each name whole (the default ``-p1`` would
strip the leading ``/``), and ``--unsafe-paths`` lets ``git apply`` touch paths
outside the current directory, which it otherwise rejects as "invalid path".
Git's user and system configuration is switched off so that settings such as
``core.autocrlf`` or ``apply.whitespace`` cannot alter the result.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec import UNSET

from acpio._handles.diff import FileChange, RelativePathError, diff_of, file_change, file_diff
from acpio.schema import (
    AddChange,
    CopyChange,
    DeleteChange,
    Diff,
    DiffPatch,
    ModifyChange,
    MoveChange,
    UnknownDiffChange,
    decode,
    encode,
    to_builtins,
)

FIXTURES = Path(__file__).parent / "fixtures"

Tree = Mapping[str, bytes]

_GIT_ENV = {
    **os.environ,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "LC_ALL": "C",
}


def git_apply(patch: str, cwd: Path, *options: str) -> None:
    """Apply ``patch`` for real, the way a client holding absolute paths can."""
    result = subprocess.run(
        ["git", "apply", "-p0", "--unsafe-paths", *options],
        input=patch.encode("utf-8"),
        cwd=cwd,
        env=_GIT_ENV,
        capture_output=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode("utf-8", "replace") + "\n" + patch


def write_tree(root: Path, tree: Tree) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for name, data in tree.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)


def read_tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def patch_text(diff: Diff) -> str | None:
    if isinstance(diff.patch, DiffPatch):
        assert diff.patch.format == "git_patch"
        return diff.patch.text
    return None


def assert_applies(
    tmp: Path, before: Tree, after: Tree, diff: Diff, *, reverse: bool = True
) -> None:
    """The patch turns ``before`` into ``after`` exactly, and back again.

    Git cannot reverse a copy (it would copy onto the existing source), so tests
    of copies pass ``reverse=False``.
    """
    work = tmp / "w"
    write_tree(work, before)
    # git apply prunes directories a delete leaves empty, up to the top: keep cwd alive.
    (tmp / "anchor").write_bytes(b"")
    text = patch_text(diff)
    assert text is not None
    git_apply(text, tmp)
    assert read_tree(work) == dict(after)
    if not reverse:
        return
    git_apply(text, tmp, "-R")
    assert read_tree(work) == dict(before)


def one_file_case(
    tmp: Path, old: bytes | None, new: bytes | None, *, context: int = 3
) -> FileChange:
    """Build, apply and check the diff of ``w/f.txt`` from ``old`` to ``new``."""
    path = str(tmp / "w" / "f.txt")
    change = file_change(path, old, new, context=context)
    before = {} if old is None else {"f.txt": old}
    after = {} if new is None else {"f.txt": new}
    write_tree(tmp / "w", {})
    assert_applies(tmp, before, after, diff_of(change))
    return change


# --- single-file text changes, applied by git -------------------------------------------

LARGE_OLD = b"".join(b"line %d\n" % i for i in range(1000))
LARGE_NEW = (
    b"".join(
        (b"LINE %d changed\n" % i if i % 37 == 0 else b"line %d\n" % i)
        for i in range(1000)
        if i % 101 != 50
    )
    + b"appended\n"
)

MODIFY_CASES = {
    "simple": (b"a\nb\nc\n", b"a\nB\nc\n"),
    "no-newline-old": (b"a\nb\nc", b"a\nb\nc\n"),
    "no-newline-new": (b"a\nb\nc\n", b"a\nb\nc"),
    "no-newline-both": (b"a\nb\nc", b"a\nb\nd"),
    "no-newline-both-same-last": (b"a\nb\nc", b"A\nb\nc"),
    "single-line-no-newline": (b"x", b"y"),
    "unicode": ("héllo\nwörld ✓\n日本語\n".encode(), "héllo\nwörld ✗\n日本語\n🎉\n".encode()),
    "bom": ("\ufeffa\nb\n".encode(), "\ufeffa\nc\n".encode()),
    "crlf": (b"a\r\nb\r\nc\r\n", b"a\r\nB\r\nc\r\n"),
    "crlf-no-newline": (b"a\r\nb\r\nc\r", b"a\r\nb\r\nC\r"),
    "crlf-to-lf": (b"a\r\nb\r\nc\r\n", b"a\nb\nc\n"),
    "lf-to-crlf": (b"a\nb\nc\n", b"a\r\nb\r\nc\r\n"),
    "mixed-endings": (b"a\r\nb\nc\rd\r\ne", b"a\r\nb\r\nc\rD\ne\n"),
    "lone-cr-only": (b"a\rb\rc", b"a\rB\rc"),
    "other-separators": (
        "a\u2028b\x0bc\x0cd\x1ce\n".encode(),
        "a\u2028B\x0bc\x0cd\x1ce\n".encode(),
    ),
    "empty-to-content": (b"", b"new\ncontent\n"),
    "content-to-empty": (b"old\ncontent\n", b""),
    "empty-to-newline": (b"", b"\n"),
    "blank-lines": (b"\n\n\n", b"\n\n"),
    "whitespace-lines": (b"a \n\tb\t\n  \n", b"a\n\tb\n  \n"),
    "diff-like-lines": (b"--- x\n+++ y\n@@ -1 +1 @@\n", b"--- x\n+++ z\n@@ -1 +1 @@\n\\ no\n"),
    "insert-at-start": (b"b\nc\nd\ne\n", b"a\nb\nc\nd\ne\n"),
    "insert-at-end": (b"a\nb\nc\n", b"a\nb\nc\nd\n"),
    "delete-at-start": (b"a\nb\nc\nd\ne\n", b"b\nc\nd\ne\n"),
    "repeated-lines": (b"x\n" * 20, b"x\n" * 10 + b"y\n" + b"x\n" * 12),
    "large-many-hunks": (LARGE_OLD, LARGE_NEW),
}


@pytest.mark.parametrize("old,new", MODIFY_CASES.values(), ids=MODIFY_CASES.keys())
def test_modify_applies_exactly(tmp_path: Path, old: bytes, new: bytes) -> None:
    change = one_file_case(tmp_path, old, new)
    assert change.operation == "modify"
    assert change.file_type == "text"
    assert change.old_path is None


def test_large_file_gets_many_hunks(tmp_path: Path) -> None:
    change = one_file_case(tmp_path, LARGE_OLD, LARGE_NEW)
    assert change.patch is not None
    assert change.patch.count("\n@@ ") > 20


@pytest.mark.parametrize("context", [0, 1, 2, 10])
def test_context_lines(tmp_path: Path, context: int) -> None:
    old = b"".join(b"%d\n" % i for i in range(40))
    new = old.replace(b"\n5\n", b"\nfive\n").replace(b"\n30\n", b"\n").replace(b"12\n", b"12\nx\n")
    path = str(tmp_path / "w" / "f.txt")
    change = file_change(path, old, new, context=context)
    assert change.patch is not None
    hunk_lines = [line for line in change.patch.splitlines() if line[:1] in (" ", "-", "+")]
    context_lines = [line for line in hunk_lines if line.startswith(" ")]
    if context == 0:
        assert context_lines == []
        # Zero-context hunks carry no anchor; git needs to be told to trust them.
        write_tree(tmp_path / "w", {"f.txt": old})
        git_apply(change.patch, tmp_path, "--unidiff-zero")
        assert read_tree(tmp_path / "w") == {"f.txt": new}
    else:
        assert len(context_lines) <= 6 * context
        assert_applies(tmp_path, {"f.txt": old}, {"f.txt": new}, diff_of(change))


def test_negative_context_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="context"):
        file_change(str(tmp_path / "f"), "a", "b", context=-1)


ADD_DELETE_CONTENTS = {
    "text": b"one\ntwo\n",
    "no-newline": b"one\ntwo",
    "empty": b"",
    "crlf": b"one\r\ntwo\r\n",
    "unicode": "ünïcödé\n".encode(),
}


@pytest.mark.parametrize("content", ADD_DELETE_CONTENTS.values(), ids=ADD_DELETE_CONTENTS.keys())
def test_add_applies_exactly(tmp_path: Path, content: bytes) -> None:
    change = one_file_case(tmp_path, None, content)
    assert change.operation == "add"
    assert change.file_type == "text"
    assert change.patch is not None
    assert "\nnew file mode 100644\n--- /dev/null\n+++ /" in change.patch


@pytest.mark.parametrize("content", ADD_DELETE_CONTENTS.values(), ids=ADD_DELETE_CONTENTS.keys())
def test_delete_applies_exactly(tmp_path: Path, content: bytes) -> None:
    change = one_file_case(tmp_path, content, None)
    assert change.operation == "delete"
    assert change.file_type == "text"
    assert change.path == str(tmp_path / "w" / "f.txt")
    assert change.patch is not None
    assert "\ndeleted file mode 100644\n--- /" in change.patch
    assert change.patch.split("\n")[3] == "+++ /dev/null"


def test_add_creates_missing_directories(tmp_path: Path) -> None:
    path = tmp_path / "w" / "new" / "deep" / "mod.py"
    diff = file_diff(str(path), None, "print('hi')\n")
    write_tree(tmp_path / "w", {"keep": b"k"})
    assert_applies(
        tmp_path, {"keep": b"k"}, {"keep": b"k", "new/deep/mod.py": b"print('hi')\n"}, diff
    )


def test_str_and_bytes_content_give_the_same_diff(tmp_path: Path) -> None:
    path = str(tmp_path / "f.txt")
    old, new = "a\r\nü\n", "a\r\nö"
    assert file_change(path, old, new) == file_change(path, old.encode(), new.encode())
    assert file_change(path, old, new) == file_change(path, old, new.encode())


def test_accepts_path_objects(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    change = file_change(path, "a\n", "b\n", old_path=tmp_path / "g.txt", operation="move")
    assert change.path == str(path)
    assert change.old_path == str(tmp_path / "g.txt")


# --- moves, copies, several files ------------------------------------------------------


@pytest.mark.parametrize("operation", ["move", "copy"])
@pytest.mark.parametrize(
    "old,new",
    [
        (b"a\nb\nc\n", b"a\nb\nc\n"),
        (b"a\nb\nc\n", b"a\nB\nc\n"),
        (b"", b""),
        (b"x", b"x\n"),
        (b"keep\r\n" * 10, b"keep\r\n" * 9 + b"changed\r\n"),
    ],
    ids=["unchanged", "edited", "empty", "newline-added", "crlf-edited"],
)
def test_move_and_copy_apply_exactly(
    tmp_path: Path, operation: str, old: bytes, new: bytes
) -> None:
    work = tmp_path / "w"
    src, dst = work / "src" / "a.txt", work / "dst" / "b.txt"
    assert operation in ("move", "copy")
    change = file_change(
        dst, old, new, old_path=src, operation="move" if operation == "move" else "copy"
    )
    assert change.operation == operation
    assert (change.old_path, change.path) == (str(src), str(dst))
    assert change.patch is not None
    verb = "rename" if operation == "move" else "copy"
    assert f"\n{verb} from {src}\n{verb} to {dst}\n" in change.patch
    if old == new:
        assert "similarity index 100%" in change.patch
        assert "@@" not in change.patch
    else:
        assert "similarity index 100%" not in change.patch
        assert f"\n--- {src}\n+++ {dst}\n@@ " in change.patch
    after = {"dst/b.txt": new} if operation == "move" else {"src/a.txt": old, "dst/b.txt": new}
    assert_applies(
        tmp_path, {"src/a.txt": old}, after, diff_of(change), reverse=operation == "move"
    )


def test_move_similarity_reflects_the_edit(tmp_path: Path) -> None:
    old = b"".join(b"line %d\n" % i for i in range(100))
    new = old.replace(b"line 50\n", b"line fifty\n")
    change = file_change(tmp_path / "b", old, new, old_path=tmp_path / "a", operation="move")
    assert change.patch is not None
    assert "similarity index 98%" in change.patch
    whole = file_change(tmp_path / "b", "abc\n", "xyz\n", old_path=tmp_path / "a", operation="copy")
    assert whole.patch is not None
    assert "similarity index 0%" in whole.patch


def test_several_files_in_one_diff(tmp_path: Path) -> None:
    w = tmp_path / "w"
    before = {
        "mod.txt": b"1\n2\n3\n",
        "gone.txt": b"bye\n",
        "old name.txt": b"moving\n",
        "orig.txt": b"copy me\n",
        "same.txt": b"unchanged\n",
        "logo.png": b"\x89PNG\r\n\x1a\n\0\0",
    }
    after = {
        "mod.txt": b"1\ntwo\n3\n",
        "new/added.txt": b"hello",
        "new name.txt": b"moving\nand edited\n",
        "orig.txt": b"copy me\n",
        "copy.txt": b"copy me\n",
        "same.txt": b"unchanged\n",
        "logo.png": b"\x89PNG\r\n\x1a\n\0\0",
    }
    changes = [
        file_change(w / "mod.txt", before["mod.txt"], after["mod.txt"]),
        file_change(w / "gone.txt", before["gone.txt"], None),
        file_change(w / "new" / "added.txt", None, after["new/added.txt"]),
        file_change(
            w / "new name.txt",
            before["old name.txt"],
            after["new name.txt"],
            old_path=w / "old name.txt",
            operation="move",
        ),
        file_change(
            w / "copy.txt", b"copy me\n", b"copy me\n", old_path=w / "orig.txt", operation="copy"
        ),
        file_change(w / "same.txt", before["same.txt"], after["same.txt"]),
        file_change(w / "logo.png", before["logo.png"], b"\x89PNG\r\n\x1a\n\0\1"),
    ]
    diff = diff_of(*changes)
    assert [c.operation for c in diff.changes] == [
        "modify",
        "delete",
        "add",
        "move",
        "copy",
        "modify",
        "modify",
    ]
    text = patch_text(diff)
    assert text is not None
    # One section per change with text; the unchanged and the binary file have none.
    assert text.count("diff --git ") == 5
    assert str(w / "same.txt") not in text
    assert str(w / "logo.png") not in text
    # The binary update is outside the patch, so apply it by hand to compare.
    after_with_old_logo = {**after, "logo.png": before["logo.png"]}
    assert_applies(tmp_path, before, after_with_old_logo, diff, reverse=False)


def test_diff_without_any_patch_text(tmp_path: Path) -> None:
    diff = diff_of(file_change(tmp_path / "a", "same", "same"))
    assert diff.patch is UNSET
    assert diff.changes == [ModifyChange(path=str(tmp_path / "a"), file_type="text")]
    assert to_builtins(diff_of()) == {"type": "diff", "changes": []}


# --- exact text ------------------------------------------------------------------------


def test_matches_the_spec_example() -> None:
    path = "/home/user/project/src/config.json"
    change = file_change(path, '{\n  "debug": false\n}\n', '{\n  "debug": true\n}\n')
    assert change == FileChange(
        operation="modify",
        path=path,
        file_type="text",
        mime_type="application/json",
        patch=(
            "diff --git /home/user/project/src/config.json /home/user/project/src/config.json\n"
            "--- /home/user/project/src/config.json\n"
            "+++ /home/user/project/src/config.json\n"
            "@@ -1,3 +1,3 @@\n"
            " {\n"
            '-  "debug": false\n'
            '+  "debug": true\n'
            " }\n"
        ),
    )


def spec_example(name: str) -> object:
    return json.loads((FIXTURES / "diff_spec_examples.json").read_text("utf-8"))[name]


def test_file_diff_encodes_as_the_spec_examples() -> None:
    text = file_diff(
        "/home/user/project/src/config.json",
        '{\n  "debug": false\n}\n',
        '{\n  "debug": true\n}\n',
    )
    assert json.loads(encode(text)) == spec_example("modify_text")
    binary = file_diff(
        "/home/user/project/assets/logo.png",
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10",
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x20",
    )
    assert json.loads(encode(binary)) == spec_example("modify_binary")


def test_diff_round_trips_through_the_codec(tmp_path: Path) -> None:
    w = tmp_path
    diff = diff_of(
        file_change(w / "a.py", "x\n", "y\n"),
        file_change(w / "b.py", None, "new\n"),
        file_change(w / "c.py", "old\n", None),
        file_change(w / "e.py", "m\n", "m\n", old_path=w / "d.py", operation="move"),
        file_change(w / "g.bin", b"\0", b"\0", old_path=w / "f.bin", operation="copy"),
    )
    assert diff.changes == [
        ModifyChange(path=str(w / "a.py"), file_type="text", mime_type="text/x-python"),
        AddChange(path=str(w / "b.py"), file_type="text", mime_type="text/x-python"),
        DeleteChange(path=str(w / "c.py"), file_type="text", mime_type="text/x-python"),
        MoveChange(
            old_path=str(w / "d.py"),
            path=str(w / "e.py"),
            file_type="text",
            mime_type="text/x-python",
        ),
        CopyChange(
            old_path=str(w / "f.bin"),
            path=str(w / "g.bin"),
            file_type="binary",
            mime_type="application/octet-stream",
        ),
    ]
    wire = encode(diff)
    assert b'"mimeType":null' not in wire
    assert decode(wire, Diff) == diff


def test_no_newline_markers_text() -> None:
    change = file_change("/p/f", "a\nb", "a\nc")
    assert change.patch == (
        "diff --git /p/f /p/f\n--- /p/f\n+++ /p/f\n@@ -1,2 +1,2 @@\n a\n"
        "-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
    )


def test_hunk_ranges_follow_git() -> None:
    assert file_change("/p/f", None, "").patch == (
        "diff --git /p/f /p/f\nnew file mode 100644\n--- /dev/null\n+++ /p/f\n"
    )
    assert file_change("/p/f", None, "x\n").patch == (
        "diff --git /p/f /p/f\nnew file mode 100644\n--- /dev/null\n+++ /p/f\n@@ -0,0 +1 @@\n+x\n"
    )
    assert file_change("/p/f", "x\ny\n", None).patch == (
        "diff --git /p/f /p/f\ndeleted file mode 100644\n--- /p/f\n+++ /dev/null\n"
        "@@ -1,2 +0,0 @@\n-x\n-y\n"
    )
    # Git names the line before an empty range: here the insertion follows line 6.
    old = "".join(f"{i}\n" for i in range(10))
    new = old.replace("5\n", "5\nnew\n")
    assert "@@ -6,0 +7 @@\n+new\n" in (file_change("/p/f", old, new, context=0).patch or "")


@pytest.mark.parametrize(
    "name,quoted",
    [
        ("/p/plain.txt", "/p/plain.txt"),
        ("/p/ünï €.txt", "/p/ünï €.txt"),
        ('/p/say "hi"', '"/p/say \\"hi\\""'),
        ("/p/back\\slash", '"/p/back\\\\slash"'),
        ("/p/tab\there", '"/p/tab\\there"'),
        ("/p/new\nline", '"/p/new\\nline"'),
        ("/p/bell\x07\x1b\x7f", '"/p/bell\\a\\033\\177"'),
    ],
)
def test_paths_are_quoted_as_git_does(name: str, quoted: str) -> None:
    change = file_change(name, "a\n", "b\n")
    assert change.patch is not None
    lines = change.patch.split("\n")
    tab = "\t" if " " in name else ""
    assert lines[:3] == [
        f"diff --git {quoted} {quoted}",
        f"--- {quoted}{tab}",
        f"+++ {quoted}{tab}",
    ]
    assert change.path == name


@pytest.mark.parametrize(
    "name",
    ["with space.txt", 'quote".txt', "back\\slash", "tab\tname", "new\nline", "ünï €", " lead"],
)
def test_unusual_names_apply(tmp_path: Path, name: str) -> None:
    work = tmp_path / "w"
    changes = [
        file_change(work / name, b"a\nb\n", b"a\nc\n"),
        file_change(
            work / f"{name}-moved",
            b"m\n",
            b"m\nn\n",
            old_path=work / f"{name}-src",
            operation="move",
        ),
        file_change(work / f"{name}-new", None, b""),
    ]
    assert_applies(
        tmp_path,
        {name: b"a\nb\n", f"{name}-src": b"m\n"},
        {name: b"a\nc\n", f"{name}-moved": b"m\nn\n", f"{name}-new": b""},
        diff_of(*changes),
    )


# --- binary content, no change, metadata ----------------------------------------------


@pytest.mark.parametrize(
    "content",
    [b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", b"caf\xe9\n", b"a\0b\n", "nul\0in str", "lone \ud800"],
    ids=["png", "latin-1", "nul-bytes", "nul-str", "surrogate"],
)
def test_binary_content_has_no_patch(content: str | bytes) -> None:
    pairs: list[tuple[str | bytes | None, str | bytes]] = [
        (content, b"text\n"),
        (b"text\n", content),
        (None, content),
    ]
    for old, new in pairs:
        change = file_change("/p/logo.png", old, new)
        assert change.patch is None
        assert change.file_type == ("binary" if new is content else "text")
        assert change.mime_type == "image/png"
    deleted = file_change("/p/logo.png", content, None)
    assert (deleted.operation, deleted.file_type, deleted.patch) == ("delete", "binary", None)


def test_binary_move(tmp_path: Path) -> None:
    work = tmp_path / "w"
    blob = bytes(range(256))
    moved = file_change(work / "b.bin", blob, blob, old_path=work / "a.bin", operation="move")
    assert moved.file_type == "binary"
    # A pure rename needs no content, so its header-only section is exact.
    assert_applies(tmp_path, {"a.bin": blob}, {"b.bin": blob}, diff_of(moved))
    edited = file_change(work / "b.bin", blob, blob[1:], old_path=work / "a.bin", operation="move")
    assert (edited.file_type, edited.patch) == ("binary", None)


def test_unchanged_modify_has_a_change_but_no_patch() -> None:
    contents: list[str | bytes] = ["", "same\n", b"same", b"\0binary"]
    for content in contents:
        change = file_change("/p/f.txt", content, content)
        assert change.operation == "modify"
        assert change.patch is None


def test_mime_type() -> None:
    assert file_change("/p/a.json", "{}", "[]").mime_type == "application/json"
    assert file_change("/p/a.html", None, "x").mime_type == "text/html"
    assert file_change("/p/a.html", "x", None).mime_type == "text/html"
    assert file_change("/p/no_extension_xyzzy", "a", "b").mime_type is None
    assert file_change("/p/a.json", "{}", "[]", mime_type="text/x-custom").mime_type == (
        "text/x-custom"
    )
    moved = file_change("/p/a.md", "x", "x", old_path="/p/a.json", operation="move")
    assert moved.mime_type == "text/markdown"


# --- errors --------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["relative.txt", "./x", "../x", "", "~/x"])
def test_relative_path_is_rejected(bad: str) -> None:
    with pytest.raises(RelativePathError) as info:
        file_change(bad, "a", "b")
    assert info.value.path == bad
    assert repr(bad) in str(info.value)
    assert isinstance(info.value, ValueError)
    with pytest.raises(RelativePathError) as info:
        file_change("/abs/x", "a", "b", old_path=bad, operation="move")
    assert info.value.path == bad
    # Checked before the other arguments.
    with pytest.raises(RelativePathError):
        file_change(bad, None, None, context=-1)
    with pytest.raises(RelativePathError):
        FileChange(operation="add", path=bad)
    with pytest.raises(RelativePathError):
        FileChange(operation="move", path="/abs", old_path=bad)


def test_invalid_combinations() -> None:
    with pytest.raises(ValueError, match="both None"):
        file_change("/p/f", None, None)
    with pytest.raises(ValueError, match="go together"):
        file_change("/p/f", "a", "b", old_path="/p/g")
    with pytest.raises(ValueError, match="go together"):
        file_change("/p/f", "a", "b", operation="move")
    with pytest.raises(ValueError, match="both old and new"):
        file_change("/p/f", None, "b", old_path="/p/g", operation="copy")
    with pytest.raises(ValueError, match="differ"):
        file_change("/p/f", "a", "b", old_path="/p/f", operation="move")
    with pytest.raises(ValueError, match="requires old_path"):
        FileChange(operation="copy", path="/p/f")
    with pytest.raises(ValueError, match="takes no old_path"):
        FileChange(operation="modify", path="/p/f", old_path="/p/g")


def test_hand_built_changes_join_the_diff() -> None:
    directory = FileChange(operation="add", path="/p/dir", file_type="directory")
    text = file_change("/p/dir/f", None, "x\n")
    diff = diff_of(directory, text)
    assert diff.changes == [
        AddChange(path="/p/dir", file_type="directory"),
        AddChange(path="/p/dir/f", file_type="text"),
    ]
    assert patch_text(diff) == text.patch


def test_custom_operation_and_file_type() -> None:
    custom = FileChange(operation="_chmod", path="/p/run.sh", file_type="_script")
    assert to_builtins(diff_of(custom)) == {
        "type": "diff",
        "changes": [{"operation": "_chmod", "path": "/p/run.sh", "fileType": "_script"}],
    }
    assert diff_of(custom).changes == [
        UnknownDiffChange({"operation": "_chmod", "path": "/p/run.sh", "fileType": "_script"})
    ]
    with pytest.raises(ValueError, match="unknown operation"):
        FileChange(operation="rename", path="/p/f", old_path="/p/g")
    with pytest.raises(ValueError, match="unknown file_type"):
        FileChange(operation="add", path="/p/f", file_type="folder")


# --- property: random texts round-trip through git apply -------------------------------

_line_text = st.text(alphabet="ab \t\rü€\\+-@", max_size=5)


def _join(lines: list[str], end: str) -> str:
    return "\n".join(lines) + end


_texts: st.SearchStrategy[str] = st.builds(
    _join, st.lists(_line_text, max_size=12), st.sampled_from(["", "\n", "\r\n", "\r"])
)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    old=st.one_of(st.none(), _texts),
    new=st.one_of(st.none(), _texts),
    move=st.booleans(),
    context=st.integers(min_value=1, max_value=4),
)
def test_random_texts_round_trip(
    old: str | None, new: str | None, move: bool, context: int
) -> None:
    if old is None and new is None:
        new = ""
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        work = tmp / "w"
        target = work / "target.txt"
        if move and old is not None and new is not None:
            source = work / "source.txt"
            change = file_change(target, old, new, old_path=source, operation="move")
            before = {"source.txt": old.encode()}
        else:
            change = file_change(target, old, new, context=context)
            before = {} if old is None else {"target.txt": old.encode()}
        after = {} if new is None else {"target.txt": new.encode()}
        write_tree(work, {})
        if change.patch is None:
            assert (change.operation, before, after) == ("modify", after, before)
        else:
            assert_applies(tmp, before, after, diff_of(change))
