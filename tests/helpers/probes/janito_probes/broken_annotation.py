"""A tool whose run() names a type that is imported only for the type checker."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from janito_core import BaseTool, tool

if TYPE_CHECKING:
    from decimal import Decimal


@tool(permissions="")
class Halve(BaseTool):
    """Halve a number."""

    def run(self, number: Decimal) -> dict[str, Any]:
        """Halve it.

        Args:
            number: The number.
        """
        return {"success": True, "half": str(number / 2)}
