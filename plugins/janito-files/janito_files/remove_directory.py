"""RemoveDirectory: remove a folder, empty or (when asked) with everything in it."""

from __future__ import annotations

import os
import stat
import sys
from typing import Any

from janito_core import BaseTool, failure, tool

from ._atomic import fsync_dir
from ._common import echoed, invalid, os_failure, resolve_entry, shown


@tool(permissions="w")
class RemoveDirectory(BaseTool):
    """Remove a folder from the workspace; with recursive=true, also everything inside it.

    Symbolic links inside the folder are removed, never followed, so nothing outside the
    folder is touched. The workspace root itself cannot be removed.
    """

    def run(self, path: str, recursive: bool = False) -> dict[str, Any]:
        """Remove a folder.

        Args:
            path: Path of the folder, relative to the workspace root.
            recursive: Remove the folder's contents too; otherwise it must be empty.
        """
        echo = {"path": echoed(path), "recursive": recursive}
        real, refused = resolve_entry(self, path, "path")
        if refused is not None or real is None:
            return refused or invalid("no path given", **echo)
        where = shown(self, real)
        if real == self.workspace.root:
            return failure("refusing to remove the workspace root", "invalid_arguments", **echo)
        try:
            info = os.lstat(real)
        except OSError as exc:
            return os_failure(exc, f"find {where}", **echo)
        if stat.S_ISLNK(info.st_mode):
            return failure(f"{where} is a symbolic link, not a folder; use DeleteFile to remove "
                           "the link", "not_a_directory", **echo)
        if not stat.S_ISDIR(info.st_mode):
            return failure(f"{where} is a file, not a folder; use DeleteFile for files",
                           "not_a_directory", **echo)
        self.report_start(f"Removing folder {where}" + (" and its contents" if recursive else ""))
        removed = {"files": 0, "directories": 0}
        try:
            if recursive:
                for _folder, dirs, files in os.walk(real):
                    removed["files"] += len(files)
                    removed["directories"] += len(dirs)
                _rmtree(real)
            else:
                os.rmdir(real)
        except OSError as exc:
            self.report_error(f"could not remove {where}: {exc.strerror or exc}")
            result = os_failure(exc, f"remove {where}", **echo)
            if result["error_type"] == "directory_not_empty":
                result["error"] += "; pass recursive=true to remove its contents too"
            return result
        fsync_dir(os.path.dirname(real))
        self.report_result(f"Removed {where}")
        return {"success": True, **echo, "directory": where,
                "removed_files": removed["files"], "removed_directories": removed["directories"]}


def _rmtree(path: str) -> None:
    import shutil  # imported on use: most calls never need it

    shutil.rmtree(path)


def main(argv: list[str] | None = None) -> int:
    """Run RemoveDirectory from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(RemoveDirectory, argv)


if __name__ == "__main__":
    sys.exit(main())
