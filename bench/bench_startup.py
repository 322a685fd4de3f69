"""Start-up: whole-process `janito tools --json` and `janito run ReadFile` against the
entry-point floor.

janito-core, janito-files, janito-system and janito-mcp (whose `janito mcp` command is
registered on every start) are installed from this tree into a fresh virtual environment
(bytecode compiled, as an ordinary install leaves it). The floor is
`python -c "import importlib_metadata as m; m.entry_points(group='janito.toolsets')"` in
that same environment. Target (issue 37): at most 1.2x the floor for both commands.
`bench_startup_serve.py` measures `janito mcp serve`.

janito remembers what each toolset's modules define in a manifest in its state folder
(docs/authoring-toolsets.md) and imports a module when one of its tools is first
called; it also keeps the last scan of the entry points, used while no distribution on
`sys.path` changed (docs/decisions/0023). The benchmark gives janito a state folder of
its own, waits until the installed files are old enough for both to be kept, and checks
that they were. `janito tools --json` with nothing kept (its state folder unable to keep
anything: every start scans the entry points and imports every module, as the first
start after an install does) is measured beside it.

Also measured, for attribution: `python -c pass`, janito with no toolset allowed
(JANITO_TOOLSETS set empty: the core and its command alone), `janito toolsets --json`
and `janito --help`. All commands are interleaved run by run; the figures are medians of
wall time and of the CPU time (user + system) of each process.

pydantic is installed in the same environment, and `python -c "import pydantic; ..."`
(importing it and defining one model) is measured beside the rest: what a toolset whose
tools take or return models pays. janito itself looks for models without importing it;
the benchmark checks that `janito tools --json` leaves pydantic unimported, and says so.

    python bench/bench_startup.py [--runs 40]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, Command, alternate, exit_status, load_note, make_venv, timing_env, verdict

TARGET = 1.2


def check_output(janito: str, cwd: str, env: dict[str, str]) -> int:
    """Run `janito tools --json` once and make sure it lists the files and system tools."""
    done = subprocess.run([janito, "tools", "--json"], env=env, cwd=cwd,
                          capture_output=True, text=True, check=True)
    rows = json.loads(done.stdout)
    toolsets = {row["toolset"] for row in rows if row["status"] != "error"}
    errors = [row for row in rows if row["status"] == "error"]
    if not {"files", "system"} <= toolsets or errors:
        raise SystemExit(f"janito tools --json did not list files and system cleanly: {rows}")
    return len(rows)


PYDANTIC_PROBE = ("import sys\n"
                  "from janito_core.cli import main\n"
                  "main(['tools', '--json'])\n"
                  "print('pydantic' in sys.modules, file=sys.stderr)\n")


def imports_pydantic(python: str, cwd: str, env: dict[str, str]) -> bool:
    """Whether `janito tools --json`, run in ``python``'s environment, imports pydantic."""
    done = subprocess.run([python, "-c", PYDANTIC_PROBE], env=env, cwd=cwd,
                          capture_output=True, text=True, check=True)
    return done.stderr.strip().splitlines()[-1] == "True"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="janito-bench-startup-") as tmp:
        venv = make_venv(Path(tmp) / "venv", str(ROOT), str(ROOT / "plugins" / "janito-files"),
                         str(ROOT / "plugins" / "janito-system"),
                         str(ROOT / "plugins" / "janito-mcp"), "pydantic>=2")
        python = str(venv / "bin" / "python")
        janito = str(venv / "bin" / "janito")
        state = Path(tmp, "state")
        env = timing_env({"JANITO_CONFIG_DIR": str(state)})
        unkept = Path(tmp, "state-without-manifests")
        unkept.mkdir()
        Path(unkept, "cache").write_text("a file where the manifests' folder would be\n")
        settled = subprocess.run([python, "-c", "from janito_core import _manifest; "
                                  "print(_manifest.SETTLED_SECONDS)"],
                                 capture_output=True, text=True, check=True)
        time.sleep(float(settled.stdout) + 0.5)  # files this new are not remembered yet
        tools = check_output(janito, tmp, env)
        manifests = sorted(state.glob("cache/toolsets/*.json"))
        if len(manifests) != 2:
            raise SystemExit(f"expected the manifests of files and system, found {manifests}")
        if len(list(state.glob("cache/discovery/*.json"))) != 1:
            raise SystemExit("expected the scan of the entry points to be kept")
        pydantic_imported = imports_pydantic(python, tmp, env)
        Path(tmp, "notes.txt").write_text("a line to read\n" * 20)
        commands = {
            "floor": [python, "-c", "import importlib_metadata as m; "
                      "m.entry_points(group='janito.toolsets')"],
            "python -c pass": [python, "-c", "pass"],
            "janito tools --json": [janito, "tools", "--json"],
            "  nothing kept": Command([janito, "tools", "--json"],
                                           timing_env({"JANITO_CONFIG_DIR": str(unkept)})),
            "janito run ReadFile": [janito, "run", "ReadFile", "--no-journal", "--args",
                                    '{"filepath": "notes.txt"}'],
            "  no toolset allowed": Command([janito, "tools", "--json"],
                                            {**env, "JANITO_TOOLSETS": ""}),
            "janito toolsets --json": [janito, "toolsets", "--json"],
            "janito --help": [janito, "--help"],
            "import pydantic, one model": [python, "-c", "import pydantic\n"
                                           "class M(pydantic.BaseModel):\n    x: int"],
        }
        medians = alternate(commands, args.runs, env=env, cwd=tmp)
    floor = medians["floor"]
    print(f"start-up, medians of {args.runs} interleaved runs; {load_note()}")
    print(f"  {'command':<26} {'wall':>9} {'ratio':>6}   {'CPU':>9} {'ratio':>6}")
    for name, value in medians.items():
        ratio = value.ratio(floor)
        print(f"  {name:<26} {value.wall * 1000:6.1f} ms {ratio.wall:5.2f}x   "
              f"{value.cpu * 1000:6.1f} ms {ratio.cpu:5.2f}x")
    print(f"pydantic installed; imported by janito tools --json: "
          f"{'YES (a regression)' if pydantic_imported else 'no'}")
    verdicts = []
    for name in ("janito tools --json", "janito run ReadFile"):
        ratio = medians[name].ratio(floor)
        verdicts.append(verdict(ratio.cpu, TARGET))
        print(f"{name}{f' ({tools} tools)' if 'tools' in name else ''}: {ratio.cpu:.2f}x the "
              f"floor in CPU time, {ratio.wall:.2f}x in wall time (target {TARGET}x): "
              f"{verdicts[-1]} (CPU), {verdict(ratio.wall, TARGET)} (wall)")
    return exit_status(*verdicts, "MISSES target" if pydantic_imported else "meets target")

if __name__ == "__main__":
    sys.exit(main())
