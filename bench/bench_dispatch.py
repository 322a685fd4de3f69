"""Dispatch overhead: `call_tool` against calling `run()` directly, in the same process.

Ping returns {"success": True} and takes no parameters; Six takes six typed parameters
and is called with a JSON string. Targets: at most 5 µs added for Ping, 15 µs for Six.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Literal

from _common import alternate_calls, exit_status, load_note, verdict

from janito_core import BaseTool, Registry, tool
from janito_core.dispatch import call_tool


@tool(permissions="r")
class Ping(BaseTool):
    """Answer at once."""

    def run(self) -> dict[str, Any]:
        """Answer at once."""
        return {"success": True}


@tool(permissions="r")
class Six(BaseTool):
    """Take six typed parameters."""

    def run(self, text: str, count: int, ratio: float, flag: bool, names: list[str],
            mode: Literal["fast", "slow"] = "fast") -> dict[str, Any]:
        """Take six typed parameters.

        Args:
            text: A string.
            count: An integer.
            ratio: A float.
            flag: A boolean.
            names: A list of strings.
            mode: One of two modes.
        """
        return {"success": True}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--number", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    registry = Registry(autoload=())
    registry.add_tool(Ping)
    registry.add_tool(Six)
    six_json = json.dumps({"text": "hello", "count": 5, "ratio": 2.5, "flag": True,
                           "names": ["a", "b"], "mode": "slow"})
    ping, six = Ping(), Six()
    assert call_tool("Ping", "{}", registry=registry) == {"success": True}
    assert call_tool("Six", six_json, registry=registry) == {"success": True}
    medians = alternate_calls({
        "Ping.run()": lambda: ping.run(),
        "call_tool Ping": lambda: call_tool("Ping", "{}", registry=registry),
        "Six.run(**kwargs)": lambda: six.run(text="hello", count=5, ratio=2.5, flag=True,
                                             names=["a", "b"], mode="slow"),
        "call_tool Six (JSON)": lambda: call_tool("Six", six_json, registry=registry),
    }, args.number, args.repeat)
    print(f"dispatch, medians of {args.repeat} interleaved repeats of {args.number} calls; "
          f"{load_note()}")
    print(f"  {'':<22} {'wall':>10} {'CPU':>10}")
    for name, value in medians.items():
        print(f"  {name:<22} {value.wall * 1e6:7.2f} µs {value.cpu * 1e6:7.2f} µs")
    verdicts = []
    for label, direct, dispatched, target in (
        ("Ping", "Ping.run()", "call_tool Ping", 5.0),
        ("Six", "Six.run(**kwargs)", "call_tool Six (JSON)", 15.0),
    ):
        added = (medians[dispatched].cpu - medians[direct].cpu) * 1e6
        added_wall = (medians[dispatched].wall - medians[direct].wall) * 1e6
        ratio = medians[dispatched].cpu / medians[direct].cpu
        print(f"{label}: {added:.2f} µs added in CPU time ({added_wall:.2f} µs wall; {ratio:.0f}x "
              f"the direct call; target at most {target:.0f} µs added): {verdict(added, target)}")
        verdicts.append(verdict(added, target))
    return exit_status(*verdicts)


if __name__ == "__main__":
    sys.exit(main())
