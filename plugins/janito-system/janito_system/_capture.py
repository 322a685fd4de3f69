"""What code changed in the workspace, made again through the journaled workspace.

Under a policy that lets code write the workspace, and a journal to write to, a run
tool's code sees the workspace through an overlay (``_overlay``): its writes land in a
private upper layer. After the call each change the layer holds is made by janito itself,
through the call's ``Workspace``, so each is written ahead to the journal and can be
undone like a file tool's (docs/decisions/0015-capturing-code-changes.md).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ._overlay import (
    DELETED,
    FILE,
    FOLDER,
    MODE,
    OPAQUE,
    SPECIAL,
    SYMLINK,
    Change,
    Layers,
    OverlayError,
    changes,
    make_layers,
    overlay_available,
    workspace_problem,
)

if TYPE_CHECKING:
    from janito_core import Workspace
    from janito_core.sandbox import SandboxPolicy

SHOWN_PATHS = 100
"""Paths a result lists in ``changed``; ``changed_count`` tells how many there were."""
_CHUNK = 1 << 20
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


def plan(workspace: Workspace, policy: SandboxPolicy, mechanism: str) -> Layers | str | None:
    """The layers that capture this call's changes; else why not, to say in the result
    (a string); None when there is nothing to capture: no journal, or the code cannot
    write the workspace."""
    from ._launchers import BUBBLEWRAP

    if workspace.recording is None or not (policy.confined and policy.workspace_writable):
        return None
    if mechanism != BUBBLEWRAP:
        return f"the {mechanism} cannot show the workspace through an overlay"
    problem = overlay_available() or workspace_problem(workspace.root)
    if problem is not None:
        return problem
    try:
        return make_layers(workspace.root)
    except OSError as exc:
        return f"the overlay's folders cannot be made ({exc.strerror or exc})"


def uncaptured(workspace: Workspace, reason: str) -> None:
    """Say in the call's result that what its code changes cannot be undone, and why."""
    recording = workspace.recording
    if recording is not None:
        recording.notices.append(f"the code's changes to the workspace are not kept for "
                                 f"undo: {reason}")


def apply(workspace: Workspace, layers: Layers, since_ns: int) -> dict[str, Any]:
    """Make the changes of ``layers``' upper layer in ``workspace``: what the result adds
    (``changed``, and ``not_applied`` with a reason for each change left out).

    A path the workspace changed after ``since_ns`` (the call's start, by the kernel's
    change time) was changed by someone else while the code ran: it is left as it is.
    """
    try:
        found = changes(layers.upper, workspace.root)
    except (OSError, OverlayError) as exc:
        return {"not_applied": [{"path": ".", "reason": f"the overlay cannot be read: {exc}"}]}
    changed: list[str] = []
    left: list[dict[str, str]] = []
    # The code's own writes were never flushed one by one either: one flush at the end
    # (an npm install is thousands of files; a flush each took 10 ms here).
    deferred = workspace.deferred()
    for change in found:
        reason = _apply(deferred, layers, change, since_ns)
        if reason is None:
            changed.append(change.path)
        else:
            left.append({"path": change.path, "reason": reason})
    if changed:
        with contextlib.suppress(OSError):
            deferred.sync()
    said: dict[str, Any] = {}
    if changed:
        said["changed"] = changed[:SHOWN_PATHS]
        if len(changed) > SHOWN_PATHS:
            said["changed_count"] = len(changed)
    if left:
        said["not_applied"] = left
    return said


def _apply(workspace: Workspace, layers: Layers, change: Change, since_ns: int) -> str | None:
    """Make one change; None, or why it was not made."""
    from janito_core import WorkspaceError
    from janito_core.journal import JournalError

    if change.kind == SPECIAL:
        return "a FIFO, socket or device: only files, folders and links are copied back"
    try:
        with workspace.locate(change.path, follow_symlinks=False) as where:
            now = where.lookup()
            if now is not None and now.st_ctime_ns > since_ns:
                return "changed in the workspace while the code ran; left as it is there"
            if change.kind in (DELETED, OPAQUE) or (
                    change.kind in (FILE, SYMLINK) and now is not None
                    and stat.S_ISDIR(now.st_mode)):
                if now is not None:
                    if stat.S_ISDIR(now.st_mode):
                        where.rmdir(recursive=True)
                    else:
                        where.remove()
                now = None
            if change.kind in (OPAQUE, FOLDER):
                if now is not None and not stat.S_ISDIR(now.st_mode):
                    return "something else was put there while the code ran"
                if not where.mkdir(mode=change.mode) and now is not None \
                        and stat.S_IMODE(now.st_mode) != change.mode:
                    where.chmod(change.mode)
            elif change.kind == FILE:
                where.write(_chunks(os.path.join(layers.upper, change.path)), overwrite=True,
                            mode=change.mode)
            elif change.kind == SYMLINK:
                where.symlink(change.target or "")
            elif change.kind == MODE:
                where.chmod(change.mode)
    except FileNotFoundError:
        return "the folder holding it was not made again"
    except (OSError, WorkspaceError, JournalError) as exc:
        return str(exc) if isinstance(exc, (WorkspaceError, JournalError)) else \
            f"{exc.strerror or exc}"
    return None


def _chunks(path: str) -> Iterator[bytes]:
    """The bytes of a file of the upper layer, never through a link."""
    fd = os.open(path, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is no longer a regular file")
        while chunk := os.read(fd, _CHUNK):
            yield chunk
    finally:
        os.close(fd)
