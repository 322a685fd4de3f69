"""Walking a folder tree the way a developer expects: sorted, without .git, honouring ignore files.

The walk is janito-core's descriptor walk (``Workspace.walk``): every folder is opened
relative to its parent with ``O_NOFOLLOW``, links are reported and never followed, and no
depth exhausts the stack or the descriptor table.

Two kinds of ignore files are read, with the same rules: ``.gitignore`` (unless the caller
asks for everything) and ``.janitoignore`` (always: it is how a user hides paths from these
tools, whatever a model asks). Rules come from every such file between the workspace root
and the folder being walked, and from those found inside it; a deeper file overrides a
shallower one, and within one file the last matching pattern wins (``!pattern``
re-includes), as git does. Matching is done by the ``pathspec`` library (asked only of
paths some rule matches: janito_files._ignore), and a line it cannot read is left out, as
git leaves it out, rather than the whole file. An ignored folder is not entered. An ignore
file is read only when it is a regular file (a FIFO, a device or a link in its place is
ignored, as git ignores a linked one), through the descriptor of the folder that holds it,
and never more than its first MiB.

``.git`` and ``.janito`` folders and the ``.janitoignore`` files themselves are never part
of a walk. The caller's ``exclude`` patterns (see :class:`Exclude`) prune folders and skip
files on top of that.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import re
import stat
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from ._ignore import IgnoreFile, compile_lines
from ._steps import list_folder, lookahead

if TYPE_CHECKING:
    from janito_core import BaseTool
    from janito_core._fswalk import Folder, Run, WalkEntry

SKIP_DIRS = frozenset({".git", ".janito"})
GITIGNORE = ".gitignore"
JANITOIGNORE = ".janitoignore"
IGNORE_FILE_BYTES = 1 << 20
_NOTED = SKIP_DIRS | {GITIGNORE, JANITOIGNORE}
"""Names a folder's listing is checked for before its entries are looked at one by one."""

_spec_cache: dict[tuple[int, int, int, int], IgnoreFile | None] = {}

Rules = tuple[tuple[str, IgnoreFile], ...]
"""(folder as shown from the root, its ignore file's rules), shallowest first."""


class Ignores(NamedTuple):
    """The rules in force in a folder: from ``.gitignore`` files and from ``.janitoignore``."""

    git: Rules = ()
    janito: Rules = ()


_GONE = frozenset({errno.ENOENT, errno.ENOTDIR, errno.ELOOP})
"""Why an ignore file listed a moment ago may not open: it is no longer there, or a link
took its place (a link is never read)."""


def load_spec(dir_fd: int, name: str = GITIGNORE) -> IgnoreFile | None:
    """The rules of ignore file ``name`` of the folder open as ``dir_fd``, or None where
    there is none or it is not a regular file (cached by inode, size and modification
    time). A malformed line is left out, not the file.

    Raises the OSError of a file that is there and cannot be read (out of descriptors,
    an I/O error): the caller must not walk on as if its rules said nothing, which would
    show what a ``.janitoignore`` hides."""
    from janito_core.workspace import open_regular_at, read_fd

    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if not stat.S_ISREG(info.st_mode):
            return None
        key = (info.st_dev, info.st_ino, info.st_mtime_ns, info.st_size)
        if key in _spec_cache:
            return _spec_cache[key]
        fd, _info = open_regular_at(dir_fd, name)
    except OSError as exc:
        if exc.errno in _GONE:
            return None
        raise
    try:
        lines = read_fd(fd, info.st_size, IGNORE_FILE_BYTES).decode("utf-8", "replace").splitlines()
    finally:
        os.close(fd)
    compiled = compile_lines(lines)
    spec = None if compiled is None else IgnoreFile(compiled)
    if len(_spec_cache) > 256:
        _spec_cache.clear()
    _spec_cache[key] = spec
    return spec


def inherited_rules(tool: BaseTool, start: str, gitignore: bool = True) -> Ignores:
    """The ignore rules of the folders from the root down to the parent of ``start`` (a
    folder as the workspace shows it).

    Raises the OSError of a folder among them, or of an ignore file of one, that is there
    and cannot be read: the walk of ``start`` would not know what they hide."""
    if start in (".", "") or start.startswith("/"):
        return Ignores()
    parts = start.split("/")[:-1]
    folders = ["."] + ["/".join(parts[:i + 1]) for i in range(len(parts))]
    git: list[tuple[str, IgnoreFile]] = []
    janito: list[tuple[str, IgnoreFile]] = []
    for folder in folders:
        try:
            fd = tool.workspace.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        except ValueError:
            continue
        except OSError as exc:
            if exc.errno in _GONE:
                continue  # the walk of start meets the same and says so
            raise
        try:
            spec = load_spec(fd, GITIGNORE) if gitignore else None
            if spec is not None:
                git.append((folder, spec))
            spec = load_spec(fd, JANITOIGNORE)
            if spec is not None:
                janito.append((folder, spec))
        finally:
            os.close(fd)
    return Ignores(tuple(git), tuple(janito))


def from_folder(rules: Rules, base: str) -> list[tuple[str, IgnoreFile]]:
    """``rules`` deepest first, each with what goes before the name of an entry of the folder
    at ``base`` (its path from the root and a "/", or "" for the root) to make the entry's
    path from the folder of that rule's file."""
    return [(base if folder == "." else base[len(folder) + 1:], spec)
            for folder, spec in reversed(rules)]


def is_ignored(name: str, is_dir: bool, rules: list[tuple[str, IgnoreFile]]) -> bool:
    """Whether entry ``name`` is excluded by ``rules`` (of :func:`from_folder`): the deepest
    rule file that decides wins."""
    for before, spec in rules:
        verdict = spec.verdict(f"{before}{name}/" if is_dir else before + name)
        if verdict is not None:
            return verdict
    return False


class Exclude:
    """A model's ``exclude`` glob patterns, which prune folders and skip files of a walk.

    A pattern is matched against an entry's name and against its path below the folder
    being searched ("*" also matches "/"). "node_modules", "node_modules/",
    "*/node_modules/*" and "**/node_modules" all keep the walk out of every folder of that
    name; "*.min.js" skips such files anywhere; "src/generated" one folder. A pattern
    ending in "/" matches folders only.
    """

    __slots__ = ("_any", "_dirs", "patterns")

    def __init__(self, patterns: list[str]) -> None:
        self.patterns = patterns
        any_kind: list[str] = []
        dirs_only: list[str] = []
        for pattern in patterns:
            if pattern.endswith("/") and pattern.strip("/"):
                dirs_only.append(fnmatch.translate(pattern.rstrip("/")))
            else:
                any_kind.append(fnmatch.translate(pattern))
        self._any = re.compile("|".join(any_kind)) if any_kind else None
        self._dirs = re.compile("|".join(dirs_only)) if dirs_only else None

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def excludes(self, name: str, below: str, is_dir: bool) -> bool:
        """Whether an entry called ``name``, at ``below`` under the searched folder, is
        excluded."""
        if is_dir:
            # "/a/b/" lets "*/b/*" and "**/b" match a folder at the top as well as deeper.
            candidates = (name, below, below + "/", "/" + below, "/" + below + "/")
            for regex in (self._any, self._dirs):
                if regex is not None and any(regex.match(c) for c in candidates):
                    return True
            return False
        if self._any is None:
            return False
        return any(self._any.match(c) for c in (name, below, "/" + below))


def parse_exclude(exclude: str | list[str] | None) -> Exclude | None:
    """The :class:`Exclude` for a model's ``exclude`` (a list, or space-separated patterns)."""
    if exclude is None:
        return None
    items = exclude.split() if isinstance(exclude, str) else \
        [p.strip() for p in exclude if isinstance(p, str) and p.strip()]
    return Exclude(items) if items else None


def walk(tool: BaseTool, start: str, *, max_depth: int | None = None, gitignore: bool = True,
         errors: list[str] | None = None, exclude: Exclude | None = None
         ) -> Iterator[WalkEntry]:
    """Every entry below folder ``start`` (as shown from the root) in sorted depth-first
    order, without ``.git``, ``.janito``, ``.janitoignore`` files, what ``.janitoignore``
    files exclude, what ``exclude`` excludes and, with ``gitignore``, what ``.gitignore``
    files exclude.

    ``max_depth`` 1 gives the entries of ``start`` only; None walks everything. Folders
    that cannot be read are skipped and named in ``errors``.
    """
    from janito_core._fswalk import entries_of

    return entries_of(walk_runs(tool, start, max_depth=max_depth, gitignore=gitignore,
                                errors=errors, exclude=exclude))


def walk_runs(tool: BaseTool, start: str, *, max_depth: int | None = None,
              gitignore: bool = True, errors: list[str] | None = None,
              exclude: Exclude | None = None) -> Iterator[Run]:
    """The walk of :func:`walk`, a folder's consecutive entries at a time (see
    ``janito_core._fswalk.Run``)."""
    skip = 0 if start == "." else len(start) + 1

    def enter(folder: Folder) -> None:
        rules: Ignores = folder.state or Ignores()
        names = _NOTED.intersection(folder.names)
        if GITIGNORE in names or JANITOIGNORE in names:
            git, janito = rules
            reading = GITIGNORE
            try:
                if gitignore and GITIGNORE in names:
                    spec = load_spec(folder.fd, GITIGNORE)
                    if spec is not None:
                        git = (*git, (folder.relative, spec))
                reading = JANITOIGNORE
                if JANITOIGNORE in names:
                    spec = load_spec(folder.fd, JANITOIGNORE)
                    if spec is not None:
                        janito = (*janito, (folder.relative, spec))
            except OSError as exc:
                # what its rules hide is not known: none of the folder is walked
                failed(f"{base_of(folder)}{reading}", exc)
                folder.keep([], [])
                return
            rules = folder.state = Ignores(git, janito)
        if not (names or rules.git or rules.janito or exclude):
            return  # nothing here to skip: the common folder
        base = base_of(folder)
        janito_rules = from_folder(rules.janito, base)
        git_rules = from_folder(rules.git, base)
        kept_names: list[str] = []
        kept_kinds: list[str] = []
        for name, kind in zip(folder.names, folder.kinds, strict=True):
            is_dir = kind == "directory"
            if is_dir:
                if name in SKIP_DIRS:
                    continue
            elif name == JANITOIGNORE:
                continue
            if janito_rules and is_ignored(name, is_dir, janito_rules):
                continue
            if git_rules and is_ignored(name, is_dir, git_rules):
                continue
            if exclude and exclude.excludes(name, (base + name)[skip:], is_dir):
                continue
            kept_names.append(name)
            kept_kinds.append(kind)
        folder.keep(kept_names, kept_kinds)

    def failed(where: str, exc: OSError) -> None:
        if errors is not None:
            errors.append(f"{where}: {exc.strerror or exc}")

    def base_of(folder: Folder) -> str:
        return "" if folder.relative == "." else f"{folder.relative}/"

    try:
        rules = inherited_rules(tool, start, gitignore)
    except OSError as exc:
        failed(f"{start}: the ignore rules above it", exc)
        return iter(())
    ahead = lookahead()
    runs = tool.workspace.walk_runs(start, max_depth=max_depth, enter=enter, on_error=failed,
                                    state=rules, lister=list_folder, lookahead=ahead)
    return runs if ahead is None else _closing(runs, ahead)


def _closing(runs: Iterator[Run], ahead: Any) -> Iterator[Run]:
    """``runs``, then ``ahead`` closed (its thread stopped, what it holds closed), however
    the walk ends."""
    try:
        yield from runs
    finally:
        close = getattr(runs, "close", None)
        if close is not None:
            close()
        ahead.close()


def listing_levels(max_depth: int | None) -> int | None:
    """The ``max_depth`` of ListFiles and FindFiles, which counts the levels of subfolders
    below the folders' own entries as janito 4.50 did (0 = their own entries), as the
    walker's limit, which counts the levels listed (1 = their own entries); None is no
    limit. SearchText and SearchRegex count as the walker does (4.50 did so there too)."""
    return None if max_depth is None else max_depth + 1
