"""A folder swapped for a link while a tool runs: the race a path checked as a string loses.

A tool that checks a path and then opens it by name can be led elsewhere by a folder on
that path replaced by a symbolic link between the two. ``FolderSwapper`` does exactly that,
over and over, in a thread, while a test calls the tool; afterwards nothing outside the
workspace may have been read or written::

    with FolderSwapper(workspace / "out", outside_folder) as swapper:
        for _ in range(300):
            janito.call("SaveThing", path="out/thing.txt")
    assert swapper.swaps > 0 and not list(outside_folder.iterdir())
"""

from __future__ import annotations

import errno
import os
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["FolderSwapper"]

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange_function() -> Any:
    """``renameat2`` of the C library (Linux 3.15+, glibc 2.28+), or None."""
    try:
        import ctypes
        import ctypes.util

        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        function = getattr(libc, "renameat2", None)
        if function is None:
            return None
        function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                             ctypes.c_uint]
        function.restype = ctypes.c_int
        return function
    except (OSError, ImportError, AttributeError):
        return None


class FolderSwapper:
    """Swaps ``folder`` for a symbolic link to ``target`` and back, in a thread, until stopped.

    Where the system can exchange two names in one step (``renameat2`` with
    ``RENAME_EXCHANGE``) the path always names one of the two, the folder or the link;
    elsewhere it is two renames, with a moment in between when nothing is there.
    ``pause`` seconds are spent in each state. ``swaps`` counts the times the link was in
    place; ``errors`` keeps what went wrong in the thread (a test should find it empty).
    Leaving the ``with`` block stops the thread and puts the folder back.
    """

    def __init__(self, folder: str | os.PathLike[str], target: str | os.PathLike[str],
                 *, pause: float = 0.0001) -> None:
        self.folder = Path(folder)
        self.link = self.folder.with_name(self.folder.name + ".swap-link")
        self.aside = self.folder.with_name(self.folder.name + ".swap-aside")
        self.pause = pause
        self.swaps = 0
        self.errors: list[BaseException] = []
        self.swapped = False
        os.symlink(os.fspath(target), self.link)
        self._stop = threading.Event()
        self._exchange = _exchange_function()
        self._thread = threading.Thread(target=self._run, name="folder-swapper", daemon=True)

    def _flip(self) -> None:
        if self._exchange is not None:
            import ctypes

            if self._exchange(_AT_FDCWD, os.fsencode(self.folder), _AT_FDCWD,
                              os.fsencode(self.link), _RENAME_EXCHANGE) == 0:
                self.swapped = not self.swapped
                return
            code = ctypes.get_errno()
            if code not in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP):
                raise OSError(code, os.strerror(code), os.fspath(self.folder))
            self._exchange = None  # this filesystem cannot exchange: rename instead
        if not self.swapped:
            os.rename(self.folder, self.aside)
            os.rename(self.link, self.folder)
        else:
            os.rename(self.folder, self.link)
            os.rename(self.aside, self.folder)
        self.swapped = not self.swapped

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                self._flip()
                if self.swapped:
                    self.swaps += 1
                time.sleep(self.pause)
        except BaseException as exc:  # reported through ``errors``; the test decides
            self.errors.append(exc)

    def start(self) -> FolderSwapper:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop swapping and put the folder back under its name; remove the link."""
        self._stop.set()
        self._thread.join(30)
        if self.swapped:
            self._flip()
        if os.path.lexists(self.link):
            os.unlink(self.link)

    def __enter__(self) -> FolderSwapper:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
