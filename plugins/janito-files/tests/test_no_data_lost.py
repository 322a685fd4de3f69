"""No data lost: writers killed with SIGKILL, failed edits, moves across filesystems.

The writers are real processes (forked from the test, or fresh interpreters) that call the
tools through janito's dispatch; the test kills them at random moments and then looks at
what is on disk. The random moments vary; what is asserted holds for every one of them.
"""

from __future__ import annotations

import json
import os
import random
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import pytest
from files_helpers import fails, ok

OLD = b"".join(b"old line %07d\n" % i for i in range(150_000))      # about 2.2 MB
NEW = b"".join(b"NEW-LINE %07d ....\n" % i for i in range(150_000))  # longer, other bytes


def fork_and_kill(work: Callable[[], None], delay: float) -> None:
    """Run ``work`` in a forked child, SIGKILL it after ``delay`` seconds, reap it."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: signal readiness, then work until killed
        try:
            os.close(read_end)
            os.write(write_end, b"r")
            work()
        finally:
            os._exit(0)
    os.close(write_end)
    os.read(read_end, 1)  # the child is running
    os.close(read_end)
    time.sleep(delay)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def temp_files(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.name.startswith(".") and p.name.endswith(".tmp")]


def test_create_file_killed_mid_write_leaves_old_or_new(files: Any, ws: Path) -> None:
    target = ws / "data.txt"
    old_text, new_text = OLD.decode(), NEW.decode()
    # The first call builds the tool's schema; done here, the children start writing at once.
    ok(files.call("CreateFile", filepath="data.txt", content=old_text))

    def writer() -> None:
        flip = True
        while True:
            files.call("CreateFile", filepath="data.txt", content=new_text if flip else old_text,
                       overwrite=True)
            flip = not flip

    rng = random.Random(1234)
    cycles = 60
    seen = {OLD: 0, NEW: 0}
    interrupted = 0
    for _ in range(cycles):
        fork_and_kill(writer, rng.uniform(0.0, 0.06))
        content = target.read_bytes()
        assert content in (OLD, NEW), f"half-written file: {len(content)} bytes"
        seen[content] += 1
        stray = temp_files(ws)
        interrupted += bool(stray)
        for path in stray:  # what a killed writer leaves: a hidden temporary, never the target
            path.unlink()
    assert sum(seen.values()) == cycles
    # Evidence that kills landed inside a write (between creating the temporary and the
    # rename): with dozens of random moments this never comes out zero.
    assert interrupted > 0
    print(f"{cycles} kill cycles: old {seen[OLD]}, new {seen[NEW]}, "
          f"killed mid-write (temporary left) {interrupted}")


WRITER = r"""
import sys
from janito_core import Registry, Workspace
from janito_core.dispatch import call_tool
registry = Registry(workspace=Workspace(sys.argv[1]), autoload=("files",), allowed=None)
contents = [open(sys.argv[2]).read(), open(sys.argv[3]).read()]
call_tool("ReadFile", {"filepath": "data.txt", "max_lines": 1}, registry=registry)
print("ready", flush=True)
i = 0
while True:
    call_tool("CreateFile", {"filepath": "data.txt", "content": contents[i % 2],
                             "overwrite": True}, registry=registry)
    i += 1
"""


def test_fresh_interpreter_killed_mid_write(files: Any, ws: Path, tmp_path: Path) -> None:
    target = ws / "data.txt"
    target.write_bytes(OLD)
    (tmp_path / "old").write_bytes(OLD)
    (tmp_path / "new").write_bytes(NEW)
    rng = random.Random(99)
    for _ in range(4):
        child = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(ws), str(tmp_path / "new"), str(tmp_path / "old")],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )
        assert child.stdout is not None
        assert child.stdout.readline() == b"ready\n"
        time.sleep(rng.uniform(0.0, 0.08))
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
        assert target.read_bytes() in (OLD, NEW)


def test_replace_text_write_failure_leaves_the_file_untouched(files: Any, ws: Path) -> None:
    """The rewrite fails for real (the file-size limit stops the write with EFBIG)."""
    target = ws / "config.txt"
    original = b"name = small\n" + b"x" * 2000 + b"\n"
    target.write_bytes(original)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_end)
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
            result = files.call("ReplaceTextInFile", filepath="config.txt",
                                old_str="small", new_str="y" * 10_000)
            os.write(write_end, json.dumps(result).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as reader:
        result = json.loads(reader.read())
    os.waitpid(pid, 0)
    fails(result, "file_too_large")
    assert "unchanged" in result["error"]
    assert target.read_bytes() == original
    assert temp_files(ws) == []


def test_replace_text_killed_mid_write(files: Any, ws: Path) -> None:
    target = ws / "data.txt"
    target.write_bytes(OLD)
    ok(files.call("ReplaceTextInFile", filepath="data.txt", old_str="old line 0000000",
                  new_str="old line 0000000"))

    def editor() -> None:
        while True:
            files.call("ReplaceTextInFile", filepath="data.txt", old_str="old line",
                       new_str="NEW-LINE", replace_all=True)
            files.call("ReplaceTextInFile", filepath="data.txt", old_str="NEW-LINE",
                       new_str="old line", replace_all=True)

    swapped = OLD.replace(b"old line", b"NEW-LINE")
    rng = random.Random(7)
    for _ in range(25):
        fork_and_kill(editor, rng.uniform(0.0, 0.08))
        assert target.read_bytes() in (OLD, swapped)
        for path in temp_files(ws):
            path.unlink()


def _other_filesystem() -> str | None:
    shm = "/dev/shm"
    if not os.path.isdir(shm) or not os.access(shm, os.W_OK):
        return None
    if os.stat(shm).st_dev == os.stat(os.path.realpath(os.getcwd())).st_dev:
        return None
    return shm


@pytest.fixture
def other_fs(tmp_path: Path) -> Path:
    shm = _other_filesystem()
    if shm is None:
        pytest.skip("no writable /dev/shm on another filesystem than the workspace")
    if os.stat(shm).st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("/dev/shm is on the same filesystem as the temporary folder")
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="janito-files-test-", dir=shm))
    yield folder
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


def test_move_across_filesystems(janito: Any, other_fs: Path) -> None:
    # An unconfined workspace lets one call reach two filesystems.
    janito.load("files", privileges="rw", confined=False)
    ws = Path(janito.workspace)
    (ws / "big.txt").write_bytes(OLD)
    (ws / "big.txt").chmod(0o640)
    dest = other_fs / "big.txt"
    result = ok(janito.call("MoveFile", source="big.txt", destination=str(dest)))
    assert result["method"] == "copy"
    assert dest.read_bytes() == OLD
    assert (dest.stat().st_mode & 0o777) == 0o640
    assert not (ws / "big.txt").exists()
    # a folder, back again
    tree = other_fs / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "sub" / "f.txt").write_text("leaf")
    ok(janito.call("MoveFile", source=str(tree), destination="tree"))
    assert (ws / "tree" / "sub" / "f.txt").read_text() == "leaf"
    assert not tree.exists()


def test_move_across_filesystems_refuses_existing_target(janito: Any, other_fs: Path) -> None:
    janito.load("files", privileges="rw", confined=False)
    ws = Path(janito.workspace)
    (ws / "a.txt").write_text("source")
    (other_fs / "a.txt").write_text("keep me")
    fails(janito.call("MoveFile", source="a.txt", destination=str(other_fs / "a.txt")),
          "file_exists")
    assert (other_fs / "a.txt").read_text() == "keep me"
    assert (ws / "a.txt").read_text() == "source"
    ok(janito.call("MoveFile", source="a.txt", destination=str(other_fs / "a.txt"),
                   overwrite=True))
    assert (other_fs / "a.txt").read_text() == "source"


def test_move_across_filesystems_killed_never_loses_the_source(janito: Any,
                                                               other_fs: Path) -> None:
    janito.load("files", privileges="rw", confined=False)
    ws = Path(janito.workspace)
    source = ws / "big.txt"
    dest = other_fs / "big.txt"
    source.write_bytes(NEW)
    ok(janito.call("MoveFile", source="big.txt", destination=str(dest)))

    def mover() -> None:
        janito.call("MoveFile", source="big.txt", destination=str(dest))
        while True:
            time.sleep(1)

    rng = random.Random(5)
    moved = interrupted = 0
    for _ in range(30):
        source.write_bytes(NEW)
        if dest.exists():
            dest.unlink()
        fork_and_kill(mover, rng.uniform(0.0, 0.03))
        if source.exists():
            assert source.read_bytes() == NEW  # the source is whole until the copy is
        else:
            assert dest.read_bytes() == NEW  # gone only once the destination is complete
            moved += 1
        if dest.exists() and source.exists():
            assert dest.read_bytes() == NEW
        stray = temp_files(other_fs)
        interrupted += bool(stray)
        for path in stray:
            path.unlink()
    print(f"30 kill cycles across filesystems: {moved} completed moves, {interrupted} killed "
          "mid-copy, none lost")


def test_a_fifo_moved_across_filesystems_is_refused_without_blocking(janito: Any,
                                                                     other_fs: Path) -> None:
    import threading

    janito.load("files", privileges="rw", confined=False)
    ws = Path(janito.workspace)
    os.mkfifo(ws / "pipe")
    outcome: list[dict[str, Any]] = []
    worker = threading.Thread(target=lambda: outcome.append(janito.call(
        "MoveFile", source="pipe", destination=str(other_fs / "pipe"))), daemon=True)
    worker.start()
    worker.join(20)
    assert outcome, "MoveFile blocked on a FIFO"
    fails(outcome[0], "not_a_file")
    assert outcome[0]["source_kept"] is True and (ws / "pipe").exists()
    assert list(other_fs.iterdir()) == []
