"""SearchText: find the lines that contain a text, fast."""

from __future__ import annotations

import sys
from typing import Annotated, ClassVar

from janito_core import BaseTool, Failure, tool
from janito_core.constraints import Ge, Interval, MinLen, Pattern

from ._search import MAX_DEPTH_CHANGE, MAX_RESULTS_LIMIT, TextSearched, search, search_echo


@tool(permissions="r")
class SearchText(BaseTool):
    """Search files for lines containing an exact text (SearchRegex takes a regular expression).

    Folders are searched recursively in sorted order, skipping ".git", ".janito", what
    ".janitoignore" hides, what ".gitignore" excludes (unless respect_gitignore is false),
    binary files and symbolic links. Each match gives the file, the line number and the line.
    """

    reads_paths: ClassVar[tuple[str, ...]] = ("paths",)

    changed_parameters: ClassVar[dict[str, str]] = {"max_depth": MAX_DEPTH_CHANGE}

    renamed_parameters: ClassVar[dict[str, str]] = {
        "use_regex": "removed: use the SearchRegex tool (its 'pattern' is the regular "
                     "expression)",
        "include_gitignored": "replaced by 'respect_gitignore' (false searches what "
                              ".gitignore excludes)",
    }

    def run(
        self,
        paths: Annotated[str, Pattern(r"\S")]
        | Annotated[list[Annotated[str, Pattern(r"\S")]], MinLen(1)],
        query: Annotated[str, MinLen(1)],
        case_sensitive: bool = True,
        max_depth: Annotated[int, Ge(1)] | None = None,
        max_results: Annotated[int, Interval(ge=1, le=MAX_RESULTS_LIMIT)] | None = 100,
        count_only: bool = False,
        respect_gitignore: bool = True,
        exclude: str | list[str] | None = None,
    ) -> TextSearched | Failure:
        """Search for text in files.

        Args:
            paths: Files or folders to search, relative to the workspace root: a list, or one
                string with paths separated by spaces ("." is the workspace root).
            query: The exact text to find within a line (no line breaks).
            case_sensitive: Match letter case exactly; false also finds "Text" for "text".
            max_depth: How many folder levels to search: 1 is the files directly in the
                given folders, 2 adds their subfolders' files, and so on; null for no limit.
            max_results: Most matching lines to return (at most 10,000; null for 10,000);
                the search stops there and "truncated" is true.
            count_only: Return the number of matching lines per file instead of the lines.
            respect_gitignore: Skip what .gitignore files exclude (.janitoignore files are
                always respected).
            exclude: Globs of folders to keep out of and files to skip, matched against
                names and paths below the searched folder: "node_modules .venv *.min.js".
        """
        return search(self, search_echo(paths, "query", query), paths, query, False,
                      case_sensitive, max_depth, max_results, count_only, respect_gitignore,
                      exclude)


def main(argv: list[str] | None = None) -> int:
    """Run SearchText from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(SearchText, argv)


if __name__ == "__main__":
    sys.exit(main())
