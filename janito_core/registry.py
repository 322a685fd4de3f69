"""The Registry: which tools are available here, and why the others are not."""

from __future__ import annotations

import contextlib
import threading
import time
from typing import TYPE_CHECKING, Any, TextIO

from . import _manifest
from ._context import active_registry, set_default_reports
from ._marker import has_hooks
from ._text import first_line
from .decorator import tool_class
from .discovery import (
    SLOW_IMPORT_SECONDS,
    Discovered,
    ImportedToolset,
    LoadError,
    ToolsetSpec,
    describe_exception,
    import_module,
    import_toolset,
    scan,
    tool_classes,
)
from .errors import ToolsetNotAllowedError, ToolsetNotFoundError
from .plugins import PluginHost, allowed_names
from .privileges import ALL_PRIVILEGES, Privileges
from .results import counted

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from types import ModuleType

    from ._aio import AsyncRunner
    from .journal import Journal
    from .policy import ApprovalRequest, Policy
    from .schema import ToolSchema
    from .workspace import Workspace
    from .wrapper import ToolWrapper

AUTOLOAD_TOOLSETS: tuple[str, ...] = ("files", "system")


class ToolRecord:
    """One tool class found in a loaded toolset, with what became of it.

    ``status`` is "loaded", "skipped" (the tool cannot work here: ``reason`` says why),
    "denied" (the running privileges do not grant its permissions) or "error" (its
    ``run()`` cannot become a schema, an annotation that does not resolve or a type janito
    cannot express: a fault of its code, which no environment would mend).

    A tool listed from its toolset's manifest (``janito_core._manifest``) is ``pending``:
    its module is imported when ``cls`` is first asked for (its registry's ``record()``
    asks, so a call imports it first). One whose class has a ``should_load()`` of its own
    is gated when its registry first hands out its record: ``record(name)`` for it, or
    ``records()`` for all.
    """

    __slots__ = ("_cls", "_description", "_gated", "_granted", "_registry",
                 "_wrapper", "_writes", "cls", "distribution", "failed", "module", "name",
                 "permissions", "policy_allowed", "policy_facts", "reason", "status", "toolset")

    #: The tool class (of a pending tool, read through ``_ListedRecord.cls``).
    cls: type

    def __init__(self, name: str, cls: type | None, toolset: str, distribution: str,
                 permissions: str, status: str, reason: str | None = None, *,
                 module: str | None = None, description: str | None = None,
                 writes: bool | None = None) -> None:
        self.name = name
        self._cls = cls
        if cls is not None:
            self.cls = cls
        #: The module that defines the tool.
        self.module: str = module if module is not None else cls.__module__
        self.toolset = toolset
        self.distribution = distribution
        self.permissions = permissions
        self.status = status
        self.reason = reason
        self.failed = False  # a fault: should_load raised (skipped), bad annotations (error)
        self._description = description
        self._writes = writes
        #: The registry that imports a pending tool's module; None once there is nothing
        #: to import (imported, or found gone).
        self._registry: Registry | None = None
        #: A pending tool whose class decides at load whether it can work here
        #: (``should_load()``): its status is not known before its module is imported,
        #: which its registry does before it hands the record out.
        self._gated = False
        self._wrapper: ToolWrapper | None = None
        #: What a policy looks at of the tool (``janito_core._gate.facts``), once known.
        self.policy_facts: Any = None
        #: For a tool whose every call a policy allows alike: (policy, workspace, decision,
        #: guarded view), so such a call pays one comparison for the policy (``_call``).
        self.policy_allowed: Any = None
        #: The (immutable) privileges a call of this loaded tool was last admitted under:
        #: while they are still its registry's, a call skips asking them again (``_call``).
        self._granted: Privileges | None = None

    def __repr__(self) -> str:
        return f"<ToolRecord {self.name} {self.status} ({self.toolset})>"

    @property
    def pending(self) -> bool:
        """Whether the tool was listed from its toolset's manifest and its module is not
        imported yet."""
        return self._cls is None

    @property
    def description(self) -> str:
        described = self._description
        if described is None:
            described = self._description = describe(self.cls)
        return described

    @property
    def declares_writes(self) -> bool:
        """Whether the tool says which of its parameters name paths it writes."""
        writes = self._writes
        if writes is None:
            writes = self._writes = bool(getattr(self.cls, "writes_paths", None))
        return writes

    def as_row(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "toolset": self.toolset,
            "distribution": self.distribution,
            "permissions": self.permissions,
            "description": self.description,
            "status": self.status,
            "reason": self.reason,
        }


_CLASS_SLOT = ToolRecord.__dict__["cls"]


class _ListedRecord(ToolRecord):
    """A tool listed from its toolset's manifest whose module is not imported yet: reading
    its ``cls`` imports it, and the record becomes a plain ``ToolRecord``. (A property on
    ``ToolRecord`` itself would cost every call about 60 ns a read.)"""

    __slots__ = ()

    @property
    def cls(self) -> type:  # type: ignore[override]
        """The tool class, its module imported now (LookupError when it can no longer be:
        ``load_errors`` of its registry say why)."""
        registry = self._registry
        if registry is not None:
            registry._import_tool(self)
        cls = self._cls
        if cls is None:
            raise LookupError(f"tool {self.name} ({self.module}) cannot be imported; "
                              "its registry's load_errors say why")
        return cls

    def _resolve(self, cls: type) -> None:
        """Give ``self`` its class: nothing is left to import."""
        self._cls = cls
        _CLASS_SLOT.__set__(self, cls)  # before the class changes: no reader finds it unset
        self._registry = None
        self.__class__ = ToolRecord  # type: ignore[assignment]


def describe(cls: type) -> str:
    """A tool's description: the first line of its class docstring, else of ``run()``'s."""
    return first_line(cls.__doc__) or first_line(getattr(cls, "run", None).__doc__)


def _clash(spec: ToolsetSpec, record: ToolRecord, existing: ToolRecord) -> LoadError:
    """The load error of tool ``record`` of toolset ``spec``, named as ``existing`` is."""
    return LoadError(
        spec.name, spec.distribution,
        f"tool {record.name!r} of toolset {spec.name!r} ({spec.distribution}) has the "
        f"name of a tool already loaded from toolset {existing.toolset!r} "
        f"({existing.distribution}); the first one is kept",
        "clash", record.module,
    )


#: What ``Registry._gate`` is given for a tool of which nothing is remembered.
_UNKNOWN: dict[str, Any] = {}


class Registry:
    """The tools of the toolsets loaded here, gated by environment and privileges.

    Nothing happens until first use: then the installed toolsets are discovered and
    those in ``autoload`` are loaded. ``add_toolset(name)`` loads an on-demand one.
    A toolset that fails, a tool that clashes, a plugin that raises: each becomes an
    entry of ``load_errors`` naming its distribution; the rest keep working.

    A registry may be used from many threads. Loading (first use, ``add_toolset``,
    ``add_tool``) happens under one lock, once; a thread that arrives meanwhile waits
    and then sees the whole result. A toolset's tools become visible together, after
    it is loaded and before ``janito_toolset_loaded`` runs. Plugin hooks and tools that
    call back into the registry while it loads run on the loading thread and see what
    is loaded so far.

    ``reports`` says where the progress reports of its calls go: ``"stderr"``,
    ``"logging"`` or ``"off"`` (see the property).

    ``policy`` (a ``janito_core.policy.Policy``, or the dict a ``policy.toml`` holds)
    allows, asks or denies each call inside the privileges; without one, every call the
    privileges allow runs, as always. ``approver`` answers the calls the policy asks
    about: a function (or coroutine function) given an ``ApprovalRequest`` that returns
    True, False or ``"always"`` (every later call of that tool, for the life of the
    registry). Without an approver, an asked call answers ``approval_required`` and runs
    when a caller brings the person's decision (``approvals=`` of ``call_tool`` and
    ``execute_tool_calls``).

    ``journal=True`` (or a ``janito_core.journal.Journal``) records each call in the
    audit log and each change it makes through the workspace, so ``janito undo`` can
    take it back (docs/undo.md).
    """

    def __init__(
        self,
        *,
        privileges: Privileges | None = None,
        workspace: Workspace | None = None,
        autoload: tuple[str, ...] | list[str] | None = None,
        allowed: set[str] | None = None,
        max_result_chars: int = 100_000,
        reports: str = "stderr",
        policy: Policy | Mapping[str, Any] | None = None,
        approver: Callable[[ApprovalRequest], Any] | None = None,
        journal: Journal | bool | None = None,
    ) -> None:
        self.max_result_chars = max_result_chars
        if journal is True:
            from .journal import Journal

            journal = Journal()
        #: Where every change of its calls is written ahead, to be undone, and every call
        #: logged (``janito_core.journal``); None: nothing is recorded.
        self.journal: Journal | None = journal or None
        if policy is not None and not hasattr(policy, "decide"):
            from .policy import Policy

            policy = Policy.from_data(policy)
        self.policy: Policy | None = policy  # type: ignore[assignment]
        self.approver = approver
        #: Tools a person answered "always" for: asked no more while this registry lives.
        self.always_approved: set[str] = set()
        self._pending: dict[str, ApprovalRequest] = {}
        self._decided: dict[str, None] = {}
        #: How this registry's calls are traced: None until its first call decides, then
        #: False without ``opentelemetry-api``, else a ``janito_core._telemetry.Tracing``.
        self.tracing: Any = None
        self._approval_key: bytes | None = None
        self._views: dict[int, tuple[Any, Workspace, Workspace]] = {}
        self._privileges = privileges or ALL_PRIVILEGES
        self._workspace = workspace
        self._autoload = tuple(AUTOLOAD_TOOLSETS if autoload is None else autoload)
        self._allowed = allowed if allowed is not None else allowed_names("JANITO_TOOLSETS")
        self._discovered: Discovered | None = None
        # Set only once autoload has finished, so the lock-free check in _ensure never
        # lets a thread through to a half-filled registry.
        self._initialized = False
        # Re-entrant: loading runs toolset imports, should_load() and plugin hooks, and
        # any of them may call back into the registry on the loading thread.
        self._lock = threading.RLock()
        self._autoloading = False
        self._loading: set[str] = set()  # toolsets being loaded by the lock's holder
        # Replaced, never changed in place, so a reader without the lock sees either the
        # state before a toolset loaded or the state after it.
        self._records: list[ToolRecord] = []
        self._by_name: dict[str, ToolRecord] = {}
        self._loaded: dict[str, list[str]] = {}
        #: Per toolset loaded from its manifest: (spec, manifest) while tools are pending.
        self._remembered: dict[str, tuple[ToolsetSpec, _manifest.Manifest]] = {}
        #: How many pending records are still to be gated (``ToolRecord._gated``).
        self._unsettled = 0
        #: janito-core's files as the first load found them ([] when they could not be
        #: read), part of every manifest's key (``janito_core._manifest``).
        self._core_files: list[list[Any]] | None = None
        self._core_measured = 0
        self._errors: list[LoadError] = []
        self.warnings: list[str] = []
        #: What a toolset says that is worth knowing but is no failure (``janito_load_notes``
        #: of its modules: nothing configured yet), as LoadErrors of kind "note".
        self.notes: list[LoadError] = []
        self.plugins = PluginHost()
        self.reports = reports
        #: Where what a tool's module prints while it is imported on first use goes (see
        #: ``ToolRecord.pending``): None leaves it on stdout; the ``janito`` command, whose
        #: stdout carries results (and MCP messages), sends it to stderr.
        self.import_output: TextIO | None = None
        self._async_runner: AsyncRunner | None = None
        self._async_runner_lock = threading.Lock()

    @property
    def reports(self) -> str:
        """Where the progress reports of this registry's calls go: ``"stderr"`` (the
        default), ``"logging"`` (logger ``janito.reports.TOOL``; errors at ERROR, warnings
        at WARNING, the rest at INFO) or ``"off"``. Plugins' ``janito_report`` hooks see
        every report whichever is chosen."""
        return self.plugins.reports

    @reports.setter
    def reports(self, destination: str) -> None:
        from .plugins import REPORT_DESTINATIONS

        if destination not in REPORT_DESTINATIONS:
            raise ValueError(f"reports must be one of {', '.join(REPORT_DESTINATIONS)}, "
                             f"not {destination!r}")
        self.plugins.reports = destination

    # -- initialisation ---------------------------------------------------------------

    def _discover(self) -> Discovered:
        found = self._discovered
        if found is not None:
            return found
        with self._lock:
            if self._discovered is None:
                found = scan()
                self._errors.extend(found.errors)
                self.warnings.extend(found.warnings)
                self.plugins.set_specs(found.plugins)
                self._discovered = found
            return self._discovered

    def _ensure(self) -> None:
        if self._initialized:
            return
        with self._lock:
            if self._initialized or self._autoloading:
                return  # loaded meanwhile, or called back from this thread's own autoload
            self._autoloading = True
            try:
                found = self._discover()
                for name in self._autoload:
                    # a plugin hook may have added an autoload toolset already
                    if name in found.toolsets and name not in self._loaded and self.is_allowed(name):
                        self._load(found.toolsets[name])
            finally:
                self._autoloading = False
                self._initialized = True

    def is_allowed(self, name: str) -> bool:
        """Whether ``JANITO_TOOLSETS`` (or ``allowed=``) lets toolset ``name`` load."""
        return self._allowed is None or name in self._allowed

    @property
    def privileges(self) -> Privileges:
        return self._privileges

    @privileges.setter
    def privileges(self, value: Privileges) -> None:
        with self._lock:  # a toolset loading meanwhile is gated with one set or the other
            self._privileges = value
            for record in self._records:
                if record.status in ("skipped", "error"):  # no privilege makes them work
                    continue  # (nor is one still to be gated: it is, with these privileges)
                if value.allows(record.permissions):
                    record.status, record.reason = "loaded", None
                else:
                    record.status, record.reason = "denied", value.denied_reason(record.permissions)

    @property
    def workspace(self) -> Workspace:
        workspace = self._workspace
        if workspace is None:
            with self._lock:  # one Workspace for every thread, not one each
                if self._workspace is None:
                    from .workspace import Workspace  # on first use: only tool calls need it

                    self._workspace = Workspace()
                workspace = self._workspace
        return workspace

    @workspace.setter
    def workspace(self, value: Workspace) -> None:
        self._workspace = value
        self._views = {}

    def guarded_workspace(self, guard: Any) -> Workspace:
        """The workspace as a call under ``guard`` sees it (one view per guard, kept)."""
        workspace = self.workspace
        views = self._views
        view = views.get(id(guard))
        if view is None or view[0] is not guard or view[1] is not workspace:
            view = (guard, workspace, workspace.guarded(guard))
            if len(views) > 256:  # guards made per call (rules on arguments) are not kept
                views.clear()
            views[id(guard)] = view
        return view[2]

    # -- approvals --------------------------------------------------------------------

    @property
    def approval_key(self) -> bytes:
        """The secret the ids of asked calls are made with: one per registry."""
        key = self._approval_key
        if key is None:
            import os

            with self._lock:
                if self._approval_key is None:
                    self._approval_key = os.urandom(32)
                key = self._approval_key
        return key

    #: Asked calls kept for a decision at most; past it, the oldest are forgotten.
    MAX_PENDING = 1000

    def keep_pending(self, request: ApprovalRequest) -> None:
        """Remember an asked call until a caller brings the person's decision on it."""
        with self._lock:
            self._pending.pop(request.id, None)
            self._pending[request.id] = request
            while len(self._pending) > self.MAX_PENDING:
                self._pending.pop(next(iter(self._pending)))

    def take_pending(self, approval_id: str) -> ApprovalRequest | None:
        """The asked call ``approval_id`` names, forgotten now (a decision is used once)."""
        with self._lock:
            request = self._pending.pop(approval_id, None)
            if request is not None:
                self._decided[approval_id] = None
                while len(self._decided) > self.MAX_PENDING:
                    self._decided.pop(next(iter(self._decided)))
            return request

    def was_decided(self, approval_id: str) -> bool:
        """Whether a decision on the asked call ``approval_id`` was taken already (among
        the last ``MAX_PENDING``): the integrations refuse to bring another."""
        with self._lock:
            return approval_id in self._decided

    def pending_approvals(self) -> list[ApprovalRequest]:
        """The asked calls waiting for a person's decision, oldest first."""
        with self._lock:
            return list(self._pending.values())

    def async_runner(self) -> AsyncRunner:
        """The event loop that runs this registry's async tools for synchronous callers,
        and the threads that run its synchronous tools for async callers: started on
        first use (``janito tools`` never loads ``asyncio``), stopped with the registry."""
        runner = self._async_runner
        if runner is None:
            with self._async_runner_lock:
                if self._async_runner is None:
                    import weakref

                    from ._aio import AsyncRunner

                    created = AsyncRunner()
                    weakref.finalize(self, created.shutdown)
                    self._async_runner = created
                runner = self._async_runner
        return runner

    # -- toolsets ---------------------------------------------------------------------

    def toolsets(self) -> dict[str, ToolsetSpec]:
        """Every installed toolset by name (discovery only: nothing is imported)."""
        return dict(self._discover().toolsets)

    def loaded_toolsets(self) -> dict[str, list[str]]:
        """Toolsets loaded so far, each with the names of the tools it brought."""
        self._ensure()
        return {name: list(tools) for name, tools in self._loaded.items()}

    def add_toolset(self, name: str) -> list[str]:
        """Load toolset ``name`` and return the names of its tools that are now available.

        Raises ToolsetNotFoundError when no distribution advertises it and
        ToolsetNotAllowedError when ``JANITO_TOOLSETS`` excludes it. Import failures do not
        raise: they are recorded in ``load_errors``.
        """
        self._ensure()
        names = self._loaded.get(name)
        if names is None:
            found = self._discover()
            spec = found.toolsets.get(name)
            if spec is None:
                import difflib

                close = difflib.get_close_matches(name, list(found.toolsets), n=3, cutoff=0.5)
                raise ToolsetNotFoundError(name, close)
            if not self.is_allowed(name):
                raise ToolsetNotAllowedError(
                    f"toolset {name!r} is installed but JANITO_TOOLSETS does not include it"
                )
            with self._lock:
                if name not in self._loaded and name not in self._loading:
                    self._load(spec)
                # empty only for a call back from the import of this very toolset
                names = self._loaded.get(name, [])
        self._settle_all(name)
        by_name = self._by_name
        return [t for t in names if t in by_name and by_name[t].status == "loaded"]

    def _load(self, spec: ToolsetSpec) -> None:
        """Import, gate and publish one toolset; the caller holds the lock."""
        self._loading.add(spec.name)
        try:
            self._load_locked(spec)
        finally:
            self._loading.discard(spec.name)

    def _load_locked(self, spec: ToolsetSpec) -> None:
        if self._core_files is None:
            self._core_measured = time.time_ns()
            self._core_files = _manifest.core_files() or []
        # The clock before the earliest time measured: janito-core's files, looked at once.
        measured = self._core_measured
        key = _manifest.key_of(spec, self._core_files or None)
        remembered = _manifest.read(spec, key) if key is not None else None
        imported: ImportedToolset | None
        if remembered is None:
            if key is not None and _manifest.imported_before(spec):
                # What this process holds may be older than the files the key describes.
                key = None
            imported = import_toolset(spec)
            entries: list[tuple[Any, dict[str, Any]]] = [(cls, _UNKNOWN) for cls in imported.classes]
        else:
            eager = remembered.eager()
            imported = import_toolset(spec, eager) if eager else None
            entries = self._entries(remembered, imported)
        failures_before = len(self._errors)
        notes_before = len(self.notes)
        if imported is not None:
            self._errors.extend(imported.errors)
            if imported.seconds > SLOW_IMPORT_SECONDS:
                self.warnings.append(
                    f"toolset {spec.name!r} ({spec.distribution}) took {imported.seconds:.1f} s "
                    "to import"
                )
            if imported.package is None:
                self._loaded = {**self._loaded, spec.name: []}
                return
            self._take_modules(spec, imported.modules)
        if remembered is None:
            known = {id(cls): self._facts(cls) for cls, _ in entries}
            entries = [(cls, known[id(cls)]) for cls, _ in entries]
        records: dict[str, ToolRecord] = {}
        for tool, facts in entries:
            record = self._gate(tool, spec, facts) if isinstance(tool, type) \
                else self._listed(tool, spec)
            existing = records.get(record.name) or self._by_name.get(record.name)
            if existing is not None:
                self._errors.append(_clash(spec, record, existing))
                continue
            records[record.name] = record
        if not records and len(self._errors) == failures_before and len(self.notes) == notes_before:
            # Loaded without a fault and without a word, yet offering nothing: the tools
            # were not found where janito looks (or lack @tool), which the author must hear.
            self._errors.append(LoadError(
                spec.name, spec.distribution,
                f"toolset {spec.name!r} has no tools: no public module of {spec.module} "
                "defines a @tool class (modules whose names start with _ are not scanned)",
                "empty", spec.module,
            ))
        if remembered is not None:
            if any(r.pending for r in records.values()):
                self._remembered[spec.name] = (spec, remembered)
        elif key is not None and imported is not None and all(f is not _UNKNOWN for _, f in entries):
            _manifest.write(spec, key, measured, self._manifest_of(imported, entries))
        names = list(records)
        self._publish(list(records.values()), {spec.name: names})
        if self.plugins.active or self.plugins.wants("janito_toolset_loaded"):
            self._settle_all(spec.name)  # the hook is told which tools are available
            available = [n for n in names if records[n].status == "loaded"]
            token = active_registry.set(self)
            try:
                self.plugins.toolset_loaded(self, spec.name, available)
            finally:
                active_registry.reset(token)
        self._errors.extend(e for e in self.plugins.errors if e not in self._errors)

    def _take_modules(self, spec: ToolsetSpec, modules: list[ModuleType]) -> None:
        """What imported modules of a toolset say at load: errors, notes and hooks."""
        for module in modules:
            reported = getattr(module, "janito_load_errors", None)
            if isinstance(reported, (list, tuple)):
                self._errors.extend(
                    LoadError(spec.name, spec.distribution, str(reason), "toolset", module.__name__)
                    for reason in reported
                )
            noted = getattr(module, "janito_load_notes", None)
            if isinstance(noted, (list, tuple)):
                self.notes.extend(
                    LoadError(spec.name, spec.distribution, str(note), "note", module.__name__)
                    for note in noted
                )
            if has_hooks(module):
                error = self.plugins.register(
                    module, f"{spec.distribution}:{module.__name__}", spec.distribution, spec.name
                )
                if error is not None:
                    self._errors.append(error)

    def _entries(self, remembered: _manifest.Manifest, imported: Any
                 ) -> list[tuple[Any, dict[str, Any]]]:
        """The tools of a toolset in load order, from its manifest: the classes of the
        modules imported on every load (with what is remembered of each that a class
        statement made), the remembered facts of the others."""
        entries: list[tuple[Any, dict[str, Any]]] = []
        loaded = {m.__name__: m for m in imported.modules} if imported is not None else {}
        for name, eager, tools in remembered.modules:
            if not eager:
                entries.extend(({**tool, "module": name}, _UNKNOWN) for tool in tools)
                continue
            module = loaded.get(name)
            if module is None:
                continue  # it failed to import: import_toolset said so
            known = {tool["name"]: tool for tool in tools if tool["plain"]}
            entries.extend(
                (cls, known.get(cls.__name__, _UNKNOWN) if _manifest.plain_class(cls, module)
                 else _UNKNOWN)
                for cls in tool_classes(module))
        return entries

    def _facts(self, cls: type) -> dict[str, Any]:
        """What a manifest remembers of a tool class (``janito_core._manifest``); nothing
        when it cannot be told, and then no manifest is written."""
        from .wrapper import check_annotations  # with schema: only loading toolsets needs it

        try:
            return {"name": cls.__name__, "permissions": getattr(cls, "_tool_permissions", ""),
                    "description": describe(cls),
                    "writes": bool(getattr(cls, "writes_paths", None)),
                    "problem": check_annotations(cls), "plain": False,
                    "gated": _manifest.gated_at_load(cls)}
        except Exception:  # gated as before, where whatever this was shows
            return _UNKNOWN

    def _manifest_of(self, imported: Any, entries: list[tuple[Any, dict[str, Any]]]
                     ) -> list[list[Any]]:
        """The manifest of a toolset just imported whole: each module tried, whether it is
        imported on every load, and what it defines."""
        facts = {id(cls): known for cls, known in entries}
        loaded = {m.__name__: m for m in imported.modules}
        modules: list[list[Any]] = []
        for name in imported.names:
            module = loaded.get(name)
            if module is None:  # failed: tried again on every load, and said again
                modules.append([name, True, []])
                continue
            classes = tool_classes(module)
            modules.append([name, _manifest.eager_module(module), [
                {**facts[id(cls)], "plain": _manifest.plain_class(cls, module)}
                for cls in classes]])
        return modules

    def _listed(self, tool: dict[str, Any], spec: ToolsetSpec) -> ToolRecord:
        """The pending record of a tool its toolset's manifest lists."""
        record = _ListedRecord(tool["name"], None, spec.name, spec.distribution,
                               tool["permissions"], "loaded", module=tool["module"],
                               description=tool["description"], writes=tool["writes"])
        record._registry = self
        if tool["gated"]:
            # Never seen in this state: the registry gates it before handing it out.
            record._gated = True
            record.status, record.reason = "skipped", "should_load() is not asked yet"
            self._unsettled += 1
        else:
            self._judge(record, tool["problem"])
        return record

    def _import_tool(self, record: ToolRecord) -> None:
        """Import the module of pending ``record`` and make its pending records real.

        A module that fails to import is a load error as it would have been at load, and
        its tools are gone; a module found to differ from its manifest (what it defines
        depends on more than its source, which docs/authoring-toolsets.md asks authors to
        say) has its tools gated anew from their classes, what it says at load taken (its
        errors, notes and hooks), the tools it defines now added, and the manifest removed,
        to be made again on the next load.
        """
        with self._lock:
            if record._cls is not None or record._registry is None:
                return
            spec, remembered = self._remembered[record.toolset]
            pending = [r for r in self._records if isinstance(r, _ListedRecord)
                       and r._registry is self and r._cls is None
                       and r.toolset == record.toolset and r.module == record.module]
            output = self.import_output
            try:
                if output is None:
                    module = import_module(record.module)
                else:
                    with contextlib.redirect_stdout(output):
                        module = import_module(record.module)
            except (Exception, SystemExit) as exc:
                self._errors.append(LoadError(
                    spec.name, spec.distribution,
                    f"cannot import {record.module}: {describe_exception(exc)}", "import",
                    record.module,
                ))
                self._drop(pending)
                _manifest.forget(spec, remembered.key)
                return
            classes = {cls.__name__: cls for cls in tool_classes(module)}
            listed: list[dict[str, Any]] = next(
                (tools for name, _, tools in remembered.modules if name == record.module), [])
            stale = (_manifest.eager_module(module)
                     or sorted(classes) != sorted(tool["name"] for tool in listed)
                     or any(self._differs(r, classes[r.name]) for r in pending))
            if stale:
                _manifest.forget(spec, remembered.key)
                self.warnings.append(
                    f"toolset {spec.name!r} ({spec.distribution}): module {record.module} no "
                    "longer defines what janito remembered of it; its tools were gated anew"
                )
                gone = [r for r in pending if r.name not in classes]
                self._drop(gone)
                for stale_record in pending:
                    cls = classes.get(stale_record.name)
                    if cls is not None:
                        self._settle(stale_record, self._gate(cls, spec, _UNKNOWN))
                        stale_record._resolve(cls)
                self._take_modules(spec, [module])
                remembered_names = {tool["name"] for tool in listed}
                self._add_found(spec, [cls for name, cls in classes.items()
                                       if name not in remembered_names])
                return
            known = {tool["name"]: tool for tool in listed}
            for pending_record in pending:
                cls = classes[pending_record.name]
                if pending_record._gated:
                    self._settle(pending_record, self._gate(cls, spec, known[cls.__name__]))
                pending_record._resolve(cls)

    def _add_found(self, spec: ToolsetSpec, classes: list[type]) -> None:
        """Gate and publish tool classes of toolset ``spec`` that its manifest did not list
        (a clash with a tool already here is a load error, as at load)."""
        records: list[ToolRecord] = []
        for cls in classes:
            record = self._gate(cls, spec, _UNKNOWN)
            existing = self._by_name.get(record.name)
            if existing is not None:
                self._errors.append(_clash(spec, record, existing))
                continue
            records.append(record)
        if records:
            self._publish(records, {spec.name: [*self._loaded.get(spec.name, []),
                                                *(r.name for r in records)]})

    @staticmethod
    def _differs(record: ToolRecord, cls: type) -> bool:
        """Whether ``cls`` is not the tool its pending ``record`` remembers."""
        return (getattr(cls, "_tool_permissions", "") != record.permissions
                or _manifest.gated_at_load(cls) != record._gated
                or bool(getattr(cls, "writes_paths", None)) != record._writes
                or describe(cls) != record._description)

    def _settle(self, record: ToolRecord, gated: ToolRecord) -> None:
        """Give pending ``record`` what gating its class found (``gated``)."""
        for field in ("permissions", "status", "reason", "failed", "_description", "_writes"):
            setattr(record, field, getattr(gated, field))
        if record._gated:
            record._gated = False
            self._unsettled -= 1

    def _settle_all(self, toolset: str | None = None) -> None:
        """Gate every pending record still to be gated (of ``toolset``, or of all)."""
        if not self._unsettled:
            return
        with self._lock:
            for record in list(self._records):
                if record._gated and (toolset is None or record.toolset == toolset):
                    self._import_tool(record)

    def _drop(self, records: Sequence[ToolRecord]) -> None:
        """Take pending ``records`` out: their module cannot be imported any more."""
        if not records:
            return
        gone = {id(r) for r in records}
        for record in records:
            record._registry = None
            if record._gated:
                record._gated = False
                self._unsettled -= 1
        self._by_name = {n: r for n, r in self._by_name.items() if id(r) not in gone}
        self._records = [r for r in self._records if id(r) not in gone]
        names = {r.name for r in records}
        self._loaded = {t: [n for n in tools if n not in names] for t, tools in self._loaded.items()}

    def add_tool(self, cls: Any, *, toolset: str = "local", distribution: str = "local") -> ToolRecord:
        """Register one ``@tool`` class (or function) directly, without an entry point.

        It is gated like any discovered tool; a name clash raises ValueError, since the
        caller is code, not an installed distribution.
        """
        self._ensure()
        cls = tool_class(cls)  # a @tool function stands for its class
        spec = ToolsetSpec(toolset, distribution, "0", cls.__module__)
        with self._lock:
            record = self._gate(cls, spec, _UNKNOWN)
            existing = self._by_name.get(record.name)
            if existing is not None:
                raise ValueError(
                    f"a tool called {record.name!r} is loaded already (toolset {existing.toolset!r})"
                )
            self._publish([record], {toolset: [*self._loaded.get(toolset, []), record.name]})
        return record

    def _publish(self, records: list[ToolRecord], loaded: dict[str, list[str]]) -> None:
        """Make ``records`` visible to every thread at once; the caller holds the lock.

        Each container is replaced by a new one rather than changed, and in this order, so
        a reader without the lock that finds a toolset in ``_loaded`` or a name in
        ``_records`` also finds its record in ``_by_name``.
        """
        by_name = dict(self._by_name)
        for record in records:
            by_name[record.name] = record
        self._by_name = by_name
        self._records = [*self._records, *records]
        self._loaded = {**self._loaded, **loaded}

    def _gate(self, cls: type, spec: ToolsetSpec, facts: dict[str, Any]) -> ToolRecord:
        """The record of tool class ``cls``: ``should_load()``, then its annotations (what
        ``facts`` remembers of them, else checked now), then the privileges."""
        permissions = getattr(cls, "_tool_permissions", "")
        record = ToolRecord(cls.__name__, cls, spec.name, spec.distribution, permissions,
                            "loaded", description=facts.get("description"),
                            writes=facts.get("writes"))
        try:
            ok = bool(cls.should_load())  # type: ignore[attr-defined]
        except Exception as exc:
            record.status = "skipped"
            record.reason = f"should_load() raised {describe_exception(exc)}"
            record.failed = True
            return record
        if not ok:
            record.status = "skipped"
            record.reason = getattr(cls, "_load_skip_reason", None) or "should_load() returned False"
            return record
        if "problem" in facts:
            problem = facts["problem"]
        else:
            from .wrapper import check_annotations  # with schema: only loading toolsets needs it

            problem = check_annotations(cls)
        self._judge(record, problem)
        return record

    def _judge(self, record: ToolRecord, problem: str | None) -> None:
        """Mark ``record`` an error for ``problem`` with its annotations, else denied when
        the privileges do not grant its permissions."""
        if problem is not None:
            record.status, record.reason = "error", problem
            record.failed = True
        elif not self._privileges.allows(record.permissions):
            record.status = "denied"
            record.reason = self._privileges.denied_reason(record.permissions)

    # -- lookups ----------------------------------------------------------------------

    def records(self) -> list[ToolRecord]:
        """Every tool found, loaded or not, in load order."""
        self._ensure()
        self._settle_all()
        return list(self._records)

    def record(self, name: str) -> ToolRecord | None:
        """The record of tool ``name`` whatever its status, or None; a pending tool's
        module is imported first (None when it fails to: ``load_errors`` say why)."""
        if not self._initialized:  # every call looks its tool up here: no method call
            self._ensure()
        record = self._by_name.get(name)
        if record is None or record._cls is not None:
            return record
        self._import_tool(record)
        return self._by_name.get(name)

    def get(self, name: str) -> ToolWrapper | None:
        """The callable of a loaded tool, or None."""
        record = self.record(name)
        if record is None or record.status != "loaded":
            return None
        return self.wrapper(record)

    def wrapper(self, record: ToolRecord) -> ToolWrapper:
        if record._wrapper is None:
            from .wrapper import ToolWrapper  # with schema: only loading toolsets needs it

            record._wrapper = ToolWrapper(record.cls, self)
        return record._wrapper

    def names(self) -> list[str]:
        """Names of the loaded tools."""
        return [r.name for r in self.records() if r.status == "loaded"]

    def tools(self) -> dict[str, ToolWrapper]:
        """``{ClassName: callable}`` of every loaded tool (pending ones imported now)."""
        found = {}
        for listed in self.records():
            record = self.record(listed.name) if listed.pending else listed
            if record is not None and record.status == "loaded":
                found[record.name] = self.wrapper(record)
        return found

    def skipped(self) -> dict[str, str]:
        """Tools that did not load, with the reason (``should_load``, annotations, privileges)."""
        return {r.name: r.reason or "" for r in self.records() if r.status != "loaded"}

    @property
    def load_errors(self) -> list[LoadError]:
        self._ensure()
        errors = list(self._errors)
        errors.extend(e for e in self.plugins.errors if e not in errors)
        return errors

    def schema(self, name: str) -> ToolSchema:
        """The canonical schema of loaded tool ``name`` (KeyError if it is not loaded).

        A tool class with a ``refine_schema(schema, registry)`` classmethod gets to adjust
        what this registry offers (a parameter's enum of the values available in its
        workspace, say); it is asked each time, so the answer follows what changed. A
        refinement that fails or returns something else leaves the declared schema.
        """
        from .schema import ToolSchema, tool_schema  # schemas are built on use

        record = self.record(name)
        if record is None or record.status != "loaded":
            raise KeyError(name)
        schema = tool_schema(record.cls)
        refine = getattr(record.cls, "refine_schema", None)
        if callable(refine):
            try:
                refined = refine(schema, self)
            except Exception:
                return schema
            if isinstance(refined, ToolSchema):
                return refined
        return schema

    def toolset_offering(self, name: str) -> ToolsetSpec | None:
        """The installed toolset, allowed here but not loaded, that has tool ``name``; None
        when there is none. Nothing is imported: a toolset has the tool when its package
        holds the module named after it (``ReadEmails`` in ``read_emails.py``, the
        convention of one tool class per module), which is how the tool is found."""
        wanted = name.lower()
        if not wanted.isidentifier():
            return None
        loaded = self._loaded
        for spec in self._discover().toolsets.values():
            if spec.name in loaded or not self.is_allowed(spec.name):
                continue
            if _holds_module_of(spec.module, wanted):
                return spec
        return None

    def failures_behind(self, name: str) -> tuple[LoadError | None, list[LoadError]]:
        """The load failures that may be why no tool ``name`` is loaded here.

        Returns (the failure that certainly is, else None; every failure of the toolsets
        this registry loaded or tried to, that could have cost a tool). A failure is
        certainly the cause when it names the module the tool lives in by the
        one-tool-per-module convention (``ReadEmails`` in ``read_emails.py``): that module
        failed to import, or its package did and holds such a file. Nothing is imported.
        """
        wanted = name.lower()
        loaded = self._loaded
        found = [
            e for e in self.load_errors
            if (e.toolset in loaded and e.kind in ("import", "toolset", "empty"))
            or (e.toolset in loaded and e.kind == "clash" and e.module is None)  # a toolset's name
            or (e.toolset is None and e.kind == "import")  # unreadable entry points
        ]
        if not wanted.isidentifier():
            return None, found
        for error in found:
            if error.kind != "import" or not error.module:
                continue
            if error.module.rsplit(".", 1)[-1].replace("_", "").lower() == wanted:
                return error, [error]
            if _holds_module_of(error.module, wanted):
                return error, [error]
        return None, found

    def get_function_schema(self, name: str, *, strict: bool = False) -> dict[str, Any]:
        """The OpenAI chat-completions function schema of tool ``name``."""
        from .formats import openai_chat  # formats are built on use

        return openai_chat(self.schema(name), strict=strict)

    def get_all_tool_permissions(self) -> dict[str, str]:
        return {r.name: r.permissions for r in self.records() if r.status == "loaded"}

    def get_tool_permissions(self, name: str) -> str | None:
        record = self.record(name)
        return None if record is None else record.permissions

    def __repr__(self) -> str:
        state = counted(len(self._by_name), "tool") if self._initialized else "not loaded yet"
        return f"<Registry {state}, privileges {self._privileges}>"


def _holds_module_of(module: str, wanted: str) -> bool:
    """Whether the package folder of ``module`` holds a public module named after tool
    ``wanted`` (lower case, ``ReadEmails`` in ``read_emails.py``: one tool class per
    module). Nothing is imported."""
    import os

    from .discovery import package_location

    folder = package_location(module)
    try:
        files = os.listdir(folder) if folder and os.path.isdir(folder) else []
    except OSError:
        return False
    return any(f.endswith(".py") and not f.startswith("_")
               and f[:-3].replace("_", "").lower() == wanted for f in files)


_default: Registry | None = None
_default_lock = threading.Lock()


def default_registry() -> Registry:
    """The process-wide registry the module-level functions use."""
    global _default
    registry = _default
    if registry is None:
        with _default_lock:  # two threads asking first must get the same registry
            if _default is None:
                _default = Registry()
            registry = _default
    return registry


def _default_reports() -> PluginHost:
    registry = default_registry()
    # Outside a tool call nothing may have looked for janito.plugins yet; without this,
    # hook plugins would miss every report made before the first tool loads.
    registry._discover()
    return registry.plugins


set_default_reports(_default_reports)


def add_toolset(name: str) -> list[str]:
    return default_registry().add_toolset(name)


def get_function_schema(name: str, *, strict: bool = False) -> dict[str, Any]:
    return default_registry().get_function_schema(name, strict=strict)


def get_all_tool_permissions() -> dict[str, str]:
    return default_registry().get_all_tool_permissions()


def get_tool_permissions(name: str) -> str | None:
    return default_registry().get_tool_permissions(name)
