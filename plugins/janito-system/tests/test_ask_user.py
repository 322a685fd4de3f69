"""AskUser: loads only on a terminal; tested for real on a pseudo-terminal."""

from __future__ import annotations

import io
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from janito_core.testing import ToolsetTester

pty = pytest.importorskip("pty")

PROBE = """
import json, sys
from janito_core import Registry
from janito_core.dispatch import call_tool
registry = Registry(autoload=(), allowed=None)
registry.add_toolset("system")
record = registry.record("AskUser")
print("STATUS " + json.dumps([record.status, record.reason]), flush=True)
if record.status == "loaded" and "--ask" in sys.argv:
    result = call_tool("AskUser", {"question": "Favourite colour?"}, registry=registry)
    print("RESULT " + json.dumps(result), flush=True)
"""


class TerminalTimeout(AssertionError):
    """Nothing more arrived on the terminal in time."""


class Terminal:
    """A child process running PROBE on a pseudo-terminal, driven through the master side."""

    def __init__(self, cwd: Path, *args: str) -> None:
        argv = [sys.executable, "-c", PROBE, *args]
        env = {**os.environ, "NO_COLOR": "1"}
        pid, fd = pty.fork()
        if pid == 0:  # the child: a session leader whose controlling terminal is the pty
            try:
                # SIGINT as at a terminal, even if this run started with it ignored: the
                # Ctrl-C test needs the child to hear it
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                os.chdir(cwd)
                os.execve(sys.executable, argv, env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        self.output = b""

    def _read_more(self, end: float) -> None:
        left = end - time.monotonic()
        ready, _, _ = select.select([self.fd], [], [], max(left, 0))
        if not ready:
            raise TerminalTimeout(f"timed out waiting; the terminal showed {self.output!r}")
        try:
            data = os.read(self.fd, 4096)
        except OSError:  # the child closed the terminal
            data = b""
        if not data:
            raise AssertionError(f"the terminal closed; it showed {self.output!r}")
        self.output += data

    def read_until(self, marker: bytes, limit: float = 30.0) -> None:
        end = time.monotonic() + limit
        while marker not in self.output:
            self._read_more(end)

    def json_line(self, prefix: bytes, limit: float = 30.0) -> Any:
        """The JSON value printed after ``prefix`` on one line."""
        end = time.monotonic() + limit
        while True:
            at = self.output.find(prefix)
            if at >= 0:
                rest = self.output[at + len(prefix):]
                if b"\n" in rest:
                    return json.loads(rest.split(b"\n", 1)[0].decode().strip())
            self._read_more(end)

    def send(self, data: bytes) -> None:
        os.write(self.fd, data)

    def close(self) -> int:
        try:
            while True:  # drain so the child never blocks on a full terminal
                ready, _, _ = select.select([self.fd], [], [], 5)
                if not ready:
                    break
                try:
                    if not os.read(self.fd, 4096):
                        break
                except OSError:
                    break
        finally:
            os.close(self.fd)
        _, status = os.waitpid(self.pid, 0)
        return os.waitstatus_to_exitcode(status)


def test_on_a_terminal_the_user_answers(tmp_path: Path) -> None:
    terminal = Terminal(tmp_path, "--ask")
    try:
        assert terminal.json_line(b"STATUS ") == ["loaded", None]
        terminal.read_until(b"Favourite colour?")
        terminal.read_until(b"> ")
        terminal.send(b"deep blue\n")
        result = terminal.json_line(b"RESULT ")
    finally:
        code = terminal.close()
    assert result == {"success": True, "question": "Favourite colour?", "answer": "deep blue"}
    assert code == 0


def test_end_of_input_is_no_answer(tmp_path: Path) -> None:
    terminal = Terminal(tmp_path, "--ask")
    try:
        terminal.read_until(b"> ")
        terminal.send(b"\x04")  # Ctrl-D on an empty line: end of file
        result = terminal.json_line(b"RESULT ")
    finally:
        terminal.close()
    assert result["success"] is False
    assert result["error_type"] == "no_answer"
    assert result["question"] == "Favourite colour?"


def test_ctrl_c_cancels_without_crashing(tmp_path: Path) -> None:
    terminal = Terminal(tmp_path, "--ask")
    try:
        terminal.read_until(b"> ")
        # Ctrl-C: SIGINT to the foreground process group. A SIGINT that lands after the
        # prompt is written but before the read blocks is noted by Python and acted on only
        # when the read returns (about 1 run in 100 here), so, like a person, press it again.
        for _ in range(5):
            terminal.send(b"\x03")
            try:
                result = terminal.json_line(b"RESULT ", limit=5.0)
                break
            except TerminalTimeout:
                continue
        else:
            raise AssertionError(f"Ctrl-C never cancelled; the terminal showed {terminal.output!r}")
    finally:
        code = terminal.close()
    assert result["success"] is False
    assert result["error_type"] == "cancelled"
    assert code == 0


def _status_without_terminal(stdin: int | None, stderr: int | None) -> list[object]:
    out = subprocess.run([sys.executable, "-c", PROBE], stdin=stdin, stderr=stderr,
                         stdout=subprocess.PIPE, text=True, timeout=60, check=True)
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("STATUS "))
    return json.loads(line[len("STATUS "):])


def test_skipped_when_stdin_is_not_a_terminal() -> None:
    status, reason = _status_without_terminal(subprocess.DEVNULL, None)
    assert status == "skipped"
    assert "standard input is not a terminal" in str(reason)


def test_skipped_when_stderr_is_not_a_terminal() -> None:
    master, slave = pty.openpty()
    try:
        status, reason = _status_without_terminal(slave, subprocess.DEVNULL)
    finally:
        os.close(master)
        os.close(slave)
    assert status == "skipped"
    assert "standard error is not a terminal" in str(reason)


def test_a_call_without_a_terminal_fails_cleanly(janito: ToolsetTester,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from janito_system.ask_user import AskUser

    monkeypatch.setattr(sys, "stdin", io.StringIO("typed\n"))
    result = AskUser().run(question="Anyone there?")
    assert result == {"success": False, "question": "Anyone there?", "error_type": "no_terminal",
                      "error": result["error"]}
    monkeypatch.setattr(sys, "stdin", None)
    assert AskUser().run(question="Anyone?")["error_type"] == "no_terminal"
    assert AskUser.should_load() is False


def test_an_empty_question_is_refused() -> None:
    from janito_system.ask_user import AskUser

    from janito_core.schema import tool_schema

    # the rule is on the parameter: dispatch refuses the call before run()
    problems: list[dict[str, str]] = []
    tool_schema(AskUser).params["question"].info.convert("   ", "question", problems)
    assert problems and problems[0]["field"] == "question"


class _Desk(io.StringIO):
    """A terminal stand-in that answers each question after a pause, and logs who spoke."""

    def __init__(self, log: list[str]) -> None:
        super().__init__()
        self.log = log

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if "?" in text:
            self.log.append("asked " + text.strip("\n> ").lstrip("❓ "))
        return len(text)

    def readline(self, size: int | None = -1) -> str:
        time.sleep(0.2)
        self.log.append("answered")
        return "yes\n"


def test_the_questions_of_one_turn_are_asked_one_at_a_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from janito_core import Registry
    from janito_core.dispatch import execute_tool_calls

    log: list[str] = []
    desk = _Desk(log)
    monkeypatch.setattr(sys, "stdin", desk)
    monkeypatch.setattr(sys, "stderr", desk)
    registry = Registry(autoload=(), allowed=None)
    registry.add_toolset("system")
    turn = [{"type": "tool_use", "id": str(i), "name": "AskUser",
             "input": {"question": f"Question {i}?"}} for i in range(3)]
    items = execute_tool_calls(turn, registry=registry)
    assert [json.loads(item["content"])["answer"] for item in items] == ["yes"] * 3
    assert log[1::2] == ["answered"] * 3  # each answer before the next question
    assert sorted(log[0::2]) == ["asked Question 0?", "asked Question 1?", "asked Question 2?"]
