"""The mounted MCP servers of this process: started once, when the ``mcp`` toolset loads.

Reading the configuration, starting every server (all at once, each on its own event
loop thread) and listing their tools happens on the first import of the toolset's
modules; the tool classes and the problems (servers that failed to start, broken
entries) are kept here and shared by every registry of the process. The servers are
stopped when the interpreter exits.
"""

from __future__ import annotations

import atexit
import sys
import threading
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import __version__
from ._config import ConfigError, config_path, load_config

if TYPE_CHECKING:
    from ._client import RemoteServer

TOOLS_MODULE = "janito_mcp.mount.servers"
MODULES = (TOOLS_MODULE,)


@dataclass
class Mounted:
    """What mounting found: the running servers, their tool classes, what went wrong."""

    path: Path
    servers: dict[str, RemoteServer] = field(default_factory=dict)
    classes: list[type] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """One line per server that could not be mounted (or problem of the file), each its own load error."""
    notes: list[str] = field(default_factory=list)
    """What is worth saying but went not wrong: nothing is configured to mount."""
    by_server: dict[str, dict[str, type]] = field(default_factory=dict)
    """Per server, its tool classes by the server's own tool names."""
    registries: weakref.WeakSet[Any] = field(default_factory=weakref.WeakSet)
    """The registries that loaded the ``mcp`` toolset: new tools of a server are added there."""


_lock = threading.Lock()
_mounted: Mounted | None = None
_atexit_registered = False


def mounted() -> Mounted:
    """The servers of this process, mounted on first use."""
    global _mounted, _atexit_registered
    with _lock:
        if _mounted is None:
            if not _atexit_registered:
                atexit.register(shutdown)
                _atexit_registered = True
            _mounted = _mount()
        return _mounted


def _mount() -> Mounted:
    from ._client import RemoteServer, StartError, depth
    from ._config import MAX_DEPTH
    from ._remote import local_name, make_tool_class

    path = config_path()
    state = Mounted(path)
    if depth() >= MAX_DEPTH:
        state.problems.append(
            f"not mounting the servers of {path}: this janito runs {depth()} levels deep in "
            "janito processes mounting one another (does a server of the file mount itself?)"
        )
        return state
    try:
        config = load_config(path)
    except ConfigError as exc:
        state.problems.append(str(exc))
        return state
    if not config.exists:
        state.notes.append(
            f"no MCP servers are configured: create {path} or point JANITO_MCP_CONFIG at one"
        )
    elif not config.servers and not config.errors:
        state.notes.append(f"{path} lists no MCP servers")
    for name, reason in config.errors.items():
        state.problems.append(f"MCP server {name!r} in {path} is misconfigured: {reason}")
    remotes = [RemoteServer(server, __version__) for server in config.servers]
    pending = [(remote, remote.begin_start()) for remote in remotes]
    for remote, future in pending:
        try:
            remote.finish_start(future)
        except StartError as exc:
            state.problems.append(
                f"MCP server {remote.name!r} ({remote.config.target}) failed to start: {exc}"
            )
            remote.close()
            continue
        state.servers[remote.name] = remote
    for remote in state.servers.values():
        taken: set[str] = set()
        classes = state.by_server.setdefault(remote.name, {})
        for definition in remote.tools:
            name = local_name(remote.name, str(definition.name), taken)
            cls = make_tool_class(remote, definition, name, TOOLS_MODULE)
            classes[str(definition.name)] = cls
            state.classes.append(cls)
        remote.on_tools_changed.append(lambda server, state=state: _tools_changed(state, server))
    if state.servers and not state.classes:
        # A server may offer only resources or prompts: no tool is no fault of the toolset's.
        state.notes.append(f"the MCP servers of {path} offer no tools "
                           f"({', '.join(sorted(state.servers))})")
    return state


def watch(registry: Any) -> None:
    """Add new tools of the mounted servers to ``registry`` when their lists change."""
    with _lock:
        if _mounted is not None:
            _mounted.registries.add(registry)


def _tools_changed(state: Mounted, remote: RemoteServer) -> None:
    """A server sent ``notifications/tools/list_changed`` and its new list arrived.

    A tool still offered gets its new description and schemas; one no longer offered
    answers every call with ``unknown_tool``; a new one gets a class, published in the
    toolset's module and added to every registry that loaded the toolset.
    """
    from ._remote import describe_tool, local_name, make_tool_class

    added: list[type] = []
    with _lock:
        classes = state.by_server.setdefault(remote.name, {})
        offered = {str(d.name): d for d in remote.tools}
        for remote_name, cls in classes.items():
            definition = offered.get(remote_name)
            cls.mcp_removed = definition is None  # type: ignore[attr-defined]
            if definition is not None:
                describe_tool(cls, remote, definition)
        taken = {cls.__name__ for cls in classes.values()}
        for remote_name, definition in offered.items():
            if remote_name in classes:
                continue
            name = local_name(remote.name, remote_name, taken)
            cls = make_tool_class(remote, definition, name, TOOLS_MODULE)
            classes[remote_name] = cls
            state.classes.append(cls)
            added.append(cls)
        registries = list(state.registries)
    module = sys.modules.get(TOOLS_MODULE)
    for cls in added:
        if module is not None:
            setattr(module, cls.__name__, cls)
        for registry in registries:
            try:
                registry.add_tool(cls, toolset="mcp", distribution="janito-mcp")
            except Exception:
                pass  # a name taken meanwhile: that registry keeps what it has


def shutdown() -> None:
    """Stop every mounted server (the interpreter does this at exit)."""
    global _mounted
    with _lock:
        state, _mounted = _mounted, None
    if state is None:
        return
    threads = [threading.Thread(target=remote.close, daemon=True) for remote in state.servers.values()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)


def reset() -> None:
    """Stop the servers and forget the toolset's modules, so the next load reads the config again."""
    shutdown()
    for name in MODULES:
        sys.modules.pop(name, None)
