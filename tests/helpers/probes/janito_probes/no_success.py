"""A tool whose result has no success field."""

from __future__ import annotations

from typing import Any

from janito_core import tool


@tool(permissions="")
def shout(text: str) -> dict[str, Any]:
    """Upper-case a text.

    Args:
        text: What to shout.
    """
    return {"text": text.upper()}
