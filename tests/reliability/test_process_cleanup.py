"""Processes: the executing tools leave no child or grandchild behind.

Each scenario starts a process tree whose every member carries a unique marker in its
command line (``exec -a MARKER sleep``): a child that forks a sleeping grandchild and
sleeps itself past the timeout, one that leaves a background grandchild and exits at
once, one whose grandchild ignores SIGTERM and SIGHUP. Then the processes that try to get
away: ``setsid``, a change of process group, ``nohup``, coreutils ``timeout`` (which
makes its own group), a ``set -m`` background job and a daemon that double-forks, each
ended by the call's timeout, by its normal end and by its cancel token, under each
containment mechanism this machine has (bubblewrap, the supervisor). After the call
returns, the process table (``/proc/*/cmdline``, zombies excluded) must hold no process
with the marker. The same is checked through ``janito run``: with a timeout, with a
``--call-timeout`` shorter than the tool's own, and when
that command is interrupted with SIGINT, asked to stop with SIGTERM, hung up on (SIGHUP),
quit (SIGQUIT) or killed (SIGKILL) while a tool runs. A host that holds 1,100 open
descriptors (the sandbox's own pipes are then numbered above 1024, where ``select()``
cannot go) runs code under each mechanism as any other host does.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import rel_support as rel

from janito_core.cancellation import CancelToken
from janito_core.dispatch import call_tool

pytestmark = pytest.mark.skipif(not Path("/proc/self/cmdline").exists(),
                                reason="needs /proc to read the process table")


def survivors(marker: str) -> list[tuple[int, str]]:
    """Live processes (not zombies) whose command line holds ``marker``."""
    found = []
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode("utf-8", "replace")
            with open(f"/proc/{entry}/stat", "rb") as handle:
                state = handle.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and state != b"Z":
            found.append((int(entry), cmdline.strip()))
    return found


def settle(marker: str, seconds: float = 60.0) -> list[tuple[int, str]]:
    """Survivors after a short grace period (SIGKILL is delivered asynchronously)."""
    deadline = time.monotonic() + seconds
    while True:
        left = survivors(marker)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def reap(marker: str) -> None:
    """Kill what a failed scenario left (only processes carrying this test's marker)."""
    for pid, _ in survivors(marker):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def bash_tree(marker: str, kind: str) -> str:
    sleeper = f"exec -a {marker} sleep 300"
    if kind == "timeout":
        return f"( {sleeper} ) & ( {sleeper} ) & {sleeper}"
    if kind == "background":
        return f"( {sleeper} ) & ( ( {sleeper} ) & ) ; echo left them running"
    if kind == "ignores-term":
        return f"( trap '' TERM HUP INT; {sleeper} ) & sleep 0.2; echo started"
    raise ValueError(kind)


def python_tree(marker: str, kind: str) -> str:
    spawn = (f"import os, signal, sys, time\n"
             f"def sleeper(ignore=False):\n"
             f"    if os.fork() == 0:\n"
             f"        if ignore:\n"
             f"            signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
             f"            signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
             f"        os.execvp('sleep', ['{marker}', '300'])\n")
    if kind == "timeout":
        return spawn + "sleeper(); sleeper(); time.sleep(300)\n"
    if kind == "background":
        return spawn + "sleeper(); sleeper(); print('left them running')\n"
    if kind == "ignores-term":
        return spawn + "sleeper(ignore=True); time.sleep(0.2); print('started')\n"
    raise ValueError(kind)


KINDS = ("timeout", "background", "ignores-term")


def run_tree(tool: str, kind: str, marker: str, workspace: Path) -> dict[str, Any]:
    registry = rel.make_registry(workspace, "rwx", ("system",))
    timeout = 1.5 if kind == "timeout" else 30
    if tool == "RunBashCode":
        args: dict[str, Any] = {"code": bash_tree(marker, kind), "timeout": timeout}
    elif tool == "RunPythonCode":
        args = {"code": python_tree(marker, kind), "timeout": timeout}
    else:
        (workspace / "tree.py").write_text(python_tree(marker, kind), encoding="utf-8")
        args = {"file_path": "tree.py", "timeout": timeout}
    return rel.swept(call_tool(tool, args, registry=registry), tool)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("tool", ["RunBashCode", "RunPythonCode", "RunPythonFile"])
def test_no_process_outlives_the_call(tool: str, kind: str, workspace: Path) -> None:
    marker = f"janito-rel-{uuid.uuid4().hex[:12]}"
    try:
        result = run_tree(tool, kind, marker, workspace)
        if kind == "timeout":
            assert result["success"] is False and result["error_type"] == "timeout", result
        left = settle(marker)
        assert left == [], f"{tool} ({kind}) left processes running: {left}"
    finally:
        reap(marker)
    rel.count("processes: trees started and checked")


MECHANISMS = ("bubblewrap", "supervisor")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The calls' workspace: beside janito's state folder (``tmp_path/janito-config``), not
    around it, since the supervisor runs no code in a workspace that holds that folder."""
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


@pytest.fixture(params=MECHANISMS)
def mechanism(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    name = str(request.param)
    problem = rel.mechanism_problem(name)
    if problem is not None:
        pytest.skip(f"{name} cannot run here: {problem}")
    monkeypatch.setenv("JANITO_SANDBOX_MECHANISM", name)
    return name


ESCAPES = {
    "setsid": "setsid bash -c 'exec -a {m} sleep 300' &",
    "process-group": ("python3 -c \"import os; os.setpgid(0, 0); "
                      "os.execvp('sleep', ['{m}', '300'])\" &"),
    "nohup": "nohup bash -c 'exec -a {m} sleep 300' > /dev/null 2>&1 &",
    "timeout-command": "timeout 600 bash -c 'exec -a {m} sleep 300' &",
    "set-m": "set -m; ( exec -a {m} sleep 300 ) &",
    "daemon": ("python3 -c \"import os\nif os.fork() == 0:\n    os.setsid()\n"
               "    if os.fork() == 0:\n        os.execvp('sleep', ['{m}', '300'])\"; "),
}


def sleepers(marker: str) -> list[tuple[int, str]]:
    """The marked sleepers themselves (their command line starts with the marker)."""
    return [(pid, cmdline) for pid, cmdline in survivors(marker) if cmdline.startswith(marker)]


def wait_for_sleepers(marker: str, count: int, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while len(sleepers(marker)) < count:
        assert time.monotonic() < deadline, f"only {sleepers(marker)} of {count} started"
        time.sleep(0.02)


def escaping_code(kind: str, marker: str, end: str) -> str:
    """Start the escape, wait until its sleeper runs, then end as ``end`` asks."""
    code = ESCAPES[kind].format(m=marker)
    code += f" while [ -z \"$(pgrep -f '^{marker}')\" ]; do sleep 0.01; done; echo started"
    return code + ("" if end == "normal end" else "; touch started; sleep 300")


@pytest.mark.parametrize("end", ["normal end", "timeout", "cancel"])
@pytest.mark.parametrize("kind", sorted(ESCAPES))
def test_no_escape_outlives_the_call(kind: str, end: str, mechanism: str,
                                     workspace: Path) -> None:
    marker = f"janito-rel-{uuid.uuid4().hex[:12]}"
    registry = rel.make_registry(workspace, "rwx", ("system",))
    args = {"code": escaping_code(kind, marker, end), "timeout": 6 if end == "timeout" else 60}
    token = CancelToken()
    results: list[dict[str, Any]] = []
    caller = threading.Thread(target=lambda: results.append(
        call_tool("RunBashCode", args, registry=registry, cancel_token=token)))
    try:
        caller.start()
        if end == "cancel":
            deadline = time.monotonic() + 60
            while not (workspace / "started").exists():
                assert time.monotonic() < deadline, "the escape never started"
                time.sleep(0.01)
            token.cancel("cancelled by the reliability suite")
        caller.join(60)
        assert not caller.is_alive(), "the call did not return"
        (result,) = results
        rel.swept(result, "RunBashCode")
        expected = {"normal end": None, "timeout": "timeout", "cancel": "cancelled"}[end]
        assert result.get("error_type") == expected, result
        if end != "timeout":  # on a saturated machine the escape may still be starting then
            assert result["stdout"] == "started\n", result
        left = settle(marker)
        assert left == [], f"{kind} ({end}, {mechanism}) left processes running: {left}"
    finally:
        token.cancel()
        caller.join(30)
        token.close()
        reap(marker)
    rel.count("processes: escapes started and checked")


def test_a_python_daemon_outlives_neither_tool(mechanism: str, workspace: Path) -> None:
    """The double fork from Python itself, through RunPythonCode and RunPythonFile."""
    marker = f"janito-rel-{uuid.uuid4().hex[:12]}"
    code = ("import os, time\n"
            "if os.fork() == 0:\n"
            "    os.setsid()\n"
            "    if os.fork() == 0:\n"
            f"        os.execvp('sleep', [{marker!r}, '300'])\n"
            "    os._exit(0)\n"
            "os.wait()\n"
            "print('daemonised')\n")
    (workspace / "daemon.py").write_text(code, encoding="utf-8")
    registry = rel.make_registry(workspace, "rwx", ("system",))
    try:
        for tool, args in (("RunPythonCode", {"code": code}),
                           ("RunPythonFile", {"file_path": "daemon.py"})):
            result = rel.swept(call_tool(tool, args, registry=registry), tool)
            assert result["success"] is True, result
            assert settle(marker) == [], f"{tool} ({mechanism}) left the daemon running"
    finally:
        reap(marker)
    rel.count("processes: escapes started and checked", 2)


@pytest.fixture
def busy_host() -> Any:
    """1,100 more descriptors held open in this process for the length of a test."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 1_400
    if soft < wanted:
        if hard != resource.RLIM_INFINITY and hard < wanted:
            pytest.skip(f"the descriptor limit here is {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    held = [os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC) for _ in range(1_100)]
    try:
        yield held
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_host_holding_1100_descriptors_runs_code(busy_host: Any, mechanism: str,
                                                   workspace: Path) -> None:
    assert max(busy_host) >= 1_100
    registry = rel.make_registry(workspace, "rwx", ("system",))
    for tool, args in (("RunBashCode", {"code": "echo ok"}),
                       ("RunPythonCode", {"code": "print('ok')"})):
        result = rel.swept(call_tool(tool, args, registry=registry), tool)
        assert result["success"] is True, f"{tool} under {mechanism}: {result}"
        assert result["stdout"] == "ok\n"
    rel.count("processes: calls from a host holding 1,100 descriptors")


def stop_signals_at_default() -> None:
    """In the child before exec: the signals of STOPPING as at a terminal. A run started
    with one ignored (SIGINT and SIGQUIT in a background job of a non-interactive shell,
    SIGHUP under nohup) would pass that on, and janito would never hear it: the tool's
    timeout would end the tree instead."""
    for signum in STOPPING:
        if signum != signal.SIGKILL:
            signal.signal(signum, signal.SIG_DFL)


def janito_run_with_tree(tmp_path: Path, marker: str, timeout: float,
                         mechanism: str | None = None, escapes: bool = False,
                         options: tuple[str, ...] = ()) -> subprocess.Popen[str]:
    code = bash_tree(marker, "timeout")
    if escapes:
        code = "".join(ESCAPES[kind].format(m=marker) for kind in sorted(ESCAPES)) + code
    env = rel.base_env(tmp_path / "config", {"JANITO_SANDBOX_MECHANISM": mechanism}
                       if mechanism else None)
    workspace = tmp_path / "ws"  # beside the state folder, as the supervisor needs
    workspace.mkdir(exist_ok=True)
    return subprocess.Popen(
        [*rel.janito_command(), "run", "-x", *options, "RunBashCode", "--args",
         json.dumps({"code": code, "timeout": timeout})],
        cwd=workspace, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, preexec_fn=stop_signals_at_default)


def test_janito_run_with_a_timeout(tmp_path: Path) -> None:
    marker = f"janito-rel-{uuid.uuid4().hex[:12]}"
    try:
        proc = janito_run_with_tree(tmp_path, marker, 2)
        out, err = proc.communicate(timeout=120)
        rel.SWEEP.check(out + err, "janito run")
        assert proc.returncode == 1
        assert json.loads(out)["error_type"] == "timeout"
        assert settle(marker) == []
    finally:
        reap(marker)
    rel.count("processes: trees started and checked")


def test_janito_run_call_timeout_ends_the_tree(mechanism: str, tmp_path: Path) -> None:
    """``--call-timeout`` shorter than the tool's own timeout: the call's token stops it,
    every escape included."""
    marker = f"janito-rel-{uuid.uuid4().hex[:12]}"
    try:
        proc = janito_run_with_tree(tmp_path, marker, 600, mechanism, escapes=True,
                                    options=("--call-timeout", "2"))
        out, err = proc.communicate(timeout=120)
        rel.SWEEP.check(out + err, "janito run")
        assert proc.returncode == 1, err
        result = json.loads(out)
        assert result["error_type"] == "timeout", result
        assert result["error"] == "RunBashCode did not finish within 2 s and was stopped"
        assert settle(marker) == []
    finally:
        reap(marker)
    rel.count("processes: trees started and checked")


STOPPING = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGKILL]


@pytest.mark.parametrize("signum", STOPPING, ids=[signal.Signals(s).name for s in STOPPING])
def test_janito_run_stopped_while_a_tool_runs(signum: int, mechanism: str,
                                              tmp_path: Path) -> None:
    """Ctrl-C, the SIGTERM that ``timeout``, systemd and ``docker stop`` send, a closed
    terminal (SIGHUP), SIGQUIT and SIGKILL reach janito while the tool's processes run,
    some of which left the process group on purpose: none of them may be left behind."""
    marker = f"janito-rel-{uuid.uuid4().hex[:12]}"
    try:
        proc = janito_run_with_tree(tmp_path, marker, 60, mechanism, escapes=True)
        wait_for_sleepers(marker, 3 + len(ESCAPES))
        proc.send_signal(signum)
        sent = time.monotonic()
        proc.communicate(timeout=90)
        # The tool's own 60 s timeout would also end the tree: ending long before it
        # shows that the signal did.
        took = time.monotonic() - sent
        assert took < 30, f"janito ran on for {took:.0f} s after {signal.Signals(signum).name}"
        left = settle(marker)
        assert left == [], f"after {signal.Signals(signum).name} ({mechanism}): {left}"
    finally:
        reap(marker)
    rel.count("processes: trees started and checked")
