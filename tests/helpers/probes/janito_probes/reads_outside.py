"""A tool that builds paths from the current directory, so "../x" leaves the workspace."""

from __future__ import annotations

import os
from typing import Any

from janito_core import tool


@tool(permissions="r")
def read_beside(name: str) -> dict[str, Any]:
    """Read a file next to the project.

    Args:
        name: The file's name.
    """
    path = os.path.join(os.getcwd(), "..", name)
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return {"success": True, "name": name, "text": handle.read(200)}
    except (OSError, ValueError) as exc:
        return {"success": False, "error": f"cannot read {name}: {exc}", "error_type": "io_error",
                "name": name}
