"""What ``import janito_core`` costs: no toolset, none of the optional heavy modules."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.distributions import run_python, sources_of_testkit, write_distribution

# inspect and dataclasses (which imports inspect) cost measurable start-up time;
# importlib_metadata is needed only once a registry looks for toolsets.
HEAVY = ("pluggy", "keyring", "inspect", "dataclasses", "importlib_metadata")

PROBE = """
import json, sys
before = set(sys.modules)
{statement}
new = sorted(set(sys.modules) - before)
print(json.dumps(new))
"""


def new_modules(statement: str, path: list[Path] | None = None) -> list[str]:
    completed = run_python(PROBE.format(statement=statement), path=path or [])
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout.splitlines()[-1])


def test_import_janito_core_imports_nothing_heavy(sandbox: Path) -> None:
    write_distribution(sandbox, "janito-files", toolsets={"files": "janito_testkit"},
                       files=sources_of_testkit())
    loaded = new_modules("import janito_core", [sandbox])
    assert "janito_core" in loaded
    for heavy in HEAVY:
        assert heavy not in loaded, heavy
    assert not [m for m in loaded if m.startswith("janito_testkit")]


def test_the_public_names_are_there_without_loading_more() -> None:
    loaded = new_modules(
        "import janito_core\n"
        "names = [janito_core.BaseTool, janito_core.tool, janito_core.norm_path,\n"
        "         janito_core.Registry, janito_core.discover_toolsets, janito_core.Workspace,\n"
        "         janito_core.Privileges, janito_core.hookimpl, janito_core.AUTOLOAD_TOOLSETS]"
    )
    for heavy in HEAVY:
        assert heavy not in loaded, heavy


def test_dispatch_is_imported_on_first_use_only() -> None:
    assert "janito_core.dispatch" not in new_modules("import janito_core")
    loaded = new_modules("import janito_core\njanito_core.call_tool")
    assert "janito_core.dispatch" in loaded
    assert "pluggy" not in loaded and "keyring" not in loaded


def test_a_toolset_module_that_marks_hooks_does_not_import_pluggy(sandbox: Path) -> None:
    write_distribution(sandbox, "acme-marks", toolsets={"marks": "acme_marks"}, files={
        "acme_marks/__init__.py": "from janito_core import hookimpl\n\n"
                                  "@hookimpl\ndef janito_report(event):\n    pass\n",
    })
    assert "pluggy" not in new_modules("import acme_marks", [sandbox])


def test_pydantic_is_imported_only_by_a_tool_that_uses_it(sandbox: Path) -> None:
    """Schemas, validation and results look for models without importing pydantic, which
    is installed here (the test extra): tools that never mention it never pay for it."""
    write_distribution(sandbox, "janito-testkit", toolsets={"testkit": "janito_testkit"},
                       files=sources_of_testkit())
    loaded = new_modules(
        "from janito_core import Registry\n"
        "from janito_core.dispatch import call_tool\n"
        "registry = Registry(autoload=(), reports='off')\n"
        "registry.add_toolset('testkit')\n"
        "assert [registry.schema(name) for name in registry.names()]\n"
        "assert call_tool('Typed', '{\"count\": 2}', registry=registry)['success']\n"
        "assert not call_tool('Typed', '{\"count\": \"x\"}', registry=registry)['success']",
        [sandbox],
    )
    assert "janito_testkit.typed" in loaded
    assert not [m for m in loaded if m.split(".")[0] in ("pydantic", "pydantic_core")]
    import importlib.util

    assert importlib.util.find_spec("pydantic") is not None  # so the check above means something
