"""The steps of a search that are compiled in ``janito_files._speedups``, and their Python
twins, which run where the wheel was built without a C compiler (decisions 0013, 0019).

Each twin gives the same answers and raises the same errors as its compiled function;
tests/test_speedups.py holds each pair together:

- ``read_searchable_at``: one file of a folder the walk holds open, read as a search
  reads it (``read_searchable_at_py``);
- ``literal_lines``: the numbers and text of the lines holding a literal
  (``literal_lines_py``);
- ``scan_files``: the files of one folder read and searched as a batch
  (``scan_files_py``);
- ``Searcher``: batches of ``scan_files`` on worker threads that never take the GIL,
  taken back in order (``SearcherPy``);
- ``list_folder``: a folder's names and kinds, as the walk lists them
  (``janito_core._fswalk.list_folder``); ``Lookahead`` lists the next subfolders so on a
  thread of its own (none in Python: the walk lists them itself);
- ``pick_plain`` and ``prefixed``: FindFiles' picking by a plain glob, and the paths of
  what it picked (``pick_plain_py``, ``prefixed_py``);
- ``found_rows``: the result's rows of a batch of files a literal search found lines in
  (``found_rows_py``);
- ``automaton_lines`` and ``automaton_rows``: the lines of a text, and the rows of a batch,
  that a regular expression's table (janito_files._automaton) matches; their twins there
  are for the tests only, and without the compiled module the engine answers every
  pattern.
"""

from __future__ import annotations

import os
import struct
import sys
from collections import deque
from itertools import chain, repeat
from typing import Any

from janito_core._fswalk import Lister
from janito_core._fswalk import list_folder as list_folder_py
from janito_core.workspace import open_regular_at


def read_open(fd: int, size: int, sniff: int, most: int) -> bytes | None:
    """The bytes a search looks at in the regular file open as ``fd`` (closed here), whose
    size was ``size``: all of them, or only the first ``sniff`` when a NUL among them marks
    a binary file, which is never read whole. None when the file holds more than ``most``
    bytes. Raises the OSError of the read.
    """
    # os-level calls rather than a file object: over thousands of small files, building
    # and closing a file object per file costs a fifth of a search that finds nothing.
    try:
        if size > most:
            return None
        data = os.read(fd, sniff)
        if len(data) < sniff or b"\x00" in data:
            return data
        chunks = [data]
        total = len(data)
        while True:
            # Asking for one byte more than the size reads an unchanged file in one call; a
            # read of a regular file returns less than asked only at its end.
            wanted = max(size + 1 - total, 1 << 16)
            chunk = os.read(fd, wanted)
            chunks.append(chunk)
            total += len(chunk)
            if total > most:  # it grew past the limit while it was read
                return None
            if len(chunk) < wanted:
                return b"".join(chunks)
    finally:
        os.close(fd)


def read_searchable_at_py(dir_fd: int, name: str, sniff: int, most: int) -> bytes | None:
    """:func:`read_open` of regular file ``name`` (one path component) of folder ``dir_fd``,
    opened as janito_core's ``open_regular_at`` opens it: never following a link, never
    blocking on a FIFO or a device.

    Raises IsADirectoryError for a folder, OSError (EINVAL) for anything else that is not a
    regular file, and the OSError of the open or the read.
    """
    if sniff <= 0 or most < 0:
        raise ValueError("sniff must be positive and most not negative")
    if name in ("", ".", "..") or "/" in name or "\x00" in name:
        raise ValueError("name must be one non-empty path component")
    fd, info = open_regular_at(dir_fd, name)
    return read_open(fd, info.st_size, sniff, most)


def literal_lines_py(hay: bytes, data: bytes, needle: bytes,
                      limit: int) -> tuple[list[int], bytes]:
    """The numbers (from 1) of the first ``limit`` lines of ``data`` that hold ``needle``
    in ``hay`` (``data`` or its lower-case form), and those lines joined by line feeds.

    ``janito_files._speedups`` holds the same function compiled, used where it was built.
    """
    if len(hay) != len(data) or not needle:
        raise ValueError("hay and data must have the same length, and needle a byte")
    # One loop with its methods bound, doing only what must be done per match.
    numbers: list[int] = []
    pieces: list[bytes] = []
    add_number = numbers.append
    add_piece = pieces.append
    find_needle = hay.find
    find = data.find
    rfind = data.rfind
    count = data.count
    line_no = 1
    counted = 0
    at = find_needle(needle) if limit > 0 else -1
    while at >= 0:
        start = rfind(b"\n", 0, at) + 1
        end = find(b"\n", at)
        line_no += count(b"\n", counted, start)
        counted = start
        add_number(line_no)
        if end < 0:
            add_piece(data[start:])
            break
        add_piece(data[start:end])
        limit -= 1
        if limit <= 0:
            break
        at = find_needle(needle, end + 1)
    return numbers, b"\n".join(pieces)


LITERAL, CANDIDATES, FILTER = 0, 1, 2
"""What :func:`scan_files` does with each file's bytes (its ``mode``):

- ``LITERAL``: SearchText's literal search (:class:`~janito_files._search.BytesMatcher`):
  the first ``limit`` matching lines, or with ``count_only`` their number;
- ``CANDIDATES``: every line holding ``needle``, which a regular expression then checks
  (a pattern that needs that text in every match and sees a line alone);
- ``FILTER``: the bytes themselves, for a regular expression to search, when they hold
  ``needle`` (or always, when it is None)."""

_WORD = struct.calcsize("n")


def count_lines(hay: bytes, needle: bytes) -> int:
    """How many lines of ``hay`` hold ``needle`` (each counted once)."""
    at = hay.find(needle)
    lines = 0
    while at >= 0:
        lines += 1
        end = hay.find(b"\n", at)
        if end < 0:
            break
        at = hay.find(needle, end + 1)
    return lines


def scan_files_py(dir_fd: int, names: list[str], sniff: int, most: int,
                  needle: bytes | None, fold: bool, limit: int, count_only: bool, mode: int,
                  budget: int, table: bytes | None = None) -> tuple[bytes, list[Any]]:
    """(codes, payloads): what a search finds in each regular file ``names`` of folder
    ``dir_fd``, read as ``read_searchable_at(dir_fd, name, sniff, most)`` reads it.

    One code per file, in order, and a payload for each code that carries one:

    - ``b"e"``: it could not be read; the payload is the OSError (its filename the name);
    - ``b"l"``: it holds more than ``most`` bytes (searched block by block instead);
    - ``b"b"``: binary: a NUL in its first ``sniff`` bytes, or (``LITERAL``) a match and
      a NUL anywhere;
    - ``b"n"``: searched, nothing found;
    - ``b"m"``: found. ``LITERAL``: (line numbers, those lines joined by line feeds) as
      ``literal_lines(hay, data, needle, limit)`` gives them, or with ``count_only`` the
      number of matching lines; ``CANDIDATES``: (numbers, lines, whether a NUL is in the
      file) of every line holding ``needle``, less those a regular expression's ``table``
      (janito_files._automaton) answers as not matching;
    - ``b"d"``: ``FILTER``: the bytes.

    ``fold``: ``needle`` is lower-case ASCII, searched in the bytes with ASCII letters
    lower-cased. The batch stops before a file once what it keeps (payload bytes and one
    word per line number) reaches ``budget``: fewer codes than names then.

    ``janito_files._speedups.scan_files`` is the same function compiled.
    """
    if sniff <= 0 or most < 0:
        raise ValueError("sniff must be positive and most not negative")
    if mode not in (LITERAL, CANDIDATES, FILTER):
        raise ValueError("mode must be 0, 1 or 2")
    if needle is not None and not isinstance(needle, bytes):
        raise TypeError("needle must be bytes or None")
    if not needle and mode != FILTER:
        raise ValueError("the needle is empty")
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise TypeError("names must be a list of str")
    for name in names:
        os.fsencode(name)
        if name in ("", ".", "..") or "/" in name or "\x00" in name:
            raise ValueError("name must be one non-empty path component")
    codes = bytearray()
    payloads: list[Any] = []
    kept = 0
    for name in names:
        if kept >= budget:
            break
        try:
            data = read_searchable_at_py(dir_fd, name, sniff, most)
        except OSError as exc:
            codes += b"e"
            payloads.append(OSError(exc.errno, exc.strerror, name))
            continue
        if data is None:
            codes += b"l"
            continue
        if data.find(b"\x00", 0, sniff) >= 0:
            codes += b"b"
            continue
        hay = data.lower() if needle and fold else data
        if mode == FILTER:
            if needle and hay.find(needle) < 0:
                codes += b"n"
            else:
                codes += b"d"
                payloads.append(data)
                kept += len(data)
            continue
        assert needle is not None
        has_nul = b"\x00" in data
        if mode == LITERAL and count_only:
            count = count_lines(hay, needle)
            if not count:
                codes += b"n"
            elif has_nul:
                codes += b"b"
            else:
                codes += b"m"
                payloads.append(count)
                kept += _WORD
            continue
        numbers, joined = literal_lines_py(hay, data, needle,
                                            sys.maxsize if mode == CANDIDATES else limit)
        if numbers and mode == CANDIDATES and table is not None:
            numbers, joined = _not_missing(table, numbers, joined)
        if not numbers:
            codes += b"n"
        elif has_nul and mode == LITERAL:
            codes += b"b"
        else:
            codes += b"m"
            payloads.append((numbers, joined, has_nul) if mode == CANDIDATES
                            else (numbers, joined))
            kept += len(joined) + _WORD * len(numbers)
    return bytes(codes), payloads


def _not_missing(table: bytes, numbers: list[int], joined: bytes) -> tuple[list[int], bytes]:
    """The candidate lines (numbers, lines joined) that ``table`` does not answer as
    missing the pattern."""
    from ._automaton import LINE_MISSES, read_table, walk_line

    read = read_table(table)
    kept = [(number, line) for number, line in zip(numbers, joined.split(b"\n"), strict=True)
            if walk_line(read, line) != LINE_MISSES]
    return [number for number, _ in kept], b"\n".join(line for _, line in kept)


class SearcherPy:
    """:func:`scan_files` on worker threads, taken back in order: the Python twin of
    ``janito_files._speedups.Searcher``, which answers each batch when it is taken (Python
    threads would hold the GIL the walk needs), so that no answer waits, whatever ``hold``."""

    def __init__(self, workers: int, sniff: int, most: int, needle: bytes | None, fold: bool,
                 count_only: bool, mode: int, budget: int, hold: int = sys.maxsize,
                 table: bytes | None = None) -> None:
        if not 1 <= workers <= 16:
            raise ValueError("workers must be between 1 and 16")
        scan_files_py(-1, [], sniff, most, needle, fold, 1, count_only, mode, budget)  # checks
        self.arguments = (sniff, most, needle, fold)
        self.rest = (count_only, mode, budget, table)
        self.given: deque[tuple[int, list[str], int]] = deque()
        self.closed = False

    def give(self, dir_fd: int, names: list[str], limit: int) -> None:
        """Hand out a batch; ``dir_fd`` must stay open until it is taken."""
        if self.closed:
            raise ValueError("the searcher is closed")
        self.given.append((dir_fd, names, limit))

    def take(self) -> tuple[bytes, list[Any]]:
        """(codes, payloads) of the oldest batch not taken, as :func:`scan_files` answers."""
        if not self.given:
            raise ValueError("no batch was given")
        dir_fd, names, limit = self.given.popleft()
        return scan_files_py(dir_fd, names, *self.arguments, limit, *self.rest)

    def ready(self) -> bool:
        """Whether a batch was given: this twin answers it when it is taken."""
        return bool(self.given)

    def close(self) -> None:
        """Stop the workers (after the batch each is in) and drop every batch."""
        self.closed = True
        self.given.clear()


def pick_plain_py(names: list[str], kinds: list[str], kind: str, how: str, start: str,
                  end: str) -> list[str]:
    """The names of ``kind`` that a glob of names decided by string tests picks (see
    ``find_files._plain``): ``how`` "all", "affixes" (starts with ``start``, ends with
    ``end``, the two not overlapping), "holds" (``start`` within) or "equal" (``start``)."""
    pairs = zip(names, kinds, strict=True)
    if how == "all":
        return [name for name, its in pairs if its == kind]
    if how == "affixes" and not start:
        return [name for name, its in pairs if its == kind and name.endswith(end)]
    if how == "affixes":
        least = len(start) + len(end)
        return [name for name, its in pairs if its == kind and name.startswith(start)
                and name.endswith(end) and len(name) >= least]
    if how == "holds":
        return [name for name, its in pairs if its == kind and start in name]
    if how == "equal":
        return [name for name, its in pairs if its == kind and name == start]
    raise ValueError("how must be all, affixes, holds or equal")


def prefixed_py(prefix: str, names: list[str]) -> list[str]:
    """``prefix + name`` for each of ``names``."""
    return [prefix + name for name in names]


def found_rows_py(paths: list[str], payloads: list[tuple[list[int], bytes]],
                  line_chars: int) -> list[dict[str, Any]] | None:
    """The rows ``{"path", "line", "text"}`` of a literal search's found files:
    ``paths[i]`` names the file whose answer is ``payloads[i]``, (its line numbers, its
    lines joined by line feeds). None, having made nothing, where a line holds a carriage
    return or may need clipping (more than ``line_chars`` characters here, bytes in the
    compiled function), or where lines and numbers differ in count: the search's own
    steps answer those."""
    if len(paths) != len(payloads):
        raise ValueError("paths and payloads differ in length")
    numbers = [answer[0] for answer in payloads]
    joined = b"\n".join([answer[1] for answer in payloads])
    if b"\r" in joined or not all(numbers):
        return None
    texts = joined.decode("utf-8", "replace").split("\n")
    if len(texts) != sum(map(len, numbers)) or max(map(len, texts)) > line_chars:
        return None
    return rows_of(paths, numbers, texts)


def rows_of(paths: list[str], numbers: list[list[int]], texts: list[str]
            ) -> list[dict[str, Any]]:
    """The rows ``{"path", "line", "text"}`` of found files: the lines numbered
    ``numbers[i]`` of the file at ``paths[i]``, their ``texts`` all files' in order."""
    shown = chain.from_iterable(map(repeat, paths, map(len, numbers)))
    return [{"path": path, "line": line, "text": text}
            for path, line, text in zip(shown, chain.from_iterable(numbers), texts, strict=True)]


try:
    from ._speedups import (
        Searcher,
        automaton_lines,
        automaton_rows,
        found_rows,
        literal_lines,
        pick_plain,
        prefixed,
        read_searchable_at,
        scan_files,
    )
except ImportError:  # built without a C compiler: the same steps in Python
    literal_lines = literal_lines_py
    read_searchable_at = read_searchable_at_py
    scan_files = scan_files_py
    Searcher = SearcherPy  # type: ignore[misc,assignment]
    pick_plain = pick_plain_py
    prefixed = prefixed_py
    found_rows = found_rows_py
    # A table walked in Python is slower than the engine: regular expressions keep it.
    automaton_lines = None  # type: ignore[assignment]
    automaton_rows = None  # type: ignore[assignment]


def _compiled_lister() -> Lister:
    """The compiled ``list_folder`` where it was built and sorts as Python does: it orders
    names by the code points of their UTF-8 decoding, which is Python's decoding of file
    names only where the file system encoding is UTF-8 with "surrogateescape"."""
    if (sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()) != ("utf-8",
                                                                          "surrogateescape"):
        return list_folder_py
    try:
        from ._speedups import list_folder
    except ImportError:
        return list_folder_py
    return list_folder


#: How the walks of janito-files list a folder (``janito_core._fswalk.list_folder``'s
#: answers, without an ``os.DirEntry`` per entry where the module was compiled).
list_folder: Lister = _compiled_lister()


def lookahead() -> Any:
    """A new compiled ``Lookahead`` for one walk (its owner closes it), or None where
    folders are listed in Python: the walk then opens and lists each itself."""
    if list_folder is list_folder_py:
        return None
    from ._speedups import Lookahead

    return Lookahead()


