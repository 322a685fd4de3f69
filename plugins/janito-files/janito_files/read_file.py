"""ReadFile: a range of lines of a text file."""

from __future__ import annotations

import sys
from typing import Annotated, ClassVar, Literal

from janito_core import BaseTool, Failure, tool
from janito_core.constraints import Ge, Interval, Le
from janito_core.results import counted

from ._common import DEFAULT_MAX_BYTES, NotRequired, echoed, invalid, open_for_reading, safe_text
from ._read import MAX_BYTES_LIMIT, TextRead, read_range


class ReadText(TextRead):
    """What ReadFile answers.

    Attributes:
        from_end: The count of last lines asked for (a negative start_line).
    """

    success: Literal[True]
    from_end: NotRequired[int]


@tool(permissions="r")
class ReadFile(BaseTool):
    """Read a text file, or a range of its lines, from the workspace.

    Long files are cut at "max_lines" or "max_bytes" with a visible marker that says
    where to continue. Binary files are refused; bytes that are not UTF-8 are shown as
    U+FFFD and counted in "decode_errors".
    """

    reads_paths: ClassVar[tuple[str, ...]] = ("filepath",)

    def run(
        self,
        filepath: str,
        start_line: Annotated[int, Ge(1)] | Annotated[int, Le(-1)] = 1,
        max_lines: Annotated[int, Ge(1)] | None = None,
        max_bytes: Annotated[int, Interval(ge=1, le=MAX_BYTES_LIMIT)] = DEFAULT_MAX_BYTES,
        line_numbers: bool = False,
    ) -> ReadText | Failure:
        """Read lines of a text file.

        Args:
            filepath: Path of the file, relative to the workspace root.
            start_line: First line to return, counting from 1; a negative number counts
                from the end, like tail: -20 reads the last 20 lines.
            max_lines: Most lines to return; null returns up to the end (within max_bytes).
            max_bytes: Most bytes of text to return; the content is cut at a line boundary
                and ends with a truncation marker giving the next start_line.
            line_numbers: Prefix each line with its number ("  12| text").
        """
        echo = {"filepath": echoed(filepath)}
        opened, refused = open_for_reading(self, filepath, "filepath")
        if opened is None:
            return refused or invalid("no path given", **echo)
        fd, info, path = opened
        path = safe_text(path)
        self.report_start(f"Reading {path}" + (f" (last {counted(-start_line, 'line')})"
                                                 if start_line < 0 else ""))
        result = read_range(fd, info, start_line, max_lines, max_bytes, line_numbers)
        if not result["success"]:
            self.report_error(result["error"])
            return {**result, **echo}
        self.report_result(
            f"Read lines {result['start_line']}-{result['end_line']}"
            + (" (truncated)" if result["truncated"] else "")
        )
        return {"success": True, **echo, "path": path,
                **{k: v for k, v in result.items() if k != "success"}}


def main(argv: list[str] | None = None) -> int:
    """Run ReadFile from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(ReadFile, argv)


if __name__ == "__main__":
    sys.exit(main())
