"""RunBashCode through dispatch, with real shells and real process trees."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from system_helpers import new_marker, reap, settle

from janito_core.testing import ToolsetTester

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


@pytest.fixture
def system(janito: ToolsetTester):
    janito.load("system", privileges="rx")
    return janito


def test_runs_in_the_workspace_root(system: ToolsetTester) -> None:
    result = system.call("RunBashCode", code="pwd; echo out; echo err >&2")
    assert result["success"] is True
    assert result["exit_code"] == 0
    assert Path(result["stdout"].splitlines()[0]).resolve() == system.workspace.resolve()
    assert result["stdout"].splitlines()[1] == "out"
    assert result["stderr"] == "err\n"
    assert result["code"] == "pwd; echo out; echo err >&2"
    assert result["timeout"] == 60
    assert result["working_directory"] == "."
    assert result["shell"].endswith("bash")
    assert result["timed_out"] is False


def test_shell_features_work(system: ToolsetTester) -> None:
    code = "for i in 1 2 3; do echo $i; done | sort -r > out.txt; cat out.txt; [[ -f out.txt ]]"
    result = system.call("RunBashCode", code=code)
    assert result["success"] is True
    assert result["stdout"] == "3\n2\n1\n"
    assert (system.workspace / "out.txt").read_text() == "3\n2\n1\n"


def test_nonzero_exit_keeps_the_output(system: ToolsetTester) -> None:
    result = system.call("RunBashCode", code="echo partial; echo oops >&2; exit 7")
    assert result["success"] is False
    assert result["error_type"] == "nonzero_exit"
    assert result["exit_code"] == 7
    assert "code 7" in result["error"]
    assert result["stdout"] == "partial\n"
    assert result["stderr"] == "oops\n"


def test_death_by_signal_is_named(system: ToolsetTester) -> None:
    result = system.call("RunBashCode", code="echo before; kill -SEGV $$")
    assert result["success"] is False
    assert result["error_type"] == "nonzero_exit"
    assert result["signal"] == "SIGSEGV"
    assert result["stdout"] == "before\n"


def test_stdin_is_empty(system: ToolsetTester) -> None:
    result = system.call("RunBashCode", code="cat; echo done", timeout=20)
    assert result["success"] is True
    assert result["stdout"] == "done\n"


def test_working_directory_inside_the_workspace(system: ToolsetTester) -> None:
    (system.workspace / "sub").mkdir()
    result = system.call("RunBashCode", code="basename \"$PWD\"", working_directory="sub")
    assert result["success"] is True
    assert result["stdout"] == "sub\n"
    assert result["working_directory"] == "sub"


@pytest.mark.parametrize(
    ("directory", "error_type"),
    [("..", "outside_workspace"), ("/", "outside_workspace"), ("missing", "not_found"),
     ("a-file", "not_a_directory")],
)
def test_bad_working_directory(system: ToolsetTester, directory: str, error_type: str) -> None:
    (system.workspace / "a-file").write_text("x")
    result = system.call("RunBashCode", code="echo never", working_directory=directory)
    assert result["success"] is False
    assert result["error_type"] == error_type
    assert result["code"] == "echo never"


def test_timeout_kills_child_and_grandchild(system: ToolsetTester) -> None:
    marker = new_marker()
    sleeper = f"exec -a {marker} sleep 300"
    # a child that starts a grandchild, both sleeping; the grandchild is orphaned
    code = f"( ( {sleeper} ) & {sleeper} ) & echo started; wait"
    try:
        result = system.call("RunBashCode", code=code, timeout=1)
        assert result["success"] is False
        assert result["error_type"] == "timeout"
        assert result["timed_out"] is True
        assert result["exit_code"] is None
        assert result["stdout"] == "started\n"
        assert "within 1 second and" in result["error"]
        assert settle(marker) == [], "a process survived the timeout"
    finally:
        reap(marker)


def test_background_processes_end_with_the_call(system: ToolsetTester) -> None:
    marker = new_marker()
    code = f"( exec -a {marker} sleep 300 ) > /dev/null 2>&1 & echo quick"
    try:
        result = system.call("RunBashCode", code=code, timeout=30)
        assert result["success"] is True
        assert result["stdout"] == "quick\n"
        assert settle(marker) == [], "a background process outlived the call"
    finally:
        reap(marker)


def test_background_process_holding_the_pipe_does_not_block(system: ToolsetTester) -> None:
    marker = new_marker()
    try:
        result = system.call("RunBashCode", code=f"( exec -a {marker} sleep 300 ) & echo hi",
                             timeout=30)
        assert result["success"] is True
        assert result["stdout"] == "hi\n"
        assert result["duration_ms"] < 20_000
        assert settle(marker) == []
    finally:
        reap(marker)


def test_a_process_that_leaves_the_group_ends_with_the_call(system: ToolsetTester) -> None:
    """setsid() moves a process out of the group, not out of the call's containment."""
    marker = new_marker()
    ready = system.workspace / "ready"
    escape = (
        f"{sys.executable} -c \"import os, sys; os.setsid(); open('ready', 'w').close(); "
        f"os.execvp('sleep', ['{marker}', '300'])\" & "
        f"while [ ! -e {ready} ]; do sleep 0.01; done; echo launched"
    )
    try:
        result = system.call("RunBashCode", code=escape, timeout=30)
        assert result["success"] is True, result
        assert result["stdout"].startswith("launched")
        assert "output_incomplete" not in result
        assert settle(marker) == []
    finally:
        reap(marker)


def test_output_is_capped_with_a_marker(system: ToolsetTester) -> None:
    code = "echo FIRST; head -c 3000000 /dev/zero | tr '\\0' x; echo; echo LAST; echo E >&2"
    result = system.call("RunBashCode", code=code)
    assert result["success"] is True
    assert result["stdout_truncated"] is True
    assert result["stdout_bytes"] == 3000000 + len("FIRST\n") + 1 + len("LAST\n")
    assert result["stdout"].startswith("FIRST\n")
    assert result["stdout"].endswith("LAST\n")
    assert "[... truncated:" in result["stdout"]
    assert len(result["stdout"]) < 50_000
    assert result["stderr_truncated"] is False


def test_endless_output_with_timeout(system: ToolsetTester) -> None:
    result = system.call("RunBashCode", code="yes", timeout=1)
    assert result["error_type"] == "timeout"
    assert result["stdout_truncated"] is True
    assert result["stdout"].startswith("y\ny\n")


def test_capture_can_be_turned_off(system: ToolsetTester) -> None:
    result = system.call("RunBashCode", code="echo out; echo err >&2", capture_output=False,
                         capture_errors=False)
    assert result["success"] is True
    assert "stdout" not in result
    assert "stderr" not in result
    assert result["capture_output"] is False and result["capture_errors"] is False


def test_long_code_goes_through_a_script_file(system: ToolsetTester) -> None:
    body = "".join(f"echo line{i} > /dev/null\n" for i in range(8000))
    code = body + "echo finished $(basename \"$PWD\")"
    assert len(code.encode()) > 128 * 1024
    result = system.call("RunBashCode", code=code)
    assert result["success"] is True, result
    assert result["stdout"] == f"finished {system.workspace.name}\n"
    assert "[... truncated:" in result["code"]
    assert len(result["code"]) < 3000


def test_secrets_in_the_environment_are_not_passed_on(system: ToolsetTester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JANITO_SECRET_TOKEN", "hunter2")
    monkeypatch.setenv("JANITO_SYSTEM_TEST_VISIBLE", "yes")
    result = system.call("RunBashCode", code="env")
    assert "hunter2" not in result["stdout"]
    assert "JANITO_SYSTEM_TEST_VISIBLE=yes" in result["stdout"]


def test_invalid_arguments(system: ToolsetTester) -> None:
    zero = system.call("RunBashCode", code="echo", timeout=0)
    assert zero["error_type"] == "invalid_arguments"
    negative = system.call("RunBashCode", code="echo", timeout=-5)
    assert negative["error_type"] == "invalid_arguments"
    nul = system.call("RunBashCode", code="echo a\x00b")
    assert nul["error_type"] == "invalid_arguments"
    missing = system.call("RunBashCode", {})
    assert missing["error_type"] == "invalid_arguments"
    wrong = system.call("RunBashCode", '{"code": ["ls"]}')
    assert wrong["error_type"] == "invalid_arguments"


def test_unknown_shell(system: ToolsetTester) -> None:
    result = system.call("RunBashCode", code="echo", bash_executable="no-such-shell-here")
    assert result["success"] is False
    assert result["error_type"] == "not_found"


def test_shell_that_cannot_run(system: ToolsetTester) -> None:
    fake = system.workspace / "fakesh"
    fake.write_text("not a program")
    fake.chmod(0o644)
    result = system.call("RunBashCode", code="echo", bash_executable=str(fake))
    assert result["success"] is False
    assert result["error_type"] == "not_found"  # not executable: which() does not find it
    fake.chmod(0o755)
    result = system.call("RunBashCode", code="echo", bash_executable=str(fake))
    assert result["success"] is False
    assert result["error_type"] in ("start_failed", "nonzero_exit")


def test_posix_sh_is_used_when_named(system: ToolsetTester) -> None:
    sh = shutil.which("sh")
    if sh is None:
        pytest.skip("no sh")
    result = system.call("RunBashCode", code="echo $0", bash_executable=sh)
    assert result["success"] is True
    assert result["shell"] == sh


def test_needs_execute_privilege(janito: ToolsetTester) -> None:
    janito.load("system", privileges="r")
    result = janito.call("RunBashCode", code="touch should-not-exist")
    assert result["success"] is False
    assert result["error_type"] == "permission_denied"
    assert not (janito.workspace / "should-not-exist").exists()


def _load_status(env: dict[str, str]) -> str:
    script = (
        "import json\n"
        "from janito_core import Registry\n"
        "r = Registry(autoload=(), allowed=None)\n"
        "r.add_toolset('system')\n"
        "print(json.dumps({x.name: [x.status, x.reason] for x in r.records()}))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=60, check=True)
    return out.stdout


def test_skipped_where_no_shell_exists(tmp_path: Path) -> None:
    import json

    empty = tmp_path / "empty-bin"
    empty.mkdir()
    statuses = json.loads(_load_status({**os.environ, "PATH": str(empty)}))
    status, reason = statuses["RunBashCode"]
    assert status == "skipped"
    assert "bash" in reason
    assert statuses["RunPythonCode"][0] == "loaded"
    loaded = json.loads(_load_status(dict(os.environ)))
    assert loaded["RunBashCode"] == ["loaded", None]
