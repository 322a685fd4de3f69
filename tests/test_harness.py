"""The main() harness every tool module offers: parsing, dispatch, output, exit status."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Literal

import pytest

from janito_core import BaseTool, tool
from janito_core.harness import build_parser, run_main


@tool(permissions="r")
class Echo(BaseTool):
    """Echo the arguments."""

    def run(self, paths: str | list[str], mode: Literal["a", "b"] = "a", count: int = 1,
            loud: bool = False) -> dict[str, Any]:
        """Echo.

        Args:
            paths: One path or several.
            mode: Which mode.
            count: How many times.
            loud: Shout.
        """
        return {"success": True, "paths": paths, "mode": mode, "count": count, "loud": loud}


@tool(permissions="r")
class Show(BaseTool):
    """Show a text, or run and fail."""

    def run(self, text: str, fail: bool = False) -> dict[str, Any]:
        """Show.

        Args:
            text: The text.
            fail: Fail after writing streams.
        """
        if fail:
            return {"success": False, "error": "it failed", "error_type": "nonzero_exit",
                    "stdout": "out\n", "stderr": "err\n"}
        return {"success": True, "content": text}


@tool(permissions="r")
class Unavailable(BaseTool):
    """Never available here."""

    def run(self) -> dict[str, Any]:
        """Run."""
        return {"success": True}

    @classmethod
    def should_load(cls) -> bool:
        return cls.skip("no such service on this machine")


def test_required_are_positional_and_the_rest_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_main(Echo, ["x", "y", "--mode", "b", "--count", "3", "--loud", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    # "3" arrives as text and is converted as a model's "3" would be
    assert (result["paths"], result["mode"], result["count"], result["loud"]) == (
        ["x", "y"], "b", 3, True)


def test_help_names_the_options_with_their_documentation() -> None:
    text = build_parser(Echo).format_help()
    for expected in ("paths", "--mode {a,b}", "--count", "--loud, --no-loud", "--json",
                     "--workspace DIR", "One path or several.", "How many times."):
        assert expected in text


def test_bad_values_fail_like_a_model_s_call(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_main(Echo, ["x", "--count", "many"]) == 1
    assert capsys.readouterr().err.startswith("error (invalid_arguments):")
    with pytest.raises(SystemExit) as exit_info:
        run_main(Echo, ["x", "--mode", "c"])
    assert exit_info.value.code == 2


def test_content_is_printed_as_it_is(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_main(Show, ["line one\nline two"]) == 0
    assert capsys.readouterr().out == "line one\nline two\n"


def test_a_failed_run_prints_its_streams_then_the_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_main(Show, ["x", "--fail"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "out\n"
    assert captured.err == "err\nerror (nonzero_exit): it failed\n"


def test_other_results_print_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_main(Echo, ["x"]) == 0
    assert json.loads(capsys.readouterr().out)["paths"] == ["x"]


def test_a_tool_that_cannot_work_here_exits_2_and_says_why(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert run_main(Unavailable, ["--json"]) == 2
    result = json.loads(capsys.readouterr().out)
    assert result["error_type"] == "tool_unavailable"
    assert "no such service on this machine" in result["error"]


def test_python_dash_m_names_the_module_and_exits_with_the_status(tmp_path: Path) -> None:
    package = tmp_path / "harness_probe"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "shout.py").write_text(textwrap.dedent('''
        from typing import Any

        from janito_core import BaseTool, tool


        @tool(permissions="r")
        class Shout(BaseTool):
            """Shout a word."""

            def run(self, word: str) -> dict[str, Any]:
                """Shout.

                Args:
                    word: The word.
                """
                if not word:
                    return {"success": False, "error": "no word", "error_type": "invalid_arguments"}
                return {"success": True, "content": word.upper()}


        def main(argv: list[str] | None = None) -> int:
            from janito_core.harness import run_main

            return run_main(Shout, argv)


        if __name__ == "__main__":
            main()
    '''))
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "harness_probe.shout", "hello"], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "HELLO\n")
    failed = subprocess.run([sys.executable, "-m", "harness_probe.shout", ""], env=env,
                            cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert failed.returncode == 1 and "error (invalid_arguments): no word" in failed.stderr
    usage = subprocess.run([sys.executable, "-m", "harness_probe.shout", "--help"], env=env,
                           cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert usage.stdout.startswith("usage: python -m harness_probe.shout ")
