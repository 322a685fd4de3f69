"""A tool that fails without saying why."""

from __future__ import annotations

from typing import Any

from janito_core import tool


@tool(permissions="")
def check_even(number: int) -> dict[str, Any]:
    """Say whether a number is even.

    Args:
        number: The number.
    """
    if number % 2:
        return {"success": False, "number": number}
    return {"success": True, "number": number}
