"""Walking and removing folder trees by descriptor, iteratively, with few descriptors open.

Each folder is opened relative to its parent's descriptor with ``O_NOFOLLOW``, so a walk
never leaves the tree through a link and a folder swapped for a link meanwhile is not
entered. The walk keeps an explicit stack, so no depth can exhaust Python's; it keeps at
most :data:`FD_BUDGET` folders open, and a folder whose descriptor was let go is opened
again by name from its nearest open ancestor and checked to be the same folder (device
and inode) before the walk goes on in it.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator
from operator import attrgetter
from typing import Any, Protocol

from ._beneath import close_quietly, open_regular_at

FD_BUDGET = 64
"""Folders a walk keeps open at most (the rest are reopened by name when needed)."""

_NAME = attrgetter("name")
_LIST_FLAGS = (os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
               | getattr(os, "O_CLOEXEC", 0))


class FolderChanged(OSError):
    """A folder was replaced while the walk was inside it."""


class Folder:
    """A folder being walked: what ``enter`` callbacks see.

    ``names`` and ``kinds`` are its entries, sorted by name, with their kinds ("file",
    "directory", "symlink", "other"); a callback keeps fewer with :meth:`keep`. ``state``
    starts as the parent folder's (None at the top); a callback may replace it, and the
    folder's subfolders then inherit the new value.
    """

    __slots__ = ("depth", "fd", "ident", "index", "job", "kinds", "name", "names",
                 "relative", "state")

    def __init__(self, fd: int, name: str, relative: str, depth: int, state: Any) -> None:
        self.fd = fd
        self.name = name
        self.relative = relative
        self.depth = depth
        self.state = state
        self.ident: tuple[int, int] | None = None
        #: Its subfolders' job with the walk's ``lookahead``, if it was given them.
        self.job: int | None = None
        self.names: list[str] = []
        self.kinds: list[str] = []
        self.index = 0

    def let_go(self) -> None:
        """Close the folder's descriptor, first noting which folder it is (device, inode),
        so that the walk can tell it is the same one when it opens it again by name."""
        if self.ident is None:
            self.ident = identity(self.fd)
        close_quietly(self.fd)
        self.fd = -1

    def open_regular(self, name: str) -> tuple[int, os.stat_result]:
        """(descriptor, stat) of regular file ``name`` in this folder, opened for reading
        without blocking or following a link (the caller closes it)."""
        return open_regular_at(self.fd, name, join(self.relative, name))

    def keep(self, names: list[str], kinds: list[str]) -> None:
        """Walk only ``names`` (of :attr:`names`, in their order), of ``kinds``."""
        self.names = names
        self.kinds = kinds


class WalkEntry:
    """One entry of a walk.

    ``dir_fd`` is the folder holding the entry, valid until the walk goes on: open the entry
    with ``os.open(entry.name, flags, dir_fd=entry.dir_fd)``. ``relative`` is its path from
    the workspace root. Calling ``prune()`` on a folder keeps the walk out of it.
    """

    __slots__ = ("_descend", "depth", "dir_fd", "kind", "name", "relative")

    def __init__(self, name: str, relative: str, depth: int, kind: str, dir_fd: int) -> None:
        self.name = name
        self.relative = relative
        self.depth = depth
        self.kind = kind
        self.dir_fd = dir_fd
        self._descend = True

    def prune(self) -> None:
        self._descend = False

    def open_regular(self) -> tuple[int, os.stat_result]:
        """(descriptor, stat) of this entry as a regular file opened for reading, without
        blocking on a FIFO or a device or following a link (the caller closes it)."""
        return open_regular_at(self.dir_fd, self.name, self.relative)

    def __repr__(self) -> str:
        return f"WalkEntry({self.relative!r}, {self.kind})"


class Run:
    """Consecutive entries of one folder, as a walk gives them, for callers that take a
    folder's entries together rather than one at a time.

    ``names`` and ``kinds`` are the entries' names and kinds ("file", "directory",
    "symlink", "other"); each is at ``join(relative, name)`` from the workspace root, at
    ``depth``, in the folder open as ``dir_fd`` (valid until the walk goes on). Only the
    last entry of a run can be a folder: the walk goes into it next, unless ``prune()`` is
    called first.
    """

    __slots__ = ("_descend", "depth", "dir_fd", "kinds", "names", "relative")

    def __init__(self, relative: str, depth: int, dir_fd: int, names: list[str],
                 kinds: list[str]) -> None:
        self.relative = relative
        self.depth = depth
        self.dir_fd = dir_fd
        self.names = names
        self.kinds = kinds
        self._descend = True

    @property
    def prefix(self) -> str:
        """What goes before a name to make its path from the workspace root (as
        :func:`join` joins them)."""
        return join(self.relative, "")

    def prune(self) -> None:
        """Keep the walk out of this run's last entry (when it is a folder)."""
        self._descend = False

    def __repr__(self) -> str:
        return f"Run({self.relative!r}, {self.names!r})"


Listing = tuple[list[str], list[str]]
"""A folder's entries: their names, sorted as Python sorts strings, and their kinds."""
Lister = Callable[[int], Listing]


class Lookahead(Protocol):
    """Opens and lists the subfolders a walk enters next while it goes on (janito-files'
    compiled ``Lookahead``): each is opened as the walk opens one (by name from its
    folder's descriptor, ``O_NOFOLLOW``) and listed as :func:`list_folder` lists."""

    def ahead(self, dir_fd: int, names: list[str], kinds: list[str]) -> int | None:
        """Start on the subfolders among entries ``names`` (of ``kinds``) of the folder
        open as ``dir_fd``; a job, or None when there are none."""

    def take(self, job: int, name: str) -> tuple[int, int, int, list[str], list[str]] | None:
        """(descriptor, device, inode, names, kinds) of subfolder ``name`` of ``job``, now
        the caller's; None for one the caller opens and lists itself."""

    def drop(self, job: int) -> None:
        """Close what ``job`` holds that was not taken."""

    def release(self, fd: int) -> None:
        """Close folder descriptor ``fd``, which the walk is done with (on the lookahead's
        thread, where the kernel's clean-up of a listed folder is paid)."""


Enter = Callable[[Folder], None]
Errors = Callable[[str, OSError], None]


def kind_of(entry: os.DirEntry[str]) -> str:
    """"file", "directory", "symlink" or "other", never following a link."""
    # files first: they are most of a tree, and one question settles them
    try:
        if entry.is_file(follow_symlinks=False):
            return "file"
        if entry.is_dir(follow_symlinks=False):
            return "directory"
        if entry.is_symlink():
            return "symlink"
    except OSError:
        pass
    return "other"


def identity(fd: int) -> tuple[int, int]:
    """(device, inode) of the file open as ``fd``."""
    info = os.fstat(fd)
    return info.st_dev, info.st_ino


def join(relative: str, name: str) -> str:
    return name if relative in ("", ".") else f"{relative}/{name}"


class _Stack:
    """The folders from the start of a walk down to the current one."""

    def __init__(self, close: Callable[[int], None] = close_quietly) -> None:
        self.frames: list[Folder] = []
        self.open_count = 0
        self.close = close

    def push(self, folder: Folder) -> None:
        self.frames.append(folder)
        self.open_count += 1
        self._trim()

    def pop(self) -> Folder:
        folder = self.frames.pop()
        if folder.fd >= 0:
            self.close(folder.fd)
            folder.fd = -1
            self.open_count -= 1
        return folder

    def _trim(self) -> None:
        # Let go of the shallowest open folders below the start: they are needed again
        # only when the walk climbs back to them.
        index = 1
        while self.open_count > FD_BUDGET and index < len(self.frames) - 1:
            folder = self.frames[index]
            if folder.fd >= 0:
                folder.let_go()
                self.open_count -= 1
            index += 1

    def fd_of(self, position: int) -> int:
        """The descriptor of ``frames[position]``, opened again if it was let go."""
        folder = self.frames[position]
        if folder.fd >= 0:
            return folder.fd
        nearest = position
        while self.frames[nearest].fd < 0:
            nearest -= 1
        for index in range(nearest + 1, position + 1):
            frame = self.frames[index]
            fd = os.open(frame.name, _LIST_FLAGS, dir_fd=self.frames[index - 1].fd)
            if identity(fd) != frame.ident:
                close_quietly(fd)
                raise FolderChanged(errno.ESTALE, "the folder was replaced during the walk",
                                    frame.relative)
            frame.fd = fd
            self.open_count += 1
            # Keep open only the folders the walk climbs back to soon.
            stale = self.frames[index - 1]
            if index - 1 > 0 and position - (index - 1) >= FD_BUDGET and stale.fd >= 0:
                stale.let_go()
                self.open_count -= 1
        return folder.fd

    def close_all(self) -> None:
        while self.frames:
            self.pop()


def list_folder(fd: int) -> Listing:
    """The entries of the folder open as ``fd`` (names sorted, kinds never following a
    link). janito-files' compiled module lists the same way, on its own."""
    with os.scandir(fd) as listed:
        entries = sorted(listed, key=_NAME)
    names = [entry.name for entry in entries]
    try:
        kinds = ["file" if entry.is_file(follow_symlinks=False) else kind_of(entry)
                 for entry in entries]
    except OSError:  # an entry of unknown type that vanished before its lstat
        kinds = [kind_of(entry) for entry in entries]
    return names, kinds


def walk(start_fd: int, relative: str, *, max_depth: int | None = None,
         enter: Enter | None = None, on_error: Errors | None = None,
         state: Any = None, skip: frozenset[tuple[int, int]] = frozenset(),
         lister: Lister = list_folder) -> Iterator[WalkEntry]:
    """Every entry below folder ``start_fd`` (borrowed, not closed) in sorted depth-first
    order, each folder's entries right after it.

    ``max_depth`` 1 gives the start's own entries; None walks everything. ``enter`` sees each
    folder (its ``names`` and ``kinds``) before its entries are walked, and may keep fewer
    (``Folder.keep``). A folder that cannot be opened or read is skipped and passed to
    ``on_error`` with its error. A folder whose (device, inode) is in ``skip`` is never
    entered. ``lister`` lists a folder as :func:`list_folder` does.
    """
    return entries_of(walk_runs(start_fd, relative, max_depth=max_depth, enter=enter,
                                on_error=on_error, state=state, skip=skip, lister=lister))


def entries_of(runs: Iterator[Run]) -> Iterator[WalkEntry]:
    """The entries of ``runs`` one at a time (a folder entry pruned keeps the walk out)."""
    try:
        for run in runs:
            prefix, depth, fd = run.prefix, run.depth, run.dir_fd
            entry = None
            for name, kind in zip(run.names, run.kinds, strict=True):
                entry = WalkEntry(name, prefix + name, depth, kind, fd)
                yield entry
            if entry is not None and not entry._descend:
                run.prune()
    finally:
        close = getattr(runs, "close", None)
        if close is not None:
            close()


def walk_runs(start_fd: int, relative: str, *, max_depth: int | None = None,
              enter: Enter | None = None, on_error: Errors | None = None,
              state: Any = None, skip: frozenset[tuple[int, int]] = frozenset(),
              lister: Lister = list_folder, lookahead: Lookahead | None = None
              ) -> Iterator[Run]:
    """The walk of :func:`walk`, a :class:`Run` of one folder's consecutive entries at a
    time: a folder's entries up to and including its next subfolder, then that
    subfolder's runs, then the rest.

    With ``lookahead``, each folder's subfolders are handed to it as the folder is
    entered, and a subfolder it opened and listed meanwhile is taken from it instead of
    being opened and listed here (its owner closes it)."""
    stack = _Stack() if lookahead is None else _Stack(lookahead.release)
    try:
        top = Folder(os.dup(start_fd), "", relative, 0, state)
    except OSError as exc:
        if on_error is not None:
            on_error(relative, exc)
        return
    stack.push(top)
    try:
        try:
            top.names, top.kinds = lister(top.fd)
        except OSError as exc:
            if on_error is not None:
                on_error(relative, exc)
            return
        if enter is not None:
            enter(top)
        if lookahead is not None:
            _look_ahead(lookahead, top, max_depth)
        while stack.frames:
            position = len(stack.frames) - 1
            folder = stack.frames[position]
            first = folder.index
            kinds = folder.kinds
            if first >= len(kinds):
                stack.pop()
                if folder.job is not None and lookahead is not None:
                    lookahead.drop(folder.job)
                continue
            try:
                fd = stack.fd_of(position)
            except OSError as exc:
                if on_error is not None:
                    on_error(folder.relative, exc)
                folder.index = len(kinds)
                continue
            try:
                last = kinds.index("directory", first)
            except ValueError:
                last = len(kinds) - 1
            folder.index = last + 1
            run = Run(folder.relative, folder.depth + 1, fd, folder.names[first:last + 1],
                      kinds[first:last + 1])
            yield run
            if kinds[last] != "directory" or not run._descend:
                continue
            if max_depth is not None and run.depth >= max_depth:
                continue
            name = folder.names[last]
            below = join(folder.relative, name)
            taken = None
            if folder.job is not None and lookahead is not None:
                taken = lookahead.take(folder.job, name)
            if taken is not None:
                child_fd, device, inode, names, kinds = taken
                child = Folder(child_fd, name, below, run.depth, folder.state)
                child.ident = (device, inode)
                if child.ident in skip:
                    close_quietly(child_fd)
                    continue
                child.names, child.kinds = names, kinds
            else:
                try:
                    fd = stack.fd_of(position)
                    child_fd = os.open(name, _LIST_FLAGS, dir_fd=fd)
                except OSError as exc:
                    if on_error is not None:
                        on_error(below, exc)
                    continue
                try:
                    child = Folder(child_fd, name, below, run.depth, folder.state)
                    if skip:
                        child.ident = identity(child_fd)
                        if child.ident in skip:
                            close_quietly(child_fd)
                            continue
                    child.names, child.kinds = lister(child_fd)
                except OSError as exc:
                    close_quietly(child_fd)
                    if on_error is not None:
                        on_error(below, exc)
                    continue
            stack.push(child)
            if enter is not None:
                enter(child)
            if lookahead is not None:
                _look_ahead(lookahead, child, max_depth)
    finally:
        stack.close_all()


def _look_ahead(lookahead: Lookahead, folder: Folder, max_depth: int | None) -> None:
    """Hand ``folder``'s subfolders to ``lookahead``, unless the walk stops above them."""
    if max_depth is None or folder.depth + 1 < max_depth:
        folder.job = lookahead.ahead(folder.fd, folder.names, folder.kinds)


def _names(fd: int) -> list[str]:
    return sorted(os.listdir(fd))


def remove_tree(parent_fd: int, name: str, relative: str) -> tuple[int, int]:
    """Remove folder ``name`` of ``parent_fd`` and everything in it, never following a link;
    (files and links removed, folders removed below it).

    Raises the first OSError that stops it (what was removed until then stays removed).
    """
    files = folders = 0
    stack = _Stack()
    fd = os.open(name, _LIST_FLAGS, dir_fd=parent_fd)
    try:
        top = Folder(fd, name, relative, 0, None)
    except BaseException:
        close_quietly(fd)
        raise
    stack.push(top)
    try:
        top.names = _names(top.fd)
        while stack.frames:
            position = len(stack.frames) - 1
            folder = stack.frames[position]
            fd = stack.fd_of(position)
            if folder.index >= len(folder.names):
                # Entries made meanwhile would make rmdir fail: list once more first.
                leftovers = _names(fd)
                if leftovers:
                    folder.names, folder.index = leftovers, 0
                    continue
                stack.pop()
                parent = stack.fd_of(position - 1) if position else parent_fd
                os.rmdir(folder.name, dir_fd=parent)
                if position:
                    folders += 1
                continue
            name = folder.names[folder.index]
            folder.index += 1
            try:
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                continue
            if stat.S_ISDIR(info.st_mode):
                child_fd = os.open(name, _LIST_FLAGS, dir_fd=fd)
                try:
                    child = Folder(child_fd, name, join(folder.relative, name),
                                   folder.depth + 1, None)
                    child.names = _names(child_fd)
                except BaseException:
                    close_quietly(child_fd)
                    raise
                stack.push(child)
                continue
            try:
                os.unlink(name, dir_fd=fd)
            except FileNotFoundError:
                continue
            files += 1
    finally:
        stack.close_all()
    return files, folders
