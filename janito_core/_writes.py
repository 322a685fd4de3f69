"""Which calls of one turn must wait for which: the workspace paths they write.

A tool names the parameters that hold paths it writes (``BaseTool.writes_paths``). Two
calls of a turn conflict when one writes a path that the other writes too, or a folder
above it (removing ``src`` and creating ``src/a.py``); the later call then waits for the
earlier one, so the two happen in the order of the calls, as if the turn ran one call at a
time. A tool with ``w`` or ``x`` that declares nothing may write anywhere and conflicts
with every call that writes. Reads are not ordered: calls of one turn are independent by
the providers' contract, and a model that needs a read after a write asks in a later turn.

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


def waits(writes: Sequence[tuple[tuple[str, ...], ...] | None]) -> list[tuple[int, ...]]:
    """For each call, the earlier calls of the turn it must wait for."""
    after: list[tuple[int, ...]] = []
    for index, mine in enumerate(writes):
        if mine == ():
            after.append(())
            continue
        after.append(tuple(
            earlier for earlier in range(index)
            if writes[earlier] != () and _overlap(mine, writes[earlier])
        ))
    return after
