"""SearchText and SearchRegex against ``grep -rn`` on a copy of the Python standard library.

Copies the standard library of the running interpreter (``sysconfig.get_paths()["stdlib"]``,
without its ``site-packages``/``dist-packages``, which hold third-party code) to a temporary
folder, then for each query runs ``grep -rn`` and SearchText on it alternately, checks that
both report the same number of matching lines, and prints the medians and the ratio
SearchText / grep. grep runs with ``LC_ALL=C`` so that, like SearchText, it treats only files
holding NUL bytes as binary (in a UTF-8 locale it also hides lines of files that are not
valid UTF-8); it is also grep's fastest mode.

grep runs twice: as ``grep -rn`` (the issue's baseline), which reads every binary file to
its end, and as ``grep -rnI``, which skips binary files as SearchText does and is the
stricter comparison. Two SearchText figures are printed: the tool called through its
registry (``tool``), and the whole model-facing path (``dispatch``: argument validation
and result checking by ``call_tool`` included). The target is ``tool`` at most 2x grep.

A third baseline, ``floor``, is what any search written in Python pays before it matches
anything: the same folders listed and the same files opened, sized, read (a binary file's
first 8 KiB) and closed through ``os`` calls in a bare loop, with one ``bytes.find`` per
file. It shows how much of the distance to grep a faster matcher could close.

    python bench/bench_search_text.py [--rounds 5] [--query TEXT ...] [--regex EXPR ...]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from typing import Any

DEFAULT_QUERIES = ["def", "import", "raise ValueError", "zq_absent_qz"]
DEFAULT_REGEXES = [r"def [a-z_]+\(self"]


def copy_stdlib(target: str) -> tuple[int, int]:
    source = sysconfig.get_paths()["stdlib"]
    skip = {"site-packages", "dist-packages"}
    shutil.copytree(source, target, symlinks=True,
                    ignore=lambda folder, names: [n for n in names if n in skip
                                                  and os.path.samefile(folder, source)])
    files = size = 0
    for folder, _dirs, names in os.walk(target):
        for name in names:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                files += 1
                size += os.path.getsize(path)
    return files, size


def run_grep(tree: str, query: str, regex: bool, skip_binary: bool = False) -> tuple[float, int]:
    command = ["grep", "-rnI" if skip_binary else "-rn", *(["-E"] if regex else ["-F"]), "-e",
               query, "."]
    env = {**os.environ, "LC_ALL": "C"}
    start = time.perf_counter()
    done = subprocess.run(command, cwd=tree, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"grep failed with exit code {done.returncode}")
    lines = [line for line in done.stdout.split(b"\n") if line
             and not (line.startswith(b"Binary file ") and line.endswith(b" matches"))]
    return elapsed, len(lines)


def run_floor(tree: str, query: str) -> float:
    """Seconds of the bare loop described in the module's docstring."""
    needle = query.encode()
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
    folder_flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    start = time.perf_counter()
    folders = [os.open(tree, folder_flags)]
    while folders:
        folder = folders.pop()
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda e: e.name)
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                folders.append(os.open(entry.name, folder_flags, dir_fd=folder))
            elif entry.is_file(follow_symlinks=False):
                fd = os.open(entry.name, flags, dir_fd=folder)
                size = os.fstat(fd).st_size
                data = os.read(fd, 8192)
                if len(data) == 8192 and b"\x00" not in data:
                    data += os.read(fd, size + 1 - len(data))
                os.close(fd)
                data.find(needle)
        os.close(folder)
    return time.perf_counter() - start


def arguments(query: str, regex: bool) -> dict[str, Any]:
    """The call: SearchText for a literal query, SearchRegex for a regular expression."""
    return {"paths": ".", ("pattern" if regex else "query"): query, "case_sensitive": True,
            "max_results": 10_000_000}


def run_tool(tools: dict[str, Any], query: str, regex: bool) -> tuple[float, int]:
    search = tools["SearchRegex" if regex else "SearchText"]
    start = time.perf_counter()
    result = search(**arguments(query, regex))
    elapsed = time.perf_counter() - start
    if not result["success"]:
        raise SystemExit(f"SearchText failed: {result['error']}")
    return elapsed, result["count"]


def run_dispatch(registry: Any, query: str, regex: bool) -> tuple[float, int]:
    from janito_core.dispatch import call_tool

    start = time.perf_counter()
    result = call_tool("SearchRegex" if regex else "SearchText", arguments(query, regex),
                       registry=registry, max_result_chars=1 << 40)
    elapsed = time.perf_counter() - start
    if not result["success"]:
        raise SystemExit(f"SearchText failed: {result['error']}")
    return elapsed, result["count"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--query", action="append", help="a literal query (repeatable)")
    parser.add_argument("--regex", action="append", help="an extended regex (repeatable)")
    args = parser.parse_args()
    if shutil.which("grep") is None:
        print("grep is not installed; nothing to compare against", file=sys.stderr)
        return 1
    queries = [(q, False) for q in (args.query or ([] if args.regex else DEFAULT_QUERIES))]
    queries += [(r, True) for r in (args.regex or ([] if args.query else DEFAULT_REGEXES))]

    from janito_files import _search

    from janito_core import Registry, Workspace

    # Every matching line is counted against grep's, so the tool's cap on one answer
    # (10,000 lines) is lifted for the measurement.
    _search.MAX_RESULTS_LIMIT = 10_000_000

    with tempfile.TemporaryDirectory(prefix="janito-bench-") as temp:
        tree = os.path.join(temp, "stdlib")
        files, size = copy_stdlib(tree)
        registry = Registry(workspace=Workspace(tree), autoload=("files",), allowed=None)
        _mute_reports(registry)
        search = registry.tools()
        print(f"tree: copy of {sysconfig.get_paths()['stdlib']} ({files} files, "
              f"{size / 1e6:.0f} MB), {args.rounds} alternating rounds per query")
        from janito_files import _steps

        compiled = _steps.read_searchable_at is not _steps.read_searchable_at_py
        print("per-file steps: " + ("compiled (janito_files._speedups)" if compiled else
                                    "Python (janito-files was installed without its compiled "
                                    "module: an editable install, or no C compiler)"))
        print(f"{'query':<26} {'matches':>8} {'grep s':>8} {'tool s':>8} {'ratio':>6} "
              f"{'dispatch s':>10} {'ratio':>6} {'grep -I s':>9} {'ratio':>6} "
              f"{'floor s':>8} {'floor/grep -I':>13}")
        worst = worst_i = 0.0
        for query, regex in queries:
            run_grep(tree, query, regex)  # warm the page cache
            run_tool(search, query, regex)
            grep_times, grep_i_times, tool_times, dispatch_times = [], [], [], []
            floor_times: list[float] = []
            grep_count = grep_i_count = tool_count = dispatch_count = 0
            for _ in range(args.rounds):
                elapsed, grep_count = run_grep(tree, query, regex)
                grep_times.append(elapsed)
                elapsed, grep_i_count = run_grep(tree, query, regex, skip_binary=True)
                grep_i_times.append(elapsed)
                elapsed, tool_count = run_tool(search, query, regex)
                tool_times.append(elapsed)
                elapsed, dispatch_count = run_dispatch(registry, query, regex)
                dispatch_times.append(elapsed)
                if not regex:
                    floor_times.append(run_floor(tree, query))
            if not grep_count == grep_i_count == tool_count == dispatch_count:
                print(f"MISMATCH for {query!r}: grep {grep_count} lines (-I: {grep_i_count}), SearchText "
                      f"{tool_count} (dispatch {dispatch_count})")
                return 1
            g = statistics.median(grep_times)
            gi = statistics.median(grep_i_times)
            t = statistics.median(tool_times)
            d = statistics.median(dispatch_times)
            worst = max(worst, t / g)
            worst_i = max(worst_i, t / gi)
            label = ("re:" if regex else "") + query
            floor = (f"{statistics.median(floor_times):>8.3f} "
                     f"{statistics.median(floor_times) / gi:>13.2f}" if floor_times else "")
            print(f"{label:<26} {tool_count:>8} {g:>8.3f} {t:>8.3f} {t / g:>6.2f} "
                  f"{d:>10.3f} {d / g:>6.2f} {gi:>9.3f} {t / gi:>6.2f} {floor}")
        print(f"worst ratio SearchText/grep -rn: {worst:.2f} (target: at most 2.00)")
        print(f"worst ratio SearchText/grep -rnI (binary files skipped, as SearchText does): "
              f"{worst_i:.2f}")
    return 0 if worst <= 2.0 else 1


def _mute_reports(registry: Any) -> None:
    """Drop the stderr report renderer, so printing is not part of the measurement."""
    from janito_core.plugins import STDERR_PLUGIN

    manager = registry.plugins.manager
    if manager.get_plugin(STDERR_PLUGIN) is not None:
        manager.unregister(name=STDERR_PLUGIN)


if __name__ == "__main__":
    sys.exit(main())
