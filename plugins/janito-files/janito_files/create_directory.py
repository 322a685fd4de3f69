"""CreateDirectory: make a folder and any missing parents."""

from __future__ import annotations

import os
import sys
from typing import Any

from janito_core import BaseTool, failure, tool

from ._common import echoed, ensure_folder, invalid, os_failure, resolve, shown


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
        real, refused = resolve(self, path, "path")
        if refused is not None or real is None:
            return refused or invalid("no path given", **echo)
        where = shown(self, real)
        if os.path.isdir(real):
            return {"success": True, **echo, "directory": where, "created": False}
        if os.path.lexists(real):
            return failure(f"{where} exists and is not a folder", "file_exists", **echo)
        self.report_start(f"Creating folder {where}")
        try:
            ensure_folder(real)
        except OSError as exc:
            self.report_error(f"could not create {where}: {exc.strerror or exc}")
            return os_failure(exc, f"create {where}", **echo)
        self.report_result(f"Created {where}")
        return {"success": True, **echo, "directory": where, "created": True}


def main(argv: list[str] | None = None) -> int:
    """Run CreateDirectory from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(CreateDirectory, argv)


if __name__ == "__main__":
    sys.exit(main())
