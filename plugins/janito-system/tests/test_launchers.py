"""The programs janito starts to sandbox code are trusted files, never ones the code planted.

bubblewrap comes only from the system's folders (never from PATH, where a workspace folder
may come first: an activated ``.venv/bin``, ``~/.local/bin`` in a home-folder workspace),
and the supervisor's interpreter is the real one behind a venv, never a file inside the
workspace. Each test plants a launcher the way sandboxed code can, one that writes a
marker file when it runs, and counts its runs: zero. Tests that need bubblewrap gone, or
replaced, run janito in a mount namespace where the system's ``bwrap`` is ``/dev/null`` or
the replacement (made by the system's bubblewrap).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from janito_system import _sandbox
from system_helpers import mechanism_problem, system_bwrap, with_system_bwrap_replaced

from janito_core import Privileges, Registry, Workspace, call_tool
from janito_core.sandbox import ENV_VAR

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the sandbox mechanisms are Linux ones")

ROOT = os.geteuid() == 0

# Runs in a janito process of its own: the tools' status, then each call of argv[2] (JSON),
# in the workspace argv[1]; prints the records, the status line and the results as JSON.
DRIVER = """
import json, sys
site = sys.argv[3] if len(sys.argv) > 3 else ""
if site:
    import site as site_module
    site_module.addsitedir(site)
from janito_core import Privileges, Registry, Workspace, call_tool
registry = Registry(privileges=Privileges.from_string("rwx"), workspace=Workspace(sys.argv[1]),
                    autoload=(), allowed=None)
registry.add_toolset("system")
records = {r.name: [r.status, r.reason] for r in registry.records()}
from janito_system.run_bash_code import RunBashCode
status = RunBashCode.sandbox_status()
results = [call_tool(name, args, registry=registry) for name, args in json.loads(sys.argv[2])]
print(json.dumps({"records": records, "status": status, "results": results}))
"""


def drive(argv_start: list[str], workspace: Path, calls: list[tuple[str, dict[str, Any]]],
          env: dict[str, str], site: str = "") -> dict[str, Any]:
    done = subprocess.run([*argv_start, "-c", DRIVER, str(workspace), json.dumps(calls), site],
                          env=env, capture_output=True, text=True, timeout=120, check=False,
                          cwd=workspace)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("JANITO_")}
    env.update(JANITO_CONFIG_DIR=str(tmp_path / "config"),
               PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring", **extra)
    return env


def marker_launcher(path: Path, marker: Path, then: str) -> None:
    """A launcher that notes each run in ``marker`` and then runs the shell code ``then``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho ran >> {marker}\n{then}\n")
    path.chmod(0o755)


def runs(marker: Path) -> int:
    return marker.read_text().count("ran\n") if marker.exists() else 0


# -- bubblewrap planted on PATH -------------------------------------------------------------

# What a planted bwrap would do: run the command after "--" as it is, unconfined.
UNCONFINED = 'while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do shift; done; shift; exec "$@"'


@pytest.mark.parametrize("folder", [".venv/bin", ".local/bin"])
def test_a_bwrap_planted_in_a_workspace_folder_on_path_never_runs(
        folder: str, tmp_path: Path, janito_isolated: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    if mechanism_problem("bubblewrap") is not None:
        pytest.skip(f"bubblewrap is not available here: {mechanism_problem('bubblewrap')}")
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    marker = tmp_path / "planted-runs"
    planted = workspace / folder
    planted.mkdir(parents=True)
    monkeypatch.setenv("PATH", f"{planted}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv(_sandbox.MECHANISM_ENV, raising=False)
    registry = Registry(privileges=Privileges.from_string("rwx"), workspace=Workspace(workspace),
                        autoload=(), allowed=None)
    registry.add_toolset("system")
    plant = (f"printf '#!/bin/sh\\necho ran >> {marker}\\n%s\\n' '{UNCONFINED}' "
             f"> {planted}/bwrap && chmod 755 {planted}/bwrap && echo planted")
    first = call_tool("RunBashCode", {"code": plant}, registry=registry)
    assert first["stdout"] == "planted\n", first
    for _ in range(3):
        later = call_tool("RunBashCode", {"code": f"echo escaped > {outside}/after; echo done"},
                          registry=registry)
        assert later["stdout"] == "done\n", later
        assert not (outside / "after").exists(), later
    assert runs(marker) == 0


# -- an interpreter planted in a venv inside the workspace -----------------------------------


def test_a_python_planted_in_a_workspace_venv_never_runs(tmp_path: Path) -> None:
    """janito runs from a venv in the workspace; code replaces the venv's interpreter."""
    if mechanism_problem("supervisor") is not None:
        pytest.skip(f"the supervisor is not available here: {mechanism_problem('supervisor')}")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    venv = workspace / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    real = os.path.realpath(getattr(sys, "_base_executable", "") or sys.executable)
    marker = tmp_path / "planted-runs"
    pythons = sorted(str(p) for p in (venv / "bin").iterdir() if p.name.startswith("python"))
    fake = f'#!/bin/sh\\necho ran >> {marker}\\nexec {real} "$@"\\n'
    plant = "".join(f"rm -f {p}; printf '{fake}' > {p}; chmod 755 {p}; " for p in pythons)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("RunBashCode", {"code": plant + "echo planted"}),
        ("RunBashCode", {"code": "echo second"}),
    ]
    env = clean_env(tmp_path, **{_sandbox.MECHANISM_ENV: "supervisor"})
    out = drive([str(venv / "bin" / "python")], workspace, calls, env,
                site=sysconfig.get_paths()["purelib"])
    planted, second = out["results"]
    assert planted["stdout"] == "planted\n", planted
    assert (venv / "bin" / "python").read_text().startswith("#!/bin/sh")  # it was planted
    assert second["stdout"] == "second\n", second
    assert runs(marker) == 0
    assert real in out["status"], out["status"]


# -- bubblewrap taken away, or replaced ------------------------------------------------------


def test_without_bubblewrap_the_run_tools_fail_closed_or_fall_back(tmp_path: Path) -> None:
    """The system's bwrap gone (and one on PATH, which is never used)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    marker = tmp_path / "path-bwrap-runs"
    marker_launcher(tmp_path / "bin" / "bwrap", marker, "exit 1")
    path = f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}"
    try:
        start = with_system_bwrap_replaced([sys.executable], "/dev/null")
    except LookupError:
        start = [sys.executable]
    calls: list[tuple[str, dict[str, Any]]] = [("RunPythonCode", {"code": "open('never', 'w')"})]
    pinned = drive(start, workspace, calls,
                   clean_env(tmp_path, PATH=path, **{_sandbox.MECHANISM_ENV: "bubblewrap"}))
    for name in ("RunBashCode", "RunPythonCode", "RunPythonFile"):
        status, reason = pinned["records"][name]
        assert status == "skipped"
        assert "workspace-write" in reason and "cannot be enforced" in reason
        assert "install bubblewrap" in reason and "janito --sandbox off" in reason
        assert "is not in a system folder, and is not used" in reason, reason
    assert pinned["records"]["GetCurrentTime"][0] == "loaded"
    (result,) = pinned["results"]
    assert result["error_type"] == "tool_unavailable", result
    assert not (workspace / "never").exists()
    assert runs(marker) == 0
    if mechanism_problem("supervisor") is None:
        auto = drive(start, workspace, [("RunBashCode", {"code": "echo in > inside"})],
                     clean_env(tmp_path, PATH=path))
        assert "Landlock and seccomp under a supervisor" in auto["status"], auto["status"]
        assert auto["results"][0]["success"] is True, auto["results"]
        assert (workspace / "inside").exists()
        assert runs(marker) == 0


def test_a_call_refused_at_call_time_says_why(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    try:
        start = with_system_bwrap_replaced([sys.executable], "/dev/null")
    except LookupError:
        start = [sys.executable]
    script = (
        "import json, os, sys\n"
        "from janito_core import Privileges, Registry, Workspace, call_tool\n"
        "r = Registry(privileges=Privileges.from_string('x'), workspace=Workspace(sys.argv[1]),"
        " autoload=(), allowed=None)\n"
        "r.add_toolset('system')\n"
        "os.environ['JANITO_SANDBOX_MECHANISM'] = 'bubblewrap'\n"
        "one = call_tool('RunPythonCode', {'code': \"open('never', 'w')\"}, registry=r)\n"
        "os.environ['JANITO_SANDBOX'] = 'sometimes'\n"
        "two = call_tool('RunPythonCode', {'code': \"open('never', 'w')\"}, registry=r)\n"
        "print(json.dumps([one, two]))\n"
    )
    done = subprocess.run([*start, "-c", script, str(workspace)], env=clean_env(tmp_path),
                          capture_output=True, text=True, timeout=120, check=True)
    one, two = json.loads(done.stdout)
    assert one["error_type"] == "sandbox_unavailable" and "install bubblewrap" in one["error"]
    assert two["error_type"] == "sandbox_unavailable" and "'sometimes'" in two["error"]
    assert not (workspace / "never").exists()


def test_a_bubblewrap_without_namespaces_falls_back(tmp_path: Path) -> None:
    """The system's bwrap cannot make namespaces (as in many containers): probed once."""
    if not ROOT or not system_bwrap():
        pytest.skip("needs root and a system bwrap to put a trusted stand-in in its place")
    if mechanism_problem("supervisor") is not None:
        pytest.skip(f"the supervisor is not available here: {mechanism_problem('supervisor')}")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    marker = tmp_path / "bwrap-runs"
    stand_in = tmp_path / "stand-in" / "bwrap"
    marker_launcher(stand_in, marker,
                    "echo 'bwrap: No permissions to creating new namespace' >&2; exit 1")
    start = with_system_bwrap_replaced([sys.executable], str(stand_in))
    calls: list[tuple[str, dict[str, Any]]] = [
        ("RunBashCode", {"code": "echo x > /etc/janito-never; echo in > inside"}),
        ("RunBashCode", {"code": "true"}),
    ]
    out = drive(start, workspace, calls, clean_env(tmp_path))
    assert f"bubblewrap {system_bwrap()[0]}:" in out["status"]  # listing never probes
    first, _ = out["results"]
    assert runs(marker) == 1  # probed once, on the first run; the answer is kept
    assert (workspace / "inside").exists()
    assert not Path("/etc/janito-never").exists()
    assert "may have refused a write" in first["sandbox"]


# -- what janito tools shows -----------------------------------------------------------------


def test_janito_tools_names_the_launcher_and_never_probes(tmp_path: Path) -> None:
    marker = tmp_path / "path-bwrap-runs"
    marker_launcher(tmp_path / "bin" / "bwrap", marker, "exit 1")
    janito = Path(sys.executable).with_name("janito")
    command = [str(janito)] if janito.exists() else [sys.executable, "-m", "janito_core.cli"]
    env = clean_env(tmp_path, PATH=f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    env.pop(ENV_VAR, None)

    def sandbox_fields(*options: str, **extra: str) -> set[str]:
        done = subprocess.run([*command, *options, "tools", "--json"], env={**env, **extra},
                              capture_output=True, text=True, timeout=60, check=True,
                              cwd=tmp_path)
        rows = [row for row in json.loads(done.stdout) if row["name"]]
        assert all("sandbox" not in row for row in rows if row["name"] == "GetCurrentTime")
        return {row["sandbox"] for row in rows if row["name"].startswith("Run")}

    if mechanism_problem("bubblewrap") is None:
        (line,) = sandbox_fields("--sandbox", "read-only")
        assert line.startswith(f"read-only (JANITO_SANDBOX), bubblewrap {system_bwrap()[0]}: ")
        assert "janito's state folder hidden" in line
        text = subprocess.run([*command, "tools"], env=env, capture_output=True, text=True,
                              timeout=60, check=True, cwd=tmp_path).stdout
        assert "Sandbox of the code they run:" in text
        assert f"workspace-write (default), bubblewrap {system_bwrap()[0]}" in text
    if mechanism_problem("supervisor") is None:
        (line,) = sandbox_fields(**{_sandbox.MECHANISM_ENV: "supervisor"})
        python = os.path.realpath(getattr(sys, "_base_executable", "") or sys.executable)
        assert f"Landlock and seccomp under a supervisor run by {python}" in line, line
    assert runs(marker) == 0


# -- what counts as trusted ------------------------------------------------------------------


def test_what_a_trusted_launcher_is(tmp_path: Path) -> None:
    for found in system_bwrap():
        assert _sandbox.untrusted(found, (0,)) is None
    folder = tmp_path / "open"
    folder.mkdir()
    program = folder / "bwrap"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    owners = (os.geteuid(),)
    assert "lies in /tmp" in str(_sandbox.untrusted(str(program), owners)) or \
        "writable by its group or others" in str(_sandbox.untrusted(str(program), owners))
    program.chmod(0o775)
    assert _sandbox.untrusted(str(program), owners) == "is writable by its group or others"
    assert _sandbox.untrusted(str(folder), owners) == "is not a regular file"
    link = folder / "link"
    link.symlink_to(program)
    assert _sandbox.untrusted(str(link), owners) == "is not a regular file"
    if ROOT:
        program.chmod(0o755)
        os.chown(program, 65534, 65534)
        assert _sandbox.untrusted(str(program), (0,)) == "is owned by uid 65534"
    python = _sandbox.trusted_python()
    assert python.path is not None, python.why
    assert _sandbox._launcher(python, os.path.dirname(python.path)).path is None
