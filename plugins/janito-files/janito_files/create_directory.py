"""CreateDirectory: make a folder and any missing parents."""

from __future__ import annotations

import stat
import sys
from typing import ClassVar, Literal

from janito_core import BaseTool, Failure, failure, tool

from ._common import TypedDict, echoed, invalid, locate, os_failure, safe_text


class CreatedDirectory(TypedDict):
    """What CreateDirectory answers.

    Attributes:
        directory: The path as given.
        path: The folder, as the workspace shows it.
        created: False when the folder existed already.
    """

    success: Literal[True]
    directory: str
    path: str
    created: bool


@tool(permissions="w")
class CreateDirectory(BaseTool):
    """Create a folder in the workspace, with its missing parent folders unless parents is false.

    An existing folder is not an error unless exist_ok is false ("created" is then false).
    """

    writes_paths: ClassVar[tuple[str, ...]] = ("directory",)

    renamed_parameters: ClassVar[dict[str, str]] = {"path": "renamed to 'directory'"}

    def run(self, directory: str, parents: bool = True, exist_ok: bool = True
            ) -> CreatedDirectory | Failure:
        """Create a folder.

        Args:
            directory: Path of the folder to create, relative to the workspace root.
            parents: Also create missing parent folders (like mkdir -p); otherwise the
                parent must exist.
            exist_ok: Succeed when the folder already exists; otherwise that is an error.
        """
        echo = {"directory": echoed(directory)}
        where, refused = locate(self, directory, "directory", make_parents=parents,
                                action="create")
        if where is None:
            failed = refused or invalid("no path given", **echo)
            if failed.get("error_type") == "not_found" and not parents:
                failed["error"] += "; the parent folder does not exist: pass parents=true"
            return failed
        with where:
            shown = safe_text(where.shown)
            existing = where.lookup()
            if existing is not None:
                if not stat.S_ISDIR(existing.st_mode):
                    return failure(f"{shown} exists and is not a folder", "file_exists", **echo)
                if not exist_ok:
                    return failure(f"{shown} already exists; pass exist_ok=true to accept an "
                                   "existing folder", "file_exists", **echo)
                return {"success": True, **echo, "path": shown, "created": False}
            self.report_start(f"Creating folder {shown}")
            try:
                created = where.mkdir()
            except FileExistsError:
                return failure(f"{shown} exists and is not a folder", "file_exists", **echo)
            except OSError as exc:
                self.report_error(f"could not create {shown}: {exc.strerror or exc}")
                return os_failure(exc, f"create {shown}", **echo)
        self.report_result(f"Created {shown}")
        return {"success": True, **echo, "path": shown, "created": created}


def main(argv: list[str] | None = None) -> int:
    """Run CreateDirectory from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(CreateDirectory, argv)


if __name__ == "__main__":
    sys.exit(main())
