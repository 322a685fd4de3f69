from __future__ import annotations

from typing import Any

from janito_core import BaseTool, tool


@tool(permissions="x")
class ShoutText(BaseTool):
    """Upper-case a text (stands for a tool that executes something)."""

    def run(self, text: str) -> dict[str, Any]:
        """Shout.

        Args:
            text: The text to shout.
        """
        return {"success": True, "text": text.upper()}
