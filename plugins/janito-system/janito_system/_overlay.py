"""Capturing what sandboxed code changes in the workspace: an overlay, read after the call.

Code run by RunBashCode, RunPythonCode and RunPythonFile writes the workspace directly, so
nothing it does passes through janito's journaled ``Workspace``. With capture, the code
sees the workspace through the kernel's overlayfs, mounted at the workspace's own path
(paths are unchanged for the code): the lower layer is the real workspace, read-only to
the overlay, and the upper and work layers are private folders beside the call's
temporary folder. Every write lands in the upper layer. After the call ``changes`` reads
that layer and lists what the code did; janito applies those changes itself, through
the workspace, so each is journaled and can be undone (see
docs/decisions/0015-capturing-code-changes.md for the measurements and what is left out).

bubblewrap 0.8.0 cannot mount an overlay, and janito's own process may not enter a new
namespace (calls run in threads, and a process with threads cannot join a new user
namespace). The overlay is therefore mounted by the launch itself, before bubblewrap
starts, with util-linux's ``unshare`` and ``mount`` and a POSIX ``sh``: unshare becomes
the shell, the shell runs mount and then becomes bubblewrap, so the process janito waits
for and kills is bubblewrap, as today, and nothing else is left running:

    unshare [--user --map-root-user] --mount --propagation private -- sh -c SCRIPT ...
        -> mount -t overlay (in the new mount namespace only) -> exec bwrap ...

A user other than root needs the user namespace to mount at all; the kernel (5.11 and
later) then keeps the overlay's marks in ``user.overlay.*`` attributes (``userxattr``),
and bubblewrap, started as that namespace's root, is given ``--unshare-user --uid U
--gid G`` so the code keeps janito's own uid and gid, as it has without capture. root
needs no user namespace, and its bubblewrap command line stays as it is; ``userxattr``
is asked for anyway, so the layers read the same under either. A janito that cannot
mount learns why from ``overlay_available`` (probed once per process).

What the upper layer holds after a call, and what it means:

- a regular file, symlink or folder that is new, or that replaces what the workspace had:
  it is the content the code left;
- a character device 0:0 (or an empty file marked ``overlay.whiteout`` in a folder marked
  as holding such files): the path was removed;
- a folder marked ``overlay.opaque`` = ``y``: the folder was replaced whole (removed and
  made again); nothing the workspace had beneath it is left;
- a file or folder copied up from the workspace because the code changed it, its
  attributes or something beneath it (marked ``overlay.origin``): what changed is found by
  comparing it with the workspace (``lower``), or by ``overlay.metacopy``, which marks a
  copy of the attributes only.
"""

from __future__ import annotations

import os
import stat
import threading
from typing import NamedTuple

FILE = "file"
"""A regular file created, or whose content replaced what was at its path."""
FOLDER = "folder"
"""A folder created where the workspace had nothing."""
SYMLINK = "symlink"
"""A symbolic link created, or replacing what was at its path."""
DELETED = "deleted"
"""The path (a file, a link or a whole folder) was removed."""
OPAQUE = "opaque"
"""A folder replaced whole: what the workspace held beneath it is gone; what the code put
there follows as records of their own."""
MODE = "mode"
"""The permission bits changed, the content did not."""
SPECIAL = "special"
"""A FIFO, socket or device the code made: listed so the call can say it was not applied."""

KINDS = (FILE, FOLDER, SYMLINK, DELETED, OPAQUE, MODE, SPECIAL)

LAYERS_SUFFIX = "-layers"
"""The layers of a call are ``<tempdir>/janito-call-<pid>-<random>-layers``: named like the
call's temporary folder, so the sweep of dead janito processes' folders removes them too."""

MOUNT_OPTIONS = ",userxattr"
"""Asked for whether or not a user namespace is used: the marks are ``user.overlay.*``, no
redirects are made (renaming a folder that came from the workspace fails with EXDEV, and
programs copy it instead), and no copy is made of attributes alone (metacopy stays off),
so every file in the upper layer holds its whole content. Not ``volatile``: the sync it
saves at unmount was lost again in removing the folders it adds to the work layer."""

PROBE_TIMEOUT = 20.0
_NAMESPACES = ("trusted", "user")  # root's overlays mark with trusted.*, a user namespace's user.*
# Mounts the overlay and becomes the command; $1 is the workspace (the mount point and,
# as ".", the lower layer: a path in the options would need escaping for "," and ":"),
# $2 and $3 the upper and work layers (janito's own names), $4 more options, $5 the
# trusted mount (never found on PATH, where the workspace's folders may come first). The
# second cd moves onto the overlay, out of the folder it now covers.
SCRIPT = ('cd -- "$1" || exit 125\n'
          '"$5" -t overlay janito -o "lowerdir=.,upperdir=$2,workdir=$3$4" -- "$1" '
          '&& cd -- "$1" || exit 125\n'
          'shift 5\n'
          'exec "$@"\n')
_PROGRAMS = ("unshare", "sh", "mount")
_OPTION_UNSAFE = frozenset(",:\\\"'\n")  # meaningful to mount -o or to overlayfs options


class Change(NamedTuple):
    """One thing the code did to the workspace, relative to the workspace root.

    ``path`` uses ``/`` between components (``.`` is the root itself); ``mode`` holds the
    permission bits the code left (0 for a removal), ``target`` a new link's target.
    """

    kind: str
    path: str
    mode: int = 0
    target: str | None = None


class OverlayError(Exception):
    """An upper layer janito cannot read as changes (a redirect, an unreadable folder)."""


class Layers(NamedTuple):
    """The private folders of one captured call: ``folder`` holds ``upper`` and ``work``."""

    folder: str
    upper: str
    work: str


# -- launching ------------------------------------------------------------------------------


def make_layers(workspace: str, prefix: str | None = None) -> Layers:
    """New empty upper and work folders for a call in ``workspace``, outside every folder
    code may write.

    The overlay's root shows the upper folder's own permission bits, so they are copied
    from the workspace's root. ``prefix`` names the folder (by default like the call's
    temporary folder); OSError when it cannot be made, or when its path holds a character
    mount's options cannot carry.
    """
    import tempfile

    if prefix is None:
        from ._launchers import TMPDIR_PREFIX

        prefix = f"{TMPDIR_PREFIX}{os.getpid()}-"
    folder = os.path.realpath(tempfile.mkdtemp(prefix=prefix, suffix=LAYERS_SUFFIX))
    if _OPTION_UNSAFE.intersection(folder):
        os.rmdir(folder)
        raise OSError(f"the temporary folder {os.path.dirname(folder)} has a character "
                      "(one of , : \\ \" ' or a line break) that overlay options cannot hold")
    upper, work = os.path.join(folder, "upper"), os.path.join(folder, "work")
    try:
        os.mkdir(upper, 0o700)
        os.mkdir(work, 0o700)
        os.chmod(upper, stat.S_IMODE(os.stat(workspace).st_mode))
    except OSError:
        remove_layers(Layers(folder, upper, work))
        raise
    return Layers(folder, upper, work)


def remove_layers(layers: Layers) -> None:
    """Remove a call's layers (never raises). The kernel leaves ``work/work`` with no
    permissions at all, which only root could walk into: the work folder's folders are
    opened up first, top down."""
    import shutil

    for folder, folders, _ in os.walk(layers.work):
        for name in folders:
            try:
                os.chmod(os.path.join(folder, name), 0o700)
            except OSError:
                pass
    shutil.rmtree(layers.folder, ignore_errors=True)


def launch_prefix(workspace: str, layers: Layers, *, user_namespace: bool | None = None,
                  programs: tuple[str, str, str] | None = None) -> list[str]:
    """The start of a command line that runs what follows it with ``workspace`` (a real
    path) overlaid by ``layers``; the command's current folder is the workspace.

    ``user_namespace``: mount from a new user namespace (None: unless janito runs as root).
    ``programs``: unshare, sh and mount (default: the trusted ones; OSError if one lacks).
    """
    if user_namespace is None:
        user_namespace = os.geteuid() != 0
    unshare, sh, mount_program = programs or _trusted_programs()
    argv = [unshare]
    if user_namespace:
        argv += ["--user", "--map-root-user"]
    # private: the overlay must never show in janito's mount namespace (or anyone else's)
    argv += ["--mount", "--propagation", "private", "--", sh, "-c", SCRIPT, "janito-overlay",
             workspace, layers.upper, layers.work, MOUNT_OPTIONS, mount_program]
    return argv


def bwrap_user_options(*, user_namespace: bool | None = None) -> list[str]:
    """What bubblewrap needs after ``launch_prefix`` so code keeps janito's uid and gid.

    In the user namespace bubblewrap runs as its root, and would hand the code uid 0; a
    nested user namespace maps janito's own ids back, as bubblewrap does unprivileged.
    """
    if user_namespace is None:
        user_namespace = os.geteuid() != 0
    if not user_namespace:
        return []
    return ["--unshare-user", "--uid", str(os.getuid()), "--gid", str(os.getgid())]


def wrap_bwrap(argv: list[str], workspace: str, layers: Layers, *,
               user_namespace: bool | None = None) -> list[str]:
    """``argv`` (bubblewrap's command line, the command included) run with ``workspace``
    overlaid by ``layers``: ``launch_prefix``, then bubblewrap with ``bwrap_user_options``."""
    return [*launch_prefix(workspace, layers, user_namespace=user_namespace), argv[0],
            *bwrap_user_options(user_namespace=user_namespace), *argv[1:]]


def _trusted_programs() -> tuple[str, str, str]:
    with _STATE.lock:
        found = _STATE.programs
        if found is None:
            found = _STATE.programs = _find_programs()
    if isinstance(found, str):
        raise OSError(found)
    return found


def _find_programs() -> tuple[str, str, str] | str:
    """unshare, sh and mount from the system's folders (never PATH), each trusted as
    bubblewrap is (owned by root, changeable by nobody else); else why not."""
    from ._launchers import TRUSTED_FOLDERS, untrusted

    found = []
    for name in _PROGRAMS:
        problems = []
        for folder in TRUSTED_FOLDERS:
            candidate = os.path.join(folder, name)
            if not os.path.lexists(candidate):
                continue
            real = os.path.realpath(candidate)
            problem = untrusted(real, (0,))
            if problem is None:
                found.append(real)
                break
            problems.append(f"{candidate} ({real}) {problem}")
        else:
            return (f"no trusted {name}: {'; '.join(problems)}" if problems
                    else f"no {name} in {', '.join(TRUSTED_FOLDERS)} (util-linux)")
    return found[0], found[1], found[2]


# -- reading an upper layer -----------------------------------------------------------------


def _marks(path: str) -> dict[str, bytes]:
    """The overlay's marks on ``path`` by short name (``opaque``, ``whiteout`` ...), from
    either namespace; the user.* ones win, being what a user namespace's mount wrote."""
    try:
        names = os.listxattr(path, follow_symlinks=False)
    except OSError:  # no attributes here (a link on a filesystem without them), or none at all
        return {}
    marks: dict[str, bytes] = {}
    for namespace in _NAMESPACES:
        head = f"{namespace}.overlay."
        for name in names:
            if name.startswith(head):
                try:
                    marks[name[len(head):]] = os.getxattr(path, name, follow_symlinks=False)
                except OSError:
                    continue
    return marks


def _same_content(one: str, other: str, size: int) -> bool:
    """Whether two regular files of ``size`` bytes hold the same bytes."""
    chunk = 1 << 20
    try:
        with open(one, "rb") as first, open(other, "rb") as second:
            left = size
            while left > 0:
                a, b = first.read(chunk), second.read(chunk)
                if a != b or not a:
                    return False
                left -= len(a)
            return not first.read(1) and not second.read(1)
    except OSError:
        return False


def _lower_info(lower: str | None, parts: tuple[str, ...]) -> os.stat_result | None:
    if lower is None:
        return None
    try:
        return os.lstat(os.path.join(lower, *parts))
    except OSError:
        return None


def changes(upper: str, lower: str | None = None) -> list[Change]:
    """What the code did, from the upper layer ``upper`` after the call, sorted so that a
    folder comes before what lies beneath it.

    ``lower`` (the workspace) tells copied-up entries apart: a folder copied up only because
    something beneath it changed is no change; a file copied up and left as it was, or
    changed in its permission bits only, is no change or ``MODE``. Without it, what the
    layer cannot say is reported as the larger change (a copied-up file as ``FILE``).
    OverlayError when the layer holds a redirect (janito never mounts with redirects), or
    cannot be read.
    """
    found: list[tuple[tuple[str, ...], Change]] = []
    # (folder's components, whether its workspace twin is still there to compare with)
    stack: list[tuple[tuple[str, ...], bool]] = [((), True)]
    root_info = os.lstat(upper)
    twin = _lower_info(lower, ())
    if twin is not None and stat.S_IMODE(twin.st_mode) != stat.S_IMODE(root_info.st_mode):
        found.append(((), Change(MODE, ".", stat.S_IMODE(root_info.st_mode))))
    while stack:
        parts, merged = stack.pop()
        folder = os.path.join(upper, *parts)
        try:
            entries = list(os.scandir(folder))
        except OSError as exc:
            raise OverlayError(f"cannot read the upper layer at {folder}: "
                               f"{exc.strerror or exc}") from exc
        holds_xwhiteouts = None
        for entry in entries:
            below = (*parts, entry.name)
            path = "/".join(below)
            info = entry.stat(follow_symlinks=False)
            mode = stat.S_IMODE(info.st_mode)
            if stat.S_ISCHR(info.st_mode) and info.st_rdev == 0:
                found.append((below, Change(DELETED, path)))
                continue
            marks = _marks(entry.path)
            if "redirect" in marks:
                raise OverlayError(f"{path} in the upper layer is a redirect (a folder "
                                   "moved from elsewhere), which janito does not mount with")
            if stat.S_ISREG(info.st_mode) and "whiteout" in marks:
                if holds_xwhiteouts is None:
                    parent = _marks(folder)
                    holds_xwhiteouts = ("whiteouts" in parent
                                        or parent.get("opaque", b"")[:1] == b"x")
                if holds_xwhiteouts:
                    found.append((below, Change(DELETED, path)))
                    continue
            twin = _lower_info(lower, below) if merged else None
            if stat.S_ISDIR(info.st_mode):
                if marks.get("opaque", b"")[:1] == b"y":
                    found.append((below, Change(OPAQUE, path, mode)))
                    stack.append((below, False))
                elif twin is not None and stat.S_ISDIR(twin.st_mode):
                    if stat.S_IMODE(twin.st_mode) != mode:
                        found.append((below, Change(MODE, path, mode)))
                    stack.append((below, True))
                elif lower is None and merged and "origin" in marks:
                    stack.append((below, True))  # copied up: a change lies beneath, if any
                else:
                    found.append((below, Change(FOLDER, path, mode)))
                    stack.append((below, False))
            elif stat.S_ISREG(info.st_mode):
                if "metacopy" in marks:
                    found.append((below, Change(MODE, path, mode)))
                elif (twin is not None and stat.S_ISREG(twin.st_mode)
                      and twin.st_size == info.st_size
                      and _same_content(entry.path, os.path.join(lower or "", *below),
                                        info.st_size)):
                    if stat.S_IMODE(twin.st_mode) != mode:
                        found.append((below, Change(MODE, path, mode)))
                else:
                    found.append((below, Change(FILE, path, mode)))
            elif stat.S_ISLNK(info.st_mode):
                target = os.readlink(entry.path)
                if not (twin is not None and stat.S_ISLNK(twin.st_mode)
                        and os.readlink(os.path.join(lower or "", *below)) == target):
                    found.append((below, Change(SYMLINK, path, 0, target)))
            else:
                found.append((below, Change(SPECIAL, path, mode)))
    found.sort(key=lambda item: item[0])
    return [change for _, change in found]


# -- is it available here -----------------------------------------------------------------


class _State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.programs: tuple[str, str, str] | str | None = None
        self.probed = False
        self.problem: str | None = None


_STATE = _State()


PROBE_RECORD = "overlay-probe.json"
"""Where, in janito's state folder, the probe's answer is kept for later processes."""


def overlay_available() -> str | None:
    """None when code can be run over an overlay of a workspace here, else why not.

    The probe mounts an overlay the way a call does, runs a shell in it that edits a file
    in place and replaces a folder whole, and checks that the upper layer shows exactly
    that (a filesystem without user attributes fails the second). It takes about 200 ms, a
    cost every ``janito run`` of a run tool would pay, so its answer is kept in janito's
    state folder (which no tool and no code reaches) for as long as what it depends on is
    unchanged: the kernel, the user, the temporary folder and its file system, and the
    programs that mount.
    """
    with _STATE.lock:
        if _STATE.probed:
            return _STATE.problem
    key = _probe_key()
    known, problem = _recorded_answer(key) if key is not None else (False, None)
    if not known:
        problem = _probe()
        if key is not None:
            _record_answer(key, problem)
    with _STATE.lock:
        if not _STATE.probed:
            _STATE.probed, _STATE.problem = True, problem
        return _STATE.problem


def _probe_key() -> str | None:
    """What the probe's answer depends on, as one string (None: nothing to key it on)."""
    import tempfile

    try:
        programs = _trusted_programs()
        folder = tempfile.gettempdir()
        parts = [os.uname().release, str(os.geteuid()), folder, str(os.stat(folder).st_dev)]
        for program in programs:
            info = os.stat(program)
            parts.append(f"{program}:{info.st_ino}:{info.st_mtime_ns}")
    except (OSError, AttributeError):
        return None
    return "|".join(parts)


def _recorded_answer(key: str) -> tuple[bool, str | None]:
    """(whether an answer for ``key`` is on record, that answer)."""
    import json

    from janito_core.config import config_dir

    try:
        record = json.loads((config_dir() / PROBE_RECORD).read_bytes())
    except (OSError, ValueError):
        return False, None
    if not isinstance(record, dict) or record.get("key") != key:
        return False, None
    problem = record.get("problem")
    return (True, problem) if problem is None or isinstance(problem, str) else (False, None)


def _record_answer(key: str, problem: str | None) -> None:
    import json

    from janito_core.config import config_dir, write_private

    try:
        write_private(config_dir() / PROBE_RECORD,
                      json.dumps({"key": key, "problem": problem}).encode())
    except OSError:
        pass  # the next process probes again


def _probe() -> str | None:
    import shutil
    import subprocess
    import sys
    import tempfile

    if not sys.platform.startswith("linux"):
        return "overlayfs is a Linux filesystem"
    try:
        programs = _trusted_programs()
    except OSError as exc:
        return str(exc)
    lower = tempfile.mkdtemp(prefix="janito-overlay-probe-")
    layers = None
    try:
        os.mkdir(os.path.join(lower, "replaced"))
        with open(os.path.join(lower, "replaced", "old"), "w") as handle:
            handle.write("old\n")
        with open(os.path.join(lower, "edited"), "w") as handle:
            handle.write("old\n")
        layers = make_layers(lower, "janito-overlay-probe-")
        argv = [*launch_prefix(lower, layers, programs=programs), programs[1], "-c",
                "rm -rf replaced && mkdir replaced && echo new >> edited"]
        try:
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                                  timeout=PROBE_TIMEOUT, check=False,
                                  env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"})
        except (OSError, subprocess.SubprocessError) as exc:
            return f"cannot start {programs[0]}: {exc}"
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", "replace").strip().splitlines()
            return (f"the kernel refused an overlay of a folder in a new mount namespace "
                    f"({said[-1] if said else f'exit status {done.returncode}'})")
        expected = [Change(FILE, "edited", 0o644), Change(OPAQUE, "replaced", 0o755)]
        try:
            seen = [change._replace(mode=0) for change in changes(layers.upper, lower)]
        except OverlayError as exc:
            return str(exc)
        if seen != [change._replace(mode=0) for change in expected]:
            return (f"the overlay's upper layer in {os.path.dirname(layers.folder)} does not "
                    f"record changes as expected (saw {seen}); it needs a filesystem with "
                    "user extended attributes (tmpfs only from Linux 6.6)")
        with open(os.path.join(lower, "edited")) as handle:
            if handle.read() != "old\n":
                return "the probe's write reached the folder under the overlay"
        return None
    except OSError as exc:
        return f"cannot prepare the probe: {exc.strerror or exc}"
    finally:
        if layers is not None:
            remove_layers(layers)
        shutil.rmtree(lower, ignore_errors=True)


def workspace_problem(workspace: str) -> str | None:
    """Why ``workspace`` (a real path) cannot be shown through an overlay, or None.

    An overlay's lower layer is one filesystem: a filesystem mounted beneath the workspace
    would show to the code as an empty folder, and its changes would be lost.
    """
    top = workspace.rstrip("/")
    try:
        with open("/proc/self/mountinfo", "rb") as handle:
            lines = handle.read().decode("utf-8", "replace").splitlines()
    except OSError as exc:
        return f"cannot read the mount table ({exc.strerror or exc})"
    for line in lines:
        fields = line.split(" ")
        if len(fields) < 5:
            continue
        point = _unescape(fields[4])
        if point.startswith(top + "/"):
            return (f"{point} is another filesystem mounted inside the workspace, which an "
                    "overlay of the workspace cannot show")
    return None


def _unescape(field: str) -> str:
    """A mountinfo path: spaces, tabs, line breaks and backslashes come as octal escapes."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field
