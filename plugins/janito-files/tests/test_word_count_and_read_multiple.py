"""WordCount and ReadMultipleFiles."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from files_helpers import fails, ok


def test_word_count(files: Any, ws: Path) -> None:
    (ws / "a.txt").write_text("hello world\nfoo  bar\tbaz\nlast")
    result = ok(files.call("WordCount", filepath="a.txt"))
    assert (result["lines"], result["words"], result["characters"], result["bytes"]) == \
        (3, 6, 29, 29)
    assert result["truncated"] is False and result["filepath"] == "a.txt"


def test_word_count_across_block_boundaries(files: Any, ws: Path) -> None:
    import janito_files.word_count as module

    text = ("word " * 300_000) + "tail\n" + "\u00e9\u00e9 " * 1000
    (ws / "big.txt").write_text(text)
    assert module.BLOCK < len(text.encode())
    result = ok(files.call("WordCount", filepath="big.txt"))
    assert result["words"] == len(text.split())
    assert result["characters"] == len(text)
    assert result["lines"] == 2


def test_word_count_max_bytes(files: Any, ws: Path) -> None:
    (ws / "a.txt").write_text("one two three four\n")
    result = ok(files.call("WordCount", filepath="a.txt", max_bytes=8))
    assert result["words"] == 2 and result["bytes"] == 8 and result["truncated"] is True
    fails(files.call("WordCount", filepath="a.txt", max_bytes=0), "invalid_arguments")


def test_word_count_empty_undecodable_and_errors(files: Any, ws: Path, outside: Path) -> None:
    (ws / "e.txt").write_text("")
    empty = ok(files.call("WordCount", filepath="e.txt"))
    assert (empty["lines"], empty["words"], empty["characters"]) == (0, 0, 0)
    (ws / "l.txt").write_bytes(b"caf\xe9 ok\n")
    latin = ok(files.call("WordCount", filepath="l.txt"))
    assert latin["words"] == 2 and latin["decode_errors"] == 1
    (ws / "b.bin").write_bytes(b"\x00\x01")
    fails(files.call("WordCount", filepath="b.bin"), "binary_file")
    fails(files.call("WordCount", filepath="missing.txt"), "not_found")
    (ws / "d").mkdir()
    fails(files.call("WordCount", filepath="d"), "is_a_directory")
    fails(files.call("WordCount", filepath=str(outside / "secret.txt")), "outside_workspace")


def test_read_multiple_files(files: Any, ws: Path, outside: Path) -> None:
    (ws / "a.txt").write_text("alpha\n")
    (ws / "b.txt").write_text("beta\n")
    result = ok(files.call("ReadMultipleFiles",
                           filepaths=["a.txt", "b.txt", "missing.txt", str(outside / "secret.txt")]))
    by_name = {f["filepath"]: f for f in result["files"]}
    assert by_name["a.txt"]["content"] == "alpha\n" and by_name["b.txt"]["content"] == "beta\n"
    assert by_name["missing.txt"]["error_type"] == "not_found"
    assert by_name[str(outside / "secret.txt")]["error_type"] == "outside_workspace"
    assert (result["read"], result["failed"]) == (2, 2)
    assert "OUTSIDE-SECRET" not in str(result)


def test_read_multiple_space_separated_string(files: Any, ws: Path) -> None:
    (ws / "a.txt").write_text("alpha\n")
    (ws / "b.txt").write_text("beta\n")
    result = ok(files.call("ReadMultipleFiles", filepaths="a.txt b.txt"))
    assert [f["content"] for f in result["files"]] == ["alpha\n", "beta\n"]
    (ws / "with space.txt").write_text("spaced\n")
    whole = ok(files.call("ReadMultipleFiles", filepaths="with space.txt"))
    assert whole["files"][0]["content"] == "spaced\n"


def test_read_multiple_shares_one_budget(files: Any, ws: Path) -> None:
    for name in "abc":
        (ws / f"{name}.txt").write_text("".join(f"{name} line {i}\n" for i in range(100)))
    result = ok(files.call("ReadMultipleFiles", filepaths=["a.txt", "b.txt", "c.txt"],
                           max_bytes=1500))
    first, second, third = result["files"]
    assert first["truncated"] is False
    assert second["truncated"] is True and "truncated" in second["content"]
    assert third["error_type"] == "budget_exhausted"
    lines = ok(files.call("ReadMultipleFiles", filepaths=["a.txt", "b.txt"], max_lines=2))
    assert [f["end_line"] for f in lines["files"]] == [2, 2]


def test_read_multiple_errors(files: Any, ws: Path) -> None:
    fails(files.call("ReadMultipleFiles", filepaths=[]), "invalid_arguments")
    fails(files.call("ReadMultipleFiles", filepaths=["x"] * 101), "invalid_arguments")
    fails(files.call("ReadMultipleFiles", filepaths=["a"], max_bytes=0), "invalid_arguments")
    none = fails(files.call("ReadMultipleFiles", filepaths=["missing.txt"]), "not_found")
    assert none["files"][0]["error_type"] == "not_found"
    (ws / "b.bin").write_bytes(b"\x00")
    fails(files.call("ReadMultipleFiles", filepaths=["b.bin"]), "binary_file")


def test_counts_of_one_are_said_in_the_singular(files: Any, ws: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    (ws / "one.txt").write_text("x", encoding="utf-8")
    ok(files.call("WordCount", filepath="one.txt"))
    ok(files.call("ReadMultipleFiles", filepaths=["one.txt"]))
    ok(files.call("CreateFile", filepath="new.txt", content="y"))
    ok(files.call("SearchText", paths="one.txt", query="x"))
    err = capsys.readouterr().err
    assert "1 line, 1 word, 1 character" in err
    assert "Read 1 of 1 file" in err and "1 files" not in err
    assert "(1 byte)" in err and "(1 line)" in err
    assert "1 matching line in 1 file" in err
    assert "(s)" not in err
