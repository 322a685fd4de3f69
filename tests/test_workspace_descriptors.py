"""The workspace API by descriptor: every way a path could lead out, and every operation.

Each test builds real folders and links; nothing is patched. The escape cases are those an
attacker can plant with files alone (a cloned repository carries links), and each must be
refused however the path is spelled.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import threading
import time
from pathlib import Path

import pytest

from janito_core import Workspace, WorkspaceError
from janito_core.workspace import ChangedMeanwhile, NotRegularFile, TargetExists

SECRET = b"SECRET-OUTSIDE"


@pytest.fixture
def place(tmp_path: Path) -> tuple[Workspace, Path, Path]:
    """(workspace, its root, a folder outside it holding a secret), with planted links."""
    root = tmp_path / "ws"
    outside = tmp_path / "out"
    (root / "sub" / "deeper").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_bytes(SECRET)
    (root / "sub" / "f.txt").write_bytes(b"inside")
    os.symlink("loop", root / "loop")                 # a link to itself
    os.symlink("pong", root / "ping")
    os.symlink("ping", root / "pong")
    os.symlink(outside, root / "out")                  # absolute, outside
    os.symlink("../out", root / "up")                  # relative, outside
    os.symlink("sub", root / "insub")                  # relative, inside
    os.symlink(root / "sub", root / "abs_insub")       # absolute, inside
    os.symlink("sub/deeper/../..", root / "self")      # back to the root
    os.symlink("/etc/passwd", root / "passwd")
    return Workspace(root), root, outside


ESCAPES = [
    "../out/secret.txt", "..", "sub/../../out/secret.txt", "/etc/passwd", "passwd",
    "out/secret.txt", "out", "up/secret.txt", "loop/../out/secret.txt",
    "loop/../up/secret.txt", "ping/../out/secret.txt", "insub/../../out/secret.txt",
    "self/../out/secret.txt", "abs_insub/../../out/secret.txt", "sub/deeper/../../../out",
    "a/b/../../../out/secret.txt",
]


@pytest.mark.parametrize("path", ESCAPES)
def test_no_spelling_of_a_way_out_is_followed(place: tuple[Workspace, Path, Path],
                                              path: str) -> None:
    workspace, _root, _outside = place
    with pytest.raises(WorkspaceError) as caught:
        fd, _info, _shown = workspace.open_regular(path)
        os.close(fd)
    assert caught.value.error_type in ("outside_workspace", "symlink_loop"), caught.value
    for target in (path, path + "/new.txt"):
        with pytest.raises((WorkspaceError, OSError)):
            workspace.write_file(target, b"pwned", overwrite=True)
    assert os.listdir(_outside) == ["secret.txt"]
    assert (_outside / "secret.txt").read_bytes() == SECRET


def test_the_link_loop_that_fooled_realpath_is_a_loop(place: tuple[Workspace, Path, Path]) -> None:
    """On Python 3.10-3.12 ``os.path.realpath`` stops at ``loop`` and folds ``..`` as text,
    so ``loop/../out/secret.txt`` looked inside; the walk sees the loop."""
    workspace, _root, _outside = place
    with pytest.raises(WorkspaceError) as caught:
        workspace.read_bytes("loop/../out/secret.txt")
    assert caught.value.error_type == "symlink_loop"
    with pytest.raises(WorkspaceError) as caught:
        workspace.rmdir("loop/../out", recursive=True)
    assert caught.value.error_type == "symlink_loop"


def test_links_inside_are_followed(place: tuple[Workspace, Path, Path]) -> None:
    workspace, _root, _outside = place
    for path in ("insub/f.txt", "abs_insub/f.txt", "self/sub/f.txt", "sub/deeper/../f.txt",
                 "insub/deeper/../../sub/f.txt", str(place[1] / "sub" / "f.txt")):
        assert workspace.read_bytes(path) == b"inside", path
        assert workspace.relative(path) == "sub/f.txt"


def test_entries_themselves_are_links(place: tuple[Workspace, Path, Path]) -> None:
    """Removing or renaming a link acts on the link, never on what it points to."""
    workspace, root, outside = place
    info = workspace.remove("out")
    assert stat.S_ISLNK(info.st_mode) and not os.path.lexists(root / "out")
    workspace.rename("up", "up2")
    assert os.readlink(root / "up2") == "../out" and (outside / "secret.txt").exists()
    with pytest.raises(NotADirectoryError):
        workspace.rmdir("insub", recursive=True)
    assert (root / "sub" / "f.txt").exists()
    with pytest.raises(WorkspaceError):  # a trailing slash follows the link: outside
        workspace.rmdir("up2/", recursive=True)
    assert (outside / "secret.txt").read_bytes() == SECRET


def test_writes_are_atomic_and_keep_the_mode(place: tuple[Workspace, Path, Path]) -> None:
    workspace, root, _outside = place
    assert workspace.write_file("new/dir/a.txt", b"one") is False
    (root / "new" / "dir" / "a.txt").chmod(0o640)
    with pytest.raises(TargetExists):
        workspace.write_file("new/dir/a.txt", b"two")
    assert workspace.write_file("new/dir/a.txt", (b"t", b"wo"), overwrite=True) is True
    assert (root / "new" / "dir" / "a.txt").read_bytes() == b"two"
    assert stat.S_IMODE((root / "new" / "dir" / "a.txt").stat().st_mode) == 0o640
    assert [p.name for p in (root / "new" / "dir").iterdir()] == ["a.txt"]
    with pytest.raises(IsADirectoryError):
        workspace.write_file("sub", b"x", overwrite=True)


def test_a_write_refuses_a_file_changed_since_it_was_read(place: tuple[Workspace, Path, Path]) -> None:
    workspace, root, _outside = place
    read_state = workspace.stat("sub/f.txt")
    (root / "sub" / "f.txt").write_bytes(b"changed by another program")
    with workspace.locate("sub/f.txt") as where, pytest.raises(ChangedMeanwhile):
        where.write(b"stale edit", overwrite=True, expect=read_state)
    assert (root / "sub" / "f.txt").read_bytes() == b"changed by another program"


def test_fifos_and_devices_are_never_opened_for_a_blocking_read(
        place: tuple[Workspace, Path, Path]) -> None:
    workspace, root, _outside = place
    os.mkfifo(root / "pipe")
    os.symlink("/dev/zero", root / "zero")
    with pytest.raises(NotRegularFile):
        workspace.read_bytes("pipe")
    with pytest.raises(WorkspaceError):
        workspace.read_bytes("zero")   # /dev is outside
    with pytest.raises(IsADirectoryError):
        workspace.read_bytes("sub")


def test_a_deep_tree_needs_few_descriptors(tmp_path: Path) -> None:
    """1,500 levels: made in one call, written, read through '..', walked and removed,
    with the descriptor table never filling (the soft limit is lowered to make sure)."""
    import gc
    import resource

    workspace = Workspace(tmp_path)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    gc.collect()  # what earlier tests left for the collector closes its descriptors now
    # 200 more than are open now, whatever earlier tests in this process left open
    resource.setrlimit(resource.RLIMIT_NOFILE,
                       (min(len(os.listdir("/proc/self/fd")) + 200, hard), hard))
    try:
        deep = "d/" * 1500
        assert workspace.mkdir(deep) is True
        workspace.write_file(deep + "f.txt", b"deep")
        assert workspace.read_bytes(deep + "../" * 1499 + "d/" * 1499 + "f.txt") == b"deep"
        assert sum(1 for _ in workspace.walk(".")) == 1501
        assert workspace.rmdir("d", recursive=True) == (1, 1499)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        # pytest removes old temporary folders recursively: a tree this deep would stop it
        if (tmp_path / "d").exists():
            workspace.rmdir("d", recursive=True)
    assert os.listdir(tmp_path) == []


def test_the_walk_reports_links_and_never_enters_them(place: tuple[Workspace, Path, Path]) -> None:
    workspace, _root, _outside = place
    seen = {e.relative: e.kind for e in workspace.walk(".")}
    assert seen["out"] == "symlink" and not any(k.startswith("out/") for k in seen)
    assert seen["sub/f.txt"] == "file" and seen["sub/deeper"] == "directory"
    assert list(seen) == sorted(seen, key=lambda p: p.split("/"))


def test_runs_are_the_walk_a_folder_stretch_at_a_time(tmp_path: Path) -> None:
    """A run holds a folder's entries up to and including its next subfolder, whose runs
    come next: joined, the runs are the walk; a pruned run's folder is not entered."""
    for path in ("a.txt", "b/c.txt", "b/d/e.txt", "b/f.txt", "g/h.txt", "i.txt"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("x")
    (tmp_path / "j").mkdir()
    (tmp_path / "link").symlink_to("b")
    workspace = Workspace(tmp_path)
    runs = list(workspace.walk_runs("."))
    flat = [(f"{r.relative}/{name}".removeprefix("./"), kind, r.depth)
            for r in runs for name, kind in zip(r.names, r.kinds, strict=True)]
    assert flat == [(e.relative, e.kind, e.depth) for e in workspace.walk(".")]
    assert [r.names for r in runs] == [["a.txt", "b"], ["c.txt", "d"], ["e.txt"], ["f.txt"],
                                       ["g"], ["h.txt"], ["i.txt", "j"], ["link"]]
    assert all("directory" not in r.kinds[:-1] for r in runs)

    kept = []
    for run in workspace.walk_runs("."):
        kept += run.names
        if run.names[-1] == "b":
            run.prune()
    assert kept == ["a.txt", "b", "g", "h.txt", "i.txt", "j", "link"]
    assert [r.names for r in workspace.walk_runs(".", max_depth=1)] == [
        ["a.txt", "b"], ["g"], ["i.txt", "j"], ["link"]]


def test_a_walk_left_half_way_closes_what_it_opened(tmp_path: Path) -> None:
    """Closed or dropped mid-way, a walk (by runs or by entries) leaves no descriptor
    open."""
    import gc

    for top in range(3):
        (tmp_path / f"d{top}/e/f").mkdir(parents=True)
        (tmp_path / f"d{top}/e/f/g.txt").write_text("x")
    workspace = Workspace(tmp_path)
    workspace.stat(".")  # the root's own descriptor, kept for the workspace's life

    def open_now() -> int:
        return len(os.listdir("/proc/self/fd"))

    gc.collect()  # what earlier tests left for the collector closes its descriptors now
    before = open_now()
    runs = workspace.walk_runs(".")
    for run in runs:
        if run.names == ["f"]:
            break
    assert open_now() > before
    runs.close()
    assert open_now() == before
    entries = workspace.walk(".")
    for entry in entries:
        if entry.relative == "d0/e/f/g.txt":
            break
    del entries
    gc.collect()
    assert open_now() == before


def test_a_folder_let_go_and_replaced_is_not_walked_again(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder whose descriptor the walk let go (past its budget) and that another
    folder replaced meanwhile is reported, not walked: the walk knows it by device and
    inode, noted as it let it go."""
    from janito_core import _fswalk

    monkeypatch.setattr(_fswalk, "FD_BUDGET", 2)
    (tmp_path / "a/b/c/d").mkdir(parents=True)
    (tmp_path / "a/b/c/d/f.txt").write_text("deep")
    (tmp_path / "a/z.txt").write_text("old")
    errors: list[tuple[str, OSError]] = []
    seen = []
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for entry in _fswalk.walk(fd, ".", on_error=lambda where, exc: errors.append((where, exc))):
            seen.append(entry.relative)
            if entry.relative == "a/b/c/d/f.txt":
                os.rename(tmp_path / "a", tmp_path / "old")
                (tmp_path / "a").mkdir()
                (tmp_path / "a/z.txt").write_text("new")
    finally:
        os.close(fd)
    assert seen == ["a", "a/b", "a/b/c", "a/b/c/d", "a/b/c/d/f.txt"]
    assert [(where, type(exc)) for where, exc in errors] == [("a", _fswalk.FolderChanged)]


def test_rename_never_replaces_without_overwrite(place: tuple[Workspace, Path, Path]) -> None:
    workspace, root, _outside = place
    (root / "a.txt").write_bytes(b"a")
    (root / "b.txt").write_bytes(b"b")
    with pytest.raises(FileExistsError):
        workspace.rename("a.txt", "b.txt")
    workspace.rename("a.txt", "b.txt", overwrite=True)
    assert (root / "b.txt").read_bytes() == b"a" and not (root / "a.txt").exists()
    (root / "emptydir").mkdir()
    with pytest.raises((IsADirectoryError, FileExistsError)):
        workspace.rename("b.txt", "emptydir", overwrite=True)


def test_missing_folders_are_made_only_when_asked(place: tuple[Workspace, Path, Path]) -> None:
    workspace, root, _outside = place
    with pytest.raises(FileNotFoundError):
        workspace.write_file("x/y.txt", b"", make_parents=False)
    assert not (root / "x").exists()
    assert workspace.resolve("x/y/z.txt") == str(root.resolve() / "x" / "y" / "z.txt")
    with pytest.raises(WorkspaceError):
        workspace.resolve("x/../../out")


def test_unconfined_still_starts_at_the_root(place: tuple[Workspace, Path, Path]) -> None:
    _workspace, root, outside = place
    free = Workspace.unconfined(root)
    assert free.read_bytes("out/secret.txt") == SECRET
    assert free.read_bytes(str(outside / "secret.txt")) == SECRET
    assert free.relative("sub/f.txt") == "sub/f.txt"
    assert free.relative(str(outside / "secret.txt")) == str((outside / "secret.txt").resolve())


def test_a_folder_swapped_for_a_link_never_leads_out(tmp_path: Path) -> None:
    """The check-then-use race: a thread swaps ``ws/dir`` between a real folder and a link
    to an outside folder while reads and writes go through the workspace."""
    root = tmp_path / "ws"
    outside = tmp_path / "out"
    (root / "dir").mkdir(parents=True)
    (root / "dir" / "f.txt").write_bytes(b"inside")
    outside.mkdir()
    (outside / "f.txt").write_bytes(SECRET)
    workspace = Workspace(root)
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            os.rename(root / "dir", root / "dir.real")
            os.symlink(outside, root / "dir")
            os.unlink(root / "dir")
            os.rename(root / "dir.real", root / "dir")

    swapper = threading.Thread(target=swap)
    swapper.start()
    leaked = refused = read = rounds = 0
    deadline = time.monotonic() + 60
    try:
        # 2,000 rounds, and on until a read got through (a loaded machine may schedule the
        # swapping thread so that the first rounds all meet the link).
        while rounds < 2000 or (read == 0 and time.monotonic() < deadline):
            rounds += 1
            try:
                data = workspace.read_bytes("dir/f.txt")
            except (WorkspaceError, OSError):
                refused += 1
            else:
                read += 1
                leaked += data == SECRET
            try:
                workspace.write_file("dir/new.txt", b"x", overwrite=True, make_parents=False)
            except (WorkspaceError, OSError):
                pass
    finally:
        stop.set()
        swapper.join()
    assert leaked == 0
    assert sorted(os.listdir(outside)) == ["f.txt"]
    assert read > 0, "the race never let a read through: the test proves nothing"
    sys.stderr.write(f"race: {read} reads inside, {refused} refused, 0 outside\n")


def test_path_text_errors_are_invalid_path(place: tuple[Workspace, Path, Path]) -> None:
    workspace, _root, _outside = place
    for bad in ("", "a\x00b", 5, None, "bad\ud800name"):
        with pytest.raises(WorkspaceError) as caught:
            workspace.open_regular(bad)
        assert caught.value.error_type == "invalid_path"


def test_a_name_too_long_is_the_system_error(place: tuple[Workspace, Path, Path]) -> None:
    workspace, _root, _outside = place
    with pytest.raises(OSError) as caught:
        workspace.read_bytes("n" * 300)
    assert caught.value.errno == errno.ENAMETOOLONG
