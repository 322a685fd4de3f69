"""Calls written for janito 4.50, as its tools declare them, work here unchanged.

Each test makes the call a prompt or a model trained on janito 4.50 would make (the
parameter names, the defaults left out) and checks the outcome 4.50 documents, or the one
the README's "compared with janito 4.50" table names where janito differs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from files_helpers import fails, ok


@pytest.fixture
def project(ws: Path) -> Path:
    for path, text in {
        "README.md": "# project\n",
        "app/main.py": "import os\nprint('hello')\n",
        "app/util.py": "def helper():\n    return 'hello'\n",
        "app/__pycache__/main.cpython-311.pyc": "\x00compiled hello",
        "node_modules/lib/index.js": "hello from a dependency\n",
        "log.txt": "".join(f"line {n}\n" for n in range(1, 101)),
        "secrets/token.txt": "hello secret\n",
        ".janito/notes.md": "janito's own\n",
    }.items():
        (ws / path).parent.mkdir(parents=True, exist_ok=True)
        (ws / path).write_text(text)
    (ws / ".janitoignore").write_text("secrets/\n")
    return ws


def test_read_file_tail(files: Any, project: Path) -> None:
    last = ok(files.call("ReadFile", filepath="log.txt", start_line=-5))
    assert last["content"] == "".join(f"line {n}\n" for n in range(96, 101))
    assert (last["start_line"], last["end_line"], last["from_end"]) == (96, 100, 5)
    whole = ok(files.call("ReadFile", filepath="log.txt", start_line=-500))
    assert whole["start_line"] == 1 and whole["end_line"] == 100
    # janito 4.50 ignores max_lines in tail mode; here it still applies
    first_of_tail = ok(files.call("ReadFile", filepath="log.txt", start_line=-5, max_lines=2))
    assert first_of_tail["content"].startswith("line 96\nline 97\n[... truncated")
    assert first_of_tail["next_start_line"] == 98
    fails(files.call("ReadFile", filepath="log.txt", start_line=0), "invalid_arguments")
    (project / "empty.txt").write_text("")
    assert ok(files.call("ReadFile", filepath="empty.txt", start_line=-3))["content"] == ""


def test_replace_text_in_file(files: Any, project: Path) -> None:
    ok(files.call("ReplaceTextInFile", filepath="app/main.py", old_str="print('hello')",
                  new_str="print('bye')"))
    assert (project / "app/main.py").read_text() == "import os\nprint('bye')\n"
    (project / "twice.txt").write_text("a a\n")
    fails(files.call("ReplaceTextInFile", filepath="twice.txt", old_str="a", new_str="b"),
          "multiple_matches")
    done = ok(files.call("ReplaceTextInFile", filepath="twice.txt", old_str="a", new_str="b",
                         replace_all=True))
    assert done["replacements"] == 2


def test_move_file(files: Any, project: Path) -> None:
    ok(files.call("MoveFile", source="README.md", destination="docs/README.md",
                  create_dirs=True))
    assert (project / "docs/README.md").exists() and not (project / "README.md").exists()
    (project / "other.md").write_text("x")
    fails(files.call("MoveFile", source="other.md", destination="docs/README.md"),
          "file_exists")
    ok(files.call("MoveFile", source="other.md", destination="docs/README.md", overwrite=True,
                  preserve_metadata=True))
    assert (project / "docs/README.md").read_text() == "x"


def test_list_files(files: Any, project: Path) -> None:
    assert ok(files.call("ListFiles"))["entries"] == ["README.md", "app/", "log.txt",
                                                      "node_modules/"]
    python = ok(files.call("ListFiles", directory="app", pattern="*.py", recursive=True))
    assert python["entries"] == ["app/main.py", "app/util.py"]
    shallow = ok(files.call("ListFiles", directory=".", recursive=True, max_depth=1,
                            respect_gitignore=True))["entries"]
    assert "app/main.py" in shallow and "node_modules/lib/index.js" not in shallow
    assert not any(e.startswith((".janito", "secrets")) for e in shallow)


def test_create_and_remove_directory(files: Any, project: Path) -> None:
    fails(files.call("CreateDirectory", directory="a/b", parents=False, exist_ok=False),
          "not_found")
    assert ok(files.call("CreateDirectory", directory="a/b", parents=True,
                         exist_ok=False))["created"] is True
    fails(files.call("CreateDirectory", directory="a/b", parents=True, exist_ok=False),
          "file_exists")
    assert ok(files.call("CreateDirectory", directory="a/b", exist_ok=True))["created"] is False
    fails(files.call("RemoveDirectory", directory="a"), "directory_not_empty")
    ok(files.call("RemoveDirectory", directory="a", recursive=True))
    assert not (project / "a").exists()
    # force: a folder that is not there is no error; it never removes contents on its own
    assert ok(files.call("RemoveDirectory", directory="a", force=True))["existed"] is False
    fails(files.call("RemoveDirectory", directory="app", force=True), "directory_not_empty")


def test_read_multiple_files(files: Any, project: Path) -> None:
    result = ok(files.call("ReadMultipleFiles", filepaths=["README.md", "app/util.py"]))
    assert [f["content"] for f in result["files"]] == ["# project\n",
                                                       "def helper():\n    return 'hello'\n"]


def test_search_text_and_regex_with_exclude(files: Any, project: Path) -> None:
    found = ok(files.call("SearchText", paths=".", query="hello", case_sensitive=True,
                          max_depth=None, max_results=100))
    assert sorted({m["path"] for m in found["matches"]}) == [
        "app/main.py", "app/util.py", "node_modules/lib/index.js"]
    no_deps = ok(files.call("SearchText", paths=".", query="hello",
                            exclude="*/node_modules/* */__pycache__/*"))
    assert sorted({m["path"] for m in no_deps["matches"]}) == ["app/main.py", "app/util.py"]
    regex = ok(files.call("SearchRegex", paths=".", pattern=r"return '\w+'",
                          case_sensitive=False, max_depth=None, max_results=10,
                          exclude="node_modules"))
    assert [(m["path"], m["line"]) for m in regex["matches"]] == [("app/util.py", 2)]
    counted = ok(files.call("SearchRegex", paths="app", pattern="hel+o", count_only=True,
                            exclude=["util.py"]))
    assert counted["counts"] == [{"path": "app/main.py", "count": 1}]
    # .janitoignore and .janito/ are never searched, respect_gitignore or not
    hidden = ok(files.call("SearchText", paths=".", query="secret", respect_gitignore=False))
    assert hidden["count"] == 0
    assert ok(files.call("SearchText", paths=".", query="janito's own"))["count"] == 0


def test_find_files(files: Any, project: Path) -> None:
    folders = ok(files.call("FindFiles", paths=".", pattern="*/"))["files"]
    assert folders == ["app/", "app/__pycache__/", "node_modules/", "node_modules/lib/"]
    assert ok(files.call("FindFiles", paths=".", file_type="dir",
                         exclude="node_modules __pycache__"))["files"] == ["app/"]
    python = ok(files.call("FindFiles", paths=".", pattern="*.py", exclude="*/node_modules/*",
                           file_type="file", min_size=1, max_size="1MB", sort_by="name"))
    assert python["files"] == ["app/main.py", "app/util.py"]
    os.utime(project / "app/util.py", (1_000_000_000, 1_000_000_000))
    old = ok(files.call("FindFiles", paths=".", pattern="*.py", older_than_days=365))
    assert old["files"] == ["app/util.py"]
    recent = ok(files.call("FindFiles", paths=".", pattern="*.py", modified_within_days=1))
    assert recent["files"] == ["app/main.py"]
    assert ok(files.call("FindFiles", paths=".", pattern="*.md", file_type=None))["files"] == [
        "README.md"]


def test_an_ignore_file_that_is_not_a_regular_file_is_ignored(files: Any, project: Path) -> None:
    (project / ".janitoignore").unlink()
    os.mkfifo(project / ".janitoignore")
    listing = ok(files.call("ListFiles", recursive=True))["entries"]
    assert "secrets/token.txt" in listing


# -- the call shapes where janito 4.50's meaning once differed ------------------------------
# Each was replayed from 4.50's own tests (janito 4.50.0 run on the same tree where a
# meaning is in question): the outcome here is 4.50's, or a refusal whose detail names the
# way to write it now.


def test_max_depth_of_list_and_find_counts_as_4_50_did(files: Any, project: Path) -> None:
    """ListFiles and FindFiles: 0 is the folder's own entries, N adds N levels below."""
    for path in ("pkg/top.py", "pkg/a/mid.py", "pkg/a/b/deep.py"):
        (project / path).parent.mkdir(parents=True, exist_ok=True)
        (project / path).write_text("x = 1\n")
    listed = {depth: ok(files.call("ListFiles", directory="pkg", recursive=True,
                                   max_depth=depth))["entries"] for depth in (0, 1, None)}
    assert listed[0] == ["pkg/a/", "pkg/top.py"]
    assert listed[1] == ["pkg/a/", "pkg/a/b/", "pkg/a/mid.py", "pkg/top.py"]
    assert listed[None] == ["pkg/a/", "pkg/a/b/", "pkg/a/b/deep.py", "pkg/a/mid.py",
                            "pkg/top.py"]
    found = {depth: ok(files.call("FindFiles", paths="pkg", pattern="*.py",
                                  max_depth=depth))["files"] for depth in (0, 1, None)}
    assert found[0] == ["pkg/top.py"]
    assert found[1] == ["pkg/a/mid.py", "pkg/top.py"]
    assert found[None] == ["pkg/a/b/deep.py", "pkg/a/mid.py", "pkg/top.py"]


@pytest.mark.parametrize("tool, arguments", [
    ("SearchText", {"query": "hello"}),
    ("SearchRegex", {"pattern": "hel+o"}),
])
def test_max_depth_of_searches_counts_from_1_and_refuses_0(files: Any, project: Path, tool: str,
                                                            arguments: dict[str, Any]) -> None:
    """SearchText and SearchRegex: 1 is the files directly in the folder, as in 4.50; 0,
    which searched no folder in 4.50, is refused with the way to write it now."""
    top = ok(files.call(tool, paths="app", max_depth=1, **arguments))
    assert sorted({m["path"] for m in top["matches"]}) == ["app/main.py", "app/util.py"]
    refused = fails(files.call(tool, paths="app", max_depth=0, **arguments), "invalid_arguments")
    [detail] = refused["details"]
    assert detail == {"field": "max_depth", "error": "must be at least 1, got 0 (0 searched no "
                      "folder in janito 4.50: 1 searches the files directly in the given "
                      "folders, null has no limit)"}
    assert detail["error"] in refused["error"]


def test_create_file_without_content_creates_an_empty_file(files: Any, project: Path) -> None:
    made = ok(files.call("CreateFile", filepath="empty.txt"))
    assert (made["created"], made["bytes"]) == (True, 0)
    assert (project / "empty.txt").read_bytes() == b""
    # an existing file is never replaced by a call that lost its content on the way
    refused = fails(files.call("CreateFile", filepath="README.md", overwrite=True),
                    "invalid_arguments")
    assert refused["details"] == [{"field": "content", "error": 'missing: without it no file '
                                   'is replaced; pass the new text, or "" to empty the file'}]
    assert (project / "README.md").read_text() == "# project\n"
    fails(files.call("CreateFile", filepath="README.md"), "file_exists")
    ok(files.call("CreateFile", filepath="README.md", content="", overwrite=True))
    assert (project / "README.md").read_bytes() == b""


def test_delete_file_with_force(files: Any, project: Path) -> None:
    """force=true: a file is deleted as without it; an empty folder too, as 4.50 did."""
    gone = ok(files.call("DeleteFile", filepath="log.txt", force=True))
    assert gone["force"] is True and not (project / "log.txt").exists()
    (project / "empty").mkdir()
    folder = fails(files.call("DeleteFile", filepath="empty"), "is_a_directory")
    assert "force=true for an empty one" in folder["error"]
    assert ok(files.call("DeleteFile", filepath="empty", force=True))["was_directory"] is True
    assert not (project / "empty").exists()
    full = fails(files.call("DeleteFile", filepath="app", force=True), "directory_not_empty")
    assert "RemoveDirectory with recursive=true" in full["error"]
    assert (project / "app" / "main.py").exists()
