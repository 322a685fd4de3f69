"""A tool returning a list instead of a dict."""

from __future__ import annotations

from typing import Any

from janito_core import tool


@tool(permissions="")
def returns_list(word: str = "a") -> Any:
    """Return the word in a list.

    Args:
        word: Any word.
    """
    return [word]
