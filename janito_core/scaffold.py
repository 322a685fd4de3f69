"""``janito new-toolset NAME``: a complete distribution to start a toolset from."""

from __future__ import annotations

import re
from pathlib import Path

from . import __version__ as core_version

_NAME = re.compile(r"^[a-z][a-z0-9_]{0,40}$")


class ScaffoldError(Exception):
    """The toolset name is unusable or the target folder exists already."""


def _files(name: str) -> dict[str, str]:
    package = f"janito_{name}"
    dist = f"janito-{name.replace('_', '-')}"
    return {
        "pyproject.toml": f'''[build-system]
requires = ["hatchling>=1.21"]
build-backend = "hatchling.build"

[project]
name = "{dist}"
version = "0.1.0"
description = "The {name} toolset for janito"
readme = "README.md"
license = "MIT"
requires-python = ">=3.10"
classifiers = [
    "Programming Language :: Python :: 3",
    "Intended Audience :: Developers",
]
dependencies = ["janito-core>={core_version}"]

[project.optional-dependencies]
test = ["pytest>=8", "hypothesis>=6.100", "jsonschema>=4.20"]

[project.entry-points."janito.toolsets"]
{name} = "{package}"

[tool.hatch.build.targets.wheel]
packages = ["{package}"]
''',
        "README.md": f'''# {dist}

The `{name}` toolset for [janito](https://pypi.org/project/janito-core/).

```bash
pip install {dist}
janito tools -t {name}
janito run -t {name} Greet --name Ada
```

| tool | permissions | description |
|---|---|---|
| Greet | r | Greet someone by name. |

Run the tests with `pytest`; they include janito's conformance check.
''',
        f"{package}/__init__.py": f'"""The {name} toolset for janito."""\n',
        f"{package}/greet.py": '''"""Greet: the example tool of this toolset."""

from __future__ import annotations

from typing import Any

from janito_core import BaseTool, tool


@tool(permissions="r")
class Greet(BaseTool):
    """Greet someone by name."""

    def run(self, name: str, times: int = 1) -> dict[str, Any]:
        """Say hello.

        Args:
            name: Who to greet.
            times: How many times to say it, from 1 to 10.
        """
        if not 1 <= times <= 10:
            return {"success": False, "error": "times must be between 1 and 10",
                    "error_type": "invalid_arguments", "name": name, "times": times}
        self.report_start(f"Greeting {name}")
        return {"success": True, "name": name, "times": times,
                "greeting": " ".join([f"Hello, {name}!"] * times)}


def main(argv: list[str] | None = None) -> None:
    from janito_core.harness import run_main

    run_main(Greet, argv)


if __name__ == "__main__":
    main()
''',
        "tests/test_greet.py": f'''from janito_core.testing import check_toolset


def test_conformance() -> None:
    check_toolset("{name}")


def test_greet(janito) -> None:
    janito.load("{name}")
    result = janito.call("Greet", name="Ada", times=2)
    assert result["success"] is True
    assert result["greeting"] == "Hello, Ada! Hello, Ada!"


def test_greet_refuses_bad_times(janito) -> None:
    janito.load("{name}")
    result = janito.call("Greet", name="Ada", times=0)
    assert result["success"] is False


def test_greet_needs_a_name(janito) -> None:
    janito.load("{name}")
    result = janito.call("Greet", "{{}}")
    assert result["error_type"] == "invalid_arguments"
    assert result["details"][0]["field"] == "name"
''',
    }


def write_toolset(name: str, parent: str | Path) -> Path:
    """Write ``janito-NAME/`` under ``parent`` and return its path."""
    if not _NAME.match(name):
        raise ScaffoldError(
            f"invalid toolset name {name!r}: use lower-case letters, digits and underscores, "
            "starting with a letter"
        )
    folder = Path(parent) / f"janito-{name.replace('_', '-')}"
    if folder.exists():
        raise ScaffoldError(f"{folder} exists already; choose another --path or name")
    for relative, text in _files(name).items():
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return folder
