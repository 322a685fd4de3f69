from __future__ import annotations

from typing import Any

from janito_core import BaseTool, tool


@tool(permissions="r")
class RaiseError(BaseTool):
    """Raise an exception (a broken tool)."""

    def run(self) -> dict[str, Any]:
        """Raise."""
        raise RuntimeError("the tool broke")
