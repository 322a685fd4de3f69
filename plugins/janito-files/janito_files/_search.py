"""The search engine of SearchText and SearchRegex: walking, reading, matching, the result.

Each file is read once as bytes: whole when it fits in one block (:data:`BLOCK_BYTES`),
else block by block, each block cut after its last line feed, so that a search holds a
bounded part of any file whatever its size (:data:`MEMORY_BOUND`). A plain-text query is
found with ``bytes.find`` over a buffer of whole lines; a regular expression runs once over
the buffer's decoded text (see :func:`matching_lines`). Only the lines around matches are
decoded and returned, and a count is a number, never a list of what it counted.

Files of one block are read and searched in batches, the consecutive files of one folder
at a time, on worker threads that never take the GIL (janito_files._batches): the walk
goes on meanwhile, and the answers are used in the walk's order, so the result is the one
a file-by-file search gives (tests/test_search_differential.py). A regular expression is
matched only in the files, or the lines, that hold the text every match needs
(:func:`required_text`)."""

from __future__ import annotations

import codecs
import errno
import os
import re
import time
import warnings
from bisect import bisect_right
from collections.abc import Callable, Iterator
from itertools import chain, islice
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from janito_core import failure
from janito_core.results import INVALID_ARGUMENTS, counted
from janito_core.workspace import open_regular_at

from ._batches import (
    BATCH_BYTES,
    BATCH_FILES,
    HELD_BYTES,
    Batch,
    BatchScan,
    Pipeline,
    descriptor_ceiling,
)
from ._common import (
    LINE_CHARS,
    SNIFF_BYTES,
    NotRequired,
    PathProblem,
    TypedDict,
    check_cancelled,
    clip_line,
    echoed,
    regex_parser,
    safe_text,
)
from ._listing import Start, walk_roots
from ._steps import (
    CANDIDATES,
    FILTER,
    LITERAL,
    Searcher,
    automaton_lines,
    automaton_rows,
    count_lines,
    found_rows,
    literal_lines,
    rows_of,
    scan_files,
)
from ._walk import Exclude, parse_exclude, walk_runs

if TYPE_CHECKING:
    from janito_core import BaseTool

# Files larger than this are not searched (they are named in ``skipped_large``).
MAX_FILE_BYTES = 64 * 1024 * 1024

BLOCK_BYTES = 1 << 20
"""How much of a file a search reads at a time; a file no larger is read whole."""

LINE_BYTES = 2 << 20
"""The longest line (in bytes, its line feed left out) a regular expression is matched
against: it sees a line whole, and a longer one is named in ``skipped_long_lines``. A
plain-text query is found in lines of any length, fed to it a block at a time. Never
less than BLOCK_BYTES, so that a line held whole never outgrows one block and the
unfinished line before it."""

MEMORY_BOUND = 40 << 20
"""What one search holds of the files it reads, whatever their size: 28 MiB at worst
(measured, with lines just under LINE_BYTES of one-byte characters and one four-byte one)
for the file read block by block: a block and the unfinished line before it (at most
BLOCK_BYTES + LINE_BYTES) and a few copies of them (the buffer of whole lines, its
lower-case form, its decoded text, at up to four bytes a character); and 12 MiB for the
batches of smaller files read ahead meanwhile (janito_files._batches.HELD_BYTES). The
matches it returns come on top: at most max_results lines, each clipped to LINE_CHARS
characters."""

MAX_RESULTS_LIMIT = 10_000
"""The most matching lines one search may return (each line up to LINE_CHARS characters)."""

MAX_DEPTH_CHANGE = ("0 searched no folder in janito 4.50: 1 searches the files directly in "
                    "the given folders, null has no limit")
"""What SearchText and SearchRegex add when refusing a max_depth (0 above all)."""

# Seconds a regular expression may spend matching over one whole search. A pattern that
# backtracks catastrophically (``(a|aa)+$`` against "aaaa...!") would otherwise run for hours.
REGEX_TIME_LIMIT = 5.0

# How large a regular expression may grow once its fixed repetition counts are multiplied out
# (``(?:a{3000}){3000}`` is nine million): the ``regex`` package expands such counts when it
# compiles a pattern, which for huge products takes seconds and gigabytes.
MAX_REGEX_SIZE = 100_000


class RegexTooSlow(Exception):
    """A regular expression used up the search's :data:`REGEX_TIME_LIMIT`."""


class RegexTooLarge(ValueError):
    """A regular expression whose repetition counts multiply to more than MAX_REGEX_SIZE."""




Lines = tuple[list[int], list[str]]
"""The matching lines of one file: their numbers (from 1) and their texts, in order."""

T = TypeVar("T")


def finished_lines(texts: list[str], crlf: bool) -> list[str]:
    """``texts`` (lines without their line feed) as a result shows them: without trailing
    carriage returns (``crlf``: the file holds one) and clipped to LINE_CHARS."""
    if crlf:
        texts = [text.rstrip("\r") for text in texts]
    if max(map(len, texts), default=0) > LINE_CHARS:
        texts = [text if len(text) <= LINE_CHARS else clip_line(text) for text in texts]
    return texts


def shown_line(text: str, start: int, end: int) -> str:
    """Line ``text[start:end]`` as :func:`finished_lines` shows it, without copying more
    of a long line than is shown."""
    while end > start and text[end - 1] == "\r":
        end -= 1
    if end - start <= LINE_CHARS:
        return text[start:end]
    return clip_line(text[start:start + LINE_CHARS], total=end - start)


def decoded_lines(joined: bytes, crlf: bool) -> list[str]:
    """The lines of ``joined`` (lines joined by line feeds) as :func:`finished_lines`.

    They are decoded as one buffer: a line feed is never part of a multi-byte sequence, so
    splitting the text at the line feeds gives each line's own decoding, at the cost of one
    decode instead of one per line.
    """
    return finished_lines(joined.decode("utf-8", "replace").split("\n"), crlf)




class BytesMatcher:
    """Literal search on the raw bytes: ``bytes.find`` over a buffer of whole lines, no
    decoding.

    With ``fold`` (an ASCII query searched without case), the buffer and the needle are
    lower-cased first; ``bytes.lower`` changes only ASCII letters, so offsets are kept.
    Only the lines that match are cut out and decoded. Whether the buffer is binary is the
    caller's question.
    """

    def __init__(self, needle: bytes, fold: bool) -> None:
        self.needle = needle
        self.fold = fold

    def lines(self, data: bytes, limit: int, later: bool = False) -> Lines:
        """The first ``limit`` matching lines of ``data``, numbered from 1 in it."""
        hay = data.lower() if self.fold else data
        needle = self.needle
        if limit <= 0 or hay.find(needle) < 0:
            return [], []
        numbers, joined = literal_lines(hay, data, needle, limit)
        return numbers, decoded_lines(joined, b"\r" in data)

    def count(self, data: bytes, later: bool = False) -> int:
        """How many lines of ``data`` match."""
        return count_lines(data.lower() if self.fold else data, self.needle)

    def long_line(self, shown: bool) -> LongLine:
        """What follows one line longer than LINE_BYTES; ``shown``: the result shows it."""
        return LongLine(self.needle, self.fold, shown)


class LongLine:
    """A line longer than :data:`LINE_BYTES`, fed to a literal search in parts: whether it
    holds the needle, and (``shown``) the line as a result shows it: its start, clipped to
    LINE_CHARS, and its length in characters. The end of each part is kept for the next,
    so a match cut in two by a part's end is found as if the line were whole."""

    skipped = False

    def __init__(self, needle: bytes, fold: bool, shown: bool) -> None:
        self.needle = needle
        self.fold = fold
        self.found = False
        self.tail = b""
        self.head = b""
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace") if shown else None
        self.chars = 0
        self.returns = 0  # carriage returns at the end of what was fed so far

    def feed(self, part: bytes) -> None:
        if not self.found:
            hay = self.tail + (part.lower() if self.fold else part)
            self.found = hay.find(self.needle) >= 0
            keep = len(self.needle) - 1
            self.tail = hay[len(hay) - keep:] if keep else b""
        if self.decoder is None:
            return
        if len(self.head) < 4 * LINE_CHARS + 4:  # LINE_CHARS characters, whatever their width
            self.head += part[:4 * LINE_CHARS + 4 - len(self.head)]
        self.chars += len(self.decoder.decode(part))
        kept = part.rstrip(b"\r")
        self.returns = self.returns + len(part) if not kept else len(part) - len(kept)

    def text(self) -> str:
        """The line as a result shows it (a line this long is always clipped)."""
        assert self.decoder is not None
        total = self.chars + len(self.decoder.decode(b"", final=True)) - self.returns
        return clip_line(self.head.decode("utf-8", "replace"), total=total)


class TooLong:
    """A line longer than :data:`LINE_BYTES` under a regular expression, which is matched
    against whole lines only: the line is named in the result, not searched."""

    skipped = True
    found = False

    def feed(self, part: bytes) -> None:
        pass

    def text(self) -> str:
        raise AssertionError("a line that was not searched has no match to show")


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


def matching_lines(text: str, finditer: Scan, rest: int, search: Scan,
                   pos: int = 0) -> Iterator[tuple[int, int]]:
    """(start, end) of each line of ``text`` from ``pos`` (a line's start) that holds a
    match, in order.

    ``finditer`` runs the pattern made by :func:`line_scanner` over the whole text from the
    first line not yet looked at (its group ``rest`` is :data:`REST_OF_LINE`); ``search`` is
    the pattern itself. A candidate whose match runs past its line is confirmed on that line
    alone (pos/endpos bound the search), so a match never spans a line break, as with grep.
    """
    size = len(text)
    # pos: the start of the first line not yet looked at
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


def lines_alone(text: str, search: Scan, pos: int = 0) -> Iterator[tuple[int, int]]:
    """(start, end) of each line of ``text`` from ``pos`` (a line's start) that holds a
    match of the pattern searched in that line alone, in order: :func:`matching_lines` for
    a pattern that may commit to what follows a line's end (an atomic group, a possessive
    repeat), where a scan of the whole text can fail at a line its own search matches."""
    size = len(text)
    while pos < size:  # after a last line feed there is no line
        end = text.find("\n", pos)
        if end < 0:
            end = size
        if search(text, pos, end) is not None:
            yield pos, end
        pos = end + 1


class RegexMatcher:
    """Regular-expression search on the decoded text (see :func:`matching_lines`).

    ``scanner`` is ``pattern`` made by :func:`line_scanner`. ``time_limit`` (seconds) bounds
    the time all the files of one search may spend matching, for patterns of the ``regex``
    package, whose ``finditer`` and ``search`` take a timeout; :class:`RegexTooSlow` is raised
    once it is spent. None runs the patterns untimed.

    ``needs`` is text every match holds (see :func:`required_text`), so a file without it is
    not decoded; ``alone``: the pattern sees nothing of a line's neighbours, so it may be
    matched against the lines holding ``needs`` only, joined; ``joinable``: the lines of
    several files may be searched together for its first match (see :func:`joinable`);
    ``by_line``: it is searched in each line alone (see :func:`lines_alone`).
    ``automaton``: a table that answers which lines of an ASCII text match, in one pass
    and no backtracking, so untimed (janito_files._automaton); the engine answers the
    rest.
    """

    def __init__(self, pattern: Any, scanner: Any, time_limit: float | None = None,
                 needs: bytes | None = None, alone: bool = False,
                 joinable: bool = False, by_line: bool = False,
                 automaton: bytes | None = None) -> None:
        self.pattern = pattern
        self.scanner = scanner
        self.left = time_limit
        self.needs = needs
        self.alone = alone
        self.joinable = joinable
        self.by_line = by_line
        self.automaton = automaton

    def first_at(self, text: str) -> int:
        """Where the pattern's first match in ``text`` starts, or -1, within the time left."""
        pattern = self.pattern
        if self.left is None:
            found = pattern.search(text)
        else:
            found = self._timed(lambda left: pattern.search(text, timeout=left()))
        return -1 if found is None else int(found.start())

    def _matched(self, text: str, pos: int,
                 consume: Callable[[Iterator[tuple[int, int]]], T]) -> T:
        """``consume`` applied to (start, end) of each line of ``text`` from ``pos`` that
        holds a match (see :func:`matching_lines`), within the time left."""
        pattern = self.pattern
        scanner = self.scanner

        def found(finditer: Scan, search: Scan) -> T:
            if self.by_line:
                return consume(lines_alone(text, search, pos))
            return consume(matching_lines(text, finditer, scanner.groups, search, pos))

        if self.left is None:
            return found(scanner.finditer, pattern.search)

        def lines(left: Callable[[], float]) -> T:
            def finditer(text: str, pos: int, endpos: int) -> Any:
                return scanner.finditer(text, pos, endpos, timeout=left())

            def search(text: str, pos: int, endpos: int) -> Any:
                return pattern.search(text, pos, endpos, timeout=left())

            return found(finditer, search)

        return self._timed(lines)

    def _timed(self, work: Callable[[Callable[[], float]], T]) -> T:
        """``work`` given what tells the seconds left of the search's matching time (each
        engine call is given them as its timeout); :class:`RegexTooSlow` once they are
        spent, and what ``work`` took is spent when it returns or raises."""
        budget = self.left
        assert budget is not None
        started = time.perf_counter()

        def left() -> float:
            remaining = budget - (time.perf_counter() - started)
            if remaining <= 0:
                raise RegexTooSlow
            return remaining

        try:
            return work(left)
        except TimeoutError:
            raise RegexTooSlow from None
        finally:
            self.left = budget - (time.perf_counter() - started)

    @staticmethod
    def _text(data: bytes, later: bool) -> tuple[str, int]:
        """(the decoded text of ``data``, where its first line starts in it). A buffer that
        does not start the file (``later``) follows a line feed, so that ``\\A`` matches
        only at the file's start and ``^`` and lookbehinds see a line start there."""
        if later:
            return (b"\n" + data).decode("utf-8", "replace"), 1
        return data.decode("utf-8", "replace"), 0

    def lines(self, data: bytes, limit: int, later: bool = False) -> Lines:
        """The first ``limit`` matching lines of ``data``, numbered from 1 in it."""
        return self.text_lines(*self._text(data, later), limit)

    def text_lines(self, text: str, pos: int, limit: int) -> Lines:
        """The first ``limit`` matching lines of ``text`` from ``pos`` (where a line
        starts), numbered from 1 there."""
        if self.automaton is not None:
            found = automaton_lines(self.automaton, text, pos, limit, LINE_CHARS, False)
            if found is not None:
                lines, shown, unsure = found
                return self._settled(lines, shown, unsure, limit) if unsure else (lines, shown)
        numbers: list[int] = []
        texts: list[str] = []
        count = text.count
        line_no = 1
        counted = pos
        for start, end in self._matched(text, pos, lambda found: list(islice(found, limit))):
            line_no += count("\n", counted, start)
            counted = start
            numbers.append(line_no)
            texts.append(shown_line(text, start, end))
        return numbers, texts

    def count(self, data: bytes, later: bool = False) -> int:
        """How many lines of ``data`` match, counted as they are found (never listed)."""
        text, pos = self._text(data, later)
        if self.automaton is not None:
            counted = automaton_lines(self.automaton, text, pos, 0, LINE_CHARS, True)
            if counted is not None:
                settled, unsure = counted
                return int(settled) + sum(self._lines_match(unsure))
        return self._matched(text, pos, lambda found: sum(1 for _ in found))

    def _lines_match(self, lines: list[str]) -> list[bool]:
        """Whether each of ``lines`` (each alone) holds a match, within the time left."""
        search = self.pattern.search
        if self.left is None:
            return [search(line) is not None for line in lines]
        return self._timed(lambda left: [search(line, timeout=left()) is not None
                                         for line in lines])

    def _settled(self, numbers: list[int], texts: list[str], unsure: list[int],
                 limit: int) -> Lines:
        """The first ``limit`` of the lines the automaton gave, those at the indexes
        ``unsure`` kept only where the engine finds a match in them."""
        answers = self._lines_match([texts[index] for index in unsure])
        dropped = set()
        for index, matches in zip(unsure, answers, strict=True):
            if matches:
                texts[index] = shown_line(texts[index], 0, len(texts[index]))
            else:
                dropped.add(index)
        if dropped:
            numbers = [number for index, number in enumerate(numbers) if index not in dropped]
            texts = [text for index, text in enumerate(texts) if index not in dropped]
        return numbers[:limit], texts[:limit]

    def long_line(self, shown: bool) -> TooLong:
        return TooLong()


def parse_regex(query: str, flags: int
                ) -> tuple[int, int, bytes | None, bool, bool, bool, bytes | None]:
    """(size, flags, needs, alone, joinable, by_line, automaton) of ``query``: how many
    items it holds once fixed repetition counts are multiplied out (counting stops early
    past :data:`MAX_REGEX_SIZE`), its global flags, inline ones included, what
    :func:`required_text` says of it, whether :func:`joinable` says it may look for its
    first match in several files' lines at once, whether it is searched in each line alone
    (:func:`lines_alone`), and the table that answers which lines match where the
    compiled steps were built (janito_files._automaton), or None.

    Parsed with the standard library's own parser, which raises re.error for a bad pattern.
    """
    parser = regex_parser()
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

    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        try:
            parsed = parser.parse(query, flags)
        except DeprecationWarning as warning:
            # Python 3.10 only warns of global flags past a pattern's start, and applies
            # them to the whole pattern; 3.11 and later refuse it, and so does janito on
            # every Python, in 3.11's words
            where = re.search(r"at position (\d+)", str(warning))
            raise re.error("global flags not at the start of the expression", query,
                           int(where.group(1)) if where else None) from None
    needs, alone = required_text(parsed, parser)
    commits = any(name in _COMMITTING for name, _ in parsed_items(parsed, parser))
    total = size(parsed)
    table = None
    if alone and automaton_lines is not None and total <= MAX_REGEX_SIZE:
        from ._automaton import build

        table = build(parsed, parsed.state.flags)
    return (total, parsed.state.flags, needs, alone, alone and joinable(parsed, parser),
            alone and commits, table)


_COMMITTING = frozenset({"ATOMIC_GROUP", "POSSESSIVE_REPEAT"})


def joinable(parsed: Any, parser: Any) -> bool:
    """Whether a pattern that sees a line alone (see :func:`required_text`), compiled with
    ``MULTILINE``, matches somewhere in texts joined by line feeds exactly when it matches
    somewhere in one of them, no later than there.

    A match of one text is a match of the joined texts: around each text, ``^``, ``$``
    and ``\\b`` see a line feed where they saw the text's start or end, and answer alike.
    Two things break that, and a pattern holding either is not joinable: a flag set or
    cleared inside it (a ``$`` without ``MULTILINE`` holds only at the very end), and an
    atomic group or a possessive repeat, which commit to what they took first and may
    take more of the joined text than of one.
    """
    for name, av in parsed_items(parsed, parser):
        if name in _COMMITTING or (name == "SUBPATTERN" and (av[1] or av[2])):
            return False  # (group, add, del, items): a flag set or cleared inside
    return bool(parsed.state.flags & re.MULTILINE)


def parsed_items(items: Any, parser: Any) -> Iterator[tuple[str, Any]]:
    """(name, argument) of each item of a parsed expression, those inside groups,
    repeats, branches and lookarounds included, each before what it holds. (A stack of
    iterators rather than nested generators: a deeply nested pattern costs no more an
    item.)"""
    subpattern = parser.SubPattern
    stack = [iter(items)]
    while stack:
        for op, av in stack[-1]:
            yield getattr(op, "name", ""), av
            inside = []
            for part in av if isinstance(av, (tuple, list)) else (av,):
                if isinstance(part, subpattern):
                    inside.append(part)
                elif isinstance(part, list):
                    inside.extend(inner for inner in part if isinstance(inner, subpattern))
            if inside:
                stack.append(chain.from_iterable(inside))
                break
        else:
            stack.pop()


_LOOKING = frozenset({"ASSERT", "ASSERT_NOT"})
_STRING_EDGES = frozenset({"AT_BEGINNING_STRING", "AT_END_STRING"})


def required_text(parsed: Any, parser: Any) -> tuple[bytes | None, bool]:
    """(needs, alone) of a parsed pattern: the longest run of plain ASCII characters of
    its top level (every match holds it: the top level is one sequence, each item
    required), or None; and whether it sees a line alone: no lookaround, which may look
    past a line's end, and no ``\\A`` or ``\\Z``, which see where the file starts and ends
    (nor ``^`` or ``$`` where ``(?-m:...)`` makes them mean that).

    A pattern matched without case has no such text (``k`` matches the Kelvin sign): None.
    The ASCII characters of decoded text come from the same bytes, so a file whose bytes do
    not hold ``needs`` has no match.
    """
    if parsed.state.flags & re.IGNORECASE:
        return None, False
    literal = getattr(parser, "LITERAL", None)
    best: list[int] = []
    run: list[int] = []
    for op, av in parsed:
        if op is literal and 0 < av < 128 and av != 10:
            run.append(av)
            if len(run) > len(best):
                best = list(run)
        else:
            run = []

    def alone() -> bool:
        for name, av in parsed_items(parsed, parser):
            if name in _LOOKING or (name == "AT" and getattr(av, "name", "") in _STRING_EDGES):
                return False
            if name == "SUBPATTERN" and av[2] & re.MULTILINE:
                return False  # (?-m:...): its "^" and "$" see where the file starts and ends
        return True

    return (bytes(best) if best else None), alone()


def compile_regex(query: str, case_sensitive: bool) -> RegexMatcher:
    """A matcher for a model's regular expression, bounded in size and in time.

    The pattern must be valid Python ``re`` syntax (re.error otherwise); it runs on the
    ``regex`` package, imported here only, whose searches take a timeout.
    """
    flags = re.MULTILINE | (0 if case_sensitive else re.IGNORECASE)
    size, flags, needs, alone, joins, by_line, automaton = parse_regex(query, flags)
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
    return RegexMatcher(pattern, scanner, REGEX_TIME_LIMIT, needs, alone, joins, by_line,
                        automaton)


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



class Match(TypedDict):
    """One matching line.

    Attributes:
        path: The file, as the workspace shows it.
        line: The line's number, counting from 1.
        text: The line (a long one cut around the match).
    """

    path: str
    line: int
    text: str


class FileCount(TypedDict):
    """How many lines of one file match (count_only).

    Attributes:
        path: The file, as the workspace shows it.
        count: Its matching lines.
    """

    path: str
    count: int


class _Searched(TypedDict):
    """What SearchText and SearchRegex answer, besides the term searched for.

    Attributes:
        paths: The paths as given.
        matches: The matching lines, file by file (not with count_only).
        count: How many matching lines are listed (not with count_only).
        counts: Matching lines per file (count_only).
        total_matches: Matching lines in all (count_only).
        files_matched: Files with at least one matching line.
        files_searched: Files searched.
        truncated: Whether the search stopped at max_results.
        note: What to do when it was cut.
        binary_files_skipped: Binary files left out.
        skipped_binary: Binary files named in paths, left out.
        skipped_large: Files too large to search (at most 50).
        skipped_long_lines: Lines too long to search, as path:line (at most 50).
        unreadable: Folders that could not be read (at most 50).
        errors: Paths that could not be searched, and why.
    """

    success: Literal[True]
    paths: str | list[str]
    matches: NotRequired[list[Match]]
    count: NotRequired[int]
    counts: NotRequired[list[FileCount]]
    total_matches: NotRequired[int]
    files_matched: int
    files_searched: int
    truncated: bool
    note: NotRequired[str]
    binary_files_skipped: NotRequired[int]
    skipped_binary: NotRequired[list[str]]
    skipped_large: NotRequired[list[str]]
    skipped_long_lines: NotRequired[list[str]]
    unreadable: NotRequired[list[str]]
    errors: NotRequired[list[PathProblem]]


class TextSearched(_Searched):
    """What SearchText answers.

    Attributes:
        query: The text searched for, as given.
    """

    query: str


class RegexSearched(_Searched):
    """What SearchRegex answers.

    Attributes:
        pattern: The regular expression, as given.
    """

    pattern: str


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
        scan.run(starts, max_depth, respect_gitignore, parse_exclude(exclude))
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


class _Finds:
    """What a search found in one file read block by block, kept until the file is read
    to its end (a NUL byte anywhere makes the whole file binary once it matched)."""

    def __init__(self, matcher: BytesMatcher | RegexMatcher, count_only: bool,
                 limit: int) -> None:
        self.matcher = matcher
        self.count_only = count_only
        self.limit = limit
        self.numbers: list[int] = []
        self.texts: list[str] = []
        self.skipped: list[int] = []
        self.count = 0
        self.full = False

    def lines(self, data: bytes, first: int) -> None:
        """Search ``data``, whole lines of which the first is number ``first``."""
        later = first > 1
        if self.count_only:
            self.count += self.matcher.count(data, later)
            return
        numbers, texts = self.matcher.lines(data, self.limit - len(self.numbers), later)
        self.numbers.extend(number + first - 1 for number in numbers)
        self.texts.extend(texts)
        self.count = len(self.numbers)
        self.full = self.count >= self.limit

    def long(self, long: LongLine | TooLong, number: int) -> None:
        """Take the answer for line ``number``, fed whole to ``long``."""
        if long.skipped:
            self.skipped.append(number)
        elif long.found:
            self.count += 1
            if not self.count_only:
                self.numbers.append(number)
                self.texts.append(long.text())
                self.full = self.count >= self.limit


_NOTHING, _BINARY, _FOUND, _DATA, _LARGE = b"nbmdl"
_CARRIED = frozenset(b"emd")
"""The answers that carry a payload: an error, what was found, the bytes."""
_SEARCHED = bytes((_NOTHING, _BINARY, _FOUND))
"""The answers of files read and searched through."""


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
        self.long_lines: list[str] = []
        self.unreadable: list[str] = []
        self.files_matched = 0
        self.full = False

    def run(self, starts: list[Start], limit: int | None, respect_gitignore: bool,
            exclude: Exclude | None = None) -> None:
        """Search every start (a file, or a folder walked to depth ``limit``) until full."""
        workspace = self.tool.workspace
        for _path, shown, kind in starts:
            check_cancelled()
            if kind != "directory":
                if exclude and exclude.excludes(os.path.basename(shown),
                                                os.path.basename(shown), False):
                    continue
                # a FIFO or a device named by the model is reported as not searchable
                try:
                    fd, info, _ = workspace.open_regular(shown)
                    self.stream(fd, info.st_size, shown, explicit=True)
                except (OSError, ValueError) as exc:
                    self.unreadable.append(f"{safe_text(shown)}: "
                                           f"{getattr(exc, 'strerror', None) or exc}")
            else:
                self.folder(shown, limit, respect_gitignore, exclude)
            if self.full:
                break

    def folder(self, shown: str, limit: int | None, respect_gitignore: bool,
               exclude: Exclude | None) -> None:
        """Search the files of the walk of folder ``shown``, in the walk's order, a batch
        of one folder's consecutive files at a time (see janito_files._batches)."""
        scan, start = self.scanner()
        pipeline = Pipeline(scan, start)
        ceiling = descriptor_ceiling()
        owned = -1  # the batch's folder, duplicated until the pipeline holds it
        try:
            for run in walk_runs(self.tool, shown, max_depth=limit, gitignore=respect_gitignore,
                                 errors=self.unreadable, exclude=exclude):
                kinds = run.kinds
                if "file" not in kinds:
                    continue
                names = run.names
                if kinds.count("file") != len(kinds):
                    names = [name for name, kind in zip(names, kinds, strict=True)
                             if kind == "file"]
                prefix = run.prefix
                for first in range(0, len(names), BATCH_FILES):
                    check_cancelled()
                    batch = names[first:first + BATCH_FILES]
                    owned = self.duplicated(pipeline, run.dir_fd, ceiling)
                    if self.full:
                        return
                    if owned < 0:
                        self.unreadable.append(
                            f"{safe_text(prefix.rstrip('/') or '.')}: {os.strerror(-owned)} "
                            f"({len(batch)} files not searched)")
                        continue
                    pipeline.give(owned, batch, prefix, self.left())
                    owned = -1
                    self.taken(pipeline, pipeline.full())
                    if self.full:
                        return
            while pipeline.queue and not self.full:
                self.taken(pipeline, True)
        finally:
            if owned >= 0:
                os.close(owned)
            pipeline.close()

    def duplicated(self, pipeline: Pipeline, dir_fd: int, ceiling: int) -> int:
        """A descriptor of folder ``dir_fd`` for a batch to own, or ``-errno`` where the
        process has none to spare even with no batch out.

        Each batch out holds a descriptor, and the calls running beside this one share the
        process's allowance with it. A descriptor numbered ``ceiling`` or above (the
        lowest free number is always the one given) leaves fewer than
        :data:`~janito_files._batches.SPARE_DESCRIPTORS` free for the workers' files, the
        walk's folders and the other calls: then, and where none is left at all (EMFILE,
        ENFILE), the batches out are taken back first, in order. The search slows; it
        does not fail, nor starve the rest of the process of descriptors."""
        while True:
            try:
                owned = os.dup(dir_fd)
            except OSError as exc:
                if exc.errno not in (errno.EMFILE, errno.ENFILE):
                    raise
                if not pipeline.queue:
                    return -exc.errno
            else:
                if owned < ceiling or not pipeline.queue:
                    return owned
                os.close(owned)
            self.taken(pipeline, True)
            if self.full:
                return -errno.EMFILE

    def left(self) -> int:
        """The most lines a file given now may add: what is left to find can only shrink
        until its answer is used, and the lines found past it are dropped then."""
        return max(self.max_results - len(self.matches), 1)

    def scanner(self) -> tuple[BatchScan, Callable[[int], Any]]:
        """:func:`scan_files` with this search's matcher and limits bound, and what makes
        a :class:`~janito_files._steps.Searcher` of the same on so many threads."""
        matcher = self.matcher
        table = None
        if isinstance(matcher, BytesMatcher):
            mode, needle, fold = LITERAL, matcher.needle, matcher.fold
        else:
            mode = CANDIDATES if matcher.needs and matcher.alone else FILTER
            needle, fold = matcher.needs, False
            if mode == CANDIDATES:
                # the candidates the pattern's table answers as missing it never leave
                # the workers
                table = matcher.automaton
        count_only = self.count_only
        most = min(BLOCK_BYTES, MAX_FILE_BYTES)

        def scan(dir_fd: int, names: list[str], limit: int) -> tuple[bytes, list[Any]]:
            return scan_files(dir_fd, names, SNIFF_BYTES, most, needle, fold, limit,
                              count_only, mode, BATCH_BYTES, table)

        def start(workers: int) -> Any:
            return Searcher(workers, SNIFF_BYTES, most, needle, fold, count_only, mode,
                            BATCH_BYTES, HELD_BYTES, table)

        return scan, start

    def taken(self, pipeline: Pipeline, wait: bool) -> None:
        """Use the answers of the batches that are back (with ``wait``, of the oldest one
        at least), in order, until the search is full."""
        while pipeline.queue and (wait or pipeline.ready()):
            wait = False
            batch = pipeline.take()
            try:
                done = 0
                codes, payloads = batch.answer
                while True:
                    self.answered(batch, done, codes, payloads)
                    done += len(codes)
                    if done >= len(batch.names) or self.full:
                        break
                    # the batch stopped at its budget: the rest, here
                    check_cancelled()
                    codes, payloads = pipeline.scan(batch.dir_fd, batch.names[done:],
                                                    self.left())
            finally:
                batch.close()
            if self.full:
                return

    def answered(self, batch: Batch, first: int, codes: bytes, payloads: list[Any]) -> None:
        """Take what :func:`scan_files` found in the files of ``batch`` from number
        ``first`` on, as the walk gave them."""
        if not payloads and b"l" not in codes:
            # nothing found, nothing to read again: only counts change
            self.files_searched += codes.count(b"n")
            self.binary_count += codes.count(b"b")
            return
        if not self.count_only and not codes.translate(None, _SEARCHED):
            matcher = self.matcher
            if isinstance(matcher, BytesMatcher):
                if self.listed_together(batch, first, codes, payloads):
                    return
            elif matcher.joinable and self.matched_together(matcher, batch, first, codes,
                                                            payloads):
                return
        given = iter(payloads)
        prefix, names = batch.prefix, batch.names
        quiet = first + self.first_finding(codes, payloads)
        for index, code in enumerate(codes, first):
            if code == _NOTHING:
                self.files_searched += 1
            elif code == _BINARY:
                self.binary_count += 1
            elif code == _FOUND:
                if index < quiet:  # its lines hold no match: as found() would count it
                    next(given)
                    self.files_searched += 1
                else:
                    self.found(next(given), prefix + names[index])
            elif code == _DATA:
                self.file(next(given), prefix + names[index])
            elif code == _LARGE:  # more than one block: searched block by block
                try:
                    fd, info = open_regular_at(batch.dir_fd, names[index])
                    self.stream(fd, info.st_size, prefix + names[index])
                except OSError as exc:
                    self.unreadable.append(f"{safe_text(prefix + names[index])}: "
                                           f"{exc.strerror or exc}")
            else:
                exc = next(given)
                self.unreadable.append(f"{safe_text(prefix + names[index])}: {exc.strerror or exc}")
            if self.full:
                return

    def listed_together(self, batch: Batch, first: int, codes: bytes, payloads: list[Any]) -> bool:
        """Take the answers of a literal search of files that were all read (``codes`` of
        nothing found, binary or found only) as :meth:`found` takes them a file at a time,
        the lines of all the files decoded at once; False, having taken nothing, where they
        hold as many lines as the search has room left for (where it fills up,
        :meth:`found` cuts the last file's lines).

        Each file's lines are its own whatever is decoded beside them: a line feed is never
        part of a multi-byte sequence (see :func:`decoded_lines`), a line without a
        carriage return is unchanged by taking them off, and a line is clipped by its own
        length."""
        numbers = [answer[0] for answer in payloads]
        if sum(map(len, numbers)) >= self.max_results - len(self.matches):
            return False
        self.files_searched += codes.count(_NOTHING) + len(payloads)
        self.binary_count += codes.count(_BINARY)
        self.files_matched += len(payloads)  # a file is found with one line or more
        prefix, names = batch.prefix, batch.names
        paths = [safe_text(prefix + names[index])
                 for index, code in enumerate(codes, first) if code == _FOUND]
        rows = found_rows(paths, payloads, LINE_CHARS)
        if rows is None:  # carriage returns, or lines to clip
            joined = b"\n".join([answer[1] for answer in payloads])
            rows = rows_of(paths, numbers, decoded_lines(joined, b"\r" in joined))
        self.matches.extend(rows)
        return True

    def matched_together(self, matcher: RegexMatcher, batch: Batch, first: int, codes: bytes,
                         payloads: list[Any]) -> bool:
        """Take the answers of a search for a :func:`joinable` pattern in files that were
        all read (``codes`` of nothing found, binary or found only) as :meth:`found` takes
        them a file at a time, the lines of all the files searched as one text; False,
        having taken nothing, where they hold as many matching lines as the search has room
        left for.

        A joinable pattern matches a line of the joined text exactly where it matches that
        line in its own file's (see :func:`joinable`): one call into the engine for the
        batch instead of one or more for each file. Should the engine run out of time in
        it, none of the batch's files is counted as searched."""
        left = self.max_results - len(self.matches)
        prefix, names = batch.prefix, batch.names
        if matcher.automaton is not None and automaton_rows is not None:
            rows = automaton_rows(matcher.automaton, prefix, names, first, codes, payloads,
                                  left, LINE_CHARS)
            if rows is not None:  # else lines only the steps below answer, or the search fills up
                found, matched, binary, unsure = rows
                if unsure:
                    found, matched = self._settled_rows(matcher, found, matched, unsure)
                self.files_searched += codes.count(_NOTHING) + len(payloads) - len(binary)
                self.binary_count += codes.count(_BINARY) + len(binary)
                self.files_matched += matched
                self.matches.extend(found)
                return True
        joined = b"\n".join([answer[1] for answer in payloads])
        numbers, texts = matcher.text_lines(joined.decode("utf-8", "replace"), 0, left)
        if len(numbers) >= left:
            return False
        self.files_searched += codes.count(_NOTHING)
        self.binary_count += codes.count(_BINARY)
        named = [index for index, code in enumerate(codes, first) if code == _FOUND]
        # a file's lines follow the earlier files' among the joined ones: its matches are
        # those numbered after the lines before it, up to its last
        start = before = 0
        for (candidates, _, nul), name in zip(payloads, named, strict=True):
            last = before + len(candidates)
            stop = bisect_right(numbers, last, start)
            if stop > start and nul:
                self._binary(prefix + names[name], False)
            else:
                self.files_searched += 1
                if stop > start:
                    path = safe_text(prefix + names[name])
                    self.files_matched += 1
                    self.matches.extend([{"path": path, "line": candidates[number - 1 - before],
                                          "text": text} for number, text
                                         in zip(numbers[start:stop], texts[start:stop],
                                                strict=True)])
            start, before = stop, last
        return True

    @staticmethod
    def _settled_rows(matcher: RegexMatcher, rows: list[dict[str, Any]], matched: int,
                      unsure: list[int]) -> tuple[list[dict[str, Any]], int]:
        """``rows`` less those at the indexes ``unsure`` in which the engine finds no match
        (each line alone, as :meth:`RegexMatcher._settled` asks), and how many files still
        have rows of the ``matched`` that had. A file's rows are consecutive."""
        answers = matcher._lines_match([rows[index]["text"] for index in unsure])
        dropped = {index for index, matches in zip(unsure, answers, strict=True) if not matches}
        if not dropped:
            return rows, matched
        paths = {rows[index]["path"] for index in dropped}
        kept = [row for index, row in enumerate(rows) if index not in dropped]
        return kept, matched - len(paths - {row["path"] for row in kept if row["path"] in paths})

    def first_finding(self, codes: bytes, payloads: list[Any]) -> int:
        """How many of ``codes`` (a batch's answers) come before the first file whose lines
        may match: all of them when none does.

        For a pattern that is :func:`joinable`, the candidate lines of the batch's files
        are searched joined, once: the files before the one holding the first match of all
        of them have none, and their lines are not matched a file at a time. (A search
        that finds nothing over many files made several calls into the engine and Python
        objects for each of them.) 0 for any other pattern, or fewer than two such files.
        """
        matcher = self.matcher
        if (isinstance(matcher, BytesMatcher) or not matcher.joinable
                or codes.count(_FOUND) < 2):
            return 0
        texts: list[str] = []
        where: list[int] = []
        given = iter(payloads)
        for index, code in enumerate(codes):
            if code in _CARRIED:
                answer = next(given)
                if code == _FOUND:
                    texts.append(answer[1].decode("utf-8", "replace"))
                    where.append(index)
        first = matcher.first_at("\n".join(texts))
        if first < 0:
            return len(codes)
        end = 0
        for text, index in zip(texts, where, strict=True):
            end += len(text) + 1  # and the line feed joining it to the next
            if first < end:
                return index
        return len(codes)

    def found(self, answer: Any, path: str) -> None:
        """Take a ``b"m"`` answer of :func:`scan_files` for the file at ``path``."""
        matcher = self.matcher
        if isinstance(matcher, BytesMatcher):
            if self.count_only:
                self._counted(path, answer)
                return
            numbers, joined = answer
            left = self.max_results - len(self.matches)
            if len(numbers) > left:  # found before the lines of earlier files came back
                numbers = numbers[:left]
                joined = b"\n".join(joined.split(b"\n", left)[:left])
            # a line's carriage returns are the file's, so joined holds one when it matters
            self._listed(path, numbers, decoded_lines(joined, b"\r" in joined))
            return
        # the lines holding the text the pattern needs: it is matched against them alone
        candidates, joined, nul = answer
        if self.count_only:
            count = matcher.count(joined)
            if count and nul:
                self._binary(path, False)
            else:
                self._counted(path, count)
            return
        numbers, texts = matcher.lines(joined, self.max_results - len(self.matches))
        if numbers and nul:
            self._binary(path, False)
        else:
            self._listed(path, [candidates[number - 1] for number in numbers], texts)

    def file(self, data: bytes, path: str, explicit: bool = False) -> None:
        """Search the bytes :func:`read_open` gave for the whole file at ``path`` (one
        block at most)."""
        if data.find(b"\x00", 0, SNIFF_BYTES) >= 0:
            self._binary(path, explicit)
            return
        # A NUL byte past the sniffed head makes the file binary only when it matched.
        if self.count_only:
            count = self.matcher.count(data)
            if count and b"\x00" in data:
                self._binary(path, explicit)
            else:
                self._counted(path, count)
            return
        numbers, texts = self.matcher.lines(data, self.max_results - len(self.matches))
        if numbers and b"\x00" in data:
            self._binary(path, explicit)
        else:
            self._listed(path, numbers, texts)

    def stream(self, fd: int, size: int, path: str, explicit: bool = False) -> None:
        """Search the regular file open as ``fd`` (closed here), whose size was ``size``,
        block by block: what it holds never costs more than :data:`MEMORY_BOUND`.

        Each block is cut after its last line feed and the lines before the cut are
        searched; the rest begins the next buffer. A line longer than LINE_BYTES is fed
        to the matcher in parts (:class:`LongLine`, :class:`TooLong`). The answers are
        those of :meth:`file` for the same bytes.
        """
        try:
            if size > MAX_FILE_BYTES:
                self.large.append(path)
                return
            self._stream(fd, path, explicit)
        finally:
            os.close(fd)

    def _stream(self, fd: int, path: str, explicit: bool) -> None:
        finds = _Finds(self.matcher, self.count_only, self.max_results - len(self.matches))
        line = 1  # the number of the first line not searched yet
        carry = b""  # its start, when it began in a block before
        long: LongLine | TooLong | None = None
        nul = False
        total = 0
        while True:
            check_cancelled()
            block = os.read(fd, BLOCK_BYTES)
            if not block:
                break
            if not total and block.find(b"\x00", 0, SNIFF_BYTES) >= 0:
                self._binary(path, explicit)
                return
            total += len(block)
            if total > MAX_FILE_BYTES:  # it grew past the limit while it was read
                self.large.append(path)
                return
            nul = nul or b"\x00" in block
            if nul and finds.count:
                self._binary(path, explicit)
                return
            if finds.full:
                continue  # only a NUL byte further on could change the answer now
            if carry:
                ends = block.find(b"\n")
                if len(carry) + (ends if ends >= 0 else len(block)) > LINE_BYTES:
                    long = self.matcher.long_line(not self.count_only)
                    long.feed(carry)
                    carry = b""
            if long is not None:
                ends = block.find(b"\n")
                if ends < 0:
                    long.feed(block)
                    continue
                long.feed(block[:ends])
                finds.long(long, line)
                line += 1
                long = None
                block = block[ends + 1:]
                if finds.full:
                    continue
            data = carry + block if carry else block
            cut = data.rfind(b"\n") + 1
            if cut:
                lines = data[:cut] if cut < len(data) else data
                finds.lines(lines, line)
                line += lines.count(b"\n")
            # Never more than LINE_BYTES: a block is no larger, and a line that grows
            # past it is followed as a long line from the next block on.
            carry = data[cut:] if cut else data
        if not finds.full:
            if long is not None:
                finds.long(long, line)
            elif carry:  # the last line, without a line feed
                finds.lines(carry, line)
        if nul and finds.count:
            self._binary(path, explicit)
            return
        self.long_lines.extend(f"{path}:{number}" for number in finds.skipped)
        if self.count_only:
            self._counted(path, finds.count)
        else:
            self._listed(path, finds.numbers, finds.texts)

    def _counted(self, path: str, count: int) -> None:
        self.files_searched += 1
        if count:
            self.total += count
            self.counts.append({"path": safe_text(path), "count": count})

    def _listed(self, path: str, numbers: list[int], texts: list[str]) -> None:
        self.files_searched += 1
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
        if self.long_lines:
            out["skipped_long_lines"] = [safe_text(p) for p in self.long_lines[:50]]
        if self.unreadable:
            out["unreadable"] = [safe_text(u) for u in self.unreadable[:50]]
        if problems:
            out["errors"] = problems
        tool.report_result(
            f"{counted(out.get('total_matches', out.get('count')) or 0, 'matching line')} in "
            f"{counted(out['files_matched'], 'file')}" + (" (truncated)" if truncated else ""))
        return out


