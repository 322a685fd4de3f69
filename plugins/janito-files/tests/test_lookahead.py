"""The compiled ``Lookahead`` (janito_files._speedups), which opens and lists a walk's
next subfolders on a thread of its own: a walk gives exactly the runs and errors it gives
without it, opens nothing it would not, and leaves no descriptor open however it ends."""

from __future__ import annotations

import gc
import os
import random
import time
from pathlib import Path
from typing import Any

import pytest

from janito_core import Workspace
from janito_core._fswalk import Folder, list_folder

NAMES = ["a", "b", "sub", "Sub", "é", "x y", "[x]", ".git", ".janito", "node_modules",
         "keep", "z" * 40]


def open_folders() -> int:
    gc.collect()  # what earlier tests left for the collector closes its descriptors now
    return len(os.listdir("/proc/self/fd"))


def eventually(condition: Any, seconds: float = 10.0) -> bool:
    """Whether ``condition()`` holds within ``seconds`` (the thread works at its pace)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.002)
    return True


def _tree(root: Path, rng: random.Random, depth: int = 0) -> None:
    root.mkdir()
    for index in range(rng.randrange(0, 7 if depth < 3 else 3)):
        name = rng.choice(NAMES) + str(index)
        path = root / name
        roll = rng.random()
        if roll < 0.4 and depth < 4:
            _tree(path, rng, depth + 1)
        elif roll < 0.45:
            path.symlink_to(".." if rng.random() < 0.5 else "/")
        elif roll < 0.48:
            os.mkfifo(path)
        elif roll < 0.52:
            with open(os.fsencode(root) + b"/bad\xff" + str(index).encode(), "wb"):
                pass
        elif roll < 0.55:
            path.mkdir()
            path.chmod(0)  # a folder the walk cannot list (root reads it anyway)
        else:
            path.write_bytes(b"x" * rng.randrange(3))


def _walk(workspace: Workspace, lookahead: Any, rng: random.Random, max_depth: int | None,
          stop_after: int | None) -> tuple[list[Any], list[Any]]:
    errors: list[Any] = []
    runs = []
    skipping = random.Random(rng.random())

    def enter(folder: Folder) -> None:
        # what an enter callback does: keep fewer (here by name, the same each time)
        if any(name.startswith("node_modules") for name in folder.names):
            kept = [(n, k) for n, k in zip(folder.names, folder.kinds, strict=True)
                    if not n.startswith("node_modules")]
            folder.keep([n for n, _ in kept], [k for _, k in kept])

    walk = workspace.walk_runs(".", max_depth=max_depth, enter=enter, lister=list_folder,
                               lookahead=lookahead,
                               on_error=lambda where, exc: errors.append((where, exc.errno)))
    for run in walk:
        runs.append((run.relative, run.depth, run.names, run.kinds))
        if skipping.random() < 0.1:
            run.prune()
        if stop_after is not None and len(runs) >= stop_after:
            walk.close()
            break
    return runs, errors


def test_walks_with_and_without_the_lookahead_agree(speedups: Any, tmp_path: Path) -> None:
    rng = random.Random(1337)
    before = open_folders()
    for case in range(120):
        root = tmp_path / f"t{case}"
        _tree(root, rng)
        workspace = Workspace(root)
        max_depth = rng.choice([None, None, 1, 2, 3])
        stop_after = rng.choice([None, None, None, 1, 3, 10])
        seed = rng.random()
        plain = _walk(workspace, None, random.Random(seed), max_depth, stop_after)
        ahead = speedups.Lookahead(after=rng.choice([0, 0, 1, 5]))
        try:
            looked = _walk(workspace, ahead, random.Random(seed), max_depth, stop_after)
        finally:
            ahead.close()
        assert looked == plain, case
    del workspace  # it holds its root open
    gc.collect()
    assert open_folders() == before


def test_a_large_walk_looks_ahead_and_agrees(speedups: Any, tmp_path: Path) -> None:
    """Past the first 256 folders the thread starts, as it does for FindFiles."""
    for top in range(12):
        for middle in range(30):
            folder = tmp_path / "tree" / f"d{top}" / f"m{middle}"
            folder.mkdir(parents=True)
            for leaf in range(3):
                (folder / f"f{leaf}.py").write_text("x")
    workspace = Workspace(tmp_path / "tree")
    before = open_folders()
    plain = _walk(workspace, None, random.Random(5), None, None)
    ahead = speedups.Lookahead()
    jobs: list[Any] = []

    class Counting:
        def ahead(self, *args: Any) -> Any:
            jobs.append(ahead.ahead(*args))
            return jobs[-1]

        def take(self, job: int, name: str) -> Any:
            return ahead.take(job, name)

        def drop(self, job: int) -> None:
            ahead.drop(job)

        def release(self, fd: int) -> None:
            ahead.release(fd)

    try:
        looked = _walk(workspace, Counting(), random.Random(5), None, None)
    finally:
        ahead.close()
    assert looked == plain
    # the first 256 folders are left to the walk; the thread takes the subfolders of the
    # rest (whether it gets to each before the walk does depends on the machine's load)
    assert jobs[:256] == [None] * 256
    assert any(job is not None for job in jobs[256:])
    assert open_folders() <= before + 1  # the workspace's root, opened by the first walk


def test_what_is_not_a_folder_now_is_left_to_the_walk(speedups: Any, tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "real").mkdir()
    (root / "real" / "inside").write_text("x")
    (root / "link").symlink_to(tmp_path)  # listed as a folder, a link by the time it opens
    (root / "file").write_text("x")
    os.mkfifo(root / "fifo")
    before = open_folders()
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    ahead = speedups.Lookahead(after=0)
    try:
        names = ["fifo", "file", "link", "real"]
        taken = None
        for attempt in range(1, 60):  # until the thread got there first: it works at its pace
            job = ahead.ahead(fd, names, ["directory"] * 4)
            time.sleep(0.005 * attempt)
            for name in ["fifo", "file", "link"]:
                assert ahead.take(job, name) is None, name  # never opened: the walk decides
            taken = ahead.take(job, "real")
            if taken is not None:
                break
        assert taken is not None
        child, device, inode, listed, kinds = taken
        try:
            info = os.fstat(child)
            assert (device, inode) == (info.st_dev, info.st_ino)
            assert (listed, kinds) == list_folder(child) == (["inside"], ["file"])
        finally:
            os.close(child)
        assert ahead.take(job, "real") is None  # once
        assert ahead.take(job, "missing") is None
        assert ahead.take(job + 100, "real") is None
        ahead.drop(job)
        assert ahead.ahead(fd, ["file"], ["file"]) is None  # no folder among them
    finally:
        ahead.close()
        os.close(fd)
    assert open_folders() == before


def test_a_folder_swapped_for_a_link_after_it_was_opened_stays_the_folder_opened(
        speedups: Any, tmp_path: Path) -> None:
    # Someone outside janito renames a folder the thread has opened and puts a link to a
    # folder outside the workspace in its place: the walk gets the folder that was opened
    # (still in the workspace, under its new name), as it would had it opened the folder
    # itself a moment before the swap; what the link points to is never listed.
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("x")
    root = tmp_path / "root"
    root.mkdir()
    before = open_folders()
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    ahead = speedups.Lookahead(after=0)
    try:
        taken = None
        for attempt in range(1, 40):  # until the thread opened it before the swap
            real = root / f"real{attempt}"
            real.mkdir()
            (real / "inside").write_text("x")
            original = os.stat(real)
            job = ahead.ahead(fd, [real.name], ["directory"])
            time.sleep(0.002 * attempt)
            real.rename(root / f"moved{attempt}")
            real.symlink_to(outside)
            taken = ahead.take(job, real.name)
            ahead.drop(job)
            if taken is not None:  # opened before the swap: O_NOFOLLOW refuses the link
                break
        assert taken is not None
        child, device, inode, listed, kinds = taken
        try:
            assert (device, inode) == (original.st_dev, original.st_ino)
            assert (os.fstat(child).st_dev, os.fstat(child).st_ino) == (device, inode)
            assert (listed, kinds) == list_folder(child) == (["inside"], ["file"])
        finally:
            os.close(child)
        # and the walk itself, looking ahead, never lists the link's target
        walking = speedups.Lookahead(after=0)
        try:
            runs = [(run.relative, run.names) for run in Workspace(root).walk_runs(
                ".", lister=list_folder, lookahead=walking)]
        finally:
            walking.close()
        assert [names for _, names in runs if "secret" in names] == [], runs
    finally:
        ahead.close()
        os.close(fd)
    assert open_folders() <= before + 1  # the workspace's root, opened by its walk


def test_names_that_could_leave_the_folder_are_never_opened(speedups: Any,
                                                            tmp_path: Path) -> None:
    (tmp_path / "w" / "a").mkdir(parents=True)
    fd = os.open(tmp_path / "w", os.O_RDONLY | os.O_DIRECTORY)
    ahead = speedups.Lookahead(after=0)
    try:
        names = ["..", "a/..", "/etc", "", ".", "a"]
        taken = None
        for attempt in range(1, 60):
            job = ahead.ahead(fd, names, ["directory"] * len(names))
            time.sleep(0.005 * attempt)
            for name in names[:-1]:
                assert ahead.take(job, name) is None, name
            taken = ahead.take(job, "a")
            if taken is not None:
                break
        assert taken is not None  # the one name that stays in the folder was opened
        os.close(taken[0])
    finally:
        ahead.close()
        os.close(fd)


def test_what_was_not_taken_is_closed_by_drop_and_by_close(speedups: Any,
                                                           tmp_path: Path) -> None:
    for number in range(40):
        (tmp_path / "w" / f"d{number:02}").mkdir(parents=True)
    fd = os.open(tmp_path / "w", os.O_RDONLY | os.O_DIRECTORY)
    names, kinds = list_folder(fd)
    before = open_folders()
    ahead = speedups.Lookahead(after=0)
    job = ahead.ahead(fd, names, kinds)
    assert eventually(lambda: open_folders() >= before + 32)
    time.sleep(0.05)
    # at most 32 listed and waiting, each an open descriptor, plus the folder's copy
    assert open_folders() <= before + 33
    ahead.drop(job)
    assert eventually(lambda: open_folders() == before)
    second = ahead.ahead(fd, names, kinds)
    assert second is not None
    assert eventually(lambda: open_folders() > before + 1)
    ahead.close()
    ahead.close()
    assert open_folders() == before
    with pytest.raises(ValueError):
        ahead.ahead(fd, names, kinds)
    os.close(fd)


def test_bad_arguments_are_refused(speedups: Any) -> None:
    ahead = speedups.Lookahead(after=0)
    try:
        with pytest.raises(TypeError):
            ahead.ahead("3", [], [])
        with pytest.raises(ValueError):
            ahead.ahead(0, ["a"], [])
        with pytest.raises(OSError):
            ahead.ahead(10_000, ["a"], ["directory"])  # no such descriptor
        with pytest.raises(TypeError):
            ahead.take("job", "a")
    finally:
        ahead.close()
