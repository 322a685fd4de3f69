"""Reading a range of lines of a text file, capped, for ReadFile and ReadMultipleFiles."""

from __future__ import annotations

import os
from typing import Annotated, Any, BinaryIO

from janito_core import failure
from janito_core.results import counted

from ._common import SNIFF_BYTES, NotRequired, TypedDict, check_cancelled, decode, is_binary

# Past this size the lines after the shown range are not counted (total_lines is None).
COUNT_LIMIT = 256 * 1024 * 1024
MAX_BYTES_LIMIT = 10_000_000


class TextRead(TypedDict):
    """The text of one file as ``read_range`` gives it, with the path: what ReadFile answers
    and each file ReadMultipleFiles read. The descriptions are in ``Annotated``, which a
    TypedDict built on this one keeps (its docstring it would not, before Python 3.12)."""

    filepath: Annotated[str, "The path as given."]
    path: Annotated[str, "The file, as the workspace shows it."]
    content: Annotated[str, "The lines, ending with a marker saying where to continue when "
                            "cut."]
    start_line: Annotated[int, "The first line shown."]
    end_line: Annotated[int, "The last line shown (0 when none)."]
    total_lines: Annotated[int | None, "Lines in the file (null for a file too large to "
                                       "count)."]
    size: Annotated[int, "The file's size in bytes."]
    truncated: Annotated[bool, "Whether the content was cut (max_lines, max_bytes)."]
    next_start_line: NotRequired[Annotated[int, "The start_line to continue from when cut."]]
    decode_errors: NotRequired[Annotated[int, "Byte sequences that are not UTF-8 (shown as "
                                              "U+FFFD)."]]
    first_decode_error_line: NotRequired[Annotated[int, "The line of the first of them."]]
    note: NotRequired[Annotated[str, "What to know about the text."]]


def _count_lines(handle: BinaryIO) -> int:
    """The number of lines of the whole file (a last line without newline counts)."""
    handle.seek(0)
    lines = 0
    last = b""
    while True:
        check_cancelled()
        block = handle.read(1 << 20)
        if not block:
            break
        lines += block.count(b"\n")
        last = block[-1:]
    if last and last != b"\n":
        lines += 1
    return lines


def _line_offset(handle: BinaryIO, line: int) -> int | None:
    """The byte offset where line number ``line`` starts, or None when there is no such line.

    Reads blocks and counts newlines, so skipping never holds more than one block.
    """
    handle.seek(0)
    offset = 0
    wanted = line - 1
    while wanted > 0:
        check_cancelled()
        block = handle.read(1 << 20)
        if not block:
            return None
        found = block.count(b"\n")
        if found < wanted:
            wanted -= found
            offset += len(block)
            continue
        at = -1
        for _ in range(wanted):
            at = block.index(b"\n", at + 1)
        return offset + at + 1
    return offset


def read_range(
    fd: int,
    info: os.stat_result,
    start_line: int = 1,
    max_lines: int | None = None,
    max_bytes: int = 64_000,
    line_numbers: bool = False,
) -> dict[str, Any]:
    """The text of lines ``start_line``.. of the regular file open as ``fd`` (closed here),
    without the echoed inputs. A negative ``start_line`` counts from the end, as ``tail``
    does: -1 is the last line, and a count past the start of the file starts at line 1.

    Success: ``content`` (ending with a visible marker when cut), ``start_line``,
    ``end_line`` (last line shown, 0 when none), ``total_lines`` (None for huge files),
    ``truncated``, ``next_start_line`` when cut, ``size``, and ``decode_errors`` /
    ``first_decode_error_line`` when some bytes are not UTF-8.
    """
    with os.fdopen(fd, "rb") as handle:
        head = handle.read(SNIFF_BYTES)
        if is_binary(head):
            return failure(f"the file looks binary (it holds NUL bytes; {counted(info.st_size, 'byte')}); "
                           "only text files are read", "binary_file", size=info.st_size)
        total = _count_lines(handle) if info.st_size <= COUNT_LIMIT else None
        from_end = None
        if start_line < 0:
            # Where the tail starts has to be counted from the start, even in a huge file,
            # so that line numbers and the marker's next start_line stay true.
            if total is None:
                total = _count_lines(handle)
            from_end = -start_line
            start_line = max(total + start_line + 1, 1)
        offset = _line_offset(handle, start_line)
        if offset is None or (start_line > 1 and offset >= info.st_size):
            lines = total if total is not None else 0
            return failure(f"start_line {start_line} is past the end of the file, which has "
                           f"{lines} line{'s' if lines != 1 else ''}", "invalid_arguments",
                           total_lines=total)
        handle.seek(offset)
        selected: list[bytes] = []
        used = 0
        stop: str | None = None
        while True:
            if max_lines is not None and len(selected) >= max_lines:
                if handle.read(1):
                    stop = "max_lines"
                break
            room = max_bytes - used
            # Never more than the room left (plus one byte to see that a line does not fit),
            # so a file that is one enormous line is not read into memory.
            raw = handle.readline(room + 1)
            if not raw:
                break
            if len(raw) > room:
                if selected:
                    stop = "max_bytes"
                else:
                    selected.append(raw[:max_bytes])
                    stop = "long_line"
                break
            selected.append(raw)
            used += len(raw)
    data = b"".join(selected)
    text, errors, first_error = decode(data)
    end_line = start_line + len(selected) - 1 if selected else 0
    if line_numbers and selected:
        width = len(str(end_line))
        text = "".join(f"{n:>{width}}| {line}" for n, line in
                       enumerate(text.splitlines(keepends=True), start_line))
    result: dict[str, Any] = {
        "success": True,
        "content": text,
        "start_line": start_line,
        "end_line": end_line,
        "total_lines": total,
        "size": info.st_size,
        "truncated": stop is not None,
    }
    if from_end is not None:
        result["from_end"] = from_end
    if stop is not None:
        next_line = end_line + 1
        of_total = f" of {total}" if total is not None else ""
        if stop == "long_line":
            why = f"line {end_line} is longer than max_bytes={max_bytes}; only its start is shown"
        elif stop == "max_lines":
            why = f"lines {start_line}-{end_line}{of_total} shown (max_lines={max_lines})"
        else:
            why = f"lines {start_line}-{end_line}{of_total} shown (max_bytes={max_bytes})"
        if not text.endswith("\n"):
            text += "\n"
        result["content"] = f"{text}[... truncated: {why}; continue with start_line={next_line}]"
        result["next_start_line"] = next_line
    if errors:
        result["decode_errors"] = errors
        assert first_error is not None
        bom = 3 if data.startswith(b"\xef\xbb\xbf") else 0
        result["first_decode_error_line"] = start_line + data[:first_error + bom].count(b"\n")
        result["note"] = (f"{errors} byte sequence{'s are' if errors != 1 else ' is'} not valid "
                          "UTF-8 and shown as U+FFFD")
    return result
