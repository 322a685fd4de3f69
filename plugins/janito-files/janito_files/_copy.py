"""Copies for a move across filesystems: complete and on disk before the source goes.

Everything is read and written relative to folders held open by descriptor (the source
walked with janito-core's descriptor walk, never following a link). A file is written
under a hidden temporary name, synced and renamed into place; a folder is built under a
hidden temporary name beside its destination and renamed into place once whole. FIFOs,
sockets and devices are not copied (opening a FIFO to read it would wait for a writer).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from typing import TYPE_CHECKING

from janito_core._atomic import copy_xattrs_of, xattrs_between
from janito_core.workspace import Location, NotRegularFile

from ._common import check_cancelled

if TYPE_CHECKING:
    from janito_core import Workspace

_BLOCK = 1 << 20
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _blocks(fd: int) -> Iterator[bytes]:
    """The blocks of the file open as ``fd``; a cancelled call stops here, and the copy
    under way is removed (the source is never removed before its copy is whole)."""
    while True:
        check_cancelled()
        block = os.read(fd, _BLOCK)
        if not block:
            return
        yield block


def _keep_times(dir_fd: int, name: str, info: os.stat_result) -> None:
    with contextlib.suppress(OSError, NotImplementedError):
        os.utime(name, ns=(info.st_atime_ns, info.st_mtime_ns), dir_fd=dir_fd,
                 follow_symlinks=False)


def copy_file(source: Location, target: Location, *, overwrite: bool) -> None:
    """Copy regular file ``source`` to ``target`` (content, mode, extended attributes,
    times), atomically."""
    fd, info = source.open_regular()
    try:
        target.write(_blocks(fd), overwrite=overwrite, like=info)
        copy_xattrs_of(fd, target.dir_fd, target.name)
    finally:
        os.close(fd)
    _keep_times(target.dir_fd, target.name, info)


def copy_link(source: Location, target: Location, *, overwrite: bool) -> None:
    """Recreate link ``source`` at ``target`` (the link, not what it points to)."""
    link = os.readlink(source.name, dir_fd=source.dir_fd)
    with beside(target) as temp:
        os.symlink(link, temp.name, dir_fd=temp.dir_fd)
        try:
            temp.rename_to(target, overwrite=overwrite)
        except BaseException:
            with contextlib.suppress(OSError):
                temp.remove()
            raise


def copy_tree(workspace: Workspace, source_path: str, source: Location,
              target: Location) -> None:
    """Copy folder ``source`` (reached as ``source_path``) to the absent ``target``: built
    under a hidden temporary name beside it, synced, then renamed into place."""
    base_info = source.stat()
    with beside(target) as temp:
        os.mkdir(temp.name, 0o700, dir_fd=temp.dir_fd)
        try:
            base = temp.open(os.O_RDONLY | os.O_DIRECTORY)
            try:
                _fill(workspace, source_path, base)
                os.chmod(base, stat.S_IMODE(base_info.st_mode))
                os.fsync(base)
            finally:
                os.close(base)
            temp.rename_to(target)
        except BaseException:
            with contextlib.suppress(OSError):
                temp.rmdir(recursive=True)
            raise
    _keep_times(target.dir_fd, target.name, base_info)


def beside(target: Location) -> Location:
    """A fresh hidden name in the folder of ``target`` (for building a copy aside)."""
    name = f".{target.name[:200]}.{os.urandom(4).hex()}.tmp"
    aside = Location(target.workspace, os.dup(target.dir_fd), name, [*target.parts[:-1], name])
    aside.temporary = True  # renamed over the target: a journal records what it replaces
    return aside


def _fill(workspace: Workspace, source_path: str, base: int) -> None:
    """Copy what is below folder ``source_path`` into the empty folder ``base``.

    Folders of the copy are named by their path below ``base``: the copy is new and
    private (a hidden, unpredictable name) and holds no link that the walk went through.
    """
    errors: list[tuple[str, OSError]] = []
    folders: list[tuple[str, os.stat_result]] = []
    prefix_length = -1
    for entry in workspace.walk(source_path, on_error=lambda where, exc: errors.append((where, exc))):
        if prefix_length < 0:
            prefix_length = len(entry.relative) - len(entry.name)
        relative = entry.relative[prefix_length:]
        info = os.stat(entry.name, dir_fd=entry.dir_fd, follow_symlinks=False)
        parent, _, name = relative.rpartition("/")
        folder = os.open(parent or ".", os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC, dir_fd=base)
        try:
            if entry.kind == "directory":
                os.mkdir(name, 0o700, dir_fd=folder)
                folders.append((relative, info))
            elif entry.kind == "symlink":
                os.symlink(os.readlink(entry.name, dir_fd=entry.dir_fd), name, dir_fd=folder)
            elif entry.kind == "file":
                fd, _info = entry.open_regular()
                try:
                    out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW
                                  | _CLOEXEC, 0o600, dir_fd=folder)
                    try:
                        for block in _blocks(fd):
                            view = memoryview(block)
                            while view:
                                view = view[os.write(out, view):]
                        xattrs_between(fd, out)
                        os.fchmod(out, stat.S_IMODE(info.st_mode))
                        os.fsync(out)
                    finally:
                        os.close(out)
                finally:
                    os.close(fd)
                _keep_times(folder, name, info)
            else:
                raise NotRegularFile(errno.EINVAL, "a FIFO, socket or device cannot be copied "
                                     "to another filesystem", entry.relative)
            if entry.kind == "directory":
                os.fsync(folder)
        finally:
            os.close(folder)
    if errors:
        where, exc = errors[0]
        raise OSError(exc.errno or errno.EIO, f"{exc.strerror or exc} (in {where})", where)
    for relative, info in reversed(folders):
        with contextlib.suppress(OSError):
            os.chmod(relative, stat.S_IMODE(info.st_mode), dir_fd=base)
            os.utime(relative, ns=(info.st_atime_ns, info.st_mtime_ns), dir_fd=base,
                     follow_symlinks=False)
