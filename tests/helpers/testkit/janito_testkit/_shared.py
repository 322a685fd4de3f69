"""Helpers of the testkit toolset; a private module, so never scanned for tools."""

from __future__ import annotations

import dataclasses
import enum
import sys
from typing import Any, TypedDict

from janito_core import BaseTool, tool

if sys.version_info >= (3, 11):
    from typing import NotRequired
else:  # pragma: no cover - Python 3.10
    from typing_extensions import NotRequired


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


@dataclasses.dataclass
class Point:
    """A point on a grid.

    Attributes:
        x: Column, counted from zero.
        y: Row, counted from zero.
    """

    x: int
    y: int = 0


class Options(TypedDict):
    """Search options.

    Args:
        depth: How many levels to descend.
        label: A name to show.
    """

    depth: int
    label: NotRequired[str]


def plain(value: Any) -> Any:
    """A JSON rendering of what run() received, to check conversions from the outside."""
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"__type__": type(value).__name__, **dataclasses.asdict(value)}
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, tuple):
        return [plain(v) for v in value]
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


@tool(permissions="r")
class HiddenHelperTool(BaseTool):
    """Defined in a private module: must never be collected."""

    def run(self) -> dict[str, Any]:
        return {"success": True}
