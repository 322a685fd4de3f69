"""ListFiles: the files and folders of a folder, or of its whole tree."""

from __future__ import annotations

import fnmatch
import os
import re
import sys
from collections.abc import Iterator
from typing import Annotated, Any, ClassVar, Literal

from janito_core import BaseTool, Failure, tool
from janito_core.constraints import Ge, Interval, Pattern

from ._common import echoed, safe_text
from ._listing import (
    MAX_RESULTS_LIMIT,
    ListingResult,
    entry_text,
    entry_texts,
    listing_result,
    walk_roots,
)
from ._walk import listing_levels, walk_runs


class Listing(ListingResult):
    """What ListFiles answers.

    Attributes:
        directory: The folder as given.
        entries: Paths below the workspace root; folders end with "/", links with "@".
    """

    success: Literal[True]
    directory: str
    entries: list[str]


@tool(permissions="r")
class ListFiles(BaseTool):
    """List the files and folders of a folder of the workspace, or of its whole tree.

    Entries come sorted, relative to the workspace root; folders end with "/", symbolic
    links with "@" (they are never followed). ".git" and ".janito" folders, what
    ".janitoignore" files hide and, unless respect_gitignore is false, what ".gitignore"
    excludes are left out.
    """

    reads_paths: ClassVar[tuple[str, ...]] = ("directory",)

    renamed_parameters: ClassVar[dict[str, str]] = {
        "paths": "renamed to 'directory' (one folder)",
        "path": "renamed to 'directory'",
        "include_gitignored": "replaced by 'respect_gitignore' (false lists what .gitignore "
                              "excludes)",
    }

    def run(
        self,
        directory: Annotated[str, Pattern(r"\S")] = ".",
        pattern: Annotated[str, Pattern(r"\S")] | None = None,
        recursive: bool = False,
        max_depth: Annotated[int, Ge(0)] | None = None,
        respect_gitignore: bool = True,
        max_results: Annotated[int, Interval(ge=1, le=MAX_RESULTS_LIMIT)] | None = 1000,
    ) -> Listing | Failure:
        """List a folder.

        Args:
            directory: The folder to list, relative to the workspace root ("." is the root).
            pattern: Only entries whose name matches this glob, such as "*.py" ("*" any
                characters, "?" one, "[abc]" one of them); ending in "/" keeps only folders.
                Folders that do not match are still looked into when recursive.
            recursive: Also list what the subfolders hold, and theirs, down to max_depth.
            max_depth: How many levels of subfolders to descend into: 0 is the folder's own
                entries, 1 adds its subfolders' entries, and so on (as janito 4.50 counted);
                null for no limit. Given without recursive, it still applies.
            respect_gitignore: Leave out what .gitignore files exclude (.janitoignore files
                are always respected).
            max_results: Most entries to return (null for 100,000); the listing is cut
                after that and "truncated" is true.
        """
        echo = {"directory": echoed(directory)}
        # Without recursive, max_depth still applies: asking for depth means wanting it.
        limit = listing_levels(max_depth) if recursive or max_depth is not None else 1
        roots = walk_roots(self, [directory], echo)
        if isinstance(roots, dict):
            return roots
        starts, problems = roots
        self.report_start(f"Listing {safe_text(directory)}"
                          + (" recursively" if limit is None or limit > 1 else ""))
        unreadable: list[str] = []
        matches = _name_filter(pattern)

        def found() -> Iterator[list[str]]:
            for _path, shown, kind in starts:
                if kind != "directory":  # a file named as the directory stands for itself
                    if matches is None or matches(os.path.basename(shown), kind):
                        yield [entry_text(shown, kind)]
                    continue
                for run in walk_runs(self, shown, max_depth=limit, gitignore=respect_gitignore,
                                     errors=unreadable):
                    names, kinds = run.names, run.kinds
                    if matches is not None:
                        chosen = [i for i, name in enumerate(names) if matches(name, kinds[i])]
                        names, kinds = [names[i] for i in chosen], [kinds[i] for i in chosen]
                    yield entry_texts(run.prefix, names, kinds)

        cap = MAX_RESULTS_LIMIT if max_results is None else max_results
        result = listing_result(echo, "entries", found(), cap,
                                f"only the first {cap} entries are shown; list a subfolder, "
                                "lower max_depth or raise max_results", problems, unreadable)
        count = result["count"]
        self.report_result(f"{count} entr{'y' if count == 1 else 'ies'}"
                           + (" (truncated)" if result["truncated"] else ""))
        return result


def _name_filter(pattern: str | None) -> Any:
    """A test (name, kind) -> bool for ``pattern``, or None when every entry is kept."""
    if pattern is None:
        return None
    folders_only = pattern.endswith("/")
    regex = re.compile(fnmatch.translate(pattern.rstrip("/") or "*"))

    def matches(name: str, kind: str) -> bool:
        if folders_only and kind != "directory":
            return False
        return regex.match(name) is not None

    return matches


def main(argv: list[str] | None = None) -> int:
    """Run ListFiles from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(ListFiles, argv)


if __name__ == "__main__":
    sys.exit(main())
