"""ReadFile: ranges, caps, truncation marker, binary and undecodable files, errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from files_helpers import fails, ok


def lines(n: int) -> str:
    return "".join(f"line {i}\n" for i in range(1, n + 1))


def test_reads_whole_small_file(files: Any, ws: Path) -> None:
    (ws / "a.txt").write_text("one\ntwo\n")
    result = ok(files.call("ReadFile", filepath="a.txt"))
    assert result["content"] == "one\ntwo\n"
    assert result["filepath"] == "a.txt"
    assert (result["start_line"], result["end_line"], result["total_lines"]) == (1, 2, 2)
    assert result["truncated"] is False
    assert "next_start_line" not in result


def test_start_line_and_max_lines(files: Any, ws: Path) -> None:
    (ws / "a.txt").write_text(lines(10))
    result = ok(files.call("ReadFile", filepath="a.txt", start_line=4, max_lines=3))
    assert result["content"].startswith("line 4\nline 5\nline 6\n")
    assert "[... truncated: lines 4-6 of 10 shown (max_lines=3); continue with start_line=7]" \
        in result["content"]
    assert result["end_line"] == 6
    assert result["next_start_line"] == 7
    assert result["truncated"] is True
    tail = ok(files.call("ReadFile", filepath="a.txt", start_line=7))
    assert tail["content"] == "line 7\nline 8\nline 9\nline 10\n"
    assert tail["truncated"] is False


def test_max_lines_equal_to_the_rest_is_not_truncated(files: Any, ws: Path) -> None:
    (ws / "a.txt").write_text(lines(3))
    assert ok(files.call("ReadFile", filepath="a.txt", max_lines=3))["truncated"] is False


def test_byte_cap_cuts_at_a_line_boundary(files: Any, ws: Path) -> None:
    (ws / "a.txt").write_text(lines(1000))
    result = ok(files.call("ReadFile", filepath="a.txt", max_bytes=50))
    body, marker = result["content"].split("[... truncated:")
    assert len(body.encode()) <= 50
    assert body.endswith("\n")
    assert "max_bytes=50" in marker
    assert result["total_lines"] == 1000
    assert result["next_start_line"] == result["end_line"] + 1


def test_a_line_longer_than_the_cap_shows_its_start(files: Any, ws: Path) -> None:
    (ws / "a.txt").write_text("x" * 500 + "\nsecond\n")
    result = ok(files.call("ReadFile", filepath="a.txt", max_bytes=100))
    assert result["content"].startswith("x" * 100 + "\n[... truncated: line 1 is longer")
    assert result["next_start_line"] == 2
    assert result["total_lines"] == 2


def test_default_cap_keeps_results_below_the_dispatch_limit(files: Any, ws: Path) -> None:
    (ws / "big.txt").write_text(lines(100_000))
    result = ok(files.call("ReadFile", filepath="big.txt"))
    assert result["truncated"] is True
    assert "truncated" in result["content"]
    assert len(result["content"]) < 70_000


def test_line_numbers(files: Any, ws: Path) -> None:
    (ws / "a.txt").write_text(lines(12))
    result = ok(files.call("ReadFile", filepath="a.txt", start_line=9, max_lines=2,
                           line_numbers=True))
    assert result["content"].startswith(" 9| line 9\n10| line 10\n")


def test_last_line_without_newline_and_empty_file(files: Any, ws: Path) -> None:
    (ws / "a.txt").write_text("a\nb")
    assert ok(files.call("ReadFile", filepath="a.txt"))["total_lines"] == 2
    (ws / "empty.txt").write_text("")
    empty = ok(files.call("ReadFile", filepath="empty.txt"))
    assert empty["content"] == "" and empty["total_lines"] == 0 and empty["end_line"] == 0


def test_start_line_past_the_end(files: Any, ws: Path) -> None:
    (ws / "a.txt").write_text(lines(3))
    result = fails(files.call("ReadFile", filepath="a.txt", start_line=10), "invalid_arguments")
    assert "past the end" in result["error"] and result["total_lines"] == 3
    fails(files.call("ReadFile", filepath="a.txt", start_line=4), "invalid_arguments")


def test_invalid_range_arguments(files: Any, ws: Path) -> None:
    (ws / "a.txt").write_text("a\n")
    fails(files.call("ReadFile", filepath="a.txt", start_line=0), "invalid_arguments")
    fails(files.call("ReadFile", filepath="a.txt", max_lines=0), "invalid_arguments")
    fails(files.call("ReadFile", filepath="a.txt", max_bytes=0), "invalid_arguments")
    fails(files.call("ReadFile", filepath="a.txt", max_bytes=10**12), "invalid_arguments")
    fails(files.call("ReadFile", filepath="a.txt", start_line="x"), "invalid_arguments")
    fails(files.call("ReadFile", {}), "invalid_arguments")


def test_binary_file_is_refused(files: Any, ws: Path) -> None:
    (ws / "blob.bin").write_bytes(b"\x7fELF\x00\x01\x02" + bytes(range(256)))
    result = fails(files.call("ReadFile", filepath="blob.bin"), "binary_file")
    assert result["filepath"] == "blob.bin"
    assert result["size"] == 263


def test_undecodable_bytes_are_reported(files: Any, ws: Path) -> None:
    (ws / "latin1.txt").write_bytes("first\ncaf\u00e9 cr\u00e8me\n".encode("latin-1"))
    result = ok(files.call("ReadFile", filepath="latin1.txt"))
    assert result["content"] == "first\ncaf\ufffd cr\ufffdme\n"
    assert result["decode_errors"] == 2
    assert result["first_decode_error_line"] == 2
    assert "not valid UTF-8" in result["note"]


def test_real_replacement_characters_are_not_counted(files: Any, ws: Path) -> None:
    (ws / "a.txt").write_text("already \ufffd here\n")
    result = ok(files.call("ReadFile", filepath="a.txt"))
    assert "decode_errors" not in result


def test_byte_order_mark_is_dropped(files: Any, ws: Path) -> None:
    (ws / "bom.txt").write_bytes(b"\xef\xbb\xbfhello\n")
    assert ok(files.call("ReadFile", filepath="bom.txt"))["content"] == "hello\n"


def test_missing_file_and_folder(files: Any, ws: Path) -> None:
    fails(files.call("ReadFile", filepath="nope.txt"), "not_found")
    (ws / "sub").mkdir()
    fails(files.call("ReadFile", filepath="sub"), "is_a_directory")


def test_outside_the_workspace(files: Any, ws: Path, outside: Path) -> None:
    result = fails(files.call("ReadFile", filepath=str(outside / "secret.txt")),
                   "outside_workspace")
    assert "OUTSIDE-SECRET" not in str(result)
    fails(files.call("ReadFile", filepath="../outside/secret.txt"), "outside_workspace")
    (ws / "link").symlink_to(outside / "secret.txt")
    fails(files.call("ReadFile", filepath="link"), "outside_workspace")


def test_symlink_inside_the_workspace_is_read(files: Any, ws: Path) -> None:
    (ws / "real.txt").write_text("target\n")
    (ws / "alias.txt").symlink_to("real.txt")
    assert ok(files.call("ReadFile", filepath="alias.txt"))["content"] == "target\n"


def test_fifo_is_not_read(files: Any, ws: Path) -> None:
    import os

    os.mkfifo(ws / "pipe")
    # Opening a FIFO for reading would block until a writer comes; the tool must not hang.
    fails(files.call("ReadFile", filepath="pipe"), "not_a_file")


def test_one_enormous_line_is_never_held_in_memory(files: Any, ws: Path) -> None:
    import tracemalloc

    with open(ws / "huge.txt", "wb") as handle:
        for _ in range(30):
            handle.write(b"y" * (1 << 20))
        handle.write(b"\nend\n")
    tracemalloc.start()
    try:
        result = ok(files.call("ReadFile", filepath="huge.txt", max_bytes=100))
        second = ok(files.call("ReadFile", filepath="huge.txt", start_line=2))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result["content"].startswith("y" * 100 + "\n[... truncated: line 1 is longer")
    assert result["total_lines"] == 2
    assert second["content"] == "end\n"
    assert peak < 8 * (1 << 20)
