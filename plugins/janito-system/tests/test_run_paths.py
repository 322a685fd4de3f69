"""The paths of the run tools: the script RunPythonFile runs and the working folder of
all three are found through the workspace; the script runs from the bytes read through
it, so a file swapped in under its name is never what runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from janito_core.testing import FolderSwapper, ToolsetTester

SECRET = "sentinel-outside-the-workspace"


@pytest.fixture
def system(janito: ToolsetTester) -> ToolsetTester:
    janito.load("system", privileges="x")
    return janito


def test_the_script_sees_itself_as_python_file_would(system: ToolsetTester) -> None:
    scripts = system.workspace / "scripts"
    scripts.mkdir()
    (scripts / "helper.py").write_text("VALUE = 'from the helper'\n")
    (scripts / "show.py").write_text(
        "import json, os, sys\n"
        "import helper\n"
        "print(json.dumps({'file': __file__, 'argv': sys.argv, 'path0': sys.path[0],\n"
        "                  'name': __name__, 'helper': helper.VALUE,\n"
        "                  'names': sorted(n for n in globals() if n.startswith('_janito')),\n"
        "                  'stdin': sys.stdin.read()}))\n")
    result = system.call("RunPythonFile", file_path="scripts/show.py", additional_args=["x"])
    assert result["success"] is True, result
    seen = json.loads(result["stdout"])
    real = os.path.realpath(scripts / "show.py")
    assert seen == {"file": real, "argv": [real, "x"], "path0": os.path.dirname(real),
                    "name": "__main__", "helper": "from the helper", "names": [], "stdin": ""}


def test_errors_look_as_they_would(system: ToolsetTester) -> None:
    (system.workspace / "boom.py").write_text("def f():\n    raise ValueError('bad value')\nf()\n")
    result = system.call("RunPythonFile", file_path="boom.py")
    assert (result["error_type"], result["exit_code"]) == ("nonzero_exit", 1)
    stderr = result["stderr"]
    assert stderr.startswith("Traceback (most recent call last):\n"), stderr
    assert "<string>" not in stderr and "_janito_run" not in stderr, stderr
    assert 'boom.py", line 3, in <module>' in stderr and "ValueError: bad value" in stderr
    (system.workspace / "syntax.py").write_text("x = (\n")
    broken = system.call("RunPythonFile", file_path="syntax.py")
    assert broken["exit_code"] == 1 and "SyntaxError" in broken["stderr"], broken
    assert 'syntax.py", line 1' in broken["stderr"] and "<string>" not in broken["stderr"]
    (system.workspace / "leave.py").write_text("import sys\nsys.exit(7)\n")
    assert system.call("RunPythonFile", file_path="leave.py")["exit_code"] == 7


def test_links_inside_are_followed_and_links_out_refused(system: ToolsetTester,
                                                         tmp_path: Path) -> None:
    ws = system.workspace
    (ws / "real").mkdir()
    (ws / "real" / "hi.py").write_text("import os; print(os.path.basename(os.getcwd()))")
    os.symlink("real", ws / "inside")
    os.symlink("real/hi.py", ws / "hi-link.py")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "hi.py").write_text(f"print({SECRET!r})")
    os.symlink(outside, ws / "out")
    os.mkfifo(ws / "pipe.py")
    ran = system.call("RunPythonFile", file_path="hi-link.py", working_directory="inside")
    assert (ran["success"], ran["stdout"], ran["file_path"]) == (True, "real\n", "real/hi.py")
    assert ran["working_directory"] == "real"
    for args, error_type in [({"file_path": "out/hi.py"}, "outside_workspace"),
                             ({"file_path": "hi-link.py", "working_directory": "out"},
                              "outside_workspace"),
                             ({"file_path": "pipe.py"}, "not_a_file"),
                             ({"file_path": "hi-link.py", "working_directory": "hi-link.py"},
                              "not_a_directory"),
                             ({"file_path": "hi-link.py", "working_directory": "real/hi.py/x"},
                              "not_a_directory")]:
        result = system.call("RunPythonFile", args)
        assert (result["success"], result["error_type"]) == (False, error_type), (args, result)
        assert SECRET not in json.dumps(result)
    for tool, code in (("RunBashCode", "pwd"), ("RunPythonCode", "print(1)")):
        result = system.call(tool, code=code, working_directory="out")
        assert result["error_type"] == "outside_workspace", result


def test_a_script_too_large_is_refused(system: ToolsetTester,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from janito_system import run_python_file

    monkeypatch.setattr(run_python_file, "MAX_SCRIPT_BYTES", 10)
    (system.workspace / "big.py").write_text("print('more than ten bytes')\n")
    result = system.call("RunPythonFile", file_path="big.py")
    assert result["error_type"] == "file_too_large", result


ROUNDS = 200


def test_a_script_folder_swapped_for_a_link_never_runs_an_outside_script(
        system: ToolsetTester, tmp_path: Path) -> None:
    box = system.workspace / "box"
    box.mkdir()
    (box / "run.py").write_text("print('inside')")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "run.py").write_text(f"print({SECRET!r})")
    outcomes: dict[str, set[str]] = {state: set() for state in FolderSwapper.STATES}
    with FolderSwapper(box, outside) as swapper:
        for state in swapper.rounds(ROUNDS):
            result = system.call("RunPythonFile", file_path="box/run.py", timeout=30)
            assert SECRET not in json.dumps(result), result
            outcomes[state].add("ran" if result["success"] else result["error_type"])
            if result["success"]:
                assert result["stdout"] == "inside\n"
    assert swapper.errors == []
    assert outcomes["folder"] == {"ran"} and outcomes["link"] == {"outside_workspace"}, outcomes
