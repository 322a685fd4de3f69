"""DeleteFile, CreateDirectory and RemoveDirectory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from files_helpers import fails, ok


def test_delete_file(files: Any, ws: Path) -> None:
    (ws / "a.txt").write_text("abc")
    result = ok(files.call("DeleteFile", filepath="a.txt"))
    assert result["bytes"] == 3 and result["was_symlink"] is False
    assert not (ws / "a.txt").exists()
    fails(files.call("DeleteFile", filepath="a.txt"), "not_found")


def test_delete_removes_a_link_and_keeps_its_target(files: Any, ws: Path) -> None:
    (ws / "real.txt").write_text("keep")
    (ws / "link").symlink_to("real.txt")
    assert ok(files.call("DeleteFile", filepath="link"))["was_symlink"] is True
    assert not (ws / "link").is_symlink() and (ws / "real.txt").read_text() == "keep"


def test_delete_refuses_folders(files: Any, ws: Path) -> None:
    (ws / "d").mkdir()
    result = fails(files.call("DeleteFile", filepath="d"), "is_a_directory")
    assert "RemoveDirectory" in result["error"]
    fails(files.call("DeleteFile", filepath="."), "is_a_directory")
    assert (ws / "d").is_dir()


def test_delete_outside(files: Any, ws: Path, outside: Path) -> None:
    (ws / "link").symlink_to(outside / "secret.txt")
    for path in ("link/", "../outside/secret.txt", str(outside / "secret.txt")):
        fails(files.call("DeleteFile", filepath=path), "outside_workspace")
    assert (outside / "secret.txt").exists() and (ws / "link").is_symlink()
    # the link is an entry of the workspace: deleting it never touches what it points to
    assert ok(files.call("DeleteFile", filepath="link"))["was_symlink"] is True
    assert (outside / "secret.txt").read_text() == "OUTSIDE-SECRET\n"
    assert not (ws / "link").is_symlink()


def test_create_directory(files: Any, ws: Path) -> None:
    result = ok(files.call("CreateDirectory", directory="a/b/c"))
    assert result["created"] is True and (ws / "a/b/c").is_dir()
    again = ok(files.call("CreateDirectory", directory="a/b/c"))
    assert again["created"] is False
    (ws / "f").write_text("x")
    fails(files.call("CreateDirectory", directory="f"), "file_exists")
    fails(files.call("CreateDirectory", directory="f/sub"), "not_a_directory")


def test_create_directory_outside(files: Any, ws: Path, outside: Path) -> None:
    fails(files.call("CreateDirectory", directory="../outside/new"), "outside_workspace")
    fails(files.call("CreateDirectory", directory=str(outside / "new")), "outside_workspace")
    (ws / "out").symlink_to(outside)
    fails(files.call("CreateDirectory", directory="out/new"), "outside_workspace")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


def test_remove_empty_directory(files: Any, ws: Path) -> None:
    (ws / "d").mkdir()
    ok(files.call("RemoveDirectory", directory="d"))
    assert not (ws / "d").exists()
    fails(files.call("RemoveDirectory", directory="d"), "not_found")


def test_remove_non_empty_needs_recursive(files: Any, ws: Path) -> None:
    (ws / "d" / "sub").mkdir(parents=True)
    (ws / "d" / "sub" / "f.txt").write_text("x")
    (ws / "d" / "g.txt").write_text("y")
    result = fails(files.call("RemoveDirectory", directory="d"), "directory_not_empty")
    assert "recursive=true" in result["error"]
    done = ok(files.call("RemoveDirectory", directory="d", recursive=True))
    assert (done["removed_files"], done["removed_directories"]) == (2, 1)
    assert not (ws / "d").exists()


def test_recursive_removal_never_follows_links(files: Any, ws: Path, outside: Path) -> None:
    (ws / "d").mkdir()
    (ws / "d" / "escape").symlink_to(outside)
    (ws / "d" / "file_link").symlink_to(outside / "secret.txt")
    ok(files.call("RemoveDirectory", directory="d", recursive=True))
    assert (outside / "secret.txt").read_text() == "OUTSIDE-SECRET\n"


def test_remove_refuses_root_files_and_links(files: Any, ws: Path, outside: Path) -> None:
    fails(files.call("RemoveDirectory", directory=".", recursive=True), "invalid_arguments")
    fails(files.call("RemoveDirectory", directory="", recursive=True), "invalid_path")
    (ws / "f.txt").write_text("x")
    fails(files.call("RemoveDirectory", directory="f.txt"), "not_a_directory")
    (ws / "real").mkdir()
    (ws / "dlink").symlink_to("real")
    fails(files.call("RemoveDirectory", directory="dlink", recursive=True), "not_a_directory")
    (ws / "out").symlink_to(outside)
    fails(files.call("RemoveDirectory", directory="out", recursive=True), "not_a_directory")
    fails(files.call("RemoveDirectory", directory="out/", recursive=True), "outside_workspace")
    fails(files.call("RemoveDirectory", directory="..", recursive=True), "outside_workspace")
    assert (ws / "real").is_dir() and (outside / "secret.txt").exists()
    assert ws.is_dir()
