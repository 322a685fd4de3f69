"""The pytest plugin of janito-core (entry point ``pytest11``: ``janito``).

Fixtures:

- ``janito``: a :class:`ToolsetTester` with a temporary workspace; ``janito.load(...)``,
  ``janito.add(...)``, ``janito.call(...)`` and ``janito.check(...)``. Every answer
  ``janito.call`` gets is held to the result type its tool declares; a test that means to
  see one that breaks it sets ``janito.check_results = False``.
- ``janito_workspace``: the temporary workspace folder.
- ``janito_isolated``: a private configuration folder and no keyring.

Every test using them runs with a private configuration folder and the file secrets
store, so nothing touches the user's keyring or settings.

Options: ``--janito-toolset NAME`` adds the conformance check of toolset NAME as a test
item (repeatable), run with a private configuration as well; ``--janito-examples``,
``--janito-call-budget`` and ``--janito-seed`` tune it. What a passing check did not
exercise, and its notes, are listed in the terminal summary.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .tester import ToolsetTester

if TYPE_CHECKING:
    from .conformance import Report

_REPORTS: pytest.StashKey[list[Report]] = pytest.StashKey()
_ISOLATION = {
    "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
    "JANITO_TOOLSETS": None,
    "JANITO_PLUGINS": None,
    "JANITO_PRIVATE_NETWORK": None,
    "JANITO_SANDBOX": None,  # the default policy, unless a test sets one
}


@pytest.fixture
def janito_isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private JANITO_CONFIG_DIR, keyring-free secrets and the local defaults for one test."""
    config = tmp_path / "janito-config"
    config.mkdir()
    monkeypatch.setenv("JANITO_CONFIG_DIR", str(config))
    for name, value in _ISOLATION.items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    return config


@pytest.fixture
def janito_workspace(tmp_path: Path, janito_isolated: Path) -> Path:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    return workspace


@pytest.fixture
def janito(janito_workspace: Path) -> Iterator[ToolsetTester]:
    yield ToolsetTester(janito_workspace)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("janito")
    group.addoption("--janito-toolset", action="append", default=[], metavar="NAME",
                    help="run janito's conformance check on toolset NAME (repeatable)")
    group.addoption("--janito-examples", type=int, default=25, metavar="N",
                    help="generated calls that must reach run(), per tool (default 25)")
    group.addoption("--janito-call-budget", type=float, default=None, metavar="SECONDS",
                    help="seconds one call of the conformance check may take (default 5)")
    group.addoption("--janito-seed", type=int, default=None, metavar="N",
                    help="the conformance check's hypothesis seed, to repeat a run")


@contextmanager
def _isolated() -> Iterator[None]:
    """What ``janito_isolated`` does, for an item that has no fixtures."""
    saved = {key: os.environ.get(key) for key in ["JANITO_CONFIG_DIR", *_ISOLATION]}
    with tempfile.TemporaryDirectory(prefix="janito-config-") as config:
        os.environ["JANITO_CONFIG_DIR"] = config
        for key, value in _ISOLATION.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        try:
            yield
        finally:
            for key, old in saved.items():
                if old is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = old


class ConformanceChecks(pytest.Collector):
    """The conformance checks ``--janito-toolset`` asked for: one item per toolset."""

    def __init__(self, *, toolsets: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.toolsets = toolsets

    def collect(self) -> list[pytest.Item]:
        return [ConformanceItem.from_parent(self, name=name, toolset=name)
                for name in self.toolsets]


class ConformanceItem(pytest.Item):
    """One conformance check of one toolset, added by ``--janito-toolset NAME``."""

    def __init__(self, *, toolset: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.toolset = toolset

    def runtest(self) -> None:
        from .conformance import DEFAULT_CALL_BUDGET, check_toolset

        config = self.config
        budget = config.getoption("--janito-call-budget")
        with _isolated():
            report = check_toolset(
                self.toolset,
                max_examples=config.getoption("--janito-examples"),
                call_budget=DEFAULT_CALL_BUDGET if budget is None else budget,
                seed=config.getoption("--janito-seed"),
            )
        config.stash.setdefault(_REPORTS, []).append(report)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str:
        from .conformance import ConformanceError

        if isinstance(excinfo.value, ConformanceError):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[str, int, str]:
        return self.toolset, 0, f"janito conformance: {self.toolset}"


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    toolsets = config.getoption("--janito-toolset") or []
    if not toolsets:
        return
    checks = ConformanceChecks.from_parent(session, name="janito-conformance", toolsets=toolsets)
    found = checks.collect()
    # reported as any collector's result, so "collected N items" counts them too
    config.hook.pytest_collectreport(
        report=pytest.CollectReport(checks.nodeid, "passed", None, list(found)))
    items.extend(found)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    reports = config.stash.get(_REPORTS, [])
    remarks = [r for r in reports if r.not_exercised or r.notes]
    if not remarks:
        return
    terminalreporter.section("janito conformance")
    for report in remarks:
        terminalreporter.write_line(f"toolset {report.toolset!r} (seed {report.seed}):")
        for name, why in report.not_exercised.items():
            terminalreporter.write_line(f"  not exercised: {name}: {why}")
        for note in report.notes:
            terminalreporter.write_line(f"  note: {note.tool or 'toolset'}: {note.problem}")
