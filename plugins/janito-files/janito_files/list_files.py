"""ListFiles: the files and folders under some paths."""

from __future__ import annotations

import sys
from typing import Any

from janito_core import BaseTool, tool

from ._common import echoed, safe_text
from ._listing import check_limits, entry_text, listing_result, walk_roots, walked


@tool(permissions="r")
class ListFiles(BaseTool):
    """List the files and folders under one or more paths of the workspace.

    Entries come sorted, relative to the workspace root; folders end with "/", symbolic
    links with "@" (they are never followed). ".git" folders and everything ".gitignore"
    excludes are left out unless include_gitignored is true.
    """

    def run(
        self,
        paths: str | list[str],
        max_depth: int = 1,
        include_gitignored: bool = False,
        max_results: int = 1000,
    ) -> dict[str, Any]:
        """List folder contents.

        Args:
            paths: Folder or file paths relative to the workspace root: a list, or one
                string with paths separated by spaces ("." is the workspace root).
            max_depth: How many levels to descend: 1 lists the folders' own entries,
                2 also their subfolders' entries, and so on; 0 means no limit.
            include_gitignored: Also list what .gitignore files exclude.
            max_results: Most entries to return; the listing is cut after that and
                "truncated" is true.
        """
        echo = {"paths": echoed(paths)}
        problem = check_limits(max_depth, max_results, echo)
        if problem is not None:
            return problem
        roots = walk_roots(self, paths, echo)
        if isinstance(roots, dict):
            return roots
        starts, problems = roots
        self.report_start(f"Listing {', '.join(safe_text(p) for p, _, _ in starts[:5])}")
        unreadable: list[str] = []
        found = (entry_text(entry.relative, entry.kind)
                 for entry, _ in walked(self, starts, max_depth, include_gitignored, unreadable))
        result = listing_result(echo, "entries", found, max_results,
                                f"only the first {max_results} entries are shown; list a "
                                "subfolder or raise max_results", problems, unreadable)
        count = result["count"]
        self.report_result(f"{count} entr{'y' if count == 1 else 'ies'}"
                           + (" (truncated)" if result["truncated"] else ""))
        return result


def main(argv: list[str] | None = None) -> int:
    """Run ListFiles from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(ListFiles, argv)


if __name__ == "__main__":
    sys.exit(main())
