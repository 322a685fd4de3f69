"""What ListFiles, FindFiles and SearchText share: limits, walk roots, how entries are shown,
the listing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated, Any, Union

from janito_core import failure

from ._common import (
    NotRequired,
    PathProblem,
    TypedDict,
    invalid,
    kind_of,
    locate,
    os_failure,
    safe_text,
    split_paths_in,
)
from ._steps import prefixed

if TYPE_CHECKING:
    from janito_core import BaseTool

MAX_RESULTS_LIMIT = 100_000
"""The most entries or matches one listing or search may return."""

Start = tuple[str, str, str]
"""A walk root: (path as sent, path as the workspace shows it, kind)."""

Roots = Union[tuple[list[Start], list[dict[str, Any]]], dict[str, Any]]


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


def start_points(tool: BaseTool, paths: str | list[str]) -> tuple[list[Start],
                                                                    list[dict[str, Any]]]:
    """([(path as sent, path as shown, kind)], [per-path problems]) for the requested paths."""
    starts: list[Start] = []
    problems: list[dict[str, Any]] = []
    seen: set[str] = set()
    for path in split_paths_in(tool, paths):
        where, refused = locate(tool, path, "path")
        if where is None:
            if refused is not None:
                problems.append(refused)
            continue
        with where:
            shown = where.shown
            try:
                info = where.stat()
                if kind_of(info.st_mode) == "symlink":  # raced into a link: follow it inside
                    info = tool.workspace.stat(shown)
            except (OSError, ValueError) as exc:
                if isinstance(exc, OSError):
                    problems.append({"path": safe_text(path),
                                     **os_failure(exc, f"open {safe_text(shown)}")})
                else:
                    # a policy's refusal keeps its own type (denied_by_policy)
                    problems.append({"path": safe_text(path),
                                     **failure(str(exc), getattr(exc, "error_type",
                                                                 "invalid_path"))})
                continue
        if shown in seen:
            continue
        seen.add(shown)
        starts.append((path, shown, kind_of(info.st_mode)))
    return starts, problems


def entry_text(relative: str, kind: str) -> str:
    """How one listed entry is shown: folders end with "/", symbolic links with "@"."""
    text = safe_text(relative)
    if kind == "directory":
        return text + "/"
    if kind == "symlink":
        return text + "@"
    return text


def entry_texts(prefix: str, names: list[str], kinds: list[str]) -> list[str]:
    """How entries ``prefix + name`` of ``kinds`` are shown (as :func:`entry_text`
    shows one), the check that they are UTF-8 made once for them all."""
    if _encodable(prefix) and _encodable("".join(names)):
        if kinds.count("file") == len(kinds):  # what FindFiles finds by default
            return prefixed(prefix, names)
        return [prefix + name if kind == "file" else entry_text(prefix + name, kind)
                for name, kind in zip(names, kinds, strict=True)]
    return [entry_text(prefix + name, kind) for name, kind in zip(names, kinds, strict=True)]


def _encodable(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class ListingResult(TypedDict):
    """What ``listing_result`` gives every listing besides its paths (ListFiles' and
    FindFiles' answers build on it). The descriptions are in ``Annotated``, which a
    TypedDict built on this one keeps (its docstring it would not, before Python 3.12)."""

    count: Annotated[int, "How many are listed."]
    truncated: Annotated[bool, "Whether the listing stopped at max_results."]
    note: NotRequired[Annotated[str, "What to do when it was cut."]]
    errors: NotRequired[Annotated[list[PathProblem], "Paths that could not be listed, and "
                                                     "why (the others were)."]]
    unreadable: NotRequired[Annotated[list[str], "Folders that could not be read (at most "
                                                 "50)."]]


def listing_result(echo: dict[str, Any], key: str, found: Iterator[list[str]],
                   max_results: int, note: str, problems: list[dict[str, Any]],
                   unreadable: list[str]) -> dict[str, Any]:
    """The result of a listing: the first ``max_results`` of what ``found`` gives (lists of
    texts, a folder's at a time) under ``key``, with ``note`` when there were more, the
    per-path problems and the unreadable folders. The walk goes on only as far as it
    takes to tell whether there were more."""
    items: list[str] = []
    truncated = False
    for texts in found:
        room = max_results - len(items)
        if len(texts) > room:
            items += texts[:room]
            truncated = True
            break
        items += texts
        if len(items) == max_results:
            truncated = any(found)
            break
    result: dict[str, Any] = {"success": True, **echo, key: items, "count": len(items),
                              "truncated": truncated}
    if truncated:
        result["note"] = note
    if problems:
        result["errors"] = problems
    if unreadable:
        result["unreadable"] = [safe_text(u) for u in unreadable[:50]]
    return result
