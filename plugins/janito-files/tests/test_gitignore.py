"""The .gitignore rules of the walker, checked through FindFiles."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from files_helpers import ok


def make(ws: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        target = ws / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def found(files: Any, path: str = ".") -> list[str]:
    return ok(files.call("FindFiles", paths=path, pattern="*", max_results=10_000))["files"]


def test_anchored_and_unanchored_patterns(files: Any, ws: Path) -> None:
    make(ws, {".gitignore": "/top.txt\nany.txt\n", "top.txt": "", "a/top.txt": "",
              "any.txt": "", "a/b/any.txt": ""})
    assert found(files) == [".gitignore", "a/top.txt"]


def test_directory_only_patterns(files: Any, ws: Path) -> None:
    make(ws, {".gitignore": "cache/\n", "cache/x.txt": "", "a/cache/y.txt": "",
              "cachefile": ""})
    (ws / "b").mkdir()
    (ws / "b" / "cache").write_text("a file named cache is kept")
    assert found(files) == [".gitignore", "b/cache", "cachefile"]


def test_deeper_gitignore_overrides_and_negation(files: Any, ws: Path) -> None:
    make(ws, {".gitignore": "*.gen\n", "sub/.gitignore": "!keep.gen\n",
              "root.gen": "", "sub/drop.gen": "", "sub/keep.gen": "", "other/keep.gen": ""})
    assert found(files) == [".gitignore", "sub/.gitignore", "sub/keep.gen"]


def test_excluded_folder_cannot_be_reincluded(files: Any, ws: Path) -> None:
    make(ws, {".gitignore": "out/\n!out/important.txt\n", "out/important.txt": "",
              "src/main.txt": ""})
    assert found(files) == [".gitignore", "src/main.txt"]


def test_double_star_and_comments(files: Any, ws: Path) -> None:
    make(ws, {".gitignore": "# comment\n\n**/gen/**\ndocs/**/*.html\n",
              "a/gen/x.py": "", "gen/y.py": "", "docs/a/b/page.html": "", "docs/index.md": ""})
    assert found(files) == [".gitignore", "docs/index.md"]


def test_rules_of_parent_folders_apply_when_walking_a_subfolder(files: Any, ws: Path) -> None:
    make(ws, {".gitignore": "*.tmp\nsub/deep/skip/\n", "sub/a.tmp": "", "sub/a.txt": "",
              "sub/deep/skip/x.txt": "", "sub/deep/keep.txt": ""})
    assert found(files, "sub") == ["sub/a.txt", "sub/deep/keep.txt"]
    assert found(files, "sub/deep") == ["sub/deep/keep.txt"]


def test_gitignore_changes_are_seen(files: Any, ws: Path) -> None:
    make(ws, {".gitignore": "a.txt\n", "a.txt": "", "b.txt": ""})
    assert found(files) == [".gitignore", "b.txt"]
    (ws / ".gitignore").write_text("b.txt\n# now longer\n")
    assert found(files) == [".gitignore", "a.txt"]


def test_unreadable_or_odd_gitignore_is_harmless(files: Any, ws: Path) -> None:
    (ws / ".gitignore").write_bytes(b"\xff\xfe[\n\\\n*.x\n")
    make(ws, {"a.x": "", "b.y": ""})
    assert "b.y" in found(files)
    assert "a.x" not in found(files)  # the lines pathspec cannot read are left out, not "*.x"


def test_a_malformed_line_of_janitoignore_hides_nothing_less(files: Any, ws: Path) -> None:
    # .janitoignore is how a person hides paths from the model: one line pathspec cannot
    # read (a trailing backslash) must not make the others stop hiding what they name
    make(ws, {".janitoignore": "secrets/\nbad\\\n*.key\n", "secrets/a.txt": "token",
              "id.key": "token", "notes.txt": "nothing here"})
    assert found(files) == ["notes.txt"]
    assert ok(files.call("SearchText", paths=".", query="token"))["matches"] == []
