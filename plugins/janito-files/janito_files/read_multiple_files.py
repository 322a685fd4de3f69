"""ReadMultipleFiles: several text files in one call, within one byte budget."""

from __future__ import annotations

import sys
from typing import Annotated, Any, ClassVar, Literal

from janito_core import BaseTool, Failure, failure, tool
from janito_core.constraints import Ge, Interval, Len, Pattern
from janito_core.results import counted

from ._common import (
    DEFAULT_MAX_BYTES,
    NotRequired,
    TypedDict,
    echoed,
    invalid,
    open_for_reading,
    safe_text,
    split_paths_in,
)
from ._read import MAX_BYTES_LIMIT, TextRead, read_range

MAX_FILES = 100


class FileText(TextRead):
    """A file that was read (its keys are ReadFile's)."""

    success: bool


class FileNotRead(TypedDict):
    """A file that was not read, and why.

    Attributes:
        filepath: The path as given.
        path: The file, as the workspace shows it (when it was found).
        error: Why it was not read.
        error_type: The kind of problem (not_found, binary_file, budget_exhausted, ...).
        size: The size of a binary file.
        total_lines: Lines in the file, when the start was past its end.
    """

    filepath: str
    path: NotRequired[str]
    success: bool
    error: str
    error_type: str
    size: NotRequired[int]
    total_lines: NotRequired[int | None]


class FilesRead(TypedDict):
    """What ReadMultipleFiles answers.

    Attributes:
        filepaths: The paths as given.
        files: Each file, in the order given: its text, or why it was not read.
        read: How many were read.
        failed: How many were not.
    """

    success: Literal[True]
    filepaths: str | list[str]
    files: list[FileText | FileNotRead]
    read: int
    failed: int


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
    ) -> FilesRead | Failure:
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
