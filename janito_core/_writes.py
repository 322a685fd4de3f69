"""Which calls of one turn must wait for which: the workspace paths they write and name.

A tool names the parameters that hold paths it writes (``BaseTool.writes_paths``). The
calls of a turn end as if they ran one at a time, in the order of the calls, wherever
the order can matter:

- two calls that write one path, or a path and a folder above it (removing ``src`` and
  creating ``src/a.py``), run in the order of the calls;
- a call whose arguments name a path that an earlier call writes (reading a file the
  turn has just created, searching a folder it changed) waits for that call, and a call
  that writes a path named by an earlier call waits for it;
- a tool with ``w`` or ``x`` that declares nothing may change anything: its call waits
  for every earlier call of the turn, and every later call waits for it.

What a call names is guessed from its arguments: every string, alone or in a list, is
taken as a path. A string that is no path ("def", a URL) only costs concurrency when it
happens to match a path written in the same turn, never an answer.

Paths are compared as text, made absolute under the workspace root and normalised (``.``,
``..`` and doubled separators folded): two names of one file through a symbolic link are
not seen as one. That only costs the order between the two calls; edits of one file never
lose an update whatever the order (ReplaceTextInFile locks the file it edits).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any


def paths_written(cls: type, permissions: str, arguments: Mapping[str, Any],
                  root: str) -> tuple[tuple[str, ...], ...] | None:
    """The workspace paths a call of ``cls`` with these (validated) arguments writes, each
    as its tuple of components; None for anywhere in the workspace, ``()`` for nothing."""
    declared = getattr(cls, "writes_paths", None)
    if declared is None:
        return None if ("w" in permissions or "x" in permissions) else ()
    if isinstance(declared, str):
        declared = (declared,)
    found = []
    for name in declared:
        value = arguments.get(name)
        for item in value if isinstance(value, (list, tuple, set, frozenset)) else (value,):
            if isinstance(item, (str, os.PathLike)):
                found.append(_components(root, os.fspath(item)))
    return tuple(found)


def _components(root: str, path: str | bytes) -> tuple[str, ...]:
    text = path.decode("utf-8", "surrogateescape") if isinstance(path, bytes) else path
    full = os.path.normpath(os.path.join(root, text))
    return tuple(part for part in full.split(os.sep) if part)


def _overlap(first: tuple[tuple[str, ...], ...] | None,
             second: tuple[tuple[str, ...], ...] | None) -> bool:
    if first is None or second is None:
        return True
    for one in first:
        for other in second:
            shorter = min(len(one), len(other))
            if one[:shorter] == other[:shorter]:
                return True
    return False


def paths_named(arguments: Mapping[str, Any], root: str) -> tuple[tuple[str, ...], ...]:
    """Every string argument (alone or in a list) taken as a workspace path."""
    found = []
    for value in arguments.values():
        for item in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(item, str) and len(item) <= 4096 and "\x00" not in item:
                found.append(_components(root, item))
    return tuple(found)


def waits(writes: Sequence[tuple[tuple[str, ...], ...] | None],
          named: Sequence[tuple[tuple[str, ...], ...]] | None = None) -> list[tuple[int, ...]]:
    """For each call, the earlier calls of the turn it must wait for, given what each writes
    (None: anything) and the paths each names."""
    names = named if named is not None else [()] * len(writes)
    after: list[tuple[int, ...]] = []
    for index, mine in enumerate(writes):
        before = []
        for earlier in range(index):
            theirs = writes[earlier]
            if mine is None or theirs is None:
                conflict = True
            else:
                conflict = (bool(mine) and bool(theirs) and _overlap(mine, theirs)) or (
                    bool(theirs) and _overlap(names[index], theirs)) or (
                    bool(mine) and _overlap(names[earlier], mine))
            if conflict:
                before.append(earlier)
        after.append(tuple(before))
    return after
