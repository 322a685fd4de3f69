"""The sandbox of the run tools, with real processes under each mechanism this machine has.

Every test that runs code runs it twice where it can: under bubblewrap and under the
supervisor (Landlock and seccomp), selected with ``JANITO_SANDBOX_MECHANISM``; a mechanism
this machine lacks is skipped with the reason. Writes and connections are checked from the
outside (the file exists or not, the server saw a connection or not), not only from what
the code printed.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from janito_system import _sandbox
from system_helpers import (
    mechanism_problem,
    new_marker,
    reap,
    settle,
    sleepers,
    wait_for_sleepers,
)

from janito_core import CancelToken, call_tool
from janito_core.sandbox import ENV_VAR
from janito_core.testing import ToolsetTester

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the sandbox mechanisms are Linux ones")


@pytest.fixture
def system(janito: ToolsetTester, mechanism: str) -> ToolsetTester:
    janito.load("system", privileges="rwx")
    return janito


@pytest.fixture
def outside(janito: ToolsetTester) -> Path:
    """A folder next to the workspace, holding one file anyone may read."""
    folder = janito.workspace.parent / "outside"
    folder.mkdir()
    (folder / "readable.txt").write_text("outside text\n")
    return folder


def policy(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv(ENV_VAR, name)


# -- writes ---------------------------------------------------------------------------------


def test_default_policy_writes_only_in_the_workspace_and_tmpdir(system: ToolsetTester,
                                                                outside: Path) -> None:
    code = (f"cat {outside}/readable.txt; echo in > inside.txt; "
            'echo temp > "$TMPDIR/t" && cat "$TMPDIR/t"; '
            f"echo escaped > {outside}/written.txt")
    result = system.call("RunBashCode", code=code)
    assert result["success"] is False, result
    assert result["stdout"] == "outside text\ntemp\n"
    assert (system.workspace / "inside.txt").read_text() == "in\n"
    assert not (outside / "written.txt").exists()
    note = result["sandbox"]
    assert "workspace-write" in note and "refused a write" in note
    assert "janito --sandbox off" in note and "JANITO_SANDBOX=off" in note


def test_python_writing_outside_gets_the_note(system: ToolsetTester, outside: Path) -> None:
    code = f"open({str(outside / 'py.txt')!r}, 'w').write('x')"
    result = system.call("RunPythonCode", code=code)
    assert result["error_type"] == "nonzero_exit"
    assert "Error" in result["stderr"]
    assert "refused a write" in result["sandbox"]
    assert not (outside / "py.txt").exists()


def test_off_allows_writes_outside(system: ToolsetTester, outside: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    policy(monkeypatch, "off")
    result = system.call("RunBashCode", code=f"echo escaped > {outside}/written.txt")
    assert result["success"] is True, result
    assert (outside / "written.txt").read_text() == "escaped\n"
    assert "sandbox" not in result


def test_read_only_refuses_workspace_writes(system: ToolsetTester,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    policy(monkeypatch, "read-only")
    (system.workspace / "script.py").write_text("print('read the script')\n")
    code = 'echo temp > "$TMPDIR/t" && cat "$TMPDIR/t"; cat script.py; echo no > inside.txt'
    result = system.call("RunBashCode", code=code)
    assert result["success"] is False
    assert result["stdout"] == "temp\nprint('read the script')\n"
    assert not (system.workspace / "inside.txt").exists()
    assert "read-only" in result["sandbox"] and "workspace-write" in result["sandbox"]
    ran = system.call("RunPythonFile", file_path="script.py")
    assert ran["success"] is True and ran["stdout"] == "read the script\n"


def test_the_temporary_folder_is_private_to_the_call_and_removed(system: ToolsetTester) -> None:
    first = system.call("RunBashCode", code='echo "$TMPDIR"; touch "$TMPDIR/left"')
    second = system.call("RunPythonCode", code="import tempfile; print(tempfile.gettempdir())")
    one, two = first["stdout"].strip(), second["stdout"].strip()
    assert one != two
    assert os.path.basename(one).startswith("janito-call-")
    assert not os.path.exists(one) and not os.path.exists(two)


def test_capabilities_are_dropped(system: ToolsetTester) -> None:
    result = system.call("RunBashCode", code="grep CapEff /proc/self/status")
    assert result["stdout"].split() == ["CapEff:", "0000000000000000"], result


def test_legitimate_uses_keep_working(system: ToolsetTester) -> None:
    code = (
        "import json, multiprocessing, os, subprocess, sys, tempfile\n"
        "with multiprocessing.Pool(2) as pool:\n"
        "    squares = pool.map(abs, [-1, -2, -3])\n"
        "with tempfile.NamedTemporaryFile('w', delete=False) as handle:\n"
        "    handle.write('scratch')\n"
        "with open('made.json', 'w') as out:\n"
        "    json.dump(squares, out)\n"
        "shell = subprocess.run(['bash', '-c', 'echo child; ls /etc/hostname'],"
        " capture_output=True, text=True)\n"
        "print(shell.stdout, end='')\n"
        "print(open(os.devnull, 'w').write('ok'))\n"
    )
    result = system.call("RunPythonCode", code=code)
    assert result["success"] is True, result
    assert result["stdout"] == "child\n/etc/hostname\n2\n"
    assert json.loads((system.workspace / "made.json").read_text()) == [1, 2, 3]


# -- network --------------------------------------------------------------------------------


class Greeter:
    """A TCP server on 127.0.0.1 that says hello to whoever connects, and counts them."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.1)
        self.port = int(self.sock.getsockname()[1])
        self.connections = 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.done.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            with conn:
                conn.sendall(b"hello")

    def close(self) -> None:
        self.done.set()
        self.thread.join(5)
        self.sock.close()


@pytest.fixture
def greeter() -> Iterator[Greeter]:
    server = Greeter()
    try:
        yield server
    finally:
        server.close()


def client(port: int) -> str:
    return (f"import socket\nwith socket.create_connection(('127.0.0.1', {port}), timeout=10)"
            f" as s:\n    print(s.recv(5).decode())\n")


def test_the_network_is_off_by_default(system: ToolsetTester, greeter: Greeter) -> None:
    result = system.call("RunPythonCode", code=client(greeter.port))
    assert result["success"] is False
    assert greeter.connections == 0
    assert "network is off" in result["sandbox"]
    assert "janito --sandbox workspace-write+network" in result["sandbox"]
    bash = system.call("RunBashCode", code=f"exec 3<>/dev/tcp/127.0.0.1/{greeter.port}")
    assert bash["success"] is False and "network is off" in bash["sandbox"]
    assert greeter.connections == 0


@pytest.mark.parametrize("granted", ["workspace-write+network", "off"])
def test_the_network_when_granted(system: ToolsetTester, greeter: Greeter, granted: str,
                                  monkeypatch: pytest.MonkeyPatch, outside: Path) -> None:
    policy(monkeypatch, granted)
    result = system.call("RunPythonCode", code=client(greeter.port))
    assert result["success"] is True, result
    assert result["stdout"] == "hello\n"
    assert greeter.connections == 1
    write = system.call("RunBashCode", code=f"echo x > {outside}/w")
    assert write["success"] is (granted == "off")


# -- processes ------------------------------------------------------------------------------

ESCAPES = {
    "setsid": "setsid bash -c 'exec -a {m} sleep 300' &",
    "process-group": ("python3 -c \"import os; os.setpgid(0, 0); "
                      "os.execvp('sleep', ['{m}', '300'])\" &"),
    "nohup": "nohup bash -c 'exec -a {m} sleep 300' > /dev/null 2>&1 &",
    "timeout": "timeout 600 bash -c 'exec -a {m} sleep 300' &",
    "set-m": "set -m; ( exec -a {m} sleep 300 ) &",
    "daemon": ("python3 -c \"import os\nif os.fork() == 0:\n    os.setsid()\n"
               "    if os.fork() == 0:\n        os.execvp('sleep', ['{m}', '300'])\"; "),
}


@pytest.mark.parametrize("kind", sorted(ESCAPES))
def test_nothing_outlives_a_normal_end(system: ToolsetTester, kind: str) -> None:
    marker = new_marker()
    code = ESCAPES[kind].format(m=marker) + f" while [ -z \"$(pgrep -f '^{marker}')\" ]; " \
        "do sleep 0.01; done; echo started"
    try:
        result = system.call("RunBashCode", code=code, timeout=30)
        assert result["success"] is True, result
        assert result["stdout"] == "started\n"
        assert settle(marker) == []
    finally:
        reap(marker)


def test_cancellation_kills_everything(system: ToolsetTester) -> None:
    marker = new_marker()
    code = "".join(ESCAPES[kind].format(m=marker) for kind in ("setsid", "nohup", "daemon"))
    code += f" ( exec -a {marker} sleep 300 ) & echo started; touch started; wait"
    token = CancelToken()
    results: list[dict[str, object]] = []
    assert system.registry is not None
    caller = threading.Thread(target=lambda: results.append(call_tool(
        "RunBashCode", {"code": code, "timeout": 120}, registry=system.registry,
        cancel_token=token)))
    try:
        caller.start()
        wait_for_sleepers(marker, 4)
        deadline = time.monotonic() + 60
        while not (system.workspace / "started").exists():
            assert time.monotonic() < deadline, "the code never said it started"
            time.sleep(0.01)
        token.cancel("the client went away")
        caller.join(30)
        assert not caller.is_alive()
        (result,) = results
        assert result["error_type"] == "cancelled", result
        assert "the client went away" in str(result["error"])
        assert result["stdout"] == "started\n"
        assert settle(marker) == []
    finally:
        token.cancel()
        caller.join(30)
        reap(marker)
        token.close()
    assert sleepers(marker) == []


# -- failing closed, and what janito tools says ------------------------------------------------


def _statuses(env: dict[str, str]) -> dict[str, list[object]]:
    script = (
        "import json\n"
        "from janito_core import Registry\n"
        "r = Registry(autoload=(), allowed=None)\n"
        "r.add_toolset('system')\n"
        "print(json.dumps({x.name: [x.status, x.reason] for x in r.records()}))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=60, check=True)
    return dict(json.loads(out.stdout))


def test_an_unknown_policy_means_no_run_tools(tmp_path: Path) -> None:
    env = {**os.environ, ENV_VAR: "mostly", "JANITO_CONFIG_DIR": str(tmp_path / "config")}
    status, reason = _statuses(env)["RunPythonCode"]
    assert status == "skipped"
    assert "'mostly'" in str(reason) and "read-only" in str(reason)


# -- a sandbox that fails for its own reasons ---------------------------------------------------

# A janito process that is itself confined by Landlock after its first call (as inside
# another sandbox): from then on bubblewrap cannot change mounts and, 16 layers deep, no
# further Landlock layer can be added, so the supervisor cannot confine the code.
LAYERED = """
import ctypes, json, os, sys
from janito_core import Privileges, Registry, Workspace, call_tool
registry = Registry(privileges=Privileges.from_string("rwx"), workspace=Workspace(sys.argv[1]),
                    autoload=(), allowed=None)
registry.add_toolset("system")
first = call_tool("RunBashCode", {"code": "echo first"}, registry=registry)
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.prctl(38, 1, 0, 0, 0)  # no_new_privs
for _ in range(16):  # Landlock's limit: layers that refuse only making block devices
    handled = ctypes.c_uint64(1 << 11)
    ruleset = libc.syscall(444, ctypes.byref(handled), ctypes.c_size_t(8), ctypes.c_uint32(0))
    assert ruleset >= 0 and libc.syscall(446, ruleset, 0) == 0, ctypes.get_errno()
    os.close(ruleset)
second = call_tool("RunBashCode", {"code": "echo second > ran"}, registry=registry)
print(json.dumps([first, second]))
"""


def test_a_sandbox_failure_never_reads_as_the_code_failing(mechanism: str,
                                                           tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = {key: value for key, value in os.environ.items() if not key.startswith("JANITO_")}
    env.update(JANITO_CONFIG_DIR=str(tmp_path / "config"),
               PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
               **{_sandbox.MECHANISM_ENV: mechanism})
    done = subprocess.run([sys.executable, "-c", LAYERED, str(workspace)], env=env,
                          capture_output=True, text=True, timeout=120, check=True)
    first, second = json.loads(done.stdout)
    assert first["stdout"] == "first\n", first
    assert second["success"] is False
    assert second["error_type"] == "sandbox_unavailable", second
    assert "exit_code" not in second, second
    want = ("bubblewrap failed: " if mechanism == "bubblewrap"
            else "the supervisor failed: cannot confine the code")
    assert want in second["error"], second
    assert not (workspace / "ran").exists()


# -- the temporary folders of calls whose janito died ---------------------------------------


def test_stale_temporary_folders_are_swept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale = tmp_path / f"janito-call-{gone.pid}-old"
    (stale / "deep").mkdir(parents=True)
    (stale / "deep" / "data").write_text("left by a killed janito")
    old = 1_000_000_000
    os.utime(stale, (old, old))
    fresh = tmp_path / f"janito-call-{gone.pid}-fresh"  # maybe another namespace's, in use
    fresh.mkdir()
    mine = tmp_path / f"janito-call-{os.getpid()}-mine"
    mine.mkdir()
    os.utime(mine, (old, old))
    other = tmp_path / "janito-call-notapid"
    other.mkdir()
    assert _sandbox.sweep_stale_folders() == 1
    assert not stale.exists()
    assert fresh.exists() and mine.exists() and other.exists()


def test_the_supervisor_removes_the_folder_when_janito_is_killed(tmp_path: Path) -> None:
    if mechanism_problem("supervisor"):
        pytest.skip(f"the supervisor is not available here: {mechanism_problem('supervisor')}")
    import signal

    workspace = tmp_path / "ws"
    workspace.mkdir()
    temp = tmp_path / "tmp"
    temp.mkdir()
    marker = new_marker()
    janito = Path(sys.executable).with_name("janito")
    command = [str(janito)] if janito.exists() else [sys.executable, "-m", "janito_core.cli"]
    env = {key: value for key, value in os.environ.items() if not key.startswith("JANITO_")}
    env.update(TMPDIR=str(temp), JANITO_CONFIG_DIR=str(tmp_path / "config"),
               **{_sandbox.MECHANISM_ENV: "supervisor"})
    code = f'echo "$TMPDIR" > where; touch "$TMPDIR/scratch"; exec -a {marker} sleep 300'
    proc = subprocess.Popen([*command, "run", "-x", "RunBashCode", "--args",
                             json.dumps({"code": code, "timeout": 120})], cwd=workspace, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_for_sleepers(marker, 1)
        folder = Path((workspace / "where").read_text().strip())
        assert folder.parent == temp and (folder / "scratch").exists()
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        assert settle(marker) == []
        deadline = time.monotonic() + 60
        while folder.exists():
            assert time.monotonic() < deadline, f"{folder} outlived the killed janito"
            time.sleep(0.02)
    finally:
        proc.kill()
        proc.wait(30)
        reap(marker)
