"""Progress reports: events routed through the ``janito_report`` hook.

A tool reports what it is doing with ``report_start``, ``report_progress``,
``report_result``, ``report_error``, ``report_warning`` and ``report_info``. Each call
becomes a :class:`ReportEvent` handed to every ``janito_report`` implementation; the
built-in one renders it on stderr (never stdout, which belongs to results), in colour
only on a terminal and never when ``NO_COLOR`` is set to a non-empty value. ``end=""`` leaves the line open
so the next report continues it.
"""

from __future__ import annotations

import os
import sys
from typing import NamedTuple, TextIO

from ._context import current_call_id, reports_sink


class Colors:
    """ANSI colours for reports."""

    RESET = "\033[0m"
    RED = "\033[31m"
    GREEN = "\033[32m"
    YELLOW = "\033[33m"
    BLUE = "\033[34m"
    MAGENTA = "\033[35m"
    CYAN = "\033[36m"
    WHITE = "\033[37m"
    BOLD = "\033[1m"
    DIM = "\033[2m"


PREFIXES = {
    "start": "",
    "progress": "",
    "result": "✅ ",
    "error": "❌ ",
    "warning": "⚠️ ",
    "info": "ℹ️ ",
    "standalone_start": "🔄 ",
}

KIND_COLORS = {
    "result": Colors.GREEN,
    "error": Colors.RED,
    "warning": Colors.YELLOW,
    "info": Colors.CYAN,
}


def permission_color(permissions: str) -> str:
    """The colour of a tool's reports: read green, write or execute yellow, none blue."""
    if "w" in permissions or "x" in permissions:
        return Colors.YELLOW
    if "r" in permissions:
        return Colors.GREEN
    return Colors.BLUE


class ReportEvent(NamedTuple):
    """One report: what kind, the text, its colour, how the line ends, who sent it."""

    kind: str
    message: str
    color: str | None = None
    end: str = "\n"
    tool: str | None = None
    prefix: str = ""
    call_id: str | None = None


class Reporter:
    """Progress reports of one tool, for a function tool that asks for ``reporter: Reporter``.

    The same reports as ``BaseTool.report_*``, in the tool's permission colour. A test
    calling the function directly can pass ``Reporter("Name")`` or any object with
    these five methods.
    """

    __slots__ = ("color", "tool")

    def __init__(self, tool: str | None = None, permissions: str = "") -> None:
        self.tool = tool
        self.color = permission_color(permissions)

    def _report(self, kind: str, message: str, end: str, color: str | None) -> None:
        emit(ReportEvent(kind, str(message), color, end, self.tool, PREFIXES[kind]))

    def report_start(self, message: str, end: str = "\n") -> None:
        self._report("start", message, end, self.color)

    def report_progress(self, message: str, end: str = "\n") -> None:
        self._report("progress", message, end, self.color)

    def report_result(self, message: str, end: str = "\n") -> None:
        self._report("result", message, end, self.color)

    def report_error(self, message: str, end: str = "\n") -> None:
        self._report("error", message, end, Colors.RED)

    def report_warning(self, message: str, end: str = "\n") -> None:
        self._report("warning", message, end, Colors.YELLOW)

    def __repr__(self) -> str:
        return f"<Reporter {self.tool or '-'}>"


def use_color(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def render(event: ReportEvent, stream: TextIO | None = None) -> None:
    """Write ``event`` as one (possibly unfinished) line on ``stream`` (default stderr)."""
    out = stream if stream is not None else sys.stderr
    text = event.prefix + event.message
    if event.color and use_color(out):
        text = f"{event.color}{text}{Colors.RESET}"
    try:
        out.write(text + event.end)
        out.flush()
    except (OSError, ValueError):
        pass


def emit(event: ReportEvent) -> None:
    """Hand ``event`` to the report hook of the registry that is running a tool (outside a
    call, of the default registry; with no registry at all, to the stderr renderer)."""
    if event.call_id is None:
        call_id = current_call_id.get()
        if call_id is not None:
            event = event._replace(call_id=call_id)
    sink = reports_sink()
    if sink is None:
        render(event)
    else:
        sink.report(event)


def _standalone(kind: str, message: str, color: str | None, end: str) -> None:
    emit(ReportEvent(kind, str(message), color, end, None, PREFIXES[kind]))


def report_start(message: str, color: str = Colors.CYAN, end: str = "\n") -> None:
    """Announce the start of an action (prefixed 🔄)."""
    emit(ReportEvent("start", str(message), color, end, None, PREFIXES["standalone_start"]))


def report_progress(message: str, color: str | None = None, end: str = "\n") -> None:
    _standalone("progress", message, color, end)


def report_result(message: str, color: str = Colors.GREEN, end: str = "\n") -> None:
    _standalone("result", message, color, end)


def report_error(message: str, color: str = Colors.RED, end: str = "\n") -> None:
    _standalone("error", message, color, end)


def report_warning(message: str, color: str = Colors.YELLOW, end: str = "\n") -> None:
    _standalone("warning", message, color, end)


def report_info(message: str, color: str = Colors.CYAN, end: str = "\n") -> None:
    _standalone("info", message, color, end)
