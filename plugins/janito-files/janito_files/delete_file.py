"""DeleteFile: remove one file."""

from __future__ import annotations

import stat
import sys
from typing import Any, ClassVar, Literal

from janito_core import BaseTool, Failure, failure, tool

from ._common import NotRequired, TypedDict, echoed, invalid, locate, os_failure, safe_text


class DeletedFile(TypedDict):
    """What DeleteFile answers.

    Attributes:
        filepath: The path as given.
        force: True when it was given true.
        path: The file, as the workspace showed it (a folder ends with "/").
        bytes: Its size (0 for a folder).
        was_symlink: True when it was a symbolic link (the link was deleted, not its target).
        was_directory: True when it was an empty folder (force).
    """

    success: Literal[True]
    filepath: str
    force: NotRequired[bool]
    path: str
    bytes: int
    was_symlink: bool
    was_directory: NotRequired[bool]


@tool(permissions="w")
class DeleteFile(BaseTool):
    """Delete a file (or a symbolic link, not what it points to) in the workspace.

    Folders are refused unless force is true and the folder is empty; RemoveDirectory
    removes folders, their contents too with recursive=true.
    """

    writes_paths: ClassVar[tuple[str, ...]] = ("filepath",)

    def run(self, filepath: str, force: bool = False) -> DeletedFile | Failure:
        """Delete one file.

        Args:
            filepath: Path of the file to delete, relative to the workspace root.
            force: Also delete the path when it is an empty folder (as janito 4.50 did); a
                folder with contents is still refused (RemoveDirectory with recursive=true
                removes it).
        """
        echo: dict[str, Any] = {"filepath": echoed(filepath)}
        if force:
            echo["force"] = True
        where, refused = locate(self, filepath, "filepath", follow=False, action="find")
        if where is None:
            return refused or invalid("no path given", **echo)
        with where:
            path = safe_text(where.shown)
            if where.is_root:
                return failure("the workspace root is a folder; use RemoveDirectory to remove "
                               "folders", "is_a_directory", **echo)
            try:
                info = where.stat()
            except OSError as exc:
                return os_failure(exc, f"find {path}", **echo)
            if stat.S_ISDIR(info.st_mode):
                if force:
                    return self._remove_empty_folder(where, path, echo)
                return failure(f"{path} is a folder; use RemoveDirectory to remove folders "
                               "(or force=true for an empty one)", "is_a_directory", **echo)
            self.report_start(f"Deleting {path}")
            try:
                info = where.remove()
            except IsADirectoryError:
                return failure(f"{path} is a folder; use RemoveDirectory to remove folders",
                               "is_a_directory", **echo)
            except OSError as exc:
                self.report_error(f"could not delete {path}: {exc.strerror or exc}")
                return os_failure(exc, f"delete {path}", **echo)
        self.report_result(f"Deleted {path}")
        return {"success": True, **echo, "path": path, "bytes": info.st_size,
                "was_symlink": stat.S_ISLNK(info.st_mode)}

    def _remove_empty_folder(self, where: Any, path: str, echo: dict[str, Any]
                             ) -> dict[str, Any]:
        """force=true on a folder: remove it if it is empty, as janito 4.50 did."""
        self.report_start(f"Removing empty folder {path}")
        try:
            where.rmdir(recursive=False)
        except OSError as exc:
            self.report_error(f"could not remove {path}: {exc.strerror or exc}")
            result = os_failure(exc, f"remove {path}", **echo)
            if result["error_type"] == "directory_not_empty":
                result["error"] += ("; force removes only an empty folder: RemoveDirectory "
                                    "with recursive=true removes one with its contents")
            return result
        self.report_result(f"Removed empty folder {path}")
        return {"success": True, **echo, "path": path + "/", "bytes": 0, "was_symlink": False,
                "was_directory": True}


def main(argv: list[str] | None = None) -> int:
    """Run DeleteFile from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(DeleteFile, argv)


if __name__ == "__main__":
    sys.exit(main())
