from __future__ import annotations

from typing import Any

from janito_core import BaseTool, tool

from ._runs import RUNS


@tool(permissions="x")
class RunCheck(BaseTool):
    """Run one named check of the project."""

    def run(self, check: str) -> dict[str, Any]:
        """Run a check.

        Args:
            check: The name of the check to run.
        """
        RUNS.append(check)
        return {"success": True, "ran": check}
