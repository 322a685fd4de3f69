"""Fixtures of the janito-skills tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def results_match_their_types(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every answer a test gets through ``janito.call`` matches the result type its tool
    declares (the MCP output schema: the success shape, or janito's failure shape), so
    every branch the suite reaches checks the declared types."""
    from janito_core.testing import ResultSchemas, ToolsetTester

    schemas = ResultSchemas()
    call = ToolsetTester.call

    def checked(self: ToolsetTester, name: str, arguments: Any = None, /, **kwargs: Any) -> Any:
        result = call(self, name, arguments, **kwargs)
        if self.registry is not None and self.registry.get(name) is not None:
            problem = schemas.problem(self.registry.schema(name).output_schema, result)
            assert problem is None, f"{name}: {problem}\n{result}"
        return result

    monkeypatch.setattr(ToolsetTester, "call", checked)


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
