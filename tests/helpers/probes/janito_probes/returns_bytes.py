"""A tool putting bytes in its result."""

from __future__ import annotations

from typing import Any

from janito_core import tool


@tool(permissions="")
def encode(text: str) -> dict[str, Any]:
    """Encode a text as UTF-8.

    Args:
        text: What to encode.
    """
    return {"success": True, "data": text.encode("utf-8")}
