"""Progress reports: prefixes, permission colours, end="", stderr only, hook routing."""

from __future__ import annotations

import io
import logging
import os
import pty
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.distributions import clean_env, run_python, sources_of_testkit, write_distribution

from janito_core import Registry, hookimpl
from janito_core._context import active_registry
from janito_core.dispatch import call_tool
from janito_core.reporter import (
    Colors,
    ReportEvent,
    render,
    report_error,
    report_info,
    report_progress,
    report_result,
    report_start,
    report_warning,
)

ANSI = "\033["


class Capture:
    """A janito_report plugin that keeps every event."""

    def __init__(self) -> None:
        self.events: list[ReportEvent] = []

    @hookimpl
    def janito_report(self, event: ReportEvent) -> None:
        self.events.append(event)


@pytest.fixture
def captured(registry: Registry) -> Iterator[Capture]:
    """Events of ``registry``, including standalone reports made while it is active."""
    registry.names()
    capture = Capture()
    assert registry.plugins.register(capture, "tests:capture", "tests") is None
    token = active_registry.set(registry)
    try:
        yield capture
    finally:
        active_registry.reset(token)


# -- standalone functions ------------------------------------------------------------------


def test_standalone_prefixes_and_default_colours(captured: Capture,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    report_start("scanning")
    report_progress("halfway")
    report_result("done")
    report_error("broken")
    report_warning("careful")
    report_info("note")
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == "🔄 scanning\nhalfway\n✅ done\n❌ broken\n⚠️ careful\nℹ️ note\n"
    assert [(e.kind, e.prefix, e.color, e.tool) for e in captured.events] == [
        ("start", "🔄 ", Colors.CYAN, None),
        ("progress", "", None, None),
        ("result", "✅ ", Colors.GREEN, None),
        ("error", "❌ ", Colors.RED, None),
        ("warning", "⚠️ ", Colors.YELLOW, None),
        ("info", "ℹ️ ", Colors.CYAN, None),
    ]


def test_standalone_functions_take_an_explicit_colour(captured: Capture) -> None:
    report_start("a", color=Colors.MAGENTA)
    report_result("b", color=Colors.BLUE)
    report_info("c", color=Colors.WHITE)
    report_progress("d", color=Colors.BOLD)
    assert [e.color for e in captured.events] == [Colors.MAGENTA, Colors.BLUE, Colors.WHITE,
                                                  Colors.BOLD]


def test_end_builds_one_line_step_by_step(captured: Capture,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    report_start("copying", end="")
    report_progress(" 1", end="")
    report_progress(" 2", end="")
    report_result(" ok")
    assert capsys.readouterr().err == "🔄 copying 1 2✅  ok\n"
    assert [e.end for e in captured.events] == ["", "", "", "\n"]


def test_colours_are_ansi_codes() -> None:
    assert Colors.RED == "\033[31m" and Colors.GREEN == "\033[32m"
    assert Colors.YELLOW == "\033[33m" and Colors.BLUE == "\033[34m"
    assert Colors.CYAN == "\033[36m" and Colors.RESET == "\033[0m"


# -- BaseTool.report_* -------------------------------------------------------------------------


@pytest.mark.parametrize(("tool", "colour"), [
    ("ChattyNone", Colors.BLUE),
    ("ChattyRead", Colors.GREEN),
    ("ChattyWrite", Colors.YELLOW),
    ("ChattyExec", Colors.YELLOW),
])
def test_tool_reports_are_coloured_by_permissions(
    registry: Registry, captured: Capture, capsys: pytest.CaptureFixture[str], tool: str,
    colour: str,
) -> None:
    assert call_tool(tool, {}, registry=registry) == {"success": True}
    kinds = [(e.kind, e.color, e.prefix, e.tool) for e in captured.events]
    assert kinds == [
        ("start", colour, "", tool),
        ("progress", colour, "", tool),
        ("result", colour, "✅ ", tool),
        ("warning", Colors.YELLOW, "⚠️ ", tool),
        ("error", Colors.RED, "❌ ", tool),
    ]
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == "starting\nhalfway\n✅ finished\n⚠️ careful\n❌ failed once\n"


def test_tool_reports_build_one_line_with_end(registry: Registry,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert call_tool("ChattyRead", {"one_line": True}, registry=registry)["success"]
    assert capsys.readouterr().err == "step one two✅  done\n"


def test_reports_of_a_wrapper_call_reach_its_registry(registry: Registry,
                                                      captured: Capture) -> None:
    wrapper = registry.get("ChattyWrite")
    assert wrapper is not None
    token = active_registry.set(None)
    try:
        wrapper()
    finally:
        active_registry.reset(token)
    assert [e.tool for e in captured.events] == ["ChattyWrite"] * 5


# -- the renderer ------------------------------------------------------------------------------


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_render_colours_only_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    event = ReportEvent("result", "done", Colors.GREEN, "\n", None, "✅ ")
    plain = io.StringIO()
    render(event, plain)
    assert plain.getvalue() == "✅ done\n"
    terminal = FakeTerminal()
    render(event, terminal)
    assert terminal.getvalue() == f"{Colors.GREEN}✅ done{Colors.RESET}\n"
    monkeypatch.setenv("NO_COLOR", "1")
    terminal = FakeTerminal()
    render(event, terminal)
    assert terminal.getvalue() == "✅ done\n"


def test_render_survives_a_closed_stream() -> None:
    stream = io.StringIO()
    stream.close()
    render(ReportEvent("info", "x"), stream)


def _run_on_a_pty(code: str, path: list[Path], env: dict[str, str]) -> tuple[str, str]:
    """Run ``code`` with stderr on a pseudo-terminal; return (stdout, what the terminal got)."""
    controller, terminal = pty.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=terminal,
            env=clean_env(env, path=path), text=True,
        )
        os.close(terminal)
        terminal = -1
        chunks = []
        while True:
            try:
                data = os.read(controller, 4096)
            except OSError:  # EIO once the child closed its end
                break
            if not data:
                break
            chunks.append(data)
        stdout, _ = process.communicate(timeout=60)
        assert process.returncode == 0
    finally:
        os.close(controller)
        if terminal != -1:
            os.close(terminal)
    return stdout, b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


PTY_CODE = """
import sys
from janito_core import Registry
from janito_core.dispatch import call_tool
from janito_core.reporter import report_info
assert sys.stderr.isatty() and not sys.stdout.isatty()
registry = Registry(autoload=())
registry.add_toolset("testkit")
call_tool("ChattyRead", {}, registry=registry)
call_tool("ChattyWrite", {}, registry=registry)
report_info("standalone")
"""


def test_colour_on_a_terminal_and_never_with_no_color(sandbox: Path) -> None:
    write_distribution(sandbox, "janito-testkit", toolsets={"testkit": "janito_testkit"},
                       files=sources_of_testkit())
    stdout, shown = _run_on_a_pty(PTY_CODE, [sandbox], {})
    assert stdout == ""
    assert f"{Colors.GREEN}starting{Colors.RESET}\n" in shown
    assert f"{Colors.GREEN}✅ finished{Colors.RESET}\n" in shown
    assert f"{Colors.YELLOW}starting{Colors.RESET}\n" in shown
    assert f"{Colors.RED}❌ failed once{Colors.RESET}\n" in shown
    assert f"{Colors.CYAN}ℹ️ standalone{Colors.RESET}\n" in shown

    stdout, shown = _run_on_a_pty(PTY_CODE, [sandbox], {"NO_COLOR": "1"})
    assert stdout == ""
    assert ANSI not in shown
    assert "✅ finished\n" in shown and "ℹ️ standalone\n" in shown


def test_no_colour_when_stderr_is_a_pipe(sandbox: Path) -> None:
    write_distribution(sandbox, "janito-testkit", toolsets={"testkit": "janito_testkit"},
                       files=sources_of_testkit())
    completed = run_python(PTY_CODE.replace("assert sys.stderr.isatty() and", "assert"),
                           path=[sandbox])
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == ""
    assert ANSI not in completed.stderr
    assert "starting\nhalfway\n✅ finished\n⚠️ careful\n❌ failed once\n" in completed.stderr


# -- routed through the janito_report hook ------------------------------------------------------


def test_a_plugin_can_take_over_rendering(registry: Registry, captured: Capture,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    registry.plugins.manager.unregister(name="janito.stderr")
    call_tool("ChattyNone", {}, registry=registry)
    report_info("silent")
    assert capsys.readouterr().err == ""
    assert [e.message for e in captured.events] == [
        "starting", "halfway", "finished", "careful", "failed once", "silent"]


def test_an_installed_plugin_receives_every_report(sandbox: Path) -> None:
    write_distribution(sandbox, "janito-testkit", toolsets={"testkit": "janito_testkit"},
                       files=sources_of_testkit())
    write_distribution(sandbox, "acme-listen", plugins={"listen": "acme_listen"}, files={
        "acme_listen/__init__.py": '''
            import json
            import sys

            from janito_core import hookimpl


            @hookimpl
            def janito_report(event):
                sys.stdout.write(json.dumps([event.kind, event.message, event.tool]) + "\\n")
        ''',
    })
    completed = run_python(
        """
        from janito_core.reporter import report_info, report_start
        report_start("before any registry")
        from janito_core import Registry
        from janito_core.dispatch import call_tool
        registry = Registry(autoload=())
        registry.add_toolset("testkit")
        call_tool("ChattyExec", {"one_line": True}, registry=registry)
        report_info("after")
        """,
        path=[sandbox],
    )
    assert completed.returncode == 0, completed.stderr
    received = [line for line in completed.stdout.splitlines() if line]
    assert received == [
        '["start", "before any registry", null]',
        '["start", "step one", "ChattyExec"]',
        '["progress", " two", "ChattyExec"]',
        '["result", " done", "ChattyExec"]',
        '["info", "after", null]',
    ]
    # The built-in renderer still writes everything to stderr.
    assert completed.stderr == "🔄 before any registry\nstep one two✅  done\nℹ️ after\n"


def _chatty_registry(reports: str | None = None) -> Registry:
    from janito_core import Reporter, tool

    @tool()
    def chatter(reporter: Reporter) -> dict[str, object]:
        """Report one line of each kind.

        Args:
            reporter: Where the lines go.
        """
        reporter.report_progress("working")
        reporter.report_warning("careful")
        reporter.report_error("it broke")
        return {"success": True}

    registry = Registry(autoload=()) if reports is None else Registry(autoload=(), reports=reports)
    registry.add_tool(chatter)
    return registry


@pytest.mark.parametrize("reports", [None, "stderr", "logging", "off"])
def test_reports_go_to_stderr_to_logging_or_nowhere(reports: str | None,
                                                    capsys: pytest.CaptureFixture[str],
                                                    caplog: pytest.LogCaptureFixture) -> None:
    registry = _chatty_registry(reports)
    with caplog.at_level(logging.DEBUG, logger="janito"):
        assert call_tool("Chatter", {}, registry=registry)["success"] is True
    err = capsys.readouterr().err
    records = [(r.name, r.levelname, r.getMessage(), getattr(r, "janito_kind", None))
               for r in caplog.records if r.name.startswith("janito.reports")]
    if reports in (None, "stderr"):
        assert "working" in err and "careful" in err and "it broke" in err
        assert records == []
    elif reports == "logging":
        assert err == ""
        assert records == [
            ("janito.reports.Chatter", "INFO", "working", "progress"),
            ("janito.reports.Chatter", "WARNING", "careful", "warning"),
            ("janito.reports.Chatter", "ERROR", "it broke", "error"),
        ]
    else:
        assert err == "" and records == []


def test_reports_can_be_changed_and_hooks_see_them_either_way(
        capsys: pytest.CaptureFixture[str]) -> None:
    registry = _chatty_registry()
    registry.reports = "off"
    seen = Capture()
    registry.plugins.register(seen, "capture", None)
    assert call_tool("Chatter", {}, registry=registry)["success"] is True
    assert capsys.readouterr().err == ""
    assert [e.message for e in seen.events] == ["working", "careful", "it broke"]
    with pytest.raises(ValueError, match="reports must be one of stderr, logging, off"):
        registry.reports = "loud"
    with pytest.raises(ValueError):
        Registry(reports="print")


def test_counts_of_one_are_singular() -> None:
    from janito_core.results import counted

    assert [counted(n, "byte") for n in (0, 1, 2)] == ["0 bytes", "1 byte", "2 bytes"]
    assert counted(1.0, "second") == "1 second" and counted(2.5, "second") == "2.5 seconds"
    assert counted(1, "match", "matches") == "1 match" and counted(3, "match", "matches") == "3 matches"
    assert repr(_chatty_registry()).startswith("<Registry 1 tool, ")
