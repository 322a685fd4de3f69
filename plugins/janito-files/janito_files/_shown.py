"""A file's text as the read tools show it, mapped back to its bytes, so that an edit can
name a line holding bytes that are not UTF-8.

ReadFile and the searches show each undecodable sequence as one U+FFFD (Python's
``"replace"``); an edit decodes with ``"surrogateescape"``, one lone surrogate per byte, so
that every byte is written back as it was. A model only ever saw the first form and can
only send it (dispatch turns lone surrogates into U+FFFD), so :class:`ShownText` finds
``old_str`` in the shown form and replaces the bytes it stands for."""

from __future__ import annotations

import re
from bisect import bisect_left

ESCAPED = re.compile("[\udc80-\udcff]+")
"""A run of bytes that surrogateescape could not decode."""

REPLACEMENT = "\ufffd"


def escaped(text: str) -> bool:
    """Whether ``text`` (decoded with surrogateescape) holds undecodable bytes."""
    return ESCAPED.search(text) is not None


def _pieces(raw: bytes) -> list[int]:
    """The lengths of the sequences ``"replace"`` turns into one U+FFFD each, for bytes
    none of which decode: the ranges the decoder's errors name, taken one at a time."""
    lengths = []
    at = 0
    while at < len(raw):
        try:
            raw[at:].decode("utf-8")
        except UnicodeDecodeError as exc:
            # every byte here fails, so the error starts at the first one
            lengths.append(max(1, exc.end - exc.start))
            at += lengths[-1]
            continue
        raise AssertionError("bytes escaped by surrogateescape decoded cleanly")
    return lengths


class ShownText:
    """``text`` (decoded with surrogateescape) with each undecodable sequence as one
    U+FFFD (``shown``), and the way back from an offset in ``shown`` to one in ``text``."""

    def __init__(self, text: str) -> None:
        self.text = text
        parts: list[str] = []
        self._starts: list[int] = []  # where in shown each U+FFFD standing for bytes is
        self._shift: list[int] = [0]  # how far text is ahead of shown after each of them
        last = 0
        shift = 0
        for run in ESCAPED.finditer(text):
            parts.append(text[last:run.start()])
            at = run.start()
            for length in _pieces(run.group().encode("utf-8", "surrogateescape")):
                self._starts.append(at - shift)
                shift += length - 1
                self._shift.append(shift)
                parts.append(REPLACEMENT)
                at += length
            last = run.end()
        parts.append(text[last:])
        self.shown = "".join(parts)

    def raw_offset(self, shown: int) -> int:
        """The offset in ``text`` of offset ``shown`` (a character boundary of both)."""
        return shown + self._shift[bisect_left(self._starts, shown)]

    def replace(self, search: str, replacement: str, replace_all: bool) -> tuple[str, int]:
        """(``text`` with the first, or every, occurrence of ``search`` in ``shown``
        replaced, how many U+FFFD of ``replacement`` were given back their bytes).

        When ``replacement`` holds as many U+FFFD as ``search``, the n-th of them stands
        for what the n-th of ``search`` matched: the bytes an edit around them keeps.
        Otherwise a U+FFFD of ``replacement`` is that character, written as UTF-8.
        """
        marks = [i for i, char in enumerate(search) if char == REPLACEMENT]
        keep = bool(marks) and replacement.count(REPLACEMENT) == len(marks)
        pieces = replacement.split(REPLACEMENT) if keep else [replacement]
        out: list[str] = []
        kept = 0
        last = 0  # in text
        at = self.shown.find(search)
        while at >= 0:
            start, end = self.raw_offset(at), self.raw_offset(at + len(search))
            out.append(self.text[last:start])
            if keep:
                for n, mark in enumerate(marks):
                    out.append(pieces[n])
                    out.append(self.text[self.raw_offset(at + mark):
                                         self.raw_offset(at + mark + 1)])
                out.append(pieces[-1])
                kept += len(marks)
            else:
                out.append(replacement)
            last = end
            if not replace_all:
                break
            at = self.shown.find(search, at + len(search))
        out.append(self.text[last:])
        return "".join(out), kept
