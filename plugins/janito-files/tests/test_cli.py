"""The command-line harness of every tool module: python -m janito_files.MODULE ARGS --json."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

CASES = [
    ("read_file", ["a.txt", "--max-lines", "1"], lambda r: r["content"].startswith("alpha\n")),
    ("read_multiple_files", ["a.txt", "b.txt"], lambda r: r["read"] == 2),
    ("word_count", ["a.txt"], lambda r: r["words"] == 2),
    ("list_files", ["--directory", ".", "--recursive"], lambda r: "sub/c.txt" in r["entries"]),
    ("list_files", [], lambda r: r["entries"] == ["a.txt", "b.txt", "sub/"]),
    ("find_files", [".", "--pattern", "*.txt"],
     lambda r: r["files"] == ["a.txt", "b.txt", "sub/c.txt"]),
    ("find_files", [".", "--file-type", "dir"], lambda r: r["files"] == ["sub/"]),
    ("search_text", [".", "GAMMA"], lambda r: r["count"] == 0),
    ("search_text", [".", "GAMMA", "--no-case-sensitive"], lambda r: r["count"] == 1),
    ("search_text", [".", "gamma", "--count-only"], lambda r: r["total_matches"] == 1),
    ("search_regex", [".", "^g[a-z]+a$"], lambda r: r["count"] == 1),
    ("create_file", ["new.txt", "--content", "hello"], lambda r: r["created"] is True),
    ("replace_text_in_file", ["b.txt", "beta", "BETA"], lambda r: r["replacements"] == 1),
    ("move_file", ["b.txt", "new/moved.txt", "--create-dirs"],
     lambda r: r["destination"] == "new/moved.txt"),
    ("delete_file", ["a.txt"], lambda r: r["success"]),
    ("create_directory", ["x/y"], lambda r: r["created"] is True),
    ("remove_directory", ["sub", "--recursive"], lambda r: r["removed_files"] == 1),
]


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cwd"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_text("alpha\nsecond\n")
    (folder / "b.txt").write_text("beta\n")
    (folder / "sub" / "c.txt").write_text("gamma\n")
    monkeypatch.chdir(folder)
    return folder


@pytest.mark.parametrize(("module", "argv", "check"), CASES,
                         ids=[f"{m}-{i}" for i, (m, _, _) in enumerate(CASES)])
def test_main_runs_the_tool(here: Path, capsys: pytest.CaptureFixture[str], module: str,
                            argv: list[str], check: Any) -> None:
    main = importlib.import_module(f"janito_files.{module}").main
    assert main([*argv, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["success"] is True and check(result), result


def test_failure_exit_code_and_message(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from janito_files.read_file import main

    assert main(["missing.txt"]) == 1
    assert "not_found" in capsys.readouterr().err
    assert main(["../escape.txt", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["error_type"] == "outside_workspace"


def test_plain_output_prints_the_content(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from janito_files.read_file import main

    assert main(["a.txt"]) == 0
    assert capsys.readouterr().out == "alpha\nsecond\n\n"


def test_workspace_option(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from janito_files.read_file import main

    assert main(["c.txt", "--workspace", str(here / "sub"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["content"] == "gamma\n"


def test_arguments_are_checked_as_a_model_s_would_be(here: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from janito_files.read_file import main

    assert main(["a.txt", "--max-lines", "many"]) == 1
    assert "error (invalid_arguments)" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["a.txt", "--no-such-option"])
    assert exc.value.code == 2


def test_python_dash_m(here: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "janito_files.read_file", "a.txt", "--start-line", "2", "--json"],
        cwd=here, capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["content"] == "second\n"
    usage = subprocess.run([sys.executable, "-m", "janito_files.search_text", "--help"],
                           cwd=here, capture_output=True, text=True, timeout=60, check=False)
    assert usage.returncode == 0 and "python -m janito_files.search_text" in usage.stdout
    assert "--exclude" in usage.stdout and "--use-regex" not in usage.stdout
