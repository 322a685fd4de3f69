"""The last scan of the installed distributions' entry points, remembered.

Reading the entry points takes importing ``importlib_metadata`` (about 40 ms, most of a
start of ``janito``) and reading every distribution's ``entry_points.txt``. janito keeps
what the last scan found in its state folder (``cache/discovery/``), beside what it was
made from: this Python and its ``-O``, janito-core's discovery module, every entry of
``sys.path`` with its times, and for every distribution folder in them
(``*.dist-info``, ``*.egg-info``) the size, times and inode of its ``entry_points.txt``.
A later start that finds all of them as they were uses that scan: one ``stat`` a
distribution, nothing read. Installing, upgrading or removing a distribution adds or
removes a folder, which changes the times of the folder that holds it; editing an
``entry_points.txt`` changes its own. Either makes the next start scan again.

As with a toolset's manifest (``_manifest``), the scan is kept only once every time it
depends on was a few seconds old, and read only from a file of the user's own that no one
else may write. A Python that finds distributions through a finder of its own (one with
``find_distributions`` other than the standard path finder) always scans.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from typing import Any

from . import _manifest

#: Changes whenever what the file holds, or how a scan is made, changes.
FORMAT = 2
FOLDER = ("cache", "discovery")
_FOLDERS_OF_METADATA = (".dist-info", ".egg-info")
#: The finders of distributions whose answers the key covers: the standard one, and the
#: one ``importlib_metadata`` puts in its place once imported.
_KNOWN_FINDERS = (("_frozen_importlib_external", "PathFinder"),
                  ("importlib_metadata", "MetadataPathFinder"))


def key(scanner: str) -> list[Any] | None:
    """Everything a scan depends on, measured now, the module that scans (``scanner``, a
    file) among them; None when that cannot be told."""
    for finder in sys.meta_path:
        if hasattr(finder, "find_distributions"):
            kind = finder if isinstance(finder, type) else type(finder)
            if (kind.__module__, kind.__qualname__) not in _KNOWN_FINDERS:
                return None
    try:
        scanning = os.stat(scanner)
    except (OSError, TypeError, ValueError):
        return None
    entries: list[list[Any]] = []
    for entry in sys.path:
        if not isinstance(entry, str):  # a host's Path or bytes, which import skips
            entries.append([repr(entry)])
            continue
        try:
            info = os.stat(entry or ".")
        except (OSError, ValueError):
            entries.append([entry])
            continue
        row: list[Any] = [entry, info.st_mtime_ns, info.st_ctime_ns, info.st_ino]
        if stat.S_ISDIR(info.st_mode):
            found = _metadata_in(entry or ".")
            if found is None:
                return None
            row.append(found)
        entries.append(row)
    return [FORMAT, sys.version, sys.implementation.cache_tag, sys.flags.optimize,
            [scanning.st_size, scanning.st_mtime_ns, scanning.st_ino], entries]


def _metadata_in(folder: str) -> list[list[Any]] | None:
    """[name, size, mtime, ctime, inode] of the ``entry_points.txt`` of every distribution
    folder in ``folder`` ([name] for one without), sorted; None when it cannot be read."""
    found: list[list[Any]] = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if not entry.name.endswith(_FOLDERS_OF_METADATA):
                    continue
                try:
                    info = os.stat(os.path.join(entry.path, "entry_points.txt"))
                except OSError:  # no entry points, or a PKG-INFO file named .egg-info
                    found.append([entry.name])
                    continue
                found.append([entry.name, info.st_size, info.st_mtime_ns, info.st_ctime_ns,
                              info.st_ino])
    except OSError:
        return None
    found.sort()
    return found


def _file_name(key: list[Any]) -> str:
    """One file for each environment (and ``-O``) sharing the state folder; the current
    folder, first on the import path of ``python -m``, is left out of the name (the key
    holds it): a file for each folder janito was started in would pile up."""
    return _manifest.file_name([sys.prefix, f"-O{key[3]}",
                                *_manifest.lasting_entries(row[0] for row in key[5])])


_Error = tuple[str | None, str | None, str, str, str | None]


def read(key: list[Any]) -> tuple[dict[str, list[str]], list[list[str]], list[_Error],
                                   list[str]] | None:
    """The scan kept for exactly ``key``, as plain lists: the toolsets (name: the five
    fields of its ``ToolsetSpec``), the plugins' four fields, the load errors' five and
    the warnings; None when there is none."""
    stored = _manifest.read_private(FOLDER, _file_name(key))
    if not isinstance(stored, dict) or stored.get("key") != key:
        return None
    try:
        return ({_string(name): _strings(spec, 5) for name, spec in stored["toolsets"].items()},
                [_strings(spec, 4) for spec in stored["plugins"]],
                [_error(error) for error in stored["errors"]],
                [_string(text) for text in stored["warnings"]])
    except (AttributeError, KeyError, TypeError, ValueError):
        return None


def write(key: list[Any], measured: int, found: Any) -> bool:
    """Keep scan ``found`` (a ``discovery.Discovered``, whose records are tuples, written
    as JSON arrays) for ``key``, measured at ``measured`` (``time.time_ns()`` just before
    :func:`key`); False when it was not kept (a time too recent, no state folder, a file
    system that refuses). Never raises."""
    if not _settled(key, measured):
        return False
    return _manifest.write_private(FOLDER, _file_name(key), {
        "key": key, "toolsets": found.toolsets, "plugins": found.plugins,
        "errors": found.errors, "warnings": found.warnings})


def now() -> int:
    """The clock to measure a key against (:func:`write`'s ``measured``)."""
    return time.time_ns()


def _settled(key: list[Any], measured: int) -> bool:
    """Whether every time ``key`` holds is old enough that a change made since the scan
    began would show in the times."""
    newest: int = key[4][1]
    for row in key[5]:
        if len(row) > 1:
            newest = max(newest, row[1], row[2])
        for metadata in row[4] if len(row) > 4 else ():
            if len(metadata) > 1:
                newest = max(newest, metadata[2], metadata[3])
    return newest < measured - int(_manifest.SETTLED_SECONDS * 1e9)


def _string(value: Any) -> str:
    if type(value) is not str:
        raise TypeError(value)
    return value


def _strings(values: Any, count: int) -> list[str]:
    if type(values) is not list or len(values) != count:
        raise ValueError(values)
    return [_string(value) for value in values]


def _error(values: Any) -> _Error:
    if type(values) is not list or len(values) != 5:
        raise ValueError(values)
    toolset, distribution, reason, kind, module = values
    return (None if toolset is None else _string(toolset),
            None if distribution is None else _string(distribution), _string(reason),
            _string(kind), None if module is None else _string(module))
