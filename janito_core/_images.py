"""Before-images: what a change replaces or removes, kept in a journal entry's folder.

A regular file is kept by a second hard link to its inode when nothing else shares it (the
workspace then replaces or unlinks its own name, and the inode lives on in the journal
alone), else by a copy. A folder removed whole is moved into the journal in one rename.
Across filesystems both fall back to copies. Restoring always copies out of the journal,
so an image stays intact for as long as its entry is kept.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_FOLDER_FLAGS = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC
# A link is refused with these where the file system or the kernel's protected_hardlinks
# says no: the image is then copied.
_NO_LINK = frozenset({errno.EXDEV, errno.EPERM, errno.EMLINK, errno.EOPNOTSUPP,
                      errno.ENOTSUP, errno.ENOSYS, errno.EACCES})
_CHUNK = 1 << 20


def fingerprint(info: os.stat_result | None) -> list[object] | None:
    """What an entry looks like, to tell later whether anything changed it since."""
    if info is None:
        return None
    mode = info.st_mode
    if stat.S_ISDIR(mode):
        return ["d", info.st_ino]
    kind = "f" if stat.S_ISREG(mode) else "l" if stat.S_ISLNK(mode) else "o"
    return [kind, info.st_ino, info.st_size, info.st_mtime_ns]


def lookup(dir_fd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def keep_file(dir_fd: int, name: str, info: os.stat_result, into_fd: int, image: str) -> bool:
    """Keep regular file ``name`` of ``dir_fd`` as ``image`` of folder ``into_fd``; whether
    it was linked (False: copied)."""
    if info.st_nlink == 1:
        try:
            os.link(name, image, src_dir_fd=dir_fd, dst_dir_fd=into_fd, follow_symlinks=False)
            return True
        except OSError as exc:
            if exc.errno not in _NO_LINK:
                raise
    source = os.open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC, dir_fd=dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(source).st_mode):
            raise OSError(errno.ESTALE, "the file was replaced meanwhile", name)
        _copy_into(source, into_fd, image, 0o600)
    finally:
        os.close(source)
    return False


def _copy_into(source: int, into_fd: int, name: str, mode: int) -> None:
    """Copy the file open as ``source`` to new file ``name`` of ``into_fd`` (removed
    again when the copy fails part way: a full disk)."""
    target = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC,
                     mode, dir_fd=into_fd)
    try:
        while True:
            try:
                sent = os.copy_file_range(source, target, _CHUNK)
            except OSError as exc:
                if exc.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
                    raise
                sent = _copy_by_reads(source, target)
            if not sent:
                break
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=into_fd)
        raise
    finally:
        os.close(target)


def _copy_by_reads(source: int, target: int) -> int:
    block = os.read(source, _CHUNK)
    view = memoryview(block)
    while view:
        view = view[os.write(target, view):]
    return len(block)


#: Files up to this size are hashed for the audit log; larger ones are named by size only.
DIGEST_LIMIT = 1 << 20


def digest(dir_fd: int, name: str, size: int) -> str | None:
    """The SHA-256 of file ``name`` of ``dir_fd`` when it is at most DIGEST_LIMIT bytes."""
    if size > DIGEST_LIMIT:
        return None
    import hashlib

    try:
        fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        # Reads sized by the stat: one read of DIGEST_LIMIT would allocate a MiB a call.
        # A regular file's read comes back short only at its end: the file read whole at
        # its stat's size in one read needs no second one to say so.
        block = os.read(fd, size + 1)
        if len(block) == size:  # the whole file in one read: the usual case
            return hashlib.sha256(block).hexdigest()
        hashed, total, want = hashlib.sha256(), 0, size + 1
        while block:
            total += len(block)
            if total > DIGEST_LIMIT:
                return None  # it grew past the limit since the stat
            hashed.update(block)
            want = min(1 << 16, DIGEST_LIMIT + 1 - total)
            block = os.read(fd, want)
        return hashed.hexdigest()
    except OSError:
        return None
    finally:
        os.close(fd)


def tree_size(dir_fd: int, name: str, limit: int) -> tuple[int, int, int] | None:
    """(bytes of regular files, files and links, folders below) of folder ``name``, or
    None once the bytes pass ``limit`` (the walk stops there)."""
    size = files = folders = 0
    top = os.open(name, _FOLDER_FLAGS, dir_fd=dir_fd)
    stack = [top]
    try:
        while stack:
            fd = stack.pop()
            try:
                with os.scandir(fd) as listing:
                    entries = list(listing)
                for entry in entries:
                    info = entry.stat(follow_symlinks=False)
                    if stat.S_ISDIR(info.st_mode):
                        folders += 1
                        stack.append(os.open(entry.name, _FOLDER_FLAGS, dir_fd=fd))
                        continue
                    files += 1
                    if stat.S_ISREG(info.st_mode):
                        size += info.st_size
                        if size > limit:
                            return None
            finally:
                os.close(fd)
    finally:
        for fd in stack:
            os.close(fd)
    return size, files, folders


def keep_tree(dir_fd: int, name: str, into_fd: int, image: str) -> bool:
    """Move folder ``name`` of ``dir_fd`` into the journal as ``image``; whether it was
    moved in one rename (False: across filesystems, it was copied and is left in place for
    the caller to remove)."""
    try:
        os.rename(name, image, src_dir_fd=dir_fd, dst_dir_fd=into_fd)
        return True
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EBUSY, errno.EPERM):
            raise
    try:
        copy_tree(dir_fd, name, into_fd, image)
    except BaseException:
        with contextlib.suppress(OSError):
            remove_image(into_fd, image)  # what the copy made before it failed
        raise
    return False


def copy_tree(from_fd: int, name: str, to_fd: int, target: str) -> None:
    """Copy folder ``name`` of ``from_fd`` to new folder ``target`` of ``to_fd``: folders,
    regular files and links with their modes. Other kinds (FIFOs, sockets, devices) are
    not copied: no tool makes them and no image can hold them."""
    source = os.open(name, _FOLDER_FLAGS, dir_fd=from_fd)
    try:
        mode = stat.S_IMODE(os.fstat(source).st_mode)
        os.mkdir(target, 0o700, dir_fd=to_fd)
        made = os.open(target, _FOLDER_FLAGS, dir_fd=to_fd)
        try:
            for entry, info in _entries(source):
                if stat.S_ISDIR(info.st_mode):
                    copy_tree(source, entry, made, entry)
                elif stat.S_ISLNK(info.st_mode):
                    os.symlink(os.readlink(entry, dir_fd=source), entry, dir_fd=made)
                elif stat.S_ISREG(info.st_mode):
                    fd = os.open(entry, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC,
                                 dir_fd=source)
                    try:
                        _copy_into(fd, made, entry, 0o600)
                    finally:
                        os.close(fd)
                    os.chmod(entry, stat.S_IMODE(info.st_mode), dir_fd=made,
                             follow_symlinks=False)
            os.fchmod(made, mode)
        finally:
            os.close(made)
    finally:
        os.close(source)


def _entries(fd: int) -> Iterator[tuple[str, os.stat_result]]:
    with os.scandir(fd) as listing:
        found = [(entry.name, entry.stat(follow_symlinks=False)) for entry in listing]
    yield from sorted(found)


def file_chunks(into_fd: int, image: str) -> Iterator[bytes]:
    """The bytes of image ``image``, in blocks."""
    fd = os.open(image, os.O_RDONLY | _NOFOLLOW | _CLOEXEC, dir_fd=into_fd)
    try:
        while block := os.read(fd, _CHUNK):
            yield block
    finally:
        os.close(fd)


def remove_image(into_fd: int, image: str) -> None:
    """Remove an image, file or tree (when its entry is let go)."""
    info = lookup(into_fd, image)
    if info is None:
        return
    if not stat.S_ISDIR(info.st_mode):
        os.unlink(image, dir_fd=into_fd)
        return
    from ._fswalk import remove_tree

    remove_tree(into_fd, image, image)
