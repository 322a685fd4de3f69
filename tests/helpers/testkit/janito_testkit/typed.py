"""Typed: echoes every argument with the Python type run() received."""

from __future__ import annotations

from typing import Any, Literal

from janito_core import BaseTool, tool

from ._shared import Color, Options, Point, plain


@tool()
class Typed(BaseTool):
    """Echo the arguments back with the Python type each one arrived as."""

    def run(
        self,
        count: int,
        ratio: float = 1.0,
        flag: bool = False,
        name: str = "",
        items: list[int] | None = None,
        tags: set[str] | None = None,
        mode: Literal["fast", "slow"] = "fast",
        level: Literal[1, 2, 3] = 1,
        color: Color = Color.RED,
        point: Point | None = None,
        options: Options | None = None,
        mapping: dict[str, int] | None = None,
        maybe: int | None = None,
        pair: tuple[int, str] | None = None,
    ) -> dict[str, Any]:
        """Echo the arguments.

        Args:
            count: A required integer.
            ratio: A number.
            flag: A boolean.
            name: A string.
            items: Integers.
            tags: Distinct strings.
            mode: How fast.
            level: A level from 1 to 3.
            color: A colour.
            point: A point.
            options: Search options.
            mapping: Names to integers.
            maybe: An optional integer.
            pair: An integer and a string.
        """
        received = dict(locals())
        del received["self"]
        return {
            "success": True,
            "types": {k: type(v).__name__ for k, v in received.items()},
            "values": {k: plain(v) for k, v in received.items()},
        }
