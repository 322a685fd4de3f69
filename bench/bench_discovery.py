"""Discovery at scale: N installed toolset distributions of five tools each.

For N = 10, 100 and 500, real `NAME-VERSION.dist-info` folders and packages are written
to a temporary folder put on PYTHONPATH. Measured in fresh processes, alternating:

- the floor: `importlib_metadata.entry_points(group="janito.toolsets")`;
- listing: `Registry(autoload=()).toolsets()` (reads entry points, imports nothing);
- loading all: `add_toolset` for each of the N toolsets.

Targets: listing at N=500 at most 2x the floor; loading grows linearly in N (the time
per toolset stays flat).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _common import alternate, timing_env, verdict

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--sizes", default="10,100,500")
    args = parser.parse_args()
    sizes = [int(n) for n in args.sizes.split(",")]
    rows = []
    for count in sizes:
        with tempfile.TemporaryDirectory(prefix=f"janito-bench-{count}-") as tmp:
            folder = Path(tmp)
            write_distributions(folder, count)
            env = timing_env({"PYTHONPATH": str(folder), "JANITO_TOOLSETS": ""})
            env.pop("JANITO_TOOLSETS")
            import sys

            python = sys.executable
            load = (
                "from janito_core import Registry\n"
                "r = Registry(autoload=())\n"
                "names = [n for n in r.toolsets() if n.startswith('ts')]\n"
                "for n in names: r.add_toolset(n)\n"
                f"assert len(r.names()) >= 5 * {count}, len(r.names())\n"
            )
            # one untimed pass writes the bytecode caches, as an installer would
            alternate({"load": [python, "-c", load]}, 0, env=env, warmup=1)
            medians = alternate({
                "floor": [python, "-c", "import importlib_metadata as m; "
                          "m.entry_points(group='janito.toolsets')"],
                "listing": [python, "-c", "from janito_core import Registry; "
                            "Registry(autoload=()).toolsets()"],
                "load all": [python, "-c", load],
            }, args.runs, env=env)
            rows.append((count, medians))
    print(f"discovery at scale, medians of {args.runs} alternating runs (fresh processes)")
    print(f"  {'N':>4} {'floor':>9} {'listing':>9} {'ratio':>6} {'load all':>10} {'per toolset':>12}")
    for count, m in rows:
        per = (m["load all"] - m["floor"]) / count * 1000
        print(f"  {count:>4} {m['floor'] * 1000:7.1f}ms {m['listing'] * 1000:7.1f}ms "
              f"{m['listing'] / m['floor']:5.2f}x {m['load all'] * 1000:8.1f}ms {per:9.2f}ms")
    count, m = rows[-1]
    ratio = m["listing"] / m["floor"]
    print(f"listing at N={count}: {ratio:.2f}x the floor (target 2x): {verdict(ratio, 2.0)}")
    if len(rows) >= 2:
        first = (rows[0][1]["load all"] - rows[0][1]["floor"]) / rows[0][0]
        last = (rows[-1][1]["load all"] - rows[-1][1]["floor"]) / rows[-1][0]
        print(f"loading: {first * 1000:.2f} ms per toolset at N={rows[0][0]}, "
              f"{last * 1000:.2f} ms at N={rows[-1][0]} ({last / first:.2f}x: "
              f"{'linear' if last / first < 1.5 else 'worse than linear'})")


if __name__ == "__main__":
    main()
