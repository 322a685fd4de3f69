"""The files of one folder read and searched as a batch, batches run on worker threads.

A search hands the walk's files to :func:`scan_files` a run at a time: the consecutive
files of one folder, named relative to the descriptor of that folder (duplicated for the
batch, so the walk may go on). The compiled ``scan_files`` reads and searches a whole
batch without the GIL, so two batches run at once on two cores while the walk lists the
next folders; :class:`Pipeline` hands them out and gives the answers back in the walk's
order, which is all a search's result depends on.

The walk still decides which folders exist, how they are reached and which names are
searched (decision 0007, the ignore rules, the policy's hidden paths); a batch only opens
names of a folder it was given, with ``O_NOFOLLOW``, as ``read_searchable_at`` does.
"""

from __future__ import annotations

import os
import struct
import sys
from collections import deque
from collections.abc import Callable
from typing import Any

LITERAL, CANDIDATES, FILTER = 0, 1, 2
"""What :func:`scan_files` does with each file's bytes (its ``mode``):

- ``LITERAL``: SearchText's literal search (:class:`~janito_files._search.BytesMatcher`):
  the first ``limit`` matching lines, or with ``count_only`` their number;
- ``CANDIDATES``: every line holding ``needle``, which a regular expression then checks
  (a pattern that needs that text in every match and sees a line alone);
- ``FILTER``: the bytes themselves, for a regular expression to search, when they hold
  ``needle`` (or always, when it is None)."""

BATCH_FILES = 256
"""The most files one batch reads."""

BATCH_BYTES = 1 << 20
"""What one batch keeps (bytes read for a regular expression, lines found) before it
stops early, at the file that reaches it: a batch holds at most this and one file's
answer (at most a block, ``BLOCK_BYTES`` of janito_files._search)."""

IN_FLIGHT = 4
"""Batches handed out and not yet taken back: with :data:`BATCH_BYTES`, what a search
holds besides its own block is at most ``IN_FLIGHT * (BATCH_BYTES + BLOCK_BYTES)``,
8 MiB (docs/decisions/0016)."""

def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))  # the CPUs this process may run on
    except (AttributeError, OSError):
        return os.cpu_count() or 1


WORKERS = max(1, min(4, _cpus()))
"""Threads reading batches: one per CPU this process may use, up to four (the walk takes
a CPU as well)."""

THREADS_AFTER = 2
"""Batches answered on the calling thread before workers start: a small search does not
pay for starting them."""

_WORD = struct.calcsize("n")


def _literal_lines_py(hay: bytes, data: bytes, needle: bytes,
                      limit: int) -> tuple[list[int], bytes]:
    from ._search import literal_lines_py

    return literal_lines_py(hay, data, needle, limit)


def _count_py(hay: bytes, needle: bytes) -> int:
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
                  budget: int) -> tuple[bytes, list[Any]]:
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
      file) of every line holding ``needle``;
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
    from ._search import read_searchable_at_py

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
            count = _count_py(hay, needle)
            if not count:
                codes += b"n"
            elif has_nul:
                codes += b"b"
            else:
                codes += b"m"
                payloads.append(count)
                kept += _WORD
            continue
        numbers, joined = _literal_lines_py(hay, data, needle,
                                            sys.maxsize if mode == CANDIDATES else limit)
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


class SearcherPy:
    """:func:`scan_files` on worker threads, taken back in order: the Python twin of
    ``janito_files._speedups.Searcher``, which answers each batch when it is given (Python
    threads would hold the GIL the walk needs)."""

    def __init__(self, workers: int, sniff: int, most: int, needle: bytes | None, fold: bool,
                 count_only: bool, mode: int, budget: int) -> None:
        if not 1 <= workers <= 16:
            raise ValueError("workers must be between 1 and 16")
        scan_files_py(-1, [], sniff, most, needle, fold, 1, count_only, mode, budget)  # checks
        self.arguments = (sniff, most, needle, fold)
        self.rest = (count_only, mode, budget)
        self.answers: deque[tuple[bytes, list[Any]]] = deque()
        self.closed = False

    def give(self, dir_fd: int, names: list[str], limit: int) -> None:
        """Hand out a batch; ``dir_fd`` must stay open until it is taken."""
        if self.closed:
            raise ValueError("the searcher is closed")
        self.answers.append(scan_files_py(dir_fd, names, *self.arguments, limit, *self.rest))

    def take(self) -> tuple[bytes, list[Any]]:
        """(codes, payloads) of the oldest batch not taken, as :func:`scan_files` answers."""
        if not self.answers:
            raise ValueError("no batch was given")
        return self.answers.popleft()

    def close(self) -> None:
        """Stop the workers (after the batch each is in) and drop every batch."""
        self.closed = True
        self.answers.clear()


try:
    from ._speedups import Searcher, scan_files
except ImportError:  # built without a C compiler: the same steps in Python
    Searcher = SearcherPy  # type: ignore[misc,assignment]
    scan_files = scan_files_py


class Batch:
    """The consecutive files of one folder: the folder (a descriptor this batch owns),
    their names in it and their paths as shown, and (once read) the answer."""

    __slots__ = ("answer", "dir_fd", "names", "paths")

    def __init__(self, dir_fd: int, names: list[str], paths: list[str]) -> None:
        self.dir_fd = dir_fd
        self.names = names
        self.paths = paths
        self.answer: Any = None

    def close(self) -> None:
        if self.dir_fd >= 0:
            os.close(self.dir_fd)
            self.dir_fd = -1


BatchScan = Callable[[int, list[str], int], tuple[bytes, list[Any]]]
"""A :func:`scan_files` with every argument but the folder, the names and the limit bound."""


class Pipeline:
    """Batches handed to worker threads and taken back in the order they were given.

    The first :data:`THREADS_AFTER` batches are answered on the calling thread by
    ``scan``; after that a :class:`Searcher` made by ``start`` answers them on
    :data:`WORKERS` threads, at most :data:`IN_FLIGHT` out at a time. :meth:`close` stops
    the workers and closes every descriptor a batch still owns, taken back or not.
    """

    def __init__(self, scan: BatchScan, start: Callable[[int], Any]) -> None:
        self.scan = scan
        self.start = start
        self.queue: deque[Batch] = deque()
        self.given = 0
        self.searcher: Any = None

    def give(self, dir_fd: int, names: list[str], paths: list[str], limit: int) -> None:
        """Hand out the files ``names`` of folder ``dir_fd``, a descriptor the batch owns
        from now on, to be searched for at most ``limit`` lines each."""
        batch = Batch(dir_fd, names, paths)
        self.queue.append(batch)
        self.given += 1
        try:
            if self.given <= THREADS_AFTER or WORKERS < 2:
                batch.answer = self.scan(dir_fd, names, limit)
            else:
                if self.searcher is None:
                    self.searcher = self.start(WORKERS)
                self.searcher.give(dir_fd, names, limit)
        except BaseException:
            self.close()
            raise

    def full(self) -> bool:
        """Whether as many batches are out as may be."""
        return len(self.queue) >= IN_FLIGHT

    def ready(self) -> bool:
        """Whether the oldest batch was answered on the calling thread."""
        return bool(self.queue) and self.queue[0].answer is not None

    def take(self) -> Batch:
        """The oldest batch, with its answer (waiting for it). A file's error is in the
        answer; what the search raised otherwise (out of memory) is raised here."""
        batch = self.queue.popleft()
        if batch.answer is None:
            try:
                batch.answer = self.searcher.take()
            except BaseException:
                batch.close()
                raise
        return batch

    def close(self) -> None:
        if self.searcher is not None:
            self.searcher.close()
        for batch in self.queue:
            batch.close()
        self.queue.clear()
