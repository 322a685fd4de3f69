"""WordCount: lines, words, characters and bytes of a text file."""

from __future__ import annotations

import codecs
import os
import sys
import time
from typing import Annotated, Any, ClassVar, Literal

from janito_core import BaseTool, Failure, failure, tool
from janito_core.constraints import Ge
from janito_core.results import CANCELLED, TIMEOUT, counted

from ._common import (
    SNIFF_BYTES,
    NotRequired,
    TypedDict,
    echoed,
    invalid,
    is_binary,
    open_for_reading,
    os_failure,
    safe_text,
)

BLOCK = 1 << 20

TIME_LIMIT: float | None = 20.0
"""Seconds one count may read for (None: no bound). A model waits for its answer, and a
file of many gigabytes (a sparse one costs no disk) takes minutes to read: past this the
call answers ``timeout`` with how far it got, and max_bytes counts the start instead."""


class Counts(TypedDict):
    """What WordCount answers.

    Attributes:
        filepath: The path as given.
        path: The file, as the workspace shows it.
        lines: Lines counted.
        words: Words counted.
        characters: Characters counted.
        bytes: Bytes counted.
        truncated: Whether only the first max_bytes were counted.
        decode_errors: Byte sequences that are not UTF-8.
        note: What to know about the counts.
    """

    success: Literal[True]
    filepath: str
    path: str
    lines: int
    words: int
    characters: int
    bytes: int
    truncated: bool
    decode_errors: NotRequired[int]
    note: NotRequired[str]


@tool(permissions="r")
class WordCount(BaseTool):
    """Count words, lines, characters and bytes in a text file.

    Words are runs of non-whitespace; a last line without a final newline counts as a line.
    A call that is cancelled, or reads for longer than TIME_LIMIT seconds or its caller's
    timeout, stops at the next block and answers "cancelled" or "timeout" with the bytes
    counted so far.
    """

    reads_paths: ClassVar[tuple[str, ...]] = ("filepath",)

    def run(self, filepath: str, max_bytes: Annotated[int, Ge(1)] | None = None) -> Counts | Failure:
        """Count words, lines and characters in a text file.

        Args:
            filepath: Path of the text file to analyse, relative to the workspace root.
            max_bytes: Stop reading after this many bytes (the counts then cover only the
                start of the file and "truncated" is true); null reads the whole file.
        """
        echo = {"filepath": echoed(filepath)}
        opened, refused = open_for_reading(self, filepath, "filepath")
        if opened is None:
            return refused or invalid("no path given", **echo)
        fd, info, shown = opened
        path = safe_text(shown)
        self.report_start(f"Counting words in {path}")
        token = self.cancel_token
        deadline = None if TIME_LIMIT is None else time.monotonic() + TIME_LIMIT
        lines = words = chars = size = replaced = genuine = 0
        in_word = False
        last = ""
        truncated = False
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        try:
            with os.fdopen(fd, "rb") as handle:
                first = True
                while True:
                    if token is not None and token.cancelled:
                        return self._stopped(token.reason, path, size, info.st_size, echo)
                    if deadline is not None and size and time.monotonic() > deadline:
                        return self._too_slow(path, size, info.st_size, echo)
                    want = BLOCK if max_bytes is None else min(BLOCK, max_bytes - size)
                    block = handle.read(want) if want > 0 else b""
                    if first:
                        first = False
                        if is_binary(block[:SNIFF_BYTES]):
                            return failure(f"{path} looks binary (it holds NUL bytes); only "
                                           "text files are counted", "binary_file", **echo)
                    if not block:
                        truncated = max_bytes is not None and bool(handle.read(1))
                        text = decoder.decode(b"", final=True)
                    else:
                        size += len(block)
                        genuine += block.count(b"\xef\xbf\xbd")
                        text = decoder.decode(block)
                    if text:
                        chars += len(text)
                        replaced += text.count("\ufffd")
                        lines += text.count("\n")
                        parts = text.split()
                        words += len(parts)
                        # A word cut by the block boundary was counted twice.
                        if in_word and parts and not text[0].isspace():
                            words -= 1
                        in_word = not text[-1].isspace()
                        last = text[-1]
                    if not block:
                        break
        except OSError as exc:
            return os_failure(exc, f"read {path}", **echo)
        if last and last != "\n":
            lines += 1
        self.report_result(f"{counted(lines, 'line')}, {counted(words, 'word')}, {counted(chars, 'character')}")
        result: dict[str, Any] = {"success": True, **echo, "path": path, "lines": lines,
                                  "words": words, "characters": chars, "bytes": size,
                                  "truncated": truncated}
        if replaced > genuine:
            bad = replaced - genuine
            result["decode_errors"] = bad
            result["note"] = (f"{counted(bad, 'byte sequence')} {'is' if bad == 1 else 'are'} "
                              "not valid UTF-8; each "
                              "counts as one character")
        if truncated:
            note = (f"only the first {counted(size, 'byte')} {'was' if size == 1 else 'were'} "
                    "counted (max_bytes)")
            result["note"] = f"{result['note']}; {note}" if "note" in result else note
        return result

    def _stopped(self, reason: str | None, path: str, done: int, size: int,
                 echo: dict[str, Any]) -> dict[str, Any]:
        message = (f"counting {path} was stopped after {counted(done, 'byte')} of "
                   f"{counted(size, 'byte')}: {reason or 'the call was cancelled'}")
        self.report_error(message)
        return failure(message, CANCELLED, **echo, path=path, bytes_counted=done, size=size)

    def _too_slow(self, path: str, done: int, size: int,
                  echo: dict[str, Any]) -> dict[str, Any]:
        assert TIME_LIMIT is not None
        message = (f"counting {path} took more than {counted(TIME_LIMIT, 'second')} and was "
                   f"stopped after {counted(done, 'byte')} of {counted(size, 'byte')}; pass "
                   "max_bytes to count the start of the file")
        self.report_error(message)
        return failure(message, TIMEOUT, **echo, path=path, bytes_counted=done, size=size,
                       time_limit_seconds=TIME_LIMIT)


def main(argv: list[str] | None = None) -> int:
    """Run WordCount from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(WordCount, argv)


if __name__ == "__main__":
    sys.exit(main())
