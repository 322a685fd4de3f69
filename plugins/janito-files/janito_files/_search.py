"""The search engine of SearchText and SearchRegex: walking, reading, matching, the result.

Each file is read once as bytes. A plain-text query is found with ``bytes.find`` over the
whole buffer; a regular expression runs once over the decoded text (see
:func:`matching_lines`). Only the lines around matches are decoded and returned."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator
from itertools import islice
from typing import TYPE_CHECKING, Any

from janito_core import failure
from janito_core.results import INVALID_ARGUMENTS, counted
from janito_core.workspace import open_regular_at

from ._common import (
    LINE_CHARS,
    SNIFF_BYTES,
    clip_line,
    echoed,
    safe_text,
)
from ._listing import Start, walk_roots
from ._walk import Exclude, depth_limit, parse_exclude, walk

if TYPE_CHECKING:
    from janito_core import BaseTool

# Files larger than this are not searched (they are named in ``skipped_large``).
MAX_FILE_BYTES = 64 * 1024 * 1024

MAX_RESULTS_LIMIT = 10_000
"""The most matching lines one search may return (each line up to LINE_CHARS characters)."""

# Seconds a regular expression may spend matching over one whole search. A pattern that
# backtracks catastrophically (``(a|aa)+$`` against "aaaa...!") would otherwise run for hours.
REGEX_TIME_LIMIT = 5.0

# How large a regular expression may grow once its fixed repetition counts are multiplied out
# (``(?:a{3000}){3000}`` is nine million): the ``regex`` package expands such counts when it
# compiles a pattern, which for huge products takes seconds and gigabytes.
MAX_REGEX_SIZE = 100_000


def read_open(fd: int, size: int, sniff: int, most: int) -> bytes | None:
    """The bytes a search looks at in the regular file open as ``fd`` (closed here), whose
    size was ``size``: all of them, or only the first ``sniff`` when a NUL among them marks
    a binary file, which is never read whole. None when the file holds more than ``most``
    bytes. Raises the OSError of the read.
    """
    # os-level calls rather than a file object: over thousands of small files, building
    # and closing a file object per file costs a fifth of a search that finds nothing.
    try:
        if size > most:
            return None
        data = os.read(fd, sniff)
        if len(data) < sniff or b"\x00" in data:
            return data
        chunks = [data]
        total = len(data)
        while True:
            # Asking for one byte more than the size reads an unchanged file in one call; a
            # read of a regular file returns less than asked only at its end.
            wanted = max(size + 1 - total, 1 << 16)
            chunk = os.read(fd, wanted)
            chunks.append(chunk)
            total += len(chunk)
            if total > most:  # it grew past the limit while it was read
                return None
            if len(chunk) < wanted:
                return b"".join(chunks)
    finally:
        os.close(fd)


def read_searchable_at_py(dir_fd: int, name: str, sniff: int, most: int) -> bytes | None:
    """:func:`read_open` of regular file ``name`` (one path component) of folder ``dir_fd``,
    opened as janito_core's ``open_regular_at`` opens it: never following a link, never
    blocking on a FIFO or a device.

    Raises IsADirectoryError for a folder, OSError (EINVAL) for anything else that is not a
    regular file, and the OSError of the open or the read.
    """
    if sniff <= 0 or most < 0:
        raise ValueError("sniff must be positive and most not negative")
    if name in ("", ".", "..") or "/" in name or "\x00" in name:
        raise ValueError("name must be one non-empty path component")
    fd, info = open_regular_at(dir_fd, name)
    return read_open(fd, info.st_size, sniff, most)


class RegexTooSlow(Exception):
    """A regular expression used up the search's :data:`REGEX_TIME_LIMIT`."""


class RegexTooLarge(ValueError):
    """A regular expression whose repetition counts multiply to more than MAX_REGEX_SIZE."""




Lines = tuple[list[int], list[str]]
"""The matching lines of one file: their numbers (from 1) and their texts, in order."""


def finished_lines(texts: list[str], crlf: bool) -> list[str]:
    """``texts`` (lines without their line feed) as a result shows them: without trailing
    carriage returns (``crlf``: the file holds one) and clipped to LINE_CHARS."""
    if crlf:
        texts = [text.rstrip("\r") for text in texts]
    if max(map(len, texts), default=0) > LINE_CHARS:
        texts = [text if len(text) <= LINE_CHARS else clip_line(text) for text in texts]
    return texts


def decoded_lines(joined: bytes, crlf: bool) -> list[str]:
    """The lines of ``joined`` (lines joined by line feeds) as :func:`finished_lines`.

    They are decoded as one buffer: a line feed is never part of a multi-byte sequence, so
    splitting the text at the line feeds gives each line's own decoding, at the cost of one
    decode instead of one per line.
    """
    return finished_lines(joined.decode("utf-8", "replace").split("\n"), crlf)


def literal_lines_py(hay: bytes, data: bytes, needle: bytes,
                      limit: int) -> tuple[list[int], bytes]:
    """The numbers (from 1) of the first ``limit`` lines of ``data`` that hold ``needle``
    in ``hay`` (``data`` or its lower-case form), and those lines joined by line feeds.

    ``janito_files._speedups`` holds the same function compiled, used where it was built.
    """
    if len(hay) != len(data) or not needle:
        raise ValueError("hay and data must have the same length, and needle a byte")
    # One loop with its methods bound, doing only what must be done per match.
    numbers: list[int] = []
    pieces: list[bytes] = []
    add_number = numbers.append
    add_piece = pieces.append
    find_needle = hay.find
    find = data.find
    rfind = data.rfind
    count = data.count
    line_no = 1
    counted = 0
    at = find_needle(needle) if limit > 0 else -1
    while at >= 0:
        start = rfind(b"\n", 0, at) + 1
        end = find(b"\n", at)
        line_no += count(b"\n", counted, start)
        counted = start
        add_number(line_no)
        if end < 0:
            add_piece(data[start:])
            break
        add_piece(data[start:end])
        limit -= 1
        if limit <= 0:
            break
        at = find_needle(needle, end + 1)
    return numbers, b"\n".join(pieces)


try:
    from ._speedups import literal_lines, read_searchable_at
except ImportError:  # built without a C compiler: the same steps in Python
    literal_lines = literal_lines_py
    read_searchable_at = read_searchable_at_py


class BytesMatcher:
    """Literal search on the raw bytes: ``bytes.find`` over the whole buffer, no decoding.

    With ``fold`` (an ASCII query searched without case), the buffer and the needle are
    lower-cased first; ``bytes.lower`` changes only ASCII letters, so offsets are kept.
    Only the lines that match are cut out and decoded.
    """

    def __init__(self, needle: bytes, fold: bool) -> None:
        self.needle = needle
        self.fold = fold

    def lines(self, data: bytes, limit: int) -> Lines | None:
        """The first ``limit`` matching lines; None for a binary file."""
        hay = data.lower() if self.fold else data
        needle = self.needle
        if limit <= 0 or hay.find(needle) < 0:
            return [], []
        if b"\x00" in data:
            return None
        numbers, joined = literal_lines(hay, data, needle, limit)
        return numbers, decoded_lines(joined, b"\r" in data)

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


Scan = Callable[[str, int, int], Any]
"""``finditer`` or ``search`` of a pattern: (text, pos, endpos) -> matches, or a match."""

# Appended to a pattern (as its last group) to make one match run to the start of the next
# line: ``finditer`` then gives at most one candidate per line, so the rest of a line holding
# a match is skipped by the engine itself.
REST_OF_LINE = r"([^\n]*\n?)"


def line_scanner(pattern: str, verbose: bool) -> str:
    """``pattern`` followed by :data:`REST_OF_LINE`; the pattern's own groups keep their
    numbers. In verbose mode a line break ends a trailing comment of the pattern first."""
    return "(?:" + pattern + ("\n)" if verbose else ")") + REST_OF_LINE


def matching_lines(text: str, finditer: Scan, rest: int,
                   search: Scan) -> Iterator[tuple[int, int]]:
    """(start, end) of each line of ``text`` that holds a match, in order.

    ``finditer`` runs the pattern made by :func:`line_scanner` over the whole text from the
    first line not yet looked at (its group ``rest`` is :data:`REST_OF_LINE`); ``search`` is
    the pattern itself. A candidate whose match runs past its line is confirmed on that line
    alone (pos/endpos bound the search), so a match never spans a line break, as with grep.
    """
    size = len(text)
    pos = 0  # the start of the first line not yet looked at
    while True:
        for found in finditer(text, pos, size):
            at = found.start()
            if at < pos:
                break  # not expected from a line scanner: look again from pos
            if at >= size and (not size or text[-1] == "\n"):
                return  # an empty match at the very end, after the last line, is on no line
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            if end < 0:
                end = size
            if found.start(rest) <= end or search(text, start, end) is not None:
                yield start, end
            if end >= size:
                return
            pos = end + 1
            if found.end() > pos:
                break  # the pattern's match ran past this line: candidates may start inside
        else:
            return


class RegexMatcher:
    """Regular-expression search on the decoded text (see :func:`matching_lines`).

    ``scanner`` is ``pattern`` made by :func:`line_scanner`. ``time_limit`` (seconds) bounds
    the time all the files of one search may spend matching, for patterns of the ``regex``
    package, whose ``finditer`` and ``search`` take a timeout; :class:`RegexTooSlow` is raised
    once it is spent. None runs the patterns untimed.
    """

    def __init__(self, pattern: Any, scanner: Any, time_limit: float | None = None) -> None:
        self.pattern = pattern
        self.scanner = scanner
        self.left = time_limit

    def _spans(self, text: str, limit: int | None) -> list[tuple[int, int]]:
        """(start, end) of the first ``limit`` lines of ``text`` holding a match (None: all)."""
        pattern = self.pattern
        scanner = self.scanner
        if self.left is None:
            return list(islice(matching_lines(text, scanner.finditer, scanner.groups,
                                              pattern.search), limit))
        budget = self.left
        started = time.perf_counter()

        def timeout() -> float:
            left = budget - (time.perf_counter() - started)
            if left <= 0:
                raise RegexTooSlow
            return left

        def finditer(text: str, pos: int, endpos: int) -> Any:
            return scanner.finditer(text, pos, endpos, timeout=timeout())

        def search(text: str, pos: int, endpos: int) -> Any:
            return pattern.search(text, pos, endpos, timeout=timeout())

        try:
            return list(islice(matching_lines(text, finditer, scanner.groups, search), limit))
        except TimeoutError:
            raise RegexTooSlow from None
        finally:
            self.left = budget - (time.perf_counter() - started)

    def lines(self, data: bytes, limit: int) -> Lines | None:
        """The first ``limit`` matching lines; None for a binary file."""
        if b"\x00" in data:
            return None
        text = data.decode("utf-8", "replace")
        numbers: list[int] = []
        texts: list[str] = []
        count = text.count
        line_no = 1
        counted = 0
        for start, end in self._spans(text, limit):
            line_no += count("\n", counted, start)
            counted = start
            numbers.append(line_no)
            texts.append(text[start:end])
        return numbers, finished_lines(texts, "\r" in text)

    def count(self, data: bytes) -> int | None:
        """How many lines match; None for a binary file."""
        if b"\x00" in data:
            return None
        return len(self._spans(data.decode("utf-8", "replace"), None))


def _parser() -> Any:
    try:
        from re import _parser as parser  # type: ignore[attr-defined]  # Python 3.11+
    except ImportError:  # Python 3.10
        import sre_parse as parser
    return parser


def parse_regex(query: str, flags: int) -> tuple[int, int]:
    """(size, flags) of ``query``: how many items it holds once fixed repetition counts are
    multiplied out (counting stops early past :data:`MAX_REGEX_SIZE`), and its global flags,
    inline ones included.

    Parsed with the standard library's own parser, which raises re.error for a bad pattern.
    """
    parser = _parser()
    subpattern = parser.SubPattern

    def size(items: Any) -> int:
        total = 0
        for op, av in items:
            if getattr(op, "name", "").endswith("REPEAT") and len(av) == 3:
                total += max(av[0], 1) * size(av[2])
            elif isinstance(av, subpattern):  # an atomic group
                total += 1 + size(av)
            else:
                total += 1
                for part in av if isinstance(av, (tuple, list)) else ():
                    if isinstance(part, subpattern):
                        total += size(part)
                    elif isinstance(part, list):
                        total += sum(size(p) for p in part if isinstance(p, subpattern))
            if total > MAX_REGEX_SIZE:
                break
        return total

    parsed = parser.parse(query, flags)
    return size(parsed), parsed.state.flags


def compile_regex(query: str, case_sensitive: bool) -> RegexMatcher:
    """A matcher for a model's regular expression, bounded in size and in time.

    The pattern must be valid Python ``re`` syntax (re.error otherwise); it runs on the
    ``regex`` package, imported here only, whose searches take a timeout.
    """
    flags = re.MULTILINE | (0 if case_sensitive else re.IGNORECASE)
    size, flags = parse_regex(query, flags)
    if size > MAX_REGEX_SIZE:
        raise RegexTooLarge(f"its repetition counts multiply out to more than {MAX_REGEX_SIZE:,} "
                            "items; use smaller counts or open ranges such as {1,1000}")
    import regex

    mode = regex.MULTILINE | (0 if case_sensitive else regex.IGNORECASE)
    try:
        pattern = regex.compile(query, mode)
        scanner = regex.compile(line_scanner(query, bool(flags & re.VERBOSE)), mode)
    except regex.error as exc:
        raise re.error(str(exc)) from None
    return RegexMatcher(pattern, scanner, REGEX_TIME_LIMIT)


def make_matcher(query: str, use_regex: bool, case_sensitive: bool) -> BytesMatcher | RegexMatcher:
    """The fastest matcher with the requested meaning.

    Raises re.error for a bad regular expression, RegexTooLarge for one that would be too
    large once compiled.
    """
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
        # An escaped literal cannot backtrack: the standard library runs it, untimed.
        literal = re.escape(query)
        return RegexMatcher(re.compile(literal, re.IGNORECASE),
                            re.compile(line_scanner(literal, False), re.IGNORECASE))
    return compile_regex(query, case_sensitive)



def search(tool: BaseTool, echo: dict[str, Any], paths: str | list[str], term: str,
           regex: bool, case_sensitive: bool, max_depth: int | None, max_results: int | None,
           count_only: bool, respect_gitignore: bool,
           exclude: str | list[str] | None) -> dict[str, Any]:
    """One SearchText (``regex`` false) or SearchRegex call; ``echo`` repeats its inputs."""
    what = "pattern" if regex else "query"
    if not regex and "\n" in term:
        return failure("query holds a line break, and a match lies within one line: search "
                       "for the text of one line (SearchRegex matches at a line's start or "
                       "end with ^ and $)", INVALID_ARGUMENTS, **echo)
    try:
        matcher = make_matcher(term, regex, case_sensitive)
    except re.error as exc:
        return failure(f"{what} is not a valid regular expression: {exc}", "invalid_regex",
                       **echo)
    except (RecursionError, OverflowError, ValueError, MemoryError) as exc:
        return failure(f"{what} cannot be compiled: {exc}", "invalid_regex", **echo)
    roots = walk_roots(tool, paths, echo)
    if isinstance(roots, dict):
        return roots
    starts, problems = roots
    shown_term = safe_text(term if len(term) <= 80 else term[:77] + "...")
    tool.report_start(f"Searching for {'regex ' if regex else ''}{shown_term!r} in "
                      f"{', '.join(safe_text(p) for p, _, _ in starts[:5])}")
    scan = _Scan(tool, matcher, MAX_RESULTS_LIMIT if max_results is None else max_results,
                 count_only)
    try:
        scan.run(starts, depth_limit(max_depth), respect_gitignore, parse_exclude(exclude))
    except RegexTooSlow:
        message = (f"the regular expression took more than {counted(REGEX_TIME_LIMIT, 'second')} of "
                   "matching and was stopped: it is too slow (nested or overlapping "
                   "repetitions such as (a|aa)+ can backtrack for hours); simplify the "
                   "pattern, search fewer paths, or search for plain text with SearchText")
        tool.report_error(message)
        return failure(message, "regex_timeout", **echo, files_searched=scan.files_searched,
                       time_limit_seconds=REGEX_TIME_LIMIT)
    return scan.result(echo, problems)


def search_echo(paths: str | list[str], name: str, term: str) -> dict[str, Any]:
    """The inputs a search result repeats."""
    return {"paths": echoed(paths), name: echoed(term)}


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
        self.files_matched = 0
        self.full = False

    def run(self, starts: list[Start], limit: int | None, respect_gitignore: bool,
            exclude: Exclude | None = None) -> None:
        """Search every start (a file, or a folder walked to depth ``limit``) until full."""
        workspace = self.tool.workspace
        for _path, shown, kind in starts:
            if kind != "directory":
                if exclude and exclude.excludes(os.path.basename(shown),
                                                os.path.basename(shown), False):
                    continue
                # a FIFO or a device named by the model is reported as not searchable
                try:
                    fd, info, _ = workspace.open_regular(shown)
                    data = read_open(fd, info.st_size, SNIFF_BYTES, MAX_FILE_BYTES)
                except (OSError, ValueError) as exc:
                    self.unreadable.append(f"{safe_text(shown)}: "
                                           f"{getattr(exc, 'strerror', None) or exc}")
                    continue
                self.file(data, shown, explicit=True)
            else:
                for entry in walk(self.tool, shown, max_depth=limit,
                                  gitignore=respect_gitignore, errors=self.unreadable,
                                  exclude=exclude):
                    if entry.kind == "file":
                        try:
                            data = read_searchable_at(entry.dir_fd, entry.name, SNIFF_BYTES,
                                                      MAX_FILE_BYTES)
                        except OSError as exc:
                            self.unreadable.append(f"{safe_text(entry.relative)}: "
                                                   f"{exc.strerror or exc}")
                            continue
                        self.file(data, entry.relative)
                        if self.full:
                            break
            if self.full:
                break

    def file(self, data: bytes | None, path: str, explicit: bool = False) -> None:
        """Search the bytes :func:`read_open` gave for the file at ``path``."""
        if data is None:
            self.large.append(path)
            return
        if data.find(b"\x00", 0, SNIFF_BYTES) >= 0:
            self._binary(path, explicit)
            return
        if self.count_only:
            count = self.matcher.count(data)
            if count is None:
                self._binary(path, explicit)
                return
            self.files_searched += 1
            if count:
                self.total += count
                self.counts.append({"path": safe_text(path), "count": count})
            return
        found = self.matcher.lines(data, self.max_results - len(self.matches))
        if found is None:
            self._binary(path, explicit)
            return
        self.files_searched += 1
        numbers, texts = found
        if numbers:
            name = safe_text(path)
            self.files_matched += 1
            self.matches.extend([{"path": name, "line": line, "text": text}
                                 for line, text in zip(numbers, texts, strict=True)])
            self.full = len(self.matches) >= self.max_results

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
            out["files_matched"] = self.files_matched
        out["files_searched"] = self.files_searched
        out["truncated"] = truncated
        if truncated:
            out["note"] = (f"stopped at max_results={self.max_results} matching lines (there "
                           "may be more); narrow the query or paths, or raise max_results")
        if self.binary_count:
            out["binary_files_skipped"] = self.binary_count
        if self.binary:
            out["skipped_binary"] = [safe_text(p) for p in self.binary]
        if self.large:
            out["skipped_large"] = [safe_text(p) for p in self.large[:50]]
        if self.unreadable:
            out["unreadable"] = [safe_text(u) for u in self.unreadable[:50]]
        if problems:
            out["errors"] = problems
        tool.report_result(
            f"{counted(out.get('total_matches', out.get('count')) or 0, 'matching line')} in "
            f"{counted(out['files_matched'], 'file')}" + (" (truncated)" if truncated else ""))
        return out


