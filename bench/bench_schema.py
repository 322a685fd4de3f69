"""Schema generation for every tool of the files and system toolsets.

First build: the class's cached schema is dropped and rebuilt (signature, docstring
parsing, both the ordinary and the strict schema) as it is the first time a loaded tool's
schema is asked for; the type hints were resolved when the registry gated the tool at load
time (that cost is part of start-up) and are reused. From scratch: the hints are dropped
too and resolved again, as for a tool class that was never loaded. Cached: the lookup
every later call pays. Baseline in the same run: `inspect.signature` plus
`typing.get_type_hints` of each `run()`, the least any schema generator must do.
Targets: first build at most 150 µs per tool on average; cached at most 1 µs.
"""

from __future__ import annotations

import argparse
import inspect
import sys
import typing

from _common import alternate_calls, exit_status, load_note, verdict

from janito_core import Registry
from janito_core.schema import tool_schema


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    registry = Registry(autoload=("files", "system"))
    classes = [r.cls for r in registry.records() if r.toolset in ("files", "system")]
    if not classes:
        raise SystemExit("install janito-files and janito-system first")
    tool_schema(classes[0])  # the parser module is imported once per process, not per tool

    def first_build() -> None:
        for cls in classes:
            cls.__dict__.get("_janito_schema") and delattr(cls, "_janito_schema")
            tool_schema(cls)

    def from_scratch() -> None:
        for cls in classes:
            for attr in ("_janito_schema", "_janito_hints"):
                cls.__dict__.get(attr) and delattr(cls, attr)
            tool_schema(cls)

    def cached() -> None:
        for cls in classes:
            tool_schema(cls)

    def baseline() -> None:
        for cls in classes:
            inspect.signature(cls.run)
            typing.get_type_hints(cls.run, include_extras=True)

    medians = alternate_calls({"first build": first_build, "from scratch": from_scratch,
                               "cached": cached, "signature + hints": baseline}, 20, args.repeat)
    per_tool = {name: value.cpu / len(classes) * 1e6 for name, value in medians.items()}
    wall = {name: value.wall / len(classes) * 1e6 for name, value in medians.items()}
    print(f"schema generation over {len(classes)} tools, medians of {args.repeat} repeats; "
          f"{load_note()}")
    print(f"  {'':<18} {'CPU per tool':>12} {'ratio':>6}   {'wall per tool':>13}")
    for name, value in per_tool.items():
        print(f"  {name:<18} {value:9.2f} µs {value / per_tool['signature + hints']:5.2f}x   "
              f"{wall[name]:10.2f} µs")
    print(f"first build: {per_tool['first build']:.1f} µs per tool in CPU time "
          f"({wall['first build']:.1f} µs wall; target 150): {verdict(per_tool['first build'], 150)}")
    print(f"from scratch (hints resolved again): {per_tool['from scratch']:.1f} µs per tool in CPU "
          f"time ({wall['from scratch']:.1f} µs wall; target 150): "
          f"{verdict(per_tool['from scratch'], 150)}")
    print(f"cached: {per_tool['cached']:.3f} µs per tool in CPU time ({wall['cached']:.3f} µs wall; "
          f"target 1): {verdict(per_tool['cached'], 1)}")
    return exit_status(verdict(per_tool["first build"], 150), verdict(per_tool["from scratch"], 150),
                       verdict(per_tool["cached"], 1))

if __name__ == "__main__":
    sys.exit(main())
