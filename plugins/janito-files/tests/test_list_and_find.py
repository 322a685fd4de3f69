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
    result = ok(files.call("ListFiles", directory="."))
    # logs/ holds only ignored files, but the folder itself is not ignored
    assert result["entries"] == [".gitignore", ".hidden/", "README.md", "docs/", "keep.log",
                                 "logs/", "src/"]
    assert result["count"] == 7 and result["truncated"] is False


def test_lists_recursively_with_gitignore(files: Any, tree: Path) -> None:
    result = ok(files.call("ListFiles", directory=".", recursive=True))
    assert result["entries"] == [
        ".gitignore", ".hidden/", ".hidden/secret.txt", "README.md", "docs/",
        "docs/.gitignore", "docs/guide.md", "docs/important.tmp", "keep.log", "logs/",
        "src/", "src/app.py", "src/util/", "src/util/data.json", "src/util/helpers.py",
    ]


def test_respect_gitignore_false_still_skips_git(files: Any, tree: Path) -> None:
    entries = ok(files.call("ListFiles", directory=".", recursive=True,
                            respect_gitignore=False))["entries"]
    assert "build/out.o" in entries and "notes.log" in entries and "docs/draft.tmp" in entries
    assert not any(e.startswith(".git/") or e == ".git/" for e in entries)


def test_subfolder_listing_applies_the_root_gitignore(files: Any, tree: Path) -> None:
    (tree / "src" / "debug.log").write_text("x")
    entries = ok(files.call("ListFiles", directory="src", recursive=True))["entries"]
    assert "src/debug.log" not in entries and "src/app.py" in entries


def test_depth_limit(files: Any, tree: Path) -> None:
    """max_depth counts the levels of subfolders descended into, as janito 4.50 did."""
    own = ["src/app.py", "src/util/"]
    assert ok(files.call("ListFiles", directory="src"))["entries"] == own
    two = ["src/app.py", "src/util/", "src/util/data.json", "src/util/helpers.py"]
    assert ok(files.call("ListFiles", directory="src", recursive=True,
                         max_depth=1))["entries"] == two
    # janito 4.50 ignores max_depth without recursive; here it still applies
    assert ok(files.call("ListFiles", directory="src", max_depth=1))["entries"] == two
    assert ok(files.call("ListFiles", directory="src", recursive=True,
                         max_depth=0))["entries"] == own
    assert ok(files.call("ListFiles", directory="src", max_depth=0))["entries"] == own
    assert ok(files.call("ListFiles", directory="src", recursive=True, max_depth=None)) == \
        ok(files.call("ListFiles", directory="src", recursive=True, max_depth=9))


def test_list_with_a_name_pattern(files: Any, tree: Path) -> None:
    """janito 4.50's pattern: a glob on names; folders that do not match are still walked."""
    assert ok(files.call("ListFiles", directory=".", pattern="*.py", recursive=True))[
        "entries"] == ["src/app.py", "src/util/helpers.py"]
    assert ok(files.call("ListFiles", pattern="*.md"))["entries"] == ["README.md"]
    assert ok(files.call("ListFiles", pattern="*/"))["entries"] == [".hidden/", "docs/",
                                                                   "logs/", "src/"]
    fails(files.call("ListFiles", pattern=""), "invalid_arguments")


def test_max_results_truncates(files: Any, tree: Path) -> None:
    result = ok(files.call("ListFiles", directory=".", recursive=True, max_results=3))
    assert result["count"] == 3 and result["truncated"] is True and "max_results" in result["note"]


def test_stable_order(files: Any, tree: Path) -> None:
    first = files.call("ListFiles", directory=".", recursive=True)
    assert all(files.call("ListFiles", directory=".", recursive=True) == first for _ in range(3))


def test_symlinks_are_listed_not_followed(files: Any, tree: Path, outside: Path) -> None:
    (tree / "src" / "out").symlink_to(outside)
    entries = ok(files.call("ListFiles", directory="src", recursive=True))["entries"]
    assert "src/out@" in entries
    assert not any("secret" in e for e in entries)


def test_a_file_path_lists_itself(files: Any, tree: Path) -> None:
    assert ok(files.call("ListFiles", directory="README.md"))["entries"] == ["README.md"]


def test_list_errors(files: Any, tree: Path, outside: Path) -> None:
    fails(files.call("ListFiles", directory="missing"), "not_found")
    fails(files.call("ListFiles", directory=str(outside)), "outside_workspace")
    fails(files.call("ListFiles", directory="../outside"), "outside_workspace")
    fails(files.call("ListFiles", directory=""), "invalid_arguments")
    fails(files.call("ListFiles", directory=".", max_depth=-1), "invalid_arguments")
    fails(files.call("ListFiles", directory=".", max_results=0), "invalid_arguments")
    fails(files.call("ListFiles", directory=["src"]), "invalid_arguments")  # one folder


def test_find_by_name(files: Any, tree: Path) -> None:
    result = ok(files.call("FindFiles", paths=".", pattern="*.py"))
    assert result["files"] == ["src/app.py", "src/util/helpers.py"]
    assert result["pattern"] == "*.py"
    everything = ok(files.call("FindFiles", paths="src"))["files"]
    assert everything == ["src/app.py", "src/util/data.json", "src/util/helpers.py"]


def test_find_several_patterns_and_paths(files: Any, tree: Path) -> None:
    result = ok(files.call("FindFiles", paths=".", pattern="*.md *.json"))
    assert result["files"] == ["README.md", "docs/guide.md", "src/util/data.json"]


def test_find_respects_gitignore(files: Any, tree: Path) -> None:
    assert ok(files.call("FindFiles", paths=".", pattern="*.log"))["files"] == ["keep.log"]
    assert ok(files.call("FindFiles", paths=".", pattern="*.tmp"))["files"] == \
        ["docs/important.tmp"]
    everything = ok(files.call("FindFiles", paths=".", pattern="*.log",
                               respect_gitignore=False))["files"]
    assert everything == ["keep.log", "logs/today.log", "notes.log"]
    assert ok(files.call("FindFiles", paths=".", pattern="config",
                         respect_gitignore=False))["files"] == []


def test_find_path_patterns_folders_depth_and_case(files: Any, tree: Path) -> None:
    assert ok(files.call("FindFiles", paths=".", pattern="src/*/helpers.py"))["files"] == \
        ["src/util/helpers.py"]
    assert ok(files.call("FindFiles", paths=".", pattern="util/"))["files"] == ["src/util/"]
    assert ok(files.call("FindFiles", paths=".", pattern="*.py", max_depth=1))["files"] == \
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
    fails(files.call("FindFiles", paths=".."), "outside_workspace")  # pattern is optional
    fails(files.call("FindFiles", paths=".", file_type="folder"), "invalid_arguments")
    fails(files.call("FindFiles", paths=".", sort_by="date"), "invalid_arguments")
    fails(files.call("FindFiles", paths=".", min_size="ten"), "invalid_arguments")
    fails(files.call("FindFiles", paths=".", max_size=-1), "invalid_arguments")
    fails(files.call("FindFiles", paths=".", older_than_days=-1), "invalid_arguments")


def test_a_name_too_long_is_reported_as_such(files: Any, tree: Path) -> None:
    name = "n" * 300
    fails(files.call("ListFiles", directory=name), "name_too_long")
    for tool, extra in [("FindFiles", {"pattern": "*"}), ("SearchText", {"query": "x"}),
                        ("SearchRegex", {"pattern": "x"})]:
        result = fails(files.call(tool, paths=[name], **extra), "name_too_long")
        assert result["error"].startswith("a name in the path is 300 bytes long; the limit is")
        assert result["errors"][0]["path"] == name
        partial = ok(files.call(tool, paths=["src", name], **extra))
        assert partial["errors"][0]["error_type"] == "name_too_long"
    fails(files.call("ReadFile", filepath=name), "name_too_long")
    missing = fails(files.call("ListFiles", directory="missing"), "not_found")
    assert missing["error"] == "could not open missing: No such file or directory"


def test_a_pattern_ending_in_a_slash_finds_folders_only(files: Any, tree: Path) -> None:
    """The "*/" bug: it found every file as well (every file of the tree with no max_depth)."""
    assert ok(files.call("FindFiles", paths=".", pattern="*/"))["files"] == [
        ".hidden/", "docs/", "logs/", "src/", "src/util/"]
    assert ok(files.call("FindFiles", paths=".", pattern="*/", max_depth=0))["files"] == [
        ".hidden/", "docs/", "logs/", "src/"]
    mixed = ok(files.call("FindFiles", paths="src", pattern="*.py util/"))["files"]
    assert mixed == ["src/app.py", "src/util/", "src/util/helpers.py"]


def test_find_by_type(files: Any, tree: Path) -> None:
    (tree / "src" / "link.py").symlink_to("app.py")
    assert ok(files.call("FindFiles", paths="src", pattern="*.py"))["files"] == [
        "src/app.py", "src/util/helpers.py"]
    assert ok(files.call("FindFiles", paths="src", file_type="symlink"))["files"] == [
        "src/link.py@"]
    assert ok(files.call("FindFiles", paths="src", file_type="dir"))["files"] == ["src/util/"]
    every = ["src/app.py", "src/link.py@", "src/util/", "src/util/data.json",
             "src/util/helpers.py"]
    assert ok(files.call("FindFiles", paths="src", file_type="any"))["files"] == every
    assert ok(files.call("FindFiles", paths="src", file_type=None))["files"] == every


def test_find_with_doublestar_and_exclude(files: Any, tree: Path) -> None:
    for path in ("docs/a/b/deep.md", "node_modules/x/index.js", "web/node_modules/y/i.js",
                 "web/app.js", "web/app.min.js"):
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_text("x")
    assert ok(files.call("FindFiles", paths=".", pattern="docs/**/*.md"))["files"] == [
        "docs/a/b/deep.md", "docs/guide.md"]
    assert ok(files.call("FindFiles", paths=".", pattern="**/guide.md"))["files"] == [
        "docs/guide.md"]
    for exclude in ("node_modules", "node_modules/", "*/node_modules/*", "**/node_modules",
                    ["node_modules"]):
        found = ok(files.call("FindFiles", paths=".", pattern="*.js", exclude=exclude))
        assert found["files"] == ["web/app.js", "web/app.min.js"], exclude
    assert ok(files.call("FindFiles", paths="web", pattern="*.js",
                         exclude="node_modules *.min.js"))["files"] == ["web/app.js"]
    assert ok(files.call("FindFiles", paths=".", pattern="*.md", exclude="docs/a"))[
        "files"] == ["README.md", "docs/guide.md"]
    assert ok(files.call("FindFiles", paths="web/app.min.js", exclude="*.min.js"))[
        "files"] == []


def test_find_by_size_and_age_sorted(files: Any, tree: Path) -> None:
    import os
    import time

    (tree / "big.bin").write_bytes(b"x" * 5000)
    (tree / "mid.txt").write_bytes(b"x" * 2048)
    old = time.time() - 10 * 86400
    os.utime(tree / "mid.txt", (old, old))
    by_size = ok(files.call("FindFiles", paths=".", min_size="2KB", sort_by="size"))
    assert by_size["files"] == ["big.bin", "mid.txt"]
    assert by_size["details"][0] == {"path": "big.bin", "size": 5000,
                                     "modified": by_size["details"][0]["modified"]}
    assert ok(files.call("FindFiles", paths=".", min_size=2048, max_size=4096))["files"] == [
        "mid.txt"]
    assert ok(files.call("FindFiles", paths=".", max_size="1k", pattern="*.md"))[
        "files"] == ["README.md", "docs/guide.md"]
    assert ok(files.call("FindFiles", paths=".", older_than_days=5))["files"] == ["mid.txt"]
    recent = ok(files.call("FindFiles", paths=".", modified_within_days=1))["files"]
    assert "mid.txt" not in recent and "big.bin" in recent
    newest_first = ok(files.call("FindFiles", paths=".", sort_by="mtime"))["files"]
    assert newest_first[-1] == "mid.txt"
    # a cut keeps the largest, not the first walked
    top = ok(files.call("FindFiles", paths=".", sort_by="size", max_results=1))
    assert top["files"] == ["big.bin"] and top["truncated"] is True
    # a folder has no size worth filtering on: size criteria select files
    assert ok(files.call("FindFiles", paths=".", file_type="dir", min_size=0))["files"] == []


def test_janitoignore_and_the_janito_folder_are_never_listed(files: Any, tree: Path) -> None:
    (tree / ".janito").mkdir()
    (tree / ".janito" / "config.json").write_text("{}")
    (tree / ".janitoignore").write_text("src/util/\n*.md\n")
    (tree / "docs" / ".janitoignore").write_text("!guide.md\n")
    listing = ok(files.call("ListFiles", recursive=True))["entries"]
    assert not any(e.startswith(".janito") for e in listing)
    assert "src/util/" not in listing and "README.md" not in listing
    assert "docs/guide.md" in listing  # a deeper .janitoignore re-includes it
    # respect_gitignore=false does not reach what .janitoignore hides
    everything = ok(files.call("ListFiles", recursive=True, respect_gitignore=False))["entries"]
    assert "src/util/data.json" not in everything and "build/out.o" in everything
    assert ok(files.call("FindFiles", paths=".", pattern="*.json"))["files"] == []
    assert ok(files.call("FindFiles", paths=".", pattern=".janito*", file_type="any"))[
        "files"] == []
    # a sub-folder listing applies the root's .janitoignore too
    assert ok(files.call("ListFiles", directory="src", recursive=True))["entries"] == [
        "src/app.py"]
