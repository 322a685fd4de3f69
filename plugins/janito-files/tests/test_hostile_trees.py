"""Trees an attacker can plant with files alone, and arguments that ask for unbounded work.

A cloned repository carries links, FIFOs cannot be committed but can be made by any
earlier tool call, and one CreateDirectory call makes a tree 1,500 levels deep. Every tool
must stay inside, never block, and finish.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest
from files_helpers import fails, ok


def call_with_deadline(files: Any, seconds: float, tool: str, **arguments: Any) -> dict[str, Any]:
    """The tool's result, failing the test if it does not come back within ``seconds``."""
    outcome: list[dict[str, Any]] = []
    worker = threading.Thread(target=lambda: outcome.append(files.call(tool, **arguments)),
                              daemon=True)
    worker.start()
    worker.join(seconds)
    assert outcome, f"{tool} blocked for more than {seconds} s"
    return outcome[0]


@pytest.fixture
def looped(files: Any, ws: Path, outside: Path) -> Path:
    """``loop -> loop`` and ``out -> outside``: ``loop/../out/...`` fooled os.path.realpath."""
    os.symlink("loop", ws / "loop")
    os.symlink(outside, ws / "out")
    (outside / "victim").mkdir()
    (outside / "victim" / "keep.txt").write_text("keep\n")
    return outside


LOOP_CALLS = [
    ("ReadFile", {"filepath": "loop/../out/secret.txt"}),
    ("WordCount", {"filepath": "loop/../out/secret.txt"}),
    ("ListFiles", {"directory": "loop/../out", "recursive": True}),
    ("FindFiles", {"paths": ["loop/../out"], "pattern": "*"}),
    ("SearchText", {"paths": ["loop/../out"], "query": "OUTSIDE"}),
    ("CreateFile", {"filepath": "loop/../out/new.txt", "content": "pwned"}),
    ("CreateFile", {"filepath": "loop/../out/secret.txt", "content": "pwned", "overwrite": True}),
    ("DeleteFile", {"filepath": "loop/../out/secret.txt"}),
    ("RemoveDirectory", {"directory": "loop/../out/victim", "recursive": True}),
    ("MoveFile", {"source": "loop/../out/secret.txt", "destination": "stolen.txt"}),
    ("ReplaceTextInFile", {"filepath": "loop/../out/secret.txt", "old_str": "OUTSIDE",
                           "new_str": "pwned"}),
    ("CreateDirectory", {"directory": "loop/../out/made"}),
]


@pytest.mark.parametrize(("tool", "arguments"), LOOP_CALLS,
                         ids=[f"{t}-{i}" for i, (t, _) in enumerate(LOOP_CALLS)])
def test_a_link_loop_is_no_way_out(files: Any, looped: Path, tool: str,
                                   arguments: dict[str, Any]) -> None:
    result = files.call(tool, **arguments)
    assert result["success"] is False, result
    kinds = {result["error_type"], *(e.get("error_type") for e in result.get("errors", []))}
    assert "symlink_loop" in kinds, result
    assert "OUTSIDE-SECRET" not in str(result)
    assert sorted(p.name for p in looped.iterdir()) == ["secret.txt", "victim"]
    assert (looped / "secret.txt").read_text() == "OUTSIDE-SECRET\n"
    assert (looped / "victim" / "keep.txt").exists()


def test_a_gitignore_that_is_a_fifo_never_blocks(files: Any, ws: Path) -> None:
    (ws / "a.txt").write_text("needle\n")
    (ws / "sub").mkdir()
    (ws / "sub" / "b.txt").write_text("needle\n")
    os.mkfifo(ws / ".gitignore")
    os.mkfifo(ws / "pipe")
    os.symlink("../pipe", ws / "sub" / ".gitignore")
    listing = ok(call_with_deadline(files, 20, "ListFiles", directory=".", recursive=True))
    assert "sub/b.txt" in listing["entries"]
    found = ok(call_with_deadline(files, 20, "FindFiles", paths=["sub"], pattern="*.txt"))
    assert found["files"] == ["sub/b.txt"]
    searched = ok(call_with_deadline(files, 20, "SearchText", paths=["."], query="needle"))
    assert searched["count"] == 2


def test_a_fifo_is_refused_by_every_reading_tool(files: Any, ws: Path) -> None:
    os.mkfifo(ws / "pipe")
    for tool, arguments in (("ReadFile", {"filepath": "pipe"}), ("WordCount", {"filepath": "pipe"}),
                            ("ReplaceTextInFile", {"filepath": "pipe", "old_str": "a",
                                                   "new_str": "b"})):
        fails(call_with_deadline(files, 20, tool, **arguments), "not_a_file")


def test_a_tree_made_in_one_call_is_removed_in_one_call(files: Any, ws: Path) -> None:
    deep = "d/" * 1500
    try:
        ok(files.call("CreateDirectory", directory=deep))
        ok(files.call("CreateFile", filepath=deep + "leaf.txt", content="leaf"))
        listing = ok(files.call("ListFiles", directory=".", recursive=True, max_results=100_000))
        assert listing["count"] == 1501
        found = ok(files.call("SearchText", paths=["."], query="leaf"))
        assert found["matches"][0]["path"] == deep + "leaf.txt"
        removed = ok(files.call("RemoveDirectory", directory="d", recursive=True))
        assert removed["removed_files"] == 1 and removed["removed_directories"] == 1499
        assert os.listdir(ws) == []
    finally:
        # pytest removes old temporary folders recursively: a tree this deep would stop it
        from janito_core import Workspace

        if (ws / "d").exists():
            Workspace(ws).rmdir("d", recursive=True)


def test_result_counts_have_a_ceiling_enforced_before_any_work(files: Any, ws: Path) -> None:
    (ws / "a.txt").write_text("x\n")
    for tool, extra in (("SearchText", {"paths": ".", "query": "x"}),
                        ("SearchRegex", {"paths": ".", "pattern": "x"}),
                        ("ListFiles", {"directory": "."}),
                        ("FindFiles", {"paths": ".", "pattern": "*"})):
        result = fails(files.call(tool, max_results=10**9, **extra), "invalid_arguments")
        assert result["details"][0]["field"] == "max_results"
        assert result["details"][0]["error"].startswith("must be from 1 to ")


def test_search_memory_stays_bounded_on_a_file_of_matches(files: Any, ws: Path) -> None:
    """8 MiB of matching lines and the largest max_results: the answer is capped, fast."""
    import resource
    import time

    (ws / "big.txt").write_bytes(b"x\n" * (4 * 1024 * 1024))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    result = ok(files.call("SearchText", paths=["big.txt"], query="x", max_results=10_000))
    assert result["count"] == 10_000 and result["truncated"] is True
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mib < 200, f"the search grew the process by {grown_mib:.0f} MiB"
    assert time.monotonic() - started < 30


def test_move_into_a_folder_named_with_a_slash(files: Any, ws: Path) -> None:
    (ws / "a.txt").write_text("a")
    fails(files.call("MoveFile", source="a.txt", destination="newdir/"), "not_found")
    moved = ok(files.call("MoveFile", source="a.txt", destination="newdir/", create_dirs=True))
    assert moved["destination"] == "newdir/a.txt"
    assert (ws / "newdir" / "a.txt").read_text() == "a"
    (ws / "b.txt").write_text("b")
    ok(files.call("MoveFile", source="b.txt", destination="newdir/"))
    assert sorted(os.listdir(ws / "newdir")) == ["a.txt", "b.txt"]


def test_move_between_two_names_of_one_file(files: Any, ws: Path) -> None:
    (ws / "a.txt").write_text("shared")
    os.link(ws / "a.txt", ws / "b.txt")
    fails(files.call("MoveFile", source="a.txt", destination="b.txt"), "file_exists")
    assert (ws / "a.txt").exists()
    moved = ok(files.call("MoveFile", source="a.txt", destination="b.txt", overwrite=True))
    assert moved["replaced"] is True
    assert not (ws / "a.txt").exists() and (ws / "b.txt").read_text() == "shared"


def test_a_crlf_file_keeps_crlf_when_a_replacement_adds_lines(files: Any, ws: Path) -> None:
    (ws / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = ok(files.call("ReplaceTextInFile", filepath="w.txt", old_str="two",
                           new_str="two\nand a half"))
    assert result["line_endings"] == "crlf"
    assert (ws / "w.txt").read_bytes() == b"one\r\ntwo\r\nand a half\r\nthree\r\n"
    ok(files.call("ReplaceTextInFile", filepath="w.txt", old_str="one\ntwo",
                  new_str="1\n2"))
    assert (ws / "w.txt").read_bytes() == b"1\r\n2\r\nand a half\r\nthree\r\n"
    (ws / "lf.txt").write_bytes(b"a\nb\n")
    ok(files.call("ReplaceTextInFile", filepath="lf.txt", old_str="a",
                  new_str="x\r\ny"))
    assert (ws / "lf.txt").read_bytes() == b"x\r\ny\nb\n"  # an LF file is left as asked


def test_concurrent_edits_of_one_file_lose_nothing(files: Any, ws: Path) -> None:
    tokens = [f"token-{i:02d}" for i in range(16)]
    (ws / "shared.txt").write_text("".join(f"{t}\n" for t in tokens))
    barrier = threading.Barrier(len(tokens))
    results: list[dict[str, Any]] = []

    def edit(token: str) -> None:
        barrier.wait()
        results.append(files.call("ReplaceTextInFile", filepath="shared.txt", old_str=token,
                                  new_str=token.upper()))

    workers = [threading.Thread(target=edit, args=(t,)) for t in tokens]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert all(r["success"] for r in results), results
    assert (ws / "shared.txt").read_text() == "".join(f"{t.upper()}\n" for t in tokens)
