"""The audit log a process keeps open: rotations by other processes, lines cut short."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from janito_core._audit import AuditLog


def lines(folder: Path) -> list[dict[str, Any]]:
    return list(AuditLog(folder).lines())


def test_a_line_after_another_process_rotated_the_log_is_kept(tmp_path: Path) -> None:
    mine, theirs = AuditLog(tmp_path, max_bytes=200), AuditLog(tmp_path, max_bytes=200)
    mine.append({"n": 0})
    for number in range(1, 8):  # past 200 bytes: the other rotates the log under mine
        theirs.append({"n": number, "pad": "x" * 40})
    assert (tmp_path / "audit.1.jsonl").exists()
    mine.append({"n": 8})  # written to what mine holds open: the rotated file
    mine.append({"n": 9})  # to the new log, opened afresh
    assert sorted(line["n"] for line in lines(tmp_path)) == list(range(10))
    assert json.loads((tmp_path / "audit.jsonl").read_text().splitlines()[-1]) == {"n": 9}


def test_a_line_written_to_a_log_rotated_out_is_written_again(tmp_path: Path) -> None:
    mine, theirs = AuditLog(tmp_path, keep=0, max_bytes=50), AuditLog(tmp_path, keep=0,
                                                                       max_bytes=50)
    mine.append({"n": "first"})
    theirs.append({"n": "x" * 60})  # past 50 bytes and no old file kept: the log is removed
    assert not (tmp_path / "audit.jsonl").exists()
    mine.append({"n": "second"})
    assert [line["n"] for line in lines(tmp_path)] == ["second"]


def test_a_line_cut_short_does_not_swallow_the_next(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    log.append({"n": 1})
    with (tmp_path / "audit.jsonl").open("ab") as cut:  # what a full disk leaves
        cut.write(b'{"n": 2, "cut')
    log._cut = True  # as a write that failed part way leaves it
    log.append({"n": 3})
    assert [line["n"] for line in lines(tmp_path)] == [1, 3]
