"""A tool that lists folders by string paths, so "../x" lists outside the workspace."""

from __future__ import annotations

import os
from typing import Any

from janito_core import tool


@tool(permissions="r")
def list_folder(folder: str = ".") -> dict[str, Any]:
    """List a folder.

    Args:
        folder: The folder, relative to the current directory.
    """
    try:
        return {"success": True, "folder": folder, "entries": sorted(os.listdir(folder or "."))}
    except (OSError, ValueError) as exc:
        return {"success": False, "error": f"cannot list {folder}: {exc}",
                "error_type": "io_error", "folder": folder}
