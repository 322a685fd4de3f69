"""Entry points of ``janito.toolsets`` -> toolset specs -> imported tool classes.

Listing reads only ``entry_points.txt`` files and dist-info folder names; it imports
nothing and parses no METADATA. Loading imports the toolset's package and every public
submodule (a module whose name starts with ``_`` is a helper and is not scanned) and
collects the ``@tool`` classes defined there.
"""

from __future__ import annotations

import importlib
import os
import sys
import time
from collections.abc import Iterable
from types import FunctionType, ModuleType
from typing import Any, NamedTuple

from .decorator import FUNCTION_TOOL_ATTR

TOOLSETS_GROUP = "janito.toolsets"
PLUGINS_GROUP = "janito.plugins"
SLOW_IMPORT_SECONDS = 1.0


class ToolsetSpec(NamedTuple):
    """One advertised toolset: the entry point name, who ships it, which package holds it."""

    name: str
    distribution: str
    version: str
    module: str
    location: str = ""


class PluginSpec(NamedTuple):
    """One ``janito.plugins`` entry point: a module or object implementing hooks."""

    name: str
    distribution: str
    version: str
    value: str


class LoadError(NamedTuple):
    """A failure with no tool to hang on: an import error, a clash, a broken hook plugin."""

    toolset: str | None
    distribution: str | None
    reason: str
    kind: str = "import"
    module: str | None = None

    def as_row(self) -> dict[str, Any]:
        return {
            "name": None,
            "toolset": self.toolset,
            "distribution": self.distribution,
            "permissions": None,
            "description": None,
            "status": "error",
            "reason": self.reason,
            "kind": self.kind,
        }


class Discovered(NamedTuple):
    """What one scan of the installed distributions found."""

    toolsets: dict[str, ToolsetSpec]
    plugins: list[PluginSpec]
    errors: list[LoadError]
    warnings: list[str]


def _canonical(name: str) -> str:
    return name.replace("_", "-").replace(".", "-").lower()


def dist_identity(dist: Any) -> tuple[str, str, str]:
    """(name, version, location) of a distribution, from its folder name when possible.

    Reading ``Distribution.name`` parses all of METADATA as e-mail headers; the
    ``NAME-VERSION.dist-info`` folder name carries both for the cost of a string split.
    """
    path = getattr(dist, "_path", None)
    if path is not None:
        folder = os.path.basename(os.fspath(path))
        location = os.path.dirname(os.fspath(path))
        if folder.endswith(".dist-info"):
            stem = folder[: -len(".dist-info")]
            name, sep, version = stem.partition("-")
            if sep and name and version:
                return _canonical(name), version, location
    else:
        location = ""
    try:
        name = dist.metadata["Name"] or "unknown"
        version = dist.version or "0"
    except Exception:
        name, version = "unknown", "0"
    return _canonical(str(name)), str(version), location


def scan(distributions: Iterable[Any] | None = None) -> Discovered:
    """Read the ``janito.toolsets`` and ``janito.plugins`` entry points of ``distributions``.

    By default every distribution on ``sys.path``, or what the last scan of them found
    while nothing it was made from changed (``janito_core._scanned``). A distribution
    found twice keeps its first copy (the one Python would import); the shadowed copy is
    a warning.
    """
    if distributions is not None:
        return _scan(distributions)
    from . import _scanned

    measured = _scanned.now()
    key = _scanned.key(__file__)
    if key is not None:
        kept = _scanned.read(key)
        if kept is not None:
            toolsets, plugins, errors, warnings = kept
            return Discovered({name: ToolsetSpec(*spec) for name, spec in toolsets.items()},
                              [PluginSpec(*spec) for spec in plugins],
                              [LoadError(*error) for error in errors], warnings)
    import importlib_metadata

    found = _scan(importlib_metadata.distributions())
    if key is not None:
        _scanned.write(key, measured, found)
    return found


def _scan(distributions: Iterable[Any]) -> Discovered:
    seen: dict[str, str] = {}
    candidates: dict[str, list[ToolsetSpec]] = {}
    plugins: list[PluginSpec] = []
    errors: list[LoadError] = []
    warnings: list[str] = []
    for dist in distributions:
        try:
            points = dist.entry_points
        except Exception as exc:
            errors.append(LoadError(None, None, f"unreadable entry points in {dist!r}: {exc}"))
            continue
        relevant = [ep for ep in points if ep.group in (TOOLSETS_GROUP, PLUGINS_GROUP)]
        if not relevant:
            continue
        name, version, location = dist_identity(dist)
        if name in seen:
            if seen[name] != location:
                warnings.append(
                    f"distribution {name} is installed twice on sys.path ({seen[name]} and "
                    f"{location}); the first, which Python imports, is used"
                )
            continue
        seen[name] = location
        for ep in relevant:
            if ep.group == PLUGINS_GROUP:
                plugins.append(PluginSpec(ep.name, name, version, ep.value))
                continue
            value = ep.value.strip()
            if ":" in value or not value:
                errors.append(LoadError(
                    ep.name, name,
                    f"entry point value {ep.value!r} must name a package or module, not an object",
                ))
                continue
            candidates.setdefault(ep.name, []).append(
                ToolsetSpec(ep.name, name, version, value, location)
            )
    toolsets: dict[str, ToolsetSpec] = {}
    for toolset_name in sorted(candidates):
        winner, clash = choose_owner(toolset_name, candidates[toolset_name])
        toolsets[toolset_name] = winner
        if clash is not None:
            errors.append(clash)
    plugins.sort(key=lambda p: (p.name, p.distribution))
    return Discovered(toolsets, plugins, errors, warnings)


def choose_owner(name: str, specs: list[ToolsetSpec]) -> tuple[ToolsetSpec, LoadError | None]:
    """The one spec that provides toolset ``name`` when several distributions advertise it.

    The rule: the distribution named ``janito-<name>`` owns the name; otherwise the
    alphabetically first distribution name wins. The clash is an error naming them all.
    """
    if len(specs) == 1:
        return specs[0], None
    owner = _canonical(f"janito-{name}")
    ordered = sorted(specs, key=lambda s: (s.distribution != owner, s.distribution))
    winner = ordered[0]
    others = ", ".join(s.distribution for s in ordered[1:])
    reason = (
        f"toolset {name!r} is advertised by {len(specs)} distributions: {winner.distribution} "
        f"(used) and {others} (ignored); uninstall one of them"
    )
    return winner, LoadError(name, ", ".join(s.distribution for s in ordered), reason, "clash")


def describe_exception(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):
        where = f"{exc.filename}:{exc.lineno}" if exc.filename else "?"
        return f"SyntaxError: {exc.msg} ({where})"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def import_module(name: str) -> ModuleType:
    """Import ``name`` fresh enough that a failed earlier attempt is retried."""
    if name in sys.modules:
        module = sys.modules[name]
        if module is not None:
            return module
    return importlib.import_module(name)


def package_location(module: str) -> str | None:
    """The folder (or file) ``module`` is imported from, found the way ``import`` would
    find it but without importing anything; None when it cannot be found."""
    loaded = sys.modules.get(module)
    if loaded is not None:
        paths = list(getattr(loaded, "__path__", None) or [])
        return paths[0] if paths else getattr(loaded, "__file__", None)
    search: list[str] | None = None
    spec: Any = None
    parts = module.split(".")
    for index in range(len(parts)):
        name = ".".join(parts[: index + 1])
        parent = sys.modules.get(name)
        if parent is not None and index < len(parts) - 1:
            search = list(getattr(parent, "__path__", None) or [])
            continue
        spec = None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            try:
                spec = find(name, search)
            except Exception:
                spec = None
            if spec is not None:
                break
        if spec is None:
            return None
        search = list(spec.submodule_search_locations or [])
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return str(next(iter(spec.submodule_search_locations)))
    return str(spec.origin) if spec.origin else None


def public_submodules(package: ModuleType) -> list[str]:
    """Dotted names of a package's public submodules, sorted, without importing them."""
    paths = getattr(package, "__path__", None)
    if paths is None:
        return []
    names: set[str] = set()
    for folder in list(paths):
        try:
            entries = os.scandir(folder)
        except OSError:
            names.update(_pkgutil_names(package))
            continue
        with entries:
            for entry in entries:
                stem = entry.name
                if stem.startswith(("_", ".")):
                    continue
                if stem.endswith(".py") and entry.is_file():
                    stem = stem[:-3]
                elif entry.is_dir() and os.path.exists(os.path.join(entry.path, "__init__.py")):
                    pass
                else:
                    continue
                if stem.isidentifier():
                    names.add(stem)
    return [f"{package.__name__}.{n}" for n in sorted(names)]


def _pkgutil_names(package: ModuleType) -> list[str]:
    import pkgutil

    return [m.name for m in pkgutil.iter_modules(package.__path__) if not m.name.startswith("_")]


def tool_classes(module: ModuleType) -> list[type]:
    """``@tool`` classes and the classes of ``@tool`` functions defined in ``module``
    itself, in definition order."""
    found: dict[int, type] = {}
    for value in list(vars(module).values()):
        if isinstance(value, FunctionType):
            value = value.__dict__.get(FUNCTION_TOOL_ATTR)
            if not isinstance(value, type):
                continue
        if (
            isinstance(value, type)
            and value.__dict__.get("_is_tool") is True
            and value.__module__ == module.__name__
        ):
            found.setdefault(id(value), value)  # a class bound to two names is one tool
    return list(found.values())


class ImportedToolset(NamedTuple):
    spec: ToolsetSpec
    package: ModuleType | None
    modules: list[ModuleType]
    classes: list[type]
    errors: list[LoadError]
    seconds: float
    #: Every module tried, imported or not, in load order (the package first).
    names: tuple[str, ...] = ()


def import_toolset(spec: ToolsetSpec, only: Iterable[str] | None = None) -> ImportedToolset:
    """Import a toolset's package and its public submodules (or, given ``only``, the
    package and those of its submodules); never raises."""
    started = time.perf_counter()
    errors: list[LoadError] = []
    try:
        package = import_module(spec.module)
    except (Exception, SystemExit) as exc:
        errors.append(LoadError(
            spec.name, spec.distribution,
            f"cannot import {spec.module}: {describe_exception(exc)}", "import", spec.module,
        ))
        return ImportedToolset(spec, None, [], [], errors, time.perf_counter() - started,
                               (spec.module,))
    modules = [package]
    submodules = (public_submodules(package) if only is None
                  else [name for name in only if name != spec.module])
    for dotted in submodules:
        try:
            modules.append(import_module(dotted))
        except (Exception, SystemExit) as exc:
            errors.append(LoadError(
                spec.name, spec.distribution,
                f"cannot import {dotted}: {describe_exception(exc)}", "import", dotted,
            ))
    classes = [cls for module in modules for cls in tool_classes(module)]
    return ImportedToolset(spec, package, modules, classes, errors, time.perf_counter() - started,
                           (spec.module, *submodules))
