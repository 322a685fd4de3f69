"""What ListFiles and FindFiles share: turning the requested paths into walk roots."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ._common import kind_of, outside, safe_text, shown, split_paths_in

if TYPE_CHECKING:
    from janito_core import BaseTool


def start_points(tool: BaseTool, paths: str | list[str]) -> tuple[list[tuple[str, str, str]],
                                                                    list[dict[str, Any]]]:
    """([(path as sent, real path, kind)], [per-path problems]) for the requested paths."""
    from janito_core import WorkspaceError

    starts: list[tuple[str, str, str]] = []
    problems: list[dict[str, Any]] = []
    seen: set[str] = set()
    for path in split_paths_in(tool, paths):
        try:
            real = tool.resolve_path(path)
        except WorkspaceError as exc:
            problems.append({"path": safe_text(path), **outside(exc)})
            continue
        try:
            kind = kind_of(os.stat(real).st_mode)
        except OSError as exc:
            problems.append({"path": safe_text(path), "success": False,
                             "error": f"{shown(tool, real)}: {exc.strerror or exc}",
                             "error_type": "not_found" if isinstance(exc, FileNotFoundError)
                             else "os_error"})
            continue
        if real in seen:
            continue
        seen.add(real)
        starts.append((path, real, kind))
    return starts, problems


def entry_text(tool: BaseTool, path: str, kind: str) -> str:
    """How one listed entry is shown: folders end with "/", symbolic links with "@"."""
    text = shown(tool, path)
    if kind == "directory":
        return text + "/"
    if kind == "symlink":
        return text + "@"
    return text
