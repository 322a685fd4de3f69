"""The journal's cost: a CreateFile overwrite and a RemoveDirectory of 1,000 files, each
with the journal on against the same call without it, in the same process, interleaved
(the overwrites call by call, the removals run by run).

The journal writes each change ahead, keeps the overwritten file by a second hard link to
its inode (no copy) and moves a removed folder into the journal in one rename, where the
plain call unlinks every file. Wall time is compared (both calls wait on the disk), and CPU
time is shown beside it. The audit log's line (and the SHA-256 of the small files changed)
is part of the journaled figure. Target (issue 33): at most 1.3x for both.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _common import exit_status, load_note, verdict

from janito_core import Registry, Workspace
from janito_core.dispatch import call_tool
from janito_core.journal import Journal


def _registry(root: Path, journal: Journal | None) -> Registry:
    registry = Registry(autoload=(), workspace=Workspace(root), journal=journal,
                        reports="off", allowed=None)
    registry.add_toolset("files")
    return registry


def _tree(folder: Path, files: int) -> None:
    for number in range(files):
        sub = folder / f"d{number % 20}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"f{number}.txt").write_bytes(b"x" * 200)


def _timed(prepare: Callable[[], None], run: Callable[[], object], repeat: int
           ) -> tuple[float, float]:
    """Median (wall, CPU) seconds of ``run`` over ``repeat`` runs, each after ``prepare``."""
    walls, cpus = [], []
    for _ in range(repeat):
        prepare()
        cpu, started = time.process_time(), time.perf_counter()
        run()
        walls.append(time.perf_counter() - started)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def _alternated(runs: dict[str, Callable[[], object]], repeat: int
                ) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) seconds of each of ``runs``, run one after the other ``repeat``
    times, the order turned round each time so that neither always goes first."""
    walls: dict[str, list[float]] = {label: [] for label in runs}
    cpus: dict[str, list[float]] = {label: [] for label in runs}
    order = list(runs)
    for _ in range(repeat):
        for label in order:
            cpu, started = time.process_time(), time.perf_counter()
            runs[label]()
            walls[label].append(time.perf_counter() - started)
            cpus[label].append(time.process_time() - cpu)
        order.reverse()
    return {label: (statistics.median(walls[label]), statistics.median(cpus[label]))
            for label in runs}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=15, help="runs of each, interleaved")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--files", type=int, default=1000)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="janito-bench-journal-"))
    os.environ["JANITO_CONFIG_DIR"] = str(base / "config")
    try:
        root = base / "workspace"
        root.mkdir()
        journal = Journal(base / "journal", max_bytes=1 << 40)
        plain, journaled = _registry(root, None), _registry(root, journal)
        text = "line of text\n" * 300
        note = {"filepath": "note.txt", "content": text, "overwrite": True}
        (root / "note.txt").write_text(text)
        for registry in (plain, journaled):
            assert call_tool("CreateFile", note, registry=registry)["success"]

        def fresh_tree() -> None:
            shutil.rmtree(root / "tree", ignore_errors=True)
            _tree(root / "tree", args.files)

        def remove(registry: Registry) -> Callable[[], object]:
            def run() -> object:
                result = call_tool("RemoveDirectory", {"directory": "tree", "recursive": True},
                                   registry=registry)
                assert result["success"], result
                return result
            return run

        figures: dict[str, list[tuple[float, float]]] = {}
        for _ in range(args.rounds):
            # call by call, the two in turn: the disk's flush time drifts within seconds
            overwrites = _alternated(
                {label: (lambda r=registry: call_tool("CreateFile", note, registry=r))
                 for label, registry in (("off", plain), ("on", journaled))},
                args.repeat * 10)
            for label, figure in overwrites.items():
                figures.setdefault(f"CreateFile overwrite, journal {label}", []).append(figure)
            for label, registry in (("off", plain), ("on", journaled)):
                figures.setdefault(f"RemoveDirectory {args.files} files, journal {label}",
                                   []).append(_timed(fresh_tree, remove(registry),
                                                     args.repeat))
        medians = {name: (statistics.median(w for w, _ in runs),
                          statistics.median(c for _, c in runs))
                   for name, runs in figures.items()}
        print(f"journal, medians of {args.rounds} interleaved rounds; {load_note()}")
        for name, (wall, cpu) in medians.items():
            print(f"  {name:<40} {wall * 1e3:8.3f} ms wall {cpu * 1e3:8.3f} ms CPU")
        verdicts = []
        for label in ("CreateFile overwrite", f"RemoveDirectory {args.files} files"):
            on, off = medians[f"{label}, journal on"], medians[f"{label}, journal off"]
            ratio = on[0] / off[0]
            print(f"{label}: {ratio:.2f}x wall ({on[1] / off[1]:.2f}x CPU) with the journal "
                  f"(target at most 1.3x): {verdict(ratio, 1.3)}")
            verdicts.append(verdict(ratio, 1.3))
        entries = len(journal.entries(str(root)))
        print(f"  ({entries} journal entries made; "
              f"{sum(e.size for e in journal.entries(str(root))) / 1e6:.1f} MB kept)")
        return exit_status(*verdicts)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
