"""Changes of one path journaled one at a time, so the journal holds them in the order
they were made.

A change is written ahead with what its path holds at that moment, then made. Two calls
changing one path at once (two threads of an MCP server, two of its workers) could
otherwise record in one order and change in the other: one call's before-image would not
be what its change replaced, and an undo would put back the wrong version. So from the
moment a change takes its before-image until it has looked at what it left, it holds its
paths: a lock among this process's threads and, for other processes, an open file
description lock (``F_OFD_SETLKW``) on one byte of the journal's ``order.lock``.

Paths map onto STRIPES such locks by a hash that every process computes alike; two paths
on one stripe merely wait for each other. A move holds both its paths, the lower stripe
first. Where the kernel has no open file description locks (not Linux), the threads of one
process are still ordered; processes are not.
"""

from __future__ import annotations

import binascii
import contextlib
import os
import struct
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

STRIPES = 256
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class PathOrder:
    """The locks of one journal's paths (see the module's docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._mutex = threading.Lock()
        self._pid = -1
        self._fd = -1
        self._locks: list[threading.Lock] = []

    def _state(self) -> tuple[list[threading.Lock], int]:
        if self._pid != os.getpid():  # the first use, or a child after a fork: its own
            with self._mutex:
                if self._pid != os.getpid():
                    fd = os.open(self.path, os.O_RDWR | os.O_CREAT | _CLOEXEC, 0o600)
                    if self._fd >= 0 and self._pid > 0:
                        with contextlib.suppress(OSError):
                            os.close(self._fd)  # the parent's: it keeps its own
                    self._locks = [threading.Lock() for _ in range(STRIPES)]
                    self._fd, self._pid = fd, os.getpid()
        return self._locks, self._fd

    def hold(self, keys: Sequence[str]) -> tuple[int, ...]:
        """Wait for the paths ``keys`` (absolute paths) and hold them; what to give
        :meth:`release`."""
        locks, fd = self._state()
        stripes = sorted({stripe(key) for key in keys}) if len(keys) > 1 else [stripe(keys[0])]
        held: list[int] = []
        try:
            for number in stripes:
                locks[number].acquire()
                try:
                    _lock(fd, number, _WRITE)
                except BaseException:
                    locks[number].release()
                    raise
                held.append(number)
        except BaseException:
            self.release(held)
            raise
        return tuple(held)

    def release(self, stripes: Iterable[int]) -> None:
        locks, fd = self._locks, self._fd
        for number in sorted(stripes, reverse=True):
            try:
                with contextlib.suppress(OSError):
                    _lock(fd, number, _UNLOCK)
            finally:
                locks[number].release()

    def close(self) -> None:
        with self._mutex:
            fd, self._fd = self._fd, -1
            pid, self._pid = self._pid, -1
        if fd >= 0 and pid == os.getpid():
            with contextlib.suppress(OSError):
                os.close(fd)


def stripe(key: str) -> int:
    """The stripe of path ``key``, alike in every process (str's hash is not)."""
    return binascii.crc32(key.encode("utf-8", "surrogateescape")) % STRIPES


try:
    import fcntl
except ImportError:  # not POSIX: the threads of one process are ordered, no more
    fcntl = None  # type: ignore[assignment]
_SETLKW: int | None = getattr(fcntl, "F_OFD_SETLKW", None)
_WRITE: int = getattr(fcntl, "F_WRLCK", 1)
_UNLOCK: int = getattr(fcntl, "F_UNLCK", 2)


def _lock(fd: int, number: int, kind: int) -> None:
    """Take (``_WRITE``) or let go of (``_UNLOCK``) byte ``number`` of the lock file."""
    if _SETLKW is not None:
        # struct flock: type, whence, start, length, pid (0: an open file description lock)
        fcntl.fcntl(fd, _SETLKW, struct.pack("hhqqi", kind, os.SEEK_SET, number, 1, 0))
