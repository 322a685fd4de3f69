from __future__ import annotations

from typing import Any

from janito_core import BaseTool, tool


@tool(permissions="r")
class FailAlways(BaseTool):
    """Fail with a structured error."""

    def run(self, name: str = "missing.txt") -> dict[str, Any]:
        """Fail.

        Args:
            name: The thing that is not there.
        """
        return {"success": False, "error": f"{name} does not exist", "error_type": "not_found",
                "name": name}
