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


def pytest_configure(config: pytest.Config) -> None:
    """Before any test (in the process that starts the others), give each folder of this
    environment on sys.path that holds modules its ``__pycache__``, and wait until that
    is settled.

    A scan of the entry points and a toolset's manifest are kept only while the folders
    of sys.path keep their times, and only once those times are a few seconds old
    (``_manifest.SETTLED_SECONDS``). A fresh environment's site-packages has no
    ``__pycache__`` until a first import of a module lying directly in it, by any test in
    any process, makes one and changes the folder's times in the middle of the session:
    a test then rightly finds its kept scan or manifest unused."""
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: its controller did it
        return
    import time

    from janito_core import _manifest

    made = False
    for entry in sys.path:
        if not (isinstance(entry, str) and entry.startswith(sys.prefix) and os.path.isdir(entry)):
            continue
        cache = os.path.join(entry, "__pycache__")
        if os.path.isdir(cache) or not any(name.endswith(".py") for name in os.listdir(entry)):
            continue  # no import will make one here
        try:
            os.mkdir(cache)
        except OSError:  # made meanwhile, or a folder this user cannot write
            continue
        made = True
    if made:
        time.sleep(_manifest.SETTLED_SECONDS + 0.2)


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

