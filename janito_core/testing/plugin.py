"""The pytest plugin of janito-core (entry point ``pytest11``: ``janito``).

Fixtures:

- ``janito``: a :class:`ToolsetTester` with a temporary workspace; ``janito.load(...)``
  and ``janito.call(...)``.
- ``janito_workspace``: the temporary workspace folder.

Every test using them runs with a private configuration folder and the file secrets
store, so nothing touches the user's keyring or settings.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .tester import ToolsetTester


@pytest.fixture
def janito_isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private JANITO_CONFIG_DIR and keyring-free secrets for one test."""
    config = tmp_path / "janito-config"
    config.mkdir()
    monkeypatch.setenv("JANITO_CONFIG_DIR", str(config))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    monkeypatch.delenv("JANITO_TOOLSETS", raising=False)
    monkeypatch.delenv("JANITO_PLUGINS", raising=False)
    monkeypatch.delenv("JANITO_SANDBOX", raising=False)  # the default policy, unless a test sets one
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


class ConformanceItem(pytest.Item):
    """One conformance check of one toolset, added by ``--janito-toolset NAME``."""

    def __init__(self, *, toolset: str, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.toolset = toolset

    def runtest(self) -> None:
        from .conformance import check_toolset

        check_toolset(self.toolset)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: object = None) -> str:
        return str(excinfo.value)

    def reportinfo(self) -> tuple[str, int, str]:
        return self.toolset, 0, f"janito conformance: {self.toolset}"


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    for name in config.getoption("--janito-toolset") or []:
        items.append(ConformanceItem.from_parent(session, name=f"janito-conformance[{name}]",
                                                 toolset=name))
