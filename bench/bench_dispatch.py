"""Dispatch overhead: `call_tool` against calling `run()` directly, in the same process.

Ping returns {"success": True} and takes no parameters; Six takes six typed parameters
and is called with a JSON string. Targets (issue 37): at most 1.0 µs added for Ping and
2.5 µs for Six, or at most 2x what pydantic-ai's validate-then-call adds in the same run,
whichever is larger. The anchor, where `pydantic-ai-slim` is installed: the function's
schema built by pydantic-ai (`function_schema`), then per call its pydantic-core validator
on the JSON arguments and the function called with what it gives, against calling the
function directly. (pydantic-ai's own `FunctionSchema.call` is async and runs a plain
function in a thread; the anchor leaves that out, as janito's synchronous `call_tool`
has nothing like it.)
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
    calls = {
        "Ping.run()": lambda: ping.run(),
        "call_tool Ping": lambda: call_tool("Ping", "{}", registry=registry),
        "Six.run(**kwargs)": lambda: six.run(text="hello", count=5, ratio=2.5, flag=True,
                                             names=["a", "b"], mode="slow"),
        "call_tool Six (JSON)": lambda: call_tool("Six", six_json, registry=registry),
    }
    anchor = pydantic_ai_calls(six_json)
    calls.update(anchor)
    medians = alternate_calls(calls, args.number, args.repeat)
    print(f"dispatch, medians of {args.repeat} interleaved repeats of {args.number} calls; "
          f"{load_note()}")
    print(f"  {'':<22} {'wall':>10} {'CPU':>10}")
    for name, value in medians.items():
        print(f"  {name:<22} {value.wall * 1e6:7.2f} µs {value.cpu * 1e6:7.2f} µs")
    verdicts = []
    for label, direct, dispatched, floor in (
        ("Ping", "Ping.run()", "call_tool Ping", 1.0),
        ("Six", "Six.run(**kwargs)", "call_tool Six (JSON)", 2.5),
    ):
        added = (medians[dispatched].cpu - medians[direct].cpu) * 1e6
        added_wall = (medians[dispatched].wall - medians[direct].wall) * 1e6
        ratio = medians[dispatched].cpu / medians[direct].cpu
        target = floor
        line = f"{label}: {added:.2f} µs added in CPU time ({added_wall:.2f} µs wall; {ratio:.0f}x the direct call)"
        if anchor:
            theirs = (medians[f"pydantic-ai {label}"].cpu - medians[f"{label} function"].cpu) * 1e6
            target = max(floor, 2 * theirs)
            line += (f"; pydantic-ai's validate-then-call adds {theirs:.2f} µs, janito "
                     f"{added / theirs:.1f}x that")
        print(f"{line}; target at most {target:.2f} µs added: {verdict(added, target)}")
        verdicts.append(verdict(added, target))
    if not anchor:
        print("pydantic-ai-slim is not installed: no anchor (bench/requirements.txt)")
    return exit_status(*verdicts)


def pydantic_ai_calls(six_json: str) -> dict[str, Any]:
    """The anchor's calls (and the direct calls of its functions), or none without
    pydantic-ai."""
    try:
        from pydantic.json_schema import GenerateJsonSchema
        from pydantic_ai._function_schema import function_schema
    except ImportError:
        return {}

    def ping() -> dict[str, Any]:
        """Answer at once."""
        return {"success": True}

    def six(text: str, count: int, ratio: float, flag: bool, names: list[str],
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

    ping_schema = function_schema(ping, GenerateJsonSchema, takes_ctx=False)
    six_schema = function_schema(six, GenerateJsonSchema, takes_ctx=False)
    ping_validate = ping_schema.validator.validate_json
    six_validate = six_schema.validator.validate_json
    assert six(**six_validate(six_json)) == {"success": True}
    return {
        "Ping function": lambda: ping(),
        "pydantic-ai Ping": lambda: ping(**ping_validate("{}")),
        "Six function": lambda: six(text="hello", count=5, ratio=2.5, flag=True,
                                    names=["a", "b"], mode="slow"),
        "pydantic-ai Six": lambda: six(**six_validate(six_json)),
    }

if __name__ == "__main__":
    sys.exit(main())
