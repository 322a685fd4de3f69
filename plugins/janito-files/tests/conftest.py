"""Shared fixtures: the "files" toolset loaded in the temporary workspace of ``janito``."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def files(janito: Any) -> Any:
    """The ``janito`` tester with the files toolset loaded with read and write privileges."""
    janito.load("files", privileges="rw")
    return janito


@pytest.fixture
def ws(files: Any) -> Path:
    """The workspace folder of ``files``."""
    return Path(files.workspace)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the workspace (outside it) holding a file with a secret."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("OUTSIDE-SECRET\n")
    return folder


@pytest.fixture
def scratch() -> Iterator[str]:
    """A folder for many small random trees, on tmpfs where there is one."""
    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    folder = tempfile.mkdtemp(prefix="janito-differential-", dir=base)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def speedups() -> Any:
    """janito-files' compiled module (the tests that hold it to its Python twins skip
    without it)."""
    try:
        from janito_files import _speedups
    except ImportError:
        pytest.skip("janito-files was installed without its compiled module (no C compiler, "
                    "or an editable install)")
    return _speedups
