"""ReplaceTextInFile: exact edits, ambiguity, line endings, bytes kept, errors untouched."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

from files_helpers import fails, ok


def test_replaces_a_unique_occurrence(files: Any, ws: Path) -> None:
    (ws / "a.py").write_text("def f():\n    return 1\n\ndef g():\n    return 2\n")
    result = ok(files.call("ReplaceTextInFile", filepath="a.py", old_str="return 2",
                           new_str="return 42"))
    assert (ws / "a.py").read_text().endswith("return 42\n")
    assert result["replacements"] == 1 and result["first_line"] == 5
    assert result["filepath"] == "a.py"


def test_multiline_search_and_deletion(files: Any, ws: Path) -> None:
    (ws / "a.txt").write_text("keep\ndrop 1\ndrop 2\nkeep\n")
    ok(files.call("ReplaceTextInFile", filepath="a.txt", old_str="drop 1\ndrop 2\n",
                  new_str=""))
    assert (ws / "a.txt").read_text() == "keep\nkeep\n"


def test_ambiguous_text_is_refused_without_replace_all(files: Any, ws: Path) -> None:
    original = "x = 1\ny = 1\nz = 1\n"
    (ws / "a.txt").write_text(original)
    result = fails(files.call("ReplaceTextInFile", filepath="a.txt", old_str="= 1",
                              new_str="= 2"), "multiple_matches")
    assert result["occurrences"] == 3 and result["lines"] == [1, 2, 3]
    assert (ws / "a.txt").read_text() == original
    done = ok(files.call("ReplaceTextInFile", filepath="a.txt", old_str="= 1",
                         new_str="= 2", replace_all=True))
    assert done["replacements"] == 3
    assert (ws / "a.txt").read_text() == "x = 2\ny = 2\nz = 2\n"


def test_text_not_found_leaves_the_file_untouched(files: Any, ws: Path) -> None:
    target = ws / "a.txt"
    target.write_text("hello\n")
    before = target.stat()
    result = fails(files.call("ReplaceTextInFile", filepath="a.txt", old_str="absent",
                              new_str="x"), "text_not_found")
    assert "unchanged" in result["error"]
    after = target.stat()
    assert (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)


def test_crlf_file_edited_with_lf_text(files: Any, ws: Path) -> None:
    (ws / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = ok(files.call("ReplaceTextInFile", filepath="w.txt", old_str="one\ntwo\n",
                           new_str="1\n2\n"))
    assert result["line_endings"] == "crlf"
    assert (ws / "w.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


def test_bytes_that_are_not_utf8_are_kept(files: Any, ws: Path) -> None:
    (ws / "l.txt").write_bytes(b"caf\xe9\nname = old\n\xff\xfe end\n")
    ok(files.call("ReplaceTextInFile", filepath="l.txt", old_str="old",
                  new_str="new"))
    assert (ws / "l.txt").read_bytes() == b"caf\xe9\nname = new\n\xff\xfe end\n"


def test_mode_is_kept(files: Any, ws: Path) -> None:
    script = ws / "s.sh"
    script.write_text("echo old\n")
    script.chmod(0o700)
    ok(files.call("ReplaceTextInFile", filepath="s.sh", old_str="old",
                  new_str="new"))
    assert stat.S_IMODE(script.stat().st_mode) == 0o700


def test_invalid_inputs(files: Any, ws: Path) -> None:
    (ws / "a.txt").write_text("a\n")
    fails(files.call("ReplaceTextInFile", filepath="a.txt", old_str="",
                     new_str="x"), "invalid_arguments")
    fails(files.call("ReplaceTextInFile", filepath="a.txt", old_str="a"),
          "invalid_arguments")
    assert (ws / "a.txt").read_text() == "a\n"
    ok(files.call("ReplaceTextInFile", filepath="a.txt", old_str="a", new_str="\ud800"))
    assert (ws / "a.txt").read_text(encoding="utf-8") == "\ufffd\n"


def test_missing_binary_and_folder(files: Any, ws: Path) -> None:
    fails(files.call("ReplaceTextInFile", filepath="nope.txt", old_str="a",
                     new_str="b"), "not_found")
    (ws / "b.bin").write_bytes(b"a\x00b")
    fails(files.call("ReplaceTextInFile", filepath="b.bin", old_str="a",
                     new_str="b"), "binary_file")
    assert (ws / "b.bin").read_bytes() == b"a\x00b"
    (ws / "d").mkdir()
    fails(files.call("ReplaceTextInFile", filepath="d", old_str="a",
                     new_str="b"), "is_a_directory")


def test_outside_the_workspace(files: Any, ws: Path, outside: Path) -> None:
    (ws / "link").symlink_to(outside / "secret.txt")
    for path in ("link", str(outside / "secret.txt"), "../outside/secret.txt"):
        fails(files.call("ReplaceTextInFile", filepath=path, old_str="OUTSIDE",
                         new_str="changed"), "outside_workspace")
    assert (outside / "secret.txt").read_text() == "OUTSIDE-SECRET\n"
