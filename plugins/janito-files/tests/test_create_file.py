"""CreateFile: creation, overwrite refusal, modes, parents, atomic replacement, errors."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from files_helpers import fails, ok


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_creates_a_file_with_parents(files: Any, ws: Path) -> None:
    result = ok(files.call("CreateFile", filepath="a/b/c.txt", content="hello\nworld"))
    assert (ws / "a/b/c.txt").read_text() == "hello\nworld"
    assert result["created"] is True and result["overwritten"] is False
    assert result["lines"] == 2 and result["bytes"] == 11
    assert result["filepath"] == "a/b/c.txt" and result["path"] == "a/b/c.txt"
    assert leftovers(ws / "a/b") == []


def test_new_file_mode_follows_the_umask(files: Any, ws: Path) -> None:
    old = os.umask(0o027)
    try:
        ok(files.call("CreateFile", filepath="m.txt", content="x"))
    finally:
        os.umask(old)
    assert stat.S_IMODE((ws / "m.txt").stat().st_mode) == 0o640


def test_refuses_to_overwrite_unless_asked(files: Any, ws: Path) -> None:
    (ws / "a.txt").write_text("old")
    result = fails(files.call("CreateFile", filepath="a.txt", content="new"), "file_exists")
    assert "overwrite" in result["error"]
    assert (ws / "a.txt").read_text() == "old"
    assert leftovers(ws) == []
    replaced = ok(files.call("CreateFile", filepath="a.txt", content="new", overwrite=True))
    assert replaced["overwritten"] is True and replaced["created"] is False
    assert (ws / "a.txt").read_text() == "new"


def test_overwrite_keeps_the_mode(files: Any, ws: Path) -> None:
    script = ws / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o751)
    ok(files.call("CreateFile", filepath="run.sh", content="#!/bin/sh\necho hi\n",
                  overwrite=True))
    assert stat.S_IMODE(script.stat().st_mode) == 0o751
    assert script.read_text().endswith("echo hi\n")


def test_replacement_is_a_new_inode_never_a_partial_rewrite(files: Any, ws: Path) -> None:
    target = ws / "a.txt"
    target.write_text("old content\n")
    with open(target, "rb") as reader:  # a reader keeps seeing the complete old file
        ok(files.call("CreateFile", filepath="a.txt", content="new\n", overwrite=True))
        assert reader.read() == b"old content\n"
    assert target.read_text() == "new\n"


def test_writing_through_a_symlink_inside_replaces_its_target(files: Any, ws: Path) -> None:
    (ws / "real.txt").write_text("old")
    (ws / "alias.txt").symlink_to("real.txt")
    ok(files.call("CreateFile", filepath="alias.txt", content="new", overwrite=True))
    assert (ws / "alias.txt").is_symlink()
    assert (ws / "real.txt").read_text() == "new"


def test_unicode_and_empty_content(files: Any, ws: Path) -> None:
    ok(files.call("CreateFile", filepath="u.txt", content="caf\u00e9 \u2603\n"))
    assert (ws / "u.txt").read_bytes() == "caf\u00e9 \u2603\n".encode()
    empty = ok(files.call("CreateFile", filepath="e.txt", content=""))
    assert empty["lines"] == 0 and (ws / "e.txt").read_bytes() == b""


def test_a_lone_surrogate_is_written_as_the_replacement_character(files: Any, ws: Path) -> None:
    # JSON text can escape half a surrogate pair, which no UTF-8 file can hold: dispatch
    # replaces it with U+FFFD before the tool sees it (docs/dispatch.md)
    ok(files.call("CreateFile", filepath="s.txt", content="bad \ud800 surrogate"))
    assert (ws / "s.txt").read_text(encoding="utf-8") == "bad \ufffd surrogate"


def test_folder_targets_are_refused(files: Any, ws: Path) -> None:
    (ws / "sub").mkdir()
    fails(files.call("CreateFile", filepath="sub", content="x", overwrite=True), "is_a_directory")
    fails(files.call("CreateFile", filepath="new/", content="x"), "is_a_directory")
    fails(files.call("CreateFile", filepath=".", content="x", overwrite=True), "is_a_directory")
    assert (ws / "sub").is_dir()


def test_parent_that_is_a_file(files: Any, ws: Path) -> None:
    (ws / "plain").write_text("x")
    fails(files.call("CreateFile", filepath="plain/child.txt", content="x"), "not_a_directory")


def test_missing_arguments(files: Any) -> None:
    result = fails(files.call("CreateFile", content="x"), "invalid_arguments")
    assert result["details"] == [{"field": "filepath", "error": "missing required field"}]


def test_outside_the_workspace_is_refused(files: Any, ws: Path, outside: Path) -> None:
    for path in (str(outside / "new.txt"), "../outside/new.txt", "a/../../outside/new.txt"):
        fails(files.call("CreateFile", filepath=path, content="x"), "outside_workspace")
    (ws / "link").symlink_to(outside / "secret.txt")
    fails(files.call("CreateFile", filepath="link", content="x", overwrite=True),
          "outside_workspace")
    (ws / "dirlink").symlink_to(outside)
    fails(files.call("CreateFile", filepath="dirlink/new.txt", content="x"), "outside_workspace")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "OUTSIDE-SECRET\n"
