"""SearchRegex: find the lines that match a regular expression, with a time limit."""

from __future__ import annotations

import sys
from typing import Annotated, ClassVar

from janito_core import BaseTool, Failure, tool
from janito_core.constraints import Ge, Interval, MinLen, Pattern

from ._search import MAX_DEPTH_CHANGE, MAX_RESULTS_LIMIT, RegexSearched, search, search_echo


@tool(permissions="r")
class SearchRegex(BaseTool):
    """Search files for lines matching a regular expression (Python syntax, one line at a time).

    Folders are searched as SearchText searches them. One search may spend at most 5
    seconds matching: a pattern that backtracks without end answers "regex_timeout".
    """

    reads_paths: ClassVar[tuple[str, ...]] = ("paths",)

    changed_parameters: ClassVar[dict[str, str]] = {"max_depth": MAX_DEPTH_CHANGE}

    renamed_parameters: ClassVar[dict[str, str]] = {
        "query": "renamed to 'pattern' here (SearchText takes a plain-text 'query')",
        "use_regex": "not needed: SearchRegex always takes a regular expression",
        "include_gitignored": "replaced by 'respect_gitignore' (false searches what "
                              ".gitignore excludes)",
    }

    def run(
        self,
        paths: Annotated[str, Pattern(r"\S")]
        | Annotated[list[Annotated[str, Pattern(r"\S")]], MinLen(1)],
        pattern: Annotated[str, MinLen(1)],
        case_sensitive: bool = True,
        max_depth: Annotated[int, Ge(1)] | None = None,
        max_results: Annotated[int, Interval(ge=1, le=MAX_RESULTS_LIMIT)] | None = 100,
        count_only: bool = False,
        respect_gitignore: bool = True,
        exclude: str | list[str] | None = None,
    ) -> RegexSearched | Failure:
        """Search for a regular expression in files.

        Args:
            paths: Files or folders to search, relative to the workspace root: a list, or one
                string with paths separated by spaces ("." is the workspace root).
            pattern: A Python regular expression, matched within each line ("^" and "$"
                match at line starts and ends; a match never spans lines).
            case_sensitive: Match letter case exactly.
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
        return search(self, search_echo(paths, "pattern", pattern), paths, pattern, True,
                      case_sensitive, max_depth, max_results, count_only, respect_gitignore,
                      exclude)


def main(argv: list[str] | None = None) -> int:
    """Run SearchRegex from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(SearchRegex, argv)


if __name__ == "__main__":
    sys.exit(main())
