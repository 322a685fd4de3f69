"""What a call's policy keeps from the code it runs: the paths it may not read, and the
folders it may not change (``janito_core.policy.PathGuard``).

The guard's patterns are matched on real paths, so they are expanded here against the
real workspace tree at the time of the call: every file or folder the guard hides from
reads is found (links are not followed: what a link names is found under its own real
path, and a link into a covered place leads into the cover). Under bubblewrap:

- a hidden folder is covered by an empty read-only folder, a hidden file (or FIFO,
  socket, device) by an empty read-only file;
- ``.janito/`` (the project's policy) is bound read-only over itself whenever it exists,
  and so is ``.git/`` unless a person approved the call (``guard.git_writable``);
- when the code may write the workspace, every folder between the workspace and a covered
  or read-only path is bound over itself too. A mount point cannot be renamed or
  removed, so the code cannot move a covered file to a name the rules allow (renaming a
  folder above it would carry the file along, uncovered for the next call and the file
  tools).

The supervisor (Landlock) can only grant: it cannot keep code out of a path beneath a
folder the code may read or write. Where the mask has something to do, a call there is
refused instead (``refusal``), as it is under the policy ``off``, which confines nothing.
Without a policy (``Registry()`` alone) nothing is masked but ``.janito/`` under
bubblewrap, as before policies existed.
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

PROTECTED = ".janito"
GIT = ".git"
MAX_COVERED = 4096
"""Hidden paths covered one by one at most; a policy that hides more is refused (one
mount each: the kernel's limit per namespace and bubblewrap's start would suffer)."""
EMPTY_NAME = ".sandbox-empty"


class Mask(NamedTuple):
    """What to mount over for one call (real paths); see the module docstring."""

    files: tuple[str, ...] = ()
    folders: tuple[str, ...] = ()
    read_only: tuple[str, ...] = ()
    pinned: tuple[str, ...] = ()
    why: tuple[str, ...] = ()
    """The guard's reasons for what is covered (the rules, with their sources)."""

    @property
    def covers(self) -> bool:
        return bool(self.files or self.folders)

    @property
    def empty(self) -> bool:
        return not (self.files or self.folders or self.read_only)


class MaskError(Exception):
    """The mask cannot be made (too many paths to cover); the message says what to do."""


def _depth(path: str) -> int:
    return path.count("/")


def policy_mask(root: str, guard: Any | None, *, writable: bool) -> Mask:
    """The mask of a call in the workspace ``root`` (a real path) under ``guard`` (None:
    no policy). ``writable``: whether the code may write the workspace. MaskError when
    more than ``MAX_COVERED`` paths are hidden."""
    files: list[str] = []
    folders: list[str] = []
    why: dict[str, None] = {}
    if guard is not None and guard.reads_guarded:
        _find_hidden(root, guard, files, folders, why)
    read_only: list[str] = []
    if writable:
        names = [PROTECTED]
        if guard is not None and not guard.git_writable:
            names.append(GIT)
        for name in names:
            path = os.path.join(root, name)
            if not os.path.lexists(path):
                continue
            real = os.path.realpath(path)
            # a link to a folder elsewhere in the workspace is what janito would read as
            # the policy (or git as the repository): keep that one unchanged
            if real.startswith(root.rstrip("/") + "/"):
                read_only.append(real)
    pinned: set[str] = set()
    if writable:
        top = root.rstrip("/")
        for path in (*files, *folders, *read_only):
            folder = os.path.dirname(path)
            while folder.startswith(top + "/"):
                pinned.add(folder)
                folder = os.path.dirname(folder)
        pinned.difference_update(read_only)
    return Mask(tuple(files), tuple(folders), tuple(read_only),
                tuple(sorted(pinned, key=_depth)), tuple(why))


def _find_hidden(root: str, guard: Any, files: list[str], folders: list[str],
                 why: dict[str, None]) -> None:
    """Every path below ``root`` that ``guard`` hides from reads, outermost only."""
    from janito_core.policy import READ

    stack: list[tuple[str, list[str]]] = [(root, [])]
    while stack:
        folder, parts = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue  # unreadable for janito is unreadable for the code: the same user
        for entry in entries:
            try:
                if entry.is_symlink():
                    continue
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            below = [*parts, entry.name]
            problem = guard.problem(below, READ)
            if problem is not None:
                problem = problem.removeprefix("the policy denies it ").strip("()")
                (folders if is_dir else files).append(entry.path)
                why[problem] = None
                if len(files) + len(folders) > MAX_COVERED:
                    raise MaskError(
                        f"the policy hides more than {MAX_COVERED} existing paths of the "
                        "workspace from reading, and the sandbox covers them one by one: "
                        "deny the folders that hold them instead")
            elif is_dir:
                stack.append((entry.path, below))


def refusal(mask: Mask, mechanism: str, *, confined: bool) -> str | None:
    """Why code may not run with ``mask`` under ``mechanism`` (None: the mask holds there).

    ``confined``: whether the sandbox policy confines anything (not ``off``).
    """
    from ._launchers import BUBBLEWRAP, INSTALL_HINT

    reasons = "; ".join(mask.why[:3]) + ("; ..." if len(mask.why) > 3 else "")
    if not confined:
        if not mask.covers:
            return None  # off lets code change anything: .janito/ and .git/ included
        from janito_core.sandbox import WORKSPACE_WRITE, how_to_set

        return (f"the policy hides paths of this workspace from reading ({reasons}), and "
                "with the sandbox off nothing keeps code from reading them: to run code "
                f"here, choose the sandbox policy {WORKSPACE_WRITE} "
                f"({how_to_set(WORKSPACE_WRITE)})")
    if mechanism == BUBBLEWRAP:
        return None
    what = []
    if mask.covers:
        what.append(f"hide the paths the policy denies reading ({reasons})")
    if mask.read_only:
        names = ", ".join(sorted(os.path.basename(p) + "/" for p in mask.read_only))
        what.append(f"keep {names} unchanged in a workspace the code may write")
    if not what:
        return None
    return (f"the supervisor (Landlock, used without bubblewrap) can only grant access, so "
            f"it cannot {' or '.join(what)}; {INSTALL_HINT}"
            + (", or have the call approved, which lets it write .git/"
               if not mask.covers and all(p.endswith("/" + GIT) for p in mask.read_only)
               else ""))


def bwrap_mounts(mask: Mask, empty: str) -> list[str]:
    """bubblewrap's options for ``mask``, after the workspace's own mount; ``empty`` is an
    empty read-only regular file outside every folder the code may write."""
    argv: list[str] = []
    top = tuple(mask.read_only)
    for path in sorted({*mask.pinned, *mask.read_only}, key=_depth):
        inside = any(path == r or path.startswith(r + "/") for r in top)
        argv += ["--ro-bind" if inside else "--bind", path, path]
    for path in mask.folders:
        argv += ["--tmpfs", path, "--remount-ro", path]
    for path in mask.files:
        argv += ["--ro-bind", empty, path]
    return argv


def empty_file(folders: list[str]) -> str:
    """An empty regular file of this user's, in the first of ``folders`` that can hold
    one (made once, checked on every use: what covers a hidden file must stay empty)."""
    import stat
    import tempfile

    problems = []
    for folder in [*folders, os.path.join(tempfile.gettempdir(), f"janito-mask-{os.getuid()}")]:
        path = os.path.join(folder, EMPTY_NAME)
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            info = os.lstat(folder)
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() \
                    or info.st_mode & 0o022:
                problems.append(f"{folder} is not a private folder of this user")
                continue
            try:
                info = os.lstat(path)
            except FileNotFoundError:
                pass
            else:
                if stat.S_ISREG(info.st_mode) and info.st_size == 0 \
                        and info.st_uid == os.getuid() and not info.st_mode & 0o222:
                    return path
                os.unlink(path)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o444)
            os.close(fd)
            return path
        except OSError as exc:
            problems.append(f"{path}: {exc.strerror or exc}")
    raise OSError(f"no empty file to cover hidden paths with: {'; '.join(problems)}")
