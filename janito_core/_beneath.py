"""Resolving a path beneath a directory descriptor, never following a link out.

This is the engine of :class:`janito_core.Workspace`. A path a model sent is never checked
as a string and then used: it is walked one component at a time from a descriptor of the
base folder, each component opened with ``O_NOFOLLOW`` relative to the descriptor of the
one before. A symbolic link is read (``readlinkat``) and its target walked the same way,
so a link may lead anywhere inside the base but never out of it; ``..`` pops the stack of
folders already opened, so it can never climb above the base either. What the walk hands
back is a descriptor of the folder that holds the target, and the target's name in it:
every later operation (open, rename, unlink, mkdir) is relative to that descriptor, so a
folder swapped for a link after the walk changes nothing.

Where the kernel offers ``openat2`` (Linux 5.6+), opening an existing file first tries it
with ``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS``: the kernel does the
whole walk in one call and refuses any link or escape; anything it refuses falls back to
the walk above, which is the authority on what a path means.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from typing import Any

from .errors import WorkspaceError

OUTSIDE = "outside_workspace"
INVALID = "invalid_path"
LOOP = "symlink_loop"

MAX_LINKS = 40
"""Symbolic links one resolution may follow, as the kernel allows (then ``symlink_loop``)."""

MAX_RETRIES = 8
"""Times one walk looks again at a component that changed kind while it looked at it."""

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
# O_PATH opens a folder for *at() calls even when it may only be traversed, not listed.
_SEARCH = getattr(os, "O_PATH", os.O_RDONLY)
DIR_FLAGS = _SEARCH | _DIRECTORY | _NOFOLLOW | _CLOEXEC
"""How every folder on the way is opened: a handle to walk through, never a link."""

SUPPORTED = {os.open, os.stat, os.readlink, os.mkdir, os.rename, os.unlink,
             os.rmdir}.issubset(os.supports_dir_fd) and bool(_NOFOLLOW and _DIRECTORY)
"""Whether this platform has the ``*at()`` calls the descriptor walk needs."""


def close_quietly(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


Found = tuple[int, str, list[str]]
#: Told of a folder ``locate`` is about to make: (folder fd, name, parts) -> told if it was.
MakeHook = Callable[[int, str, list[str]], Callable[[bool], None]]
"""What a walk hands back: (descriptor of the folder holding the target, the target's name
in it, the names from the base to the target). The caller owns the descriptor. The base
itself is ``(descriptor of the base, ".", [])``."""


class NotRegularFile(OSError):
    """The path is a FIFO, a socket or a device, which a read could block on forever."""


READ_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
              | _CLOEXEC)
"""How a file is opened for reading: never blocking on a FIFO or a device, and never making
a terminal device the controlling terminal of a process that has none."""


def check_regular(fd: int, shown: str) -> os.stat_result:
    """The stat of ``fd`` when it is a regular file; else IsADirectoryError or
    NotRegularFile (the caller still owns and closes ``fd``).

    ``fd`` keeps the O_NONBLOCK it was opened with: reads of a regular file ignore it,
    and clearing it would cost two more system calls per file opened.
    """
    info = os.fstat(fd)
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, "the path is a folder", shown)
    if not stat.S_ISREG(info.st_mode):
        raise NotRegularFile(errno.EINVAL, "the path is not a regular file (a FIFO, socket "
                             "or device)", shown)
    return info


def open_regular_at(dir_fd: int, name: str, shown: str | None = None) -> tuple[int, os.stat_result]:
    """(descriptor, stat) of regular file ``name`` of folder ``dir_fd``, opened for reading
    without ever blocking on a FIFO or a device and without following a link (ELOOP)."""
    fd = os.open(name, READ_FLAGS | _NOFOLLOW, dir_fd=dir_fd)
    try:
        return fd, check_regular(fd, name if shown is None else shown)
    except BaseException:
        os.close(fd)
        raise


def path_text(path: object) -> str:
    """``path`` as a string, or WorkspaceError(invalid_path) when it is no path at all."""
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str):
        raise WorkspaceError(path, "a path must be a string", INVALID)
    if not path:
        raise WorkspaceError(path, "a path must not be empty", INVALID)
    if "\x00" in path:
        raise WorkspaceError(path, "a path must not contain a NUL character", INVALID)
    try:
        os.fsencode(path)
    except UnicodeError:
        raise WorkspaceError(path, "the path holds characters that cannot be in a file name",
                             INVALID) from None
    return path


class Resolver:
    """Walks paths beneath one base folder, given as an open descriptor and its real path.

    ``prefixes`` are absolute spellings of the base (its real path, and the path it was
    given as): an absolute path or link target starting with one of them is taken relative
    to the base, any other absolute path is outside.
    """

    __slots__ = ("base_fd", "hidden", "hidden_ident", "prefixes")

    def __init__(self, base_fd: int, prefixes: tuple[str, ...], *,
                 hidden: tuple[str, ...] | None = None,
                 hidden_ident: tuple[int, int] | None = None) -> None:
        self.base_fd = base_fd
        self.prefixes = prefixes
        # janito's own state folder, when it lies below the base: the names that lead to
        # it (() when the base itself lies in it) and its (device, inode). No walk enters
        # it, makes it or hands it back, however the path is spelled.
        self.hidden = None if hidden is None else list(hidden)
        self.hidden_ident = hidden_ident

    def _refuse_state(self, path: object) -> None:
        raise WorkspaceError(path, "the path is inside janito's own configuration folder, which "
                             "no tool may read or change", OUTSIDE)

    def _is_state(self, names: list[str], fd: int | None = None, *,
                  dir_fd: int | None = None, name: str | None = None) -> bool:
        """Whether the folder at ``names`` (open as ``fd``, or ``name`` of ``dir_fd``) is the
        state folder: by its names, else by identity (another spelling of the same folder)."""
        if names == self.hidden:
            return True
        if self.hidden_ident is None:
            return False
        try:
            info = os.fstat(fd) if fd is not None else os.stat(name or ".", dir_fd=dir_fd,
                                                                 follow_symlinks=False)
        except OSError:
            return False
        return (info.st_dev, info.st_ino) == self.hidden_ident

    def holds_state(self, parts: list[str]) -> bool:
        """Whether the entry at real path ``parts`` is a folder holding the state folder
        (removing or renaming it would take janito's state with it)."""
        hidden = self.hidden
        return hidden is not None and len(parts) < len(hidden) and hidden[:len(parts)] == parts

    # -- the walk --------------------------------------------------------------------

    def _below(self, original: object, text: str) -> str:
        """``text`` relative to the base; WorkspaceError when it is absolute elsewhere."""
        if not text.startswith("/"):
            return text
        for prefix in self.prefixes:
            if text == prefix:
                return "."
            if prefix == "/":
                return text.lstrip("/") or "."
            if text.startswith(prefix) and text[len(prefix)] == "/":
                return text[len(prefix) + 1:] or "."
        raise WorkspaceError(original, f"the path is outside the workspace {self.prefixes[0]}",
                             OUTSIDE)

    def locate(self, path: object, *, follow: bool = True, make_parents: bool = False,
               on_make: MakeHook | None = None) -> Found:
        """Walk ``path`` to the folder that holds its target (see :data:`Found`).

        ``follow``: a link as last component is followed (to where it leads, inside the
        base) instead of being the target itself. ``make_parents``: missing folders on
        the way are created (each ``mkdirat`` then opened with ``O_NOFOLLOW``, so a link
        put in its place is walked like any other link). ``on_make(dir_fd, name, parts)``
        is told of each such folder before it is made, and the function it returns is told
        whether it was.

        Raises WorkspaceError (``outside_workspace``, ``invalid_path``, ``symlink_loop``)
        and the OSError of the walk: FileNotFoundError for a missing folder on the way,
        NotADirectoryError for a file used as one, PermissionError.
        """
        text = path_text(path)
        pending = _components(self._below(path, text))
        guarded = self.hidden is not None
        if guarded and not self.hidden:
            self._refuse_state(path)
        trailing = text.endswith("/") or text.endswith("/.")
        chain = _Chain(self.base_fd)   # the folders opened below the base, and their names
        links = retries = 0
        part = ""
        try:
            while pending:
                part = pending.pop()
                last = not pending
                top = chain.top()
                if part == "..":
                    if not chain.names:
                        how = " through a symbolic link" if links else ""
                        raise WorkspaceError(path, f"the path leads{how} outside the workspace "
                                             f"{self.prefixes[0]}", OUTSIDE)
                    chain.pop()
                    continue
                if last and not trailing:
                    try:
                        info = os.stat(part, dir_fd=top, follow_symlinks=False)
                    except FileNotFoundError:
                        info = None
                    if info is None or not follow or not stat.S_ISLNK(info.st_mode):
                        if guarded and self._is_state([*chain.names, part], dir_fd=top,
                                                      name=part):
                            self._refuse_state(path)
                        return self._here(chain, part)
                try:
                    chain.push(os.open(part, DIR_FLAGS, dir_fd=top), part)
                    if guarded and self._is_state(chain.names, chain.fds[-1]):
                        self._refuse_state(path)
                    continue
                except FileNotFoundError:
                    if last:  # "missing/": the target is a folder yet to be made
                        if guarded and [*chain.names, part] == self.hidden:
                            self._refuse_state(path)
                        return self._here(chain, part)
                    if not make_parents:
                        self._refuse_climb(path, chain.names, part, pending)
                        raise
                    if guarded and [*chain.names, part] == self.hidden:
                        self._refuse_state(path)
                    told = on_make(top, part, [*chain.names, part]) if on_make else None
                    try:
                        os.mkdir(part, dir_fd=top)
                    except FileExistsError:
                        # made by someone else meanwhile: walk what is there now
                        if told is not None:
                            told(False)
                    except BaseException:
                        if told is not None:
                            told(False)
                        raise
                    else:
                        if told is not None:
                            told(True)
                    pending.append(part)
                    continue
                except OSError as exc:
                    # O_NOFOLLOW | O_DIRECTORY on a link: ENOTDIR on Linux, ELOOP elsewhere
                    if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                        raise
                    info = os.stat(part, dir_fd=top, follow_symlinks=False)
                    if stat.S_ISDIR(info.st_mode) and retries < MAX_RETRIES:
                        retries += 1  # a link turned back into a folder meanwhile: again
                        pending.append(part)
                        continue
                    if not stat.S_ISLNK(info.st_mode):
                        raise NotADirectoryError(
                            errno.ENOTDIR, "a part of the path is a file, not a folder",
                            "/".join([*chain.names, part])) from None
                    if last and not follow and not trailing:
                        if guarded and [*chain.names, part] == self.hidden:
                            self._refuse_state(path)
                        return self._here(chain, part)
                links += 1
                if links > MAX_LINKS:
                    raise WorkspaceError(path, f"the path goes through more than {MAX_LINKS} "
                                         "symbolic links (a link loop)", LOOP)
                try:
                    target = os.readlink(part, dir_fd=top)
                except OSError as exc:
                    if exc.errno != errno.EINVAL or retries >= MAX_RETRIES:
                        raise
                    retries += 1  # no longer a link: walk the component again
                    links -= 1
                    pending.append(part)
                    continue
                if target.startswith("/"):
                    try:
                        target = self._below(path, target)
                    except WorkspaceError:
                        raise WorkspaceError(path, "a symbolic link in the path points outside "
                                             f"the workspace {self.prefixes[0]}",
                                             OUTSIDE) from None
                    chain.clear()
                pending.extend(_components(target))
            if not chain.names:
                return os.dup(self.base_fd), ".", []
            # The target is a folder the walk opened: hand back its parent and its name.
            names = list(chain.names)
            chain.pop()
            return chain.take_top(), names[-1], names
        except OSError as exc:
            if exc.filename == part:  # name the place from the base, not the bare component
                exc.filename = "/".join([*chain.names, part])
            raise
        finally:
            chain.clear()

    def _refuse_climb(self, path: object, names: list[str], missing: str,
                      pending: list[str]) -> None:
        """WorkspaceError when the rest of a path that stops at a missing folder would climb
        out of the base: that is the better answer than "not found" (nothing below a
        missing folder can be a link, so its ".." are textual)."""
        depth = len(names) + 1
        for part in reversed(pending):
            depth += -1 if part == ".." else 1
            if depth < 0:
                raise WorkspaceError(path, "the path leads outside the workspace "
                                     f"{self.prefixes[0]}", OUTSIDE)

    @staticmethod
    def _here(chain: _Chain, name: str) -> Found:
        parts = [*chain.names, name]
        return chain.take_top(), name, parts

    # -- opening -----------------------------------------------------------------------

    def open(self, path: object, flags: int, mode: int = 0o666, *,
             follow: bool = True) -> tuple[int, list[str]]:
        """(descriptor, real path parts) of ``path`` opened with ``flags``, beneath the base.

        Never follows a link out: the last component is opened with ``O_NOFOLLOW`` from
        the folder the walk reached; when it turns into a link between the walk and the
        open, the walk runs again (a few times, then ``symlink_loop``).
        """
        if follow and not flags & os.O_CREAT and self.hidden is None:
            # With the state folder below the base, every open takes the walk, which
            # checks each folder on the way against it.
            fast = _openat2(self.base_fd, path, flags)
            if fast is not None:
                return fast
        for _ in range(8):
            dir_fd, name, parts = self.locate(path, follow=follow)
            try:
                if not parts:
                    return os.open(".", flags | _CLOEXEC, mode, dir_fd=dir_fd), parts
                try:
                    return os.open(name, flags | _NOFOLLOW | _CLOEXEC, mode, dir_fd=dir_fd), parts
                except OSError as exc:
                    # ELOOP: a link appeared since the walk looked; walk again.
                    if exc.errno != errno.ELOOP or not follow:
                        raise
            finally:
                os.close(dir_fd)
        raise WorkspaceError(path, "the path keeps changing into a symbolic link while it is "
                             "opened", LOOP)


CHAIN_BUDGET = 32
"""Folders one walk holds open at most; deeper paths let go of the shallowest."""


class _Chain:
    """The folders a walk went through below the base: descriptors and names.

    At most :data:`CHAIN_BUDGET` are held open. A folder let go is opened again by name from
    its nearest open ancestor when ``..`` climbs back to it, and must be the same folder
    (device and inode) as before, or the walk stops with ESTALE.
    """

    __slots__ = ("base", "fds", "idents", "names", "open")

    def __init__(self, base: int) -> None:
        self.base = base
        self.fds: list[int] = []
        self.idents: list[tuple[int, int] | None] = []
        self.names: list[str] = []
        self.open = 0

    def top(self) -> int:
        if not self.fds:
            return self.base
        fd = self.fds[-1]
        return fd if fd >= 0 else self._reopen(len(self.fds) - 1)

    def push(self, fd: int, name: str) -> None:
        self.fds.append(fd)
        self.names.append(name)
        self.idents.append(None)
        self.open += 1
        index = 0
        while self.open > CHAIN_BUDGET and index < len(self.fds) - 1:
            if self.fds[index] >= 0:
                self._let_go(index)
            index += 1

    def pop(self) -> None:
        fd = self.fds.pop()
        self.names.pop()
        self.idents.pop()
        if fd >= 0:
            close_quietly(fd)
            self.open -= 1

    def take_top(self) -> int:
        """The top folder's descriptor, handed over to the caller (the base is duplicated)."""
        if not self.fds:
            return os.dup(self.base)
        fd = self.top()
        self.fds.pop()
        self.names.pop()
        self.idents.pop()
        self.open -= 1
        return fd

    def clear(self) -> None:
        while self.fds:
            self.pop()

    def _reopen(self, position: int) -> int:
        nearest = position
        while nearest >= 0 and self.fds[nearest] < 0:
            nearest -= 1
        for index in range(nearest + 1, position + 1):
            parent = self.fds[index - 1] if index else self.base
            fd = os.open(self.names[index], DIR_FLAGS, dir_fd=parent)
            info = os.fstat(fd)
            if (info.st_dev, info.st_ino) != self.idents[index]:
                close_quietly(fd)
                raise OSError(errno.ESTALE, "a folder on the path was replaced meanwhile",
                              "/".join(self.names[:index + 1]))
            self.fds[index] = fd
            self.open += 1
            # Keep only the folders ".." may climb back to soon open, as push() does.
            stale = index - 1
            if stale >= 0 and position - stale >= CHAIN_BUDGET and self.fds[stale] >= 0:
                self._let_go(stale)
        return self.fds[position]

    def _let_go(self, index: int) -> None:
        fd = self.fds[index]
        if self.idents[index] is None:
            info = os.fstat(fd)
            self.idents[index] = (info.st_dev, info.st_ino)
        close_quietly(fd)
        self.fds[index] = -1
        self.open -= 1


def _components(text: str) -> list[str]:
    """The components of a relative path, last first (a stack), without "" and "."."""
    parts = [p for p in text.split("/") if p and p != "."]
    parts.reverse()
    return parts


# -- openat2 -----------------------------------------------------------------------------

_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
_SYS_OPENAT2 = {"x86_64": 437, "aarch64": 437, "arm64": 437, "riscv64": 437,
                "ppc64le": 437, "s390x": 437, "i686": 437, "armv7l": 437}


class _Openat2:
    """The ``openat2`` system call through ctypes, made on first use."""

    __slots__ = ("call", "how_type", "number")

    def __init__(self) -> None:
        import ctypes

        self.number = _SYS_OPENAT2.get(os.uname().machine, 0)
        # The symbols the interpreter is linked with, libc's among them. Not
        # ctypes.util.find_library("c"), which runs ldconfig, or a compiler found on PATH.
        libc = ctypes.CDLL(None, use_errno=True)
        self.call: Any = libc.syscall
        self.call.restype = ctypes.c_long

        class OpenHow(ctypes.Structure):
            _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64),
                        ("resolve", ctypes.c_uint64)]

        self.how_type: Any = OpenHow

    def open(self, dir_fd: int, path: bytes, flags: int) -> int:
        """The descriptor, or -errno."""
        import ctypes

        how = self.how_type(flags | _CLOEXEC, 0,
                            _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS)
        fd = int(self.call(self.number, ctypes.c_int(dir_fd), ctypes.c_char_p(path),
                           ctypes.byref(how), ctypes.c_size_t(ctypes.sizeof(how))))
        return fd if fd >= 0 else -ctypes.get_errno()


class _Probe:
    """Whether ``openat2`` works here: decided by the first call, kept for the process."""

    state: _Openat2 | bool | None = False   # False: not probed yet; None: unavailable


def _openat2(base_fd: int, path: object, flags: int) -> tuple[int, list[str]] | None:
    """The fast path: ``path`` opened by the kernel in one call when no link is on the way.

    None when ``openat2`` is missing or refused the path for any reason; the walk then
    decides (and gives the precise error).
    """
    engine = _Probe.state
    if engine is None:
        return None
    if not isinstance(path, str) or not path or path.startswith("/") or "\x00" in path:
        return None
    if engine is False:
        engine = _Probe.state = _make_openat2()
        if engine is None:
            return None
    assert isinstance(engine, _Openat2)
    try:
        raw = os.fsencode(path)
    except UnicodeError:
        return None
    fd = engine.open(base_fd, raw, flags)
    if fd < 0:
        if -fd in (errno.ENOSYS, errno.EPERM) and _Probe.state is engine:
            _Probe.state = None  # a seccomp filter or an old kernel: never try again
        return None
    parts = [p for p in path.split("/") if p and p != "."]
    if ".." in parts:  # no link on the way, so ".." is the textual parent
        folded: list[str] = []
        for part in parts:
            if part == "..":
                if folded:
                    folded.pop()
            else:
                folded.append(part)
        parts = folded
    return fd, parts


def _make_openat2() -> _Openat2 | None:
    if not hasattr(os, "uname") or os.uname().sysname != "Linux":
        return None
    try:
        engine = _Openat2()
    except (OSError, AttributeError, ImportError):
        return None
    return engine if engine.number else None
