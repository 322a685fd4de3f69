"""The plugin manager: pluggy, created only when a hook has somewhere to go.

Hook implementations come from ``janito.plugins`` entry points, from toolset packages
that define hooks, and from janito itself (the stderr report renderer and the tool
runner are plugins on the same hooks). A plugin that fails to load, names a hook that
does not exist, or raises inside a hook is recorded as a LoadError naming its
distribution; janito goes on without it.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import TYPE_CHECKING, Any

from ._marker import MARK
from .discovery import LoadError, PluginSpec, describe_exception, import_module
from .errors import PluginValidationError
from .reporter import ReportEvent, render

if TYPE_CHECKING:
    import pluggy

    from .dispatch import ToolCall

PROJECT = "janito"
#: The names of the hook specifications in hookspecs.py (kept here so that checking a
#: plugin's marks needs no pluggy import; a test keeps the two in step).
HOOK_NAMES = frozenset(
    {"janito_report", "janito_tool_call", "janito_register_commands", "janito_toolset_loaded"}
)
STDERR_PLUGIN = "janito.stderr"
RUNNER_PLUGIN = "janito.runner"


#: Where a registry's progress reports go (``Registry(reports=...)``).
REPORT_DESTINATIONS = ("stderr", "logging", "off")
#: The logger reports go to with ``reports="logging"``; each tool's is its child
#: (``janito.reports.ReadFile``).
REPORT_LOGGER = "janito.reports"
_LEVELS = {"error": 40, "warning": 30}  # logging.ERROR, logging.WARNING; the rest INFO (20)


def log_report(event: ReportEvent) -> None:
    """``event`` as one record of logger ``janito.reports.TOOL``: errors at ERROR, warnings
    at WARNING, the rest at INFO; the tool and the kind ride along as ``janito_tool`` and
    ``janito_kind``. A blank piece of a line that is not finished yet is no record."""
    import logging

    text = event.message.strip()
    if not text:
        return
    name = f"{REPORT_LOGGER}.{event.tool}" if event.tool else REPORT_LOGGER
    logging.getLogger(name).log(_LEVELS.get(event.kind, 20), "%s", text,
                                extra={"janito_tool": event.tool, "janito_kind": event.kind})


class StderrReporter:
    """Renders every report where its registry sends them: stderr (the default), logging,
    or nowhere."""

    def __init__(self, host: PluginHost | None = None) -> None:
        self.host = host

    def janito_report(self, event: ReportEvent) -> None:
        if self.host is None:
            render(event, sys.stderr)
        else:
            self.host.deliver(event)


class ToolRunner:
    """Runs the tool itself: the last implementation of ``janito_tool_call``."""

    def janito_tool_call(self, call: ToolCall) -> dict[str, Any] | None:
        return call.run()


def _builtin_marks() -> None:
    StderrReporter.janito_report.janito_impl = {  # type: ignore[attr-defined]
        "wrapper": False, "hookwrapper": False, "optionalhook": False,
        "tryfirst": False, "trylast": True, "specname": None,
    }
    ToolRunner.janito_tool_call.janito_impl = {  # type: ignore[attr-defined]
        "wrapper": False, "hookwrapper": False, "optionalhook": False,
        "tryfirst": False, "trylast": True, "specname": None,
    }


_builtin_marks()


def allowed_names(variable: str) -> set[str] | None:
    """Names listed in a comma-separated environment variable; None when it is unset."""
    raw = os.environ.get(variable)
    if raw is None:
        return None
    return {part.strip() for part in raw.split(",") if part.strip()}


class PluginHost:
    """A registry's hooks: the pluggy manager and what it knows about each plugin.

    Safe to share between threads: the manager is created once, and published only when
    every entry-point plugin is registered on it, so no call can run before a plugin that
    would refuse it is in place. Registering happens under a lock; calling hooks does not
    lock (pluggy calls a copy of the implementation list, so a call sees the plugins
    registered before it or after it, never a mix).
    """

    def __init__(self, specs: list[PluginSpec] | None = None) -> None:
        self._specs = specs
        self._manager: pluggy.PluginManager | None = None
        # Re-entrant: importing a plugin runs its code, which may use the registry again.
        self._lock = threading.RLock()
        self._creating: pluggy.PluginManager | None = None
        self._imported: dict[str, tuple[PluginSpec, object]] = {}
        self._wanted: dict[str, bool] = {}
        #: Known that nothing but the built-in runner implements janito_tool_call: no
        #: manager yet, and no entry-point plugin marks the hook. What dispatch's short way
        #: reads on every call; cleared when either can have changed.
        self._plain_calls = False
        self.errors: list[LoadError] = []
        self.owners: dict[str, tuple[str, str | None]] = {}
        #: Where janito's own renderer sends reports: one of REPORT_DESTINATIONS.
        self.reports = "stderr"

    def set_specs(self, specs: list[PluginSpec]) -> None:
        """The ``janito.plugins`` entry points; registered now if the manager exists already."""
        with self._lock:
            self._specs = specs
            self._wanted.clear()
            self._plain_calls = False
            if self._manager is not None:
                self._register_imported()

    @property
    def active(self) -> bool:
        return self._manager is not None

    @property
    def manager(self) -> pluggy.PluginManager:
        manager = self._manager
        if manager is not None:
            return manager
        with self._lock:
            if self._manager is not None:
                return self._manager
            if self._creating is not None:
                return self._creating  # asked again while this thread sets it up
            try:
                self._creating = self._create()
                self._manager = self._creating
                self._plain_calls = False
            finally:
                self._creating = None
            return self._manager

    def _create(self) -> pluggy.PluginManager:
        # Imported when a hook plugin is first called: pluggy costs start-up (decision 0001).
        import pluggy

        from . import hookspecs

        class Manager(pluggy.PluginManager):
            def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
                method = getattr(plugin, name, None)
                options = getattr(method, MARK, None) if callable(method) else None
                if isinstance(options, dict):
                    return options
                return super().parse_hookimpl_opts(plugin, name)

        manager = Manager(PROJECT)
        manager.add_hookspecs(hookspecs)
        manager.register(StderrReporter(self), name=STDERR_PLUGIN)
        manager.register(ToolRunner(), name=RUNNER_PLUGIN)
        self._creating = manager
        self.owners[STDERR_PLUGIN] = ("janito.stderr", "janito-core")
        self.owners[RUNNER_PLUGIN] = ("janito.runner", "janito-core")
        self._register_imported()
        return manager

    def _import_specs(self) -> dict[str, tuple[PluginSpec, object]]:
        """Import the allowed entry-point plugins (without pluggy), once each."""
        allowed = allowed_names("JANITO_PLUGINS")
        for spec in self._specs or []:
            name = f"{spec.distribution}:{spec.name}"
            if name in self._imported or (allowed is not None and spec.name not in allowed):
                continue
            module_name, _, attribute = spec.value.partition(":")
            try:
                plugin: Any = import_module(module_name.strip())
                for part in filter(None, attribute.strip().split(".")):
                    plugin = getattr(plugin, part)
            except (Exception, SystemExit) as exc:
                self._imported[name] = (spec, None)
                self.errors.append(LoadError(
                    None, spec.distribution,
                    f"plugin {spec.name!r} cannot be loaded: {describe_exception(exc)}", "plugin",
                    module_name,
                ))
                continue
            unknown = _unknown_hooks(plugin)
            if unknown:
                self._imported[name] = (spec, None)
                self.errors.append(LoadError(
                    None, spec.distribution,
                    f"plugin {name!r} implements an unknown hook: {', '.join(unknown)} "
                    f"(janito's hooks: {', '.join(sorted(HOOK_NAMES))})", "plugin", module_name,
                ))
                continue
            self._imported[name] = (spec, plugin)
        return self._imported

    def _register_imported(self) -> None:
        manager = self.manager
        for name, (spec, plugin) in list(self._import_specs().items()):
            if plugin is not None and manager.get_plugin(name) is None:
                self.register(plugin, name, spec.distribution)

    def wants(self, hook: str) -> bool:
        """Whether any plugin implements ``hook``; before the manager exists this reads the
        marks of the entry-point plugins, so a hook nobody implements never imports pluggy."""
        if self._manager is not None:
            return True
        known = self._wanted.get(hook)
        if known is None:
            with self._lock:
                known = any(
                    plugin is not None and _implements(plugin, hook)
                    for _, plugin in list(self._import_specs().values())
                )
                self._wanted[hook] = known
        return known

    def register(self, plugin: object, name: str, distribution: str | None,
                 toolset: str | None = None) -> LoadError | None:
        """Register ``plugin``; a hook it implements that janito lacks is an error, not silence."""
        with self._lock:
            return self._register(plugin, name, distribution, toolset)

    def _register(self, plugin: object, name: str, distribution: str | None,
                  toolset: str | None) -> LoadError | None:
        manager = self.manager
        if manager.get_plugin(name) is not None:
            return None
        try:
            manager.register(plugin, name=name)
        except Exception as exc:
            error = LoadError(toolset, distribution,
                              f"plugin {name!r} was refused: {describe_exception(exc)}", "plugin")
            self.errors.append(error)
            return error
        try:
            manager.check_pending()
        except Exception as exc:
            manager.unregister(name=name)
            error = LoadError(toolset, distribution,
                              f"plugin {name!r} implements an unknown hook: {exc}", "plugin")
            self.errors.append(error)
            return error
        self.owners[name] = (name, distribution)
        self._keep_runner_last()
        return None

    def _keep_runner_last(self) -> None:
        """Re-register the tool runner so it stays after every other ``trylast`` implementation.

        pluggy calls the most recently registered ``trylast`` implementation last; the runner
        answers every call, so anything ordered after it would never run. A stand-in runner
        is registered before the runner leaves, and leaves after it is back, so a call made
        meanwhile on another thread still finds one.
        """
        manager = self.manager
        runner = manager.get_plugin(RUNNER_PLUGIN)
        if runner is not None:
            stand_in = RUNNER_PLUGIN + ".stand-in"
            manager.register(ToolRunner(), name=stand_in)
            manager.unregister(name=RUNNER_PLUGIN)
            manager.register(runner, name=RUNNER_PLUGIN)
            manager.unregister(name=stand_in)

    def blame(self, exc: BaseException, hook_name: str) -> LoadError:
        """The plugin whose implementation raised ``exc``, as an error naming it."""
        manager = self.manager
        codes = set()
        tb = exc.__traceback__
        while tb is not None:
            codes.add(tb.tb_frame.f_code)
            tb = tb.tb_next
        culprit = None
        for impl in getattr(manager.hook, hook_name).get_hookimpls():
            if getattr(impl.function, "__code__", None) in codes:
                culprit = impl.plugin_name
        distribution = self.owners.get(culprit or "", (None, None))[1]
        who = f"plugin {culprit!r}" if culprit else "a plugin"
        error = LoadError(None, distribution,
                          f"{who} raised in {hook_name}: {describe_exception(exc)}", "hook")
        with self._lock:  # one entry per fault, however many threads hit it at once
            if all(e.reason != error.reason for e in self.errors):
                self.errors.append(error)
        return error

    def report(self, event: ReportEvent) -> None:
        if self._manager is None and not self.wants("janito_report"):
            self.deliver(event)
            return
        try:
            self.manager.hook.janito_report(event=event)
        except Exception as exc:
            self.blame(exc, "janito_report")
            self.deliver(event)

    def deliver(self, event: ReportEvent) -> None:
        """janito's own rendering of ``event``: on stderr, to logging, or nowhere."""
        if self.reports == "stderr":
            render(event, sys.stderr)
        elif self.reports == "logging":
            log_report(event)

    def call_hooks_present(self) -> bool:
        """Whether anything besides the built-in runner implements ``janito_tool_call``."""
        if self._plain_calls:  # every call of every tool asks this question
            return False
        if self._manager is None:
            if not self.wants("janito_tool_call"):
                with self._lock:  # not if set_specs or a manager came since wants()
                    self._plain_calls = (self._manager is None
                                         and self._wanted.get("janito_tool_call") is False)
                return False
            self.manager  # noqa: B018  (registers the entry-point plugins)
        assert self._manager is not None
        return len(self._manager.hook.janito_tool_call.get_hookimpls()) > 1

    def toolset_loaded(self, registry: Any, toolset: str, tools: list[str]) -> None:
        if self._manager is None and not self.wants("janito_toolset_loaded"):
            return
        try:
            self.manager.hook.janito_toolset_loaded(registry=registry, toolset=toolset, tools=tools)
        except Exception as exc:
            self.blame(exc, "janito_toolset_loaded")

    def register_commands(self, subparsers: Any) -> None:
        """Let every plugin add its subcommands; one that raises does not stop the others."""
        hook = self.manager.hook.janito_register_commands
        subparsers = _CommandNames(subparsers)
        impls = hook.get_hookimpls()
        if any(impl.wrapper or impl.hookwrapper for impl in impls):
            try:  # wrappers need pluggy's own calling: one call for all of them
                hook(subparsers=subparsers)
            except Exception as exc:
                self.blame(exc, "janito_register_commands")
            return
        for impl in reversed(impls):  # the order pluggy would call them in
            try:
                impl.function(*[subparsers for _ in impl.argnames])
            except Exception as exc:
                self.blame(exc, "janito_register_commands")

    def names(self) -> list[tuple[str, str | None]]:
        """(plugin name, distribution) of every registered plugin."""
        manager = self.manager
        return sorted(
            (name, self.owners.get(name, (name, None))[1])
            for name, _ in manager.list_name_plugin()
        )


class _CommandNames:
    """The ``subparsers`` a plugin receives, refusing a command name already taken.

    argparse before 3.11 lets a second ``add_parser("tools")`` replace the first without
    a word, so a plugin could quietly take over a built-in command on one interpreter and
    fail on another; here it fails the same way everywhere, naming the command.
    """

    def __init__(self, subparsers: Any) -> None:
        self._subparsers = subparsers

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        taken = self._subparsers.choices
        for wanted in (name, *kwargs.get("aliases", ())):
            if wanted in taken:
                raise PluginValidationError(f"the command {wanted!r} is taken already")
        return self._subparsers.add_parser(name, **kwargs)

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._subparsers, attribute)


def _implements(plugin: object, hook: str) -> bool:
    """Whether ``plugin`` has an implementation of ``hook`` marked for janito."""
    for attribute in dir(plugin):
        value = getattr(plugin, attribute, None)
        options = getattr(value, MARK, None) if callable(value) else None
        if isinstance(options, dict) and (options.get("specname") or attribute) == hook:
            return True
    return False


def _unknown_hooks(plugin: object) -> list[str]:
    """Marked implementations of ``plugin`` that name no janito hook (and are not optional)."""
    unknown = []
    for attribute in dir(plugin):
        value = getattr(plugin, attribute, None)
        options = getattr(value, MARK, None) if callable(value) else None
        if isinstance(options, dict) and not options.get("optionalhook"):
            hook = options.get("specname") or attribute
            if hook not in HOOK_NAMES:
                unknown.append(hook)
    return sorted(unknown)
