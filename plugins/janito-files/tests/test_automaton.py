"""A regular expression's table (janito_files._automaton) finds the lines the ``regex``
engine finds, line by line, on random patterns and texts; the compiled walk of a table
answers as its Python twin; what a table cannot express, or would make too large, is left
to the engine; a table that is not one is refused."""

from __future__ import annotations

import random
import re
import struct
import time
from collections.abc import Iterator
from typing import Any

import pytest
import regex
from janito_files._automaton import (
    HEADER,
    MAX_STEPS,
    automaton_lines_py,
    automaton_rows_py,
    build,
)
from janito_files._common import regex_parser
from janito_files._search import RegexMatcher, _Scan

PIECES = ["a", "b", "ab", ".", r"\s", r"\S", r"\w", r"\W", r"\d", r"\b", r"\B", "^", "$",
          "[a-c]", "[^b]", "x*", "a+", "b?", "(a|b)", "(?:ab)*", "a{2}", "b{1,3}", " ", r"\r",
          r"[\s\d]", "A", "(a|)+", "[_A-Z]", "\u00e9", "[\u00e9-\u00fc]", "\u00df", "k", "K",
          "(a|b)*?", r"\t", "[^\u00e9]", r"\x00", "[-a]"]
CHARACTERS = ["a", "b", "A", "B", " ", "x", "_", "1", "\n", "\r", "\t", "\u00e9", "\u00df",
              "-", "ab", "\u212a", "k", "\x00", "\x1c"]


def _table(pattern: str) -> tuple[bytes | None, Any]:
    parsed = regex_parser().parse(pattern, re.MULTILINE)
    flags = parsed.state.flags
    mode = regex.MULTILINE | (regex.IGNORECASE if flags & re.IGNORECASE else 0)
    return build(parsed, flags), regex.compile(pattern, mode)


def _engine_lines(compiled: Any, text: str, pos: int) -> list[int]:
    rest = text[pos:]
    lines = rest.split("\n")
    if not rest or rest.endswith("\n"):
        lines.pop()
    return [number for number, line in enumerate(lines, 1) if compiled.search(line)]


def _random_case(rng: random.Random) -> tuple[str, str, int]:
    pattern = "".join(rng.choice(PIECES) for _ in range(rng.randrange(1, 6)))
    if rng.random() < 0.2:
        pattern = "(?i)" + pattern
    if rng.random() < 0.1:
        pattern = "(?a)" + pattern
    text = "".join(rng.choice(CHARACTERS) for _ in range(rng.randrange(0, 40)))
    pos = text.index("\n") + 1 if rng.random() < 0.3 and "\n" in text else 0
    return pattern, text, pos


def _random_tables(rng: random.Random, tries: int) -> Iterator[tuple[str, str, int, bytes, Any]]:
    """(pattern, text, pos, table, compiled) of the valid patterns among ``tries`` random
    cases; every one of them has a table."""
    for _ in range(tries):
        pattern, text, pos = _random_case(rng)
        try:
            table, compiled = _table(pattern)
        except re.error:
            continue
        assert table is not None, pattern
        yield pattern, text, pos, table, compiled


def test_a_table_finds_the_lines_the_engine_finds() -> None:
    # each line the table settles is the engine's answer for it; the lines it leaves
    # unsure (a character past ASCII first) are answered by the engine afterwards
    rng = random.Random(20261207)
    answered = 0
    for pattern, text, pos, table, compiled in _random_tables(rng, 3000):
        expected = _engine_lines(compiled, text, pos)
        limit = rng.choice([1, 2, 1000])
        numbers, texts, unsure = automaton_lines_py(table, text, pos, limit, 1000, False)
        kept = [number for index, number in enumerate(numbers)
                if index not in unsure or compiled.search(texts[index])]
        assert kept[:limit] == expected[:limit], (pattern, text, pos)
        count, unsure_texts = automaton_lines_py(table, text, pos, 0, 1000, True)
        assert count + sum(bool(compiled.search(line)) for line in unsure_texts) \
            == len(expected), (pattern, text, pos)
        answered += 1
    assert answered > 2000


def test_the_compiled_walk_answers_as_its_twin(speedups: Any) -> None:
    rng = random.Random(20261208)
    for pattern, text, pos, table, _ in _random_tables(rng, 3000):
        limit = rng.choice([0, 1, 2, 5, 1000])
        line_chars = rng.choice([2, 1000])
        count_only = rng.random() < 0.3
        expected = automaton_lines_py(table, text, pos, limit, line_chars, count_only)
        assert speedups.automaton_lines(table, text, pos, limit, line_chars, count_only) \
            == expected, (pattern, text, pos, limit, line_chars, count_only)


def test_a_text_with_a_lone_surrogate_is_left_to_the_engine(speedups: Any) -> None:
    table, _ = _table("a")
    assert speedups.automaton_lines(table, "a\n\udcff a\n", 0, 10, 100, False) is None


@pytest.mark.parametrize("pattern", [
    r"(a)\1", "(?=a)b", "(?<=a)b", "(?!a)", r"\Aa", r"a\Z", "(?i:a)b", "(?-m:$)",
    "(?P<x>a)(?P=x)", "(a)?(?(1)b|c)",
])
def test_what_a_table_cannot_express_is_left_to_the_engine(pattern: str) -> None:
    assert _table(pattern)[0] is None


def test_atomic_groups_and_possessive_repeats_are_left_to_the_engine() -> None:
    try:
        parsed = regex_parser().parse("(?>a+)b", re.MULTILINE)
    except re.error:
        pytest.skip("atomic groups are Python 3.11 syntax")
    assert build(parsed, parsed.state.flags) is None
    parsed = regex_parser().parse("a++b", re.MULTILINE)
    assert build(parsed, parsed.state.flags) is None


@pytest.mark.parametrize("pattern", [
    "(a|b)*a(a|b){14}",  # a deterministic table of 2**15 states
    "(?:a{600}){4}",  # more positions than a table is built from
])
def test_a_pattern_whose_table_would_be_too_large_is_left_to_the_engine_at_once(
        pattern: str) -> None:
    started = time.process_time()
    assert _table(pattern)[0] is None
    assert time.process_time() - started < 5.0  # bounded by MAX_STEPS, not by the pattern
    assert MAX_STEPS <= 1_000_000


def test_a_table_that_is_not_one_is_refused(speedups: Any) -> None:
    table, _ = _table("ab+c")
    assert table is not None
    classes, states, _, matched = HEADER.unpack_from(table)
    moves_at = HEADER.size + 256
    bad_move = bytearray(table)
    struct.pack_into("=H", bad_move, moves_at, states)  # a state past the last
    bad_class = bytearray(table)
    bad_class[HEADER.size + ord("a")] = classes  # a class past the last
    bad_first = bytearray(table)
    struct.pack_into("=HHHH", bad_first, 0, classes, states, states, matched)
    for broken in (table[:-1], table + b"\x00", bytes(bad_move), bytes(bad_class),
                   bytes(bad_first), b"", HEADER.pack(0, 0, 0, 0) + bytes(256)):
        with pytest.raises(ValueError, match="not an automaton's table"):
            speedups.automaton_lines(broken, "abc\n", 0, 10, 100, False)
    with pytest.raises(ValueError):
        speedups.automaton_lines(table, "abc\n", 5, 10, 100, False)
    with pytest.raises(TypeError):
        speedups.automaton_lines(table, b"abc\n", 0, 10, 100, False)


def _random_batch(rng: random.Random) -> tuple[list[str], bytes, list[Any]]:
    names, codes, payloads = ["before"], bytearray(), []
    for index in range(rng.randrange(0, 6)):
        names.append(rng.choice([f"f{index}.py", f"\u00e9{index}", f"x\udcff{index}"]))
        code = rng.choice(b"nbmmm")
        codes.append(code)
        if code != ord("m"):
            continue
        count = rng.randrange(1, 5)
        lines = []
        for _ in range(count):
            line = "".join(rng.choice(CHARACTERS) for _ in range(rng.randrange(1, 12)))
            lines.append(line.replace("\n", "") or "a")
        data = "\n".join(lines).encode("utf-8")
        if rng.random() < 0.05:
            data += b"\xe2\x82"  # a broken sequence at a file's end
        payloads.append((sorted(rng.sample(range(1, 99), count)), data, rng.random() < 0.15))
    return names, bytes(codes), payloads


def test_a_batch_s_rows_are_the_lines_the_engine_finds(speedups: Any) -> None:
    rng = random.Random(20261209)
    made = unsure_seen = 0
    for _ in range(3000):
        pattern = "".join(rng.choice(PIECES) for _ in range(rng.randrange(1, 5)))
        try:
            table, compiled = _table(pattern)
        except re.error:
            continue
        assert table is not None
        names, codes, payloads = _random_batch(rng)
        limit = rng.choice([1, 3, 1000])
        line_chars = rng.choice([4, 1000])
        arguments = (table, "d/", names, 1, codes, payloads, limit, line_chars)
        rows = speedups.automaton_rows(*arguments)
        assert rows == automaton_rows_py(*arguments), (pattern, names, codes, payloads)
        if rows is None:
            continue
        # the unsure rows settled by the engine, as the search settles them
        found_rows, matched_files, binary_files, unsure = rows
        unsure_seen += bool(unsure)
        settled = _Scan._settled_rows(RegexMatcher(compiled, None), found_rows, matched_files,
                                      unsure)
        expected: list[dict[str, Any]] = []
        binary, matched = [], 0
        found = [name for name, code in zip(names[1:], codes, strict=True) if code == ord("m")]
        for index, (name, (numbers, data, nul)) in enumerate(zip(found, payloads,
                                                                 strict=True)):
            hits = [(number, line) for number, line in zip(numbers, data.split(b"\n"),
                                                            strict=True)
                    if compiled.search(line.decode("utf-8", "replace"))]
            if hits and nul:
                binary.append(index)
                continue
            matched += bool(hits)
            expected += [{"path": "d/" + name, "line": number,
                          "text": line.rstrip(b"\r").decode("utf-8", "replace")}
                         for number, line in hits]
        assert (*settled, binary_files) == (expected, matched, binary), (pattern, payloads)
        made += 1
    assert made > 300 and unsure_seen > 30, (made, unsure_seen)


@pytest.mark.parametrize("args", [
    ("", ["a"], 0, b"mm", [([1], b"x", False)], 10, 10),  # fewer payloads than b"m"
    ("", ["a"], 0, b"m", [([1], b"x")], 10, 10),
    ("", ["a"], 0, b"m", [(1, b"x", False)], 10, 10),
    ("", ["a"], 0, b"m", [([1], "x", False)], 10, 10),
    ("", ["a"], 1, b"m", [([1], b"x", False)], 10, 10),  # past the names
    ("", "a", 0, b"m", [([1], b"x", False)], 10, 10),
    ("", [1], 0, b"m", [([1], b"x", False)], 10, 10),
])
def test_automaton_rows_refuses_bad_arguments(speedups: Any, args: tuple[Any, ...]) -> None:
    table, _ = _table("x")
    with pytest.raises((TypeError, ValueError)):
        speedups.automaton_rows(table, *args)
