"""A tool with parameters of any type: their schema ({}) takes null, and so must dispatch,
or the kit would blame the author for janito's inconsistency. Its main() has no
``if __name__ == "__main__":`` guard, so ``python -m`` would do nothing: a note."""

from __future__ import annotations

from typing import Any

from janito_core import tool


@tool(permissions="")
def describe_value(value: Any, fallback: object = "nothing") -> dict[str, Any]:
    """Say what kind of JSON value a value is.

    Args:
        value: Any JSON value.
        fallback: What to describe when value is null; any JSON value too.
    """
    shown = fallback if value is None else value
    return {"success": True, "kind": "null" if shown is None else type(shown).__name__}


def main(argv: list[str] | None = None) -> int:
    from janito_core.harness import run_main

    return run_main(describe_value, argv)
