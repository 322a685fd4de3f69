"""llm: janito's tools as llm tools, run by llm-echo's ``echo`` model (the test model of
llm's plugin authors), in Python and through the ``llm`` command."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import llm
import pytest
from framework_setup import (
    EXPECTED_FORECAST,
    RUNS,
    Setup,
    forecast_registry,
    parsed,
)
from helpers.distributions import write_distribution

from janito_core.integrations.llm import before_call, tools
from janito_core.journal import Journal

HERE = Path(__file__).resolve().parent


def prompt(*calls: tuple[str, dict[str, Any]]) -> str:
    """What makes the echo model call these tools."""
    return json.dumps({"tool_calls": [{"name": n, "arguments": a} for n, a in calls]})


def tool_results(text: str) -> list[dict[str, Any]]:
    """The tools' answers the echo model was sent, as it echoes them back."""
    start = text.rindex('{\n  "prompt"')
    return [parsed(result["output"]) for result in json.loads(text[start:])["tool_results"]]


def test_a_conversation_reads_is_refused_a_write_and_is_asked_twice(setup: Setup) -> None:
    offered = tools(setup.registry)
    setup.take_w_away()
    asked: list[Any] = []

    def ask(request: Any) -> Any:
        asked.append(request)
        return True if request.arguments["check"] == "lint" else "not today"

    conversation = llm.get_model("echo").conversation()

    def turn(*calls: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
        chain = conversation.chain(prompt(*calls), tools=offered, before_call=before_call(ask))
        return tool_results(list(chain.responses())[-1].text())

    first = turn(("CountLetters", {"text": "hello world"}), ("WriteNote", {"name": "n", "text": "x"}))
    assert first[0] == {"success": True, "letters": 10}
    assert first[1]["error_type"] == "permission_denied"
    assert asked == []
    assert turn(("RunCheck", {"check": "lint"})) == [{"success": True, "ran": "lint"}]
    [declined] = turn(("RunCheck", {"check": "deploy"}))
    assert declined["error_type"] == "approval_declined" and "not today" in declined["error"]
    assert [(a.tool, a.arguments) for a in asked] == [("RunCheck", {"check": "lint"}),
                                                      ("RunCheck", {"check": "deploy"})]
    setup.assert_conversation_logged("llm")


def test_without_before_call_an_asked_call_is_not_run(setup: Setup) -> None:
    chain = llm.get_model("echo").chain(prompt(("RunCheck", {"check": "lint"})),
                                        tools=tools(setup.registry, ["RunCheck"]))
    [answer] = tool_results(list(chain.responses())[-1].text())
    assert answer["error_type"] == "approval_required"
    assert RUNS == []


def test_other_tools_go_to_the_next_before_call(setup: Setup) -> None:
    seen: list[str] = []

    def llm_time() -> str:
        """The time."""
        return "noon"

    chain = llm.get_model("echo").chain(
        prompt(("llm_time", {}), ("CountLetters", {"text": "ab"})),
        tools=[llm_time, *tools(setup.registry, ["CountLetters"])],
        before_call=before_call(lambda request: True, then=lambda t, c: seen.append(c.name)))
    results = list(chain.responses())[-1].text()
    assert seen == ["llm_time"]
    outputs = [r["output"] for r in json.loads(results[results.rindex('{\n  "prompt"'):])["tool_results"]]
    assert outputs == ["noon", '{"success": true, "letters": 2}']


def test_a_tool_whose_result_is_a_pydantic_model(tmp_path: Path) -> None:
    chain = llm.get_model("echo").chain(prompt(("GetForecast", {"city": "Lisbon"})),
                                        tools=tools(forecast_registry(tmp_path)))
    assert tool_results(list(chain.responses())[-1].text()) == [EXPECTED_FORECAST]


def test_a_yes_is_bound_to_the_arguments_the_person_saw(setup: Setup) -> None:
    """A yes ``before_call`` got stays with the call it was asked about: a call made later
    under the same id with other arguments (the first never ran: a before_call after
    janito's cancelled it) is asked about, not run."""
    [run_check] = tools(setup.registry, ["RunCheck"])
    before_call(lambda request: True)(run_check, llm.ToolCall("RunCheck", {"check": "lint"}, "c1"))
    later = llm.ToolCall("RunCheck", {"check": "EVIL"}, "c1")
    answer = parsed(run_check.implementation(llm_tool_call=later, **later.arguments))
    assert answer["error_type"] == "approval_required"
    assert RUNS == []


# -- the llm command --------------------------------------------------------------------


@pytest.fixture
def command(tmp_path: Path, isolated: Path) -> dict[str, str]:
    """The environment of an ``llm`` command that finds toolset ``notes`` installed, under
    the person's policy (mode ask) in janito's configuration folder."""
    site = tmp_path / "site"
    write_distribution(site, "janito-notes", "1.0", toolsets={"notes": "janito_notes"})
    isolated.mkdir(parents=True, exist_ok=True)
    (isolated / "policy.toml").write_text('mode = "ask"\n', encoding="utf-8")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(HERE),
                                         *filter(None, [env.get("PYTHONPATH")])])
    env["LLM_USER_PATH"] = str(tmp_path / "llm")
    env["NO_COLOR"] = "1"
    (tmp_path / "work").mkdir()
    return env


def llm_command(env: dict[str, str], cwd: Path, *args: str, answer: str | None = None
                ) -> tuple[int, str]:
    """Run ``llm ARGS`` on a terminal of its own (llm reads a prompt from a stdin that is
    not one); type ``answer`` when it asks. Its exit status and everything it printed."""
    controller, terminal = pty.openpty()
    command = [sys.executable, "-c", "from llm.cli import cli; cli()", *args]
    process = subprocess.Popen(command, stdin=terminal, stdout=terminal, stderr=terminal,
                               cwd=cwd, env=env, close_fds=True)
    os.close(terminal)
    output = b""
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([controller], [], [], 1)
            if ready:
                try:
                    chunk = os.read(controller, 65536)
                except OSError:  # the terminal closed: the command has ended
                    break
                if not chunk:
                    break
                output += chunk
                if answer is not None and b"Approve tool call?" in output:
                    os.write(controller, answer.encode() + b"\n")
                    answer = None
            elif process.poll() is not None:
                break
        return process.wait(timeout=60), output.decode("utf-8", "replace")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(controller)


def test_the_command_offers_a_toolbox_per_toolset(command: dict[str, str], tmp_path: Path) -> None:
    status, shown = llm_command(command, tmp_path / "work", "tools", "list")
    assert status == 0, shown
    assert "JanitoNotes(privileges" in shown and "RunCheck(check: 'str'" in shown


def test_the_command_asks_with_ta_and_refuses_without(command: dict[str, str], tmp_path: Path,
                                                      isolated: Path) -> None:
    work = tmp_path / "work"
    read = prompt(("CountLetters", {"text": "hello world"}))
    status, shown = llm_command(command, work, "-m", "echo", "-T", "JanitoNotes", read)
    assert status == 0 and '\\"letters\\": 10' in shown, shown

    check = prompt(("RunCheck", {"check": "lint"}))
    status, shown = llm_command(command, work, "-m", "echo", "-T", "JanitoNotes", check)
    assert status == 0 and "approval_required" in shown, shown

    status, shown = llm_command(command, work, "-m", "echo", "-T", "JanitoNotes", "--ta", check,
                                answer="y")
    assert status == 0 and '\\"ran\\": \\"lint\\"' in shown, shown
    status, shown = llm_command(command, work, "-m", "echo", "-T", "JanitoNotes", "--ta",
                                prompt(("RunCheck", {"check": "deploy"})), answer="n")
    assert status == 0 and "Cancelled" in shown and "deploy" not in shown.split("Cancelled")[1]

    status, shown = llm_command(command, work, "-m", "echo", "-T", 'JanitoNotes("r")', check)
    assert status == 0 and "does not exist" in shown, shown

    logged = [(line["tool"], line.get("error_type"), line.get("approved"), line["caller"]["kind"])
              for line in Journal(isolated / "journal").audit_log.lines()]
    assert logged == [("CountLetters", None, None, "llm"),
                      ("RunCheck", "approval_required", False, "llm"),
                      ("RunCheck", None, True, "llm")]
