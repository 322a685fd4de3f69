"""ReadMultipleFiles: several text files in one call, within one byte budget."""

from __future__ import annotations

import sys
from typing import Annotated, Any, ClassVar

from janito_core import BaseTool, failure, tool
from janito_core.constraints import Ge, Interval, Len, Pattern
from janito_core.results import counted

from ._common import DEFAULT_MAX_BYTES, echoed, invalid, open_for_reading, safe_text, split_paths_in
from ._read import MAX_BYTES_LIMIT, read_range

MAX_FILES = 100


@tool(permissions="r")
class ReadMultipleFiles(BaseTool):
    """Read several text files at once; each gets its own result inside "files".

    The files share one byte budget (max_bytes): a file that does not fit is cut with a
    visible marker, and files after the budget is spent are listed as not read.
    """

    reads_paths: ClassVar[tuple[str, ...]] = ("filepaths",)

    renamed_parameters: ClassVar[dict[str, str]] = {"paths": "renamed to 'filepaths'"}

    def run(
        self,
        filepaths: Annotated[str, Pattern(r"\S")]
        | Annotated[list[Annotated[str, Pattern(r"\S")]], Len(1, MAX_FILES)],
        max_lines: Annotated[int, Ge(1)] | None = None,
        max_bytes: Annotated[int, Interval(ge=1, le=MAX_BYTES_LIMIT)] = DEFAULT_MAX_BYTES,
    ) -> dict[str, Any]:
        """Read several files.

        Args:
            filepaths: File paths relative to the workspace root: a list, or one string with
                paths separated by spaces.
            max_lines: Most lines to return from each file; null for no line limit.
            max_bytes: Most bytes of text to return for all files together.
        """
        echo = {"filepaths": echoed(filepaths)}
        names = split_paths_in(self, filepaths)
        if not names:
            return invalid("filepaths is empty; give at least one file path", **echo)
        if len(names) > MAX_FILES:
            return invalid(f"at most {MAX_FILES} files can be read in one call, got "
                           f"{len(names)}", **echo)
        self.report_start(f"Reading {len(names)} file{'s' if len(names) != 1 else ''}")
        budget = max_bytes
        files: list[dict[str, Any]] = []
        read = 0
        for name in names:
            entry: dict[str, Any] = {"filepath": safe_text(name)}
            if budget <= 0:
                entry.update(failure("not read: the max_bytes budget was spent on the files "
                                     "before it; read it in another call", "budget_exhausted"))
                files.append(entry)
                continue
            opened, refused = open_for_reading(self, name, "filepath")
            if opened is None:
                entry.update(refused or invalid("no path given"))
                files.append(entry)
                continue
            fd, info, shown = opened
            entry["path"] = safe_text(shown)
            result = read_range(fd, info, 1, max_lines, budget)
            entry.update(result)
            if result["success"]:
                read += 1
                budget -= len(result["content"].encode("utf-8", "replace"))
            files.append(entry)
        self.report_result(f"Read {read} of {counted(len(names), 'file')}")
        outcome: dict[str, Any] = {"success": read > 0, **echo, "files": files, "read": read,
                                   "failed": len(names) - read}
        if not read:
            outcome["error"] = "none of the files could be read; see files for each reason"
            outcome["error_type"] = files[0].get("error_type", "not_found")
        return outcome


def main(argv: list[str] | None = None) -> int:
    """Run ReadMultipleFiles from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(ReadMultipleFiles, argv)


if __name__ == "__main__":
    sys.exit(main())
