"""``janito new-toolset NAME``: a complete distribution to start a toolset from.

The toolset name (what ``-t`` takes), the distribution name (what ``pip install`` takes)
and the import package are separate choices; by default the distribution is
``janito-NAME`` and the package its name with underscores. A toolset name that janito
ships or that an installed distribution advertises already, or a package name that is
importable already, is refused unless the caller allows the clash.
"""

from __future__ import annotations

import importlib.util
import keyword
import re
from pathlib import Path
from typing import NamedTuple

from . import __version__ as core_version
from .discovery import _canonical, scan

_NAME = re.compile(r"^[a-z][a-z0-9_]{0,40}$")
_DIST = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?$")
_PACKAGE = re.compile(r"^[a-z][a-z0-9_]{0,60}$")
#: The toolsets of janito's own distributions, whether installed here or not.
BUILTIN_TOOLSETS = ("files", "gmail", "mcp", "onedrive", "skills", "system")


class ScaffoldError(Exception):
    """A name is unusable or clashes, or the target folder exists already."""


class Names(NamedTuple):
    toolset: str
    dist: str
    package: str


def choose_names(name: str, dist: str | None = None, package: str | None = None) -> Names:
    """The three names of a new toolset, checked; ScaffoldError says what is wrong."""
    if not _NAME.match(name):
        raise ScaffoldError(
            f"invalid toolset name {name!r}: use lower-case letters, digits and underscores, "
            "starting with a letter"
        )
    dist = dist if dist is not None else f"janito-{name.replace('_', '-')}"
    if not _DIST.match(dist):
        raise ScaffoldError(
            f"invalid distribution name {dist!r}: use letters, digits, '-', '_' and '.', "
            "starting and ending with a letter or digit"
        )
    package = package if package is not None else re.sub(r"[-.]+", "_", dist).lower()
    if not _PACKAGE.match(package) or keyword.iskeyword(package):
        raise ScaffoldError(
            f"invalid package name {package!r}: use lower-case letters, digits and "
            "underscores, starting with a letter (choose one with --package)"
        )
    return Names(name, dist, package)


def clashes(names: Names) -> list[str]:
    """Why these names would collide with what janito or this environment has already."""

    problems = []
    if names.toolset in BUILTIN_TOOLSETS:
        problems.append(f"toolset {names.toolset!r} is one of janito's own "
                        f"(janito-{names.toolset}), which wins any clash over the name")
    else:
        spec = scan().toolsets.get(names.toolset)
        if spec is not None:
            where = spec.location or "an unknown place"
            same = spec.distribution == _canonical(names.dist)
            problems.append(
                f"toolset {names.toolset!r} is advertised already by {spec.distribution} "
                f"{spec.version} (installed in {where})"
                + (f", and the new distribution would have its name ({spec.distribution}), so "
                   "installing either would replace the other" if same else "")
            )
    try:
        found = importlib.util.find_spec(names.package)  # a top-level name: nothing is imported
    except (ImportError, ValueError):
        found = None
    if found is not None:
        where = found.origin or ", ".join(found.submodule_search_locations or []) or "?"
        problems.append(f"a module called {names.package!r} is importable already ({where})")
    return problems


def _files(names: Names) -> dict[str, str]:
    name, dist, package = names
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
janito run -t {name} CountLines --filepath README.md
```

| tool | permissions | description |
|---|---|---|
| Greet | - | Greet someone by name. |
| CountLines | r | Count the lines of a text file in the workspace. |

Run the tests with `pip install -e '.[test]'` and `pytest`; they include janito's
conformance check.
''',
        ".gitignore": '''__pycache__/
*.py[cod]
.hypothesis/
.pytest_cache/
*.egg-info/
build/
dist/
.venv/
''',
        f"{package}/__init__.py": f'"""The {name} toolset for janito."""\n',
        f"{package}/greet.py": '''"""Greet: a tool written as a function."""

from __future__ import annotations

from typing import Annotated, Any

from janito_core import tool
from janito_core.constraints import Interval


@tool(permissions="")
def greet(name: str, times: Annotated[int, Interval(ge=1, le=10)] = 1) -> dict[str, Any]:
    """Greet someone by name.

    Args:
        name: Who to greet.
        times: How many times to say it.
    """
    # The range is declared on the parameter: the model is told it, and dispatch refuses
    # a value outside it before this function runs.
    return {"success": True, "name": name, "times": times,
            "greeting": " ".join([f"Hello, {name}!"] * times)}


def main(argv: list[str] | None = None) -> int:
    from janito_core.harness import run_main

    return run_main(greet, argv)


if __name__ == "__main__":
    raise SystemExit(main())
''',
        f"{package}/count_lines.py": '''"""CountLines: a tool written as a class, reading through the workspace."""

from __future__ import annotations

from typing import Any

from janito_core import BaseTool, WorkspaceError, failure, tool


@tool(permissions="r")
class CountLines(BaseTool):
    """Count the lines of a text file in the workspace."""

    def run(self, filepath: str) -> dict[str, Any]:
        """Count lines.

        Args:
            filepath: The file, relative to the workspace.
        """
        try:
            data = self.workspace.read_bytes(filepath)
        except WorkspaceError as exc:
            return failure(str(exc), exc.error_type, filepath=filepath)
        except OSError as exc:
            return failure(f"cannot read {filepath}: {exc.strerror or exc}", "os_error",
                           filepath=filepath)
        self.report_start(f"Counting lines of {filepath}")
        return {"success": True, "filepath": filepath, "lines": len(data.splitlines())}


def main(argv: list[str] | None = None) -> int:
    from janito_core.harness import run_main

    return run_main(CountLines, argv)


if __name__ == "__main__":
    raise SystemExit(main())
''',
        f"tests/test_{package}.py": f'''from pathlib import Path

from janito_core.testing import check_toolset


def test_conformance(janito_isolated: Path) -> None:
    check_toolset("{name}")


def test_greet(janito) -> None:
    janito.load("{name}")
    result = janito.call("Greet", name="Ada", times=2)
    assert result["success"] is True
    assert result["greeting"] == "Hello, Ada! Hello, Ada!"


def test_greet_refuses_bad_times(janito) -> None:
    janito.load("{name}")
    result = janito.call("Greet", name="Ada", times=0)
    assert result["error_type"] == "invalid_arguments"
    assert result["details"][0]["field"] == "times"


def test_greet_needs_a_name(janito) -> None:
    janito.load("{name}")
    result = janito.call("Greet", "{{}}")
    assert result["error_type"] == "invalid_arguments"
    assert result["details"][0]["field"] == "name"


def test_count_lines(janito) -> None:
    janito.load("{name}", privileges="r")
    (janito.workspace / "notes.txt").write_text("one\\ntwo\\n")
    assert janito.call("CountLines", filepath="notes.txt")["lines"] == 2
    assert janito.call("CountLines", filepath="../x")["error_type"] == "outside_workspace"
''',
    }


def write_toolset(name: str, parent: str | Path, *, dist: str | None = None,
                  package: str | None = None, allow_clash: bool = False) -> Path:
    """Write the distribution folder (named after the distribution) under ``parent``."""
    names = choose_names(name, dist, package)
    folder = Path(parent) / names.dist
    if folder.exists():
        raise ScaffoldError(f"{folder} exists already; choose another --path or name")
    if not allow_clash:
        problems = clashes(names)
        if problems:
            raise ScaffoldError("; ".join(problems) + ": choose another name, or pass "
                                "--allow-clash to write it anyway")
    for relative, text in _files(names).items():
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return folder
