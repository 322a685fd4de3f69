"""ReplaceTextInFile: exact text replacement, all or nothing, and never a lost update."""

from __future__ import annotations

import os
import sys
import time
from typing import Annotated, Any, ClassVar, Literal

from janito_core import BaseTool, Failure, failure, tool
from janito_core.constraints import MinLen
from janito_core.results import counted

from ._common import SNIFF_BYTES, NotRequired, TypedDict, echoed, invalid, is_binary, locate, os_failure, safe_text
from ._shown import REPLACEMENT, ShownText, escaped

MAX_EDIT_BYTES = 64 * 1024 * 1024
LOCK_WAIT_SECONDS = 30.0
"""How long an edit waits for another edit of the same file to finish."""


class EditLock:
    """An exclusive ``flock`` on the file being edited, held from the read to the rename.

    Every edit of a file (in this process or another janito) takes it, so concurrent edits
    run one after the other and none works on a stale copy: once the lock is held, the name
    must still lead to the file that was locked (an edit that finished meanwhile replaced
    it), else the lock is taken again on the new file.
    """

    def __init__(self, where: Any) -> None:
        self.where = where
        self.fd = -1

    def acquire(self) -> os.stat_result:
        """Lock and open the file; its stat. TimeoutError when another edit holds it."""
        import fcntl

        deadline = time.monotonic() + LOCK_WAIT_SECONDS
        delay = 0.001
        while True:
            fd, _info = self.where.open_regular()
            try:
                while True:
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except BlockingIOError:
                        if time.monotonic() > deadline:
                            raise TimeoutError("another edit of this file is still running") \
                                from None
                        time.sleep(delay)
                        delay = min(delay * 2, 0.05)
                current = self.where.lookup()
                locked = os.fstat(fd)
                if current is not None and (current.st_dev, current.st_ino) == \
                        (locked.st_dev, locked.st_ino):
                    self.fd = fd
                    return locked
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)  # replaced meanwhile: lock the file that is there now

    def release(self) -> None:
        fd, self.fd = self.fd, -1
        if fd >= 0:
            os.close(fd)  # closing drops the flock


class Replaced(TypedDict):
    """What ReplaceTextInFile answers.

    Attributes:
        filepath: The path as given.
        path: The file, as the workspace shows it.
        replacements: How many occurrences were replaced.
        first_line: The line of the first replacement.
        bytes: The file's size after the edit.
        line_endings: "crlf" when the replacement was written with the file's CRLF endings.
        note: What to know about the edit.
    """

    success: Literal[True]
    filepath: str
    path: str
    replacements: int
    first_line: int
    bytes: int
    line_endings: NotRequired[str]
    note: NotRequired[str]


@tool(permissions="w")
class ReplaceTextInFile(BaseTool):
    """Replace an exact piece of text in a file with new text.

    The file is rewritten atomically and only when the replacement succeeds: on any failure
    (text not found, found several times without replace_all, write error) it is untouched.
    Edits of one file run one after the other, and an edit made by another program since
    the file was read is never overwritten (the call answers "conflict"; read and retry).
    Bytes that are not UTF-8 and line endings are preserved. Such bytes read as U+FFFD
    (as ReadFile shows them): a U+FFFD in old_str matches them, and when new_str holds as
    many U+FFFD as old_str, each keeps the bytes its counterpart matched.
    """

    writes_paths: ClassVar[tuple[str, ...]] = ("filepath",)

    renamed_parameters: ClassVar[dict[str, str]] = {
        "search_text": "renamed to 'old_str'",
        "replacement_text": "renamed to 'new_str'",
    }

    def run(
        self,
        filepath: str,
        old_str: Annotated[str, MinLen(1)],
        new_str: str,
        replace_all: bool = False,
    ) -> Replaced | Failure:
        """Replace "old_str" with "new_str" in a file.

        Args:
            filepath: Path of the file to edit, relative to the workspace root.
            old_str: The exact text to find (whitespace and line breaks included).
            new_str: The text to put in its place (may be empty to delete it).
            replace_all: Replace every occurrence; otherwise old_str must occur exactly
                once, so the edit cannot land in the wrong place.
        """
        echo = {"filepath": echoed(filepath)}
        where, refused = locate(self, filepath, "filepath")
        if where is None:
            return refused or invalid("no path given", **echo)
        with where:
            path = safe_text(where.shown)
            if where.is_root:
                return failure(f"{path} is a folder, not a file", "is_a_directory", **echo)
            self.report_start(f"Replacing text in {path}")
            lock = EditLock(where)
            try:
                info = lock.acquire()
            except IsADirectoryError:
                return failure(f"{path} is a folder, not a file", "is_a_directory", **echo)
            except TimeoutError as exc:
                return failure(f"{path}: {exc} after {counted(LOCK_WAIT_SECONDS, 'second')}; try again",
                               "busy", **echo)
            except OSError as exc:
                self.report_error(f"could not read {path}: {exc.strerror or exc}")
                return os_failure(exc, f"read {path}", **echo)
            try:
                return self._edit(where, lock.fd, info, path, old_str, new_str, replace_all,
                                  echo)
            finally:
                lock.release()

    def _edit(self, where: Any, fd: int, info: os.stat_result, path: str, search: str,
              replacement: str, replace_all: bool, echo: dict[str, Any]) -> dict[str, Any]:
        if info.st_size > MAX_EDIT_BYTES:
            return failure(f"{path} is {info.st_size} bytes, more than the {MAX_EDIT_BYTES} "
                           "this tool edits", "file_too_large", **echo)
        from janito_core.workspace import read_fd

        try:
            data = read_fd(fd, info.st_size, MAX_EDIT_BYTES + 1)
        except OSError as exc:
            return os_failure(exc, f"read {path}", **echo)
        if is_binary(data[:SNIFF_BYTES]):
            return failure(f"{path} looks binary (it holds NUL bytes); only text files are "
                           "edited", "binary_file", **echo)
        # surrogateescape keeps bytes that are not UTF-8 exactly as they were.
        text = data.decode("utf-8", "surrogateescape")
        # The model saw such bytes as U+FFFD (ReadFile, the searches) and sends them so:
        # old_str is then looked for in the text as it was shown.
        view = ShownText(text) if REPLACEMENT in search and escaped(text) \
            and not escaped(search) else None
        if view is not None:
            text = view.shown
        count = text.count(search)
        line_endings = None
        crlf = "\r\n" in text and text.count("\r\n") == text.count("\n")
        if crlf or (count == 0 and "\r\n" in text):
            # The file uses CRLF line endings and the model sent LF: a search spanning lines
            # is looked for with CRLF, and new lines are written as the file writes them.
            crlf_search = search.replace("\r\n", "\n").replace("\n", "\r\n")
            if count == 0 and crlf_search != search:
                search, count = crlf_search, text.count(crlf_search)
                line_endings = "crlf"
            if count and (crlf or line_endings):
                converted = replacement.replace("\r\n", "\n").replace("\n", "\r\n")
                if converted != replacement:
                    replacement, line_endings = converted, "crlf"
        if count == 0:
            self.report_error("old_str not found")
            return failure(f"old_str was not found in {path}; the file is unchanged "
                           "(read it again and copy the text exactly)", "text_not_found",
                           **echo, path=path)
        if count > 1 and not replace_all:
            first = text.index(search)
            lines = [text.count("\n", 0, first) + 1]
            at = text.find(search, first + len(search))
            while at >= 0 and len(lines) < 20:
                lines.append(text.count("\n", 0, at) + 1)
                at = text.find(search, at + len(search))
            self.report_error(f"old_str occurs {count} times")
            return failure(f"old_str occurs {count} times in {path} (at lines "
                           f"{', '.join(map(str, lines))}); add surrounding text to make it "
                           "unique or pass replace_all=true; the file is unchanged",
                           "multiple_matches", **echo, path=path, occurrences=count,
                           lines=lines)
        first_line = text.count("\n", 0, text.index(search)) + 1
        kept = 0
        if view is not None:
            new_text, kept = view.replace(search, replacement, replace_all)
        else:
            new_text = text.replace(search, replacement) if replace_all else text.replace(
                search, replacement, 1)
        try:
            new_data = new_text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError as exc:
            return invalid(f"new_str holds characters that cannot be written as "
                           f"UTF-8 ({exc.reason}); the file is unchanged", **echo)
        from janito_core.workspace import ChangedMeanwhile

        try:
            where.write(new_data, overwrite=True, expect=info)
        except ChangedMeanwhile:
            self.report_error(f"{path} changed while it was edited")
            return failure(f"{path} was changed by another program while this edit was made; "
                           "the file is left as that program wrote it: read it again and "
                           "repeat the edit", "conflict", **echo, path=path)
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
        if view is not None:
            result["note"] = (f"old_str's U+FFFD matched bytes of {path} that are not UTF-8"
                              + (f"; new_str's {counted(kept, 'U+FFFD', 'U+FFFD')} kept those bytes as "
                                 "they were" if kept else
                                 "; new_str's U+FFFD, if any, were written as that character"))
        return result

    @classmethod
    def should_load(cls) -> bool:
        try:
            import fcntl  # noqa: F401
        except ImportError:
            return cls.skip("editing needs POSIX file locks (fcntl), which this platform lacks")
        return True


def main(argv: list[str] | None = None) -> int:
    """Run ReplaceTextInFile from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(ReplaceTextInFile, argv)


if __name__ == "__main__":
    sys.exit(main())
