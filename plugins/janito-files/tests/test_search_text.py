"""SearchText and SearchRegex: literal and regex, case, limits, ignore files, exclude, binary
files, errors."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from files_helpers import fails, ok


@pytest.fixture
def tree(ws: Path) -> Path:
    (ws / "src").mkdir()
    (ws / "src" / "a.py").write_text("import os\n\ndef Alpha():\n    return os.sep\n")
    (ws / "src" / "b.py").write_text("def beta(self):\n    pass\ndef gamma(self): pass\n")
    (ws / "notes.txt").write_text("TODO: first\nnothing\ntodo: second\n")
    (ws / "ignored.log").write_text("TODO: hidden by gitignore\n")
    (ws / ".gitignore").write_text("*.log\n")
    (ws / ".git").mkdir()
    (ws / ".git" / "HEAD").write_text("TODO: never searched\n")
    (ws / "blob.bin").write_bytes(b"TODO\x00binary")
    return ws


def lines_of(result: dict[str, Any]) -> list[tuple[str, int, str]]:
    return [(m["path"], m["line"], m["text"]) for m in result["matches"]]


def test_literal_case_sensitive_by_default_as_in_janito_4_50(files: Any, tree: Path) -> None:
    assert lines_of(ok(files.call("SearchText", paths=".", query="todo"))) == [
        ("notes.txt", 3, "todo: second")]
    result = ok(files.call("SearchText", paths=".", query="todo", case_sensitive=False))
    assert lines_of(result) == [("notes.txt", 1, "TODO: first"), ("notes.txt", 3, "todo: second")]
    assert result["count"] == 2 and result["files_matched"] == 1
    assert result["truncated"] is False
    assert result["binary_files_skipped"] == 1
    assert (result["paths"], result["query"]) == (".", "todo")


def test_case_sensitive(files: Any, tree: Path) -> None:
    result = ok(files.call("SearchText", paths=".", query="TODO", case_sensitive=True))
    assert lines_of(result) == [("notes.txt", 1, "TODO: first")]


def test_regex_with_line_anchors(files: Any, tree: Path) -> None:
    result = ok(files.call("SearchRegex", paths="src", pattern=r"^def \w+\(self"))
    assert lines_of(result) == [("src/b.py", 1, "def beta(self):"),
                                ("src/b.py", 3, "def gamma(self): pass")]
    upper = ok(files.call("SearchRegex", paths="src", pattern=r"def [A-Z]"))
    assert lines_of(upper) == [("src/a.py", 3, "def Alpha():")]
    assert ok(files.call("SearchRegex", paths="src", pattern=r"def [A-Z]",
                         case_sensitive=False))["count"] == 3


def test_one_result_per_line_and_regex_at_line_ends(files: Any, ws: Path) -> None:
    (ws / "r.txt").write_text("aaa\n\nb\n")
    assert ok(files.call("SearchText", paths="r.txt", query="a"))["count"] == 1
    empty = ok(files.call("SearchRegex", paths="r.txt", pattern="^$"))
    assert lines_of(empty) == [("r.txt", 2, "")]
    every = ok(files.call("SearchRegex", paths="r.txt", pattern="^"))
    assert [m["line"] for m in every["matches"]] == [1, 2, 3]


def test_literal_special_characters_are_not_regex(files: Any, ws: Path) -> None:
    (ws / "s.txt").write_text("a.b\naxb\n(x)\n")
    assert ok(files.call("SearchText", paths=".", query="a.b"))["count"] == 1
    assert ok(files.call("SearchText", paths=".", query="(x)"))["count"] == 1


def test_unicode_case_folding(files: Any, ws: Path) -> None:
    (ws / "u.txt").write_text("Stra\u00dfe \u00c9T\u00c9\n\u00e9t\u00e9\n")
    result = ok(files.call("SearchText", paths=".", query="\u00e9t\u00e9",
                           case_sensitive=False))
    assert [m["line"] for m in result["matches"]] == [1, 2]


def test_crlf_and_undecodable_lines(files: Any, ws: Path) -> None:
    (ws / "w.txt").write_bytes(b"hello\r\ncaf\xe9 hello\r\n")
    result = ok(files.call("SearchText", paths=".", query="hello"))
    assert lines_of(result) == [("w.txt", 1, "hello"), ("w.txt", 2, "caf\ufffd hello")]


def test_count_only(files: Any, tree: Path) -> None:
    result = ok(files.call("SearchText", paths=".", query="def", count_only=True))
    assert result["counts"] == [{"path": "src/a.py", "count": 1},
                                {"path": "src/b.py", "count": 2}]
    assert result["total_matches"] == 3 and result["files_matched"] == 2
    assert "matches" not in result


def test_max_results_stops_the_search(files: Any, tree: Path) -> None:
    result = ok(files.call("SearchText", paths=".", query="e", max_results=2))
    assert result["count"] == 2 and result["truncated"] is True
    assert "max_results" in result["note"]


def test_max_depth(files: Any, tree: Path) -> None:
    top = ok(files.call("SearchText", paths=".", query="def", max_depth=1))
    assert top["count"] == 0
    deeper = ok(files.call("SearchText", paths=".", query="def", max_depth=2))
    assert deeper["count"] == 3


def test_gitignored_files_on_request(files: Any, tree: Path) -> None:
    result = ok(files.call("SearchText", paths=".", query="hidden by", respect_gitignore=False))
    assert lines_of(result) == [("ignored.log", 1, "TODO: hidden by gitignore")]
    never = ok(files.call("SearchText", paths=".", query="never searched",
                          respect_gitignore=False))
    assert never["count"] == 0


def test_explicit_files_and_binary_report(files: Any, tree: Path) -> None:
    result = ok(files.call("SearchText", paths=["notes.txt", "blob.bin"], query="todo",
                           case_sensitive=False))
    assert result["count"] == 2
    assert result["skipped_binary"] == ["blob.bin"]
    # an explicitly named ignored file is searched
    named = ok(files.call("SearchText", paths="ignored.log", query="TODO"))
    assert named["count"] == 1


def test_binary_detected_after_a_match(files: Any, ws: Path) -> None:
    (ws / "late.bin").write_bytes(b"needle\n" + b"x" * 20_000 + b"\x00")
    result = ok(files.call("SearchText", paths=".", query="needle"))
    assert result["count"] == 0 and result["binary_files_skipped"] == 1


def test_long_lines_are_clipped(files: Any, ws: Path) -> None:
    (ws / "min.js").write_text("x" * 5000 + "needle" + "y" * 5000 + "\n")
    text = ok(files.call("SearchText", paths=".", query="needle"))["matches"][0]["text"]
    assert len(text) < 700 and "line cut" in text


def test_symlinks_are_not_followed(files: Any, tree: Path, outside: Path) -> None:
    (tree / "src" / "out").symlink_to(outside)
    (tree / "src" / "secret_link.txt").symlink_to(outside / "secret.txt")
    result = ok(files.call("SearchText", paths=".", query="OUTSIDE-SECRET"))
    assert result["count"] == 0


def test_errors(files: Any, tree: Path, outside: Path) -> None:
    fails(files.call("SearchText", paths=".", query=""), "invalid_arguments")
    fails(files.call("SearchRegex", paths=".", pattern="("), "invalid_regex")
    fails(files.call("SearchRegex", paths=".", pattern=""), "invalid_arguments")
    fails(files.call("SearchText", paths=".", query="x", max_results=0), "invalid_arguments")
    fails(files.call("SearchText", paths=".", query="x", max_depth=-1), "invalid_arguments")
    fails(files.call("SearchText", paths=".", query="x", max_depth=0), "invalid_arguments")
    fails(files.call("SearchText", paths="missing", query="x"), "not_found")
    result = fails(files.call("SearchText", paths=str(outside), query="OUTSIDE"),
                   "outside_workspace")
    assert "OUTSIDE-SECRET" not in str(result)
    fails(files.call("SearchText", paths="../outside", query="OUTSIDE"), "outside_workspace")
    fails(files.call("SearchText", query="x"), "invalid_arguments")


def test_same_matches_as_a_line_by_line_reference(files: Any, ws: Path) -> None:
    import random
    import re

    rng = random.Random(3)
    words = ["alpha", "beta", "Gamma", "delta", "needle", "NEEDLE", "x", "", "\u00e9t\u00e9"]
    for n in range(20):
        text = "\n".join(" ".join(rng.choice(words) for _ in range(rng.randint(0, 6)))
                         for _ in range(rng.randint(0, 40)))
        (ws / f"f{n:02}.txt").write_text(text + rng.choice(["", "\n"]))
    cases = [("needle", False, True), ("needle", False, False), (r"\bbeta\s+\w", True, True),
             ("^x", True, False), ("a$", True, True)]
    for query, regex, case in cases:
        expected = []
        flags = 0 if case else re.IGNORECASE
        pattern = re.compile(query if regex else re.escape(query), flags)
        for n in range(20):
            for number, line in enumerate((ws / f"f{n:02}.txt").read_text().splitlines(), 1):
                if pattern.search(line):
                    expected.append((f"f{n:02}.txt", number, line))
        result = ok(files.call("SearchRegex" if regex else "SearchText", paths=".",
                               **{"pattern" if regex else "query": query},
                               case_sensitive=case, max_results=10_000))
        assert lines_of(result) == expected, query


def test_a_backtracking_regex_is_stopped_in_time(files: Any, ws: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import janito_files._search as search
    from janito_files import _steps

    monkeypatch.setattr(search, "REGEX_TIME_LIMIT", 0.3)
    (ws / "a.txt").write_text("a" * 40 + "!\n")
    for query in ["^(a+)+$", "(a|aa)+$", r"^(\w+\s?)+$"]:
        result = files.call("SearchRegex", paths=".", pattern=query)
        assert isinstance(result["success"], bool), result
    if _steps.automaton_lines is not None:
        # an ASCII line is answered by the pattern's table, which never backtracks
        assert ok(files.call("SearchRegex", paths=".", pattern="(a|aa)+$"))["count"] == 0
    # the engine answers a line past ASCII, and the time limit stops it
    (ws / "a.txt").write_text("a" * 40 + "\u00e9!\n")
    slow = fails(files.call("SearchRegex", paths=".", pattern="(a|aa)+$"),
                 "regex_timeout")
    assert "too slow" in slow["error"] and slow["pattern"] == "(a|aa)+$"
    # the time limit is per search: an ordinary regex afterwards runs normally
    assert ok(files.call("SearchRegex", paths=".", pattern="^a+\u00e9!$"))["count"] == 1


def test_a_regex_too_large_once_expanded_is_refused(files: Any, ws: Path) -> None:
    (ws / "a.txt").write_text("aaa\n")
    for query in ["(?:a{65535}){65535}", "((a{1000}){1000})", "(?:[ab]{400,}){400}",
                  "(?>(?:a{400}){400})", "(?=(?:b|(?:a{400}){400}))"]:
        result = fails(files.call("SearchRegex", paths=".", pattern=query),
                       "invalid_regex")
        if query.startswith("(?>") and sys.version_info < (3, 11):
            # atomic groups are Python 3.11 syntax: on 3.10 the pattern is simply invalid
            assert "not a valid regular expression" in result["error"]
            continue
        assert "repetition counts" in result["error"]
    # open ranges and large counts that are not nested are fine
    for query in ["(?:a{1,3000}){1,3000}", "a{3000}|a", "(?:a{300}){300}|a"]:
        assert ok(files.call("SearchRegex", paths=".", pattern=query))["count"] == 1


def test_regex_features_of_python_re(files: Any, ws: Path) -> None:
    (ws / "r.txt").write_text("key = value\nx=1\n# key = no\n\u00c9T\u00c9 \u00e9t\u00e9\n")
    named = ok(files.call("SearchRegex", paths=".", pattern=r"^(?P<k>\w+)\s*=\s*(?P=k)?\w"))
    assert [m["line"] for m in named["matches"]] == [1, 2]
    behind = ok(files.call("SearchRegex", paths=".", pattern=r"(?<!# )key"))
    assert [m["line"] for m in behind["matches"]] == [1]
    folded = ok(files.call("SearchRegex", paths=".", pattern=r"\b\u00e9t\u00e9\b"))
    assert folded["count"] == 1
    verbose = ok(files.call("SearchRegex", paths=".", pattern="(?x) ^ key \\s* = # a comment"))
    assert [m["line"] for m in verbose["matches"]] == [1]
    dense = ok(files.call("SearchRegex", paths=".", pattern=r"[a-z\s]",
                          count_only=True))
    assert dense["total_matches"] == 4
    # a match that runs over a line break counts only where the line alone matches
    spanning = ok(files.call("SearchRegex", paths=".", pattern=r"value\nx|=1$|no\s"))
    assert [m["line"] for m in spanning["matches"]] == [2]
    fails(files.call("SearchRegex", paths=".", pattern=r"\p{L}"), "invalid_regex")


def test_line_edges_without_multiline_are_the_files_edges(files: Any, ws: Path) -> None:
    # "(?-m:$)" holds only at a file's end: matched against only the lines holding
    # "(self", it held at the last of them, and a line that is not the file's last matched
    (ws / "a.py").write_text("x = f(self\ny = g(self\nz = 1\n")
    (ws / "b.py").write_text("x = f(self\ny = g(self")
    found = ok(files.call("SearchRegex", paths=".", pattern=r"\(self(?-m:$)"))
    assert lines_of(found) == [("b.py", 2, "y = g(self")]
    first = ok(files.call("SearchRegex", paths=".", pattern=r"(?-m:^)y = g\(self"))
    assert first["count"] == 0


def test_a_folders_files_searched_together_find_what_each_finds_alone(files: Any,
                                                                     ws: Path) -> None:
    # SearchRegex looks for the first match in a batch's candidate lines joined, and does
    # not match the files before it one by one
    for name in "abcdefg":
        (ws / f"{name}.py").write_text(f"def {name}(self):\n    return self\n")
    (ws / "d.py").write_text("def d(self, bar):\n    return self\n")
    (ws / "g.py").write_text("x = 1\ndef g(self, bar):\n")
    found = ok(files.call("SearchRegex", paths=".", pattern=r"\(self, bar\):$"))
    assert lines_of(found) == [("d.py", 1, "def d(self, bar):"), ("g.py", 2, "def g(self, bar):")]
    assert found["files_searched"] == 7
    counted = ok(files.call("SearchRegex", paths=".", pattern=r"\(self, bar\):$",
                            count_only=True))
    assert [row["path"] for row in counted["counts"]] == ["d.py", "g.py"]
    assert ok(files.call("SearchRegex", paths=".", pattern=r"\(self, qux\)"))["count"] == 0
    # "$" without MULTILINE holds only at a text's very end: joined, it would hold at the
    # last file's alone, so such a pattern is matched a file at a time
    for name in "abcdefg":
        (ws / f"{name}.py").write_text(f"x = 1\ny = {name}(self)")  # no line feed at the end
    alone = ok(files.call("SearchRegex", paths=".", pattern=r"\(self\)(?-m:$)"))
    assert [m["path"] for m in alone["matches"]] == [f"{name}.py" for name in "abcdefg"]


@pytest.mark.skipif(sys.version_info < (3, 11),
                    reason="possessive repeats and atomic groups came with Python 3.11")
@pytest.mark.parametrize("pattern", [r"a\s*+$", r"a(?>\s*)$"])
def test_a_pattern_that_commits_is_searched_in_each_line_alone(files: Any, ws: Path,
                                                              pattern: str) -> None:
    # a possessive repeat or an atomic group takes what it can and gives nothing back:
    # scanning on from "a", "\s*+" would take the line feed and the next line's spaces and
    # fail at "b", though the line "a  " alone matches, as grep says; so it would with
    # the next file's lines after it, had a folder's files been searched joined
    (ws / "a.py").write_text("x = 1\na  ")
    (ws / "b.py").write_text("  ba\n")
    (ws / "c.py").write_text("a  \n  b\n")
    found = ok(files.call("SearchRegex", paths=".", pattern=pattern))
    assert lines_of(found) == [("a.py", 2, "a  "), ("b.py", 1, "  ba"), ("c.py", 1, "a  ")]
    named = ok(files.call("SearchRegex", paths="c.py", pattern=pattern))
    assert lines_of(named) == [("c.py", 1, "a  ")]
    counted = ok(files.call("SearchRegex", paths=".", pattern=pattern, count_only=True))
    assert counted["total_matches"] == 3


@pytest.mark.parametrize(("pattern", "position"), [
    (r"\d+(?i)k", 3), (r"\A(?i)", 2), (r"(?:ab)+(?i)", 7), (" (?=o)(?i)", 6), ("a(?x) b", 1),
])
def test_global_flags_past_the_start_are_refused_on_every_python(
        files: Any, ws: Path, pattern: str, position: int) -> None:
    """Python 3.10 only warns of them and applies them to the whole pattern; 3.11 and later
    refuse them. A model gets the same answer whichever runs janito."""
    (ws / "a.txt").write_text("12K\nab\n")
    result = fails(files.call("SearchRegex", paths=".", pattern=pattern), "invalid_regex")
    assert (f"global flags not at the start of the expression at position {position}"
            in result["error"]), result["error"]
    # where they belong, they work
    assert ok(files.call("SearchRegex", paths=".", pattern=r"(?i)\d+k"))["count"] == 1


def test_a_query_with_a_line_break_is_refused_not_matched_across_lines(
        files: Any, ws: Path) -> None:
    # "x a" and "b y" do not hold "a\nb"; finding it across the break named line 1
    (ws / "a.txt").write_text("x a\nb y\n")
    for count_only in (False, True):
        refused = fails(files.call("SearchText", paths=".", query="a\nb",
                                   count_only=count_only), "invalid_arguments")
        assert "line break" in refused["error"] and refused["query"] == "a\nb"
    assert ok(files.call("SearchText", paths=".", query="a\r"))["count"] == 0


def test_files_matched_counts_files_not_lines(files: Any, ws: Path) -> None:
    (ws / "a.txt").write_text("needle\nneedle\n")
    (ws / "b.txt").write_text("hay\nneedle\n")
    (ws / "c.txt").write_text("hay\n")
    result = ok(files.call("SearchText", paths=".", query="needle"))
    assert (result["count"], result["files_matched"], result["files_searched"]) == (3, 2, 3)
    capped = ok(files.call("SearchText", paths=".", query="needle", max_results=1))
    assert (capped["count"], capped["files_matched"], capped["truncated"]) == (1, 1, True)


def test_files_of_every_size_around_the_sniffed_head(files: Any, ws: Path) -> None:
    from janito_files._common import SNIFF_BYTES

    for size in (SNIFF_BYTES - 1, SNIFF_BYTES, SNIFF_BYTES + 1, 5 * SNIFF_BYTES + 3):
        body = b"x\n" * (size // 2) + b"y" * (size % 2)
        (ws / f"s{size}.txt").write_bytes(body[:-7] + b"needle\n")
    result = ok(files.call("SearchText", paths=".", query="needle"))
    expected = sorted((f"s{size}.txt", (size - 7) // 2 + 1)
                      for size in (SNIFF_BYTES - 1, SNIFF_BYTES, SNIFF_BYTES + 1,
                                   5 * SNIFF_BYTES + 3))
    assert sorted((m["path"], m["line"]) for m in result["matches"]) == expected


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs are POSIX")
def test_a_fifo_is_reported_and_never_blocks_the_search(files: Any, ws: Path) -> None:
    import os

    (ws / "a.txt").write_text("needle\n")
    os.mkfifo(ws / "pipe")
    result = ok(files.call("SearchText", paths=".", query="needle"))
    assert result["count"] == 1 and result["files_searched"] == 1
    named = ok(files.call("SearchText", paths=["pipe", "a.txt"], query="needle"))
    assert named["count"] == 1
    assert named["unreadable"] == ["pipe: the path is not a regular file (a FIFO, socket or "
                                   "device)"], named


def test_a_file_over_the_size_limit_is_named_not_searched(files: Any, ws: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from janito_files import _search

    monkeypatch.setattr(_search, "MAX_FILE_BYTES", 100)
    (ws / "big.txt").write_text("needle\n" * 50)
    (ws / "small.txt").write_text("needle\n")
    result = ok(files.call("SearchText", paths=".", query="needle"))
    assert result["count"] == 1 and result["skipped_large"] == ["big.txt"]


def test_a_folder_past_path_max_is_searched_by_descriptor(files: Any, ws: Path) -> None:
    """A folder whose absolute path is past PATH_MAX cannot be opened by path, even by root;
    the walk opens each folder relative to its parent, so it is searched like any other."""
    import os

    (ws / "a.txt").write_text("needle\n")
    name = "d" * 200
    fd = os.open(ws, os.O_RDONLY)
    try:
        depth = 0
        while len(str(ws)) + depth * (len(name) + 1) <= 4200:
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
            depth += 1
        deep = os.open("deep.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(deep, b"a needle deep down\n")
        os.close(deep)
    finally:
        os.close(fd)
    result = ok(files.call("SearchText", paths=".", query="needle"))
    assert result["count"] == 2 and "unreadable" not in result, result
    deep_match = result["matches"][-1]
    assert deep_match["path"] == "/".join([name] * depth + ["deep.txt"])
    assert str(ws) not in deep_match["path"]
