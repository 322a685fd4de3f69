from __future__ import annotations

from typing import Any

from janito_core import BaseTool, tool


@tool(permissions="r")
class CountSteps(BaseTool):
    """Count to a number, reporting every step."""

    def run(self, steps: int) -> dict[str, Any]:
        """Count.

        Args:
            steps: How many steps to count.
        """
        for step in range(1, steps + 1):
            self.report_progress(f"step {step} of {steps}")
        self.report_warning("counting is over")
        return {"success": True, "steps": steps}
