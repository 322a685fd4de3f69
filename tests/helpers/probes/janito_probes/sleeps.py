"""A tool that takes far longer than a call may."""

from __future__ import annotations

import os
import time
from typing import Any

from janito_core import tool


@tool(permissions="")
def wait_a_while(label: str = "") -> dict[str, Any]:
    """Wait, then answer.

    Args:
        label: Echoed back.
    """
    # The test reads this log rather than timing a whole check, which load slows: one
    # "called" and no "returned" is one call, interrupted.
    log = os.environ.get("JANITO_PROBE_CALLS")
    _note(log, "called")
    time.sleep(30)
    _note(log, "returned")
    return {"success": True, "label": label}


def _note(log: str | None, event: str) -> None:
    if log:
        with open(log, "a", encoding="utf-8") as file:
            file.write(event + "\n")
