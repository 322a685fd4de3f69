"""Shared fixtures: the "files" toolset loaded in the temporary workspace of ``janito``."""

from __future__ import annotations

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
