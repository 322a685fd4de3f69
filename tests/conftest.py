"""Fixtures of janito-core's tests.

Every test runs with a private JANITO_CONFIG_DIR and the keyring's 'fail' backend, so no
test touches the user's settings or keyring. ``testkit`` is a real distribution
(``janito-testkit``, toolset ``testkit``) written to a temporary folder and put on
``sys.path`` for the session; ``registry`` loads it into a fresh Registry rooted in a
temporary workspace.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.distributions import sources_of_testkit, write_distribution

from janito_core import Registry, Workspace


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    config = tmp_path / "janito-config"
    monkeypatch.setenv("JANITO_CONFIG_DIR", str(config))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    for name in ("JANITO_TOOLSETS", "JANITO_PLUGINS", "JANITO_SANDBOX", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    for name in list(os.environ):
        if name.startswith("JANITO_SECRET_"):
            monkeypatch.delenv(name)
    return config


@pytest.fixture(scope="session")
def testkit_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A folder holding the installed janito-testkit distribution, on sys.path."""
    root = tmp_path_factory.mktemp("testkit-site")
    write_distribution(root, "janito-testkit", "1.2.3", toolsets={"testkit": "janito_testkit"},
                       files=sources_of_testkit())
    sys.path.insert(0, str(root))
    importlib.invalidate_caches()
    try:
        yield root
    finally:
        sys.path.remove(str(root))
        importlib.invalidate_caches()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


@pytest.fixture
def registry(testkit_dir: Path, workspace: Path) -> Registry:
    """A fresh registry with the testkit toolset loaded, every privilege granted."""
    registry = Registry(workspace=Workspace(workspace), autoload=(), allowed=None)
    registry.add_toolset("testkit")
    return registry


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    """An empty folder for distributions a subprocess will see."""
    folder = tmp_path / "site"
    folder.mkdir()
    return folder

