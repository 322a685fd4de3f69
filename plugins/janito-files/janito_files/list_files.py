"""ListFiles: the files and folders under some paths."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from typing import Any

from janito_core import BaseTool, failure, tool

from ._common import echoed, invalid, safe_text
from ._listing import entry_text, start_points
from ._walk import depth_limit, walk


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
        if max_depth < 0:
            return invalid(f"max_depth must be 0 (no limit) or more, got {max_depth}", **echo)
        if max_results < 1:
            return invalid(f"max_results must be 1 or more, got {max_results}", **echo)
        starts, problems = start_points(self, paths)
        if not starts:
            if problems:
                first = problems[0]
                return failure(first["error"], first["error_type"], **echo, errors=problems)
            return invalid("paths is empty; give at least one path, such as \".\"", **echo)
        self.report_start(f"Listing {', '.join(safe_text(p) for p, _, _ in starts[:5])}")
        limit = depth_limit(max_depth)
        unreadable: list[str] = []

        def listing() -> Iterator[str]:
            for _path, real, kind in starts:
                if kind != "directory":
                    yield entry_text(self, real, kind)
                    continue
                for entry in walk(real, root=self.workspace.root, max_depth=limit,
                                  gitignore=not include_gitignored, errors=unreadable):
                    yield entry_text(self, entry.path, entry.kind)

        found = listing()
        entries = list(itertools.islice(found, min(max_results, sys.maxsize)))
        truncated = next(found, None) is not None
        self.report_result(f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}"
                           + (" (truncated)" if truncated else ""))
        result: dict[str, Any] = {"success": True, **echo, "entries": entries,
                                  "count": len(entries), "truncated": truncated}
        if truncated:
            result["note"] = (f"only the first {max_results} entries are shown; list a "
                              "subfolder or raise max_results")
        if problems:
            result["errors"] = problems
        if unreadable:
            result["unreadable"] = [safe_text(u) for u in unreadable[:50]]
        return result


def main(argv: list[str] | None = None) -> int:
    """Run ListFiles from the command line (see janito_files._cli)."""
    from ._cli import run_cli

    return run_cli(ListFiles, argv)


if __name__ == "__main__":
    sys.exit(main())
