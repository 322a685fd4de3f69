"""Many threads using one fresh Registry at the same moment, as an MCP server's workers do.

``write_slow_toolset`` installs a distribution (``acme-slow``, toolset ``slow``) whose
package sleeps while it is imported and whose tools sleep in ``should_load``, so a load
takes long enough for every thread to arrive while it is under way. What it did is kept in
``acme_slow_counter``, a module outside the package that survives the package being
imported again. ``first_use_rounds`` starts the threads together on a barrier, each using
the registry in a different way, and returns what went wrong, round by round.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from helpers.distributions import write_distribution

SLOW_TOOLS = ("SlowAlpha", "SlowBeta", "SlowGamma")

_INIT = '''
import sys
import time

import acme_slow_counter
from janito_core import hookimpl

time.sleep({import_seconds})
acme_slow_counter.IMPORTS.append(1)
'''

_HOOK = '''

@hookimpl
def janito_toolset_loaded(registry, toolset, tools):
    if toolset == "slow":
        acme_slow_counter.LOADED.append((id(registry), tuple(tools)))
'''

_TOOL = '''
import time

import acme_slow_counter
from janito_core import BaseTool, tool


@tool(permissions="r")
class {name}(BaseTool):
    """Answer {name}, after a slow check that it can load."""

    @classmethod
    def should_load(cls) -> bool:
        acme_slow_counter.GATES.append("{name}")
        time.sleep({gate_seconds})
        return True

    def run(self, text: str = "") -> dict:
        """Answer with the text.

        Args:
            text: Anything.
        """
        return {{"success": True, "tool": "{name}", "text": text}}
'''


def write_slow_toolset(root: Path, *, import_seconds: float = 0.05,
                       gate_seconds: float = 0.005, hooks: bool = True) -> Path:
    """``hooks``: the package implements ``janito_toolset_loaded`` (which makes loading it
    create the registry's plugin manager); without, nothing does until a call needs it."""
    files = {
        "acme_slow_counter.py": f"IMPORTS = []\nGATES = []\nLOADED = []\nHOOKED = {hooks}\n",
        "acme_slow/__init__.py": _INIT.format(import_seconds=import_seconds) + (_HOOK if hooks else ""),
    }
    for name in SLOW_TOOLS:
        files[f"acme_slow/{name.lower()}.py"] = _TOOL.format(name=name, gate_seconds=gate_seconds)
    return write_distribution(root, "acme-slow", "1.0", toolsets={"slow": "acme_slow"}, files=files)


_GUARD = '''
import time

from janito_core import hookimpl

time.sleep({import_seconds})


@hookimpl(tryfirst=True)
def janito_tool_call(call):
    if call.name in {tools!r}:
        return {{"success": True, "tool": call.name, "guarded": True}}
    return None
'''


def write_guard_plugin(root: Path, *, import_seconds: float = 0.02) -> Path:
    """A ``janito.plugins`` distribution (``acme-guard``) answering every call of a slow
    tool itself: a call that reaches the tool instead went past a plugin that was installed."""
    files = {"acme_guard.py": _GUARD.format(import_seconds=import_seconds, tools=SLOW_TOOLS)}
    return write_distribution(root, "acme-guard", "1.0", plugins={"guard": "acme_guard"}, files=files)


def forget_slow_toolset() -> None:
    """Drop the package from ``sys.modules`` so the next load imports it, slowly, again."""
    for name in [m for m in sys.modules
                 if m in ("acme_slow", "acme_guard") or m.startswith("acme_slow.")]:
        del sys.modules[name]


def counter() -> Any:
    import acme_slow_counter  # type: ignore[import-not-found]

    return acme_slow_counter


def _uses(registry: Any, expected: Sequence[str], guarded: bool) -> list[Callable[[], str | None]]:
    """One way of touching the registry per thread; each returns a problem or None."""
    from janito_core.dispatch import call_tool, execute_tool_calls

    everything = set(expected)
    slow = set(SLOW_TOOLS)

    def answered(result: dict[str, Any], tool: str) -> bool:
        return result.get("tool") == tool and result.get("guarded", False) is guarded

    def call() -> str | None:
        result = call_tool("SlowAlpha", {"text": "hi"}, registry=registry)
        return None if answered(result, "SlowAlpha") else f"call_tool: {result}"

    def names() -> str | None:
        missing = everything - set(registry.names())
        return f"names() lacks {sorted(missing)}" if missing else None

    def schema() -> str | None:
        try:
            registry.get_function_schema("SlowBeta")
        except KeyError:
            return "get_function_schema: KeyError"
        return None

    def add() -> str | None:
        tools = registry.add_toolset("slow")
        return None if set(tools) == slow else f"add_toolset returned {tools}"

    def loaded() -> str | None:
        got = registry.loaded_toolsets().get("slow")
        return None if got is not None and set(got) == slow else f"loaded_toolsets: {got}"

    def record() -> str | None:
        found = registry.record("SlowGamma")
        return None if found is not None and found.status == "loaded" else f"record: {found}"

    def turn() -> str | None:
        (item,) = execute_tool_calls([{"id": "c1", "type": "function", "function": {
            "name": "SlowBeta", "arguments": '{"text": "x"}'}}], registry=registry)
        result = json.loads(item["content"])
        return None if answered(result, "SlowBeta") else f"execute_tool_calls: {item}"

    def tools() -> str | None:
        missing = everything - set(registry.tools())
        return f"tools() lacks {sorted(missing)}" if missing else None

    return [call, names, schema, add, loaded, record, turn, tools]


def first_use_rounds(make_registry: Callable[[], Any], *, rounds: int, threads: int,
                     expected: Sequence[str] = SLOW_TOOLS,
                     only_add: bool = False, guarded: bool = False) -> list[str]:
    """Run ``rounds`` rounds; in each, ``threads`` threads use one new registry at once.

    ``only_add``: every thread starts with ``add_toolset("slow")`` (the registry does not
    autoload it), then calls a tool. ``guarded``: acme-guard is installed, so every call
    must come back answered by it. Returns the problems seen, each naming its round.
    """
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # threads change hands often, so races show up
    try:
        return _rounds(make_registry, rounds, threads, expected, only_add, guarded)
    finally:
        sys.setswitchinterval(interval)


def _rounds(make_registry: Callable[[], Any], rounds: int, threads: int, expected: Sequence[str],
            only_add: bool, guarded: bool) -> list[str]:
    problems: list[str] = []
    for round_number in range(rounds):
        forget_slow_toolset()
        seen = counter()
        before = (len(seen.IMPORTS), len(seen.GATES), len(seen.LOADED))
        registry = make_registry()
        outcomes = _one_round(_uses(registry, expected, guarded), threads, only_add)
        problems.extend(f"round {round_number}, thread {index}: {outcome}"
                        for index, outcome in enumerate(outcomes) if outcome is not None)
        imports, gates, hooks = (len(seen.IMPORTS) - before[0], len(seen.GATES) - before[1],
                                 len(seen.LOADED) - before[2])
        expected_hooks = 1 if seen.HOOKED else 0
        if (imports, gates, hooks) != (1, len(SLOW_TOOLS), expected_hooks):
            problems.append(f"round {round_number}: {imports} imports, {gates} should_load calls, "
                            f"{hooks} toolset_loaded hooks (expected 1, {len(SLOW_TOOLS)}, "
                            f"{expected_hooks})")
        errors = [e.reason for e in registry.load_errors]
        if errors:
            problems.append(f"round {round_number}: load errors {errors}")
    return problems


def _one_round(uses: list[Callable[[], str | None]], threads: int, only_add: bool) -> list[str | None]:
    """Start ``threads`` threads together; each one's problem, or None."""
    barrier = threading.Barrier(threads)
    outcomes: list[str | None] = [None] * threads

    def work(index: int) -> None:
        try:
            barrier.wait()
            if only_add:
                outcomes[index] = uses[3]() or uses[0]()
            else:
                outcomes[index] = uses[index % len(uses)]()
        except BaseException as exc:  # a thread's failure must be seen, whatever it is
            outcomes[index] = f"raised {type(exc).__name__}: {exc}"

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for index, worker in enumerate(workers):
        worker.join(60)
        if worker.is_alive():
            outcomes[index] = "still running after 60 s"
    return outcomes
