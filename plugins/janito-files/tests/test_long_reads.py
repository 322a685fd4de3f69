"""Reads whose length the file decides stop when their call is cancelled or runs out of
time: WordCount over a 10 GiB sparse file, searches and line counts between blocks. Each
answer is structured (``cancelled`` or ``timeout``), says how far the read got, and comes
long before the file's end."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from janito_core.cancellation import CancelToken
from janito_core.dispatch import call_tool

HUGE = 10 << 30


@pytest.fixture
def sparse(ws: Path) -> Path:
    """A 10 GiB file that costs no disk: a line of text, then a hole (read as NUL bytes,
    which WordCount counts, past the sniffed head). Reading it whole takes tens of
    seconds; the tests below stop it after a block or two."""
    path = ws / "huge.txt"
    with open(path, "wb") as handle:
        handle.write(b"hello world\n" * 2000)
        handle.truncate(HUGE)
    return path


class _CancelOnStart(logging.Handler):
    """Cancels ``token`` when the tool reports that it started: the token is set while
    the tool runs, at a point the test decides, not after some delay."""

    def __init__(self, token: CancelToken, starts: str) -> None:
        super().__init__()
        self.token = token
        self.starts = starts

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith(self.starts):
            self.token.cancel("the person pressed stop")


@pytest.fixture
def cancel_on_start(files: Any) -> Iterator[Any]:
    registry = files.registry
    registry.reports = "logging"
    handlers: list[logging.Handler] = []
    logger = logging.getLogger("janito.reports")
    level = logger.level
    logger.setLevel(logging.INFO)

    def arm(starts: str) -> CancelToken:
        token = CancelToken()
        handler = _CancelOnStart(token, starts)
        handlers.append(handler)
        logger.addHandler(handler)
        return token

    yield arm
    for handler in handlers:
        logger.removeHandler(handler)
    logger.setLevel(level)


def test_word_count_stops_when_its_token_is_cancelled(files: Any, sparse: Path,
                                                       cancel_on_start: Any) -> None:
    token = cancel_on_start("Counting words")
    result = call_tool("WordCount", {"filepath": "huge.txt"}, registry=files.registry,
                       cancel_token=token)
    assert result["success"] is False and result["error_type"] == "cancelled", result
    assert "the person pressed stop" in result["error"]
    assert result["size"] == HUGE and 0 <= result["bytes_counted"] < HUGE
    assert result["path"] == "huge.txt"


def test_word_count_cancelled_from_another_thread(files: Any, sparse: Path) -> None:
    token = CancelToken()
    timer = threading.Timer(0.2, token.cancel, args=("the client went away",))
    timer.start()
    try:
        result = call_tool("WordCount", {"filepath": "huge.txt"}, registry=files.registry,
                           cancel_token=token)
    finally:
        timer.cancel()
    assert result["error_type"] == "cancelled", result
    assert result["bytes_counted"] < HUGE


def test_word_count_answers_timeout_when_the_callers_time_runs_out(files: Any,
                                                                   sparse: Path) -> None:
    result = call_tool("WordCount", {"filepath": "huge.txt"}, registry=files.registry,
                       timeout=0.5)
    assert result["success"] is False and result["error_type"] == "timeout", result
    assert result["bytes_counted"] < HUGE


def test_word_count_has_a_time_bound_of_its_own(files: Any, sparse: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import janito_files.word_count as module

    # No caller's token, no caller's timeout: the tool's own bound stops it. A bound
    # this small is over after the first block, whatever the machine's speed.
    monkeypatch.setattr(module, "TIME_LIMIT", 1e-9)
    result = files.call("WordCount", filepath="huge.txt")
    assert result["success"] is False and result["error_type"] == "timeout", result
    assert result["bytes_counted"] == module.BLOCK and result["size"] == HUGE
    assert result["time_limit_seconds"] == 1e-9 and "max_bytes" in result["error"]
    # max_bytes is how to count the start of such a file
    monkeypatch.setattr(module, "TIME_LIMIT", 60.0)
    counted = files.call("WordCount", filepath="huge.txt", max_bytes=24_000)
    assert counted["success"] is True and counted["lines"] == 2000 and counted["truncated"]


@pytest.mark.parametrize(("tool", "arguments", "starts"), [
    ("SearchText", {"paths": ".", "query": "needle", "count_only": True}, "Searching"),
    ("SearchRegex", {"paths": ".", "pattern": "ne+dle"}, "Searching"),
    ("ReadFile", {"filepath": "big.txt", "start_line": 299_990}, "Reading"),
])
def test_searches_and_line_counts_stop_when_cancelled(
        files: Any, ws: Path, cancel_on_start: Any, tool: str, arguments: dict[str, Any],
        starts: str) -> None:
    for n in range(20):
        (ws / f"f{n:02}.txt").write_bytes(b"needle\n" * 10)
    (ws / "big.txt").write_bytes(b"needle in a line\n" * 300_000)  # several blocks
    token = cancel_on_start(starts)
    result = call_tool(tool, arguments, registry=files.registry, cancel_token=token)
    assert result["success"] is False and result["error_type"] == "cancelled", result
    assert "the person pressed stop" in result["error"]
    # the same call, not cancelled, finishes
    assert call_tool(tool, arguments, registry=files.registry,
                     cancel_token=CancelToken())["success"] is True
