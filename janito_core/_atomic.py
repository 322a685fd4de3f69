"""Atomic replacement of a file in a folder held open: a reader, or a crash, sees the old
file or the new one, never a part.

The new content goes to a hidden temporary file in the same folder (``.NAME.XXXXXXXX.tmp``,
so the final rename stays on one filesystem), is flushed with ``fsync``, takes the mode,
the extended attributes (and, where allowed, the owner) of the file it replaces, and is
renamed over the target in one step; the folder is synced afterwards so the rename itself
survives a power cut. Every call is relative to the folder's descriptor: the target's name
is never a path to walk.

A rename replaces a file whatever the file's own mode says, so a file marked read-only
(no write bit for the caller) is refused here, as an ``open()`` for writing would refuse it,
unless the caller sets the new file's mode itself (janito's own private files, which it
always writes 0600).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterable

from ._renameat import rename_noreplace

TEMP_SUFFIX = ".tmp"
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOCTTY = getattr(os, "O_NOCTTY", 0)
_PATH = getattr(os, "O_PATH", 0)


class TargetExists(FileExistsError):
    """The target exists and overwriting was not asked for."""


def temp_name(name: str) -> str:
    """A fresh hidden name next to ``name`` (recognisable, unpredictable, within NAME_MAX)."""
    stem = os.fsencode(name)[:200].decode("utf-8", "ignore") or "file"
    return f".{stem}.{os.urandom(4).hex()}{TEMP_SUFFIX}"


def create_temp(dir_fd: int, name: str, mode: int = 0o666) -> tuple[int, str]:
    """(descriptor, name) of a new temporary file beside ``name`` in folder ``dir_fd``."""
    for _ in range(100):
        temp = temp_name(name)
        try:
            # O_EXCL | O_NOFOLLOW: never reuse or follow something already at that name.
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC,
                         mode, dir_fd=dir_fd)
        except FileExistsError:
            continue
        return fd, temp
    raise FileExistsError(errno.EEXIST, "no free temporary name", name)


def sync_file_system(fd: int) -> None:
    """Flush everything written to the file system holding ``fd`` (``syncfs(2)``; where it
    is missing, every file system)."""
    try:
        import ctypes

        if ctypes.CDLL(None, use_errno=True).syncfs(fd) == 0:
            return
    except (OSError, AttributeError):  # no syncfs in this C library
        pass
    os.sync()


def sync_folder(dir_fd: int) -> None:
    """Flush a folder's entries to disk (best effort where a folder cannot be synced)."""
    try:
        fd = os.open(".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view[:1 << 24])
        view = view[written:]


class ReadOnly(PermissionError):
    """The file to replace is marked read-only by its mode."""


def read_only(info: os.stat_result) -> bool:
    """Whether the mode of file ``info`` forbids this process to write it.

    Decided by the bits, never by access(): root passes every access check, yet a file its
    owner made read-only (``chmod a-w``) is not janito's to replace. So for root, a file no
    one may write; for anyone else, the write bit of their class (owner, group or others,
    the first that applies, as the kernel decides).
    """
    mode = info.st_mode
    if not hasattr(os, "geteuid"):
        return not mode & stat.S_IWUSR
    uid = os.geteuid()
    if uid == 0:
        return not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
    if uid == info.st_uid:
        return not mode & stat.S_IWUSR
    if info.st_gid == os.getegid() or info.st_gid in os.getgroups():
        return not mode & stat.S_IWGRP
    return not mode & stat.S_IWOTH


def copy_owner_and_mode(fd: int, like: os.stat_result) -> None:
    """Give a new file the owner (where allowed) and then the mode of ``like``: in this
    order, since a change of owner clears the set-user-ID and set-group-ID bits."""
    if hasattr(os, "fchown"):
        with contextlib.suppress(OSError):
            if (like.st_uid, like.st_gid) != os.fstat(fd)[4:6]:
                os.fchown(fd, like.st_uid, like.st_gid)
    os.fchmod(fd, stat.S_IMODE(like.st_mode))


def copy_xattrs(dir_fd: int, name: str, existing: os.stat_result, fd: int) -> None:
    """Give the new file ``fd`` the extended attributes of ``name``, the file it replaces
    (``existing`` is its stat), where this system has them.

    Each attribute is copied on its own: user.* ones wherever the filesystem keeps them,
    security.* and trusted.* ones where this process may set them (root, or a security
    module allowing it), so one refused attribute does not stop the others. ACLs
    (system.posix_acl_*) come after the mode, which they agree with.
    """
    if not hasattr(os, "listxattr"):
        return
    # Opened by name in the folder held open: never following a link, never blocking on a
    # FIFO put there meanwhile, and used only while it is still the file stat'ed.
    try:
        source = os.open(name, os.O_RDONLY | _NONBLOCK | _NOCTTY | _NOFOLLOW | _CLOEXEC,
                         dir_fd=dir_fd)
        where: int | str = source
    except PermissionError:
        # A file its owner may not read (mode 0200) is reached by an O_PATH descriptor,
        # whose attributes Linux gives through /proc/self/fd.
        try:
            source = os.open(name, _PATH | _NOFOLLOW | _CLOEXEC, dir_fd=dir_fd)
        except OSError:
            return
        where = f"/proc/self/fd/{source}"
    except OSError:
        return
    try:
        info = os.fstat(source)
        if (info.st_dev, info.st_ino) != (existing.st_dev, existing.st_ino):
            return
        xattrs_between(where, fd)
    except OSError:
        return
    finally:
        os.close(source)


def copy_xattrs_of(source: int, dir_fd: int, name: str) -> None:
    """Give file ``name`` of folder ``dir_fd``, a copy just made, the extended attributes
    of the file open as ``source``, each on its own and where this process may set it."""
    if not hasattr(os, "listxattr"):
        return
    try:
        target = os.open(name, os.O_RDONLY | _NONBLOCK | _NOCTTY | _NOFOLLOW | _CLOEXEC,
                         dir_fd=dir_fd)
    except OSError:
        return
    try:
        xattrs_between(source, target)
    finally:
        os.close(target)


def xattrs_between(source: int | str, target: int) -> None:
    """Copy each extended attribute of ``source`` (a descriptor, or a path that is one in
    /proc/self/fd) to the file open as ``target``; one refused (security.*, trusted.* for
    anyone but root, user.* where the filesystem keeps none) does not stop the others."""
    if not hasattr(os, "listxattr"):
        return
    try:
        names = os.listxattr(source)
    except OSError:
        return
    for attribute in names:
        with contextlib.suppress(OSError):
            os.setxattr(target, attribute, os.getxattr(source, attribute))


def publish(dir_fd: int, temp: str, name: str, overwrite: bool) -> None:
    """Put ``temp`` at ``name`` in one step; without ``overwrite`` never replace anything."""
    if overwrite:
        os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        return
    try:
        # link() fails atomically when the target exists, unlike a check before rename().
        os.link(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    except FileExistsError:
        raise TargetExists(errno.EEXIST, "the file exists", name) from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK,
                             errno.EXDEV, errno.ENOSYS):
            raise
        try:
            rename_noreplace(dir_fd, temp, dir_fd, name)
        except FileExistsError:
            raise TargetExists(errno.EEXIST, "the file exists", name) from None
        return
    os.unlink(temp, dir_fd=dir_fd)


def write_at(dir_fd: int, name: str, chunks: bytes | Iterable[bytes], *, overwrite: bool,
             expect: os.stat_result | None = None, like: os.stat_result | None = None,
             mode: int | None = None, ahead: Callable[[], None] | None = None,
             durable: bool = True, sink: Callable[[bytes], None] | None = None) -> bool:
    """Write ``chunks`` as file ``name`` of folder ``dir_fd`` atomically; whether a file was
    replaced.

    Raises TargetExists when ``name`` exists and ``overwrite`` is false, IsADirectoryError
    when it is a folder, ReadOnly (a PermissionError) when its mode marks it read-only for
    this process (see :func:`read_only`; not when ``mode`` is given), and the OSError of
    the writing; in every failure
    the target is left as it was and the temporary file is removed. ``expect``: the state
    the caller read the file in; ChangedMeanwhile is raised, and nothing written, when it
    changed since. ``like``: the stat whose mode (and owner, where allowed) the new file
    takes, instead of the replaced file's (a copy keeps its source's). ``mode``: the new
    file's mode whatever the umask and the replaced file, set before any byte is written.
    The replaced file's extended attributes are kept, except by a copy (``like``), which
    is the source's to give (see :func:`copy_xattrs_of`). ``ahead`` is called right before
    the new file is put in place, after every check: a journal records the change there.
    ``durable``: the file and its folder are flushed to disk before this returns; without
    it the caller flushes many changes at once afterwards (``syncfs``). ``sink`` sees
    every chunk written (a journal hashes the new content so, without reading it back).
    """
    try:
        existing: os.stat_result | None = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        existing = None
    if existing is not None:
        if stat.S_ISDIR(existing.st_mode):
            raise IsADirectoryError(errno.EISDIR, "the path is a folder", name)
        if not overwrite:
            raise TargetExists(errno.EEXIST, "the file exists", name)
        if stat.S_ISLNK(existing.st_mode):
            existing = None  # the link itself is replaced; a link has no mode to keep
        elif mode is None and read_only(existing):
            raise ReadOnly(errno.EACCES, f"the file is marked read-only (mode "
                           f"{stat.S_IMODE(existing.st_mode):04o}) and is left as it is", name)
    if expect is not None:
        check_unchanged(dir_fd, name, expect)
    # the umask applies to new files, as with open()
    fd, temp = create_temp(dir_fd, name, 0o666 if mode is None else mode)
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            pieces: Iterable[bytes] = (
                (bytes(chunks),) if isinstance(chunks, (bytearray, memoryview))
                else (chunks,) if isinstance(chunks, bytes) else chunks)
            for chunk in pieces:
                write_all(fd, chunk)
                if sink is not None:
                    sink(chunk)
            kept = like or existing
            if mode is None and kept is not None:
                copy_owner_and_mode(fd, kept)
            if existing is not None and like is None:
                copy_xattrs(dir_fd, name, existing, fd)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        if expect is not None:
            check_unchanged(dir_fd, name, expect)
        if ahead is not None:
            ahead()
        publish(dir_fd, temp, name, overwrite)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=dir_fd)
        raise
    if durable:
        sync_folder(dir_fd)
    return existing is not None


class ChangedMeanwhile(OSError):
    """The file changed (by another process) between the read and the write."""


def same_version(a: os.stat_result, b: os.stat_result) -> bool:
    """Whether two stats show one file in one state (inode, size, modification times)."""
    return (a.st_dev, a.st_ino, a.st_size, a.st_mtime_ns, a.st_ctime_ns) == \
        (b.st_dev, b.st_ino, b.st_size, b.st_mtime_ns, b.st_ctime_ns)


def check_unchanged(dir_fd: int, name: str, expect: os.stat_result) -> None:
    try:
        now = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        raise ChangedMeanwhile(errno.ESTALE, "the file was removed meanwhile", name) from None
    if not same_version(now, expect):
        raise ChangedMeanwhile(errno.ESTALE, "the file was changed meanwhile", name)
