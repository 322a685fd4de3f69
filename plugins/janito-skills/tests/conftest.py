"""Fixtures of the janito-skills tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def project(janito: Any) -> Path:
    """The workspace of the ``janito`` fixture, used as the project."""
    return Path(janito.workspace)


@pytest.fixture
def user_skills(janito_isolated: Path) -> Path:
    """The user's skills folder inside the isolated janito configuration folder."""
    folder = janito_isolated / "skills"
    folder.mkdir()
    return folder
