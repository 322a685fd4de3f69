"""CreateFile: write a text file atomically."""

from __future__ import annotations

import os
import sys
from typing import ClassVar, Literal

from janito_core import BaseTool, Failure, failure, tool
from janito_core.results import counted

from ._common import TypedDict, echoed, invalid, locate, os_failure, safe_text


class CreatedFile(TypedDict):
    """What CreateFile answers.

    Attributes:
        filepath: The path as given.
        path: The file, as the workspace shows it.
        created: True when the file did not exist.
        overwritten: True when an existing file was replaced.
        bytes: Bytes written.
        lines: Lines written.
    """

    success: Literal[True]
    filepath: str
    path: str
    created: bool
    overwritten: bool
    bytes: int
    lines: int


@tool(permissions="w")
class CreateFile(BaseTool):
    """Create a text file with the given content, or replace one when overwrite is true.

    The write is atomic: the file holds either its old content or the complete new one,
    never a part. Missing parent folders are created; an existing file keeps its mode.
    """

    writes_paths: ClassVar[tuple[str, ...]] = ("filepath",)

    def run(self, filepath: str, content: str | None = None, overwrite: bool = False
            ) -> CreatedFile | Failure:
        """Write "content" to a file.

        Args:
            filepath: Path of the file to create, relative to the workspace root.
            content: The complete text of the file (written as UTF-8). Left out (or null),
                the file is created empty, as janito 4.50 did; an existing file is then never
                replaced: pass "" with overwrite=true to empty one.
            overwrite: Replace the file if it already exists; otherwise an existing file is
                left alone and the call fails.
        """
        echo = {"filepath": echoed(filepath)}
        if filepath.endswith(("/", os.sep)):
            return failure("the path names a folder, not a file", "is_a_directory", **echo)
        if content is None:
            if overwrite:
                # A call that lost its content on the way must not empty a file.
                said = ('missing: without it no file is replaced; pass the new text, or "" '
                        'to empty the file')
                return invalid(f"content is {said}", **echo,
                               details=[{"field": "content", "error": said}])
            content = ""
        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError as exc:
            return invalid(f"content holds characters that cannot be written as UTF-8 "
                           f"({exc.reason} at position {exc.start})", **echo)
        where, refused = locate(self, filepath, "filepath", make_parents=True, action="create")
        if where is None:
            return refused or invalid("no path given", **echo)
        with where:
            path = safe_text(where.shown)
            if where.is_root:
                return failure("the path names a folder, not a file", "is_a_directory", **echo)
            self.report_start(f"Writing {path} ({counted(len(data), 'byte')})")
            try:
                replaced = where.write(data, overwrite=overwrite)
            except FileExistsError:
                self.report_error(f"{path} exists")
                return failure(f"{path} already exists; pass overwrite=true to replace it",
                               "file_exists", **echo, path=path)
            except IsADirectoryError:
                return failure(f"{path} is a folder, not a file", "is_a_directory", **echo)
            except OSError as exc:
                self.report_error(f"could not write {path}: {exc.strerror or exc}")
                return os_failure(exc, f"write {path}", **echo)
        lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
        self.report_result(f"{'Replaced' if replaced else 'Created'} {path} ({counted(lines, 'line')})")
        return {"success": True, **echo, "path": path, "created": not replaced,
                "overwritten": replaced, "bytes": len(data), "lines": lines}


def main(argv: list[str] | None = None) -> int:
    """Run CreateFile from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(CreateFile, argv)


if __name__ == "__main__":
    sys.exit(main())
