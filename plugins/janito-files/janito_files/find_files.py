"""FindFiles: files and folders by name, type, size and age, like ``find``."""

from __future__ import annotations

import fnmatch
import heapq
import os
import re
import stat
import sys
import time
from collections.abc import Iterator
from typing import Annotated, Any, ClassVar, Literal

from janito_core import BaseTool, Failure, tool
from janito_core.constraints import Ge, Interval, MinLen, Pattern

from ._common import NotRequired, TypedDict, echoed, invalid, safe_text
from ._listing import (
    MAX_RESULTS_LIMIT,
    ListingResult,
    entry_text,
    entry_texts,
    listing_result,
    walk_roots,
)
from ._steps import pick_plain
from ._walk import listing_levels, parse_exclude, walk_runs

FileType = Literal["file", "dir", "symlink", "any"]
SortBy = Literal["name", "size", "mtime"]

SIZE_PATTERN = r"^\s*[0-9]+(?:\.[0-9]+)?\s*(?:[kmgtKMGT]?[iI]?[bB]?)?\s*$"
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b?)\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_DAY = 86_400.0


class Glob:
    """One glob of a FindFiles pattern.

    Without "/" it is matched against names; with "/" against the path below the searched
    folder, where "**/" stands for any number of folders (none included). A glob ending in
    "/" matches folders only.
    """

    __slots__ = ("folders_only", "on_path", "plain", "regex")

    def __init__(self, glob: str, flags: int) -> None:
        self.folders_only = glob.endswith("/")
        glob = glob.rstrip("/") or "*"
        self.on_path = "/" in glob
        if self.on_path and "**/" in glob:
            parts = [fnmatch.translate(p)[4:-3] for p in glob.split("**/")]  # strip (?s:...)\Z
            self.regex = re.compile("(?s:" + "(?:.*/)?".join(parts) + r")\Z", flags)
        else:
            self.regex = re.compile(fnmatch.translate(glob), flags)
        self.plain = None if flags or self.on_path else _plain(glob)

    def matches(self, name: str, below: str, kind: str) -> bool:
        if self.folders_only and kind != "directory":
            return False
        return self.regex.match(below if self.on_path else name) is not None


def _plain(glob: str) -> tuple[str, str, str] | None:
    """(how, start, end) for a glob of names that string tests decide as its regular
    expression does: "all", "equal" (start), "affixes" (starts with start and ends with
    end, not overlapping) or "holds" (start); None for any other."""
    if "?" in glob or "[" in glob:
        return None
    parts = glob.split("*")
    if len(parts) == 1:
        return "equal", glob, ""
    if len(parts) == 2:
        return ("all", "", "") if glob == "*" else ("affixes", parts[0], parts[1])
    if len(parts) == 3 and not parts[0] and not parts[2]:
        return ("holds", parts[1], "") if parts[1] else ("all", "", "")
    return None


def parse_size(value: int | str | None, name: str) -> int | None:
    """Bytes for a size a model gave: a number, or text such as "10MB", "512 KiB", "1.5G"
    (powers of 1024). ValueError says what is wrong."""
    if value is None:
        return None
    if isinstance(value, int):
        return value
    match = _SIZE.match(value)
    if match is None:
        raise ValueError(f"{name} must be a number of bytes or a size such as \"10MB\" or "
                         f"\"512KB\", got {value!r}")
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


class FoundFile(TypedDict):
    """The size and age of a match (when a size or date was asked about).

    Attributes:
        path: The match, as in files.
        size: Its size in bytes.
        modified: When it last changed (ISO 8601).
    """

    path: str
    size: int
    modified: str


class Found(ListingResult):
    """What FindFiles answers.

    Attributes:
        paths: The paths as given.
        pattern: The pattern as given.
        files: Matches; folders end with "/", links with "@".
        details: The size and age of each match, when a size or date was asked about.
    """

    success: Literal[True]
    paths: str | list[str]
    pattern: str | None
    files: list[str]
    details: NotRequired[list[FoundFile]]


@tool(permissions="r")
class FindFiles(BaseTool):
    """Find files or folders by name, type, size and age, like the find command.

    The pattern is one or more globs separated by spaces: "*.py *.md" matches names,
    "src/*/models.py" or "docs/**/*.md" match the path below the searched folder, and a
    glob ending in "/" finds folders. Results are sorted by path (or by size or time);
    ".git", ".janito", what ".janitoignore" hides and, unless respect_gitignore is false,
    what ".gitignore" excludes are skipped.
    """

    reads_paths: ClassVar[tuple[str, ...]] = ("paths",)

    renamed_parameters: ClassVar[dict[str, str]] = {
        "include_gitignored": "replaced by 'respect_gitignore' (false finds what .gitignore "
                              "excludes)",
    }

    def run(
        self,
        paths: Annotated[str, Pattern(r"\S")]
        | Annotated[list[Annotated[str, Pattern(r"\S")]], MinLen(1)],
        pattern: Annotated[str, Pattern(r"\S")] | None = None,
        exclude: str | list[str] | None = None,
        file_type: FileType | None = "file",
        min_size: Annotated[int, Ge(0)] | Annotated[str, Pattern(SIZE_PATTERN)] | None = None,
        max_size: Annotated[int, Ge(0)] | Annotated[str, Pattern(SIZE_PATTERN)] | None = None,
        modified_within_days: Annotated[float, Interval(ge=0, lt=1e7)] | None = None,
        older_than_days: Annotated[float, Interval(ge=0, lt=1e7)] | None = None,
        max_depth: Annotated[int, Ge(0)] | None = None,
        max_results: Annotated[int, Interval(ge=1, le=MAX_RESULTS_LIMIT)] | None = 1000,
        sort_by: SortBy | None = "name",
        respect_gitignore: bool = True,
        case_sensitive: bool = True,
    ) -> Found | Failure:
        """Find files and folders matching every criterion given.

        Args:
            paths: Folders to search, relative to the workspace root: a list, or one string
                with paths separated by spaces ("." is the workspace root).
            pattern: Globs separated by spaces ("*" any characters, "?" one, "[abc]" one of
                them, "**/" any folders); one match is enough. Null matches every name.
            exclude: Globs of folders to keep out of and files to skip, matched against
                names and paths below the searched folder: "node_modules .venv *.min.js".
            file_type: "file" (regular files, the default), "dir" (folders), "symlink"
                (symbolic links) or "any" (null too). Globs ending in "/" find folders
                whatever this says.
            min_size: Smallest size of a file, in bytes or as "10KB", "5MB", "1GB".
            max_size: Largest size of a file, in bytes or as "10KB", "5MB", "1GB".
            modified_within_days: Only what was modified in the last N days (0.5 = 12 hours).
            older_than_days: Only what was last modified more than N days ago.
            max_depth: How many levels of subfolders to descend into: 0 is only the given
                folders' own entries, 1 adds their subfolders' entries, and so on (as janito
                4.50 counted); null for no limit.
            max_results: Most paths to return (null for 100,000); the list is cut after that
                and "truncated" is true.
            sort_by: "name" (path order, the default), "size" (largest first) or "mtime"
                (most recently modified first).
            respect_gitignore: Skip what .gitignore files exclude (.janitoignore files are
                always respected).
            case_sensitive: Match letter case exactly in pattern.
        """
        echo = {"paths": echoed(paths), "pattern": echoed(pattern)}
        try:
            low = parse_size(min_size, "min_size")
            high = parse_size(max_size, "max_size")
        except ValueError as exc:
            return invalid(str(exc), **echo)
        flags = 0 if case_sensitive else re.IGNORECASE
        try:
            picker = Picker([Glob(g, flags) for g in (pattern or "*").split()],
                            _KINDS[file_type or "any"])
        except re.error as exc:
            return invalid(f"pattern cannot be used: {exc}", **echo)
        roots = walk_roots(self, paths, echo)
        if isinstance(roots, dict):
            return roots
        starts, problems = roots
        self.report_start(f"Finding {safe_text((pattern or '*')[:80])} in "
                          f"{', '.join(safe_text(p) for p, _, _ in starts[:5])}")
        now = time.time()
        newer = None if modified_within_days is None else now - modified_within_days * _DAY
        older = None if older_than_days is None else now - older_than_days * _DAY
        needs_stat = (low is not None or high is not None or newer is not None
                      or older is not None or sort_by in ("size", "mtime"))
        unreadable: list[str] = []
        excluded = parse_exclude(exclude)

        def picked() -> Iterator[Picked]:
            """What the pattern picks, a folder's consecutive entries at a time."""
            for _path, shown, kind in starts:
                if kind != "directory":
                    # a file named in paths stands for itself
                    name = os.path.basename(shown)
                    if not (excluded and excluded.excludes(name, name, False)):
                        folder = shown[:-len(name)]
                        chosen = picker.pick([name], [kind], folder, "")
                        if chosen[0]:
                            yield folder, *chosen, None
                    continue
                skip = 0 if shown == "." else len(shown) + 1
                for run in walk_runs(self, shown, max_depth=listing_levels(max_depth),
                                     gitignore=respect_gitignore, errors=unreadable,
                                     exclude=excluded):
                    prefix = run.prefix
                    names, kinds = picker.pick(run.names, run.kinds, prefix, prefix[skip:])
                    if names:
                        yield prefix, names, kinds, run.dir_fd

        def texts() -> Iterator[list[str]]:
            for prefix, names, kinds, _fd in picked():
                yield entry_texts(prefix, names, kinds)

        def statted() -> Iterator[tuple[str, str, os.stat_result]]:
            for prefix, names, kinds, fd in picked():
                for name, kind in zip(names, kinds, strict=True):
                    info = _lstat(self, prefix + name, name, fd)
                    if info is not None and _within(info, kind, low, high, newer, older):
                        yield prefix + name, kind, info

        cap = MAX_RESULTS_LIMIT if max_results is None else max_results
        note = (f"only the first {cap} matches are shown; narrow the pattern or raise "
                "max_results")
        details: list[dict[str, Any]] = []
        found: Iterator[list[str]] = texts()
        if needs_stat:
            items: Iterator[tuple[str, str, os.stat_result]] = statted()
            if sort_by in ("size", "mtime"):
                key = (lambda item: item[2].st_size) if sort_by == "size" else \
                    (lambda item: item[2].st_mtime_ns)
                items = iter(heapq.nlargest(cap + 1, items, key=key))
                note = (f"only the {cap} {'largest' if sort_by == 'size' else 'most recent'} "
                        "matches are shown; narrow the search or raise max_results")

            def detailed() -> Iterator[list[str]]:
                for relative, kind, info in items:
                    text = entry_text(relative, kind)
                    if len(details) < cap:
                        details.append({"path": text, "size": info.st_size,
                                        "modified": _iso(info.st_mtime)})
                    yield [text]

            found = detailed()

        result = listing_result(echo, "files", found, cap, note, problems, unreadable)
        if details:
            result["details"] = details[:result["count"]]
        count = result["count"]
        self.report_result(f"Found {count} match{'es' if count != 1 else ''}"
                           + (" (truncated)" if result["truncated"] else ""))
        return result


_KINDS: dict[str, str | None] = {"file": "file", "dir": "directory", "symlink": "symlink",
                                 "any": None}
"""A file_type's kind of entry (None: any)."""

Picked = tuple[str, list[str], list[str], "int | None"]
"""(prefix, names, kinds, folder descriptor): entries picked at ``prefix + name``, in the
folder open as the descriptor (None for a path given as such)."""


class Picker:
    """Which entries of a folder a pattern picks: an entry one of its globs matches, of the
    kind file_type asks for, or a folder a glob ending in "/" matches whatever it asks."""

    __slots__ = ("_dirs", "_kind", "_names", "_only", "_paths")

    def __init__(self, globs: list[Glob], kind: str | None) -> None:
        self._kind = kind
        self._names = [g.regex.match for g in globs if not g.folders_only and not g.on_path]
        self._paths = [g.regex.match for g in globs if not g.folders_only and g.on_path]
        self._dirs = [g for g in globs if g.folders_only]
        # one glob of names and nothing else: a folder's entries in one comprehension
        self._only = globs[0] if len(globs) == 1 and self._names else None

    def pick(self, names: list[str], kinds: list[str], prefix: str, below: str
             ) -> tuple[list[str], list[str]]:
        """(names, kinds) of the entries picked among ``names`` (of ``kinds``), found at
        ``prefix + name`` and at ``below + name`` under the searched folder."""
        if self._only is not None:
            return _picked(self._only, names, kinds, self._kind)
        kind = self._kind
        out_names: list[str] = []
        out_kinds: list[str] = []
        for name, its in zip(names, kinds, strict=True):
            if (its == "directory" and self._dirs
                    and any(g.matches(name, below + name, its) for g in self._dirs)) or (
                    (kind is None or its == kind)
                    and (any(m(name) for m in self._names)
                         or any(m(below + name) for m in self._paths))):
                out_names.append(name)
                out_kinds.append(its)
        return out_names, out_kinds


def _picked(glob: Glob, names: list[str], kinds: list[str], kind: str | None
            ) -> tuple[list[str], list[str]]:
    """(names, kinds) of the entries of ``kind`` (None: any) whose name ``glob`` matches."""
    if kind is None:
        chosen = [i for i, name in enumerate(names) if glob.regex.match(name)]
        return [names[i] for i in chosen], [kinds[i] for i in chosen]
    if glob.plain is not None:
        picked = pick_plain(names, kinds, kind, *glob.plain)
    else:
        match = glob.regex.match
        picked = [name for name, its in zip(names, kinds, strict=True)
                  if its == kind and match(name)]
    return picked, [kind] * len(picked)


def _lstat(tool: BaseTool, relative: str, name: str, dir_fd: int | None
           ) -> os.stat_result | None:
    """The entry's own status (a link's, not its target's); None when it vanished."""
    try:
        if dir_fd is not None:
            return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        with tool.workspace.locate(relative, follow_symlinks=False) as where:
            return where.stat()
    except (OSError, ValueError):
        return None


def _within(info: os.stat_result, kind: str, low: int | None, high: int | None,
            newer: float | None, older: float | None) -> bool:
    if low is not None or high is not None:
        # A folder's size says nothing about what it holds: size criteria select files.
        if kind == "directory" or stat.S_ISDIR(info.st_mode):
            return False
        if low is not None and info.st_size < low:
            return False
        if high is not None and info.st_size > high:
            return False
    if newer is not None and info.st_mtime < newer:
        return False
    return not (older is not None and info.st_mtime > older)


def _iso(timestamp: float) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(timestamp, timezone.utc).isoformat(timespec="seconds")


def main(argv: list[str] | None = None) -> int:
    """Run FindFiles from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(FindFiles, argv)


if __name__ == "__main__":
    sys.exit(main())
