"""The files of one folder read and searched as a batch, batches run on worker threads.

A search hands the walk's files to ``scan_files`` (janito_files._steps) a run at a time: the consecutive
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
import sys
from collections import deque
from collections.abc import Callable
from typing import Any

BATCH_FILES = 256
"""The most files one batch reads."""

BATCH_BYTES = 1 << 19
"""What one batch keeps (bytes read for a regular expression, lines found) before it
stops early, at the file that reaches it: a batch holds at most this and one file's
answer (at most a block, ``BLOCK_BYTES`` of janito_files._search)."""

IN_FLIGHT = 256
"""Batches handed out and not yet taken back. A tree of small folders (the standard
library's, 26 files a folder, split further by its subfolders) makes small batches: with
eight out, the two workers waited on the walk, and a search that finds nothing there took
30.0 ms against 25.6 ms with 24 out; on a later machine, 35.7 ms with 24 out against
33.4 ms with 48 (docs/decisions/0019). Once answers were taken as soon as they are back
(``Pipeline.ready``), 256 out let the workers read past a large folder's batch while the
walk waits on it: `def` over the stdlib copy 48.7 ms against 59.2 ms with 48, in one
process, and a search that fills up early is not slower for it (it stops walking when
it is full). What they hold is bounded by :data:`HELD_BYTES`, not by their number, and
the descriptors they hold by :data:`SPARE_DESCRIPTORS`."""

HELD_BYTES = 3 << 20
"""What the answers of batches read ahead may hold: a worker starts a batch other than the
oldest not taken only while the answers waiting hold less. With the two batches answered on
the calling thread first and a batch's at most ``BATCH_BYTES + BLOCK_BYTES`` on each of at
most four workers, a search holds at most 12 MiB of batches besides its own block, as it
did with eight batches out."""

SPARE_DESCRIPTORS = 64
"""Descriptors a search leaves free for what it does besides holding batches (each
worker's open file, the walk's folders and the up to 40 its lookahead holds) and for the
calls running beside it: a batch that would take one of them waits for the oldest batch
out to be taken back (janito_files._search)."""


def descriptor_ceiling() -> int:
    """The lowest descriptor number a batch may not hold: the process's allowance of open
    descriptors (its soft limit) less :data:`SPARE_DESCRIPTORS`."""
    try:
        allowance = os.sysconf("SC_OPEN_MAX")
    except (ValueError, OSError):
        return sys.maxsize
    return sys.maxsize if allowance < 0 else allowance - SPARE_DESCRIPTORS


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

class Batch:
    """The consecutive files of one folder: the folder (a descriptor this batch owns),
    their names in it, what goes before a name to make its path as shown (made only for
    the files an answer names), and (once read) the answer."""

    __slots__ = ("answer", "dir_fd", "names", "prefix")

    def __init__(self, dir_fd: int, names: list[str], prefix: str) -> None:
        self.dir_fd = dir_fd
        self.names = names
        self.prefix = prefix
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

    def give(self, dir_fd: int, names: list[str], prefix: str, limit: int) -> None:
        """Hand out the files ``names`` of folder ``dir_fd``, a descriptor the batch owns
        from now on, shown as ``prefix`` and their names, to be searched for at most
        ``limit`` lines each."""
        batch = Batch(dir_fd, names, prefix)
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
        """Whether the oldest batch is answered, so that taking it does not wait: a search
        uses each answer as soon as it is back, and one that fills up early stops walking
        early."""
        queue = self.queue
        if not queue:
            return False
        return queue[0].answer is not None or self.searcher.ready()

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
