"""A tool that prints its progress to standard output."""

from __future__ import annotations

from typing import Any

from janito_core import tool


@tool(permissions="")
def count_words(text: str) -> dict[str, Any]:
    """Count the words of a text.

    Args:
        text: The text.
    """
    print("counting words")
    return {"success": True, "words": len(text.split())}
