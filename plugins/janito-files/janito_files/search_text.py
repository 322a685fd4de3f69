"""SearchText: find lines matching a text or a regular expression, fast."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from typing import Any

from janito_core import BaseTool, failure, tool

from ._common import SNIFF_BYTES, clip_line, echoed, invalid, open_regular, safe_text, shown
from ._listing import check_limits, walk_roots
from ._walk import depth_limit, walk

# Files larger than this are not searched (they are named in ``skipped_large``).
MAX_FILE_BYTES = 64 * 1024 * 1024

def _line_text(raw: bytes) -> str:
    return clip_line(raw.decode("utf-8", "replace").rstrip("\r"))


class BytesMatcher:
    """Literal search on the raw bytes: ``bytes.find`` over the whole buffer, no decoding.

    With ``fold`` (an ASCII query searched without case), the buffer and the needle are
    lower-cased first; ``bytes.lower`` changes only ASCII letters, so offsets are kept.
    Only the lines that match are cut out and decoded.
    """

    def __init__(self, needle: bytes, fold: bool) -> None:
        self.needle = needle
        self.fold = fold

    def lines(self, data: bytes) -> Iterator[tuple[int, str]] | None:
        """(line number, line) per matching line; None for a binary file."""
        hay = data.lower() if self.fold else data
        needle = self.needle
        at = hay.find(needle)
        if at < 0:
            return iter(())
        if b"\x00" in data:
            return None
        return self._lines(data, hay, at)

    def _lines(self, data: bytes, hay: bytes, at: int) -> Iterator[tuple[int, str]]:
        needle = self.needle
        line_no = 1
        counted = 0
        size = len(data)
        while at >= 0:
            start = data.rfind(b"\n", 0, at) + 1
            end = data.find(b"\n", at)
            if end < 0:
                end = size
            line_no += data.count(b"\n", counted, start)
            counted = start
            yield line_no, _line_text(data[start:end])
            at = hay.find(needle, end + 1)

    def count(self, data: bytes) -> int | None:
        """How many lines match; None for a binary file."""
        hay = data.lower() if self.fold else data
        needle = self.needle
        at = hay.find(needle)
        if at < 0:
            return 0
        if b"\x00" in data:
            return None
        lines = 0
        while at >= 0:
            lines += 1
            end = hay.find(b"\n", at)
            if end < 0:
                break
            at = hay.find(needle, end + 1)
        return lines


class RegexMatcher:
    """Regular-expression search on the decoded text: one ``search`` over the whole buffer."""

    def __init__(self, regex: re.Pattern[str]) -> None:
        self.regex = regex

    def _matches(self, data: bytes) -> Iterator[tuple[str, int, int]] | None:
        """(text, line start, line end) per matching line; None for a binary file."""
        if b"\x00" in data:
            return None
        text = data.decode("utf-8", "replace")
        found = self.regex.search(text)
        if found is None:
            return iter(())
        return self._walk(text, found)

    def _walk(self, text: str, found: re.Match[str] | None) -> Iterator[tuple[str, int, int]]:
        # The search over the whole buffer finds candidate lines fast; each candidate is then
        # confirmed on its own line (pos/endpos bound the search), so a match never spans a
        # line break, as with grep.
        size = len(text)
        search = self.regex.search
        while found is not None:
            at = found.start()
            if at >= size and (not size or text[-1] == "\n"):
                break  # an empty match at the very end, after the last line, is on no line
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            if end < 0:
                end = size
            if found.end() <= end or search(text, start, end) is not None:
                yield text, start, end
            if end >= size:
                break
            found = search(text, end + 1)

    def lines(self, data: bytes) -> Iterator[tuple[int, str]] | None:
        matches = self._matches(data)
        if matches is None:
            return None
        return self._numbered(matches)

    @staticmethod
    def _numbered(matches: Iterator[tuple[str, int, int]]) -> Iterator[tuple[int, str]]:
        line_no = 1
        counted = 0
        for text, start, end in matches:
            line_no += text.count("\n", counted, start)
            counted = start
            yield line_no, clip_line(text[start:end].rstrip("\r"))

    def count(self, data: bytes) -> int | None:
        matches = self._matches(data)
        if matches is None:
            return None
        return sum(1 for _ in matches)



def make_matcher(query: str, use_regex: bool, case_sensitive: bool) -> BytesMatcher | RegexMatcher:
    """The fastest matcher with the requested meaning (raises re.error for a bad regex)."""
    if not use_regex:
        if case_sensitive:
            try:
                # surrogateescape lets a query name bytes that are not UTF-8.
                needle = query.encode("utf-8", "surrogateescape")
            except UnicodeEncodeError:
                needle = query.encode("utf-8", "surrogatepass")
            return BytesMatcher(needle, fold=False)
        if query.isascii():
            return BytesMatcher(query.lower().encode("ascii"), fold=True)
        return RegexMatcher(re.compile(re.escape(query), re.IGNORECASE))
    flags = re.MULTILINE | (0 if case_sensitive else re.IGNORECASE)
    return RegexMatcher(re.compile(query, flags))


@tool(permissions="r")
class SearchText(BaseTool):
    """Search files for lines containing a text or matching a regular expression.

    Folders are searched recursively in sorted order, skipping ".git", what ".gitignore"
    excludes, binary files and symbolic links. Each match gives the file, the line number
    and the line.
    """

    def run(
        self,
        paths: str | list[str],
        query: str,
        use_regex: bool = False,
        case_sensitive: bool = False,
        max_depth: int = 0,
        max_results: int = 100,
        count_only: bool = False,
        include_gitignored: bool = False,
    ) -> dict[str, Any]:
        """Search for text in files.

        Args:
            paths: Files or folders to search, relative to the workspace root: a list, or one
                string with paths separated by spaces ("." is the workspace root).
            query: The text to find, or a Python regular expression when use_regex is true
                ("^" and "$" match at line starts and ends).
            use_regex: Treat query as a regular expression instead of plain text.
            case_sensitive: Match letter case exactly.
            max_depth: How many folder levels to descend (1 = only files directly in the
                given folders); 0 means no limit.
            max_results: Most matching lines to return; the search stops there and
                "truncated" is true.
            count_only: Return the number of matching lines per file instead of the lines.
            include_gitignored: Also search what .gitignore files exclude.
        """
        echo = {"paths": echoed(paths), "query": echoed(query)}
        if not query:
            return invalid("query must not be empty", **echo)
        problem = check_limits(max_depth, max_results, echo)
        if problem is not None:
            return problem
        try:
            matcher = make_matcher(query, use_regex, case_sensitive)
        except re.error as exc:
            return failure(f"query is not a valid regular expression: {exc}", "invalid_regex",
                           **echo)
        except (RecursionError, OverflowError, ValueError) as exc:
            return failure(f"query cannot be compiled: {exc}", "invalid_regex", **echo)
        roots = walk_roots(self, paths, echo)
        if isinstance(roots, dict):
            return roots
        starts, problems = roots
        shown_query = safe_text(query if len(query) <= 80 else query[:77] + "...")
        self.report_start(f"Searching for {shown_query!r} in "
                          f"{', '.join(safe_text(p) for p, _, _ in starts[:5])}")
        scan = _Scan(self, matcher, max_results, count_only)
        limit = depth_limit(max_depth)
        for _path, real, kind in starts:
            if kind == "file":
                scan.file(real, explicit=True)
            elif kind == "directory":
                for entry in walk(real, root=self.workspace.root, max_depth=limit,
                                  gitignore=not include_gitignored, errors=scan.unreadable):
                    if entry.kind == "file":
                        scan.file(entry.path)
                        if scan.full:
                            break
            if scan.full:
                break
        return scan.result(echo, problems)


class _Scan:
    """The state of one search: what was found, counted and skipped."""

    def __init__(self, tool: BaseTool, matcher: BytesMatcher | RegexMatcher, max_results: int,
                 count_only: bool) -> None:
        self.tool = tool
        self.matcher = matcher
        self.max_results = max_results
        self.count_only = count_only
        self.matches: list[dict[str, Any]] = []
        self.counts: list[dict[str, Any]] = []
        self.total = 0
        self.files_searched = 0
        self.binary: list[str] = []
        self.binary_count = 0
        self.large: list[str] = []
        self.unreadable: list[str] = []
        self.full = False

    def file(self, path: str, explicit: bool = False) -> None:
        try:
            handle, info = open_regular(path, buffering=0)
            with handle:
                if info.st_size > MAX_FILE_BYTES:
                    self.large.append(path)
                    return
                # Sniff first: a binary file (NUL in its first bytes) is never read whole.
                data = handle.read(SNIFF_BYTES)
                binary = b"\x00" in data
                if not binary and len(data) == SNIFF_BYTES:
                    data += handle.readall()
        except OSError as exc:
            self.unreadable.append(f"{path}: {exc.strerror or exc}")
            return
        if self.count_only:
            count = None if binary else self.matcher.count(data)
            if count is None:
                self._binary(path, explicit)
                return
            self.files_searched += 1
            if count:
                self.total += count
                self.counts.append({"path": shown(self.tool, path), "count": count})
            return
        found = None if binary else self.matcher.lines(data)
        if found is None:
            self._binary(path, explicit)
            return
        self.files_searched += 1
        name = None
        for line_no, text in found:
            if name is None:
                name = shown(self.tool, path)
            self.matches.append({"path": name, "line": line_no, "text": text})
            if len(self.matches) >= self.max_results:
                self.full = True
                return

    def _binary(self, path: str, explicit: bool) -> None:
        self.binary_count += 1
        if explicit:
            self.binary.append(path)

    def result(self, echo: dict[str, Any], problems: list[dict[str, Any]]) -> dict[str, Any]:
        tool = self.tool
        out: dict[str, Any] = {"success": True, **echo}
        truncated = False
        if self.count_only:
            out["counts"] = self.counts
            out["total_matches"] = self.total
            out["files_matched"] = len(self.counts)
        else:
            truncated = self.full
            out["matches"] = self.matches
            out["count"] = len(self.matches)
            out["files_matched"] = len({m["path"] for m in self.matches})
        out["files_searched"] = self.files_searched
        out["truncated"] = truncated
        if truncated:
            out["note"] = (f"stopped at max_results={self.max_results} matching lines (there "
                           "may be more); narrow the query or paths, or raise max_results")
        if self.binary_count:
            out["binary_files_skipped"] = self.binary_count
        if self.binary:
            out["skipped_binary"] = [shown(tool, p) for p in self.binary]
        if self.large:
            out["skipped_large"] = [shown(tool, p) for p in self.large[:50]]
        if self.unreadable:
            out["unreadable"] = [safe_text(u) for u in self.unreadable[:50]]
        if problems:
            out["errors"] = problems
        tool.report_result(
            f"{out.get('total_matches', out.get('count'))} matching line(s) in "
            f"{out['files_matched']} file(s)" + (" (truncated)" if truncated else ""))
        return out


def main(argv: list[str] | None = None) -> int:
    """Run SearchText from the command line (see janito_files._cli)."""
    from ._cli import run_cli

    return run_cli(SearchText, argv)


if __name__ == "__main__":
    sys.exit(main())
