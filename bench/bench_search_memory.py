"""What a search holds of a large file, and what it costs in time to hold so little
(issue 31, item 9).

Two 64 MiB files whose every line matches: ``short.txt`` (11-byte lines, 6.1 M of them)
and ``wide.txt`` (1 KiB lines). Each measured search runs in a fresh child process, after
one warm-up call there, and the figure is the growth of the child's peak resident memory
(``ru_maxrss``) over the searches, as a ratio to the size of the file searched:

- SearchRegex ``count_only`` over short.txt (the case of the issue) and wide.txt, and
  SearchText ``count_only`` (case folded) over short.txt, one call and six at once on
  threads;
- SearchRegex listing the first 10,000 matching lines over both files.

Before this round the whole file was read and the regular expression's matches listed:
SearchRegex ``count_only`` over a file like short.txt cost 711 MB, six at once 1 GB.
Target: at most 0.5x the file's size for one search (32 MiB, MEMORY_BOUND), and for six
at most six times that.

Time: the CPU time of the counting searches alone, read a block at a time against the
same search given the whole file as one block (files were read whole before; the counting
is this round's in both), interleaved, with the same answers checked.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import exit_status, load_note, verdict

SHORT = b"match 0000\n"
WIDE = b"match " + b"w" * 1017 + b"\n"
SIZE = 64 << 20

CHILD = r"""
import json, resource, sys, threading
from janito_core import Registry
from janito_core.dispatch import call_tool
from janito_core.workspace import Workspace
import janito_files._search as search

search.REGEX_TIME_LIMIT = None  # memory is measured: let every search finish
if len(sys.argv) > 5:  # one block for the whole file: the search as it read files before
    search.BLOCK_BYTES = search.LINE_BYTES = int(sys.argv[5])
folder, name, arguments, calls = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4])
registry = Registry(workspace=Workspace(folder), autoload=("files",), reports="off")
call_tool("ListFiles", {"directory": "."}, registry=registry)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = resource.getrusage(resource.RUSAGE_SELF)
results = []
threads = [threading.Thread(target=lambda: results.append(call_tool(name, arguments,
                                                                       registry=registry)))
           for _ in range(calls)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"grown_kib": after - before, "ok": all(r["success"] for r in results),
                  "cpu": usage.ru_utime + usage.ru_stime - start.ru_utime - start.ru_stime,
                  "results": [{k: v for k, v in r.items() if k != "matches"} for r in results]}))
"""


def make_files(folder: Path) -> None:
    for name, line in (("short.txt", SHORT), ("wide.txt", WIDE)):
        chunk = line * (65536 // len(line))
        with open(folder / name, "wb") as handle:
            for _ in range(SIZE // len(chunk)):
                handle.write(chunk)


def child(folder: Path, name: str, arguments: dict[str, object], calls: int,
          whole: bool = False) -> dict[str, Any]:
    ran = subprocess.run([sys.executable, "-c", CHILD, str(folder), name, json.dumps(arguments),
                          str(calls), *([str(SIZE + 1)] if whole else [])],
                         capture_output=True, text=True, check=True)
    measured: dict[str, Any] = json.loads(ran.stdout)
    if not measured["ok"]:
        raise SystemExit(f"{name} {arguments} failed")
    return measured


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    cases = [
        ("SearchRegex", {"paths": "short.txt", "pattern": "ma.ch", "count_only": True}),
        ("SearchRegex", {"paths": "wide.txt", "pattern": "ma.ch", "count_only": True}),
        ("SearchText", {"paths": "short.txt", "query": "MATCH", "case_sensitive": False,
                        "count_only": True}),
        ("SearchRegex", {"paths": ".", "pattern": "^ma.ch", "max_results": 10_000}),
    ]
    verdicts = []
    with tempfile.TemporaryDirectory(prefix="janito-bench-") as temp:
        folder = Path(temp)
        make_files(folder)
        print(f"files: short.txt and wide.txt, {SIZE >> 20} MiB each; peak memory growth of "
              "a child process, as a ratio to one file's size")
        print(f"{'search':<60} {'calls':>5} {'grown MiB':>10} {'ratio':>6}")
        for name, arguments in cases:
            for calls in (1, 6):
                grown = max(child(folder, name, arguments, calls)["grown_kib"]
                            for _ in range(args.rounds)) / 1024
                ratio = grown * (1 << 20) / SIZE
                label = f"{name} {json.dumps(arguments)}"[:60]
                result = verdict(ratio, 0.5 * calls)
                verdicts.append(result)
                print(f"{label:<60} {calls:>5} {grown:>10.1f} {ratio:>6.2f}  {result}")
        print("CPU time of the searches alone, block by block against the whole file in one "
              "buffer (as before), interleaved:")
        for name, arguments in cases[:3]:
            blocks, whole = [], []
            for _ in range(args.rounds):
                measured = child(folder, name, arguments, 1)
                blocks.append(measured["cpu"])
                before = child(folder, name, arguments, 1, whole=True)
                whole.append(before["cpu"])
                if before["results"] != measured["results"]:
                    raise SystemExit(f"different answers for {name} {arguments}")
            b, w = statistics.median(blocks), statistics.median(whole)
            label = f"{name} {json.dumps(arguments)}"[:60]
            print(f"{label:<60} {b:>6.2f} s against {w:>6.2f} s: {b / w:.2f}x (no target)")
        print(load_note())
    return exit_status(*verdicts)


if __name__ == "__main__":
    sys.exit(main())
