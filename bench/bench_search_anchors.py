"""SearchText, SearchRegex and FindFiles against ripgrep (`rg -j2`) and fd (`fd -j2`).

Two trees: a copy of the running interpreter's standard library (as bench_search_text.py
makes it), and a generated tree of 100,000 files and about 2 GB (1,000 folders of 100
files, three levels deep; text files of about 20 KB of Python-like lines, one in twenty
binary). Both hold no ignore files and no hidden files, so ripgrep and fd (given
`--hidden --no-ignore`, and `-j2` for the two CPUs of the machines these run on) look at
exactly the files the tools look at, and the benchmark checks that they count the same
lines and paths.

A third tree, `--tree ignored`, is the stdlib copy with a common Python `.gitignore` at its
root, as a project has one: the tools follow it, and so do ripgrep and fd, which read the
same rules from an `.ignore` beside it (they read a `.gitignore` only inside a git
repository).

ripgrep comes from the `ripgrep` wheel (bench/requirements.txt) or the system; fd from
the system (`fd` or Debian's `fdfind`), the `fd-find` wheel where an index has one. A
missing anchor is reported and its rows skipped.

Each query runs the tool (in this process, through its registry, the compiled steps when
the wheel has them) and the anchor alternately; the figures are medians of wall time, and
of CPU time (this process's, against the anchor's rusage). Target (issue 37): the tool at
most 1.0x its anchor's wall time.

    python bench/bench_search_anchors.py [--rounds 5] [--tree stdlib|generated|both|ignored]
        [--only FindFiles]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import load_note

LITERALS = ["def", "import", "raise ValueError", "zq_absent_qz"]
REGEXES = [r"def [a-z_]+\(self", r"^\s+return [a-z]+\(", r"[A-Z][a-z]+Error\b"]
GLOBS = ["*.py", "*_test*", "*"]

PYTHON_GITIGNORE = """\
__pycache__/
*.py[cod]
*$py.class
*.so
.Python
build/
develop-eggs/
dist/
downloads/
eggs/
.eggs/
lib64/
parts/
sdist/
var/
wheels/
*.egg-info/
.installed.cfg
*.egg
MANIFEST
*.manifest
*.spec
pip-log.txt
htmlcov/
.tox/
.nox/
.coverage
.coverage.*
.cache
nosetests.xml
coverage.xml
*.cover
.hypothesis/
.pytest_cache/
*.mo
*.pot
*.log
local_settings.py
db.sqlite3
instance/
docs/_build/
target/
.ipynb_checkpoints
.env
.venv
env/
venv/
ENV/
/site
.mypy_cache/
.pyre/
cython_debug/
"""
"""What `--tree ignored` puts at the stdlib copy's root: the rules most Python projects
keep (the common template's, less its rarer lines)."""

FILLER = ("alpha beta gamma delta value items key data result error None True for in if "
          "else while with as try except lambda yield").split()


def find_binary(*names: str) -> str | None:
    here = Path(sys.prefix, "bin")
    for name in names:
        if (here / name).exists():
            return str(here / name)
        found = shutil.which(name)
        if found:
            return found
    return None


def copy_stdlib(target: str) -> None:
    source = sysconfig.get_paths()["stdlib"]
    skip = {"site-packages", "dist-packages"}
    shutil.copytree(source, target, symlinks=True,
                    ignore=lambda folder, names: [n for n in names if n in skip
                                                  and os.path.samefile(folder, source)])


def generate(target: str, files: int = 100_000, per_folder: int = 100,
             size: int = 20_000) -> None:
    """``files`` files of about ``size`` bytes in folders of ``per_folder``, three deep.

    Lines of filler words, with a `def` line one time in 200 (half of them methods), an
    `import` one time in 1,000, a `raise ValueError` one time in 10,000 and an indented
    `return` one time in 300: every query finds thousands of lines, none finds millions.
    """
    rng = random.Random(37)
    blocks = []
    for _ in range(64):
        lines = []
        total = 0
        while total < size:
            roll = rng.random()
            words = " ".join(rng.choice(FILLER) for _ in range(rng.randrange(2, 8)))
            if roll < 0.005:
                line = f"    def {rng.choice(FILLER)}_{rng.randrange(99)}(self, {words}):\n" \
                    if roll < 0.0025 else f"def {rng.choice(FILLER)}({words}):\n"
            elif roll < 0.006:
                line = f"import {words}\n"
            elif roll < 0.0061:
                line = f"        raise ValueError({words!r})\n"
            elif roll < 0.0095:
                line = f"        return {rng.choice(FILLER).lower()}({words})\n"
            else:
                line = " " * rng.choice([0, 4, 8]) + words + "\n"
            lines.append(line)
            total += len(line)
        blocks.append("".join(lines).encode())
    binary = bytes(rng.randrange(256) for _ in range(size))
    folders = files // per_folder
    for number in range(folders):
        folder = os.path.join(target, f"a{number % 10}", f"b{number // 10 % 10}",
                              f"c{number // 100}")
        os.makedirs(folder, exist_ok=True)
        for index in range(per_folder):
            suffix = "bin" if index % 20 == 0 else "py"
            name = f"m{index}{'_test' if index % 7 == 0 else ''}.{suffix}"
            data = binary if index % 20 == 0 else blocks[(number * per_folder + index) % 64]
            with open(os.path.join(folder, name), "wb") as handle:
                handle.write(data)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_anchor(argv: list[str], cwd: str) -> tuple[float, float, int]:
    cpu = children_cpu()
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          env={**os.environ, "LC_ALL": "C"}, check=False)
    wall = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{argv} failed with exit code {done.returncode}")
    return wall, children_cpu() - cpu, done.stdout.count(b"\n")


def run_tool(tool: Any, arguments: dict[str, Any], key: str) -> tuple[float, float, int]:
    cpu = time.process_time()
    start = time.perf_counter()
    result = tool(**arguments)
    wall = time.perf_counter() - start
    if not result["success"]:
        raise ToolFailed(result["error"])
    return wall, time.process_time() - cpu, result[key]


class ToolFailed(Exception):
    """The tool answered a failure (a regular expression out of time, on a loaded machine)."""


def measure(tree: str, label: str, tools: dict[str, Any], rg: str | None, fd: str | None,
            rounds: int, only: str = "", ignore_files: bool = False) -> list[float]:
    """The cases over ``tree``; ``ignore_files``: the anchors follow its ignore files, as
    the tools do (otherwise they are told to look at everything, as the tools do there)."""
    everything = [] if ignore_files else ["--no-ignore"]
    cases: list[tuple[str, Any, dict[str, Any], str, list[str] | None]] = []
    for query in LITERALS:
        cases.append((f"SearchText {query!r}", tools["SearchText"],
                      {"paths": ".", "query": query, "max_results": 10_000_000}, "count",
                      [rg, "-j2", "-n", "--hidden", *everything, "-F", "-e", query, "."]
                      if rg else None))
    for pattern in REGEXES:
        cases.append((f"SearchRegex {pattern!r}", tools["SearchRegex"],
                       {"paths": ".", "pattern": pattern, "max_results": 10_000_000}, "count",
                       [rg, "-j2", "-n", "--hidden", *everything, "-e", pattern, "."]
                       if rg else None))
    for glob in GLOBS:
        cases.append((f"FindFiles {glob!r}", tools["FindFiles"],
                      {"paths": ".", "pattern": glob, "max_results": 10_000_000}, "count",
                      [fd, "-j2", "--hidden", *everything, "-t", "f", "-g", glob, "."]
                      if fd else None))
    ratios = []
    print(f"\n{label}; {rounds} alternating rounds; {load_note()}")
    print(f"{'case':<40} {'found':>9} {'tool s':>8} {'anchor s':>9} {'wall':>6} "
          f"{'tool CPU':>9} {'anchor CPU':>11} {'CPU':>6}")
    for name, tool, arguments, key, anchor in cases:
        if only not in name:
            continue
        if anchor is None:
            print(f"{name:<40} (no anchor installed)")
            continue
        tool_runs, anchor_runs = [], []
        found = anchored = 0
        try:
            run_anchor(anchor, tree)  # warm the page cache
            run_tool(tool, arguments, key)
            for _ in range(rounds):
                wall, cpu, found = run_tool(tool, arguments, key)
                tool_runs.append((wall, cpu))
                wall, cpu, anchored = run_anchor(anchor, tree)
                anchor_runs.append((wall, cpu))
        except ToolFailed as exc:
            print(f"{name:<40} FAILED: {exc}")
            ratios.append(float("inf"))
            continue
        if found != anchored:
            print(f"{name:<40} MISMATCH: the tool found {found}, the anchor {anchored}")
            continue
        tw = statistics.median(w for w, _ in tool_runs)
        tc = statistics.median(c for _, c in tool_runs)
        aw = statistics.median(w for w, _ in anchor_runs)
        ac = statistics.median(c for _, c in anchor_runs)
        ratios.append(tw / aw)
        print(f"{name:<40} {found:>9} {tw:>8.3f} {aw:>9.3f} {tw / aw:>5.2f}x "
              f"{tc:>9.3f} {ac:>11.3f} {tc / ac:>5.2f}x")
    return ratios


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tree", choices=("stdlib", "generated", "both", "ignored"),
                        default="both")
    parser.add_argument("--only", default="", help="run only the cases whose name holds this")
    args = parser.parse_args()
    rg = find_binary("rg")
    fd = find_binary("fd", "fdfind")
    print(f"ripgrep: {rg or 'not installed'}; fd: {fd or 'not installed'}")

    from janito_files import _listing, _search

    from janito_core import Registry, Workspace

    # Every line and path is counted against the anchor's, so the caps are lifted.
    _search.MAX_RESULTS_LIMIT = 10_000_000
    _listing.MAX_RESULTS_LIMIT = 10_000_000
    try:
        from janito_files import _steps as steps
    except ImportError:  # janito-files from before the batches (a comparison run)
        steps = _search
    compiled = steps.read_searchable_at is not steps.read_searchable_at_py
    print("search steps: " + ("compiled" if compiled else "Python (no compiled module)"))
    ratios: list[float] = []
    with tempfile.TemporaryDirectory(prefix="janito-bench-anchors-") as temp:
        trees = []
        if args.tree in ("stdlib", "both"):
            tree = os.path.join(temp, "stdlib")
            copy_stdlib(tree)
            trees.append((tree, f"copy of {sysconfig.get_paths()['stdlib']}", False))
        if args.tree == "ignored":
            tree = os.path.join(temp, "ignored")
            copy_stdlib(tree)
            for name in (".gitignore", ".ignore"):
                Path(tree, name).write_text(PYTHON_GITIGNORE)
            trees.append((tree, f"copy of {sysconfig.get_paths()['stdlib']} with a common "
                                f"Python .gitignore at its root", True))
        if args.tree in ("generated", "both"):
            tree = os.path.join(temp, "generated")
            started = time.perf_counter()
            generate(tree)
            os.sync()  # written back now, not while the first cases run
            trees.append((tree, f"generated tree, 100,000 files, about 2 GB (made in "
                                f"{time.perf_counter() - started:.0f} s)", False))
        for tree, label, ignore_files in trees:
            registry = Registry(workspace=Workspace(tree), autoload=("files",), allowed=None)
            _mute_reports(registry)
            ratios += measure(tree, label, registry.tools(), rg, fd, args.rounds, args.only,
                              ignore_files)
            shutil.rmtree(tree)
    if not ratios:
        print("no anchor installed: nothing compared")
        return 0
    print(f"\nworst ratio to the anchor (wall): {max(ratios):.2f}x (target: at most 1.00x)")
    return 0 if max(ratios) <= 1.0 else 1


def _mute_reports(registry: Any) -> None:
    from janito_core.plugins import STDERR_PLUGIN

    manager = registry.plugins.manager
    if manager.get_plugin(STDERR_PLUGIN) is not None:
        manager.unregister(name=STDERR_PLUGIN)


if __name__ == "__main__":
    sys.exit(main())
