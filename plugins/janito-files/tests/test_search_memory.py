"""SearchText and SearchRegex hold a bounded part of any file: a file larger than one
block is searched block by block, with the answers of a search of the whole file, and the
peak memory of a process running searches over a 64 MiB file stays within MEMORY_BOUND a
search, however many run at once."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from files_helpers import ok
from janito_files import _search
from janito_files._common import clip_line

BLOCK = 256
LINE = 1024
SNIFF = 64


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks, long lines and the sniffed head a few hundred bytes long, so that small
    files cross every boundary the search has."""
    monkeypatch.setattr(_search, "BLOCK_BYTES", BLOCK)
    monkeypatch.setattr(_search, "LINE_BYTES", LINE)
    monkeypatch.setattr(_search, "SNIFF_BYTES", SNIFF)


def _random_file(rng: random.Random) -> bytes:
    words = [b"alpha", b"needle", b"NEEDLE", b"nee", b"dle", b"x", b"\xc3\xa9t\xc3\xa9",
             b"\xff", b"caf\xe9", b"\xf0\x9f\x98\x80", b"\r", b" "]
    lines = []
    for _ in range(rng.randint(1, 30)):
        kind = rng.random()
        # short lines; lines clipped when shown (over LINE_CHARS characters) but held
        # whole; lines longer than LINE, fed in parts or skipped by a regular expression
        length = (rng.randint(0, 80) if kind < 0.7 else rng.randint(600, LINE) if kind < 0.85
                  else rng.randint(LINE + 1, 4 * LINE))
        line = b""
        while len(line) < length:
            line += rng.choice(words)
        line = line[:length] if rng.random() < 0.5 else line
        lines.append(line + (b"\r" if rng.random() < 0.2 else b""))
    data = b"\n".join(lines) + (b"\n" if rng.random() < 0.7 else b"")
    if rng.random() < 0.1:  # a NUL byte past the sniffed head: binary only if it matches
        at = rng.randint(SNIFF, max(SNIFF, len(data)))
        data = data[:at] + b"\x00" + data[at:]
    return data or b"x"


def _expected(files: dict[str, bytes], matches: Callable[[bytes, str, int], bool],
              regex: bool) -> dict[str, Any]:
    """What a search of each file line by line finds (``matches(raw, text, number)``): a
    line longer than LINE is skipped by a regular expression; a NUL byte makes a file that
    matched binary."""
    found: list[tuple[str, int, str]] = []
    counts: dict[str, int] = {}
    skipped: list[str] = []
    binary = 0
    for name in sorted(files):
        data = files[name]
        if b"\x00" in data[:SNIFF]:
            binary += 1
            continue
        lines = data.split(b"\n")
        if data.endswith(b"\n"):
            lines.pop()
        here: list[tuple[str, int, str]] = []
        long_here: list[str] = []
        for number, raw in enumerate(lines, 1):
            if regex and len(raw) > LINE:
                long_here.append(f"{name}:{number}")
                continue
            text = raw.decode("utf-8", "replace")
            if matches(raw, text, number):
                here.append((name, number, clip_line(text.rstrip("\r"))))
        if here and b"\x00" in data:
            binary += 1
            continue
        found.extend(here)
        skipped.extend(long_here)
        if here:
            counts[name] = len(here)
    return {"found": found, "counts": counts, "skipped": skipped, "binary": binary}


def _compare(files: Any, expected: dict[str, Any], tool: str, term: dict[str, Any]) -> None:
    listed = ok(files.call(tool, paths=".", max_results=10_000, **term))
    assert [(m["path"], m["line"], m["text"]) for m in listed["matches"]] == \
        expected["found"], term
    assert listed.get("skipped_long_lines", []) == expected["skipped"], term
    assert listed.get("binary_files_skipped", 0) == expected["binary"], term
    counted = ok(files.call(tool, paths=".", count_only=True, **term))
    assert {c["path"]: c["count"] for c in counted["counts"]} == expected["counts"], term
    assert counted["total_matches"] == len(expected["found"]), term
    if len(expected["found"]) > 3:
        first = ok(files.call(tool, paths=".", max_results=3, **term))
        assert [(m["path"], m["line"], m["text"]) for m in first["matches"]] == \
            expected["found"][:3]
        assert first["truncated"] is True


@pytest.mark.usefixtures("small_blocks")
def test_a_file_read_block_by_block_gives_the_answers_of_a_line_by_line_search(
        files: Any, ws: Path) -> None:
    rng = random.Random(9)
    seen = {"found": 0, "skipped": 0, "binary": 0, "file start": 0}
    for _ in range(6):
        for old in ws.iterdir():
            old.unlink()
        contents = {f"f{n:02}.txt": _random_file(rng) for n in range(12)}
        for name, data in contents.items():
            (ws / name).write_bytes(data)
        for needle in (b"needle", b"dle\r", b"e\xc3\xa9", b"caf"):
            query = needle.decode("utf-8", "surrogateescape")
            expected = _expected(contents, lambda raw, _text, _line, n=needle: n in raw,
                                 False)
            _compare(files, expected, "SearchText", {"query": query})
        folded = _expected(contents, lambda raw, _text, _line: b"needle" in raw.lower(),
                           False)
        _compare(files, folded, "SearchText", {"query": "NeEdLe", "case_sensitive": False})
        for pattern in (r"ne+dle", r"^nee", r"dle$", r"\Aalpha", r"x\s*\r$", r"\u00e9t"):
            compiled = re.compile(pattern, re.MULTILINE)
            # \A is the start of the file, where a line by line search sees each line's
            start = pattern.startswith("\\A")
            expected = _expected(
                contents, lambda _raw, text, line, c=compiled, s=start:
                c.search(text) is not None and (line == 1 or not s), True)
            _compare(files, expected, "SearchRegex", {"pattern": pattern})
            seen["found"] += len(expected["found"])
            seen["skipped"] += len(expected["skipped"])
            seen["binary"] += expected["binary"]
            seen["file start"] += len(expected["found"]) if start else 0
    assert all(seen.values()), seen  # every case was met, not just searches finding nothing


@pytest.mark.usefixtures("small_blocks")
def test_a_needle_cut_by_the_end_of_each_part_of_a_long_line_is_found(
        files: Any, ws: Path) -> None:
    # The long line starts at byte 6; it is fed in parts that end at every block's end
    # from the fourth on (1024, 1280, ...): the needle starts on either side of them.
    for start in [*range(4 * BLOCK - 8, 4 * BLOCK + 2), *range(5 * BLOCK - 8, 5 * BLOCK + 2)]:
        line = b"x" * (start - 6) + b"needle" + b"y" * (3 * LINE)
        (ws / "long.txt").write_bytes(b"first\n" + line + b"\r\nlast needle\n")
        result = ok(files.call("SearchText", paths="long.txt", query="needle"))
        assert [(m["line"], m["text"]) for m in result["matches"]] == [
            (2, clip_line(line.decode())), (3, "last needle")], start
        counted = ok(files.call("SearchText", paths="long.txt", query="needle",
                                count_only=True))
        assert counted["total_matches"] == 2, start
        regex = ok(files.call("SearchRegex", paths="long.txt", pattern="needle"))
        assert regex["skipped_long_lines"] == ["long.txt:2"] and regex["count"] == 1


CHILD = r"""
import json, resource, sys, threading
from janito_core import Registry
from janito_core.dispatch import call_tool
from janito_core.workspace import Workspace
import janito_files._search as search

search.REGEX_TIME_LIMIT = None  # the figure measured is memory: let every search finish
workspace, name, arguments, calls = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4])
registry = Registry(workspace=Workspace(workspace), autoload=("files",), reports="off")
call_tool("ListFiles", {"path": "."}, registry=registry)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
results = []
threads = [threading.Thread(target=lambda: results.append(call_tool(name, arguments,
                                                                       registry=registry)))
           for _ in range(calls)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"grown_kib": after - before, "results": results}))
"""


SHORT = b"match 0000\n"
WIDE = b"match " + b"w" * 1017 + b"\n"


@pytest.fixture(scope="module")
def big_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace holding two 64 MiB files whose every line matches: short.txt of 11-byte
    lines, wide.txt of 1 KiB lines. Written a little at a time, since a child process
    starts with its parent's peak memory (ru_maxrss survives exec)."""
    folder = tmp_path_factory.mktemp("big")
    for name, line in (("short.txt", SHORT), ("wide.txt", WIDE)):
        chunk = line * (65536 // len(line))
        with open(folder / name, "wb") as handle:
            for _ in range(_search.MAX_FILE_BYTES // len(chunk)):
                handle.write(chunk)
    return folder


def _lines_in(name: str) -> int:
    line = SHORT if name == "short.txt" else WIDE
    return (_search.MAX_FILE_BYTES // len(line * (65536 // len(line)))) * (65536 // len(line))


@pytest.mark.parametrize("calls", [1, 6])
@pytest.mark.parametrize(("name", "arguments"), [
    # the regular expression counts the 64 Ki lines of wide.txt: its 6 Mi short lines
    # take seconds of matching each, which is time, not memory
    ("SearchRegex", {"paths": "wide.txt", "pattern": "ma.ch", "count_only": True}),
    ("SearchText", {"paths": "short.txt", "query": "MATCH", "case_sensitive": False,
                    "count_only": True}),
    ("SearchRegex", {"paths": ".", "pattern": "^ma.ch", "max_results": 10_000}),
])
def test_the_memory_of_searches_over_a_64_mib_file_is_bounded(
        big_files: Path, name: str, arguments: dict[str, Any], calls: int) -> None:
    child = subprocess.run([sys.executable, "-c", CHILD, str(big_files), name,
                            json.dumps(arguments), str(calls)],
                           capture_output=True, text=True, check=False)
    assert child.returncode == 0, child.stderr[-2000:]
    measured = json.loads(child.stdout)
    assert len(measured["results"]) == calls
    for result in measured["results"]:
        assert result["success"] is True, result
        if arguments.get("count_only"):
            assert result["total_matches"] == _lines_in(arguments["paths"]), result
        else:
            assert result["count"] == 10_000 and result["truncated"] is True
    # ru_maxrss is in KiB on Linux
    assert measured["grown_kib"] * 1024 <= calls * _search.MEMORY_BOUND, measured["grown_kib"]
