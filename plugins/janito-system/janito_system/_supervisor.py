"""The fallback sandbox of the run tools: one small supervisor process per call.

Used where bubblewrap is missing or cannot create namespaces. janito starts it as
``PYTHON -I -S -c BOOT CODE_FD OPTIONS -- ARGV...`` (``_sandbox.supervisor_command``):
PYTHON is a trusted interpreter (a real file no folder the code can write holds), and the
code of this module is not read from disk by the supervisor: janito compiled it once, in
its own process, and hands the bytecode over through a pipe (CODE_FD), so code that
rewrote this file in a writable folder changes nothing. It imports the standard library
only, and as little of it as it can, since every call pays for the start of this
interpreter. The options:
``--parent PID`` (janito), ``--control FD``, ``--report FD``, ``--cwd DIR``,
``--confine``, ``--network``, ``--tmpdir DIR`` (the call's temporary folder), ``--hide
DIR`` (janito's state folder), ``--write PATH`` and ``--device FILE`` (repeatable). It:

- becomes a child subreaper, so every process the call starts stays its descendant,
  whatever session or process group it moves to and however often it forks;
- asks for SIGTERM when janito dies (``PR_SET_PDEATHSIG``) and watches a pipe that janito
  holds open for the length of the call, so it notices janito going away either way;
- runs ARGV in a child that, under a confining policy, drops every capability, sets
  ``no_new_privs``, restricts itself with Landlock (writes only beneath the allowed
  folders; reads everywhere but in the hidden folder; from Landlock ABI 6 no signals to
  processes outside the sandbox) and, with the network off, installs a seccomp filter
  that refuses every socket but Unix and netlink ones, io_uring (which could make
  sockets without the socket call) and every system call of another ABI (i386, x32);
- when that child ends, when janito goes away or when it is told to stop (SIGTERM, SIGHUP,
  SIGINT, or the pipe closing), kills every descendant and exits with the child's status
  (128 + N after death by signal N, as a shell and bubblewrap report it), then removes
  the call's temporary folder (janito removes it too, which then finds nothing: the
  supervisor cannot tell in time whether janito is gone);
- writes ``ok`` on the report pipe when it supervised the command to its end, or a line
  ``failed: WHY`` when it, or the confining of the child, failed: janito then answers
  with a sandbox failure, never with an exit status that would read as the code's.

The functions are also imported by janito itself (``landlock_abi``, ``seccomp_supported``)
to say what the machine offers; ctypes is imported only when they are called.
"""

from __future__ import annotations

import os
import stat
import sys
import time

TYPE_CHECKING = False  # typing itself is not imported: it would cost every call's start
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

try:
    # The C module behind ``signal``: the same functions and numbers, without the enum
    # wrappers, whose import costs more than the rest of this module's start together.
    import _signal as signal  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # pragma: no cover - an interpreter without it
    import signal

# Landlock (include/uapi/linux/landlock.h); the syscall numbers are shared by every
# architecture janito runs on (x86_64, aarch64).
_SYS_LANDLOCK_CREATE_RULESET = 444
_SYS_LANDLOCK_ADD_RULE = 445
_SYS_LANDLOCK_RESTRICT_SELF = 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1
_FS_EXECUTE = 1 << 0
_FS_WRITE_FILE = 1 << 1
_FS_READ_FILE = 1 << 2
_FS_READ_DIR = 1 << 3
_FS_REMOVE_DIR = 1 << 4
_FS_REMOVE_FILE = 1 << 5
_FS_MAKE_CHAR = 1 << 6
_FS_MAKE_DIR = 1 << 7
_FS_MAKE_REG = 1 << 8
_FS_MAKE_SOCK = 1 << 9
_FS_MAKE_FIFO = 1 << 10
_FS_MAKE_BLOCK = 1 << 11
_FS_MAKE_SYM = 1 << 12
_FS_REFER = 1 << 13  # ABI 2
_FS_TRUNCATE = 1 << 14  # ABI 3
_NET_BIND_TCP = 1 << 0  # ABI 4
_NET_CONNECT_TCP = 1 << 1  # ABI 4
_SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
_SCOPE_SIGNAL = 1 << 1  # ABI 6

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_CAPABILITY_VERSION_3 = 0x20080522

# seccomp: the audit architecture of the native ABI and its socket() numbers. Any other
# architecture a call can come in on (i386 or 32-bit arm compat, any other) and, on x86_64,
# an x32 call (its number has bit 30 set) is refused wholesale: those entries have socket
# calls, io_uring and more of their own, and nothing janito runs needs them.
_AF_UNIX, _AF_NETLINK = 1, 16
_SECCOMP_ARCHES: dict[str, tuple[int, tuple[int, ...], int]] = {
    # machine: (audit arch, socket numbers, bits that mark another ABI's call numbers)
    "x86_64": (0xC000003E, (41,), 0x40000000),
    "aarch64": (0xC00000B7, (198,), 0),
}
_IO_URING_SETUP = 425  # the same number on x86_64 and aarch64

DEVICE_FILES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty")
"""Device files code may open for writing under a confining policy."""
SHARED_MEMORY = "/dev/shm"
"""Writable under a confining policy: POSIX semaphores and shared memory live there."""


def _libc() -> Any:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def landlock_abi() -> int:
    """The Landlock ABI version of the running kernel, 0 when it has none (or is not Linux)."""
    if not sys.platform.startswith("linux"):
        return 0
    import ctypes

    try:
        version = _libc().syscall(ctypes.c_long(_SYS_LANDLOCK_CREATE_RULESET), None,
                                  ctypes.c_size_t(0),
                                  ctypes.c_uint32(_LANDLOCK_CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return int(version) if version > 0 else 0


def seccomp_supported() -> bool:
    """Whether this module can build a seccomp filter for this machine's architecture."""
    return sys.platform.startswith("linux") and os.uname().machine in _SECCOMP_ARCHES


# -- confining the child ----------------------------------------------------------------


def _fail(what: str) -> None:
    import ctypes

    errno = ctypes.get_errno()
    raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _drop_capabilities(libc: Any) -> None:
    import ctypes

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]

    header = Header(_CAPABILITY_VERSION_3, 0)
    data = (Data * 2)()
    if libc.capset(ctypes.byref(header), data) != 0:
        _fail("capset")


def _landlock(libc: Any, abi: int, writable: list[str], devices: list[str],
              network: bool, hide: str | None) -> None:
    import ctypes

    class RulesetAttr(ctypes.Structure):
        _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64),
                    ("scoped", ctypes.c_uint64)]

    class PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    folder_rights = (_FS_WRITE_FILE | _FS_REMOVE_DIR | _FS_REMOVE_FILE | _FS_MAKE_CHAR
                     | _FS_MAKE_DIR | _FS_MAKE_REG | _FS_MAKE_SOCK | _FS_MAKE_FIFO
                     | _FS_MAKE_BLOCK | _FS_MAKE_SYM)
    file_rights = _FS_WRITE_FILE
    if abi >= 2:
        folder_rights |= _FS_REFER
    if abi >= 3:
        folder_rights |= _FS_TRUNCATE
        file_rights |= _FS_TRUNCATE
    read_folder = read_file = 0
    if hide is not None:
        # Landlock only allows: to keep one folder unreadable, reading is handled too and
        # granted beneath every entry of its ancestors but the one on the way to it.
        read_file = _FS_EXECUTE | _FS_READ_FILE
        read_folder = read_file | _FS_READ_DIR
    attr = RulesetAttr(folder_rights | read_folder, 0, 0)
    size = 8
    if abi >= 4 and not network:
        attr.net = _NET_BIND_TCP | _NET_CONNECT_TCP
        size = 16
    if abi >= 6:
        attr.scoped = _SCOPE_SIGNAL | (0 if network else _SCOPE_ABSTRACT_UNIX_SOCKET)
        size = 24
    ruleset = libc.syscall(ctypes.c_long(_SYS_LANDLOCK_CREATE_RULESET), ctypes.byref(attr),
                           ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        _fail("landlock_create_ruleset")

    def allow(fd: int, folder: int, file: int, path: str) -> None:
        rule = PathBeneath(folder if stat.S_ISDIR(os.fstat(fd).st_mode) else file, fd)
        if libc.syscall(ctypes.c_long(_SYS_LANDLOCK_ADD_RULE), ctypes.c_int(ruleset),
                        ctypes.c_int(_LANDLOCK_RULE_PATH_BENEATH), ctypes.byref(rule),
                        ctypes.c_uint32(0)) != 0:
            _fail(f"landlock_add_rule {path}")

    try:
        for path, rights in [*((p, folder_rights | read_folder) for p in writable),
                             *((p, file_rights | read_file) for p in devices)]:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # a device this machine lacks, a folder removed meanwhile
            try:
                allow(fd, rights, rights & (file_rights | read_file), path)
            finally:
                os.close(fd)
        if hide is not None:
            _allow_all_but(hide, lambda fd, path: allow(fd, read_folder, read_file, path))
        if libc.syscall(ctypes.c_long(_SYS_LANDLOCK_RESTRICT_SELF), ctypes.c_int(ruleset),
                        ctypes.c_uint32(0)) != 0:
            _fail("landlock_restrict_self")
    finally:
        os.close(ruleset)


def _allow_all_but(hidden: str, allow: Callable[[int, str], None]) -> None:
    """Call ``allow`` on every entry of each folder above ``hidden`` (a real path) but
    the one on the way to it; OSError when an ancestor cannot be listed.

    A link is skipped, not followed: whatever it names is reached through its target's
    own entry, so a link to the hidden folder grants nothing.
    """
    folder = "/"
    for name in hidden.strip("/").split("/"):
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name == name or entry.is_symlink():
                    continue
                try:
                    fd = os.open(entry.path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
                except OSError:
                    continue  # gone meanwhile
                try:
                    allow(fd, entry.path)
                finally:
                    os.close(fd)
        folder = os.path.join(folder, name)


def seccomp_program(machine: str) -> bytes:
    """A classic BPF program that refuses sockets other than Unix and netlink ones.

    socket() of another family answers EACCES; io_uring_setup answers EPERM; a call of
    another ABI (another audit architecture, or an x32 call on x86_64) kills the process:
    a program of that ABI could do nothing but fail anyway. KeyError for an unknown machine.
    """
    import struct

    arch, socket_numbers, other_abi = _SECCOMP_ARCHES[machine]
    # BPF_LD|BPF_W|BPF_ABS, BPF_JMP|BPF_JEQ|BPF_K, BPF_JMP|BPF_JSET|BPF_K, BPF_RET|BPF_K
    codes = {"load": 0x20, "jeq": 0x15, "jset": 0x45, "ret": 0x06}
    allow, deny_eacces, deny_eperm = 0x7FFF0000, 0x00050000 | 13, 0x00050000 | 1
    kill = 0x80000000  # SECCOMP_RET_KILL_PROCESS
    # Each entry: (code, k, true label, false label) for jumps, (code, k) for the rest.
    program: list[tuple[Any, ...]] = [
        ("load", 4),
        ("jeq", arch, None, "kill"),
        ("load", 0),
        *([("jset", other_abi, "kill", None)] if other_abi else []),
        *(("jeq", nr, "family", None) for nr in socket_numbers),
        ("jeq", _IO_URING_SETUP, "eperm", None),
        ("ret", allow),
        ("label", "family"), ("load", 16),  # args[0], low 32 bits (little-endian)
        ("jeq", _AF_UNIX, "allow", None),
        ("jeq", _AF_NETLINK, "allow", None),
        ("ret", deny_eacces),
        ("label", "allow"), ("ret", allow),
        ("label", "eperm"), ("ret", deny_eperm),
        ("label", "kill"), ("ret", kill),
    ]
    labels: dict[str, int] = {}
    index = 0
    for entry in program:
        if entry[0] == "label":
            labels[entry[1]] = index
        else:
            index += 1
    out = []
    index = 0
    for entry in program:
        kind = entry[0]
        if kind == "label":
            continue
        if kind in ("load", "ret"):
            out.append(struct.pack("=HBBI", codes[kind], 0, 0, entry[1]))
        else:
            _, value, if_true, if_false = entry
            true_offset = 0 if if_true is None else labels[if_true] - index - 1
            false_offset = 0 if if_false is None else labels[if_false] - index - 1
            out.append(struct.pack("=HBBI", codes[kind], true_offset, false_offset, value))
        index += 1
    return b"".join(out)


def _seccomp(libc: Any) -> None:
    import ctypes

    program = seccomp_program(os.uname().machine)
    count = len(program) // 8
    buffer = ctypes.create_string_buffer(program, len(program))

    class Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = Fprog(count, ctypes.cast(buffer, ctypes.c_void_p))
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        _fail("seccomp")


def confine(settings: dict[str, Any]) -> None:
    """Restrict this process (and all it will start) as ``settings`` says; OSError if it cannot."""
    libc = _libc()
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        _fail("no_new_privs")
    _drop_capabilities(libc)
    abi = landlock_abi()
    if abi < 1:
        raise OSError(0, "the kernel has no Landlock")
    network = bool(settings.get("network"))
    _landlock(libc, abi, list(settings.get("write", [])), list(settings.get("devices", [])),
              network, settings.get("hide"))
    if not network:
        _seccomp(libc)


# -- supervising -------------------------------------------------------------------------


def _exec_child(settings: dict[str, Any], command: list[str], close: list[int]) -> None:
    """In the forked child: reset signals, confine, exec; never returns.

    A failure to confine is the sandbox's, told on the report pipe; a command that cannot
    be executed is the code's, told as a shell tells it (exit 127 or 126).
    """
    try:
        signal.set_wakeup_fd(-1)
        for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGQUIT,
                       signal.SIGCHLD, signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(number, signal.SIG_DFL)
        for fd in close:
            os.close(fd)
    except BaseException as exc:
        _report(settings, f"failed: cannot prepare the child: {type(exc).__name__}: {exc}")
        os._exit(125)
    if settings.get("confine"):
        try:
            confine(settings)
        except BaseException as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            _report(settings, f"failed: cannot confine the code: {why}")
            os._exit(125)
    try:
        os.chdir(settings["cwd"])
        os.execvp(command[0], command)
    except OSError as exc:
        message = f"janito sandbox: cannot run {command[0]}: {exc.strerror or exc}\n"
        os.write(2, message.encode("utf-8", "replace"))
        os._exit(127 if exc.errno == 2 else 126)
    except BaseException as exc:  # nothing may escape into the supervisor's own code
        _report(settings, f"failed: {type(exc).__name__}: {exc}")
        os._exit(125)


def _report(settings: dict[str, Any], line: str) -> None:
    """Tell janito how supervising went (one line on the report pipe; never raises)."""
    fd = settings.get("report")
    if fd is None:
        return
    try:
        os.write(int(fd), (line.replace("\n", " ") + "\n").encode("utf-8", "replace"))
    except (OSError, ValueError):
        pass


def _process_table() -> dict[int, int]:
    """{pid: parent pid} of every process this one can see."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                table[int(name)] = int(handle.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return table


def _children(pid: int) -> list[int] | None:
    """The children of ``pid`` as the kernel lists them; None where it does not
    (a kernel built without ``CONFIG_PROC_CHILDREN``)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found: list[int] = []
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", "rb") as handle:
                found.extend(int(child) for child in handle.read().split())
        except FileNotFoundError:
            if os.path.isdir(f"/proc/{pid}/task/{task}"):
                return None
        except OSError:
            continue
    return found


def _descendants(me: int) -> list[int]:
    """Descendants of ``me`` (zombies included), parents before children.

    The children lists of the subtree are read where the kernel offers them (a read per
    process of the call); otherwise the whole process table is scanned.
    """
    found: list[int] = []
    frontier = [me]
    while frontier:
        children = _children(frontier.pop())
        if children is None:
            return _descendants_by_scan(me)
        found.extend(children)
        frontier.extend(children)
    return found


def _descendants_by_scan(me: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for pid, parent in _process_table().items():
        children.setdefault(parent, []).append(pid)
    found: list[int] = []
    frontier = [me]
    while frontier:
        for child in children.get(frontier.pop(), ()):
            found.append(child)
            frontier.append(child)
    return found


def _kill(pid: int, tree: set[int]) -> None:
    """SIGKILL ``pid`` only if it is still the process found in ``tree`` (no pid reuse)."""
    opener = getattr(os, "pidfd_open", None)
    sender = getattr(signal, "pidfd_send_signal", None)
    if opener is None or sender is None:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        return
    try:
        fd = opener(pid)
    except OSError:
        return
    try:
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                parent = int(handle.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            return
        if parent in tree:
            sender(fd, signal.SIGKILL)
    except OSError:
        pass
    finally:
        os.close(fd)


def _reap(main: int) -> int | None:
    """Reap every child that has ended; the wait status of ``main`` if it was among them."""
    status = None
    while True:
        try:
            pid, wait_status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return status
        if pid == 0:
            return status
        if pid == main:
            status = wait_status


def kill_descendants(limit: float = 10.0) -> None:
    """SIGKILL every descendant, again and again as orphans come back, until none is left."""
    me = os.getpid()
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        victims = _descendants(me)
        tree = {me, *victims}
        for pid in victims:
            _kill(pid, tree)
        reaped = False
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return  # no child left, so no descendant either
            if pid == 0:
                break
            reaped = True
        if not reaped:
            time.sleep(0.001)


def _exit_code(status: int | None) -> int:
    if status is None:
        return 128 + int(signal.SIGKILL)
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def supervise(settings: dict[str, Any], command: list[str]) -> int:
    """Run ``command`` as described in the module docstring; the exit code to end with."""
    import select  # poll(), not select(): janito's descriptors may be numbered 1024 and up

    libc = _libc()
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != settings.get("parent"):
        return 125  # janito was gone before the request for its death signal took effect
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        _report(settings, "failed: cannot become a child subreaper")
        return 125
    control = int(settings["control"])
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    stopped: list[int] = []
    for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGQUIT):
        signal.signal(number, lambda signum, frame: stopped.append(signum))
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    watch = select.poll()
    watch.register(control, select.POLLIN)
    watch.register(wake_read, select.POLLIN)
    main = os.fork()
    if main == 0:
        _exec_child(settings, command, [control, wake_read, wake_write])
    status = None
    try:
        while status is None and not stopped:
            ready = {fd for fd, _ in watch.poll()}
            if wake_read in ready:
                try:
                    while os.read(wake_read, 512):
                        pass
                except BlockingIOError:
                    pass
            if control in ready and not os.read(control, 512):
                break  # janito closed its end, or is gone
            status = _reap(main)
    finally:
        kill_descendants()
        if settings.get("tmpdir"):
            # Whether janito is gone cannot be told here in time: a killed janito closes
            # the control pipe before it is reaped, so getppid() may still name it. The
            # call is over either way and nothing in the folder is read afterwards.
            import shutil

            shutil.rmtree(settings["tmpdir"], ignore_errors=True)
    _report(settings, "ok")
    return _exit_code(status)


def parse(argv: list[str]) -> tuple[dict[str, Any], list[str]]:
    """(settings, command) from the options of the module docstring; ValueError if malformed."""
    settings: dict[str, Any] = {"confine": False, "network": False, "write": [], "devices": []}
    index = 0
    while index < len(argv) and argv[index] != "--":
        option = argv[index]
        if option in ("--confine", "--network"):
            settings[option[2:]] = True
            index += 1
            continue
        if index + 1 >= len(argv):
            raise ValueError(f"{option} needs a value")
        value = argv[index + 1]
        if option in ("--parent", "--control", "--report"):
            settings[option[2:]] = int(value)
        elif option in ("--cwd", "--tmpdir", "--hide"):
            settings[option[2:]] = value
        elif option == "--write":
            settings["write"].append(value)
        elif option == "--device":
            settings["devices"].append(value)
        else:
            raise ValueError(f"unknown option {option}")
        index += 2
    command = argv[index + 1:]
    if not command or not {"parent", "control", "cwd"} <= set(settings):
        raise ValueError("--parent, --control, --cwd and a command after -- are required")
    return settings, command


def options(settings: dict[str, Any]) -> list[str]:
    """The command-line options that ``parse`` reads back as ``settings``."""
    out = ["--parent", str(settings["parent"]), "--control", str(settings["control"]),
           "--cwd", settings["cwd"]]
    if settings.get("report") is not None:
        out += ["--report", str(settings["report"])]
    out += [flag for flag in ("--confine", "--network") if settings.get(flag[2:])]
    for name in ("tmpdir", "hide"):
        if settings.get(name):
            out += [f"--{name}", settings[name]]
    for path in settings.get("write", ()):
        out += ["--write", path]
    for path in settings.get("devices", ()):
        out += ["--device", path]
    return out


def main(argv: list[str]) -> int:
    try:
        settings, command = parse(argv[1:])
    except ValueError as exc:
        os.write(2, f"janito sandbox: {exc}\n".encode())
        return 125
    report = settings.get("report")
    if report is not None:
        try:  # the code must not inherit it: janito reads it to tell its failures apart
            os.set_inheritable(int(report), False)
        except OSError:
            pass
    try:
        return supervise(settings, command)
    except BaseException as exc:  # an exit status would read as the code's: say why instead
        _report(settings, f"failed: {type(exc).__name__}: {exc}")
        return 125


if __name__ == "__main__":
    sys.exit(main(sys.argv))
