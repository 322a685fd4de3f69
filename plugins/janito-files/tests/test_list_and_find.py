"""ListFiles and FindFiles: order, depth, limits, .gitignore, .git, links, errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from files_helpers import fails, ok


@pytest.fixture
def tree(ws: Path) -> Path:
    for path, text in {
        "README.md": "readme",
        "src/app.py": "print()",
        "src/util/helpers.py": "x = 1",
        "src/util/data.json": "{}",
        "build/out.o": "obj",
        "logs/today.log": "log",
        "notes.log": "log",
        "keep.log": "kept",
        "docs/guide.md": "guide",
        "docs/.gitignore": "*.tmp\n!important.tmp\n",
        "docs/draft.tmp": "draft",
        "docs/important.tmp": "important",
        ".git/config": "[core]",
        ".hidden/secret.txt": "hidden but not ignored",
    }.items():
        target = ws / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    (ws / ".gitignore").write_text("build/\n*.log\n!keep.log\n")
    return ws


def test_lists_one_level_sorted(files: Any, tree: Path) -> None:
    result = ok(files.call("ListFiles", paths="."))
    # logs/ holds only ignored files, but the folder itself is not ignored
    assert result["entries"] == [".gitignore", ".hidden/", "README.md", "docs/", "keep.log",
                                 "logs/", "src/"]
    assert result["count"] == 7 and result["truncated"] is False


def test_lists_recursively_with_gitignore(files: Any, tree: Path) -> None:
    result = ok(files.call("ListFiles", paths=".", max_depth=0))
    assert result["entries"] == [
        ".gitignore", ".hidden/", ".hidden/secret.txt", "README.md", "docs/",
        "docs/.gitignore", "docs/guide.md", "docs/important.tmp", "keep.log", "logs/",
        "src/", "src/app.py", "src/util/", "src/util/data.json", "src/util/helpers.py",
    ]


def test_include_gitignored_still_skips_git(files: Any, tree: Path) -> None:
    entries = ok(files.call("ListFiles", paths=".", max_depth=0,
                            include_gitignored=True))["entries"]
    assert "build/out.o" in entries and "notes.log" in entries and "docs/draft.tmp" in entries
    assert not any(e.startswith(".git/") or e == ".git/" for e in entries)


def test_subfolder_listing_applies_the_root_gitignore(files: Any, tree: Path) -> None:
    (tree / "src" / "debug.log").write_text("x")
    entries = ok(files.call("ListFiles", paths="src", max_depth=0))["entries"]
    assert "src/debug.log" not in entries and "src/app.py" in entries


def test_depth_limit_and_several_paths(files: Any, tree: Path) -> None:
    result = ok(files.call("ListFiles", paths="src docs", max_depth=1))
    assert result["entries"] == ["src/app.py", "src/util/", "docs/.gitignore", "docs/guide.md",
                                 "docs/important.tmp"]
    as_list = ok(files.call("ListFiles", paths=["src", "docs"], max_depth=1))
    assert as_list["entries"] == result["entries"]


def test_max_results_truncates(files: Any, tree: Path) -> None:
    result = ok(files.call("ListFiles", paths=".", max_depth=0, max_results=3))
    assert result["count"] == 3 and result["truncated"] is True and "max_results" in result["note"]


def test_stable_order(files: Any, tree: Path) -> None:
    first = files.call("ListFiles", paths=".", max_depth=0)
    assert all(files.call("ListFiles", paths=".", max_depth=0) == first for _ in range(3))


def test_symlinks_are_listed_not_followed(files: Any, tree: Path, outside: Path) -> None:
    (tree / "src" / "out").symlink_to(outside)
    entries = ok(files.call("ListFiles", paths="src", max_depth=0))["entries"]
    assert "src/out@" in entries
    assert not any("secret" in e for e in entries)


def test_a_file_path_lists_itself(files: Any, tree: Path) -> None:
    assert ok(files.call("ListFiles", paths="README.md"))["entries"] == ["README.md"]


def test_list_errors(files: Any, tree: Path, outside: Path) -> None:
    fails(files.call("ListFiles", paths="missing"), "not_found")
    fails(files.call("ListFiles", paths=str(outside)), "outside_workspace")
    fails(files.call("ListFiles", paths="../outside"), "outside_workspace")
    fails(files.call("ListFiles", paths=""), "invalid_arguments")
    fails(files.call("ListFiles", paths=".", max_depth=-1), "invalid_arguments")
    fails(files.call("ListFiles", paths=".", max_results=0), "invalid_arguments")
    partial = ok(files.call("ListFiles", paths=["src", "../outside"]))
    assert partial["errors"][0]["error_type"] == "outside_workspace"
    assert "src/app.py" in partial["entries"]


def test_find_by_name(files: Any, tree: Path) -> None:
    result = ok(files.call("FindFiles", paths=".", pattern="*.py"))
    assert result["files"] == ["src/app.py", "src/util/helpers.py"]
    assert result["pattern"] == "*.py"


def test_find_several_patterns_and_paths(files: Any, tree: Path) -> None:
    result = ok(files.call("FindFiles", paths=".", pattern="*.md *.json"))
    assert result["files"] == ["README.md", "docs/guide.md", "src/util/data.json"]


def test_find_respects_gitignore(files: Any, tree: Path) -> None:
    assert ok(files.call("FindFiles", paths=".", pattern="*.log"))["files"] == ["keep.log"]
    assert ok(files.call("FindFiles", paths=".", pattern="*.tmp"))["files"] == \
        ["docs/important.tmp"]
    everything = ok(files.call("FindFiles", paths=".", pattern="*.log",
                               include_gitignored=True))["files"]
    assert everything == ["keep.log", "logs/today.log", "notes.log"]
    assert ok(files.call("FindFiles", paths=".", pattern="config",
                         include_gitignored=True))["files"] == []


def test_find_path_patterns_folders_depth_and_case(files: Any, tree: Path) -> None:
    assert ok(files.call("FindFiles", paths=".", pattern="src/*/helpers.py"))["files"] == \
        ["src/util/helpers.py"]
    assert ok(files.call("FindFiles", paths=".", pattern="util/"))["files"] == ["src/util/"]
    assert ok(files.call("FindFiles", paths=".", pattern="*.py", max_depth=2))["files"] == \
        ["src/app.py"]
    assert ok(files.call("FindFiles", paths=".", pattern="readme.MD"))["files"] == []
    assert ok(files.call("FindFiles", paths=".", pattern="readme.MD",
                         case_sensitive=False))["files"] == ["README.md"]


def test_find_limits(files: Any, tree: Path) -> None:
    result = ok(files.call("FindFiles", paths=".", pattern="*", max_results=2))
    assert result["count"] == 2 and result["truncated"] is True


def test_find_errors(files: Any, tree: Path, outside: Path) -> None:
    fails(files.call("FindFiles", paths=".", pattern=" "), "invalid_arguments")
    fails(files.call("FindFiles", paths=".", pattern="*", max_depth=-2), "invalid_arguments")
    fails(files.call("FindFiles", paths=".", pattern="*", max_results=0), "invalid_arguments")
    fails(files.call("FindFiles", paths="nowhere", pattern="*"), "not_found")
    fails(files.call("FindFiles", paths=str(outside), pattern="*"), "outside_workspace")
    fails(files.call("FindFiles", paths=".."), "invalid_arguments")  # pattern missing


def test_a_name_too_long_is_reported_as_such(files: Any, tree: Path) -> None:
    name = "n" * 300
    for tool, extra in [("ListFiles", {}), ("FindFiles", {"pattern": "*"}),
                        ("SearchText", {"query": "x"})]:
        result = fails(files.call(tool, paths=[name], **extra), "name_too_long")
        assert result["error"].startswith("a name in the path is 300 bytes long; the limit is")
        assert result["errors"][0]["path"] == name
        partial = ok(files.call(tool, paths=["src", name], **extra))
        assert partial["errors"][0]["error_type"] == "name_too_long"
    fails(files.call("ReadFile", filepath=name), "name_too_long")
    missing = fails(files.call("ListFiles", paths="missing"), "not_found")
    assert missing["error"] == "could not open missing: No such file or directory"
