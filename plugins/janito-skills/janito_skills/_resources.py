"""A skill's resource files, confined to the skill's folder.

``resolve_resource`` is the only way a resource path a model sent becomes a file to
open. It refuses an absolute path (POSIX or Windows style), any ``..`` component, a NUL,
and any path whose link-resolved form lies outside the skill's link-resolved folder (a
symbolic link pointing out). A link that stays inside the folder is followed.
"""

from __future__ import annotations

import os
import re

from ._frontmatter import SKILL_FILE

MAX_LISTED = 500
MAX_FOLDERS = 2000
_SKIPPED_DIRS = {"__pycache__", "node_modules"}
_DRIVE = re.compile(r"^[A-Za-z]:")


class ResourceError(Exception):
    """A resource path that is refused or missing; ``error_type`` says which."""

    def __init__(self, message: str, error_type: str) -> None:
        super().__init__(message)
        self.error_type = error_type


def inside(real_path: str, real_folder: str) -> bool:
    if real_path == real_folder:
        return True
    prefix = real_folder if real_folder.endswith(os.sep) else real_folder + os.sep
    return real_path.startswith(prefix)


def resolve_resource(folder: str, resource_path: str) -> str:
    """The real path of ``resource_path`` inside skill ``folder``, or ResourceError."""
    if not isinstance(resource_path, str) or not resource_path.strip():
        raise ResourceError("resource_path must be a non-empty relative path",
                            "invalid_arguments")
    if "\x00" in resource_path:
        raise ResourceError("resource_path must not contain a NUL character",
                            "invalid_arguments")
    if (os.path.isabs(resource_path) or resource_path.startswith(("/", "\\"))
            or _DRIVE.match(resource_path)):
        raise ResourceError(
            "resource_path must be relative to the skill's folder; absolute paths are refused",
            "outside_skill",
        )
    parts = re.split(r"[\\/]+", resource_path)
    if ".." in parts:
        raise ResourceError(
            "resource_path must not contain '..'; resources are confined to the skill's folder",
            "outside_skill",
        )
    real_folder = os.path.realpath(folder)
    candidate = os.path.join(real_folder, *[p for p in parts if p and p != "."])
    try:
        real = os.path.realpath(candidate)
    except (OSError, ValueError) as exc:
        raise ResourceError(f"the path cannot be resolved ({exc})", "invalid_arguments") from None
    if not inside(real, real_folder):
        raise ResourceError(
            "resource_path leads outside the skill's folder (through a symbolic link); refused",
            "outside_skill",
        )
    return real


def list_resources(folder: str) -> tuple[list[str], bool]:
    """Relative paths ('/'-separated) of the files in a skill folder besides SKILL.md.

    Hidden folders, ``__pycache__``, anything but regular files, and links that lead
    outside the folder are left out; at most ``MAX_LISTED`` paths from at most
    ``MAX_FOLDERS`` folders, the boolean saying whether more were left out.
    """
    real_folder = os.path.realpath(folder)
    found: list[str] = []
    truncated = False
    for visited, (current, dirnames, filenames) in enumerate(
            os.walk(real_folder, followlinks=False)):
        if visited >= MAX_FOLDERS:
            truncated = True
            break
        dirnames[:] = sorted(
            d for d in dirnames
            if not d.startswith(".") and d not in _SKIPPED_DIRS
            and not os.path.islink(os.path.join(current, d))
        )
        for filename in sorted(filenames):
            path = os.path.join(current, filename)
            relative = os.path.relpath(path, real_folder).replace(os.sep, "/")
            if relative == SKILL_FILE:
                continue
            if os.path.islink(path):
                target = os.path.realpath(path)
                if not inside(target, real_folder):
                    continue
            if not os.path.isfile(path):  # FIFOs, sockets, devices, dangling links
                continue
            if len(found) >= MAX_LISTED:
                truncated = True
                break
            found.append(relative)
        if truncated:
            break
    return found, truncated
