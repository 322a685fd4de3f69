"""How the run tools enforce the sandbox policy, and how each call's processes are started.

The policy is the user's (``janito_core.sandbox``: read-only, workspace-write (default),
workspace-write+network, off). The mechanism is chosen here, in this order (see
docs/decisions/0006-sandbox-and-process-containment.md for the measurements):

1. **bubblewrap** (``bwrap`` on PATH, able to create namespaces): the command runs in new
   mount, PID and IPC namespaces (and a network namespace with only loopback when the
   network is off). ``/`` is mounted read-only, ``/dev`` is a private minimal one, and
   only the workspace (unless read-only) and the call's temporary folder are writable.
   Every capability is dropped. The namespace's init dies with bwrap, and bwrap dies with
   janito (``--die-with-parent``); when the PID namespace's init ends, the kernel kills
   every process in it, whatever session or group it moved to. Under ``off`` bubblewrap
   still gives the PID namespace, with the filesystem and the network as they are.
2. **supervisor** (Linux without a usable bubblewrap): ``_supervisor.py`` under the same
   interpreter (``python -I -S``), a child subreaper that kills every descendant at the end; the code is
   confined with Landlock (writes) and a seccomp filter (network) unless the policy is off.
3. **process group** (other POSIX systems, policy ``off`` only): the command's process
   group is killed at the end; a process that leaves the group outlives the call.

A policy that no mechanism here can enforce is not weakened: the run tools are skipped
(``should_load``) or the call fails with ``sandbox_unavailable``, saying how to fix it.

Probing costs a process start, so listing the tools never probes: it looks for ``bwrap``
on PATH only (and asks the kernel for its Landlock version when there is none). The first
run probes bubblewrap once; the answer is kept for the life of the process
(``_PROBES``, guarded by a lock, since MCP serving runs calls in threads).

Each call under a confining policy gets its own temporary folder, removed after the call.
A janito killed with SIGKILL cannot remove it: the supervisor then does, and under
bubblewrap the first call of a later janito process removes such leftovers.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
from typing import NamedTuple

from janito_core.sandbox import (
    DESCRIPTIONS,
    OFF,
    READ_ONLY,
    WORKSPACE_WRITE,
    WORKSPACE_WRITE_NETWORK,
    SandboxPolicy,
    how_to_set,
    sandbox_policy,
)

from ._process import PROCESS_GROUP, Launch

BUBBLEWRAP = "bubblewrap"
SUPERVISOR = "supervisor"
MECHANISM_ENV = "JANITO_SANDBOX_MECHANISM"
"""``auto`` (default), ``bubblewrap`` or ``supervisor``: pin the mechanism (troubleshooting)."""

SANDBOX_UNAVAILABLE = "sandbox_unavailable"
PROBE_TIMEOUT = 20.0
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
# How the supervisor starts: imported (so from its cached bytecode, where running the file
# as a script would compile it on every call) from the end of the import path, where no
# module of this folder can shadow one of the standard library.
SUPERVISOR_BOOT = ("import sys; sys.path.append(sys.argv.pop(1)); import _supervisor; "
                   "sys.exit(_supervisor.main(sys.argv))")
INSTALL_HINT = "install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap)"
TMPDIR_PREFIX = "janito-call-"
"""The temporary folder of a call is ``<tempdir>/janito-call-<janito's pid>-<random>``."""
STALE_SECONDS = 600.0


class _Probes:
    """What this process learnt about the machine: asked once, kept (per process)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.bwrap: dict[str, str | None] = {}  # bwrap path -> None (works) or the problem
        self.landlock: int | None = None
        self.swept = False  # stale temporary folders of dead janito processes removed


_PROBES = _Probes()


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0: none), asked once per process."""
    if _PROBES.landlock is None:
        from ._supervisor import landlock_abi as ask

        abi = ask()
        with _PROBES.lock:
            _PROBES.landlock = abi
    return _PROBES.landlock or 0


def bwrap_argv(bwrap: str, policy: SandboxPolicy, *, workspace: str, tmpdir: str | None,
               cwd: str) -> list[str]:
    """The bubblewrap command line that runs a command under ``policy`` (command not included)."""
    if not policy.confined:
        argv = [bwrap, "--dev-bind", "/", "/", "--proc", "/proc"]
    else:
        argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        hidden = hidden_config(workspace)
        if hidden is not None:
            # janito's own settings and file secrets store are not the code's to read.
            argv += ["--tmpfs", hidden]
        if policy.workspace_writable:
            argv += ["--bind", workspace, workspace]
        if tmpdir is not None:
            argv += ["--bind", tmpdir, tmpdir]
        # Run as root, bubblewrap keeps every capability unless told otherwise, and the
        # code could remount / read-write; for other users it drops them anyway.
        argv += ["--unshare-ipc", "--cap-drop", "ALL"]
        if not policy.network:
            argv.append("--unshare-net")
    argv += ["--unshare-pid", "--die-with-parent", "--chdir", cwd, "--"]
    return argv


def hidden_config(workspace: str) -> str | None:
    """janito's configuration folder (settings, the file secrets store), to be hidden from
    sandboxed code; None when it does not exist or holds the workspace (hiding it would
    hide the workspace too)."""
    from janito_core.secrets import config_dir

    try:
        folder = os.path.realpath(config_dir())
    except (OSError, ValueError, RuntimeError):  # no home folder to find it from
        return None
    if not os.path.isdir(folder) or folder == "/":
        return None
    if workspace == folder or workspace.startswith(folder.rstrip("/") + "/"):
        return None
    return folder


def _probe_bwrap(bwrap: str) -> str | None:
    """None when bubblewrap can build the strictest sandbox here, else what went wrong."""
    import subprocess

    true = shutil.which("true") or "/bin/true"
    policy = SandboxPolicy(READ_ONLY, "probe")
    argv = [*bwrap_argv(bwrap, policy, workspace="/", tmpdir=None, cwd="/"), true]
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=PROBE_TIMEOUT, check=False, close_fds=True)
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    if done.returncode == 0:
        return None
    text = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return text[-1] if text else f"bwrap exited with code {done.returncode}"


def bwrap_problem(bwrap: str, *, probe: bool) -> str | None:
    """What stops bubblewrap here (None: it works, or it was not probed and ``probe`` is false)."""
    with _PROBES.lock:
        if bwrap in _PROBES.bwrap:
            return _PROBES.bwrap[bwrap]
    if not probe:
        return None
    problem = _probe_bwrap(bwrap)
    with _PROBES.lock:
        _PROBES.bwrap.setdefault(bwrap, problem)
        return _PROBES.bwrap[bwrap]


class Choice(NamedTuple):
    """The mechanism for a policy (None when none can enforce it) and a note on why."""

    mechanism: str | None
    why: str
    bwrap: str | None = None


def choose(policy: SandboxPolicy, *, probe: bool) -> Choice:
    """The mechanism that enforces ``policy`` here; ``probe`` allows starting bubblewrap once."""
    forced = (os.environ.get(MECHANISM_ENV) or "auto").strip().lower()
    if forced not in ("auto", BUBBLEWRAP, SUPERVISOR):
        return Choice(None, f"{MECHANISM_ENV}={forced!r} is not auto, bubblewrap or supervisor")
    bwrap = shutil.which("bwrap") if forced != SUPERVISOR else None
    if bwrap is not None:
        problem = bwrap_problem(bwrap, probe=probe)
        if problem is None:
            return Choice(BUBBLEWRAP, "", bwrap)
        missing = f"bubblewrap cannot create namespaces here ({problem})"
    elif forced == SUPERVISOR:
        missing = f"{MECHANISM_ENV}=supervisor"
    else:
        missing = "no bubblewrap"
    if forced == BUBBLEWRAP:
        return Choice(None, f"{MECHANISM_ENV}=bubblewrap, but {missing}")
    if sys.platform.startswith("linux") and sys.executable:
        if not policy.confined:
            return Choice(SUPERVISOR, missing)
        if landlock_abi() < 1:
            return Choice(None, f"kernel without Landlock and {missing}")
        from ._supervisor import seccomp_supported

        if not policy.network and not seccomp_supported():
            return Choice(None, f"{missing}, and no seccomp filter for {os.uname().machine} "
                                "to turn the network off")
        return Choice(SUPERVISOR, missing)
    if not policy.confined:
        return Choice(PROCESS_GROUP, f"{missing} and not Linux")
    return Choice(None, f"{missing}, and no Landlock on this system")


def refusal(policy: SandboxPolicy, why: str) -> str:
    """Why code cannot run under ``policy`` here, and what the user can do about it."""
    return (f"the sandbox policy {policy.name} ({policy.source}) cannot be enforced here: "
            f"{why}. To run code, {INSTALL_HINT}, or turn the sandbox off "
            f"({how_to_set(OFF)})")


def load_problem() -> str | None:
    """Why the run tools cannot load (the policy is unreadable or cannot be enforced), or None."""
    from janito_core.sandbox import SandboxPolicyError

    try:
        policy = sandbox_policy()
    except SandboxPolicyError as exc:
        return f"{exc}; no code runs until it is fixed"
    choice = choose(policy, probe=False)
    if choice.mechanism is None:
        return refusal(policy, choice.why)
    return None


def status_line() -> str:
    """One line for ``janito tools``: the policy, where it was set, the mechanism in force."""
    from janito_core.sandbox import SandboxPolicyError

    try:
        policy = sandbox_policy()
    except SandboxPolicyError as exc:
        return f"none: {exc}"
    head = f"{policy.name} ({policy.source})"
    choice = choose(policy, probe=False)
    ends = "processes end with the call"
    if choice.mechanism is None:
        return f"{head}: cannot be enforced: {choice.why}"
    if choice.mechanism == BUBBLEWRAP:
        if not policy.confined:
            return f"{head}, bubblewrap (PID namespace only): {DESCRIPTIONS[policy.name]}; {ends}"
        return (f"{head}, bubblewrap: {DESCRIPTIONS[policy.name]}; janito's configuration "
                f"folder hidden; {ends}")
    if choice.mechanism == SUPERVISOR:
        how = ("Landlock and seccomp under a supervisor" if policy.confined
               else "a supervisor (child subreaper)")
        return f"{head}, {how} ({choice.why}): {DESCRIPTIONS[policy.name]}; {ends}"
    return (f"{head}, unconfined: {choice.why}; processes that leave the call's process "
            "group (setsid, daemons) outlive it")


# -- starting a call ----------------------------------------------------------------------


def prepare(policy: SandboxPolicy, choice: Choice, argv: list[str], *, cwd: str,
            workspace: str, env: dict[str, str]) -> Launch:
    """How to start ``argv`` under ``policy`` with the chosen mechanism (OSError if it cannot)."""
    import tempfile

    tmpdir = None
    env = dict(env)
    if policy.confined:
        if not _PROBES.swept:
            _PROBES.swept = True
            sweep_stale_folders()
        prefix = f"{TMPDIR_PREFIX}{os.getpid()}-"
        tmpdir = os.path.realpath(tempfile.mkdtemp(prefix=prefix))
        env.update(TMPDIR=tmpdir, TMP=tmpdir, TEMP=tmpdir)
    launch = Launch(argv, env, mechanism=choice.mechanism or PROCESS_GROUP, tmpdir=tmpdir)
    try:
        if choice.mechanism == BUBBLEWRAP and choice.bwrap is not None:
            launch.argv = [*bwrap_argv(choice.bwrap, policy, workspace=workspace, tmpdir=tmpdir,
                                       cwd=cwd), *argv]
        elif choice.mechanism == SUPERVISOR:
            _supervised(launch, policy, argv, cwd=cwd, workspace=workspace, tmpdir=tmpdir)
    except BaseException:
        launch.cleanup()
        raise
    return launch


def sweep_stale_folders(min_age: float = STALE_SECONDS) -> int:
    """Remove the temporary folders of calls whose janito died (SIGKILL leaves them behind).

    A folder is stale when it is this user's, named after a process that no longer
    exists, and untouched for ``min_age`` seconds (a process of another PID namespace
    sharing the folder looks dead from here; its folder is in use only if recently
    touched). Returns how many were removed. Run once per process, on its first call.
    """
    import tempfile
    import time

    root = tempfile.gettempdir()
    removed = 0
    try:
        entries = list(os.scandir(root))
    except OSError:
        return 0
    now = time.time()
    for entry in entries:
        if not entry.name.startswith(TMPDIR_PREFIX):
            continue
        pid_text = entry.name[len(TMPDIR_PREFIX):].split("-", 1)[0]
        try:
            pid = int(pid_text)
            info = entry.stat(follow_symlinks=False)
        except (ValueError, OSError):
            continue
        if (not entry.is_dir(follow_symlinks=False) or info.st_uid != os.getuid()
                or now - info.st_mtime < min_age or _alive(pid)):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed += 1
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, but is another user's
        return True
    return True


def supervisor_command() -> list[str]:
    """The start of the supervisor's command line (its options and the command follow)."""
    return [sys.executable, "-I", "-S", "-c", SUPERVISOR_BOOT, PACKAGE_DIR]


def _supervised(launch: Launch, policy: SandboxPolicy, argv: list[str], *, cwd: str,
                workspace: str, tmpdir: str | None) -> None:
    from ._supervisor import DEVICE_FILES, SHARED_MEMORY, options

    read_end, write_end = os.pipe()
    launch.child_fds = (read_end,)
    launch.control = write_end
    writable = [path for path in (workspace if policy.workspace_writable else None, tmpdir,
                                  SHARED_MEMORY) if path]
    settings = {
        "parent": os.getpid(),
        "control": read_end,
        "cwd": cwd,
        "confine": policy.confined,
        "write": writable,
        "devices": list(DEVICE_FILES),
        "network": policy.network,
        "tmpdir": tmpdir,
    }
    launch.argv = [*supervisor_command(), *options(settings), "--", *argv]
    launch.polite = True


# -- telling the model what the sandbox refused ---------------------------------------------

_WRITE_SIGNS = ("Read-only file system", "EROFS")
_NETWORK_SIGNS = ("Network is unreachable", "ENETUNREACH", "Connection refused", "ECONNREFUSED",
                  "Temporary failure in name resolution", "Name or service not known",
                  "Could not resolve host", "No address associated with hostname",
                  "getaddrinfo failed", "nodename nor servname")
_DENIED_SIGNS = ("Permission denied", "EACCES", "Operation not permitted", "EPERM")


def refusal_note(policy: SandboxPolicy, mechanism: str, stderr: str) -> str | None:
    """A note for a run whose errors show the sandbox refusing something, else None.

    Under bubblewrap a refused write reads ``Read-only file system`` and a refused
    connection ``Connection refused``, ``Network is unreachable`` or a failed name lookup;
    under the supervisor both read ``Permission denied`` (Landlock and seccomp answer
    EACCES), so the note there says what may have been refused.
    """
    if not policy.confined or not stderr:
        return None
    write = any(sign in stderr for sign in _WRITE_SIGNS)
    network = not policy.network and any(sign in stderr for sign in _NETWORK_SIGNS)
    denied = mechanism == SUPERVISOR and any(sign in stderr for sign in _DENIED_SIGNS)
    sentences = []
    if write or denied:
        verb = "may have refused" if denied and not write else "refused"
        where = ("only in the call's temporary folder $TMPDIR" if not policy.workspace_writable
                 else "only in the workspace and in the call's temporary folder $TMPDIR")
        grant = (f"to let code write in the workspace, the user can choose the policy "
                 f"{WORKSPACE_WRITE} ({how_to_set(WORKSPACE_WRITE)}); "
                 if not policy.workspace_writable else "")
        sentences.append(
            f"The sandbox (policy {policy.name}) {verb} a write: code may write {where}. "
            f"To write elsewhere, {grant}the user can turn the sandbox off ({how_to_set(OFF)}).")
    if network or (denied and not policy.network):
        sentences.append(
            f"The network is off in the sandbox (policy {policy.name}), so connections and "
            f"name lookups fail. To allow them, the user can choose the policy "
            f"{WORKSPACE_WRITE_NETWORK} ({how_to_set(WORKSPACE_WRITE_NETWORK)}).")
    return " ".join(sentences) or None
