"""RunPythonCode and RunPythonFile through dispatch, with real interpreters."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from system_helpers import new_marker, reap, settle

from janito_core.testing import ToolsetTester

FORK_TREE = """
import os, sys, time
marker = sys.argv[1] if len(sys.argv) > 1 else {marker!r}
child = os.fork()
if child == 0:
    if os.fork() == 0:
        os.execvp("sleep", [marker, "300"])
    os.execvp("sleep", [marker, "300"])
print("forked", flush=True)
time.sleep(300)
"""


@pytest.fixture
def system(janito: ToolsetTester) -> ToolsetTester:
    janito.load("system", privileges="x")
    return janito


# -- RunPythonCode ------------------------------------------------------------------------


def test_code_runs_with_this_interpreter_in_the_workspace(system: ToolsetTester) -> None:
    code = "import os, sys\nprint(sys.executable)\nprint(os.getcwd())\nprint('é')"
    result = system.call("RunPythonCode", code=code)
    assert result["success"] is True
    executable, cwd, accent = result["stdout"].splitlines()
    assert os.path.realpath(executable) == os.path.realpath(sys.executable)
    assert Path(cwd).resolve() == system.workspace.resolve()
    assert accent == "é"
    assert result["code"] == code
    assert result["exit_code"] == 0
    assert result["working_directory"] == "."


def test_code_can_import_workspace_modules(system: ToolsetTester) -> None:
    (system.workspace / "helper_mod.py").write_text("VALUE = 41\n")
    result = system.call("RunPythonCode", code="import helper_mod; print(helper_mod.VALUE + 1)")
    assert result["stdout"] == "42\n"


def test_exception_is_a_nonzero_exit_with_traceback(system: ToolsetTester) -> None:
    result = system.call("RunPythonCode", code="print('before')\nraise ValueError('boom')")
    assert result["success"] is False
    assert result["error_type"] == "nonzero_exit"
    assert result["exit_code"] == 1
    assert result["stdout"] == "before\n"
    assert "ValueError: boom" in result["stderr"]


def test_syntax_error(system: ToolsetTester) -> None:
    result = system.call("RunPythonCode", code="def broken(:\n")
    assert result["success"] is False
    assert result["exit_code"] == 1
    assert "SyntaxError" in result["stderr"]


def test_input_sees_end_of_file(system: ToolsetTester) -> None:
    result = system.call("RunPythonCode", code="import sys\nprint(repr(sys.stdin.read()))")
    assert result["stdout"] == "''\n"


def test_large_code_has_no_length_limit(system: ToolsetTester) -> None:
    code = "x = 0\n" + "x += 1\n" * 40_000 + "print(x)"
    assert len(code) > 200_000
    result = system.call("RunPythonCode", code=code)
    assert result["success"] is True
    assert result["stdout"] == "40000\n"
    assert "[... truncated:" in result["code"]


def test_code_timeout_kills_the_fork_tree(system: ToolsetTester) -> None:
    marker = new_marker()
    try:
        result = system.call("RunPythonCode", code=FORK_TREE.format(marker=marker), timeout=1.5)
        assert result["success"] is False
        assert result["error_type"] == "timeout"
        assert result["timed_out"] is True
        assert result["stdout"] == "forked\n"
        assert result["timeout"] == 1.5
        assert settle(marker) == []
    finally:
        reap(marker)


def test_code_subprocesses_end_with_the_call(system: ToolsetTester) -> None:
    marker = new_marker()
    code = (
        "import subprocess\n"
        f"subprocess.Popen([{marker!r}, '300'], executable='sleep', stdout=subprocess.DEVNULL,"
        " stderr=subprocess.DEVNULL)\n"
        "print('left it running')\n"
    )
    try:
        result = system.call("RunPythonCode", code=code)
        assert result["success"] is True, result
        assert settle(marker) == []
    finally:
        reap(marker)


def test_code_invalid_arguments(system: ToolsetTester) -> None:
    assert system.call("RunPythonCode", code="1", timeout=0)["error_type"] == "invalid_arguments"
    assert system.call("RunPythonCode", code="a\x00")["error_type"] == "invalid_arguments"
    assert system.call("RunPythonCode", {"code": None})["error_type"] == "invalid_arguments"
    unknown = system.call("RunPythonCode", code="1", shell=True)
    assert unknown["error_type"] == "invalid_arguments"


def test_code_bad_working_directory(system: ToolsetTester) -> None:
    result = system.call("RunPythonCode", code="print(1)", working_directory="../..")
    assert result["error_type"] == "outside_workspace"
    result = system.call("RunPythonCode", code="print(1)", working_directory="nope")
    assert result["error_type"] == "not_found"


def test_code_missing_interpreter(system: ToolsetTester) -> None:
    result = system.call("RunPythonCode", code="print(1)",
                         python_executable="/nonexistent/python9")
    assert result["success"] is False
    assert result["error_type"] == "not_found"
    assert result["python_executable"] == "/nonexistent/python9"


def test_null_timeout_means_the_default(system: ToolsetTester) -> None:
    result = system.call("RunPythonCode", code="print('default')", timeout=None)
    assert result["success"] is True
    assert result["timeout"] == 60


def test_huge_timeout_is_accepted(system: ToolsetTester) -> None:
    result = system.call("RunPythonCode", code="print('patient')", timeout=1e300)
    assert result["success"] is True
    assert result["stdout"] == "patient\n"


# -- RunPythonFile ------------------------------------------------------------------------


def test_file_runs_with_arguments(system: ToolsetTester) -> None:
    scripts = system.workspace / "scripts"
    scripts.mkdir()
    (scripts / "show.py").write_text(
        "import json, os, sys\nprint(json.dumps({'argv': sys.argv[1:], 'cwd': os.getcwd()}))\n"
    )
    result = system.call("RunPythonFile", file_path="scripts/show.py",
                         additional_args=["a b", "--flag"])
    assert result["success"] is True
    shown = json.loads(result["stdout"])
    assert shown["argv"] == ["a b", "--flag"]
    assert Path(shown["cwd"]).resolve() == system.workspace.resolve()
    assert result["file_path"] == "scripts/show.py"
    assert result["additional_args"] == ["a b", "--flag"]


def test_file_working_directory(system: ToolsetTester) -> None:
    (system.workspace / "d").mkdir()
    (system.workspace / "where.py").write_text("import os; print(os.path.basename(os.getcwd()))")
    result = system.call("RunPythonFile", file_path="where.py", working_directory="d")
    assert result["stdout"] == "d\n"


def test_file_failure_keeps_output(system: ToolsetTester) -> None:
    (system.workspace / "fail.py").write_text("print('half')\nimport sys\nsys.exit(3)\n")
    result = system.call("RunPythonFile", file_path="fail.py")
    assert result["success"] is False
    assert result["error_type"] == "nonzero_exit"
    assert result["exit_code"] == 3
    assert result["stdout"] == "half\n"


@pytest.mark.parametrize(
    ("path", "error_type"),
    [("missing.py", "not_found"), ("../outside.py", "outside_workspace"),
     ("/etc/hostname", "outside_workspace"), ("folder", "not_a_file"), ("", "outside_workspace")],
)
def test_file_bad_paths(system: ToolsetTester, path: str, error_type: str) -> None:
    (system.workspace / "folder").mkdir()
    (system.workspace.parent / "outside.py").write_text("print('escaped')")
    result = system.call("RunPythonFile", file_path=path)
    assert result["success"] is False
    assert result["error_type"] == error_type
    assert result["file_path"] == path


def test_file_symlink_out_of_the_workspace_is_refused(system: ToolsetTester) -> None:
    outside = system.workspace.parent / "secret.py"
    outside.write_text("print('escaped')")
    (system.workspace / "link.py").symlink_to(outside)
    result = system.call("RunPythonFile", file_path="link.py")
    assert result["error_type"] == "outside_workspace"


def test_file_timeout_kills_the_fork_tree(system: ToolsetTester) -> None:
    marker = new_marker()
    (system.workspace / "tree.py").write_text(FORK_TREE.format(marker="unused"))
    try:
        result = system.call("RunPythonFile", file_path="tree.py", timeout=1.5,
                             additional_args=[marker])
        assert result["error_type"] == "timeout"
        assert result["stdout"] == "forked\n"
        assert settle(marker) == []
    finally:
        reap(marker)


def test_file_invalid_arguments(system: ToolsetTester) -> None:
    (system.workspace / "ok.py").write_text("print(1)")
    assert system.call("RunPythonFile", file_path="ok.py", timeout=-1)["error_type"] == \
        "invalid_arguments"
    assert system.call("RunPythonFile", file_path="ok.py",
                       additional_args=["a\x00"])["error_type"] == "invalid_arguments"
    assert system.call("RunPythonFile", file_path="ok.py",
                       additional_args="not-a-list")["error_type"] == "invalid_arguments"


def test_python_tools_need_execute(janito: ToolsetTester) -> None:
    janito.load("system", privileges="rw")
    (janito.workspace / "ok.py").write_text("open('ran', 'w').write('1')")
    for name, args in (("RunPythonCode", {"code": "open('ran', 'w').write('1')"}),
                       ("RunPythonFile", {"file_path": "ok.py"})):
        result = janito.call(name, args)
        assert result["error_type"] == "permission_denied"
    assert not (janito.workspace / "ran").exists()
