"""The frameworks are imported by their own integration module only: ``import janito_core``,
the ``janito`` command and ``janito_core.integrations`` load none of them, though every
one of them is installed here."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

FRAMEWORKS = ("pydantic_ai", "agents", "langchain_core", "langchain", "langgraph", "llm",
              "openai", "pydantic")

PROBE = """
import json, sys
{statement}
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in {frameworks!r})))
"""


def loaded_by(statement: str) -> list[str]:
    code = PROBE.format(statement=statement, frameworks=set(FRAMEWORKS))
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                               check=False, timeout=300)
    assert completed.returncode == 0, completed.stderr
    loaded: list[str] = json.loads(completed.stdout.splitlines()[-1])
    return loaded


@pytest.mark.parametrize("statement", [
    "import janito_core, janito_core.integrations._bridge\n"
    "janito_core.Registry().names()",
    "import sys; sys.argv = ['janito', 'tools', '--json']\n"
    "from janito_core.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass",
])
def test_janito_alone_imports_no_framework(statement: str) -> None:
    assert loaded_by(statement) == []


@pytest.mark.parametrize("module, framework", [
    ("pydantic_ai", "pydantic_ai"), ("openai_agents", "agents"),
    ("langchain", "langchain_core"), ("llm", "llm"),
])
def test_each_integration_imports_its_own_framework(module: str, framework: str) -> None:
    loaded = {name.split(".")[0] for name in loaded_by(f"import janito_core.integrations.{module}")}
    others = {"pydantic_ai", "agents", "langchain_core", "llm"} - {framework}
    assert framework in loaded and not loaded & others
