"""Discovery at scale: N installed toolset distributions of five tools each.

For N = 10, 100 and 500, real `NAME-VERSION.dist-info` folders and packages are written
to a temporary folder put on PYTHONPATH. Measured in fresh processes, alternating:

- the floor: `importlib_metadata.entry_points(group="janito.toolsets")`;
- listing: `Registry(autoload=()).toolsets()` (reads entry points, imports nothing);
- loading all: `add_toolset` for each of the N toolsets.

Targets: listing at N=500 at most 2x the floor; loading grows linearly in N: the cost of
one more toolset (the slope between consecutive sizes) stays flat.

    python bench/bench_discovery.py [--runs 15] [--sizes 10,100,500]
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
from pathlib import Path

from _common import Timing, alternate, exit_status, load_note, timing_env, verdict

TOOL = '''from typing import Any
from janito_core import BaseTool, tool


@tool(permissions="r")
class {name}(BaseTool):
    """Tool {name}."""

    def run(self, text: str, count: int = 1) -> dict[str, Any]:
        """Echo.

        Args:
            text: Text.
            count: Count.
        """
        return {{"success": True}}
'''


def write_distributions(folder: Path, count: int) -> None:
    for index in range(count):
        package = f"bench_ts{index}"
        dist = folder / f"bench_ts{index}-1.0.dist-info"
        dist.mkdir()
        (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: bench-ts{index}\nVersion: 1.0\n")
        (dist / "entry_points.txt").write_text(f"[janito.toolsets]\nts{index} = {package}\n")
        (dist / "RECORD").write_text("")
        (folder / package).mkdir()
        (folder / package / "__init__.py").write_text("")
        for tool_index in range(5):
            name = f"T{index}x{tool_index}"
            (folder / package / f"t{tool_index}.py").write_text(TOOL.format(name=name))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--sizes", default="10,100,500")
    args = parser.parse_args()
    sizes = sorted(int(n) for n in args.sizes.split(","))
    python = sys.executable
    rows: list[tuple[int, dict[str, Timing]]] = []
    for count in sizes:
        with tempfile.TemporaryDirectory(prefix=f"janito-bench-{count}-") as tmp:
            folder = Path(tmp)
            write_distributions(folder, count)
            env = timing_env({"PYTHONPATH": str(folder)})
            env.pop("JANITO_TOOLSETS", None)
            listing = (
                "from janito_core import Registry\n"
                "found = Registry(autoload=()).toolsets()\n"
                f"assert sum(n.startswith('ts') for n in found) == {count}, len(found)\n"
            )
            load = (
                "from janito_core import Registry\n"
                "r = Registry(autoload=())\n"
                "names = [n for n in r.toolsets() if n.startswith('ts')]\n"
                "for n in names: r.add_toolset(n)\n"
                f"assert len(r.names()) >= 5 * {count}, len(r.names())\n"
                "assert not r.load_errors, r.load_errors\n"
            )
            # one untimed pass checks both and writes the bytecode caches, as an installer would
            alternate({"listing": [python, "-c", listing], "load": [python, "-c", load]}, 0,
                      env=env, warmup=1)
            medians = alternate({
                "floor": [python, "-c", "import importlib_metadata as m; "
                          "m.entry_points(group='janito.toolsets')"],
                "listing": [python, "-c", listing],
                "load all": [python, "-c", load],
            }, args.runs, env=env)
            rows.append((count, medians))
    print(f"discovery at scale, medians of {args.runs} interleaved runs (fresh processes); "
          f"{load_note()}")
    print("  CPU time (wall time in brackets)")
    print(f"  {'N':>4} {'floor':>17} {'listing':>17} {'ratio':>12} {'load all':>19}")
    for count, m in rows:
        ratio = m["listing"].ratio(m["floor"])
        print(f"  {count:>4} {m['floor'].cpu * 1000:6.1f} ({m['floor'].wall * 1000:6.1f}) ms "
              f"{m['listing'].cpu * 1000:6.1f} ({m['listing'].wall * 1000:6.1f}) ms "
              f"{ratio.cpu:5.2f}x ({ratio.wall:4.2f}x) "
              f"{m['load all'].cpu * 1000:7.1f} ({m['load all'].wall * 1000:7.1f}) ms")
    count, m = rows[-1]
    ratio = m["listing"].ratio(m["floor"])
    print(f"listing at N={count}: {ratio.cpu:.2f}x the floor in CPU time ({ratio.wall:.2f}x wall; "
          f"target 2x): {verdict(ratio.cpu, 2.0)}")
    if len(rows) >= 3:
        # Linear growth: the cost of one more toolset is the same at every size. Each slope
        # is the extra load time per extra toolset between two consecutive sizes.
        slopes = []
        for (n1, m1), (n2, m2) in itertools.pairwise(rows):
            slope = (m2["load all"].cpu - m1["load all"].cpu) / (n2 - n1)
            slopes.append(slope)
            print(f"loading, N={n1} to N={n2}: {slope * 1000:.3f} ms CPU per extra toolset "
                  f"({slope / 5 * 1e6:.0f} µs per tool)")
        growth = slopes[-1] / slopes[0]
        print(f"loading: the last slope is {growth:.2f}x the first (linear: under 1.5x): "
              f"{'linear' if growth < 1.5 else 'worse than linear'}")
        if growth >= 1.5:
            return 1
    return exit_status(verdict(ratio.cpu, 2.0))


if __name__ == "__main__":
    sys.exit(main())
