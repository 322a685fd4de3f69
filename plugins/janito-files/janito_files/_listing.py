"""What ListFiles, FindFiles and SearchText share: limits, walk roots, walking, the listing."""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Union

from janito_core import failure

from ._common import invalid, kind_of, os_failure, outside, safe_text, shown, split_paths_in, too_long
from ._walk import Entry, depth_limit, walk

if TYPE_CHECKING:
    from janito_core import BaseTool

Start = tuple[str, str, str]
"""A walk root: (path as sent, real path, kind)."""

Roots = Union[tuple[list[Start], list[dict[str, Any]]], dict[str, Any]]


def check_limits(max_depth: int, max_results: int, echo: dict[str, Any]) -> dict[str, Any] | None:
    """The failure for a negative ``max_depth`` or a ``max_results`` below 1, else None."""
    if max_depth < 0:
        return invalid(f"max_depth must be 0 (no limit) or more, got {max_depth}", **echo)
    if max_results < 1:
        return invalid(f"max_results must be 1 or more, got {max_results}", **echo)
    return None


def walk_roots(tool: BaseTool, paths: str | list[str], echo: dict[str, Any]) -> Roots:
    """(starts, problems) as :func:`start_points` gives them, or the failure when no path is
    left to walk: the first problem (all of them listed), or that none was given."""
    starts, problems = start_points(tool, paths)
    if starts:
        return starts, problems
    if problems:
        first = problems[0]
        return failure(first["error"], first["error_type"], **echo, errors=problems)
    return invalid("paths is empty; give at least one path, such as \".\"", **echo)


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
        long_name = too_long(real)
        if long_name:
            problems.append({"path": safe_text(path), **failure(long_name, "name_too_long")})
            continue
        try:
            kind = kind_of(os.stat(real).st_mode)
        except OSError as exc:
            problems.append({"path": safe_text(path),
                             **os_failure(exc, f"open {shown(tool, real)}")})
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


def walked(tool: BaseTool, starts: list[Start], max_depth: int, include_gitignored: bool,
           unreadable: list[str]) -> Iterator[tuple[Entry, str]]:
    """(entry, its path below its start) for every entry under ``starts``, in order.

    A start that is not a folder stands for itself (its name as the relative path). Folders
    that cannot be read are named in ``unreadable``.
    """
    limit = depth_limit(max_depth)
    for _path, real, kind in starts:
        if kind != "directory":
            name = os.path.basename(real)
            yield Entry(real, name, 0, kind), name
            continue
        skip = len(real) + 1
        for entry in walk(real, root=tool.workspace.root, max_depth=limit,
                          gitignore=not include_gitignored, errors=unreadable):
            yield entry, entry.path[skip:]


def listing_result(echo: dict[str, Any], key: str, found: Iterator[str], max_results: int,
                   note: str, problems: list[dict[str, Any]],
                   unreadable: list[str]) -> dict[str, Any]:
    """The result of a listing: the first ``max_results`` of ``found`` under ``key``, with
    ``note`` when there were more, the per-path problems and the unreadable folders."""
    items = list(itertools.islice(found, min(max_results, sys.maxsize)))
    truncated = next(found, None) is not None
    result: dict[str, Any] = {"success": True, **echo, key: items, "count": len(items),
                              "truncated": truncated}
    if truncated:
        result["note"] = note
    if problems:
        result["errors"] = problems
    if unreadable:
        result["unreadable"] = [safe_text(u) for u in unreadable[:50]]
    return result
