"""MoveFile on one filesystem: renames, overwrite rules, links, folders, errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from files_helpers import fails, ok


def test_renames_a_file_into_new_folders(files: Any, ws: Path) -> None:
    (ws / "a.txt").write_text("data")
    missing = fails(files.call("MoveFile", source="a.txt", destination="x/y/b.txt"),
                    "not_found")
    assert "create_dirs=true" in missing["error"] and not (ws / "x").exists()
    result = ok(files.call("MoveFile", source="a.txt", destination="x/y/b.txt",
                           create_dirs=True, preserve_metadata=False))
    assert (ws / "x/y/b.txt").read_text() == "data" and not (ws / "a.txt").exists()
    assert result["method"] == "rename" and result["kind"] == "file"
    assert (result["source"], result["destination"]) == ("a.txt", "x/y/b.txt")


def test_existing_destination_needs_overwrite(files: Any, ws: Path) -> None:
    (ws / "a.txt").write_text("new")
    (ws / "b.txt").write_text("old")
    fails(files.call("MoveFile", source="a.txt", destination="b.txt"), "file_exists")
    assert (ws / "a.txt").read_text() == "new" and (ws / "b.txt").read_text() == "old"
    result = ok(files.call("MoveFile", source="a.txt", destination="b.txt", overwrite=True))
    assert result["replaced"] is True
    assert (ws / "b.txt").read_text() == "new" and not (ws / "a.txt").exists()


def test_folders_move_but_are_never_overwritten(files: Any, ws: Path) -> None:
    (ws / "src" / "inner").mkdir(parents=True)
    (ws / "src" / "inner" / "f.txt").write_text("f")
    (ws / "dst").mkdir()
    fails(files.call("MoveFile", source="src", destination="dst", overwrite=True),
          "file_exists")
    ok(files.call("MoveFile", source="src", destination="moved"))
    assert (ws / "moved" / "inner" / "f.txt").read_text() == "f"
    (ws / "file.txt").write_text("x")
    fails(files.call("MoveFile", source="moved", destination="file.txt", overwrite=True),
          "file_exists")
    assert (ws / "moved").is_dir()


def test_folder_into_itself_and_same_path(files: Any, ws: Path) -> None:
    (ws / "d").mkdir()
    fails(files.call("MoveFile", source="d", destination="d/sub"), "invalid_arguments")
    (ws / "a.txt").write_text("a")
    fails(files.call("MoveFile", source="a.txt", destination="./a.txt"), "invalid_arguments")
    fails(files.call("MoveFile", source=".", destination="elsewhere"), "invalid_arguments")


def test_moves_a_symlink_not_its_target(files: Any, ws: Path) -> None:
    (ws / "real.txt").write_text("r")
    (ws / "link").symlink_to("real.txt")
    ok(files.call("MoveFile", source="link", destination="link2"))
    assert (ws / "link2").is_symlink() and not (ws / "link").exists()
    assert (ws / "real.txt").read_text() == "r"


def test_missing_source(files: Any) -> None:
    fails(files.call("MoveFile", source="nope", destination="b"), "not_found")


def test_outside_the_workspace(files: Any, ws: Path, outside: Path) -> None:
    (ws / "a.txt").write_text("a")
    fails(files.call("MoveFile", source="a.txt", destination=str(outside / "a.txt")),
          "outside_workspace")
    fails(files.call("MoveFile", source="a.txt", destination="../outside/a.txt"),
          "outside_workspace")
    fails(files.call("MoveFile", source=str(outside / "secret.txt"), destination="s.txt"),
          "outside_workspace")
    (ws / "out").symlink_to(outside)
    fails(files.call("MoveFile", source="a.txt", destination="out/a.txt"), "outside_workspace")
    fails(files.call("MoveFile", source="out/secret.txt", destination="s.txt"),
          "outside_workspace")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (ws / "a.txt").read_text() == "a"
