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


@tool(permissions="r")
class Export(BaseTool):
    """Export a workspace of some project."""

    def run(self, json: str, workspace: str = "main", label: str = "") -> dict[str, Any]:
        """Export.

        Args:
            json: Where to write the export (required, so a positional argument).
            workspace: Which of the project's workspaces.
            label: A label.
        """
        return {"success": True, "json": json, "workspace": workspace, "label": label}


def test_an_optional_parameter_named_like_an_own_option_leaves_it_its_meaning(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # argparse would refuse the clash outright; the harness's option wins, as janito run's
    # do, and the conformance check tells the author to rename the parameter
    text = build_parser(Export).format_help()
    assert "--workspace DIR" in text and "the workspace root" in text
    assert run_main(Export, ["out.json", "--label", "x", "--json", "--workspace", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out) == {"success": True, "json": "out.json",
                                                   "workspace": "main", "label": "x"}


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


def test_python_dash_m_imports_nothing_from_the_working_folder(tmp_path: Path) -> None:
    """A tool run as ``python -m pkg.module`` in a folder a model wrote into: the standard
    modules janito imports once the tool module is loaded (dispatch's ``difflib`` among
    them) are never taken from that folder."""
    site = tmp_path / "site"
    (site / "harness_guard").mkdir(parents=True)
    (site / "harness_guard" / "__init__.py").write_text("")
    (site / "harness_guard" / "probe.py").write_text(textwrap.dedent('''
        import json
        import os
        import sys

        from janito_core import BaseTool, tool


        @tool(permissions="r")
        class Probe(BaseTool):
            """Import a module, as a tool may on demand."""

            def run(self, module: str) -> dict:
                """Probe.

                Args:
                    module: The module to import.
                """
                __import__(module)
                return {"success": True, "content": "imported " + module}


        def main(argv=None):
            before = set(sys.modules)
            try:
                from janito_core.harness import run_main

                return run_main(Probe, argv)
            finally:
                with open(os.environ["PROBE_RECORD"], "w") as out:
                    json.dump(sorted(set(sys.modules) - before), out)


        if __name__ == "__main__":
            main()
    '''))
    record = tmp_path / "record.json"
    env = {**os.environ, "PYTHONPATH": str(site), "PROBE_RECORD": str(record)}
    clean = tmp_path / "clean"
    clean.mkdir()
    first = subprocess.run([sys.executable, "-m", "harness_guard.probe", "difflib"], env=env,
                           cwd=clean, capture_output=True, text=True, timeout=60)
    assert (first.returncode, first.stdout) == (0, "imported difflib\n"), first.stderr
    # top-level modules first imported once the tool module is loaded (a submodule of an
    # already imported package, such as importlib.metadata, is not looked up in the folder)
    lazily = {name for name in json.loads(record.read_text()) if "." not in name}
    planted = sorted((lazily | {"difflib", "uuid", "secrets"}) & set(sys.stdlib_module_names))
    assert "difflib" in lazily and "argparse" in lazily, lazily

    workspace = tmp_path / "workspace"
    workspace.mkdir()
    marker = tmp_path / "ran.txt"
    for name in planted:
        (workspace / f"{name}.py").write_text(
            f"open({str(marker)!r}, 'a').write({name!r} + '\\n')\n", encoding="utf-8")
    for module in ("difflib", "uuid", "secrets"):
        done = subprocess.run([sys.executable, "-m", "harness_guard.probe", module], env=env,
                              cwd=workspace, capture_output=True, text=True, timeout=60)
        assert (done.returncode, done.stdout) == (0, f"imported {module}\n"), done.stderr
    assert not marker.exists(), marker.read_text()
    if sys.version_info >= (3, 11):  # ``python -P`` adds nothing to remove; the tool still runs
        done = subprocess.run([sys.executable, "-P", "-m", "harness_guard.probe", "difflib"],
                              env=env, cwd=workspace, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and not marker.exists(), done.stderr


def test_forget_working_folder_takes_off_only_what_python_put_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from janito_core.harness import forget_working_folder

    monkeypatch.chdir(tmp_path)
    rest = [p for p in sys.path if p not in ("", str(tmp_path))]
    # Under -P or -I (the installed-wheel suites run so) Python put nothing first: kept.
    safe = bool(getattr(sys.flags, "safe_path", False))
    for first in ("", str(tmp_path), os.path.join(str(tmp_path), ".")):
        monkeypatch.setattr(sys, "path", [first, *rest])
        forget_working_folder()
        assert sys.path == ([first, *rest] if safe else rest), first
    monkeypatch.setattr(sys, "path", ["/some/console/script/folder", *rest])
    forget_working_folder()
    assert sys.path[0] == "/some/console/script/folder"


def test_python_dash_m_janito_core_cli_imports_nothing_from_the_working_folder(
        tmp_path: Path) -> None:
    """``python -m janito_core.cli run`` of an unknown tool makes dispatch import difflib
    to suggest a name: the difflib.py in the working folder must not be it."""
    marker = tmp_path / "ran.txt"
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    for name in ("difflib", "uuid", "hmac"):
        (workspace / f"{name}.py").write_text(
            f"open({str(marker)!r}, 'a').write({name!r} + '\\n')\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("JANITO_")}
    env["JANITO_CONFIG_DIR"] = str(tmp_path / "config")
    done = subprocess.run([sys.executable, "-m", "janito_core.cli", "run", "ReadFil"], env=env,
                          cwd=workspace, capture_output=True, text=True, timeout=60)
    assert "unknown_tool" in done.stdout + done.stderr, done.stdout + done.stderr
    assert not marker.exists(), marker.read_text()
