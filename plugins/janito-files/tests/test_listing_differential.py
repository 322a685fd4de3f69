"""FindFiles and ListFiles give, over 20,000 small random trees and calls, exactly the
results they gave when they looked at the walk's entries one at a time.

FindFiles now takes a folder's consecutive entries together (``Workspace.walk_runs``) and
picks among them in one pass. :func:`one_at_a_time` is the loop it ran before, kept here
as the reference: every entry of the per-entry walk, each glob asked in turn, the type,
then the size and age. Each case is a fresh random tree (files of many sizes and ages,
folders, links in and out, a FIFO, names that are not UTF-8, names with spaces, ".git"
and ".janito" as folders and as files, ignore files) and a random call (globs of names,
of paths, with "**/" and of folders; every file_type; exclude; sizes and ages; max_depth;
max_results; each sort_by; case; gitignore; paths that name files). The two results must
be equal, key for key; and so must ListFiles' (by runs since too) against its own loop
before, on a random call in the same tree.
"""

from __future__ import annotations

import heapq
import os
import random
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from files_helpers import random_ignore_file
from janito_files import _listing, find_files
from janito_files._listing import entry_text, listing_result, walk_roots
from janito_files._walk import Exclude, listing_levels, parse_exclude, walk
from janito_files.find_files import FindFiles, Glob, _iso, _within, parse_size
from janito_files.list_files import ListFiles, _name_filter

from janito_core import Workspace

CASES = 20_000
CHUNKS = 8
DAY = 86_400.0

NAMES = ["a", "b", "sub", "Sub", "keep", "x y", "é", "test_a", "a_test", "README",
         ".hidden", "[x]", "*"]
SUFFIXES = ["", ".py", ".PY", ".log", ".txt", ".min.js", ".tar.gz"]
GLOBS = ["*", "*.py", "*.PY", "a*", "*0", "*_test*", "test_*", "sub*/", "*/", "*.py *.log",
         "sub*/*.py", "**/*.py", "**/sub*/", "sub0/**/a?", "[ab]*", "[!a]*", "*é*",
         "x y*", "*/a0", "*/*/*", "?", "*.tar.gz", "README*", ".*", r"\[x\]*", "[[]x]*",
         "**/a0", "**/**/b*", "sub1/", "a0 b1 sub2/", "a0", "a1.py", "a0*0", "a*0", "*0*",
         "**", "te*st*", "s*b0", "*.*"]
EXCLUDES = [None, None, None, "*.log", "sub*", ["x y*", "*.txt"], "sub0/", "*/a0",
            "**/keep*", "*.min.js"]


def _tree(root: str, rng: random.Random, now: float, depth: int = 0) -> None:
    os.mkdir(root)
    for index in range(rng.randrange(3, 9) if depth < 2 else rng.randrange(0, 4)):
        name = rng.choice(NAMES) + str(index) + rng.choice(SUFFIXES)
        path = os.path.join(root, name)
        roll = rng.random()
        if roll < 0.25 and depth < 3:
            _tree(path, rng, now, depth + 1)
        elif roll < 0.28:
            os.symlink(rng.choice(["a0", "../a0", "/etc/hostname", "missing", "sub1", "."]),
                       path)
        elif roll < 0.29:
            os.mkfifo(path)
        else:
            with open(path, "wb") as handle:
                handle.write(b"x" * rng.choice([0, 1, 100, 1023, 1024, 2048, 5000]))
            # whole days plus half of one, so that no bound of a call lies near an age
            age = (rng.randrange(0, 40) + 0.5) * DAY
            os.utime(path, (now - age, now - age))
    roll = rng.random()
    if roll < 0.05:
        hidden = os.path.join(root, rng.choice([".git", ".janito"]))
        os.mkdir(hidden)
        with open(os.path.join(hidden, "inside.py"), "w"):
            pass
    elif roll < 0.08:
        with open(os.path.join(root, rng.choice([".git", ".janito"])), "w"):
            pass  # a file of that name is listed like any other
    elif roll < 0.11:
        with open(os.fsencode(os.path.join(root, "bad")) + b"\xff\xfe.py", "w"):
            pass
    random_ignore_file(root, rng, 0.12, 0.18)


def _call(rng: random.Random, case: str) -> dict[str, Any]:
    arguments: dict[str, Any] = {"paths": case}
    roll = rng.random()
    if roll < 0.1:
        arguments["paths"] = [case, f"{case}/sub0", f"{case}/a1.py", f"{case}/missing"]
    elif roll < 0.15:
        arguments["paths"] = f"{case}/a0 {case}/b1"
    roll = rng.random()
    arguments["pattern"] = rng.choice([None, "*", "*.py"]) if roll < 0.35 else \
        rng.choice(GLOBS) if roll < 0.9 else f"{rng.choice(GLOBS)} {rng.choice(GLOBS)}"
    arguments["exclude"] = rng.choice(EXCLUDES)
    arguments["file_type"] = rng.choice(["file", "file", "file", "dir", "symlink", "any", None])
    arguments["min_size"] = rng.choice([None] * 12 + [1, 1024, "1KB", "0"])
    arguments["max_size"] = rng.choice([None] * 12 + [1023, 2048, "2 KiB"])
    arguments["modified_within_days"] = rng.choice([None] * 12 + [0, 3, 10.25])
    arguments["older_than_days"] = rng.choice([None] * 12 + [0, 5, 20.75])
    arguments["max_depth"] = rng.choice([None, None, 0, 1, 2])
    arguments["max_results"] = rng.choice([None, 1000, 1, 2, 3, 7])
    arguments["sort_by"] = rng.choice(["name", "name", None, "size", "mtime"])
    arguments["respect_gitignore"] = rng.random() < 0.8
    arguments["case_sensitive"] = rng.random() < 0.7
    return arguments


class Listed:
    """One entry as the tools took it before runs."""

    def __init__(self, relative: str, name: str, kind: str) -> None:
        self.relative, self.name, self.kind = relative, name, kind


def walked(tool: Any, starts: list[Any], limit: int | None, respect_gitignore: bool,
           unreadable: list[str], exclude: Exclude | None = None) -> Iterator[Any]:
    """(entry, its path below its start, the walk's entry) for every entry under
    ``starts``, one at a time: the loop ListFiles and FindFiles shared before runs."""
    for _path, shown, kind in starts:
        if kind != "directory":
            name = os.path.basename(shown)
            if exclude and exclude.excludes(name, name, False):
                continue
            yield Listed(shown, name, kind), name, None
            continue
        skip = 0 if shown == "." else len(shown) + 1
        for entry in walk(tool, shown, max_depth=limit, gitignore=respect_gitignore,
                          errors=unreadable, exclude=exclude):
            yield Listed(entry.relative, entry.name, entry.kind), entry.relative[skip:], entry


def list_one_at_a_time(self: ListFiles, directory: str, recursive: bool = False,
                       pattern: str | None = None, max_depth: int | None = None,
                       respect_gitignore: bool = True, max_results: int | None = 1000
                       ) -> dict[str, Any]:
    """ListFiles as it ran before runs: each entry of the walk on its own."""
    echo = {"directory": find_files.echoed(directory)}
    limit = listing_levels(max_depth) if recursive or max_depth is not None else 1
    roots = walk_roots(self, [directory], echo)
    if isinstance(roots, dict):
        return roots
    starts, problems = roots
    unreadable: list[str] = []
    matches = _name_filter(pattern)

    def found() -> Iterator[list[str]]:
        for entry, _below, _walked in walked(self, starts, limit, respect_gitignore,
                                             unreadable):
            if matches is None or matches(entry.name, entry.kind):
                yield [entry_text(entry.relative, entry.kind)]

    cap = _listing.MAX_RESULTS_LIMIT if max_results is None else max_results
    return listing_result(echo, "entries", found(), cap,
                          f"only the first {cap} entries are shown; list a subfolder, "
                          "lower max_depth or raise max_results", problems, unreadable)


def one_at_a_time(self: FindFiles, paths: Any, pattern: str | None = None,
                  exclude: Any = None, file_type: str | None = "file",
                  min_size: Any = None, max_size: Any = None,
                  modified_within_days: float | None = None,
                  older_than_days: float | None = None, max_depth: int | None = None,
                  max_results: int | None = 1000, sort_by: str | None = "name",
                  respect_gitignore: bool = True, case_sensitive: bool = True
                  ) -> dict[str, Any]:
    """FindFiles as it ran before runs: each entry of the walk on its own."""
    echo = {"paths": find_files.echoed(paths), "pattern": find_files.echoed(pattern)}
    try:
        low = parse_size(min_size, "min_size")
        high = parse_size(max_size, "max_size")
    except ValueError as exc:
        return find_files.invalid(str(exc), **echo)
    flags = 0 if case_sensitive else re.IGNORECASE
    try:
        globs = [Glob(g, flags) for g in (pattern or "*").split()]
    except re.error as exc:
        return find_files.invalid(f"pattern cannot be used: {exc}", **echo)
    roots = walk_roots(self, paths, echo)
    if isinstance(roots, dict):
        return roots
    starts, problems = roots
    now = time.time()
    newer = None if modified_within_days is None else now - modified_within_days * DAY
    older = None if older_than_days is None else now - older_than_days * DAY
    needs_stat = (low is not None or high is not None or newer is not None
                  or older is not None or sort_by in ("size", "mtime"))
    wanted = "any" if file_type is None else file_type
    unreadable: list[str] = []

    def of_type(kind: str) -> bool:
        return {"any": True, "dir": kind == "directory", "symlink": kind == "symlink",
                "file": kind == "file"}[wanted]

    def lstat(entry: Any, walk_entry: Any) -> os.stat_result | None:
        try:
            if walk_entry is not None:
                return os.stat(walk_entry.name, dir_fd=walk_entry.dir_fd,
                               follow_symlinks=False)
            with self.workspace.locate(entry.relative, follow_symlinks=False) as where:
                return where.stat()
        except (OSError, ValueError):
            return None

    def found() -> Iterator[tuple[Any, os.stat_result | None]]:
        for entry, below, walk_entry in walked(self, starts, listing_levels(max_depth),
                                               respect_gitignore, unreadable,
                                               parse_exclude(exclude)):
            kind = entry.kind
            chosen = [g for g in globs if g.matches(entry.name, below, kind)]
            if not chosen:
                continue
            if not any(g.folders_only for g in chosen) and not of_type(kind):
                continue
            info = None
            if needs_stat:
                info = lstat(entry, walk_entry)
                if info is None or not _within(info, kind, low, high, newer, older):
                    continue
            yield entry, info

    cap = _listing.MAX_RESULTS_LIMIT if max_results is None else max_results
    note = (f"only the first {cap} matches are shown; narrow the pattern or raise "
            "max_results")
    details: list[dict[str, Any]] | None = [] if needs_stat else None
    if sort_by in ("size", "mtime"):
        key = (lambda item: item[1].st_size) if sort_by == "size" else \
            (lambda item: item[1].st_mtime_ns)
        ranked = heapq.nlargest(cap + 1, found(), key=key)
        note = (f"only the {cap} {'largest' if sort_by == 'size' else 'most recent'} "
                "matches are shown; narrow the search or raise max_results")
        items: Iterator[tuple[Any, os.stat_result | None]] = iter(ranked)
    else:
        items = found()

    def shown() -> Iterator[list[str]]:
        for entry, info in items:
            text = entry_text(entry.relative, entry.kind)
            if details is not None and info is not None and len(details) < cap:
                details.append({"path": text, "size": info.st_size,
                                "modified": _iso(info.st_mtime)})
            yield [text]

    result = listing_result(echo, "files", shown(), cap, note, problems, unreadable)
    if details:
        result["details"] = details[:result["count"]]
    return result


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_listings_by_runs_give_the_results_of_listings_entry_by_entry(
        chunk: int, scratch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(FindFiles, "_report", lambda *args, **kwargs: None)
    monkeypatch.setattr(ListFiles, "_report", lambda *args, **kwargs: None)
    tool, lister = FindFiles(), ListFiles()
    tool.workspace = lister.workspace = Workspace(scratch)
    rng = random.Random(f"find-differential-{chunk}")
    now = time.time()
    found = 0
    for number in range(CASES // CHUNKS):
        case = f"c{number}"
        _tree(os.path.join(scratch, case), rng, now)
        arguments = _call(rng, case)
        by_runs = FindFiles.run(tool, **arguments)
        before = one_at_a_time(tool, **arguments)
        assert by_runs == before, (chunk, number, arguments)
        found += len(by_runs.get("files", ()))
        listing = {"directory": rng.choice([case, f"{case}/sub0", f"{case}/a1.py"]),
                   "recursive": rng.random() < 0.7,
                   "pattern": rng.choice([None, None, "*.py", "sub*/", "a*", "*"]),
                   "max_depth": rng.choice([None, None, 0, 1, 2]),
                   "respect_gitignore": rng.random() < 0.8,
                   "max_results": rng.choice([None, 1000, 1, 3])}
        listed = ListFiles.run(lister, **listing)
        assert listed == list_one_at_a_time(lister, **listing), (chunk, number, listing)
        found += len(listed.get("entries", ()))
    assert found > CASES // CHUNKS  # the calls found things, not only failures
