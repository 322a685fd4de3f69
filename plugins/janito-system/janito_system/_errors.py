"""The last line of defence of every tool: an unexpected exception becomes a result."""

from __future__ import annotations

from typing import Any

from janito_core import BaseTool, failure


def unexpected(tool: BaseTool, exc: BaseException, echo: dict[str, Any]) -> dict[str, Any]:
    """A failed result for an exception no code path expected (a bug, or a broken system)."""
    text = str(exc) or type(exc).__name__
    name = type(tool).__name__
    try:
        tool.report_error(f"{name} failed: {type(exc).__name__}: {text}")
    except Exception:  # a broken report hook must not turn this into a second failure
        pass
    return failure(f"{name} failed unexpectedly ({type(exc).__name__}: {text})",
                   "internal_error", **echo)
