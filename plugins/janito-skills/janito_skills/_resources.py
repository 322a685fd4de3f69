"""A skill's resource files, confined to the skill's folder.

Every file of a skill is opened through the skill's folder held as a workspace of its own
(``Workspace.within`` for a project skill, a workspace rooted at the folder for the
others): a path is walked from a descriptor of that folder one component at a time, a
symbolic link is followed only while it stays inside the folder, and ``..`` never climbs
above it. A path a model sent is never checked as a string and then opened.
``clean_resource_path`` refuses, before any walk, what can never name a resource (an absolute
path, POSIX or Windows style, a ``..`` component), with a reason the model can act
on.
"""

from __future__ import annotations

import re
import stat
from typing import TYPE_CHECKING, Any

from ._frontmatter import SKILL_FILE

if TYPE_CHECKING:
    from janito_core.workspace import Workspace

MAX_LISTED = 500
MAX_FOLDERS = 2000
_SKIPPED_DIRS = {"__pycache__", "node_modules"}
_DRIVE = re.compile(r"^[A-Za-z]:")


class ResourceError(Exception):
    """A resource path that is refused or missing; ``error_type`` says which."""

    def __init__(self, message: str, error_type: str) -> None:
        super().__init__(message)
        self.error_type = error_type


def clean_resource_path(text: str) -> str:
    """``text`` (not blank, no NUL: ReadSkillResource's parameter says so) as a path relative
    to the skill's folder ("/"-separated), or ResourceError."""
    if text.startswith(("/", "\\")) or _DRIVE.match(text):
        raise ResourceError(
            "resource_path must be relative to the skill's folder; absolute paths are refused",
            "outside_skill",
        )
    parts = re.split(r"[\\/]+", text)
    if ".." in parts:
        raise ResourceError(
            "resource_path must not contain '..'; resources are confined to the skill's folder",
            "outside_skill",
        )
    return "/".join(p for p in parts if p and p != ".") or "."


def refused(exc: Any) -> ResourceError:
    """The ResourceError for a WorkspaceError of a skill folder's walk."""
    if exc.error_type == "outside_workspace":
        return ResourceError(
            "resource_path leads outside the skill's folder (through a symbolic link); refused",
            "outside_skill",
        )
    if exc.error_type == "symlink_loop":
        return ResourceError("resource_path goes round a loop of symbolic links",
                             "symlink_loop")
    return ResourceError(f"resource_path cannot be used: {exc.reason}", "invalid_arguments")


def list_resources(folder: Workspace) -> tuple[list[str], bool]:
    """Relative paths ('/'-separated) of the files in a skill folder besides SKILL.md.

    Hidden folders, ``__pycache__``, anything but regular files, and links that lead
    outside the folder are left out; at most ``MAX_LISTED`` paths from at most
    ``MAX_FOLDERS`` folders, the boolean saying whether more were left out. Each folder's
    files come before its sub-folders.
    """
    from janito_core import WorkspaceError

    found: list[str] = []
    visited = [0]
    truncated = False

    def enter(current: Any) -> None:
        nonlocal truncated
        visited[0] += 1
        if visited[0] > MAX_FOLDERS:
            truncated = True
            current.keep([], [])
            return
        # files first, then the folders worth walking: a skill's own files are listed
        # before what its subfolders hold
        files = [(name, kind) for name, kind in zip(current.names, current.kinds, strict=True)
                 if kind != "directory"]
        folders = [(name, kind) for name, kind in zip(current.names, current.kinds, strict=True)
                   if kind == "directory" and not name.startswith(".")
                   and name not in _SKIPPED_DIRS]
        kept = files + folders
        current.keep([name for name, _ in kept], [kind for _, kind in kept])

    for entry in folder.walk(".", enter=enter):
        if entry.kind == "symlink":
            try:  # followed only while it stays inside the skill's folder
                if not stat.S_ISREG(folder.stat(entry.relative).st_mode):
                    continue
            except (OSError, WorkspaceError):
                continue
        elif entry.kind != "file":  # folders are walked; FIFOs, sockets, devices left out
            continue
        if entry.relative == SKILL_FILE:
            continue
        if len(found) >= MAX_LISTED:
            truncated = True
            break
        found.append(entry.relative)
    return found, truncated
