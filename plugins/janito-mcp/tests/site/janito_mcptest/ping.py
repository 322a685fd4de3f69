from __future__ import annotations

from typing import Any

from janito_core import BaseTool, tool


@tool(permissions="r")
class Ping(BaseTool):
    """Answer at once (for measuring round trips)."""

    def run(self) -> dict[str, Any]:
        """Answer."""
        return {"success": True}
