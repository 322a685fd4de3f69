"""MoveFile: move or rename a file or folder without ever losing the source."""

from __future__ import annotations

import errno
import os
import stat
import sys
from typing import Any

from janito_core import BaseTool, failure, tool

from ._atomic import TargetExists, copy_file_atomic, copy_tree_atomic, fsync_dir
from ._common import echoed, ensure_folder, invalid, kind_of, os_failure, resolve_entry, shown


@tool(permissions="w")
class MoveFile(BaseTool):
    """Move or rename a file or folder inside the workspace.

    Across filesystems the source is copied, synced to disk and only then removed, so an
    interrupted move leaves the source in place. An existing destination is replaced only
    when overwrite is true, and never when it is a folder.
    """

    def run(self, src_path: str, dest_path: str, overwrite: bool = False) -> dict[str, Any]:
        """Move "src_path" to "dest_path".

        Args:
            src_path: The file or folder to move, relative to the workspace root.
            dest_path: Its new path (the full new name, not a folder to move it into).
            overwrite: Replace an existing destination file.
        """
        echo = {"src_path": echoed(src_path), "dest_path": echoed(dest_path)}
        source, refused = resolve_entry(self, src_path, "src_path")
        if refused is not None or source is None:
            return {**(refused or invalid("no source given")), **echo}
        target, refused = resolve_entry(self, dest_path, "dest_path")
        if refused is not None or target is None:
            return {**(refused or invalid("no destination given")), **echo}
        src_shown, dest_shown = shown(self, source), shown(self, target)
        if source == self.workspace.root:
            return failure("refusing to move the workspace root", "invalid_arguments", **echo)
        try:
            src_info = os.lstat(source)
        except OSError as exc:
            return os_failure(exc, f"find {src_shown}", **echo)
        src_kind = kind_of(src_info.st_mode)
        if source == target:
            return invalid("src_path and dest_path are the same path", **echo)
        if src_kind == "directory" and (target + os.sep).startswith(source + os.sep):
            return invalid("cannot move a folder into itself", **echo)
        try:
            dest_info: os.stat_result | None = os.lstat(target)
        except FileNotFoundError:
            dest_info = None
        except OSError as exc:
            return os_failure(exc, f"inspect {dest_shown}", **echo)
        if dest_info is not None:
            if stat.S_ISDIR(dest_info.st_mode):
                return failure(f"{dest_shown} is an existing folder; give the full new path "
                               "(folders are never overwritten)", "file_exists", **echo)
            if not overwrite:
                return failure(f"{dest_shown} already exists; pass overwrite=true to replace "
                               "it", "file_exists", **echo)
            if src_kind == "directory":
                return failure(f"cannot replace the file {dest_shown} with a folder",
                               "file_exists", **echo)
        self.report_start(f"Moving {src_shown} to {dest_shown}")
        try:
            folder = os.path.dirname(target)
            ensure_folder(folder)
            method = self._move(source, target, src_kind, overwrite)
        except TargetExists:
            return failure(f"{dest_shown} already exists; pass overwrite=true to replace it",
                           "file_exists", **echo)
        except OSError as exc:
            self.report_error(f"could not move {src_shown}: {exc.strerror or exc}")
            result = os_failure(exc, f"move {src_shown}", **echo)
            result["source_kept"] = os.path.lexists(source)
            return result
        self.report_result(f"Moved {src_shown} to {dest_shown}")
        return {"success": True, **echo, "source": src_shown, "destination": dest_shown,
                "kind": src_kind, "replaced": dest_info is not None, "method": method}

    @staticmethod
    def _move(source: str, target: str, kind: str, overwrite: bool) -> str:
        """Do the move; return "rename" or "copy" (across filesystems)."""
        try:
            if overwrite:
                os.replace(source, target)
            elif kind == "directory":
                if os.path.lexists(target):
                    raise TargetExists(errno.EEXIST, "exists", target)
                os.rename(source, target)
            else:
                # link + unlink refuses an existing target atomically.
                try:
                    os.link(source, target, follow_symlinks=False)
                except FileExistsError:
                    raise TargetExists(errno.EEXIST, "exists", target) from None
                except OSError as exc:
                    if exc.errno == errno.EXDEV:
                        raise
                    if os.path.lexists(target):
                        raise TargetExists(errno.EEXIST, "exists", target) from None
                    os.rename(source, target)
                else:
                    os.unlink(source)
            fsync_dir(os.path.dirname(target))
            fsync_dir(os.path.dirname(source))
            return "rename"
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
        # Across filesystems: the copy is complete and on disk before the source goes.
        if kind == "directory":
            copy_tree_atomic(source, target)
            _rmtree(source)
        elif kind == "symlink":
            link = os.readlink(source)
            if overwrite and os.path.lexists(target):
                os.unlink(target)
            os.symlink(link, target)
            os.unlink(source)
        else:
            copy_file_atomic(source, target, overwrite=overwrite)
            os.unlink(source)
        fsync_dir(os.path.dirname(source))
        return "copy"


def _rmtree(path: str) -> None:
    import shutil  # imported on use: most calls never need it

    shutil.rmtree(path)


def main(argv: list[str] | None = None) -> int:
    """Run MoveFile from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(MoveFile, argv)


if __name__ == "__main__":
    sys.exit(main())
