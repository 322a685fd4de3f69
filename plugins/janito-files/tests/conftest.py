"""Shared fixtures: the "files" toolset loaded in the temporary workspace of ``janito``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def results_match_their_types(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every answer a test gets through ``janito.call`` matches the result type its tool
    declares (the MCP output schema: the success shape, or janito's failure shape), so
    the whole suite, with every branch it reaches, checks the declared types."""
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
