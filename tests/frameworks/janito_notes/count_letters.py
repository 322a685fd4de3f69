from __future__ import annotations

from typing import Any

from janito_core import BaseTool, tool


@tool(permissions="r")
class CountLetters(BaseTool):
    """Count the letters of a text."""

    def run(self, text: str) -> dict[str, Any]:
        """Count the letters of a text.

        Args:
            text: The text to count the letters of.
        """
        return {"success": True, "letters": sum(c.isalpha() for c in text)}
