"""``janito new-toolset``: separate toolset, distribution and package names, a .gitignore,
and no silent clash with a toolset or package that exists already.

That the written distribution installs and passes its own tests (the conformance check
included) is tested in test_authoring_guide.py, in a clean environment.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from janito_core.cli import main
from janito_core.scaffold import ScaffoldError, choose_names, clashes, write_toolset

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = None


def test_the_names_default_from_the_toolset_name() -> None:
    assert choose_names("sqlite") == ("sqlite", "janito-sqlite", "janito_sqlite")
    assert choose_names("word_tools") == ("word_tools", "janito-word-tools", "janito_word_tools")
    assert choose_names("sqlite", dist="janito-sqlite-tools") == (
        "sqlite", "janito-sqlite-tools", "janito_sqlite_tools")
    assert choose_names("sqlite", dist="Acme.SQLite", package="acme_sql") == (
        "sqlite", "Acme.SQLite", "acme_sql")


@pytest.mark.parametrize(("name", "dist", "package", "message"), [
    ("Bad-Name", None, None, "invalid toolset name"),
    ("sqlite", "-leading", None, "invalid distribution name"),
    ("sqlite", "has space", None, "invalid distribution name"),
    ("sqlite", None, "Capital", "invalid package name"),
    ("sqlite", None, "class", "invalid package name"),
    ("sqlite", "9lives", None, "invalid package name"),
])
def test_unusable_names_are_refused(name: str, dist: str | None, package: str | None,
                                    message: str) -> None:
    with pytest.raises(ScaffoldError, match=message):
        choose_names(name, dist, package)


def test_the_distribution_is_written_with_each_name_where_it_belongs(tmp_path: Path) -> None:
    folder = write_toolset("sqlite", tmp_path, dist="janito-sqlite-tools")
    assert folder == tmp_path / "janito-sqlite-tools"
    written = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert written == [".gitignore", "README.md", "janito_sqlite_tools/__init__.py",
                       "janito_sqlite_tools/count_lines.py", "janito_sqlite_tools/greet.py",
                       "pyproject.toml", "tests/test_janito_sqlite_tools.py"]
    assert ".hypothesis/" in (folder / ".gitignore").read_text().splitlines()
    text = (folder / "pyproject.toml").read_text()
    assert 'name = "janito-sqlite-tools"' in text
    assert '[project.entry-points."janito.toolsets"]\nsqlite = "janito_sqlite_tools"' in text
    assert 'packages = ["janito_sqlite_tools"]' in text
    if tomllib is not None:
        tomllib.loads(text)
    tests = (folder / "tests" / "test_janito_sqlite_tools.py").read_text()
    assert 'check_toolset("sqlite")' in tests and 'janito.load("sqlite")' in tests
    for module in folder.rglob("*.py"):
        compile(module.read_text(), str(module), "exec")


def test_a_toolset_name_of_janito_s_own_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ScaffoldError, match=r"'files' is one of janito's own \(janito-files\)"):
        write_toolset("files", tmp_path, dist="acme-files")
    assert not (tmp_path / "acme-files").exists()
    assert write_toolset("files", tmp_path, dist="acme-files", allow_clash=True).is_dir()


def test_an_installed_toolset_name_or_importable_package_is_refused(testkit_dir: Path,
                                                                    tmp_path: Path) -> None:
    problems = clashes(choose_names("testkit", dist="acme-testkit"))
    assert len(problems) == 1
    assert "advertised already by janito-testkit 1.2.3" in problems[0]
    assert str(testkit_dir) in problems[0]
    # The default distribution name is the installed one's: writing it would replace it.
    [same] = clashes(choose_names("testkit", dist="janito-testkit", package="acme_tk"))
    assert "advertised already by janito-testkit 1.2.3" in same
    assert "would have its name (janito-testkit), so installing either would replace" in same
    [problem] = clashes(choose_names("jsonish", package="json"))
    assert problem.startswith("a module called 'json' is importable already (")
    with pytest.raises(ScaffoldError, match="--allow-clash"):
        write_toolset("jsonish", tmp_path, package="json")


def test_the_command_refuses_an_installed_toolset_under_its_own_distribution_name(
        testkit_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "target"
    target.mkdir()
    assert main(["new-toolset", "testkit", "--package", "acme_tk", "--path", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("janito: error: toolset 'testkit' is advertised already by "
                          "janito-testkit 1.2.3"), err
    assert "installing either would replace the other: choose another name" in err
    assert "--allow-clash" in err
    assert list(target.iterdir()) == []


def test_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["new-toolset", "sqlite", "--dist", "janito-sqlite-tools", "--package",
                 "acme_sqlite", "--path", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert out == f"{tmp_path / 'janito-sqlite-tools'}\n" and "Created" in err
    assert (tmp_path / "janito-sqlite-tools" / "acme_sqlite" / "greet.py").is_file()
    assert main(["new-toolset", "system", "--path", str(tmp_path)]) == 2
    assert "one of janito's own" in capsys.readouterr().err
    assert main(["new-toolset", "system", "--dist", "acme-system", "--allow-clash",
                 "--path", str(tmp_path)]) == 0


def test_greet_declares_its_range_on_the_parameter(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # as the guide advises: the model is told the range, dispatch refuses what breaks it
    import importlib

    from janito_core import Registry, call_tool
    from janito_core.decorator import tool_class
    from janito_core.schema import tool_schema

    folder = write_toolset("greeter", tmp_path, package="acme_scaffold_greeter")
    source = (folder / "acme_scaffold_greeter" / "greet.py").read_text()
    assert "Interval(ge=1, le=10)" in source and "failure(" not in source
    monkeypatch.syspath_prepend(str(folder))
    try:
        greet = importlib.import_module("acme_scaffold_greeter.greet").greet
        times = tool_schema(tool_class(greet)).parameters["properties"]["times"]
        assert (times["minimum"], times["maximum"], times["default"]) == (1, 10, 1)
        registry = Registry(autoload=())
        registry.add_tool(greet)
        refused = call_tool("Greet", {"name": "Ada", "times": 11}, registry=registry)
        assert refused["error_type"] == "invalid_arguments"
        assert [d["field"] for d in refused["details"]] == ["times"]
        assert call_tool("Greet", {"name": "Ada", "times": 2}, registry=registry)["greeting"] == (
            "Hello, Ada! Hello, Ada!")
    finally:
        for name in [m for m in sys.modules if m.startswith("acme_scaffold_greeter")]:
            del sys.modules[name]
