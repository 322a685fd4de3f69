"""RemoveDirectory: remove a folder, empty or (when asked) with everything in it."""

from __future__ import annotations

import stat
import sys
from typing import ClassVar, Literal

from janito_core import BaseTool, Failure, failure, tool

from ._common import NotRequired, TypedDict, echoed, invalid, locate, os_failure, safe_text


class RemovedDirectory(TypedDict):
    """What RemoveDirectory answers.

    Attributes:
        directory: The path as given.
        recursive: Whether its contents were to go too.
        path: The folder, as the workspace showed it.
        removed_files: Files removed.
        removed_directories: Folders removed, itself included.
        existed: False when force found nothing to remove.
    """

    success: Literal[True]
    directory: str
    recursive: bool
    path: str
    removed_files: int
    removed_directories: int
    existed: NotRequired[bool]


@tool(permissions="w")
class RemoveDirectory(BaseTool):
    """Remove a folder from the workspace; with recursive=true, also everything inside it.

    Symbolic links inside the folder are removed, never followed, so nothing outside the
    folder is touched. The workspace root itself cannot be removed.
    """

    writes_paths: ClassVar[tuple[str, ...]] = ("directory",)

    renamed_parameters: ClassVar[dict[str, str]] = {"path": "renamed to 'directory'"}

    def run(self, directory: str, recursive: bool = False, force: bool = False
            ) -> RemovedDirectory | Failure:
        """Remove a folder.

        Args:
            directory: Path of the folder, relative to the workspace root.
            recursive: Remove the folder's contents too; otherwise it must be empty.
            force: Succeed when the folder does not exist (nothing is removed). It never
                removes contents without recursive.
        """
        echo = {"directory": echoed(directory), "recursive": recursive}
        where, refused = locate(self, directory, "directory", follow=False, action="find")
        if where is None:
            failed = refused or invalid("no path given", **echo)
            if force and failed.get("error_type") == "not_found":
                return {"success": True, **echo, "path": safe_text(str(directory)),
                        "removed_files": 0, "removed_directories": 0, "existed": False}
            return failed
        with where:
            shown = safe_text(where.shown)
            if where.is_root:
                return failure("refusing to remove the workspace root", "invalid_arguments",
                               **echo)
            try:
                info = where.stat()
            except FileNotFoundError as exc:
                if force:
                    return {"success": True, **echo, "path": shown, "removed_files": 0,
                            "removed_directories": 0, "existed": False}
                return os_failure(exc, f"find {shown}", **echo)
            except OSError as exc:
                return os_failure(exc, f"find {shown}", **echo)
            if stat.S_ISLNK(info.st_mode):
                return failure(f"{shown} is a symbolic link, not a folder; use DeleteFile to "
                               "remove the link", "not_a_directory", **echo)
            if not stat.S_ISDIR(info.st_mode):
                return failure(f"{shown} is a file, not a folder; use DeleteFile for files",
                               "not_a_directory", **echo)
            self.report_start(f"Removing folder {shown}"
                              + (" and its contents" if recursive else ""))
            try:
                files, folders = where.rmdir(recursive=recursive)
            except OSError as exc:
                self.report_error(f"could not remove {shown}: {exc.strerror or exc}")
                result = os_failure(exc, f"remove {shown}", **echo)
                if result["error_type"] == "directory_not_empty" and not recursive:
                    result["error"] += "; pass recursive=true to remove its contents too"
                return result
        self.report_result(f"Removed {shown}")
        return {"success": True, **echo, "path": shown, "removed_files": files,
                "removed_directories": folders}


def main(argv: list[str] | None = None) -> int:
    """Run RemoveDirectory from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(RemoveDirectory, argv)


if __name__ == "__main__":
    sys.exit(main())
