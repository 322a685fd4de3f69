"""ReplaceTextInFile: exact text replacement, all or nothing."""

from __future__ import annotations

import sys
from typing import Any

from janito_core import BaseTool, failure, tool

from ._atomic import atomic_write
from ._common import SNIFF_BYTES, echoed, invalid, is_binary, open_regular, os_failure, resolve, shown

MAX_EDIT_BYTES = 64 * 1024 * 1024


@tool(permissions="w")
class ReplaceTextInFile(BaseTool):
    """Replace an exact piece of text in a file with new text.

    The file is rewritten atomically and only when the replacement succeeds: on any failure
    (text not found, found several times without replace_all, write error) it is untouched.
    Bytes that are not UTF-8 and line endings are preserved.
    """

    def run(
        self,
        filepath: str,
        search_text: str,
        replacement_text: str,
        replace_all: bool = False,
    ) -> dict[str, Any]:
        """Replace "search_text" with "replacement_text" in a file.

        Args:
            filepath: Path of the file to edit, relative to the workspace root.
            search_text: The exact text to find (whitespace and line breaks included).
            replacement_text: The text to put in its place (may be empty to delete it).
            replace_all: Replace every occurrence; otherwise search_text must occur exactly
                once, so the edit cannot land in the wrong place.
        """
        echo = {"filepath": echoed(filepath)}
        if not search_text:
            return invalid("search_text must not be empty", **echo)
        real, refused = resolve(self, filepath, "filepath")
        if refused is not None or real is None:
            return refused or invalid("no path given", **echo)
        path = shown(self, real)
        self.report_start(f"Replacing text in {path}")
        try:
            handle, info = open_regular(real)
            with handle:
                if info.st_size > MAX_EDIT_BYTES:
                    return failure(f"{path} is {info.st_size} bytes, more than the "
                                   f"{MAX_EDIT_BYTES} this tool edits", "file_too_large",
                                   **echo)
                data = handle.read()
        except IsADirectoryError:
            return failure(f"{path} is a folder, not a file", "is_a_directory", **echo)
        except OSError as exc:
            self.report_error(f"could not read {path}: {exc.strerror or exc}")
            return os_failure(exc, f"read {path}", **echo)
        if is_binary(data[:SNIFF_BYTES]):
            return failure(f"{path} looks binary (it holds NUL bytes); only text files are "
                           "edited", "binary_file", **echo)
        # surrogateescape keeps bytes that are not UTF-8 exactly as they were.
        text = data.decode("utf-8", "surrogateescape")
        search, replacement = search_text, replacement_text
        count = text.count(search)
        line_endings = None
        if count == 0 and "\n" in search and "\r\n" in text and "\r\n" not in search:
            # The file uses CRLF line endings; the model sent LF.
            search = search.replace("\n", "\r\n")
            replacement = replacement.replace("\r\n", "\n").replace("\n", "\r\n")
            count = text.count(search)
            line_endings = "crlf"
        if count == 0:
            self.report_error("search_text not found")
            return failure(f"search_text was not found in {path}; the file is unchanged "
                           "(read it again and copy the text exactly)", "text_not_found",
                           **echo, path=path)
        if count > 1 and not replace_all:
            first = text.index(search)
            lines = [text.count("\n", 0, first) + 1]
            at = text.find(search, first + len(search))
            while at >= 0 and len(lines) < 20:
                lines.append(text.count("\n", 0, at) + 1)
                at = text.find(search, at + len(search))
            self.report_error(f"search_text occurs {count} times")
            return failure(f"search_text occurs {count} times in {path} (at lines "
                           f"{', '.join(map(str, lines))}); add surrounding text to make it "
                           "unique or pass replace_all=true; the file is unchanged",
                           "multiple_matches", **echo, path=path, occurrences=count,
                           lines=lines)
        first_line = text.count("\n", 0, text.index(search)) + 1
        new_text = text.replace(search, replacement) if replace_all else text.replace(
            search, replacement, 1)
        try:
            new_data = new_text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError as exc:
            return invalid(f"replacement_text holds characters that cannot be written as "
                           f"UTF-8 ({exc.reason}); the file is unchanged", **echo)
        try:
            atomic_write(real, new_data, overwrite=True)
        except OSError as exc:
            self.report_error(f"could not write {path}: {exc.strerror or exc}")
            result = os_failure(exc, f"write {path}", **echo)
            result["error"] += "; the file is unchanged"
            return result
        replaced = count if replace_all else 1
        self.report_result(f"Replaced {replaced} occurrence{'s' if replaced != 1 else ''} "
                           f"in {path}")
        result: dict[str, Any] = {
            "success": True, **echo, "path": path, "replacements": replaced,
            "first_line": first_line, "bytes": len(new_data),
        }
        if line_endings:
            result["line_endings"] = line_endings
        return result


def main(argv: list[str] | None = None) -> int:
    """Run ReplaceTextInFile from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(ReplaceTextInFile, argv)


if __name__ == "__main__":
    sys.exit(main())
