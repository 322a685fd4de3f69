"""Regular expressions answered by a table: which lines of an ASCII text hold a match.

A line search needs no match's position, only whether each line holds one, and for most
patterns a model writes that question has an answer in a finite automaton: one table
look-up a byte, whatever the pattern, never backtracking, so no timeout is needed. The
table is built here from the standard library's parse of the pattern, for ASCII text
only: each character class is asked of the ``regex`` engine itself, character by
character, so ``\\s``, ``\\w``, ``(?i)`` and ``(?a)`` mean exactly what they mean there.
``janito_files._speedups.automaton_lines`` runs it; a text that is not ASCII, and a
pattern the table cannot express (a back-reference, a lookaround, an atomic group or a
possessive repeat, ``\\A`` or ``\\Z``, a flag set inside it) or would make too large, is
left to the engine (None).

How a line is read: the automaton starts at the line's start with every position of the
pattern that may begin a match, so a match may start anywhere; ``^`` holds at a line's
start, ``$`` at its end, ``\\b`` and ``\\B`` between the character before and the one
after. A line holds a match as soon as the pattern's end is reached, and past that the
rest of the line is not read.
"""

from __future__ import annotations

import re
import struct
from typing import Any, NamedTuple

import regex

from ._common import regex_parser

MAX_POSITIONS = 2000
"""The most positions (states of the pattern's automaton before it is made
deterministic) a table is built from; a pattern with more is left to the engine."""

MAX_STATES = 1000
"""The most states a table may have; where making it deterministic needs more, the
pattern is left to the engine."""

MAX_STEPS = 400_000
"""The most steps building one table may take (positions visited, moves made): about a
tenth of a second. A pattern made to need more is left to the engine, which bounds it by
time; most patterns take a few thousand."""

NEWLINE = 0xFE
"""The class of the line feed in a table's byte map: it ends a line."""

NOT_ASCII = 0xFF
"""The class of the bytes from 0x80 on: the table answers nothing of a text holding them."""

# what the character before a position was, for ^, \b and \B
_START, _WORD, _OTHER = 0, 1, 2

# kinds of positions
_CHAR, _SPLIT, _ASSERT, _MATCH = 0, 1, 2, 3

# assertions
_BOL, _EOL, _BOUNDARY, _NOT_BOUNDARY = 0, 1, 2, 3
_ASSERTIONS = {"AT_BEGINNING": _BOL, "AT_BEGINNING_LINE": _BOL, "AT_END": _EOL,
               "AT_END_LINE": _EOL, "AT_BOUNDARY": _BOUNDARY,
               "AT_NON_BOUNDARY": _NOT_BOUNDARY}
_CATEGORIES = {"CATEGORY_DIGIT": r"\d", "CATEGORY_NOT_DIGIT": r"\D",
               "CATEGORY_SPACE": r"\s", "CATEGORY_NOT_SPACE": r"\S",
               "CATEGORY_WORD": r"\w", "CATEGORY_NOT_WORD": r"\W"}
_ASCII = [chr(code) for code in range(128) if code != 10]
_EVERY = sum(1 << code for code in range(128)) & ~(1 << 10)
"""Every character a line's bytes may be, as a bit each: ASCII but the line feed."""
HEADER = struct.Struct("=HHHH")
"""A table's header: classes, states, the state each line starts in, the state that says
the line matched. Then the byte map (256 bytes), the moves (``uint16`` a state and class,
state by state) and whether each state matches at the line's end (a byte a state)."""


class _Unsupported(Exception):
    """The pattern holds what a table cannot express."""


class _Positions:
    """The pattern's automaton: a position is (kind, argument, next, other next)."""

    def __init__(self, flags: int) -> None:
        self.kinds: list[int] = []
        self.arguments: list[int] = []
        self.next: list[int] = []
        self.other: list[int] = []
        self.engine_flags = ((regex.IGNORECASE if flags & re.IGNORECASE else 0)
                             | (regex.ASCII if flags & re.ASCII else 0)
                             | (regex.DOTALL if flags & re.DOTALL else 0))
        self._sets: dict[str, int] = {}

    def add(self, kind: int, argument: int = 0, following: int = -1, other: int = -1) -> int:
        if len(self.kinds) >= MAX_POSITIONS:
            raise _Unsupported
        self.kinds.append(kind)
        self.arguments.append(argument)
        self.next.append(following)
        self.other.append(other)
        return len(self.kinds) - 1

    def plain(self, name: str, av: Any) -> int | None:
        """The characters of a literal, a character but one, any character or a class of
        literals and ranges, where matching them is comparing code points (no ``(?i)``);
        None where the engine must be asked (:meth:`chars`)."""
        if self.engine_flags & regex.IGNORECASE:
            return None
        if name == "LITERAL":
            return (1 << av) & _EVERY if av < 128 else 0
        if name == "NOT_LITERAL":
            return _EVERY & ~(1 << av) if av < 128 else _EVERY
        if name == "ANY":
            return _EVERY
        found, negate = 0, False
        for op, item in av:  # a class
            kind = getattr(op, "name", "")
            if kind == "NEGATE":
                negate = True
            elif kind == "LITERAL":
                found |= (1 << item) if item < 128 else 0
            elif kind == "RANGE":
                low, high = item[0], min(item[1], 127)
                if low <= high:
                    found |= ((1 << (high + 1)) - 1) & ~((1 << low) - 1)
            else:
                return None  # a category: \d, \s, \w mean what the engine says
        return (_EVERY & ~found if negate else found) & _EVERY

    def chars(self, source: str) -> int:
        """The ASCII characters (a bit each) the engine matches with ``source`` alone."""
        found = self._sets.get(source)
        if found is None:
            compiled = regex.compile(source, self.engine_flags)
            found = 0
            for char in _ASCII:
                if compiled.fullmatch(char) is not None:
                    found |= 1 << ord(char)
            self._sets[source] = found
        return found


def _code(value: int) -> str:
    return f"\\U{value:08x}"


def _class_source(items: Any) -> str:
    parts: list[str] = []
    for op, av in items:
        name = getattr(op, "name", "")
        if name == "NEGATE":
            parts.insert(0, "^")
        elif name == "LITERAL":
            parts.append(_code(av))
        elif name == "RANGE":
            parts.append(f"{_code(av[0])}-{_code(av[1])}")
        elif name == "CATEGORY" and getattr(av, "name", "") in _CATEGORIES:
            parts.append(_CATEGORIES[av.name])
        else:
            raise _Unsupported
    return "[" + "".join(parts) + "]"


def _sequence(items: Any, following: int, positions: _Positions, parser: Any) -> int:
    for op, av in reversed(list(items)):
        following = _item(getattr(op, "name", ""), av, following, positions, parser)
    return following


def _item(name: str, av: Any, following: int, positions: _Positions, parser: Any) -> int:
    if name in ("LITERAL", "NOT_LITERAL", "ANY", "IN"):
        chars = positions.plain(name, av)
        if chars is None:
            chars = positions.chars(_class_source(av) if name == "IN" else _code(av)
                                    if name == "LITERAL" else f"[^{_code(av)}]"
                                    if name == "NOT_LITERAL" else ".")
        return positions.add(_CHAR, chars, following)
    if name == "BRANCH":
        starts = [_sequence(alternative, following, positions, parser) for alternative in av[1]]
        start = starts[-1]
        for other in reversed(starts[:-1]):
            start = positions.add(_SPLIT, 0, other, start)
        return start
    if name == "SUBPATTERN":
        if av[1] or av[2]:  # (group, flags added, flags removed, items)
            raise _Unsupported
        return _sequence(av[3], following, positions, parser)
    if name in ("MAX_REPEAT", "MIN_REPEAT"):
        least, most, body = av
        if most == parser.MAXREPEAT:
            loop = positions.add(_SPLIT, 0, -1, following)
            positions.next[loop] = _sequence(body, loop, positions, parser)
            tail = loop
        else:
            tail = following
            for _ in range(most - least):
                tail = positions.add(_SPLIT, 0, _sequence(body, tail, positions, parser),
                                     following)
        for _ in range(least):
            tail = _sequence(body, tail, positions, parser)
        return tail
    if name == "AT" and getattr(av, "name", "") in _ASSERTIONS:
        return positions.add(_ASSERT, _ASSERTIONS[av.name], following)
    raise _Unsupported  # back-references, lookarounds, atomic groups, possessive repeats...


def _closure(positions: _Positions, kernel: frozenset[int], before: int, word_after: bool,
             at_end: bool, budget: list[int]) -> tuple[int, bool]:
    """(the characters' positions reached without reading one, as a bit each; whether the
    pattern's end is among them) from ``kernel``, between a character of kind ``before``
    and one that is a word character or not (or the line's end)."""
    kinds, arguments, following, other = (positions.kinds, positions.arguments,
                                          positions.next, positions.other)
    word_before = before == _WORD
    seen = set(kernel)
    stack = list(kernel)
    reading = 0
    budget[0] -= len(kernel)
    while stack:
        at = stack.pop()
        budget[0] -= 1
        kind = kinds[at]
        if kind == _MATCH:
            return 0, True
        if kind == _CHAR:
            reading |= 1 << at
            continue
        if kind == _ASSERT:
            what = arguments[at]
            holds = (before == _START if what == _BOL else at_end if what == _EOL
                     else (word_before != word_after) == (what == _BOUNDARY))
            if not holds:
                continue
            steps: tuple[int, ...] = (following[at],)
        else:
            steps = (following[at], other[at])
        for step in steps:
            if step not in seen:
                seen.add(step)
                stack.append(step)
    return reading, False


def build(parsed: Any, flags: int) -> bytes | None:
    """The table of a parsed pattern (``regex_parser().parse``) with global ``flags``, or
    None where the pattern is left to the engine."""
    parser = regex_parser()
    positions = _Positions(flags)
    try:
        start = _sequence(parsed, positions.add(_MATCH), positions, parser)
        word = positions.chars(r"\w")
    except (_Unsupported, regex.error, RecursionError):
        return None
    # characters every character position and \w answer alike are one class
    sets = sorted({positions.arguments[at] for at, kind in enumerate(positions.kinds)
                   if kind == _CHAR})
    signatures: dict[tuple[int, ...], int] = {}
    byte_class = bytearray([NOT_ASCII]) * 256
    byte_class[10] = NEWLINE
    members: list[int] = []  # a character of each class
    for char in _ASCII:
        code = ord(char)
        signature = (*((chars >> code) & 1 for chars in sets), (word >> code) & 1)
        if signature not in signatures:
            if len(signatures) >= NEWLINE:
                return None
            signatures[signature] = len(signatures)
            members.append(code)
        byte_class[code] = signatures[signature]
    classes = len(members)
    reads = [(code, (word >> code) & 1 == 1) for code in members]
    everywhere = frozenset((start,))  # a match may start at any character
    matched = 0
    numbered: dict[tuple[frozenset[int], int], int] = {}
    todo: list[tuple[frozenset[int], int]] = []
    moves: list[list[int]] = [[]]  # state 0: the line matched (it reads no further)
    at_end = [1]

    def state(kernel: frozenset[int], before: int) -> int:
        key = (kernel, before)
        number = numbered.get(key)
        if number is None:
            number = numbered[key] = len(moves)
            moves.append([])
            at_end.append(0)
            todo.append(key)
        return number

    first = state(everywhere, _START)
    arguments, following = positions.arguments, positions.next
    budget = [MAX_STEPS]
    while todo:
        if len(moves) > MAX_STATES or budget[0] < 0:
            return None
        kernel, before = todo.pop()
        number = numbered[kernel, before]
        at_end[number] = int(_closure(positions, kernel, before, False, True, budget)[1])
        closures = {after: _closure(positions, kernel, before, after, False, budget)
                    for after in (False, True)}
        row = moves[number]
        for code, is_word in reads:
            reading, done = closures[is_word]
            if done:
                row.append(matched)
                continue
            bit = 1 << code
            nxt = set(everywhere)
            budget[0] -= reading.bit_count()
            while reading:
                low = reading & -reading
                at = low.bit_length() - 1
                reading ^= low
                if arguments[at] & bit:
                    nxt.add(following[at])
            row.append(state(frozenset(nxt), _WORD if is_word else _OTHER))
    moves[0] = [matched] * classes
    table = bytearray(HEADER.pack(classes, len(moves), first, matched))
    table += byte_class
    table += struct.pack(f"={classes * len(moves)}H", *(move for row in moves for move in row))
    table += bytes(at_end)
    return bytes(table)


LINE_MISSES, LINE_MATCHES, LINE_UNSURE = 0, 1, 2
"""What a table answers of a line: no match, a match, or a byte past ASCII came first."""


class _Read(NamedTuple):
    """A table taken apart (see :data:`HEADER`)."""

    classes: int
    first: int
    matched: int
    byte_class: bytes
    moves: tuple[int, ...]
    at_end: bytes


def read_table(table: bytes) -> _Read:
    classes, states, first, matched = HEADER.unpack_from(table)
    moves_at = HEADER.size + 256
    return _Read(classes, first, matched, table[HEADER.size:moves_at],
                 struct.unpack_from(f"={classes * states}H", table, moves_at),
                 table[moves_at + 2 * classes * states:])


def walk_line(read: _Read, line: bytes) -> int:
    """What the table answers of ``line`` (its bytes, without the line feed): the compiled
    module's ``walk_line`` in Python, for the twins."""
    classes, state, matched, byte_class, moves = (read.classes, read.first, read.matched,
                                                  read.byte_class, read.moves)
    for byte in line:
        kind = byte_class[byte]
        if kind == NOT_ASCII:
            return LINE_UNSURE
        state = moves[state * classes + kind]
        if state == matched:
            return LINE_MATCHES
    return LINE_MATCHES if read.at_end[state] else LINE_MISSES


def automaton_lines_py(table: bytes, text: str, pos: int, limit: int, line_chars: int,
                       count_only: bool) -> Any:
    """``janito_files._speedups.automaton_lines`` in Python, for the tests: (numbers,
    texts, unsure) of the first ``limit`` lines of ``text`` from ``pos`` (a line's start,
    numbered 1) that match, ``unsure`` the indexes among them of lines the table cannot
    answer (a character past ASCII came before it matched: their texts are the whole
    lines, for the engine); or (``count_only``) how many match and the texts of those it
    cannot answer; None where a matching line is longer than ``line_chars`` bytes once its
    carriage returns are off."""
    read = read_table(table)
    numbers: list[int] = []
    texts: list[str] = []
    unsure: list[Any] = []
    count = 0
    rest = text[pos:]
    lines = rest.split("\n") if limit > 0 or count_only else []
    if lines and (not rest or rest.endswith("\n")):
        lines.pop()  # after a last line feed there is no line
    for number, line in enumerate(lines, 1):
        found = walk_line(read, line.encode("utf-8"))
        if found == LINE_MISSES:
            continue
        settled = found == LINE_MATCHES
        if settled:
            count += 1
            shown = line.rstrip("\r")
            if len(shown.encode("utf-8")) > line_chars:
                return None
        if count_only:
            if not settled:
                unsure.append(line)
            continue
        if not settled:
            unsure.append(len(texts))
        numbers.append(number)
        texts.append(shown if settled else line)
        if count >= limit:
            break
    return (count, unsure) if count_only else (numbers, texts, unsure)


def automaton_rows_py(table: bytes, prefix: str, names: list[str], first: int, codes: bytes,
                      payloads: list[Any], limit: int, line_chars: int
                      ) -> tuple[list[dict[str, Any]], int, list[int], list[int]] | None:
    """``janito_files._speedups.automaton_rows`` in Python, for the tests: (rows, files
    matched, binary files, unsure rows) of a batch. ``codes[j]`` answers for the file
    ``names[first + j]``, and each ``b"m"`` among them has its payload, in order: (the
    numbers of its candidate lines, those lines joined by line feeds, whether it holds a
    NUL byte); a file's path is ``prefix`` and its name. A file with a NUL byte whose
    lines match is binary and has no rows. A line the table cannot answer has its row,
    whose index is in the unsure rows. None where an unsure line ends in a carriage
    return or is a NUL-holding file's, a line is empty, a matching or unsure line is
    longer than ``line_chars`` bytes, a path is not UTF-8, a file's lines and numbers
    differ in count, or the matching and unsure lines reach ``limit``."""
    found_names = [names[first + at] for at, code in enumerate(codes) if code == ord("m")]
    if len(found_names) != len(payloads):
        raise ValueError("codes, names and payloads do not agree")
    read = read_table(table)
    rows: list[dict[str, Any]] = []
    binary: list[int] = []
    unsure: list[int] = []
    matched = found = 0
    for index, (name, (numbers, data, nul)) in enumerate(zip(found_names, payloads,
                                                             strict=True)):
        lines = data.split(b"\n")
        if not numbers or len(lines) != len(numbers) or not all(lines):
            return None
        answers = [walk_line(read, line) for line in lines]
        if any(answer == LINE_UNSURE and (nul or line.endswith(b"\r"))
               for line, answer in zip(lines, answers, strict=True)):
            return None
        hits = [at for at, answer in enumerate(answers) if answer != LINE_MISSES]
        found += len(hits)
        if found >= limit:
            return None
        if hits and nul:
            binary.append(index)
            continue
        path = prefix + name
        for at in hits:
            shown = lines[at].rstrip(b"\r")
            if len(shown) > line_chars:
                return None
            try:
                path.encode("utf-8")
            except UnicodeEncodeError:
                return None
            if answers[at] == LINE_UNSURE:
                unsure.append(len(rows))
            rows.append({"path": path, "line": numbers[at],
                         "text": shown.decode("utf-8", "replace")})
        matched += bool(hits)
    return rows, matched, binary, unsure
