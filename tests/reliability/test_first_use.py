"""First use from many threads: a fresh Registry that several threads use at the same moment.

An MCP server runs calls in worker threads, so the first calls of a session can reach a
registry that has not loaded anything yet. Each round builds a new registry over the real
files and system distributions plus ``acme-slow`` (a toolset whose import and
``should_load`` are slow, so every thread arrives while the load is under way; see
``helpers/first_use.py``), and 8 threads start together on a barrier, each using it in a
different way: ``call_tool``, ``execute_tool_calls``, ``names``, ``tools``, ``record``,
``get_function_schema``, ``add_toolset``, ``loaded_toolsets``. Every thread must see every
tool; the toolset must be imported, gated and announced once; nothing may be reported as a
load error.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import rel_support as rel
from helpers.first_use import (
    SLOW_TOOLS,
    first_use_rounds,
    forget_slow_toolset,
    write_guard_plugin,
    write_slow_toolset,
)

from janito_core import Registry

ROUNDS = int(os.environ.get("JANITO_RELIABILITY_FIRST_USE_ROUNDS", "20"))
THREADS = 8


@pytest.fixture
def slow_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    import sys

    site = tmp_path / "slow-site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    yield site
    forget_slow_toolset()
    sys.modules.pop("acme_slow_counter", None)


def real_tools() -> list[str]:
    """What files and system make available here, loaded once in the usual way."""
    return Registry(autoload=("files", "system"), allowed=None).names()


def record(kind: str, problems: list[str]) -> None:
    rel.count(f"first use: rounds ({kind})", ROUNDS)
    rel.count("first use: threads started", ROUNDS * THREADS)
    rel.count("first use: failures", len(problems))


def test_first_use_of_the_autoload_toolsets(slow_site: Path, tmp_path: Path) -> None:
    write_slow_toolset(slow_site)
    expected = [*real_tools(), *SLOW_TOOLS]
    assert {"ReadFile", "RunBashCode"} <= set(expected)
    problems = first_use_rounds(
        lambda: rel.watch(Registry(autoload=("files", "system", "slow"), allowed=None)),
        rounds=ROUNDS, threads=THREADS, expected=expected)
    record("autoload", problems)
    assert problems == []


def test_add_toolset_from_many_threads(slow_site: Path) -> None:
    write_slow_toolset(slow_site)
    problems = first_use_rounds(
        lambda: rel.watch(Registry(autoload=("files", "system"), allowed=None)),
        rounds=ROUNDS, threads=THREADS, only_add=True)
    record("add_toolset", problems)
    assert problems == []


def test_an_installed_call_hook_plugin_sees_every_first_call(slow_site: Path) -> None:
    """The plugin manager is created by the first call that needs it; a call on another
    thread must not run before the installed plugins are registered on it."""
    write_slow_toolset(slow_site, hooks=False)
    write_guard_plugin(slow_site)
    problems = first_use_rounds(
        lambda: Registry(autoload=("files", "system", "slow"), allowed=None),
        rounds=ROUNDS, threads=THREADS, guarded=True)
    record("call hook plugin", problems)
    assert problems == []
