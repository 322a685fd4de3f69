"""FindFiles: files whose names match glob patterns."""

from __future__ import annotations

import fnmatch
import itertools
import os
import re
import sys
from collections.abc import Iterator
from typing import Any

from janito_core import BaseTool, failure, tool

from ._common import echoed, invalid, safe_text, shown
from ._listing import entry_text, start_points
from ._walk import depth_limit, walk


def _compile(pattern: str, case_sensitive: bool) -> tuple[list[tuple[re.Pattern[str], bool]],
                                                          bool]:
    """([(regex, matches paths)] per glob, whether folders are wanted) for a pattern."""
    globs = pattern.split()
    want_dirs = any(g.endswith("/") for g in globs)
    flags = 0 if case_sensitive else re.IGNORECASE
    compiled = []
    for glob in globs:
        glob = glob.rstrip("/") or "*"
        compiled.append((re.compile(fnmatch.translate(glob), flags), "/" in glob))
    return compiled, want_dirs


@tool(permissions="r")
class FindFiles(BaseTool):
    """Find files by name with glob patterns such as "*.py" or "test_*.py *.md".

    A pattern without "/" is matched against file names, one with "/" against the path
    below the searched folder ("src/*/models.py"). A pattern ending in "/" finds folders.
    Results are sorted; ".git" and what ".gitignore" excludes are skipped unless
    include_gitignored is true.
    """

    def run(
        self,
        paths: str | list[str],
        pattern: str,
        max_depth: int = 0,
        include_gitignored: bool = False,
        case_sensitive: bool = True,
        max_results: int = 1000,
    ) -> dict[str, Any]:
        """Find files whose names match a pattern.

        Args:
            paths: Folders to search, relative to the workspace root: a list, or one string
                with paths separated by spaces ("." is the workspace root).
            pattern: One or more glob patterns separated by spaces ("*" any characters,
                "?" one character, "[abc]" one of them); a match of any pattern counts.
            max_depth: How many folder levels to descend (1 = only the given folders' own
                entries); 0 means no limit.
            include_gitignored: Also find what .gitignore files exclude.
            case_sensitive: Match letter case exactly.
            max_results: Most paths to return; the list is cut after that and "truncated"
                is true.
        """
        echo = {"paths": echoed(paths), "pattern": echoed(pattern)}
        if not pattern.strip():
            return invalid("pattern must not be empty; use \"*\" to match every file", **echo)
        if max_depth < 0:
            return invalid(f"max_depth must be 0 (no limit) or more, got {max_depth}", **echo)
        if max_results < 1:
            return invalid(f"max_results must be 1 or more, got {max_results}", **echo)
        try:
            regexes, want_dirs = _compile(pattern, case_sensitive)
        except re.error as exc:
            return invalid(f"pattern cannot be used: {exc}", **echo)
        starts, problems = start_points(self, paths)
        if not starts:
            if problems:
                first = problems[0]
                return failure(first["error"], first["error_type"], **echo, errors=problems)
            return invalid("paths is empty; give at least one path, such as \".\"", **echo)
        self.report_start(f"Finding {safe_text(pattern[:80])} in "
                          f"{', '.join(safe_text(p) for p, _, _ in starts[:5])}")
        limit = depth_limit(max_depth)
        unreadable: list[str] = []

        def matches(name: str, relative: str) -> bool:
            return any(r.match(relative if on_path else name) for r, on_path in regexes)

        def found() -> Iterator[str]:
            for _path, real, kind in starts:
                if kind != "directory":
                    if matches(os.path.basename(real), os.path.basename(real)):
                        yield shown(self, real)
                    continue
                skip = len(real) + 1
                for entry in walk(real, root=self.workspace.root, max_depth=limit,
                                  gitignore=not include_gitignored, errors=unreadable):
                    if entry.kind == "directory" and not want_dirs:
                        continue
                    if matches(entry.name, entry.path[skip:]):
                        yield entry_text(self, entry.path, entry.kind)

        results = found()
        files = list(itertools.islice(results, min(max_results, sys.maxsize)))
        truncated = next(results, None) is not None
        self.report_result(f"Found {len(files)} match{'es' if len(files) != 1 else ''}"
                           + (" (truncated)" if truncated else ""))
        result: dict[str, Any] = {"success": True, **echo, "files": files, "count": len(files),
                                  "truncated": truncated}
        if truncated:
            result["note"] = (f"only the first {max_results} matches are shown; narrow the "
                              "pattern or raise max_results")
        if problems:
            result["errors"] = problems
        if unreadable:
            result["unreadable"] = [safe_text(u) for u in unreadable[:50]]
        return result


def main(argv: list[str] | None = None) -> int:
    """Run FindFiles from the command line (see janito_files._cli)."""
    from ._cli import run_cli

    return run_cli(FindFiles, argv)


if __name__ == "__main__":
    sys.exit(main())
