"""A tool whose result holds NaN for some inputs."""

from __future__ import annotations

from typing import Any

from janito_core import tool


@tool(permissions="")
def average(values: list[float]) -> dict[str, Any]:
    """Average some numbers.

    Args:
        values: The numbers.
    """
    mean = sum(values) / len(values) if values else float("nan")
    return {"success": True, "mean": mean}
