"""A tool that takes far longer than a call may."""

from __future__ import annotations

import time
from typing import Any

from janito_core import tool


@tool(permissions="")
def wait_a_while(label: str = "") -> dict[str, Any]:
    """Wait, then answer.

    Args:
        label: Echoed back.
    """
    time.sleep(30)
    return {"success": True, "label": label}
