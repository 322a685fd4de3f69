"""A folder swapped for a link while a tool runs: the race a path checked as a string loses.

A tool that checks a path and then opens it by name can be led elsewhere by a folder on
that path replaced by a symbolic link between the two. ``FolderSwapper`` does exactly that
in a thread while a test calls the tool; afterwards nothing outside the workspace may have
been read or written. Drive it in lock-step with the calls, so the test meets both states
whatever the scheduler does::

    outcomes = {"folder": set(), "link": set(), "racing": set()}
    with FolderSwapper(workspace / "out", outside_folder) as swapper:
        for state in swapper.rounds(300):
            result = janito.call("SaveThing", path="out/thing.txt")
            outcomes[state].add(result["success"])
    assert outcomes["folder"] == {True} and outcomes["link"] == {False}
    assert not list(outside_folder.iterdir())

``rounds(n)`` holds the folder in place for one call, holds the link in place for the
next, and lets the thread swap freely during the third, over and over: the first two are
certain, the third is the race itself.
"""

from __future__ import annotations

import errno
import os
import threading
import time
from collections.abc import Iterator
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
    ``pause`` seconds are spent in each state while swapping freely. ``swaps`` counts the
    times the link was put in place; ``errors`` keeps what went wrong in the thread (a test
    should find it empty). Leaving the ``with`` block stops the thread and puts the folder
    back. :meth:`hold` and :meth:`rounds` stop the free swapping to put one state in place.
    """

    STATES = ("folder", "link", "racing")

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
        # Set while the thread may swap; a flip happens only with the lock held and the
        # event set, so hold() (which clears it, then takes the lock) ends the race.
        self._free = threading.Event()
        self._free.set()
        self._lock = threading.Lock()
        self._exchange = _exchange_function()
        self._thread = threading.Thread(target=self._run, name="folder-swapper", daemon=True)

    def _flip(self) -> None:
        if self._exchange is not None:
            import ctypes

            if self._exchange(_AT_FDCWD, os.fsencode(self.folder), _AT_FDCWD,
                              os.fsencode(self.link), _RENAME_EXCHANGE) == 0:
                self._flipped()
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
        self._flipped()

    def _flipped(self) -> None:
        self.swapped = not self.swapped
        if self.swapped:
            self.swaps += 1

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                if not self._free.wait(0.05):
                    continue
                with self._lock:
                    if self._free.is_set():
                        self._flip()
                time.sleep(self.pause)
        except BaseException as exc:  # reported through ``errors``; the test decides
            self.errors.append(exc)

    def hold(self, state: str) -> None:
        """Stop swapping and leave ``"folder"`` or ``"link"`` in place until told otherwise
        (``"racing"`` lets the thread swap again)."""
        if state not in self.STATES:
            raise ValueError(f"state must be one of {', '.join(self.STATES)}, not {state!r}")
        if state == "racing":
            self._free.set()
            return
        self._free.clear()
        with self._lock:
            if self.swapped != (state == "link"):
                self._flip()

    def rounds(self, count: int) -> Iterator[str]:
        """``count`` rounds, each yielding the state it put in place for the caller's call:
        ``"folder"``, ``"link"`` and ``"racing"`` in turn. The folder is back after the last."""
        for index in range(count):
            state = self.STATES[index % len(self.STATES)]
            self.hold(state)
            yield state
        self.hold("folder")

    def start(self) -> FolderSwapper:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop swapping and put the folder back under its name; remove the link."""
        self._stop.set()
        self._free.set()
        self._thread.join(30)
        if self.swapped:
            self._flip()
        if os.path.lexists(self.link):
            os.unlink(self.link)

    def __enter__(self) -> FolderSwapper:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
