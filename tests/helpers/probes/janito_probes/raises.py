"""A tool that raises for some inputs."""

from __future__ import annotations

from typing import Any

from janito_core import BaseTool, tool


@tool(permissions="")
class Divide(BaseTool):
    """Divide one number by another."""

    def run(self, dividend: int, divisor: int) -> dict[str, Any]:
        """Divide.

        Args:
            dividend: The number to divide.
            divisor: What to divide it by.
        """
        return {"success": True, "quotient": dividend // divisor}
