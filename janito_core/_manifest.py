"""What a toolset's modules define, remembered so that loading it need not import them.

The first load of a toolset imports its modules as always and writes down, for each, the
tools it defines (name, permissions, description, whether it declares the paths it
writes, what its annotations said, whether it has a ``should_load()`` of its own) and
whether the module must be imported on every load anyway. Later loads read that manifest
and import only those modules; any other is imported when one of its tools is first
called, or, for a tool with a ``should_load()`` of its own, when the registry is first
asked about it (``Registry.record``, ``Registry.records``).

A module is imported on every load when what it says at load can change from one start
to the next: it defines hooks, ``janito_load_errors`` or ``janito_load_notes``; and when
it failed to import.

A manifest is used only while everything it was made from is as it was: this Python and
its ``-O``, the folders on ``sys.path``, janito-core's files, the toolset's distribution
and version, where its package is found, and the size, times and inode of every file of
that package (``ctime`` included, which no program can set back). One ``stat`` a file,
no reading. A manifest is written only once every one of those times was a few seconds
old when they were measured: a file changed again within the same tick of the file
system's clock would otherwise keep its times. Manifests live in janito's state folder
(``cache/toolsets/``), which no tool and no sandboxed code can reach; one that is not the
user's own, or that others may write, is ignored.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ._marker import has_hooks
from .base_tool import BaseTool

if TYPE_CHECKING:
    from types import ModuleType

    from .discovery import ToolsetSpec

#: Changes whenever what a manifest holds, or how it is read, changes.
FORMAT = 1
#: How old every time a manifest depends on must be before it is written (seconds): more
#: than the coarsest clock of a file system (FAT's two seconds).
SETTLED_SECONDS = 3.0
FOLDER = ("cache", "toolsets")

_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_SHOULD_LOAD = BaseTool.__dict__["should_load"].__func__
_SANDBOX_STATUS = BaseTool.__dict__["sandbox_status"].__func__



class Manifest:
    """One toolset's modules in load order: ``(module, eager, tools)`` each, a tool being
    a dict with ``name``, ``permissions``, ``description``, ``writes``, ``problem`` (why
    its annotations cannot become a schema, or None), ``plain`` (see :func:`plain_class`)
    and ``gated`` (see :func:`gated_at_load`)."""

    __slots__ = ("key", "modules")

    def __init__(self, key: list[Any], modules: list[list[Any]]) -> None:
        self.key = key
        self.modules = modules

    def eager(self) -> list[str]:
        """The modules imported on every load."""
        return [name for name, eager, _ in self.modules if eager]


def gated_at_load(cls: type) -> bool:
    """Whether a tool class decides something when its toolset loads (``should_load()``
    or ``sandbox_status()`` of its own, or none at all), so its module must be imported."""
    for attribute, default in (("should_load", _SHOULD_LOAD), ("sandbox_status", _SANDBOX_STATUS)):
        method = getattr(cls, attribute, None)
        if getattr(method, "__func__", None) is not default:
            return True
    return False


def plain_class(cls: type, module: ModuleType) -> bool:
    """Whether ``cls`` is written as a class statement at the top of ``module`` with its
    own ``run()``: the same source then makes the same class, and what its annotations
    said holds for the next load too (a class made by a function need not)."""
    run = cls.__dict__.get("run")
    return (cls.__qualname__ == cls.__name__ and vars(module).get(cls.__name__) is cls
            and getattr(run, "__qualname__", None) == f"{cls.__name__}.run")


def eager_module(module: ModuleType) -> bool:
    """Whether ``module`` must be imported on every load of its toolset: what it says at
    load (hooks, errors, notes) can change from one start to the next."""
    names = vars(module)
    return "janito_load_errors" in names or "janito_load_notes" in names or has_hooks(module)


# -- the key --------------------------------------------------------------------------


def _search_locations(top: str) -> list[str] | None:
    """Where top-level package (or module) ``top`` is imported from, found as ``import``
    would find it, without importing it; None when that cannot be told."""
    loaded = sys.modules.get(top)
    if loaded is not None:
        paths = list(getattr(loaded, "__path__", None) or [])
        origin = getattr(loaded, "__file__", None)
        return paths or ([origin] if origin else None)
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        if find is None:
            continue
        try:
            spec = find(top, None)
        except Exception:
            return None
        if spec is None:
            continue
        if spec.submodule_search_locations:
            return [str(p) for p in spec.submodule_search_locations]
        return [spec.origin] if spec.origin and spec.has_location else None
    return None


def _files(places: list[str]) -> list[list[Any]] | None:
    """[path, size, mtime, ctime, inode] of every file under ``places`` (bytecode caches
    and hidden folders left out), sorted; None when one cannot be read.

    A link to a folder is walked as the folder it leads to (what it holds is imported
    through it), each folder once; a link that leads nowhere counts as itself."""
    found: list[list[Any]] = []
    walked: set[tuple[int, int]] = set()
    try:
        for place in places:
            info = os.stat(place)
            if not os.path.isdir(place):
                found.append([place, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino])
                continue
            folders = [place]
            while folders:
                folder = folders.pop()
                info = os.stat(folder)
                if (info.st_dev, info.st_ino) in walked:
                    continue
                walked.add((info.st_dev, info.st_ino))
                with os.scandir(folder) as entries:
                    for entry in entries:
                        if entry.is_dir():
                            if entry.name != "__pycache__" and not entry.name.startswith("."):
                                folders.append(entry.path)
                            continue
                        try:
                            info = entry.stat()
                        except FileNotFoundError:
                            info = entry.stat(follow_symlinks=False)
                        found.append([entry.path, info.st_size, info.st_mtime_ns,
                                      info.st_ctime_ns, info.st_ino])
    except OSError:
        return None
    found.sort()
    return found


def _path_times() -> list[list[Any]]:
    """Each folder of ``sys.path`` and its modification time: installing or removing a
    distribution changes the folder it goes in."""
    times: list[list[Any]] = []
    for entry in sys.path:
        if not isinstance(entry, str):  # a host's Path or bytes, which import skips
            times.append([repr(entry), None, None])
            continue
        try:
            info = os.stat(entry or ".")
        except (OSError, ValueError, TypeError):
            times.append([entry, None, None])
            continue
        times.append([entry, info.st_mtime_ns, info.st_ctime_ns])
    return times


def core_files() -> list[list[Any]] | None:
    """janito-core's own files, as :func:`key_of` wants them (a registry looks once)."""
    return _files([os.path.dirname(os.path.abspath(__file__))])


def key_of(spec: ToolsetSpec, core: list[list[Any]] | None) -> list[Any] | None:
    """Everything a manifest of toolset ``spec`` depends on, janito-core's files
    (:func:`core_files`) among them; None when it cannot be told (then the toolset is
    imported, as it would be without manifests)."""
    if core is None:
        return None
    places = _search_locations(spec.module.partition(".")[0])
    if not places:
        return None
    files = _files(places)
    if files is None:
        return None
    # -O and -OO change what a module defines (docstrings, so descriptions, and asserts).
    return [FORMAT, sys.version, sys.implementation.cache_tag, sys.flags.optimize,
            _path_times(), core, list(spec[:4]), places, files]


def imported_before(spec: ToolsetSpec) -> bool:
    """Whether a module of toolset ``spec`` is imported already: this process may hold it
    from before its file changed, so no manifest is made from it."""
    package = spec.module
    inside = package + "."
    return any(name == package or name.startswith(inside) for name in list(sys.modules))


def _settled(key: list[Any], measured: int) -> bool:
    """Whether every time ``key`` holds is old enough, against the clock as it was just
    before ``key`` was measured (``measured``, from ``time.time_ns()``), that a change
    made since would show."""
    newest = 0
    for _, mtime, ctime in key[4]:
        newest = max(newest, mtime or 0, ctime or 0)
    for files in (key[5], key[8]):
        for _, _, mtime, ctime, _ in files:
            newest = max(newest, mtime, ctime)
    return newest < measured - int(SETTLED_SECONDS * 1e9)


# -- reading and writing ----------------------------------------------------------------


def folder(parts: tuple[str, ...] = FOLDER) -> str | None:
    """Where manifests (or, given its ``parts``, another cache) are kept: inside janito's
    state folder."""
    from .config import config_dir

    try:
        return os.path.join(os.fspath(config_dir()), *parts)
    except (RuntimeError, OSError, ValueError):  # no home folder to find it from
        return None


def _file_name(spec: ToolsetSpec, key: list[Any]) -> str:
    """One file per toolset, place it is installed in, import path and optimisation
    level: environments that share a state folder, and the ways of starting janito in one
    (its command, ``python -m``, ``python -O``), keep a manifest each. The current folder,
    first on the import path of ``python -m``, is no part of the name (the key holds it):
    a file for each folder janito was ever started in would pile up."""
    return file_name([*spec[:4], *key[7], *lasting_entries(entry for entry, _, _ in key[4]),
                      f"-O{key[3]}"])


def lasting_entries(entries: Iterable[str]) -> list[str]:
    """The entries of ``sys.path`` a cache file's name may hold: all but the current folder
    (``""``, or its path, first on the import path of ``python -m``)."""
    try:
        here = os.getcwd()
    except OSError:
        here = ""
    return [entry for entry in entries if entry not in ("", here)]


def file_name(identity: list[str]) -> str:
    """A short file name for ``identity``: the text as a number modulo a Mersenne prime,
    enough to tell a few places apart (the key inside the file tells the rest), where
    binascii's crc32 loads a shared library (0.4 ms)."""
    text = "\0".join(identity)
    digest = int.from_bytes(text.encode("utf-8", "surrogatepass"), "big") % (2**61 - 1)
    return f"{digest:016x}.json"


def read(spec: ToolsetSpec, key: list[Any]) -> Manifest | None:
    """The manifest of ``spec`` made for exactly ``key``, or None."""
    stored = read_private(FOLDER, _file_name(spec, key))
    if not isinstance(stored, dict) or stored.get("key") != key:
        return None
    modules = stored.get("modules")
    if not isinstance(modules, list) or not all(_well_formed(m) for m in modules):
        return None
    return Manifest(key, modules)


def read_private(parts: tuple[str, ...], name: str) -> Any:
    """The JSON in file ``name`` of the cache folder ``parts`` of janito's state folder, or
    None: no such file, or one that is not the user's own, or that others may write (what
    it says decides which modules run, their hooks among them)."""
    where = folder(parts)
    if where is None:
        return None
    try:
        fd = os.open(os.path.join(where, name), os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if (not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid()
                or info.st_mode & 0o022):
            return None
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    import json

    try:
        return json.loads(b"".join(chunks))
    except ValueError:
        return None


_TOOL_FIELDS: dict[str, type | tuple[type, ...]] = {
    "name": str, "permissions": str, "description": str, "writes": bool,
    "problem": (str, type(None)), "plain": bool, "gated": bool}


def _well_formed(module: Any) -> bool:
    if not (isinstance(module, list) and len(module) == 3 and isinstance(module[0], str)
            and isinstance(module[1], bool) and isinstance(module[2], list)):
        return False
    return all(isinstance(tool, dict) and all(isinstance(tool.get(field), kind)
                                              for field, kind in _TOOL_FIELDS.items())
               for tool in module[2])


def write(spec: ToolsetSpec, key: list[Any], measured: int, modules: list[list[Any]]) -> bool:
    """Keep the manifest of ``spec`` for ``key``, measured at ``measured`` (``time.time_ns()``
    just before :func:`key_of`); False when it was not written (a time too recent, no
    state folder, a file system that refuses). Never raises."""
    if not _settled(key, measured):
        return False
    return write_private(FOLDER, _file_name(spec, key), {"key": key, "modules": modules})


def write_private(parts: tuple[str, ...], name: str, stored: Any) -> bool:
    """Keep ``stored`` as JSON in file ``name`` of the cache folder ``parts`` of janito's
    state folder, readable and writable by the user alone; False when it was not written.
    Never raises."""
    where = folder(parts)
    if where is None:
        return False
    import json

    from ._atomic import write_at

    data = json.dumps(stored, ensure_ascii=False,
                      separators=(",", ":")).encode("utf-8", "surrogatepass")
    try:
        os.makedirs(where, mode=0o700, exist_ok=True)
        dir_fd = os.open(where, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
        try:
            # Not flushed to disk: a manifest lost to a crash is made again.
            write_at(dir_fd, name, data, overwrite=True, mode=0o600, durable=False)
        finally:
            os.close(dir_fd)
    except (OSError, ValueError):
        return False
    return True


def forget(spec: ToolsetSpec, key: list[Any]) -> None:
    """Remove the manifest of ``spec``: what it said was found untrue."""
    where = folder()
    if where is None:
        return
    try:
        os.unlink(os.path.join(where, _file_name(spec, key)))
    except OSError:
        pass
