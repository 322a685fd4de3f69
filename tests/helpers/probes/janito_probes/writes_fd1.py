"""A tool writing to file descriptor 1, as a C library or a child process would."""

from __future__ import annotations

import os
from typing import Any

from janito_core import tool


@tool(permissions="")
def count_letters(text: str) -> dict[str, Any]:
    """Count the letters of a text.

    Args:
        text: The text.
    """
    os.write(1, b"progress: counting\n")
    return {"success": True, "letters": sum(c.isalpha() for c in text)}
