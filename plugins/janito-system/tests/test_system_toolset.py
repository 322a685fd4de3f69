"""The toolset as a whole: discovery, permissions, schemas, conformance, start-up, harnesses."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import LoopbackServer

from janito_core import Registry
from janito_core.testing import ToolsetTester, check_toolset

TOOLS = {
    "AskUser": "",
    "GetCurrentTime": "",
    "GetUrl": "r",
    "RunBashCode": "x",
    "RunPythonCode": "x",
    "RunPythonFile": "x",
}


def test_found_through_its_entry_point() -> None:
    spec = Registry(autoload=(), allowed=None).toolsets()["system"]
    assert spec.distribution == "janito-system"
    assert spec.module == "janito_system"


def test_every_tool_with_least_privilege(janito: ToolsetTester) -> None:
    registry = janito.load("system")
    found = {r.name: r.permissions for r in registry.records() if r.toolset == "system"}
    assert found == TOOLS
    assert registry.load_errors == []


def test_autoloaded_by_default(janito_workspace: Path) -> None:
    registry = Registry(allowed=None)
    assert "system" in registry.loaded_toolsets()
    assert "GetCurrentTime" in registry.names()


@pytest.mark.parametrize(
    ("privileges", "allowed"),
    [("r", {"GetUrl", "GetCurrentTime"}), ("x", {"RunBashCode", "RunPythonCode",
                                                 "RunPythonFile", "GetCurrentTime"}),
     ("", {"GetCurrentTime"})],
)
def test_privileges_gate_the_tools(janito: ToolsetTester, privileges: str,
                                   allowed: set[str]) -> None:
    registry = janito.load("system", privileges=privileges)
    names = set(registry.names())
    if shutil.which("bash") is None and shutil.which("sh") is None:
        allowed = allowed - {"RunBashCode"}
    assert names == allowed  # AskUser is skipped: the tests do not run on a terminal


def test_parameter_names_of_the_original_tools(janito: ToolsetTester) -> None:
    registry = janito.load("system")
    expected = {
        "RunBashCode": {"code", "timeout", "working_directory", "capture_output",
                        "capture_errors", "bash_executable"},
        "RunPythonCode": {"code", "timeout", "working_directory", "capture_output",
                          "capture_errors", "python_executable"},
        "RunPythonFile": {"file_path", "timeout", "working_directory", "capture_output",
                          "capture_errors", "python_executable", "additional_args"},
        "GetUrl": {"url", "max_length", "max_lines", "start_index", "timeout",
                   "follow_redirects", "max_bytes", "raw", "include_links", "check_llms_txt",
                   "threshold"},
        "GetCurrentTime": {"utc", "timezone", "format"},
    }
    for name, params in expected.items():
        schema = registry.get_function_schema(name)["function"]
        properties = schema["parameters"]["properties"]
        assert set(properties) == params, name
        assert all(p.get("description") for p in properties.values()), name
        assert schema["description"]
    from janito_system.ask_user import AskUser

    assert set(AskUser.run.__annotations__) - {"return"} == {"question"}


def test_conforms() -> None:
    report = check_toolset("system", max_examples=15)
    assert set(report.tools) == set(TOOLS)


def test_import_is_light() -> None:
    """Listing tools imports every module: no network, HTML or process machinery yet."""
    code = (
        "import sys, janito_system\n"
        "from janito_system import ask_user, get_current_time, get_url, run_bash_code, "
        "run_python_code, run_python_file\n"
        "heavy = ['urllib.request', 'http.client', 'html.parser', 'ssl', 'zoneinfo', 'httpx', "
        "'httpcore', 'lxml', 'markdownify', 'bs4', "
        "'selectors', 'subprocess', 'dataclasses', 'datetime']\n"
        "print([m for m in heavy if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def _harness(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL,
                          env={**os.environ, "NO_COLOR": "1"})


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_harness_run_bash_code(tmp_path: Path) -> None:
    out = _harness("janito_system.run_bash_code", "echo hi", "--json", cwd=tmp_path)
    assert out.returncode == 0
    result = json.loads(out.stdout)
    assert result["stdout"] == "hi\n"
    failed = _harness("janito_system.run_bash_code", "echo out; echo err >&2; exit 4",
                      cwd=tmp_path)
    assert failed.returncode == 1
    # after the progress reports, the run's own streams as they are, then the error line
    assert failed.stdout == "out\n"
    assert failed.stderr.endswith("err\nerror (nonzero_exit): the shell code exited with code 4\n")


def test_harness_run_python_code_and_file(tmp_path: Path) -> None:
    out = _harness("janito_system.run_python_code", "print(6 * 7)", "--json", cwd=tmp_path)
    assert json.loads(out.stdout)["stdout"] == "42\n"
    (tmp_path / "s.py").write_text("import sys; print(sys.argv[1:])")
    out = _harness("janito_system.run_python_file", "s.py", "--json", "--additional-args",
                   "a", "b", cwd=tmp_path)
    assert json.loads(out.stdout)["stdout"] == "['a', 'b']\n"
    plain = _harness("janito_system.run_python_file", "s.py", cwd=tmp_path)
    assert plain.stdout == "[]\n"
    outside = _harness("janito_system.run_python_file", "../s.py", "--json", cwd=tmp_path)
    assert outside.returncode == 1
    assert json.loads(outside.stdout)["error_type"] == "outside_workspace"


def test_harness_get_url(tmp_path: Path, http_server: LoopbackServer) -> None:
    out = _harness("janito_system.get_url", http_server.base + "/page", "--json", cwd=tmp_path)
    assert out.returncode == 0
    assert json.loads(out.stdout)["title"] == "Test page"
    plain = _harness("janito_system.get_url", http_server.base + "/json", cwd=tmp_path)
    assert plain.stdout == '{"answer": 42}\n', plain.stderr
    bad = _harness("janito_system.get_url", "file:///etc/passwd", cwd=tmp_path)
    assert bad.returncode == 1
    assert "error (invalid_url)" in bad.stderr


def test_harness_get_current_time(tmp_path: Path) -> None:
    out = _harness("janito_system.get_current_time", "--utc", "--format", "%Y", "--json",
                   cwd=tmp_path)
    assert out.returncode == 0
    assert json.loads(out.stdout)["formatted"].isdigit()


def test_harness_ask_user_without_a_terminal(tmp_path: Path) -> None:
    out = _harness("janito_system.ask_user", "Your name?", "--json", cwd=tmp_path)
    assert out.returncode == 2  # the tool cannot work here, and says why
    result = json.loads(out.stdout)
    assert result["error_type"] == "tool_unavailable" and "terminal" in result["error"]


@pytest.mark.parametrize(
    ("module", "name", "arguments", "inner"),
    [("run_bash_code", "RunBashCode", {"code": "true"}, "echo_text"),
     ("run_python_code", "RunPythonCode", {"code": "pass"}, "echo_text"),
     ("run_python_file", "RunPythonFile", {"file_path": "x.py"}, "RunCall"),
     ("get_url", "GetUrl", {"url": "http://127.0.0.1/"}, "_check_arguments"),
     ("get_current_time", "GetCurrentTime", {}, "_offset_text"),
     ("ask_user", "AskUser", {"question": "?"}, "_is_terminal")],
)
def test_an_unexpected_exception_becomes_a_result(module: str, name: str,
                                                  arguments: dict[str, object], inner: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard around every run(): a bug inside is reported, never raised."""
    import importlib

    tool_module = importlib.import_module(f"janito_system.{module}")

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(tool_module, inner, broken)
    result = getattr(tool_module, name)().run(**arguments)
    assert result["success"] is False
    assert result["error_type"] == "internal_error"
    assert "disk on fire" in result["error"]
    for key, value in arguments.items():
        assert result[key] == value


def test_the_guard_leaves_wrong_python_arguments_to_the_caller(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Arguments that do not fit run() raise TypeError, as on an undecorated method."""
    from janito_system import run_python_code
    from janito_system.get_current_time import GetCurrentTime

    with pytest.raises(TypeError):
        GetCurrentTime().run(no_such_parameter=1)  # type: ignore[call-arg]

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(run_python_code, "echo_text", broken)
    result = run_python_code.RunPythonCode().run("pass", None, 5)  # positional, as Python allows
    assert (result["error_type"], result["code"]) == ("internal_error", "pass")
