"""Walking a folder tree the way a developer expects: sorted, without .git, honouring .gitignore.

The walk is janito-core's descriptor walk (``Workspace.walk``): every folder is opened
relative to its parent with ``O_NOFOLLOW``, links are reported and never followed, and no
depth exhausts the stack or the descriptor table. Ignore rules come from every
``.gitignore`` between the workspace root and the folder being walked, and from those found
inside it; a deeper file overrides a shallower one, and within one file the last matching
pattern wins (``!pattern`` re-includes), as git does. Matching is done by the ``pathspec``
library. A folder that is ignored is not entered. A ``.gitignore`` is read only when it is a
regular file (a FIFO, a device or a link in its place is ignored, as git ignores a linked
one), and never more than its first MiB.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from janito_core import BaseTool
    from janito_core._fswalk import Folder, WalkEntry

SKIP_DIRS = frozenset({".git"})
GITIGNORE = ".gitignore"
GITIGNORE_BYTES = 1 << 20

_spec_cache: dict[tuple[int, int, int, int], Any] = {}

Rules = tuple[tuple[str, Any], ...]
"""(folder as shown from the root, compiled GitIgnoreSpec), shallowest first."""


def load_spec(dir_fd: int) -> Any | None:
    """The compiled ``.gitignore`` of the folder open as ``dir_fd``, or None (cached by
    inode, size and modification time)."""
    try:
        info = os.stat(GITIGNORE, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    key = (info.st_dev, info.st_ino, info.st_mtime_ns, info.st_size)
    if key in _spec_cache:
        return _spec_cache[key]
    from janito_core.workspace import open_regular_at, read_fd

    try:
        fd, _info = open_regular_at(dir_fd, GITIGNORE)
    except OSError:
        return None
    try:
        lines = read_fd(fd, info.st_size, GITIGNORE_BYTES).decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    finally:
        os.close(fd)
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


def inherited_rules(tool: BaseTool, start: str) -> Rules:
    """The ignore rules of the folders from the root down to the parent of ``start`` (a
    folder as the workspace shows it)."""
    if start in (".", "") or start.startswith("/"):
        return ()
    parts = start.split("/")[:-1]
    folders = ["."] + ["/".join(parts[:i + 1]) for i in range(len(parts))]
    rules: list[tuple[str, Any]] = []
    for folder in folders:
        try:
            fd = tool.workspace.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        except (OSError, ValueError):
            continue
        try:
            spec = load_spec(fd)
        finally:
            os.close(fd)
        if spec is not None:
            rules.append((folder, spec))
    return tuple(rules)


def is_ignored(relative: str, is_dir: bool, rules: Rules) -> bool:
    """Whether ``relative`` (as shown from the root) is excluded by ``rules`` (the deepest
    deciding rule wins)."""
    for folder, spec in reversed(rules):
        below = relative if folder == "." else relative[len(folder) + 1:]
        if is_dir:
            below += "/"
        verdict = spec.check_file(below).include
        if verdict is not None:
            return bool(verdict)
    return False


def walk(tool: BaseTool, start: str, *, max_depth: int | None = None, gitignore: bool = True,
         errors: list[str] | None = None) -> Iterator[WalkEntry]:
    """Every entry below folder ``start`` (as shown from the root) in sorted depth-first
    order, without ``.git`` and, with ``gitignore``, without what ``.gitignore`` excludes.

    ``max_depth`` 1 gives the entries of ``start`` only; None walks everything. Folders
    that cannot be read are skipped and named in ``errors``.
    """

    def enter(folder: Folder, entries: list[os.DirEntry[str]]) -> list[os.DirEntry[str]]:
        rules: Rules = folder.state or ()
        if gitignore and any(e.name == GITIGNORE for e in entries):
            spec = load_spec(folder.fd)
            if spec is not None:
                rules = folder.state = (*rules, (folder.relative, spec))
        kept = []
        for entry in entries:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir and entry.name in SKIP_DIRS:
                continue
            if rules:
                relative = entry.name if folder.relative == "." else \
                    f"{folder.relative}/{entry.name}"
                if is_ignored(relative, is_dir, rules):
                    continue
            kept.append(entry)
        return kept

    def failed(where: str, exc: OSError) -> None:
        if errors is not None:
            errors.append(f"{where}: {exc.strerror or exc}")

    rules = inherited_rules(tool, start) if gitignore else ()
    yield from tool.workspace.walk(start, max_depth=max_depth, enter=enter, on_error=failed,
                                   state=rules)


def depth_limit(max_depth: int | None) -> int | None:
    """A model's ``max_depth`` as the walker's limit: 0 or None means unlimited."""
    if max_depth is None or max_depth <= 0:
        return None
    return max_depth
