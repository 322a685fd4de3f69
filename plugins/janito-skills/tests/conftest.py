"""Fixtures of the janito-skills tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder of the test's own: ~/.agents/skills and ~/.claude/skills are read
    from there, never from the home of whoever runs the tests."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture
def untrusted_project(janito: Any) -> Path:
    """The workspace of the ``janito`` fixture, a project the user has not trusted."""
    return Path(janito.workspace)


@pytest.fixture
def project(untrusted_project: Path) -> Path:
    """The workspace of the ``janito`` fixture, used as a project the user trusts."""
    from janito_skills._trust import trust

    trust(untrusted_project)
    return untrusted_project


@pytest.fixture
def user_skills(janito_isolated: Path) -> Path:
    """The user's skills folder inside the isolated janito configuration folder."""
    folder = janito_isolated / "skills"
    folder.mkdir()
    return folder
