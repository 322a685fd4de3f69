"""The workspace boundary: every path a tool touches is opened through it, by descriptor.

A path a model sent is never checked as a string and then used. ``Workspace`` holds a
descriptor of its root and walks every path from it one component at a time, each opened
with ``O_NOFOLLOW`` relative to the one before (``openat2`` with ``RESOLVE_BENEATH`` first,
where the kernel has it): a symbolic link is followed only while it stays inside, ``..``
never climbs above the root, and what an operation finally acts on is a name inside a
folder already held open. A folder swapped for a link to elsewhere between two calls, or
during one, leads nowhere outside. The same API serves every toolset: open, read, write
atomically, make folders, list and walk, rename, remove.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol

from ._atomic import ChangedMeanwhile, TargetExists, sync_folder, write_at
from ._beneath import (
    INVALID,
    LOOP,
    OUTSIDE,
    READ_FLAGS,
    SUPPORTED,
    NotRegularFile,
    Resolver,
    check_regular,
    close_quietly,
    open_regular_at,
    path_text,
)
from ._fswalk import entries_of, list_folder, remove_tree, walk, walk_runs
from ._renameat import rename_noreplace as _rename_noreplace
from .config import state_folder
from .errors import WorkspaceError
from .results import DENIED_BY_POLICY

if TYPE_CHECKING:
    from ._fswalk import Enter, Errors, Folder, Lister, Lookahead, Run, WalkEntry
    from .journal import Change, Recording

__all__ = ["INVALID", "LOOP", "OUTSIDE", "ChangedMeanwhile", "Location", "NotRegularFile",
           "TargetExists", "Workspace", "open_regular_at", "read_fd", "rename_noreplace"]

_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_WRITING = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
READ, WRITE = "read", "write"


class Workspace:
    """A folder that tools may read and write in, and nothing outside it.

    ``Workspace.unconfined()`` lifts the boundary explicitly: relative paths still start at
    the root, absolute ones go anywhere (links are still never followed blindly).

    Every method takes a path as a model sent it (relative to the root, or absolute inside
    it) and raises :class:`WorkspaceError` when it leads outside (``outside_workspace``), is
    no path (``invalid_path``) or goes round a link loop (``symlink_loop``); otherwise the
    ``OSError`` of the operation (FileNotFoundError, NotADirectoryError, ...).
    """

    __slots__ = ("_durable", "_fd", "_guard", "_journal", "_lock", "_owner", "_pinned",
                 "_resolver", "confined", "given", "root")

    def __init__(self, root: str | os.PathLike[str] | None = None, *, confined: bool = True) -> None:
        base = os.getcwd() if root is None else os.fspath(root)
        self.given: str = os.path.abspath(base)
        self.root: str = os.path.realpath(self.given)
        self.confined = confined
        self._fd = -1
        self._resolver: Resolver | None = None
        self._lock = threading.Lock()
        self._pinned = False
        self._guard: Guard | None = None
        self._journal: Recording | None = None
        self._durable = True
        # a view's workspace, kept alive while the view is: it owns the root's descriptor
        self._owner: Workspace | None = None

    @classmethod
    def unconfined(cls, root: str | os.PathLike[str] | None = None) -> Workspace:
        """A workspace that resolves relative paths against ``root`` but refuses none."""
        return cls(root, confined=False)

    # -- the descriptor of the root ----------------------------------------------------

    @property
    def resolver(self) -> Resolver:
        """The walker from the root's descriptor, opened on first use and kept."""
        resolver = self._resolver
        if resolver is None:
            with self._lock:
                resolver = self._resolver
                if resolver is None:
                    resolver = self._open_root()
        return resolver

    def _open_root(self) -> Resolver:
        if self._pinned:
            # Opened by descriptor (see within): opening its path again could reach another
            # folder swapped in meanwhile.
            raise WorkspaceError(self.root, "this workspace was closed", INVALID)
        if not SUPPORTED:
            raise WorkspaceError(self.root, "this platform lacks the *at() file calls (openat, "
                                 "mkdirat, renameat) the workspace boundary needs", INVALID)
        flags = getattr(os, "O_PATH", os.O_RDONLY) | _DIRECTORY | getattr(os, "O_CLOEXEC", 0)
        base = self.root if self.confined else "/"
        try:
            fd = os.open(base, flags)
        except OSError as exc:
            raise WorkspaceError(self.root, "the workspace folder cannot be opened "
                                 f"({exc.strerror or exc})", INVALID) from None
        prefixes = (self.root, self.given) if self.confined else ("/",)
        hidden = ident = None
        if self.confined:
            # Resolved when the root is opened, not per call: the state folder of a
            # process does not move, and every call would pay for the question.
            state = state_folder(self.root)
            hidden, ident = state.parts, state.ident
        self._fd = fd
        self._resolver = Resolver(fd, prefixes, hidden=hidden, hidden_ident=ident)
        return self._resolver

    def guarded(self, guard: Guard | None) -> Workspace:
        """This workspace as one call sees it: every path the call touches is also put to
        ``guard`` (a policy's ``PathGuard``: ``problem(parts, access)``), by its real path.

        The view shares this workspace's root descriptor; closing it leaves this one open.
        """
        if guard is None:
            return self
        view = self._view()
        view._guard = guard
        return view

    def journaled(self, recording: Recording | None) -> Workspace:
        """This workspace with every change written ahead to ``recording`` (a call's entry
        of a :class:`janito_core.journal.Journal`), so that it can be undone.

        The view shares this workspace's root descriptor and its guard.
        """
        if recording is None:
            return self
        view = self._view()
        view._journal = recording
        return view

    def deferred(self) -> Workspace:
        """This workspace with its changes not flushed to disk one by one: call
        :meth:`sync` after the last. For applying many changes at once (what code left in
        an overlay), where one flush at the end costs what thousands would one each."""
        view = self._view()
        view._durable = False
        return view

    def sync(self) -> None:
        """Flush every change made on the workspace's file system to disk."""
        from ._atomic import sync_file_system

        with self.locate(".") as where:
            sync_file_system(where.dir_fd)

    def _view(self) -> Workspace:
        view = Workspace.__new__(Workspace)
        view.given, view.root, view.confined = self.given, self.root, self.confined
        view._lock = threading.Lock()
        view._pinned = True
        view._fd = -1
        view._resolver = self.resolver
        view._guard = self._guard
        view._journal = self._journal
        view._durable = self._durable
        view._owner = self._owner or self
        return view

    @property
    def recording(self) -> Recording | None:
        """The journal entry this view's changes are written ahead to (None: no journal)."""
        return self._journal

    @property
    def guard(self) -> Guard | None:
        """The paths this view of the workspace may not touch (None: no policy)."""
        return self._guard

    def check(self, parts: list[str], access: str, shown: str | None = None) -> None:
        """WorkspaceError (``denied_by_policy``) when the guard refuses ``access`` ("read"
        or "write") to the real path ``parts``; nothing without a guard."""
        guard = self._guard
        if guard is None:
            return
        problem = guard.problem(parts, access)
        if problem is not None:
            raise WorkspaceError(shown if shown is not None else "/".join(parts) or ".",
                                 problem, DENIED_BY_POLICY)

    def _check_tree(self, where: Location) -> None:
        """Refuse to remove or move a folder when anything inside it may not be written."""
        guard = self._guard
        if guard is None or not where.parts:
            return
        self.check(where.parts, WRITE, where.shown)
        if not guard.inside_guarded(where.parts):
            return
        fd = where.open(os.O_RDONLY | _DIRECTORY)
        try:
            for entry in walk(fd, where.shown):
                below = entry.relative.split("/")[-entry.depth:]
                self.check([*where.parts, *below], WRITE, entry.relative)
        finally:
            os.close(fd)

    def state_notice(self) -> str | None:
        """What janito says at start when its own state folder lies within this workspace:
        the workspace then hides it from every tool (see :mod:`janito_core.config`)."""
        if not self.confined:
            return None
        return state_folder(self.root).notice(self.root)

    def close(self) -> None:
        """Let go of the root's descriptor (it is opened again on next use)."""
        with self._lock:
            fd, self._fd, self._resolver = self._fd, -1, None
        if fd >= 0:
            close_quietly(fd)

    def __del__(self, _close: Callable[[int], None] = os.close) -> None:
        # At interpreter exit the module's globals may already be gone: hold os.close here.
        fd = getattr(self, "_fd", -1)
        if fd >= 0:
            try:
                _close(fd)
            except OSError:
                pass

    def _text(self, path: object) -> object:
        """What the resolver walks: unconfined relative paths start at the root."""
        if self.confined:
            return path
        text = path_text(path)
        return text if text.startswith("/") else os.path.join(self.root, text)

    # -- where a path leads --------------------------------------------------------------

    def locate(self, path: object, *, follow_symlinks: bool = True,
               make_parents: bool = False) -> Location:
        """Where ``path`` leads: the open folder holding its target, and the target's name.

        Use it as a context manager and act on the target through the returned
        :class:`Location`. ``follow_symlinks=False`` makes a final link the target itself
        (to remove or rename the link); ``make_parents`` creates missing folders on the way.
        """
        recording = self._journal
        on_make = None
        if make_parents and recording is not None:
            on_make = recording.folder_hook(self)
        dir_fd, name, parts = self.resolver.locate(self._text(path), follow=follow_symlinks,
                                                   make_parents=make_parents, on_make=on_make)
        guard = self._guard
        if guard is not None and parts:
            # What may be neither read nor written is refused here, before anything is
            # learned of it (that it exists, its kind and size); a path only one access
            # is refused for is checked as it is used.
            problem = guard.problem(parts, READ)
            if problem is not None and guard.problem(parts, WRITE) is not None:
                close_quietly(dir_fd)
                raise WorkspaceError(self.display(self.absolute(parts)), problem,
                                     DENIED_BY_POLICY)
        return Location(self, dir_fd, name, parts)

    def within(self, path: object) -> Workspace:
        """A workspace confined to folder ``path`` of this one (close it when done).

        Its root is opened through this workspace's walk, so it is the folder the walk
        found even if the path is swapped for a link meanwhile; paths resolved in it cannot
        leave that folder, not even through links that would stay inside this workspace
        (a skill's files confined to its skill folder, say). NotADirectoryError when
        ``path`` is not a folder.
        """
        flags = getattr(os, "O_PATH", os.O_RDONLY) | _DIRECTORY
        outer = self.resolver
        with self.locate(path) as where:
            fd = where.open(flags)
            root = where.absolute
            parts = where.parts
        hidden = None
        if outer.hidden is not None and outer.hidden[:len(parts)] == parts:
            hidden = tuple(outer.hidden[len(parts):])
        inner = Workspace.__new__(Workspace)
        inner.given = inner.root = root
        inner.confined = True
        inner._lock = threading.Lock()
        inner._pinned = True
        inner._fd = fd
        inner._resolver = Resolver(fd, (root,), hidden=hidden, hidden_ident=outer.hidden_ident)
        inner._guard = None if self._guard is None else _Below(self._guard, parts)
        inner._journal = self._journal
        inner._durable = self._durable
        inner._owner = None  # its descriptor is its own
        return inner

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def relative(self, path: object, *, follow_symlinks: bool = True) -> str:
        """Where ``path`` really leads, as the model should see it ("." for the root)."""
        with self.locate(path, follow_symlinks=follow_symlinks) as where:
            return where.shown

    def resolve(self, path: object, *, follow_symlinks: bool = True) -> str:
        """The absolute real path that ``path`` leads to (the target need not exist).

        For showing and for handing to other programs (a child process's working folder);
        never open what it returns: use the methods of this class, which cannot be led out.
        """
        text = path_text(path)
        head, tail = text, list[str]()
        while True:
            try:
                with self.locate(head, follow_symlinks=follow_symlinks or bool(tail)) as where:
                    found = where.absolute
                break
            except OSError as exc:
                # A folder on the way is missing (or cannot exist): nothing below it can be
                # a link, so the rest of the path goes on from the part that exists.
                stripped = head.rstrip("/")
                head, _, name = stripped.rpartition("/")
                if exc.errno not in (errno.ENOENT, errno.ENAMETOOLONG) or name in ("", ".."):
                    raise WorkspaceError(path, "the path cannot be resolved "
                                         f"({exc.strerror or exc})", INVALID) from None
                if name != ".":
                    tail.append(name)
                if not head:
                    head = "/" if stripped.startswith("/") else "."
        if ".." in tail:
            raise WorkspaceError(path, "the path cannot be resolved (a folder before '..' does "
                                 "not exist)", INVALID)
        return "/".join([found.rstrip("/"), *reversed(tail)]) if tail else found

    def resolve_entry(self, path: object) -> str:
        """Like :meth:`resolve`, but a final link is the entry itself, not its target (for
        removing or renaming the link); the workspace root itself is refused."""
        real = self.resolve(path, follow_symlinks=False)
        if real == self.root and self.confined:
            raise WorkspaceError(path, "the workspace root itself cannot be used here", INVALID)
        return real

    def absolute(self, parts: list[str]) -> str:
        """The absolute path of the real path ``parts`` below the resolver's base."""
        base = self.root if self.confined else ""
        return base + "".join("/" + p for p in parts) if parts else (base or "/")

    def contains(self, real_path: str) -> bool:
        """Whether an already resolved path lies in the workspace."""
        root = self.root
        if real_path == root:
            return True
        prefix = root if root.endswith(os.sep) else root + os.sep
        return real_path.startswith(prefix)

    def display(self, real_path: str) -> str:
        """A resolved path as the model should see it: relative to the root when inside."""
        if real_path == self.root:
            return "."
        if self.contains(real_path):
            return real_path[len(self.root.rstrip(os.sep)) + 1:].replace(os.sep, "/")
        return real_path

    # -- reading -------------------------------------------------------------------------

    def open(self, path: object, flags: int = os.O_RDONLY, mode: int = 0o666, *,
             follow_symlinks: bool = True) -> int:
        """A descriptor of ``path`` opened with ``os.open`` ``flags`` (the caller closes it).

        The final component is opened with ``O_NOFOLLOW`` from the folder the walk reached;
        with ``O_CREAT``, missing parent folders are an error (see :meth:`write_file` and
        :meth:`mkdir`).
        """
        if self._guard is not None:
            if flags & _WRITING:
                # Checked and opened at the one place the walk found: nothing in between.
                with self.locate(path, follow_symlinks=follow_symlinks) as where:
                    self.check(where.parts, WRITE, where.shown)
                    return where.open(flags, mode)
            fd, parts = self.resolver.open(self._text(path), flags, mode, follow=follow_symlinks)
            self._check_opened(fd, parts)
            return fd
        fd, _parts = self.resolver.open(self._text(path), flags, mode, follow=follow_symlinks)
        return fd

    def _check_opened(self, fd: int, parts: list[str]) -> None:
        try:
            self.check(parts, READ)
        except BaseException:
            os.close(fd)
            raise

    def open_regular(self, path: object) -> tuple[int, os.stat_result, str]:
        """(descriptor, stat, shown path) of a regular file opened for reading.

        Opened without blocking, so a FIFO or a device never hangs the call: IsADirectoryError
        for a folder, :class:`NotRegularFile` for anything else that is not a regular file.
        The descriptor keeps O_NONBLOCK, which a regular file ignores; the caller closes it.
        """
        fd, parts = self.resolver.open(self._text(path), READ_FLAGS)
        if self._guard is not None:
            self._check_opened(fd, parts)
        try:
            shown = self.display(self.absolute(parts))
            return fd, check_regular(fd, shown), shown
        except BaseException:
            os.close(fd)
            raise

    def open_file(self, path: object, buffering: int = -1) -> BinaryIO:
        """A regular file opened for reading in binary mode (see :meth:`open_regular`);
        the file object's ``name`` is the path as the workspace shows it."""
        fd, _info, shown = self.open_regular(path)
        return _binary_reader(fd, shown, buffering)

    def read_bytes(self, path: object, limit: int | None = None) -> bytes:
        """The content of a regular file (its first ``limit`` bytes when given)."""
        fd, info, _shown = self.open_regular(path)
        try:
            return read_fd(fd, info.st_size, limit)
        finally:
            os.close(fd)

    def stat(self, path: object, *, follow_symlinks: bool = True) -> os.stat_result:
        """The stat of what ``path`` names (of a final link itself when not following)."""
        with self.locate(path, follow_symlinks=follow_symlinks) as where:
            self.check(where.parts, READ, where.shown)
            return where.stat()

    def exists(self, path: object) -> bool:
        """Whether ``path`` names something in the workspace (False when it leads outside)."""
        try:
            self.stat(path, follow_symlinks=False)
        except (OSError, WorkspaceError):
            return False
        return True

    def is_dir(self, path: object) -> bool:
        """Whether ``path`` leads to a folder in the workspace."""
        try:
            return stat.S_ISDIR(self.stat(path).st_mode)
        except (OSError, WorkspaceError):
            return False

    def listdir(self, path: object = ".") -> list[str]:
        """The sorted names in folder ``path``."""
        fd, parts = self.resolver.open(self._text(path), os.O_RDONLY | _DIRECTORY)
        if self._guard is not None:
            self._check_opened(fd, parts)
        try:
            names = sorted(os.listdir(fd))
        finally:
            os.close(fd)
        guard = self._guard
        if guard is not None and guard.reads_guarded:
            names = [n for n in names if not guard.hides([*parts, n])]
        hidden = self.resolver.hidden
        if hidden and len(hidden) == len(parts) + 1 and hidden[:-1] == parts:
            names = [n for n in names if n != hidden[-1]]
        return names

    def walk(self, path: object = ".", *, max_depth: int | None = None,
             enter: Enter | None = None, on_error: Errors | None = None,
             state: Any = None, lister: Lister | None = None,
             lookahead: Lookahead | None = None) -> Iterator[WalkEntry]:
        """Every entry below folder ``path``: sorted, depth first, each folder's entries right
        after it; links are reported, never followed (see ``janito_core._fswalk.walk``).

        Entries carry ``relative`` (the path the model sees), ``kind`` and ``dir_fd``, the
        open folder holding them (``entry.open_regular()`` reads a file of the walk). With
        ``on_error``, a start that cannot be walked is reported there too, not raised.
        """
        return entries_of(self.walk_runs(path, max_depth=max_depth, enter=enter,
                                         on_error=on_error, state=state, lister=lister,
                                         lookahead=lookahead))

    def walk_runs(self, path: object = ".", *, max_depth: int | None = None,
                  enter: Enter | None = None, on_error: Errors | None = None,
                  state: Any = None, lister: Lister | None = None,
                  lookahead: Lookahead | None = None) -> Iterator[Run]:
        """The walk of :meth:`walk`, a folder's consecutive entries at a time (a
        ``janito_core._fswalk.Run``: names and kinds, up to and including a subfolder),
        for callers that handle many entries alike. ``lister`` lists a folder in place of
        ``janito_core._fswalk.list_folder``, with the same answers; ``lookahead`` opens and
        lists the next subfolders meanwhile (``janito_core._fswalk.Lookahead``).
        janito-files passes its compiled ones."""
        try:
            with self.locate(path) as where:
                self.check(where.parts, READ, where.shown)
                fd = where.open(os.O_RDONLY | _DIRECTORY)
                shown = where.shown
                parts = where.parts
        except (OSError, WorkspaceError) as exc:
            # The start changed since the caller looked at it (or never was a folder).
            if on_error is None:
                raise
            problem = exc if isinstance(exc, OSError) else OSError(errno.EPERM, exc.reason)
            on_error(path_text(path), problem)
            return
        resolver = self.resolver
        skip: frozenset[tuple[int, int]] = frozenset()
        if self._guard is not None and self._guard.reads_guarded:
            enter = _without_hidden(self._guard, parts, enter)
        if resolver.hidden is not None:
            enter = _without_state(resolver.hidden, parts, enter)
            if resolver.hidden_ident is not None:
                skip = frozenset((resolver.hidden_ident,))
        try:
            yield from walk_runs(fd, shown, max_depth=max_depth, enter=enter,
                                 on_error=on_error, state=state, skip=skip,
                                 lister=lister or list_folder, lookahead=lookahead)
        finally:
            os.close(fd)

    # -- changing ------------------------------------------------------------------------

    def write_file(self, path: object, data: bytes | Iterable[bytes], *, overwrite: bool = False,
                   make_parents: bool = True) -> bool:
        """Write a file atomically (a reader or a crash sees the old file or the new one);
        whether an existing file was replaced. See :meth:`Location.write`."""
        with self.locate(path, make_parents=make_parents) as where:
            return where.write(data, overwrite=overwrite)

    def mkdir(self, path: object, *, parents: bool = True, exist_ok: bool = True) -> bool:
        """Make folder ``path`` (and its missing parents); whether it was made."""
        with self.locate(path, make_parents=parents) as where:
            return where.mkdir(exist_ok=exist_ok)

    def remove(self, path: object) -> os.stat_result:
        """Remove a file or a link (the link itself, never what it points to); its stat."""
        with self.locate(path, follow_symlinks=False) as where:
            return where.remove()

    def rmdir(self, path: object, *, recursive: bool = False) -> tuple[int, int]:
        """Remove folder ``path``; with ``recursive`` everything in it too. See
        :meth:`Location.rmdir`."""
        with self.locate(path, follow_symlinks=False) as where:
            return where.rmdir(recursive=recursive)

    def rename(self, source: object, target: object, *, overwrite: bool = False) -> None:
        """Rename entry ``source`` to ``target`` (links are moved as links, never followed).
        See :meth:`Location.rename_to`."""
        with self.locate(source, follow_symlinks=False) as src, \
                self.locate(target, follow_symlinks=False) as dst:
            src.rename_to(dst, overwrite=overwrite)

    # -- identity ------------------------------------------------------------------------

    def __repr__(self) -> str:
        kind = "" if self.confined else ", confined=False"
        return f"Workspace({self.root!r}{kind})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Workspace)
            and other.root == self.root
            and other.confined == self.confined
        )

    def __hash__(self) -> int:
        return hash((self.root, self.confined))


class Location:
    """A place in the workspace: an open folder (``dir_fd``) and a ``name`` in it.

    Made by :meth:`Workspace.locate`; everything done through it is relative to the folder's
    descriptor, so it acts on what the walk found even if the path's folders are swapped
    for links meanwhile. The target need not exist. Close it (or use ``with``).
    ``parts`` are the names from the root to the target; the root itself has none.
    ``temporary``: the entry is one janito made just now, to rename over another (a link,
    a folder put back): a journal records only what the rename replaces, not the entry
    itself, whose name alone (hidden, ``.tmp``) could be anyone's.
    """

    __slots__ = ("dir_fd", "name", "parts", "temporary", "workspace")

    def __init__(self, workspace: Workspace, dir_fd: int, name: str, parts: list[str]) -> None:
        self.workspace = workspace
        self.temporary = False
        self.dir_fd = dir_fd
        self.name = name
        self.parts = parts

    @property
    def is_root(self) -> bool:
        return not self.parts

    @property
    def absolute(self) -> str:
        """The target's absolute real path (to show, or to give another program)."""
        return self.workspace.absolute(self.parts)

    @property
    def shown(self) -> str:
        """The target's path as the model sees it: from the root, "/"-separated."""
        return self.workspace.display(self.absolute)

    def close(self) -> None:
        fd, self.dir_fd = self.dir_fd, -1
        if fd >= 0:
            close_quietly(fd)

    def __enter__(self) -> Location:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Location({self.shown!r}, dir_fd={self.dir_fd})"

    def _refuse_root(self, what: str) -> None:
        if not self.parts:
            raise WorkspaceError(".", f"the workspace root itself cannot be {what}", INVALID)
        if self.workspace.resolver.holds_state(self.parts):
            raise WorkspaceError(self.shown, f"the folder holds janito's own configuration "
                                 f"folder, so it cannot be {what}", OUTSIDE)

    def _change(self, op: str, recorded: bool = True) -> Change | _Unrecorded:
        """What journals change ``op`` of the target (``with`` it around the change)."""
        recording = self.workspace._journal
        if recording is None or not recorded:
            return _UNRECORDED
        return recording.change(op, self)

    # -- looking ------------------------------------------------------------------------

    def stat(self) -> os.stat_result:
        """The target's stat, of a link itself (FileNotFoundError when it does not exist).

        What the call's policy hides from reads is refused (``denied_by_policy``) whether
        it exists or not, as its content is: its kind, size and times, even that it is
        there, are a read of it (a listing given a denied file as its start named it).
        """
        self.workspace.check(self.parts, READ, None)
        return self._stat()

    def _stat(self) -> os.stat_result:
        if not self.parts:
            return os.stat(".", dir_fd=self.dir_fd)
        return os.stat(self.name, dir_fd=self.dir_fd, follow_symlinks=False)

    def lookup(self) -> os.stat_result | None:
        """The target's stat, or None when nothing is there. Not checked against the
        policy: it is what a write looks at before it writes, and the write is checked."""
        try:
            return self._stat()
        except FileNotFoundError:
            return None

    def open(self, flags: int = os.O_RDONLY, mode: int = 0o666) -> int:
        """A descriptor of the target (``O_NOFOLLOW``: OSError(ELOOP) if it is a link)."""
        cloexec = getattr(os, "O_CLOEXEC", 0)
        self.workspace.check(self.parts, WRITE if flags & _WRITING else READ, None)
        if not self.parts:
            return os.open(".", flags | cloexec, mode, dir_fd=self.dir_fd)
        return os.open(self.name, flags | getattr(os, "O_NOFOLLOW", 0) | cloexec, mode,
                       dir_fd=self.dir_fd)

    def open_regular(self) -> tuple[int, os.stat_result]:
        """(descriptor, stat) of the target as a regular file opened for reading, without
        blocking on a FIFO or a device (see :meth:`Workspace.open_regular`)."""
        if not self.parts:
            raise IsADirectoryError(errno.EISDIR, "the path is a folder", ".")
        self.workspace.check(self.parts, READ, self.shown)
        return open_regular_at(self.dir_fd, self.name, self.shown)

    # -- changing -----------------------------------------------------------------------

    def write(self, data: bytes | Iterable[bytes], *, overwrite: bool = False,
              expect: os.stat_result | None = None, like: os.stat_result | None = None,
              mode: int | None = None) -> bool:
        """Write the target atomically; whether an existing file was replaced.

        FileExistsError (``TargetExists``) when it exists and ``overwrite`` is false;
        IsADirectoryError for a folder. ``expect``: the stat of the file as the caller read
        it: when it changed since (another process wrote it), OSError(ESTALE)
        (``ChangedMeanwhile``) is raised and nothing is written. ``like``: a stat whose mode
        the new file takes (a copy keeps its source's), instead of the replaced file's.
        ``mode``: the new file's mode, whatever the file it replaces (even a read-only one).
        """
        if not self.parts:
            raise IsADirectoryError(errno.EISDIR, "the path is the workspace folder", ".")
        self.workspace.check(self.parts, WRITE, self.shown)
        if self.workspace._journal is None:
            return write_at(self.dir_fd, self.name, data, overwrite=overwrite, expect=expect,
                            like=like, mode=mode, durable=self.workspace._durable)
        with self._change("write") as change:
            return write_at(self.dir_fd, self.name, data, overwrite=overwrite,
                            expect=expect, like=like, mode=mode, ahead=change.ahead,
                            durable=self.workspace._durable, sink=change.written)

    def mkdir(self, *, exist_ok: bool = True, mode: int | None = None) -> bool:
        """Make the target a folder; whether it was made (False when it already was one).

        FileExistsError when something else is there, or ``exist_ok`` is false. ``mode``:
        the new folder's permission bits, whatever the umask (a folder already there keeps
        its own).
        """
        if not self.parts:
            if exist_ok:
                return False
            raise FileExistsError(errno.EEXIST, "the workspace folder exists", ".")
        self.workspace.check(self.parts, WRITE, self.shown)
        recorded = self.workspace._journal is not None and self.lookup() is None
        with self._change("mkdir", recorded) as change:
            change.ahead()
            try:
                os.mkdir(self.name, dir_fd=self.dir_fd)
            except FileExistsError:
                change.failed()
                info = os.stat(self.name, dir_fd=self.dir_fd, follow_symlinks=False)
                if not exist_ok or not stat.S_ISDIR(info.st_mode):
                    raise
                return False
            if mode is not None:
                os.chmod(self.name, mode, dir_fd=self.dir_fd)
        return True

    def remove(self) -> os.stat_result:
        """Remove the target, a file or a link (never what a link points to); its stat.

        IsADirectoryError for a folder (see :meth:`rmdir`).
        """
        self._refuse_root("removed")
        self.workspace.check(self.parts, WRITE, self.shown)
        info = self._stat()
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "the path is a folder", self.shown)
        with self._change("remove") as change:
            change.ahead()
            os.unlink(self.name, dir_fd=self.dir_fd)
        self._flush(self.dir_fd)
        return info

    def rmdir(self, *, recursive: bool = False) -> tuple[int, int]:
        """Remove the target folder; with ``recursive`` everything in it too, links removed
        and never followed. (files and links removed, folders removed below it).

        The root is refused (``invalid_path``); NotADirectoryError for a file or a link.
        """
        self._refuse_root("removed")
        info = self._stat()
        if not stat.S_ISDIR(info.st_mode):
            raise NotADirectoryError(errno.ENOTDIR, "the path is not a folder", self.shown)
        self.workspace._check_tree(self)
        recording = self.workspace._journal
        if recording is not None and recursive:
            counts = recording.remove_tree(self, info)
        elif recursive:
            counts = remove_tree(self.dir_fd, self.name, self.shown)
        else:
            with self._change("rmdir") as change:
                change.ahead()
                os.rmdir(self.name, dir_fd=self.dir_fd)
            counts = (0, 0)
        self._flush(self.dir_fd)
        return counts

    def rename_to(self, target: Location, *, overwrite: bool = False) -> None:
        """Rename the target to ``target`` (a link moves as a link).

        Without ``overwrite`` an existing target is never replaced (FileExistsError), and a
        folder never is; OSError(EXDEV) across filesystems.
        """
        self._refuse_root("moved")
        target._refuse_root("replaced")
        info = self._stat()
        if stat.S_ISDIR(info.st_mode):
            self.workspace._check_tree(self)
        else:
            self.workspace.check(self.parts, WRITE, self.shown)
        self.workspace.check(target.parts, WRITE, target.shown)
        replace = overwrite and not stat.S_ISDIR(info.st_mode)
        if replace:
            existing = target.lookup()
            if existing is not None and stat.S_ISDIR(existing.st_mode):
                raise IsADirectoryError(errno.EISDIR, "the target is a folder", target.shown)
        with self._change("rename") as change:
            change.ahead(target)
            if replace:
                os.replace(self.name, target.name, src_dir_fd=self.dir_fd,
                           dst_dir_fd=target.dir_fd)
            else:
                rename_noreplace(self.dir_fd, self.name, target.dir_fd, target.name)
        self._flush(target.dir_fd)
        self._flush(self.dir_fd)

    def chmod(self, mode: int) -> None:
        """Set the target's permission bits (a link has none of its own: OSError(ELOOP))."""
        self.workspace.check(self.parts, WRITE, self.shown)
        if self.parts and stat.S_ISLNK(self._stat().st_mode):
            raise OSError(errno.ELOOP, "a link has no permissions of its own", self.shown)
        with self._change("chmod") as change:
            change.ahead()
            if not self.parts:
                os.chmod(".", mode, dir_fd=self.dir_fd)
                return
            try:  # never through a link the entry was swapped for since
                os.chmod(self.name, mode, dir_fd=self.dir_fd, follow_symlinks=False)
            except (NotImplementedError, ValueError):
                raise OSError(errno.ELOOP, "a link has no permissions of its own",
                              self.shown) from None

    def symlink(self, target: str) -> None:
        """Make the target a symbolic link holding ``target``, replacing a file or a link
        there (IsADirectoryError for a folder). What the link holds is not checked: the
        workspace follows a link only while it stays inside."""
        from ._atomic import temp_name

        self._refuse_root("replaced")
        self.workspace.check(self.parts, WRITE, self.shown)
        temp = temp_name(self.name)
        os.symlink(target, temp, dir_fd=self.dir_fd)
        holder = Location(self.workspace, os.dup(self.dir_fd), temp, [*self.parts[:-1], temp])
        holder.temporary = True
        with holder:
            try:
                holder.rename_to(self, overwrite=True)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=self.dir_fd)
                raise

    def sync(self) -> None:
        """Flush the folder holding the target to disk (after a change of its entries)."""
        sync_folder(self.dir_fd)

    def _flush(self, dir_fd: int) -> None:
        if self.workspace._durable:
            sync_folder(dir_fd)


class _Unrecorded:
    """What a change of a workspace without a journal uses in place of a journal's
    ``Change``: the same calls, doing nothing."""

    __slots__ = ()

    def ahead(self, target: Location | None = None) -> None:
        pass

    def failed(self) -> None:
        pass

    def written(self, chunk: bytes) -> None:
        pass

    def __enter__(self) -> _Unrecorded:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


_UNRECORDED = _Unrecorded()


class Guard(Protocol):
    """What :meth:`Workspace.guarded` takes: janito_core.policy.PathGuard is one."""

    def problem(self, parts: Sequence[str], access: str) -> str | None: ...

    def hides(self, parts: Sequence[str]) -> bool: ...

    def inside_guarded(self, parts: Sequence[str]) -> bool: ...

    @property
    def reads_guarded(self) -> bool: ...


class _Below:
    """A guard seen from a folder of the workspace (the root of an inner workspace)."""

    __slots__ = ("guard", "prefix")

    def __init__(self, guard: Guard, prefix: list[str]) -> None:
        self.guard = guard
        self.prefix = list(prefix)

    def problem(self, parts: Sequence[str], access: str) -> str | None:
        return self.guard.problem([*self.prefix, *parts], access)

    def hides(self, parts: Sequence[str]) -> bool:
        return self.guard.hides([*self.prefix, *parts])

    def inside_guarded(self, parts: Sequence[str]) -> bool:
        return self.guard.inside_guarded([*self.prefix, *parts])

    @property
    def reads_guarded(self) -> bool:
        return self.guard.reads_guarded


def _without_hidden(guard: Guard, start: list[str], enter: Enter | None) -> Enter:
    """``enter`` that also drops what the call's guard says it may not read."""
    def keep(folder: Folder) -> None:
        below = folder.relative.split("/")[-folder.depth:] if folder.depth else []
        here = [*start, *below]
        shown = [not guard.hides([*here, name]) for name in folder.names]
        if not all(shown):
            folder.keep([name for name, show in zip(folder.names, shown, strict=True) if show],
                        [kind for kind, show in zip(folder.kinds, shown, strict=True) if show])
        if enter is not None:
            enter(folder)
    return keep


def _without_state(hidden: list[str], start: list[str], enter: Enter | None) -> Enter:
    """``enter`` that also drops janito's state folder from the walk's listings."""
    def keep(folder: Folder) -> None:
        below = folder.relative.split("/")[-folder.depth:] if folder.depth else []
        here = [*start, *below]
        if len(hidden) == len(here) + 1 and hidden[:-1] == here and hidden[-1] in folder.names:
            at = folder.names.index(hidden[-1])
            folder.keep(folder.names[:at] + folder.names[at + 1:],
                        folder.kinds[:at] + folder.kinds[at + 1:])
        if enter is not None:
            enter(folder)
    return keep


def rename_noreplace(src_dir_fd: int, src: str, dst_dir_fd: int, dst: str) -> None:
    """Rename ``src`` of one folder to ``dst`` of another (both open descriptors) only if
    ``dst`` does not exist (FileExistsError), in one atomic call where the system has it."""
    _rename_noreplace(src_dir_fd, src, dst_dir_fd, dst)


def read_fd(fd: int, size_hint: int, limit: int | None = None) -> bytes:
    """Everything left to read from ``fd`` (at most ``limit`` bytes)."""
    chunks = []
    left = limit
    while left is None or left > 0:
        want = max(size_hint + 1, 1 << 16) if left is None else min(left, 1 << 20)
        chunk = os.read(fd, want)
        if not chunk:
            break
        chunks.append(chunk)
        if left is not None:
            left -= len(chunk)
    return b"".join(chunks)


def _binary_reader(fd: int, name: str, buffering: int) -> BinaryIO:
    try:
        raw = io.FileIO(fd, "rb", closefd=True)
    except BaseException:
        os.close(fd)
        raise
    raw.name = name
    if buffering == 0:
        return raw
    return io.BufferedReader(raw, buffering if buffering > 0 else io.DEFAULT_BUFFER_SIZE)
