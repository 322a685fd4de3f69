"""FindFiles: files whose names match glob patterns."""

from __future__ import annotations

import fnmatch
import re
import sys
from collections.abc import Iterator
from typing import Any

from janito_core import BaseTool, tool

from ._common import echoed, invalid, safe_text
from ._listing import check_limits, entry_text, listing_result, walk_roots, walked


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
        problem = check_limits(max_depth, max_results, echo)
        if problem is not None:
            return problem
        try:
            regexes, want_dirs = _compile(pattern, case_sensitive)
        except re.error as exc:
            return invalid(f"pattern cannot be used: {exc}", **echo)
        roots = walk_roots(self, paths, echo)
        if isinstance(roots, dict):
            return roots
        starts, problems = roots
        self.report_start(f"Finding {safe_text(pattern[:80])} in "
                          f"{', '.join(safe_text(p) for p, _, _ in starts[:5])}")
        unreadable: list[str] = []

        def found() -> Iterator[str]:
            for entry, relative in walked(self, starts, max_depth, include_gitignored, unreadable):
                if entry.kind == "directory" and not want_dirs:
                    continue
                if any(r.match(relative if on_path else entry.name) for r, on_path in regexes):
                    yield entry_text(entry.relative, entry.kind)

        result = listing_result(echo, "files", found(), max_results,
                                f"only the first {max_results} matches are shown; narrow the "
                                "pattern or raise max_results", problems, unreadable)
        count = result["count"]
        self.report_result(f"Found {count} match{'es' if count != 1 else ''}"
                           + (" (truncated)" if result["truncated"] else ""))
        return result


def main(argv: list[str] | None = None) -> int:
    """Run FindFiles from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(FindFiles, argv)


if __name__ == "__main__":
    sys.exit(main())
