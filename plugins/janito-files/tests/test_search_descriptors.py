"""A search holds a descriptor for each batch out; where the process has few to spare
(its soft limit on open files nearly reached), the search takes batches back first and
finds what it finds with descriptors to spare, and where none is left at all it says
which files it could not search: it never fails for it.

Each case runs in a process of its own, whose limit it lowers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

FOLDERS = 60

SCRIPT = r"""
import json, os, resource, sys
from janito_core import Registry, Workspace

root, spare, tool, arguments = sys.argv[1], int(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4])
registry = Registry(workspace=Workspace(root), autoload=("files",), allowed=None)
registry.reports = "off"
search = registry.tools()[tool]
expected = search(**arguments)
in_use = len(os.listdir("/proc/self/fd"))
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (in_use + spare, hard))
answers = [search(**arguments) for _ in range(3)]
resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
print(json.dumps({"expected": expected, "answers": answers}))
"""


def _tree(root: Path) -> Path:
    for number in range(FOLDERS):
        folder = root / f"d{number:02}"
        folder.mkdir()
        for index in range(3):
            (folder / f"f{index}.txt").write_text(f"one\nneedle {number} {index}\nthree\n")
    return root


def _run(root: Path, spare: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(root), str(spare), tool,
                           json.dumps(arguments)], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def test_a_search_with_few_descriptors_to_spare_finds_what_it_finds_with_many(
        tmp_path: Path) -> None:
    # 20 free descriptors: fewer than the batches a search keeps out (and than the ones it
    # leaves spare), more than the walk, a worker's file and one batch need at once
    root = _tree(tmp_path)
    for tool, arguments in [("SearchText", {"paths": ".", "query": "needle"}),
                            ("SearchRegex", {"paths": ".", "pattern": r"needle \d+ [02]"}),
                            ("SearchText", {"paths": ".", "query": "needle", "count_only": True})]:
        arguments["max_results"] = 1000
        answer = _run(root, 20, tool, arguments)
        expected = answer["expected"]
        assert expected["success"] and "unreadable" not in expected
        assert expected.get("count", expected.get("total_matches")) in (FOLDERS * 3, FOLDERS * 2)
        for got in answer["answers"]:
            assert got == expected


def test_a_search_with_no_descriptor_left_says_which_files_it_did_not_search(
        tmp_path: Path) -> None:
    root = _tree(tmp_path)
    answer = _run(root, 3, "SearchText", {"paths": ".", "query": "needle", "max_results": 1000})
    full = {(m["path"], m["line"]) for m in answer["expected"]["matches"]}
    for got in answer["answers"]:
        assert got["success"], got
        assert {(m["path"], m["line"]) for m in got["matches"]} <= full
        assert got["unreadable"], got
        assert all("Too many open files" in line for line in got["unreadable"])
        missing = len(full) - got["count"]
        assert missing > 0
        # every file left out is named: a folder the walk could not open, or a batch of
        # files the search had no descriptor for
        assert len(got["unreadable"]) <= missing
