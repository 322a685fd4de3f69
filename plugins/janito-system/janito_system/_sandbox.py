"""How the run tools enforce the sandbox policy, and how each call's processes are started.

The policy is the user's (``janito_core.sandbox``: read-only, workspace-write (default),
workspace-write+network, off). The mechanism is chosen here, in this order (see
docs/decisions/0006-sandbox-and-process-containment.md for the measurements):

1. **bubblewrap** (a trusted ``bwrap``, able to create namespaces): the command runs in new
   mount, PID and IPC namespaces (and a network namespace with only loopback when the
   network is off). ``/`` is mounted read-only, ``/dev`` is a private minimal one, and
   only the workspace (unless read-only) and the call's temporary folder are writable;
   janito's state folder is covered by an empty read-only folder, mounted after every
   other. Every capability is dropped. The namespace's init dies with bwrap, and bwrap
   dies with janito (``--die-with-parent``); when the PID namespace's init ends, the
   kernel kills every process in it, whatever session or group it moved to. Under ``off``
   bubblewrap still gives the PID namespace, with the filesystem and the network as they are.
2. **supervisor** (Linux without a usable bubblewrap): ``_supervisor.py`` under a trusted
   interpreter (``python -I -S``), a child subreaper that kills every descendant at the
   end; the code is confined with Landlock (writes; reads of janito's state folder) and a
   seccomp filter (network) unless the policy is off.
3. **process group** (other POSIX systems, policy ``off`` only): the command's process
   group is killed at the end; a process that leaves the group outlives the call.

A policy that no mechanism here can enforce is not weakened: the run tools are skipped
(``should_load``) or the call fails with ``sandbox_unavailable``, saying how to fix it.
So does a call whose workspace lies in janito's state folder, and, under the supervisor,
one whose writable folders hold that folder.

**Launchers are trusted, never found.** bubblewrap is taken only from the system's own
folders (``TRUSTED_FOLDERS``), never from PATH, where a workspace folder (an activated
``.venv/bin``, ``~/.local/bin`` in a home-folder workspace) may come first; the
supervisor's interpreter is the real file behind ``sys._base_executable`` or
``sys.executable``. Either must be a regular file that only its owner (root; for the
interpreter also the user janito runs as) can change, in folders only that owner can
change, outside the workspace and every folder sandboxed code may write. Each is
resolved once per process. The supervisor's own code is not read by the supervisor:
this process compiles it once and hands it over through a pipe.

Probing costs a process start, so listing the tools never probes: it looks for the
trusted ``bwrap`` only (and asks the kernel for its Landlock version when there is none).
The first run probes bubblewrap once; the answer is kept for the life of the process
(``_PROBES``, guarded by a lock, since MCP serving runs calls in threads).

Each call under a confining policy gets its own temporary folder, removed after the call.
A janito killed with SIGKILL cannot remove it: the supervisor then does, and under
bubblewrap the first call of a later janito process removes such leftovers.

A sandbox that fails for its own reasons (bubblewrap cannot set up a mount, the
supervisor cannot confine the code) says so on a status pipe, and the call answers
``sandbox_unavailable`` instead of an exit status that would read as the code's.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
from typing import TYPE_CHECKING, NamedTuple

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

from ._launchers import (
    BUBBLEWRAP,
    INSTALL_HINT,
    TMPDIR_PREFIX,
    TRUSTED_FOLDERS,
    _untrusted_folders,
    untrusted,
)
from ._process import PROCESS_GROUP, Launch

if TYPE_CHECKING:
    from collections.abc import Callable

    from ._mask import Mask
    from ._overlay import Layers

SUPERVISOR = "supervisor"
MECHANISM_ENV = "JANITO_SANDBOX_MECHANISM"
"""``auto`` (default), ``bubblewrap`` or ``supervisor``: pin the mechanism (troubleshooting)."""

SANDBOX_UNAVAILABLE = "sandbox_unavailable"
PROBE_TIMEOUT = 20.0
# How the supervisor starts: its code, compiled by janito, comes through the pipe named
# first, so nothing it runs is read from a folder at the time of the call.
SUPERVISOR_BOOT = ("import marshal, os, sys\n"
                   "fd = int(sys.argv.pop(1)); chunks = []\n"
                   "while chunk := os.read(fd, 65536):\n"
                   "    chunks.append(chunk)\n"
                   "os.close(fd)\n"
                   "module = {'__name__': 'janito_supervisor', '__builtins__': __builtins__}\n"
                   "exec(marshal.loads(b''.join(chunks)), module)\n"
                   "sys.exit(module['main'](sys.argv))\n")
STATE_HINT = "keep janito's state elsewhere with JANITO_CONFIG_DIR=FOLDER"
STALE_SECONDS = 600.0


class Trusted(NamedTuple):
    """A launcher janito may start (``path``, a real path), or None and why there is none."""

    path: str | None
    why: str


class _Probes:
    """What this process learnt about the machine: asked once, kept (per process)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.bwrap: dict[str, str | None] = {}  # bwrap path -> None (works) or the problem
        self.landlock: int | None = None
        self.swept = False  # stale temporary folders of dead janito processes removed
        self.launchers: dict[str, Trusted] = {}  # BUBBLEWRAP / SUPERVISOR -> the launcher
        self.supervisor_code: bytes | None = None  # the supervisor module, marshalled


_PROBES = _Probes()


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0: none), asked once per process."""
    if _PROBES.landlock is None:
        from ._supervisor import landlock_abi as ask

        abi = ask()
        with _PROBES.lock:
            _PROBES.landlock = abi
    return _PROBES.landlock or 0


# -- trusted launchers ------------------------------------------------------------------------


def _within(path: str, folder: str) -> bool:
    """Whether the real path ``path`` is ``folder`` or lies beneath it."""
    folder = folder.rstrip("/")
    return path == folder or path.startswith(folder + "/") or not folder


def _reachable(path: str, workspace: str | None) -> str | None:
    """The folder sandboxed code (or a tool) may write that holds ``path``, or None."""
    from ._supervisor import SHARED_MEMORY

    for folder in (workspace, SHARED_MEMORY):
        if folder is not None and _within(path, os.path.realpath(folder)):
            return folder
    return None


def trusted_bwrap() -> Trusted:
    """bubblewrap from ``TRUSTED_FOLDERS``, resolved once per process."""
    return _resolved_once(BUBBLEWRAP, _find_bwrap)


def _resolved_once(launcher: str, find: Callable[[], Trusted]) -> Trusted:
    with _PROBES.lock:
        found = _PROBES.launchers.get(launcher)
        if found is None:
            found = _PROBES.launchers[launcher] = find()
        return found


def _find_bwrap() -> Trusted:
    problems = []
    seen = set()
    for folder in TRUSTED_FOLDERS:
        candidate = os.path.join(folder, "bwrap")
        if not os.path.lexists(candidate):
            continue
        real = os.path.realpath(candidate)
        if real in seen:
            continue
        seen.add(real)
        problem = untrusted(real, (0,))
        if problem is None:
            return Trusted(real, "")
        problems.append(f"{candidate} ({real}) {problem}")
    why = (f"no trusted bubblewrap: {'; '.join(problems)}" if problems
           else f"no bubblewrap in {', '.join(TRUSTED_FOLDERS)}")
    elsewhere = shutil.which("bwrap")
    if elsewhere is not None and os.path.realpath(elsewhere) not in seen:
        why += f" (the one on PATH, {elsewhere}, is not in a system folder, and is not used)"
    return Trusted(None, why)


def trusted_python() -> Trusted:
    """The interpreter the supervisor runs under, resolved once per process."""
    return _resolved_once(SUPERVISOR, _find_python)


def _find_python() -> Trusted:
    # The interpreter of a venv is a link to (or a copy of) its base one: the base is the
    # one outside the project, and the same Python that compiled the supervisor's code.
    owners = (0, os.geteuid())
    library = getattr(sys, "_stdlib_dir", None) or os.path.dirname(getattr(os, "__file__", ""))
    problems = []
    for candidate in (getattr(sys, "_base_executable", ""), sys.executable):
        if not candidate:
            continue
        real = os.path.realpath(candidate)
        problem = untrusted(real, owners)
        if problem is None and library:
            for folder in (os.path.join(library, "lib-dynload"), library):
                if os.path.isdir(folder):
                    problem = _untrusted_folders(os.path.realpath(folder), owners)
                    if problem is not None:
                        problem = f"has a standard library that {problem}"
                        break
        if problem is None:
            return Trusted(real, "")
        problems.append(f"{candidate} ({real}) {problem}")
    if not problems:
        return Trusted(None, "the path of janito's interpreter is unknown")
    return Trusted(None, f"no trusted interpreter for the supervisor: {'; '.join(problems)}")


def _launcher(found: Trusted, workspace: str | None) -> Trusted:
    """``found``, unless it lies where sandboxed code or a tool may write."""
    if found.path is None:
        return found
    folder = _reachable(found.path, workspace)
    if folder is None:
        return found
    return Trusted(None, f"{found.path} lies in {folder}, which sandboxed code may write")


def supervisor_code() -> bytes:
    """The supervisor module compiled and marshalled, once per process, from the copy
    this process imports (its cached bytecode where there is one)."""
    with _PROBES.lock:
        if _PROBES.supervisor_code is None:
            import marshal

            from . import _supervisor

            get_code = getattr(_supervisor.__loader__, "get_code", None)
            code = get_code(_supervisor.__name__) if get_code is not None else None
            if code is None:
                with open(_supervisor.__file__, "rb") as handle:
                    code = compile(handle.read(), _supervisor.__file__, "exec",
                                   dont_inherit=True)
            _PROBES.supervisor_code = marshal.dumps(code)
        return _PROBES.supervisor_code


# -- janito's state folder ------------------------------------------------------------------


class Hidden(NamedTuple):
    """janito's state folder as a call sees it: the folder to hide from the code (None:
    nothing to hide) or why code cannot run at all with the folder where it lies."""

    folder: str | None
    refusal: str | None = None


def hidden_state(policy: SandboxPolicy, mechanism: str | None, workspace: str) -> Hidden:
    """What to hide for a call in ``workspace`` (a real path), or why code cannot run.

    The folder (configuration, secrets, server and trust lists) is hidden whatever it
    lies beside. Under bubblewrap it is covered after every writable mount, wherever it
    lies; the supervisor's Landlock only grants, so there it is kept out of reach by
    granting reads beside it, which cannot work inside a folder the code may write.
    Neither can hide a folder that holds the workspace or the temporary folders.
    """
    import tempfile

    from janito_core.config import state_folder

    from ._supervisor import SHARED_MEMORY

    if not policy.confined:
        return Hidden(None)
    state = state_folder(workspace)
    if not state.path:  # no home folder to keep janito's state in: nothing to hide
        return Hidden(None)
    if state.parts == ():
        place = "is" if state.path == workspace.rstrip("/") else "lies inside"
        return Hidden(None, f"the workspace {workspace} {place} janito's own state folder "
                            f"{state.path}, which sandboxed code may not see, so no code runs "
                            f"there: open janito on another folder, or {STATE_HINT} outside "
                            "the workspace")
    temporary = os.path.realpath(tempfile.gettempdir())
    if _within(temporary, state.path):
        return Hidden(None, f"the temporary folder {temporary} lies inside janito's own state "
                            f"folder {state.path}, which sandboxed code may not see: set "
                            f"TMPDIR to another folder, or {STATE_HINT}")
    if mechanism == SUPERVISOR:
        writable = ([workspace] if policy.workspace_writable else []) + [SHARED_MEMORY]
        for folder in writable:
            if _within(state.path, os.path.realpath(folder)):
                return Hidden(None, f"janito's state folder {state.path} lies inside {folder}, "
                                    "which sandboxed code may write, and the supervisor "
                                    "(Landlock) cannot keep code out of a folder inside one "
                                    f"it may write: {INSTALL_HINT}, or {STATE_HINT} outside "
                                    f"{folder}")
    if not os.path.isdir(state.path):
        # Made now, so that code cannot make it and write settings janito would then read.
        try:
            os.makedirs(state.path, mode=0o700, exist_ok=True)
        except OSError as exc:
            if state.inside:
                return Hidden(None, f"janito's state folder {state.path} does not exist and "
                                    f"cannot be made ({exc.strerror or exc}), so it cannot be "
                                    f"hidden from code that may write the workspace: "
                                    f"{STATE_HINT}")
            return Hidden(None)
    return Hidden(state.path)


# -- bubblewrap -----------------------------------------------------------------------------


def bwrap_argv(bwrap: str, policy: SandboxPolicy, *, workspace: str, tmpdir: str | None,
               cwd: str, hide: str | None = None, status_fd: int | None = None,
               mask: Mask | None = None, empty: str | None = None,
               overlay: Layers | None = None) -> list[str]:
    """The bubblewrap command line that runs a command under ``policy`` (command not included).

    ``hide``: a folder covered by an empty read-only one after every other mount, so no
    bind of a folder around it uncovers it. ``status_fd``: where bubblewrap writes JSON
    about the command, its exit code last (absent when bubblewrap itself failed).
    ``mask``: what the call's policy covers or keeps read-only (``_mask``), mounted over
    the workspace's own mount, with ``empty`` (an empty read-only file) over hidden files.
    ``overlay``: the layers through which the code sees the workspace, its writes kept
    there (``_overlay``); only where the policy lets code write the workspace. The line
    then starts with what mounts the overlay and becomes bubblewrap.
    """
    if overlay is not None and not (policy.confined and policy.workspace_writable):
        raise ValueError(f"the {policy.name} policy lets code write no workspace to overlay")
    if not policy.confined:
        argv = [bwrap, "--dev-bind", "/", "/", "--proc", "/proc"]
    else:
        argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        if policy.workspace_writable:
            argv += ["--bind", workspace, workspace]
        if tmpdir is not None:
            argv += ["--bind", tmpdir, tmpdir]
        if mask is not None and not mask.empty:
            from ._mask import bwrap_mounts

            if mask.covers and empty is None:
                raise ValueError("a mask that covers files needs an empty file")
            argv += bwrap_mounts(mask, empty or "")
        if hide is not None:
            argv += ["--tmpfs", hide, "--remount-ro", hide]
        # Run as root, bubblewrap keeps every capability unless told otherwise, and the
        # code could remount / read-write; for other users it drops them anyway.
        argv += ["--unshare-ipc", "--cap-drop", "ALL"]
        if not policy.network:
            argv.append("--unshare-net")
    if status_fd is not None:
        argv += ["--json-status-fd", str(status_fd)]
    argv += ["--unshare-pid", "--die-with-parent", "--chdir", cwd, "--"]
    if overlay is not None:
        from ._overlay import wrap_bwrap

        return wrap_bwrap(argv, workspace, overlay)
    return argv


def _probe_bwrap(bwrap: str) -> str | None:
    """None when bubblewrap can build the strictest sandbox here, else what went wrong."""
    import subprocess

    true = shutil.which("true") or "/bin/true"
    policy = SandboxPolicy(READ_ONLY, "probe")
    read_end, write_end = os.pipe()
    try:
        argv = [*bwrap_argv(bwrap, policy, workspace="/", tmpdir=None, cwd="/",
                            status_fd=write_end), true]
        try:
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                                  timeout=PROBE_TIMEOUT, check=False, close_fds=True,
                                  pass_fds=(write_end,))
        except (OSError, subprocess.SubprocessError) as exc:
            return str(exc)
        os.close(write_end)
        write_end = -1
        status = _drain(read_end)
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)
    if done.returncode == 0:
        if b'"exit-code"' not in status:
            return "this bubblewrap does not report the exit code (--json-status-fd)"
        return None
    text = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return text[-1] if text else f"bwrap exited with code {done.returncode}"


def _drain(fd: int) -> bytes:
    """What the pipe ``fd`` holds now, without waiting for more."""
    os.set_blocking(fd, False)
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except (BlockingIOError, InterruptedError):
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


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


# -- choosing ---------------------------------------------------------------------------------


class Choice(NamedTuple):
    """The mechanism for a policy (None when none can enforce it), a note on why, and the
    launcher it starts (bwrap, or the supervisor's interpreter)."""

    mechanism: str | None
    why: str
    launcher: str | None = None


def choose(policy: SandboxPolicy, *, probe: bool, workspace: str | None = None) -> Choice:
    """The mechanism that enforces ``policy`` here; ``probe`` allows starting bubblewrap once.

    ``workspace`` (a real path), when known, rules out a launcher that lies inside it.
    """
    forced = (os.environ.get(MECHANISM_ENV) or "auto").strip().lower()
    if forced not in ("auto", BUBBLEWRAP, SUPERVISOR):
        return Choice(None, f"{MECHANISM_ENV}={forced!r} is not auto, bubblewrap or supervisor")
    if forced != SUPERVISOR:
        bwrap = _launcher(trusted_bwrap(), workspace)
        if bwrap.path is not None:
            problem = bwrap_problem(bwrap.path, probe=probe)
            if problem is None:
                return Choice(BUBBLEWRAP, "", bwrap.path)
            missing = f"bubblewrap cannot create namespaces here ({problem})"
        else:
            missing = bwrap.why
    else:
        missing = f"{MECHANISM_ENV}=supervisor"
    if forced == BUBBLEWRAP:
        return Choice(None, f"{MECHANISM_ENV}=bubblewrap, but {missing}")
    if sys.platform.startswith("linux"):
        python = _launcher(trusted_python(), workspace)
        if python.path is None:
            return Choice(None, f"{missing}, and {python.why}")
        if not policy.confined:
            return Choice(SUPERVISOR, missing, python.path)
        if landlock_abi() < 1:
            return Choice(None, f"kernel without Landlock and {missing}")
        from ._supervisor import seccomp_supported

        if not policy.network and not seccomp_supported():
            return Choice(None, f"{missing}, and no seccomp filter for {os.uname().machine} "
                                "to turn the network off")
        return Choice(SUPERVISOR, missing, python.path)
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
    """One line for ``janito tools``: the policy, where it was set, the mechanism in force
    and the program it starts."""
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
            return (f"{head}, bubblewrap {choice.launcher} (PID namespace only): "
                    f"{DESCRIPTIONS[policy.name]}; {ends}")
        return (f"{head}, bubblewrap {choice.launcher}: {DESCRIPTIONS[policy.name]}; janito's "
                f"state folder hidden; {ends}")
    if choice.mechanism == SUPERVISOR:
        how = ("Landlock and seccomp under a supervisor" if policy.confined
               else "a supervisor (child subreaper)")
        hidden = "; janito's state folder hidden" if policy.confined else ""
        return (f"{head}, {how} run by {choice.launcher} ({choice.why}): "
                f"{DESCRIPTIONS[policy.name]}{hidden}; {ends}")
    return (f"{head}, unconfined: {choice.why}; processes that leave the call's process "
            "group (setsid, daemons) outlive it")


# -- starting a call ----------------------------------------------------------------------


def prepare(policy: SandboxPolicy, choice: Choice, argv: list[str], *, cwd: str,
            workspace: str, env: dict[str, str], hide: str | None = None,
            mask: Mask | None = None, overlay: Layers | None = None) -> Launch:
    """How to start ``argv`` under ``policy`` with the chosen mechanism (OSError if it cannot).

    ``hide``: janito's state folder (``hidden_state``), kept from the code. ``mask``:
    what the call's policy keeps from the code (``_mask.policy_mask``); only bubblewrap
    can apply one (``_mask.refusal`` says where a call must not run instead).
    ``overlay``: the layers that capture the code's writes (bubblewrap only; the caller
    reads and removes them after the call).
    """
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
        if choice.mechanism == BUBBLEWRAP and choice.launcher is not None:
            status_read, status_write = os.pipe()
            launch.report = status_read
            launch.child_fds = (status_write,)
            empty = None
            if mask is not None and mask.covers:
                from ._mask import empty_file

                empty = empty_file([hide] if hide else [])
            launch.argv = [*bwrap_argv(choice.launcher, policy, workspace=workspace,
                                       tmpdir=tmpdir, cwd=cwd, hide=hide,
                                       status_fd=status_write, mask=mask, empty=empty,
                                       overlay=overlay),
                           *argv]
        elif choice.mechanism == SUPERVISOR and choice.launcher is not None:
            _supervised(launch, choice.launcher, policy, argv, cwd=cwd, workspace=workspace,
                        tmpdir=tmpdir, hide=hide)
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
        if entry.name.endswith("-layers"):  # an overlay's: its work folder needs opening
            from ._overlay import Layers, remove_layers

            remove_layers(Layers(entry.path, os.path.join(entry.path, "upper"),
                                 os.path.join(entry.path, "work")))
        else:
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


def supervisor_command(python: str, code_fd: int) -> list[str]:
    """The start of the supervisor's command line (its options and the command follow):
    ``python`` runs the code it reads from ``code_fd`` (``supervisor_code``)."""
    return [python, "-I", "-S", "-c", SUPERVISOR_BOOT, str(code_fd)]


def code_pipe() -> int:
    """The read end of a pipe that holds the supervisor's code, its write end closed."""
    code = supervisor_code()
    read_end, write_end = os.pipe()
    try:
        if len(code) > 65536:  # more than a pipe holds by default, written before any reader
            import fcntl

            fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, len(code))
        view = memoryview(code)
        while view:
            view = view[os.write(write_end, view):]
    except BaseException:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)
    return read_end


def _supervised(launch: Launch, python: str, policy: SandboxPolicy, argv: list[str], *,
                cwd: str, workspace: str, tmpdir: str | None, hide: str | None) -> None:
    from ._supervisor import DEVICE_FILES, SHARED_MEMORY, options

    read_end, write_end = os.pipe()
    launch.control = write_end
    launch.child_fds = (read_end,)
    report_read, report_write = os.pipe()
    launch.report = report_read
    launch.child_fds += (report_write,)
    code = code_pipe()
    launch.child_fds += (code,)
    writable = [path for path in (workspace if policy.workspace_writable else None, tmpdir,
                                  SHARED_MEMORY) if path]
    settings = {
        "parent": os.getpid(),
        "control": read_end,
        "report": report_write,
        "cwd": cwd,
        "confine": policy.confined,
        "write": writable,
        "devices": list(DEVICE_FILES),
        "network": policy.network,
        "tmpdir": tmpdir,
        "hide": hide,
    }
    launch.argv = [*supervisor_command(python, code), *options(settings), "--", *argv]
    launch.polite = True


def sandbox_failure(mechanism: str, report: bytes | None, stderr: str) -> str | None:
    """Why the sandbox itself failed, from what it reported about a run that ended on its
    own (None: it ran the command to its end, and the exit status is the command's)."""
    if report is None:
        return None
    if mechanism == BUBBLEWRAP:
        if b'"exit-code"' in report:
            return None
        lines = stderr.splitlines()
        said = [line[len("bwrap: "):] for line in lines if line.startswith("bwrap: ")]
        if said:
            return f"bubblewrap failed: {said[-1]}"
        # the overlay is mounted before bubblewrap starts: no code ran when that failed
        mounting = [line for line in lines if line.startswith(("mount: ", "unshare: "))]
        if mounting:
            return f"the workspace's overlay could not be mounted: {mounting[-1]}"
        return "bubblewrap failed before the command ended"
    lines = report.decode("utf-8", "replace").splitlines()
    for line in lines:
        if line.startswith("failed: "):
            return f"the supervisor failed: {line[len('failed: '):]}"
    if "ok" in lines:
        return None
    return "the supervisor ended without saying how the command ended"


# -- telling the model what the sandbox refused ---------------------------------------------

_WRITE_SIGNS = ("Read-only file system", "EROFS")
_NETWORK_SIGNS = ("Network is unreachable", "ENETUNREACH", "Connection refused", "ECONNREFUSED",
                  "Temporary failure in name resolution", "Name or service not known",
                  "Could not resolve host", "No address associated with hostname",
                  "getaddrinfo failed", "nodename nor servname")
_DENIED_SIGNS = ("Permission denied", "EACCES", "Operation not permitted", "EPERM")


def refusal_note(policy: SandboxPolicy, mechanism: str, stderr: str,
                 signal: str | None = None, *, mask: Mask | None = None) -> str | None:
    """A note for a run whose errors show the sandbox refusing something, else None.

    Under bubblewrap a refused write reads ``Read-only file system`` and a refused
    connection ``Connection refused``, ``Network is unreachable`` or a failed name lookup;
    under the supervisor both read ``Permission denied`` (Landlock and seccomp answer
    EACCES), so the note there says what may have been refused, and a program killed by
    SIGSYS made a system call of another ABI (a 32-bit program), which it refuses.
    ``mask``: what the call's policy kept read-only or covered, named when a refused write
    or a busy mount point shows the code ran into it.
    """
    if not policy.confined:
        return None
    if signal == "SIGSYS" and mechanism == SUPERVISOR and not policy.network:
        return (f"The sandbox (policy {policy.name}) stopped a 32-bit (or x32) program: with "
                "the network off it refuses every system call of those ABIs. To run it, the "
                f"user can choose the policy {WORKSPACE_WRITE_NETWORK} "
                f"({how_to_set(WORKSPACE_WRITE_NETWORK)}) or install bubblewrap.")
    if not stderr:
        return None
    write = any(sign in stderr for sign in _WRITE_SIGNS)
    network = not policy.network and any(sign in stderr for sign in _NETWORK_SIGNS)
    denied = mechanism == SUPERVISOR and any(sign in stderr for sign in _DENIED_SIGNS)
    busy = mask is not None and not mask.empty and _BUSY_SIGN in stderr
    sentences = []
    policy_sentence = (_mask_note(mask, stderr) if mask is not None and (write or busy)
                       else None)
    if policy_sentence is not None:
        sentences.append(policy_sentence)
    elif write or denied:
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


_BUSY_SIGN = "Device or resource busy"


def _mask_note(mask: Mask, stderr: str) -> str | None:
    """The sentence for a write the policy's mask refused, or None when the errors name
    none of the paths it holds."""
    import os.path

    names = {os.path.basename(path) for path in (*mask.read_only, *mask.files, *mask.folders,
                                                 *mask.pinned)}
    if not any(name in stderr for name in names):
        return None
    parts = []
    if any(path.endswith("/.janito") for path in mask.read_only):
        parts.append(".janito/ (the project's policy) is read-only for code")
    if any(path.endswith("/.git") for path in mask.read_only):
        parts.append(".git/ is read-only for code unless a person approves the call")
    if mask.covers or mask.pinned:
        parts.append("the paths the policy denies reading are covered by empty read-only "
                     "ones, and the folders that hold them cannot be moved or removed")
    return f"The policy's path rules bind the code too: {'; '.join(parts)}."
