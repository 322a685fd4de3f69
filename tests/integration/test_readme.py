"""The README is true as written: its commands print what it shows, its Python runs.

Run with every distribution of the repository installed (``nox -s tests-integration``).
The console example runs in the repository's root, as a person would run it there, with
standard input a terminal (AskUser loads only then): each line the README shows must be
printed, in order, where ``...`` stands for any number of lines. The Python example runs
as shown. The two commands at the top run verbatim on a Debian-shaped machine in
tests/packaging/test_fresh_machine.py.
"""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.distributions import clean_env

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def blocks(language: str) -> list[str]:
    text = README.read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.S | re.M)


def console_examples() -> list[tuple[str, list[str]]]:
    """(command, the lines shown after it) of every ``$`` line of the console blocks."""
    found: list[tuple[str, list[str]]] = []
    for block in blocks("console"):
        for line in block.splitlines():
            if line.startswith("$ "):
                found.append((line[2:], []))
            elif found:
                found[-1][1].append(line)
    return found


def shown_in(shown: list[str], printed: list[str]) -> str | None:
    """None when ``printed`` is what ``shown`` says (``...`` is any run of lines); else
    the first line shown that was not printed where it should be."""
    at = 0
    skipping = False
    for line in shown:
        if line == "...":
            skipping = True
            continue
        if skipping:
            while at < len(printed) and printed[at] != line:
                at += 1
        if at >= len(printed) or printed[at] != line:
            return line
        at += 1
        skipping = False
    if not skipping and at != len(printed):
        return f"(more printed than shown: {printed[at]!r})"
    return None


def environment() -> dict[str, str]:
    env = clean_env({"NO_COLOR": "1", "COLUMNS": "200"})
    env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")])
    return env


def test_the_readme_has_the_examples_this_test_runs() -> None:
    commands = [command for command, _ in console_examples()]
    assert commands == ["janito tools", "janito run WordCount --filepath LICENSE"]
    assert len(blocks("python")) == 1
    assert "janito -r " not in README.read_text(encoding="utf-8")


@pytest.mark.parametrize("command, shown", console_examples())
def test_console_examples_print_what_the_readme_shows(command: str, shown: list[str]) -> None:
    # standard input and error a terminal, as in a person's shell (AskUser loads only then)
    terminal, other_end = pty.openpty()
    try:
        done = subprocess.run(command, shell=True, cwd=ROOT, env=environment(),
                              stdin=terminal, stdout=subprocess.PIPE, stderr=terminal,
                              text=True, timeout=120)
    finally:
        os.close(terminal)
        os.close(other_end)
    assert done.returncode == 0, done.stdout
    printed = [line.rstrip() for line in done.stdout.splitlines()]
    while printed and not printed[-1]:
        printed.pop()
    assert shown_in(shown, printed) is None, (
        f"{command}: the README shows {shown_in(shown, printed)!r}; it printed:\n{done.stdout}")


def test_the_python_example_runs_as_shown(tmp_path: Path) -> None:
    [code] = blocks("python")
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=ROOT, env=environment(),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    expected = re.search(r"# (\S+)\s*$", code.strip().splitlines()[-1])
    assert expected and done.stdout.strip() == expected.group(1)
    # reports went to logging, which basicConfig writes on stderr as records
    assert "INFO:janito.reports.WordCount:" in done.stderr


@pytest.mark.skipif(not (ROOT / "plugins" / "janito-files" / "pyproject.toml").is_file(),
                    reason="a copy of the tests run against installed wheels has only the "
                           "plugins' READMEs")
def test_the_shell_block_matches_the_checkout() -> None:
    [first, *_] = blocks("bash")
    install = next(line for line in first.splitlines() if line and not line.startswith("#"))
    for folder in re.findall(r"\./plugins/[\w-]+", install):
        assert (ROOT / folder / "pyproject.toml").is_file(), folder
    for folder in re.findall(r"\./plugins/[\w-]+", README.read_text(encoding="utf-8")):
        assert (ROOT / folder / "pyproject.toml").is_file(), folder


def test_the_calls_the_readme_says_are_refused_are_refused(tmp_path: Path) -> None:
    """Each `janito run ...` the README says "is refused" is refused before anything is
    done, and the coercion it names really happens."""
    import json
    import shlex

    text = " ".join(README.read_text(encoding="utf-8").split())
    refused = re.findall(r"`(janito run [^`]+)` is refused", text)
    assert len(refused) == 3, refused
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    expected = ["permission_denied", "invalid_arguments", "outside_workspace"]
    for command, error_type in zip(refused, expected, strict=True):
        done = subprocess.run(shlex.split(command), cwd=workspace, env=environment(),
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=120)
        result = json.loads(done.stdout)
        assert done.returncode == 1 and result["success"] is False, (command, done.stdout)
        assert result["error_type"] == error_type, (command, result)
        if error_type == "invalid_arguments":
            assert [d["field"] for d in result["details"]] == ["filepath"]
    assert list(workspace.iterdir()) == []  # nothing was written
    coerced = re.search(r"`--args '(\{[^`]*\})'` counts the words of a file called `(\w+)`", text)
    assert coerced, "the README no longer names the coercion"
    (workspace / coerced.group(2)).write_text("one two three\n", encoding="utf-8")
    done = subprocess.run(["janito", "run", "WordCount", "--args", coerced.group(1)],
                          cwd=workspace, env=environment(), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout
    assert json.loads(done.stdout)["words"] == 3
