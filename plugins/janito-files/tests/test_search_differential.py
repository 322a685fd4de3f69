"""SearchText and SearchRegex give, over 20,000 small random trees and queries, exactly the
result they gave when they read and searched one file at a time on the calling thread.

Each case is a fresh random tree (text, CRLF, binary and non-UTF-8 files, files past the
block and size limits, ignore files, links in and out) and a random call of one of the
tools (literal or pattern, case, count_only, max_results, max_depth, exclude, paths that
name files). The same call runs twice: as the tool searches now (batches of one folder's
files, compiled where the wheel was built with a compiler, on worker threads in a tenth of
the cases) and through :func:`one_by_one`, the loop the tools ran before, which reads
each file on its own and matches a regular expression against the whole of it with the
engine alone (no table, janito_files._automaton). The two results must be equal, key for
key.

Blocks, the sniffed head, the size limit and the batches are made a few hundred bytes or
files small, so small trees cross every boundary. The trees live in a tmpfs folder where
the machine has one (``/dev/shm``), else in the temporary folder.
"""

from __future__ import annotations

import os
import random
from typing import Any

import pytest
from files_helpers import random_ignore_file
from janito_files import _batches, _search
from janito_files._search import _Scan
from janito_files._steps import read_searchable_at_py
from janito_files._walk import Exclude, walk

from janito_core import Registry, Workspace
from janito_core.plugins import STDERR_PLUGIN
from janito_core.workspace import open_regular_at

CASES = 20_000
CHUNKS = 8
THREADED = 0.1
"""The share of cases run with worker threads from the first batch on (starting them is
most of such a case's time)."""
PATTERNS = 80
"""Distinct patterns a chunk draws from, so that compiling them (the most of a case's time
otherwise) is paid once each: the trees make the variety."""

WORDS = ["def", "foo", "Foo", "FOO", "bar", "self", "(self", "x", "é", "ab", "abab", " ",
         "\t", "k", "K", "\u212a", "import", "1", "42", "z"]
LITERALS = ["def", "foo", "Foo", "o", "self", "(self", "é", "ab", "aba", " x", "K", "import",
            "42", "qq_absent", "de", "f b", "\r"]
PIECES = ["def", "foo", "[a-z]+", r"\d+", r"\(self", "^", "$", r"\b", ".", ".*", "x?",
          "(?=o)", "(?<=f)", "(?!b)", r"\A", r"\Z", "(foo|bar)", "a|b", "[Ff]oo", "é",
          r"\s", "(?:ab)+", "o{2}", r"\w+", "(?i)", "self", "import", " ", "k",
          # what a table reads differently from the engine, if it were wrong
          r"\B", "[^x]", r"\W", "(?a)", "(o|)+", "x{0,2}", "(?=\n)",
          # what may not search several files' lines joined (janito_files._search.joinable)
          "(?-m:$)", "(?s:.)", "(?>o+)", "o++", r"\s*+$", r"(?>\s*)$"]


def _content(rng: random.Random) -> bytes:
    kind = rng.random()
    lines = []
    for _ in range(rng.randrange(0, 12)):
        words = [rng.choice(WORDS) for _ in range(rng.randrange(0, 6))]
        lines.append(" ".join(words).encode())
    ending = b"\r\n" if rng.random() < 0.2 else b"\n"
    data = ending.join(lines)
    if rng.random() < 0.5:
        data += ending
    if kind < 0.06:
        data = b"\x00" + data  # binary from its first bytes
    elif kind < 0.12:
        data = data + b"\n" + b"." * rng.randrange(0, 300) + b"\x00def foo\n"  # a late NUL
    elif kind < 0.18:
        data += b"\xff\xfe foo \xc3(\n"  # not UTF-8
    elif kind < 0.26:
        # past the block (and now and then past the size limit), or one long line
        line = b"foo bar def " * rng.randrange(10, 120)
        data += line if rng.random() < 0.5 else b"\n".join([line[:90]] * 30)
    return data


def _tree(root: str, rng: random.Random, depth: int = 0) -> None:
    os.mkdir(root)
    for index in range(rng.randrange(0, 6 if depth < 2 else 3)):
        name = rng.choice(["a", "b", "c", "sub", "keep", "x y", "é"]) + str(index)
        name += rng.choice(["", ".py", ".log", ".txt"])
        path = os.path.join(root, name)
        roll = rng.random()
        if roll < 0.2 and depth < 3:
            _tree(path, rng, depth + 1)
        elif roll < 0.25:
            os.symlink(rng.choice(["a0", "../a0", "/etc/hostname", "missing", "sub1", "."]),
                       path)
        else:
            with open(path, "wb") as handle:
                handle.write(_content(rng))
    random_ignore_file(root, rng, 0.15, 0.22)


def _pattern(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) for _ in range(rng.randrange(1, 4)))


def _call(rng: random.Random, case: str, patterns: list[str]) -> tuple[str, dict[str, Any]]:
    regex = rng.random() < 0.5
    arguments: dict[str, Any] = {"paths": case}
    if rng.random() < 0.1:
        arguments["paths"] = [case, f"{case}/a0", f"{case}/b1.py"]
    if regex:
        arguments["pattern"] = rng.choice(patterns)
    else:
        arguments["query"] = rng.choice(LITERALS)
    arguments["case_sensitive"] = rng.random() < 0.7
    arguments["count_only"] = rng.random() < 0.25
    arguments["max_results"] = rng.choice([None, 100, 1, 2, 3, 7])
    arguments["max_depth"] = rng.choice([None, None, 1, 2])
    arguments["respect_gitignore"] = rng.random() < 0.8
    arguments["exclude"] = rng.choice([None, None, "*.log", "sub*", ["x y*", "*.txt"]])
    return ("SearchRegex" if regex else "SearchText"), arguments


def one_by_one(self: _Scan, shown: str, limit: int | None, respect_gitignore: bool,
               exclude: Exclude | None) -> None:
    """The loop the searches ran before batches: each file of the walk read on its own
    (``read_searchable_at``) and searched whole (``_Scan.file``), or block by block."""
    for entry in walk(self.tool, shown, max_depth=limit, gitignore=respect_gitignore,
                      errors=self.unreadable, exclude=exclude):
        if entry.kind == "file":
            try:
                data = read_searchable_at_py(entry.dir_fd, entry.name, _search.SNIFF_BYTES,
                                             min(_search.BLOCK_BYTES, _search.MAX_FILE_BYTES))
                if data is None:
                    fd, info = open_regular_at(entry.dir_fd, entry.name)
                    self.stream(fd, info.st_size, entry.relative)
                else:
                    self.file(data, entry.relative)
            except OSError as exc:
                self.unreadable.append(f"{_search.safe_text(entry.relative)}: "
                                       f"{exc.strerror or exc}")
                continue
            if self.full:
                break


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_batched_search_gives_the_results_of_the_file_by_file_search(
        chunk: int, scratch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_search, "BLOCK_BYTES", 256)
    monkeypatch.setattr(_search, "LINE_BYTES", 1024)
    monkeypatch.setattr(_search, "SNIFF_BYTES", 64)
    monkeypatch.setattr(_search, "MAX_FILE_BYTES", 1200)
    monkeypatch.setattr(_search, "BATCH_FILES", 3)
    registry = Registry(workspace=Workspace(scratch), autoload=("files",), allowed=None)
    tools = registry.tools()
    manager = registry.plugins.manager  # no progress lines: 40,000 calls would print them
    if manager.get_plugin(STDERR_PLUGIN) is not None:
        manager.unregister(name=STDERR_PLUGIN)
    batched = _Scan.folder
    automaton_lines = _search.automaton_lines
    rng = random.Random(f"differential-{chunk}")
    patterns = [_pattern(rng) for _ in range(PATTERNS)]
    for number in range(CASES // CHUNKS):
        case = f"c{number}"
        _tree(os.path.join(scratch, case), rng)
        tool, arguments = _call(rng, case, patterns)
        monkeypatch.setattr(_search, "BATCH_BYTES", rng.choice([1, 40, 1 << 20]))
        monkeypatch.setattr(_batches, "THREADS_AFTER", 0 if rng.random() < THREADED else 2)
        now = tools[tool](**arguments)
        monkeypatch.setattr(_Scan, "folder", one_by_one)
        # and each regular expression's lines found by the engine alone, not its table
        monkeypatch.setattr(_search, "automaton_lines", None)
        before = tools[tool](**arguments)
        monkeypatch.setattr(_Scan, "folder", batched)
        monkeypatch.setattr(_search, "automaton_lines", automaton_lines)
        assert now == before, (chunk, number, tool, arguments)
