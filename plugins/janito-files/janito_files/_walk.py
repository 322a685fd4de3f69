"""Walking a folder tree the way a developer expects: sorted, without .git, honouring .gitignore.

Ignore rules come from every ``.gitignore`` between the workspace root and the folder being
walked, and from those found inside it; a deeper file overrides a shallower one, and within
one file the last matching pattern wins (``!pattern`` re-includes), as git does. Matching is
done by the ``pathspec`` library. A folder that is ignored is not entered. Symbolic links are
reported but never followed, so a walk cannot leave the workspace through one.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

SKIP_DIRS = frozenset({".git"})
GITIGNORE = ".gitignore"

_spec_cache: dict[tuple[str, int, int], Any] = {}


class Entry:
    """One walked entry (a plain class: a NamedTuple costs milliseconds at import)."""

    __slots__ = ("depth", "kind", "name", "path")

    def __init__(self, path: str, name: str, depth: int, kind: str) -> None:
        self.path = path      # absolute path
        self.name = name
        self.depth = depth    # 1 for the entries of the starting folder
        self.kind = kind      # "file", "directory", "symlink" or "other"


Rules = tuple[tuple[str, Any], ...]   # (folder, compiled GitIgnoreSpec), shallowest first


def load_spec(folder: str) -> Any | None:
    """The compiled ``.gitignore`` of ``folder``, or None (cached by size and mtime)."""
    path = os.path.join(folder, GITIGNORE)
    try:
        info = os.stat(path)
    except OSError:
        return None
    key = (path, info.st_mtime_ns, info.st_size)
    if key in _spec_cache:
        return _spec_cache[key]
    try:
        with open(path, "rb") as handle:
            lines = handle.read(1 << 20).decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    from pathspec import GitIgnoreSpec

    try:
        spec = GitIgnoreSpec.from_lines(lines) if any(
            line.strip() and not line.startswith("#") for line in lines) else None
    except Exception:  # a malformed pattern file must not stop a listing
        spec = None
    if len(_spec_cache) > 256:
        _spec_cache.clear()
    _spec_cache[key] = spec
    return spec


def inherited_rules(start: str, root: str) -> Rules:
    """The ignore rules of the folders from ``root`` down to the parent of ``start``."""
    if start == root or not start.startswith(root.rstrip(os.sep) + os.sep):
        return ()
    rules: list[tuple[str, Any]] = []
    folders = [root]
    for part in os.path.relpath(os.path.dirname(start), root).split(os.sep):
        if part not in ("", "."):
            folders.append(os.path.join(folders[-1], part))
    for folder in folders:
        spec = load_spec(folder)
        if spec is not None:
            rules.append((folder, spec))
    return tuple(rules)


def is_ignored(path: str, is_dir: bool, rules: Rules) -> bool:
    """Whether ``path`` is excluded by ``rules`` (the deepest deciding rule wins)."""
    for folder, spec in reversed(rules):
        relative = path[len(folder) + 1:] if folder != os.sep else path[1:]
        if is_dir:
            relative += "/"
        verdict = spec.check_file(relative).include
        if verdict is not None:
            return bool(verdict)
    return False


def _kind(entry: os.DirEntry[str]) -> str:
    try:
        if entry.is_symlink():
            return "symlink"
        if entry.is_dir(follow_symlinks=False):
            return "directory"
        if entry.is_file(follow_symlinks=False):
            return "file"
    except OSError:
        pass
    return "other"


def walk(
    start: str,
    *,
    root: str,
    max_depth: int | None = None,
    gitignore: bool = True,
    errors: list[str] | None = None,
) -> Iterator[Entry]:
    """Every entry below folder ``start`` in sorted depth-first order.

    ``max_depth`` 1 gives the entries of ``start`` only; None walks everything. Folders that
    cannot be read are skipped and named in ``errors``.
    """
    rules = inherited_rules(start, root) if gitignore else ()
    stack: list[tuple[Iterator[os.DirEntry[str]], int, Rules]] = []

    def open_folder(folder: str, depth: int, rules: Rules) -> None:
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            if errors is not None:
                # named from the workspace root, as results show paths
                errors.append(f"{os.path.relpath(folder, root)}: {exc.strerror or exc}")
            return
        if gitignore and any(e.name == GITIGNORE for e in entries):
            spec = load_spec(folder)
            if spec is not None:
                rules = (*rules, (folder, spec))
        stack.append((iter(entries), depth, rules))

    open_folder(start, 1, rules)
    while stack:
        entries, depth, rules = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            continue
        kind = _kind(entry)
        if kind == "directory" and entry.name in SKIP_DIRS:
            continue
        if rules and is_ignored(entry.path, kind == "directory", rules):
            continue
        yield Entry(entry.path, entry.name, depth, kind)
        if kind == "directory" and (max_depth is None or depth < max_depth):
            open_folder(entry.path, depth + 1, rules)


def depth_limit(max_depth: int | None) -> int | None:
    """A model's ``max_depth`` as the walker's limit: 0 or None means unlimited."""
    if max_depth is None or max_depth <= 0:
        return None
    return max_depth
