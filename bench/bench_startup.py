"""Start-up: whole-process `janito tools --json` against the entry-point floor.

janito-core, janito-files and janito-system are installed from this tree into a fresh
virtual environment (bytecode compiled, as an ordinary install leaves it). The floor is
`python -c "import importlib_metadata as m; m.entry_points(group='janito.toolsets')"` in
that same environment. Target: at most 1.5x the floor.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _common import ROOT, alternate, make_venv, timing_env, verdict

TARGET = 1.5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="janito-bench-startup-") as tmp:
        venv = make_venv(Path(tmp) / "venv", str(ROOT), str(ROOT / "plugins" / "janito-files"),
                         str(ROOT / "plugins" / "janito-system"))
        python = str(venv / "bin" / "python")
        janito = str(venv / "bin" / "janito")
        commands = {
            "floor": [python, "-c", "import importlib_metadata as m; "
                      "m.entry_points(group='janito.toolsets')"],
            "python -c pass": [python, "-c", "pass"],
            "janito tools --json": [janito, "tools", "--json"],
            "janito toolsets --json": [janito, "toolsets", "--json"],
            "janito --help": [janito, "--help"],
        }
        medians = alternate(commands, args.runs, env=timing_env(), cwd=tmp)
    floor = medians["floor"]
    print(f"start-up, median of {args.runs} alternating runs")
    for name, value in medians.items():
        print(f"  {name:<24} {value * 1000:7.1f} ms   {value / floor:5.2f}x floor")
    ratio = medians["janito tools --json"] / floor
    print(f"janito tools --json: {ratio:.2f}x the floor (target {TARGET}x): {verdict(ratio, TARGET)}")


if __name__ == "__main__":
    main()
