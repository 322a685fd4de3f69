"""CreateDirectory: make a folder and any missing parents."""

from __future__ import annotations

import stat
import sys
from typing import Any

from janito_core import BaseTool, failure, tool

from ._common import echoed, invalid, locate, os_failure, safe_text


@tool(permissions="w")
class CreateDirectory(BaseTool):
    """Create a folder, and any missing parent folders, in the workspace.

    An existing folder is not an error ("created" is then false).
    """

    def run(self, path: str) -> dict[str, Any]:
        """Create a folder.

        Args:
            path: Path of the folder to create, relative to the workspace root.
        """
        echo = {"path": echoed(path)}
        where, refused = locate(self, path, "path", make_parents=True, action="create")
        if where is None:
            return refused or invalid("no path given", **echo)
        with where:
            shown = safe_text(where.shown)
            existing = where.lookup()
            if existing is not None:
                if stat.S_ISDIR(existing.st_mode):
                    return {"success": True, **echo, "directory": shown, "created": False}
                return failure(f"{shown} exists and is not a folder", "file_exists", **echo)
            self.report_start(f"Creating folder {shown}")
            try:
                created = where.mkdir()
            except FileExistsError:
                return failure(f"{shown} exists and is not a folder", "file_exists", **echo)
            except OSError as exc:
                self.report_error(f"could not create {shown}: {exc.strerror or exc}")
                return os_failure(exc, f"create {shown}", **echo)
        self.report_result(f"Created {shown}")
        return {"success": True, **echo, "directory": shown, "created": created}


def main(argv: list[str] | None = None) -> int:
    """Run CreateDirectory from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(CreateDirectory, argv)


if __name__ == "__main__":
    sys.exit(main())
