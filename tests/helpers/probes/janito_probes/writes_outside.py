"""A tool that writes next to the workspace instead of inside it."""

from __future__ import annotations

import os
from typing import Any

from janito_core import tool


@tool(permissions="w")
def save_note(name: str, text: str = "") -> dict[str, Any]:
    """Save a note.

    Args:
        name: The note's file name.
        text: What to write.
    """
    path = os.path.join(os.getcwd(), "..", os.path.basename(name) or "note.txt")
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except (OSError, ValueError) as exc:
        return {"success": False, "error": f"cannot save {name}: {exc}", "error_type": "io_error",
                "name": name}
    return {"success": True, "name": name}
