"""The compiled per-file steps of a search (janito_files._speedups) against their Python
twins in janito_files._steps: same answers, same errors, on random and hostile input."""

from __future__ import annotations

import errno
import os
import random
import shutil
import stat
import sysconfig
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import janito_files
import pytest
from janito_files import _steps

SNIFF = 64


def _from_source_tree() -> bool:
    return Path(janito_files.__file__).resolve().parent.parent.joinpath("hatch_build.py").exists()


def test_an_installed_wheel_built_with_a_compiler_carries_the_compiled_steps() -> None:
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    headers = Path(sysconfig.get_paths()["include"], "Python.h")
    if _from_source_tree() or shutil.which(compiler) is None or not headers.is_file():
        pytest.skip("an editable install, no C compiler or no Python headers "
                    f"({headers}): the Python steps run")
    from janito_files import _speedups

    assert _steps.literal_lines is _speedups.literal_lines
    assert _steps.read_searchable_at is _speedups.read_searchable_at
    assert _steps.scan_files is _speedups.scan_files
    assert _steps.Searcher is _speedups.Searcher
    assert _steps.list_folder is _speedups.list_folder
    assert _steps.pick_plain is _speedups.pick_plain
    assert _steps.prefixed is _speedups.prefixed
    assert _steps.found_rows is _speedups.found_rows
    assert _steps.automaton_lines is _speedups.automaton_lines


def outcome(function: Callable[..., Any], *args: Any) -> tuple[Any, ...]:
    """What a call gave, comparable between the two implementations."""
    try:
        return ("value", function(*args))
    except OSError as exc:
        return ("OSError", exc.errno, exc.strerror)
    except (ValueError, TypeError) as exc:
        return (type(exc).__name__,)


# ------------------------------------------------------------------ the line loop


def test_literal_lines_agrees_with_the_python_loop_on_random_input(speedups: Any) -> None:
    rng = random.Random(20261202)
    alphabet = [b"a", b"b", b"A", b"\n", b"\r", b"\xc3\xa9", b"\xff", b" "]
    for _ in range(4000):
        data = b"".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 60)))
        hay = data.lower() if rng.random() < 0.3 else data
        needle = b"".join(rng.choice([b"a", b"b", b"\r", b"\xc3", b" "])
                          for _ in range(rng.randrange(1, 4)))
        limit = rng.choice([1, 2, 3, 5, 1000, 0, -1])
        expected = outcome(_steps.literal_lines_py, hay, data, needle, limit)
        assert outcome(speedups.literal_lines, hay, data, needle, limit) == expected, \
            (hay, data, needle, limit)


def test_literal_lines_agrees_where_blocks_of_starts_are_compared(speedups: Any) -> None:
    # buffers long enough for the 16- and 32-start blocks of a needle whose rarest byte is
    # common ("e", "a", a space): matches across a block's edge, in its last start, in the
    # tail after it, needles of one byte repeated; and the line feeds counted 16 at a time
    # over more than 255 blocks of 16 (a long line, or 4,000 and more empty ones)
    rng = random.Random(20261207)
    pieces = [b"e", b"a", b" ", b"\n", b"de", b"ef", b"def", b"ee", b"\r\n", b"\xc3\xa9"]
    for _ in range(3000):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randrange(0, 160)))
        if rng.random() < 0.1:  # one long line, or thousands of empty ones, between matches
            filler = rng.choice([b"x", b"\n"]) * rng.randrange(4000, 9000)
            data = data.replace(b"\n", b"") + filler + data
        needle = b"".join(rng.choice([b"e", b"a", b" ", b"d", b"f", b"\n"])
                          for _ in range(rng.randrange(2, 6)))
        hay = data.lower()
        limit = rng.choice([1, 3, 1000])
        assert speedups.literal_lines(hay, data, needle, limit) == \
            _steps.literal_lines_py(hay, data, needle, limit), (data, needle, limit)


def test_literal_lines_agrees_on_a_large_buffer(speedups: Any) -> None:
    data = Path(_steps.__file__).read_bytes() * 50
    for needle in (b"def", b"\n", b"e", data[-40:], b"absent from the file \x01"):
        for limit in (1, 10, 10**9):
            assert speedups.literal_lines(data, data, needle, limit) == \
                _steps.literal_lines_py(data, data, needle, limit)


@pytest.mark.parametrize("args", [
    (b"ab", b"abc", b"a", 5),  # hay and data of different lengths
    (b"abc", b"abc", b"", 5),  # an empty needle
    ("abc", b"abc", b"a", 5),  # text, not bytes
    (b"abc", b"abc", b"a", "5"),
    (b"abc", b"abc", b"a", 2**70),
    (bytearray(b"abc"), b"abc", b"a", 5),
])
def test_literal_lines_refuses_bad_arguments(speedups: Any, args: tuple[Any, ...]) -> None:
    with pytest.raises((ValueError, TypeError, OverflowError)):
        speedups.literal_lines(*args)


def test_literal_lines_with_no_room_left_finds_nothing(speedups: Any) -> None:
    for limit in (0, -5):
        assert speedups.literal_lines(b"a\na", b"a\na", b"a", limit) == ([], b"")
        assert _steps.literal_lines_py(b"a\na", b"a\na", b"a", limit) == ([], b"")


# ------------------------------------------------------------------ reading one file


@pytest.fixture
def folder(tmp_path: Path) -> Any:
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    yield tmp_path, fd
    os.close(fd)


def _both(speedups: Any, fd: int, name: str, sniff: int = SNIFF,
          most: int = 1 << 20) -> tuple[Any, ...]:
    expected = outcome(_steps.read_searchable_at_py, fd, name, sniff, most)
    assert outcome(speedups.read_searchable_at, fd, name, sniff, most) == expected, name
    return expected


@pytest.mark.parametrize("size", [0, 1, SNIFF - 1, SNIFF, SNIFF + 1, 3 * SNIFF, 100_000])
@pytest.mark.parametrize("nul_at", [None, 0, SNIFF - 1, SNIFF, "end"])
def test_a_regular_file_reads_the_same(speedups: Any, folder: Any, size: int,
                                       nul_at: int | str | None) -> None:
    root, fd = folder
    data = bytearray((b"line of text\r\n" * (size // 14 + 1))[:size])
    where = size - 1 if nul_at == "end" else nul_at
    if isinstance(where, int) and 0 <= where < size:
        data[where] = 0
    (root / "f.txt").write_bytes(bytes(data))
    kind, got = _both(speedups, fd, "f.txt")
    assert kind == "value"
    binary_early = b"\x00" in data[:SNIFF]
    assert got == (bytes(data[:SNIFF]) if binary_early and size >= SNIFF else bytes(data))


def test_a_file_past_the_limit_is_none_and_one_at_it_is_read(speedups: Any,
                                                             folder: Any) -> None:
    root, fd = folder
    (root / "f").write_bytes(b"x" * 1000)
    assert _both(speedups, fd, "f", most=999) == ("value", None)
    assert _both(speedups, fd, "f", most=1000) == ("value", b"x" * 1000)


def test_a_file_whose_size_says_nothing_is_read_to_its_end(speedups: Any) -> None:
    # /proc files report size 0 and hold more: the read goes on until the end, and stops
    # with None once the limit is passed, as for a file that grows while it is read.
    if not os.path.exists("/proc/version"):
        pytest.skip("no /proc")
    text = Path("/proc/version").read_bytes()
    fd = os.open("/proc", os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert _both(speedups, fd, "version", sniff=16, most=len(text)) == ("value", text)
        assert _both(speedups, fd, "version", sniff=16, most=len(text) - 1) == ("value", None)
    finally:
        os.close(fd)


def test_what_is_not_a_regular_file_is_refused_alike(speedups: Any, folder: Any) -> None:
    root, fd = folder
    (root / "target.txt").write_text("secret")
    (root / "sub").mkdir()
    os.symlink("target.txt", root / "link")
    os.symlink("sub", root / "dirlink")
    os.symlink("/etc/passwd", root / "outside")
    os.mkfifo(root / "fifo")
    assert _both(speedups, fd, "sub")[:2] == ("OSError", errno.EISDIR)
    assert _both(speedups, fd, "link")[:2] == ("OSError", errno.ELOOP)
    assert _both(speedups, fd, "dirlink")[:2] == ("OSError", errno.ELOOP)
    assert _both(speedups, fd, "outside")[:2] == ("OSError", errno.ELOOP)
    assert _both(speedups, fd, "missing")[:2] == ("OSError", errno.ENOENT)
    assert stat.S_ISFIFO(os.lstat(root / "fifo").st_mode)
    done: list[Any] = []
    reader = threading.Thread(target=lambda: done.append(_both(speedups, fd, "fifo")),
                              daemon=True)
    reader.start()
    reader.join(20)
    assert done, "reading a FIFO blocked"
    assert done[0][:2] == ("OSError", errno.EINVAL)


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "../f", "/etc/passwd", "x\x00y"])
def test_a_name_that_is_not_one_component_is_refused(speedups: Any, folder: Any,
                                                     name: str) -> None:
    root, fd = folder
    (root / "a").mkdir()
    (root / "a" / "b").write_text("inside")
    assert _both(speedups, fd, name) == ("ValueError",)


def test_a_name_that_is_not_utf8_is_read(speedups: Any, folder: Any) -> None:
    root, fd = folder
    name = os.fsdecode(b"caf\xe9.txt")
    (root / name).write_bytes(b"bytes")
    assert _both(speedups, fd, name) == ("value", b"bytes")


@pytest.mark.parametrize("args", [
    (-1, "f", SNIFF, 10),
    (10**6, "f", SNIFF, 10),
])
def test_a_bad_folder_descriptor_is_an_os_error_alike(speedups: Any, args: tuple[Any, ...]) -> None:
    assert outcome(speedups.read_searchable_at, *args)[:2] == ("OSError", errno.EBADF)
    assert outcome(_steps.read_searchable_at_py, *args)[:2] == ("OSError", errno.EBADF)


@pytest.mark.parametrize("args", [
    (0, b"f", SNIFF, 10),
    ("0", "f", SNIFF, 10),
    (0, "f", 0, 10),
    (0, "f", SNIFF, -1),
])
def test_read_searchable_at_refuses_bad_arguments(speedups: Any, args: tuple[Any, ...]) -> None:
    with pytest.raises((ValueError, TypeError)):
        speedups.read_searchable_at(*args)


# ------------------------------------------------------------------ a folder's batch


def _payloads_comparable(answer: tuple[bytes, list[Any]]) -> tuple[bytes, list[Any]]:
    codes, payloads = answer
    return codes, [("OSError", p.errno, p.strerror, p.filename) if isinstance(p, OSError)
                   else p for p in payloads]


def _random_folder(root: Path, rng: random.Random) -> list[str]:
    names = []
    for index in range(rng.randrange(1, 12)):
        name = f"f{index}"
        roll = rng.random()
        if roll < 0.08:
            (root / name).mkdir()
        elif roll < 0.14:
            os.symlink(rng.choice(["f0", "/etc/hostname", "missing"]), root / name)
        elif roll < 0.18:
            os.mkfifo(root / name)
        elif roll < 0.22:
            pass  # a name that does not exist
        else:
            words = [rng.choice([b"foo", b"Foo", b"bar", b"\n", b"\r\n", b" ", b"\xff",
                                 b"\x00", b"ab", b"\xc3\xa9"]) for _ in range(rng.randrange(0, 90))]
            (root / name).write_bytes(b"".join(words))
        names.append(name)
    return names


def _pattern_table(pattern: str) -> bytes:
    import re

    from janito_files._automaton import build
    from janito_files._common import regex_parser

    parsed = regex_parser().parse(pattern, re.MULTILINE)
    table = build(parsed, parsed.state.flags)
    assert table is not None
    return table


TABLES = [_pattern_table(pattern) for pattern in [r"foo\b", "^o", r"ab$", "Fo+ ", r"o\s*$"]]


def test_scan_files_agrees_with_the_python_loop_on_random_folders(speedups: Any,
                                                                    tmp_path: Path) -> None:
    rng = random.Random(17)
    for round_ in range(300):
        root = tmp_path / f"r{round_}"
        root.mkdir()
        names = _random_folder(root, rng)
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            mode = rng.choice([0, 1, 2])
            needle = rng.choice([b"foo", b"o", b"ab", b"\r", None if mode == 2 else b"bar"])
            args: tuple[Any, ...] = (
                fd, names, rng.choice([8, 64]), rng.choice([40, 400, 1 << 20]), needle,
                rng.random() < 0.3, rng.choice([1, 2, 50]), rng.random() < 0.3, mode,
                rng.choice([1, 30, 1 << 20]))
            if mode == 1 and rng.random() < 0.5:  # the candidates a table answers as missing
                args += (rng.choice(TABLES),)
            expected = outcome(_steps.scan_files_py, *args)
            got = outcome(speedups.scan_files, *args)
            if expected[0] == "value":
                expected = ("value", _payloads_comparable(expected[1]))
                got = ("value", _payloads_comparable(got[1]))
            assert got == expected, args
        finally:
            os.close(fd)


def _open_random_folders(tmp_path: Path, rng: random.Random, count: int
                         ) -> list[tuple[int, list[str]]]:
    """``count`` random folders, each open (the caller closes it) with its names."""
    folders = []
    for index in range(count):
        root = tmp_path / f"r{index}"
        root.mkdir()
        folders.append((os.open(root, os.O_RDONLY | os.O_DIRECTORY), _random_folder(root, rng)))
    return folders


def _take_all(searcher: Any, count: int, into: list[Any]) -> None:
    into.extend(searcher.take() for _ in range(count))


@pytest.mark.parametrize("hold", [None, 0, 1 << 10])
def test_the_searcher_answers_as_scan_files_in_the_order_given(speedups: Any, tmp_path: Path,
                                                               hold: int | None) -> None:
    # hold 0: no batch but the oldest not taken ever starts, so each take lets the next one
    # start; taken on a thread of its own, so that a batch never started fails the test
    # instead of hanging it
    folders = _open_random_folders(tmp_path, random.Random(5), 40)
    try:
        for mode, needle, table in [(0, b"foo", None), (1, b"o", None), (2, None, None),
                                    (2, b"ab", None), (1, b"o", TABLES[0])]:
            settings = (64, 400, needle, False, False, mode, 100,
                        *([] if hold is None else [hold]),
                        *([] if table is None else [table]))
            if table is not None and hold is None:
                continue  # the table comes after hold
            searcher = speedups.Searcher(2, *settings)
            twin = _steps.SearcherPy(2, *settings)
            for fd, names in folders:
                searcher.give(fd, names, 3)
                twin.give(fd, names, 3)
            taken: list[Any] = []
            taker = threading.Thread(target=_take_all, args=(searcher, len(folders), taken),
                                     daemon=True)
            taker.start()
            taker.join(60)
            assert len(taken) == len(folders), "a batch given was never answered"
            for answer in taken:
                assert _payloads_comparable(answer) == _payloads_comparable(twin.take())
            with pytest.raises(ValueError):
                searcher.take()
            # closing with batches given and not taken drops them
            for fd, names in folders[:5]:
                searcher.give(fd, names, 3)
            searcher.close()
            with pytest.raises(ValueError):
                searcher.give(folders[0][0], folders[0][1], 3)
    finally:
        for fd, _names in folders:
            os.close(fd)


def _ready_within(searcher: Any, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not searcher.ready():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)
    return True


def test_ready_says_whether_taking_the_oldest_batch_would_wait(speedups: Any,
                                                               tmp_path: Path) -> None:
    """A search takes each answer as soon as it is back (``Pipeline.ready``). With hold 0 a
    worker starts only the oldest batch not taken, so the second is answered only once the
    first is taken: ready() must follow that, never run ahead of it."""
    roots = _open_random_folders(tmp_path, random.Random(7), 2)
    try:
        searcher = speedups.Searcher(2, 64, 400, b"o", False, False, 1, 100, 0)
        twin = _steps.SearcherPy(2, 64, 400, b"o", False, False, 1, 100, 0)
        assert not searcher.ready() and not twin.ready()  # nothing given
        for fd, names in roots:
            searcher.give(fd, names, 3)
            twin.give(fd, names, 3)
        for _ in roots:
            assert _ready_within(searcher, 30), "the oldest batch was never answered"
            assert twin.ready()
            assert _payloads_comparable(searcher.take()) == _payloads_comparable(twin.take())
        assert not searcher.ready() and not twin.ready()  # all taken
        searcher.close()
    finally:
        for fd, _names in roots:
            os.close(fd)


@pytest.mark.parametrize("args", [
    (0, ["a/b"], SNIFF, 10, b"x", False, 1, False, 0, 1),
    (0, [".."], SNIFF, 10, b"x", False, 1, False, 0, 1),
    (0, ["f"], SNIFF, 10, b"", False, 1, False, 0, 1),
    (0, ["f"], SNIFF, 10, None, False, 1, False, 1, 1),
    (0, ["f"], 0, 10, b"x", False, 1, False, 0, 1),
    (0, ["f"], SNIFF, 10, b"x", False, 1, False, 3, 1),
    (0, [b"f"], SNIFF, 10, b"x", False, 1, False, 0, 1),
    (0, ["f"], SNIFF, 10, "x", False, 1, False, 0, 1),
])
def test_scan_files_refuses_bad_arguments_alike(speedups: Any, args: tuple[Any, ...]) -> None:
    expected = outcome(_steps.scan_files_py, *args)
    assert expected[0] in ("ValueError", "TypeError")
    assert outcome(speedups.scan_files, *args) == expected


# ------------------------------------------------------------------------- list_folder

# Bytes that make names sort differently as bytes and as the strings Python decodes them
# to: invalid sequences (each byte becomes U+DC80..U+DCFF), overlong forms, encoded
# surrogates, code points past U+10FFFF, truncated sequences, and valid characters on
# either side of the escaped range (U+00E9, U+4E2D, U+E000, U+FFFD, U+1F600).
NAME_PIECES = [b"a", b"B", b"z", b"_", b"0", b" ", b"-", b".", b"~", b"\x7f", b"\x80",
               b"\xbf", b"\xc0", b"\xc1", b"\xc2", b"\xc3\xa9", b"\xc3", b"\xe0\x80\x80",
               b"\xe0\xa0\x80", b"\xe4\xb8\xad", b"\xed\xa0\x80", b"\xed\x9f\xbf",
               b"\xee\x80\x80", b"\xef\xbf\xbd", b"\xf0\x80\x80\x80", b"\xf0\x9f\x98\x80",
               b"\xf4\x8f\xbf\xbf", b"\xf4\x90\x80\x80", b"\xf5", b"\xfe", b"\xff", b"\xe2\x82"]


def _random_names_folder(rng: random.Random, where: Path) -> None:
    where.mkdir()
    made: set[bytes] = set()
    for _ in range(rng.randrange(0, 60)):
        name = b"".join(rng.choice(NAME_PIECES) for _ in range(rng.randrange(1, 6)))
        if name in (b".", b"..") or name in made or len(name) > 200:
            continue
        made.add(name)
        path = os.fsencode(where) + b"/" + name
        kind = rng.randrange(5)
        if kind == 0:
            os.mkdir(path)
        elif kind == 1:
            os.symlink(b"../elsewhere" if rng.random() < 0.5 else b"x", path)
        elif kind == 2:
            os.mkfifo(path)
        else:
            with open(path, "wb") as handle:
                handle.write(b"x" * rng.randrange(3))


def test_list_folder_agrees_with_the_walk_on_random_names(speedups: Any,
                                                          tmp_path: Path) -> None:
    from janito_core._fswalk import list_folder

    rng = random.Random(37)
    for number in range(150):
        where = tmp_path / f"f{number}"
        _random_names_folder(rng, where)
        fd = os.open(where, os.O_RDONLY | os.O_DIRECTORY)
        try:
            expected = list_folder(fd)
            assert speedups.list_folder(fd) == expected, where
            # read from the folder's start again, and left there for the next reader
            assert speedups.list_folder(fd) == expected
            assert list_folder(fd) == expected
            assert expected[0] == sorted(expected[0])
        finally:
            os.close(fd)


def test_list_folder_sorts_every_pair_of_pieces_as_python_does(speedups: Any,
                                                               tmp_path: Path) -> None:
    from janito_core._fswalk import list_folder

    names = {a + b for a in NAME_PIECES for b in NAME_PIECES} - {b".", b".."}
    where = tmp_path / "pairs"
    where.mkdir()
    for name in names:
        with open(os.fsencode(where) + b"/" + name, "wb"):
            pass
    fd = os.open(where, os.O_RDONLY | os.O_DIRECTORY)
    try:
        listed = speedups.list_folder(fd)
        assert listed == list_folder(fd)
        assert len(listed[0]) == len(names) and set(listed[1]) == {"file"}
    finally:
        os.close(fd)


def test_list_folder_fails_as_the_walk_does(speedups: Any, tmp_path: Path) -> None:
    from janito_core._fswalk import list_folder

    regular = tmp_path / "file"
    regular.write_text("x")
    fd = os.open(regular, os.O_RDONLY)
    try:
        assert outcome(speedups.list_folder, fd) == outcome(list_folder, fd)
        assert outcome(speedups.list_folder, fd)[:2] == ("OSError", errno.ENOTDIR)
    finally:
        os.close(fd)
    closed = os.open(tmp_path, os.O_RDONLY)
    os.close(closed)
    assert outcome(speedups.list_folder, closed) == outcome(list_folder, closed)
    assert outcome(speedups.list_folder, closed)[:2] == ("OSError", errno.EBADF)
    with pytest.raises(TypeError):
        speedups.list_folder("3")


# ------------------------------------------------------------------ pick_plain, prefixed

PICK_NAMES = ["", "a", "ab", "aba", "abab", "b", "ba", "x.py", ".py", "py", "a.py.py",
              "é.py", "\udcff", "\udcffa", "a\udcff", "test_x", "x_test_y", "_test", "ü_test_é",
              "aa", "aaa"]
PICK_PIECES = ["", "a", "b", "ab", "ba", "aa", ".py", "_test", "é", "\udcff", "x"]


def test_pick_plain_agrees_with_its_python_twin(speedups: Any) -> None:
    rng = random.Random(2037)
    kinds_of = ["file", "directory", "symlink", "other"]
    for _ in range(3000):
        names = [rng.choice(PICK_NAMES) + rng.choice(["", "a", "b"]) for _ in range(rng.randrange(8))]
        kinds = [rng.choice(kinds_of) for _ in names]
        kind = rng.choice(kinds_of)
        how = rng.choice(["all", "affixes", "holds", "equal"])
        start, end = rng.choice(PICK_PIECES), rng.choice(PICK_PIECES)
        args = (names, kinds, kind, how, start, end)
        assert speedups.pick_plain(*args) == _steps.pick_plain_py(*args), args
    for bad in [(["a"], [], "file", "all", "", ""), (["a"], ["file"], "file", "regex", "", "")]:
        assert outcome(speedups.pick_plain, *bad) == outcome(_steps.pick_plain_py, *bad)


def test_prefixed_agrees_with_its_python_twin(speedups: Any) -> None:
    for prefix in ["", "a/", "é/b/", "\udcff/"]:
        names = ["x", "", "é", "\udcfe", "long" * 50]
        assert speedups.prefixed(prefix, names) == _steps.prefixed_py(prefix, names)
    with pytest.raises(TypeError):
        speedups.prefixed("a/", [1])


# ------------------------------------------------------------------ a batch's rows


def _rows_as_the_search_makes_them(paths: list[str], payloads: list[Any]) -> list[dict[str, Any]]:
    from janito_files._search import decoded_lines

    joined = b"\n".join(data for _, data in payloads)
    texts = iter(decoded_lines(joined, b"\r" in joined))
    return [{"path": path, "line": line, "text": next(texts)}
            for path, (numbers, _) in zip(paths, payloads, strict=True) for line in numbers]


def test_found_rows_agrees_with_the_search_or_leaves_the_batch_to_it(speedups: Any) -> None:
    # each line decoded alone gives what the whole batch decoded at once gives, a broken
    # sequence at a line's end included; a carriage return, a line that may need clipping,
    # or lines and numbers that differ in count are left to the search's own steps (None)
    rng = random.Random(20261207)
    pieces = [b"d", b"e", b"f", b" ", b"\xc3\xa9", b"\xc3", b"\xe2\x82", b"\xff", b"\xf0\x9f\x98"]
    left_alone = made = 0
    for _ in range(3000):
        paths = [f"f{k}\udcff" if rng.random() < 0.1 else f"d/f{k}.py"
                 for k in range(rng.randrange(0, 5))]
        payloads = []
        for _ in paths:
            count = rng.randrange(1, 5)
            lines = [b"".join(rng.choice(pieces) for _ in range(rng.randrange(0, 12)))
                     for _ in range(count)]
            if rng.random() < 0.05:
                lines[rng.randrange(count)] += b"\r"
            if rng.random() < 0.05:
                lines[rng.randrange(count)] = b"\xc3\xa9" * 8
            payloads.append((sorted(rng.sample(range(1, 99), count)), b"\n".join(lines)))
        expected = _rows_as_the_search_makes_them(paths, payloads)
        for found_rows in (speedups.found_rows, _steps.found_rows_py):
            rows = found_rows(paths, payloads, 12)
            assert rows is None or rows == expected, (paths, payloads)
        rows = speedups.found_rows(paths, payloads, 12)
        if rows is None:
            left_alone += 1
            assert any(b"\r" in data or max(map(len, data.split(b"\n"))) > 12
                       for _, data in payloads)
        made += rows is not None
    assert left_alone > 100 and made > 1000  # both ways were taken


@pytest.mark.parametrize("payload", [
    ([1, 2], b"one line"),  # fewer lines than numbers
    ([1], b"two\nlines"),  # more
    ([], b""),  # no line at all
])
def test_found_rows_leaves_lines_that_do_not_fit_their_numbers_to_the_search(
        speedups: Any, payload: Any) -> None:
    for found_rows in (speedups.found_rows, _steps.found_rows_py):
        assert found_rows(["a"], [payload], 500) is None


@pytest.mark.parametrize("args", [
    (["a", "b"], [([1], b"x")], 500),
    (["a"], [(1, b"x")], 500),
    (["a"], [([1], "x")], 500),
    (["a"], [[[1], b"x"]], 500),
    ("a", [([1], b"x")], 500),
])
def test_found_rows_refuses_bad_arguments(speedups: Any, args: tuple[Any, ...]) -> None:
    with pytest.raises((TypeError, ValueError)):
        speedups.found_rows(*args)
