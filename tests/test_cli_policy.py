"""The policy through the ``janito`` command: read from its files, shown, checked, asked.

``policy.toml`` in the configuration folder is the person's, ``.janito/policy.toml`` in
the workspace the project's (it can only restrict). ``janito run`` asks on the terminal,
and refuses when there is none.
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import time
from pathlib import Path

import pytest
from helpers.distributions import clean_env
from test_cli import COMMAND, Janito, make_janito

PERSON = """\
mode = "auto-edit"

[[rules]]
action = "ask"
tools = ["WriteNote"]
reason = "notes are precious"

[[rules]]
action = "deny"
tools = ["RunThing"]
"""
PROJECT = """\
mode = "full-auto"

[[rules]]
action = "allow"
tools = ["*"]

[[rules]]
action = "deny"
tools = ["ChattyRead"]
"""


@pytest.fixture
def janito(testkit_dir: Path, workspace: Path, tmp_path: Path) -> Janito:
    made = make_janito(testkit_dir, workspace, tmp_path)
    made.config.mkdir(parents=True, exist_ok=True)
    (made.config / "policy.toml").write_text(PERSON)
    (workspace / ".janito").mkdir()
    (workspace / ".janito" / "policy.toml").write_text(PROJECT)
    return made


def test_policy_show_merges_both_files_and_drops_the_projects_allows(janito: Janito) -> None:
    ran = janito("policy", "show", "--json")
    assert ran.code == 0, ran
    shown = ran.json()
    person = str(janito.config / "policy.toml")
    project = str(janito.cwd / ".janito" / "policy.toml")
    assert shown["mode"] == "auto-edit" and shown["mode_source"] == person
    assert shown["files"] == [person, project]
    assert [(r["action"], r["tools"], r["source"]) for r in shown["rules"]] == [
        ("ask", ["WriteNote"], f"{person}:3"), ("deny", ["RunThing"], f"{person}:8"),
        ("deny", ["ChattyRead"], f"{project}:7")]
    text = janito("policy", "show")
    assert text.code == 0 and f"ask tools WriteNote: notes are precious  ({person}:3)" in text.out


def test_policy_check_says_the_decision_the_rule_and_where(janito: Janito) -> None:
    person = str(janito.config / "policy.toml")
    ran = janito.many({
        "ask": ["policy", "check", "-t", "testkit", "WriteNote", "--args",
                '{"filepath": "a.txt", "text": "x"}', "--json"],
        "deny": ["policy", "check", "-t", "testkit", "RunThing", "--args", '{"command": "ls"}',
                 "--json"],
        "allow": ["policy", "check", "-t", "testkit", "ReadNote", "--args",
                  '{"filepath": "a.txt"}', "--json"],
        "privileges": ["policy", "check", "-t", "testkit", "-r", "WriteNote", "--args",
                       '{"filepath": "a.txt", "text": "x"}', "--json"],
        "invalid": ["policy", "check", "-t", "testkit", "WriteNote", "--args", '{"filepath": "a"}'],
    })
    assert ran["ask"].json() == {"decision": "ask", "rule": "ask tools WriteNote: notes are precious",
                                 "source": f"{person}:3",
                                 "reason": "the policy asks a person first (ask tools WriteNote: "
                                           f"notes are precious, {person}:3)"}
    assert ran["deny"].json()["decision"] == "deny" and ran["deny"].json()["source"] == f"{person}:8"
    assert ran["allow"].json()["decision"] == "allow"
    assert ran["privileges"].json()["source"] == "privileges"
    assert ran["invalid"].code == 2 and "text: missing required field" in ran["invalid"].err


def test_janito_tools_shows_what_the_policy_asks_and_denies(janito: Janito) -> None:
    rows = {r["name"]: r for r in janito("tools", "-t", "testkit", "--json").json()
            if r.get("name")}
    assert rows["WriteNote"]["policy"]["decision"] == "ask"
    assert rows["RunThing"]["policy"]["decision"] == "deny"
    assert rows["ChattyRead"]["policy"]["decision"] == "deny"
    assert "policy" not in rows["ReadNote"]
    table = janito("tools", "-t", "testkit").out
    assert "POLICY" in table.splitlines()[0]
    write_line = next(line for line in table.splitlines() if line.startswith("WriteNote "))
    assert " ask " in write_line


def test_janito_run_refuses_an_asked_call_without_a_terminal(janito: Janito) -> None:
    ran = janito("run", "-t", "testkit", "WriteNote", "--filepath", "a.txt", "--text", "x")
    assert ran.code == 1
    result = ran.json()
    assert result["error_type"] == "approval_required", result
    assert "notes are precious" in result["error"] and "approval required" not in ran.out
    assert not (janito.cwd / "a.txt").exists()
    denied = janito("run", "-t", "testkit", "RunThing", "--command", "ls").json()
    assert denied["error_type"] == "denied_by_policy"


def _on_terminal(janito: Janito, answer: str, *args: str) -> tuple[int, str, str]:
    """Run janito with stdin and stderr on a terminal; type ``answer`` at the prompt."""
    env = clean_env({"JANITO_CONFIG_DIR": str(janito.config)}, path=janito.path)
    controller, terminal = pty.openpty()
    proc = subprocess.Popen([*COMMAND, *args], cwd=janito.cwd, env=env, stdin=terminal,
                            stderr=terminal, stdout=subprocess.PIPE, text=True)
    os.close(terminal)
    seen = b""
    deadline = time.monotonic() + 60
    answered = False
    while proc.poll() is None and time.monotonic() < deadline:
        ready, _, _ = select.select([controller], [], [], 0.5)
        if not ready:
            continue
        try:
            chunk = os.read(controller, 4096)
        except OSError:
            break
        seen += chunk
        if not answered and b"Allow it?" in seen:
            os.write(controller, answer.encode() + b"\n")
            answered = True
    out, _ = proc.communicate(timeout=60)
    os.close(controller)
    return proc.returncode, out, seen.decode("utf-8", "replace")


@pytest.mark.parametrize("answer, written", [("y", True), ("n", False), ("always", True),
                                             ("", False)])
def test_janito_run_asks_on_the_terminal(janito: Janito, answer: str, written: bool) -> None:
    code, out, shown = _on_terminal(janito, answer, "run", "-t", "testkit", "WriteNote",
                                    "--filepath", "a.txt", "--text", "hello")
    assert "WriteNote(" in shown and "notes are precious" in shown, shown
    result = json.loads(out)
    assert result["success"] is written and code == (0 if written else 1), result
    assert (janito.cwd / "a.txt").exists() is written
    if not written:
        assert result["error_type"] == "approval_declined"


def test_a_policy_that_cannot_be_read_stops_the_command(janito: Janito) -> None:
    (janito.config / "policy.toml").write_text('[[rules]]\naction = "maybe"\ntools = ["X"]\n')
    ran = janito("run", "-t", "testkit", "ReadNote", "--filepath", "a.txt")
    assert ran.code == 2
    assert f"{janito.config / 'policy.toml'}:1" in ran.err and "action must be one of" in ran.err
