"""DeleteFile: remove one file."""

from __future__ import annotations

import stat
import sys
from typing import ClassVar

from janito_core import BaseTool, failure, tool

from ._common import TypedDict, echoed, invalid, locate, os_failure, safe_text


class DeletedFile(TypedDict):
    """What DeleteFile answers.

    Attributes:
        filepath: The path as given.
        path: The file, as the workspace showed it.
        bytes: Its size.
        was_symlink: True when it was a symbolic link (the link was deleted, not its target).
    """

    filepath: str
    path: str
    bytes: int
    was_symlink: bool


@tool(permissions="w")
class DeleteFile(BaseTool):
    """Delete a file (or a symbolic link, not what it points to) in the workspace.

    Folders are refused; use RemoveDirectory for them.
    """

    writes_paths: ClassVar[tuple[str, ...]] = ("filepath",)

    def run(self, filepath: str) -> DeletedFile:
        """Delete one file.

        Args:
            filepath: Path of the file to delete, relative to the workspace root.
        """
        echo = {"filepath": echoed(filepath)}
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
                return failure(f"{path} is a folder; use RemoveDirectory to remove folders",
                               "is_a_directory", **echo)
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


def main(argv: list[str] | None = None) -> int:
    """Run DeleteFile from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(DeleteFile, argv)


if __name__ == "__main__":
    sys.exit(main())
