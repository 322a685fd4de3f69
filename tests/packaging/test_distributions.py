"""Every distribution builds into a wheel and an sdist that hold what they should.

Built with uv (or the ``build`` package): the sdist first, then the wheel from the sdist,
as a packager would. The wheel holds its own package and nothing of the others; its
METADATA names, versions and bounds everything; installing the wheels into a clean
environment gives a working ``janito`` that sees exactly the toolsets installed.
"""

from __future__ import annotations

import email.parser
import json
import os
import re
import shutil
import subprocess
import sysconfig
import tarfile
import zipfile
from email.message import Message
from pathlib import Path

import pytest
from _dists import REPO, Built, CleanEnv, Dist, build, distributions

DISTS = distributions()
CORE = DISTS[0]
REPO_NAMES = {d.name for d in DISTS}
REPO_PACKAGES = {p for d in DISTS for p in d.packages}

# Distributions that compile a module into their wheel where a C compiler exists, and the
# module's path in the wheel; every other wheel is pure Python.
COMPILED = {"janito-files": "janito_files/_speedups.abi3.so"}


def _has_compiler() -> bool:
    return shutil.which((sysconfig.get_config_var("CC") or "cc").split()[0]) is not None


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _wheel_files(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def _dist_info(wheel: Path, filename: str) -> str:
    with zipfile.ZipFile(wheel) as archive:
        matches = [n for n in archive.namelist()
                   if n.count("/") == 1 and n.split("/")[0].endswith(".dist-info")
                   and n.endswith("/" + filename)]
        assert len(matches) == 1, f"{wheel.name} has no single .dist-info/{filename}"
        return archive.read(matches[0]).decode("utf-8")


def _metadata(wheel: Path) -> Message:
    return email.parser.Parser().parsestr(_dist_info(wheel, "METADATA"))


def _entry_points(wheel: Path) -> dict[str, dict[str, str]]:
    groups: dict[str, dict[str, str]] = {}
    current = None
    for raw in _dist_info(wheel, "entry_points.txt").splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = groups.setdefault(line[1:-1], {})
        elif current is not None and "=" in line:
            key, value = line.split("=", 1)
            current[key.strip()] = value.strip()
    return groups


def _requirement_parts(requirement: str) -> tuple[str, str, str]:
    """(name, specifier, marker) of one Requires-Dist value."""
    body, _, marker = requirement.partition(";")
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*\(?([^)]*)\)?", body)
    assert match, f"unreadable requirement {requirement!r}"
    return match.group(1), match.group(3).strip(), marker.strip()


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text)[:3])


# ---------------------------------------------------------------------------- the wheel


def test_builds_a_wheel_and_an_sdist(dist: Dist, built: Built) -> None:
    assert built.wheel is not None and built.sdist is not None
    stem = _normal(dist.name).replace("-", "_")
    assert built.wheel.name.startswith(f"{stem}-{dist.version}-")
    if dist.name in COMPILED and _has_compiler():
        # Built against Python 3.10's limited API: one wheel for 3.10 and later.
        assert re.search(r"-cp310-abi3-\w+\.whl$", built.wheel.name), built.wheel.name
        assert COMPILED[dist.name] in _wheel_files(built.wheel)
    else:
        assert built.wheel.name.endswith("-py3-none-any.whl"), "a pure-Python wheel"
    assert built.sdist.name == f"{stem}-{dist.version}.tar.gz"


def test_janito_files_without_a_compiler_is_a_pure_wheel_that_searches(
    wheels: dict[str, Path], tmp_path: Path
) -> None:
    files = next(d for d in DISTS if d.name == "janito-files")
    # /bin/false as the compiler: the build hook warns and leaves the module out.
    built = build(files, tmp_path / "dist", env={**os.environ, "CC": "false"})
    assert not built.error, built.error
    assert built.wheel is not None and built.wheel.name.endswith("-py3-none-any.whl")
    assert not [n for n in _wheel_files(built.wheel) if n.endswith((".so", ".c"))]
    env = CleanEnv(tmp_path / "venv")
    env.install(str(wheels[CORE.name]), str(built.wheel))
    (tmp_path / "tree" / "sub").mkdir(parents=True)
    (tmp_path / "tree" / "sub" / "a.txt").write_text("one\nthe needle\n")
    script = (
        "import json, sys\n"
        "from janito_core import Registry, Workspace\n"
        "from janito_files import _steps\n"
        "assert _steps.read_searchable_at is _steps.read_searchable_at_py\n"
        "assert _steps.scan_files is _steps.scan_files_py\n"
        "assert _steps.Searcher is _steps.SearcherPy\n"
        "registry = Registry(workspace=Workspace(sys.argv[1]), autoload=('files',))\n"
        "found = registry.tools()['SearchText'](paths='.', query='needle')\n"
        "print(json.dumps(found['matches']))\n"
    )
    found = json.loads(_run_on_tree(env, script, tmp_path))
    assert found == [{"path": "sub/a.txt", "line": 2, "text": "the needle"}]


def _run_on_tree(env: CleanEnv, script: str, tmp_path: Path) -> str:
    """What ``script``, run by ``env``'s Python on ``tmp_path/tree`` with a configuration
    folder of its own, printed; it must succeed."""
    (tmp_path / "config").mkdir()
    proc = env.python_code(script, str(tmp_path / "tree"), cwd=tmp_path,
                           config=tmp_path / "config")
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _oldest_python() -> str | None:
    """The oldest Python janito supports that runs here (3.10 or 3.11), or None."""
    for version in ("3.10", "3.11"):
        found = shutil.which(f"python{version}")
        if found and subprocess.run([found, "-c", ""], capture_output=True,
                                    check=False).returncode == 0:
            return found
    return None


def test_the_compiled_janito_files_wheel_runs_on_the_oldest_python(
    wheels: dict[str, Path], tmp_path: Path
) -> None:
    """One ``cp310-abi3`` wheel, built here by the newest Python, serves 3.10 too.

    Headers of 3.12 and later take None to be immortal, and their ``Py_RETURN_NONE`` gives
    no reference back: a module built by them took one reference to None away per batch
    on 3.10 and 3.11, and the interpreter aborted at exit ("deallocating None")."""
    wheel = wheels["janito-files"]
    if "-abi3-" not in wheel.name:
        pytest.skip("janito-files was built without its compiled module (no compiler)")
    oldest = _oldest_python()
    if oldest is None:
        pytest.skip("no Python 3.10 or 3.11 here to install the wheel into")
    env = CleanEnv(tmp_path / "venv", interpreter=oldest)
    env.install(str(wheels[CORE.name]), str(wheel))
    for number in range(600):  # a folder, so a batch, each
        (tmp_path / "tree" / f"d{number}").mkdir(parents=True)
        (tmp_path / "tree" / f"d{number}" / "a.txt").write_text(f"the needle {number}\n")
    script = (
        "import sys\n"
        "from janito_core import Registry, Workspace\n"
        "from janito_files import _steps\n"
        "assert _steps.Searcher.__module__ == 'janito_files._speedups', _steps.Searcher\n"
        "registry = Registry(workspace=Workspace(sys.argv[1]), autoload=('files',),\n"
        "                    reports='off')\n"
        "search = registry.tools()['SearchText']\n"
        "search(paths='.', query='needle', max_results=1000)\n"
        "before = sys.getrefcount(None)\n"
        "for _ in range(3):\n"
        "    found = search(paths='.', query='needle', max_results=1000)\n"
        "    assert len(found['matches']) == 600, found\n"
        "del found\n"
        "print(sys.getrefcount(None) - before)\n"
    )
    lost = -int(_run_on_tree(env, script, tmp_path))
    assert lost == 0, f"None lost {lost} references over 3 searches"


def test_wheel_holds_its_own_package_and_nothing_else(dist: Dist, built: Built) -> None:
    assert built.wheel is not None
    files = _wheel_files(built.wheel)
    tops = {name.split("/", 1)[0] for name in files}
    infos = {t for t in tops if t.endswith(".dist-info")}
    assert len(infos) == 1
    assert tops - infos == set(dist.packages), (
        f"{built.wheel.name} holds {sorted(tops - infos)}, expected {sorted(dist.packages)}"
    )
    for package in dist.packages:
        assert f"{package}/__init__.py" in files
    others = REPO_PACKAGES - set(dist.packages)
    stray = [f for f in files if f.split("/", 1)[0] in others]
    assert not stray, f"{built.wheel.name} carries another distribution's files: {stray[:5]}"
    leaked = [f for f in files if re.search(r"(^|/)(tests?|__pycache__)/|\.pyc$", f)]
    assert not leaked, f"{built.wheel.name} carries test or cache files: {leaked[:5]}"


def test_wheel_declares_its_entry_points(dist: Dist, built: Built) -> None:
    assert built.wheel is not None
    actual = _entry_points(built.wheel)
    for group, items in dist.entry_points.items():
        assert actual.get(group) == items, f"[{group}] in entry_points.txt: {actual.get(group)}"
    if dist.is_core:
        assert actual["console_scripts"]["janito"] == "janito_core.cli:main"
        assert "janito" in actual.get("pytest11", {}), "the pytest plugin must be registered"
    else:
        advertised = {**actual.get("janito.toolsets", {}), **actual.get("janito.plugins", {})}
        assert advertised, "a plugin advertises a janito.toolsets or janito.plugins entry point"
        for value in advertised.values():
            assert value.split(":")[0].split(".")[0] in dist.packages, (
                f"entry point {value} points outside {dist.packages}"
            )


def test_wheel_metadata_is_complete(dist: Dist, built: Built) -> None:
    assert built.wheel is not None
    meta = _metadata(built.wheel)
    assert meta["Name"] == dist.name
    assert meta["Version"] == dist.version
    assert meta["Summary"], "a one-line description"
    assert meta["Requires-Python"] and ">=3.10" in meta["Requires-Python"].replace(" ", "")
    assert meta.get("License-Expression") or meta.get("License"), "a license"
    classifiers = meta.get_all("Classifier") or []
    assert classifiers, "trove classifiers"
    assert meta.get_payload().strip(), "the README as the long description"
    assert meta.get("Description-Content-Type", "").startswith("text/markdown")


def test_every_dependency_has_a_lower_bound(dist: Dist, built: Built) -> None:
    assert built.wheel is not None
    unbounded = []
    for requirement in _metadata(built.wheel).get_all("Requires-Dist") or []:
        _, spec, _ = _requirement_parts(requirement)
        if not re.search(r"(>=|==|~=|>)\s*\d", spec):
            unbounded.append(requirement)
    assert not unbounded, f"requirements without a lower bound: {unbounded}"


def test_plugin_depends_on_core_and_nothing_else_here(plugin: Dist) -> None:
    dist = plugin
    deps = [_requirement_parts(r) for r in dist.project.get("dependencies", [])]
    core = [spec for name, spec, marker in deps if _normal(name) == CORE.name and not marker]
    assert core, f"{dist.name} must depend on {CORE.name}>=..."
    lower = re.search(r">=\s*([0-9][0-9.]*)", core[0])
    assert lower, f"{dist.name} depends on {CORE.name}{core[0]}: give a >= lower bound"
    assert _version_tuple(lower.group(1)) <= _version_tuple(CORE.version), (
        f"{dist.name} needs {CORE.name}>={lower.group(1)} but this repository has {CORE.version}"
    )
    siblings = [n for n, _, _ in deps if _normal(n) in REPO_NAMES - {CORE.name}]
    assert not siblings, f"{dist.name} depends on other plugins of this repository: {siblings}"


def test_one_version_for_every_distribution_and_the_changelog_names_it() -> None:
    versions = {d.name: d.version for d in DISTS}
    assert len(set(versions.values())) == 1, f"the distributions disagree: {versions}"
    for dist in DISTS[1:]:
        core = next(r for r in dist.project.get("dependencies", [])
                    if _normal(_requirement_parts(r)[0]) == CORE.name)
        assert core.replace(" ", "") == f"{CORE.name}>={CORE.version}", (
            f"{dist.name} requires {core}: a release requires janito-core>={CORE.version}")
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    first = re.search(r"^## (\S+)", changelog, re.M)
    assert first and first.group(1) == CORE.version, (
        f"CHANGELOG.md's newest section is {first.group(1) if first else None}, "
        f"the distributions are {CORE.version}")


# ---------------------------------------------------------------------------- the sdist


def test_sdist_holds_sources_tests_and_readme(dist: Dist, built: Built) -> None:
    assert built.sdist is not None
    with tarfile.open(built.sdist) as archive:
        names = archive.getnames()
    root = names[0].split("/", 1)[0]
    inside = {n.split("/", 1)[1] for n in names if "/" in n}
    for required in ("PKG-INFO", "pyproject.toml", str(dist.project.get("readme", "README.md"))):
        assert required in inside, f"{built.sdist.name} lacks {required}"
    for package in dist.packages:
        assert f"{package}/__init__.py" in inside
    if any(p.suffix == ".py" for p in (dist.path / "tests").rglob("*")):
        assert any(n.startswith("tests/") for n in inside), "the sdist carries the tests"
    others = REPO_PACKAGES - set(dist.packages)
    stray = [n for n in inside if n.split("/", 1)[0] in others or n.startswith("plugins/")]
    assert not stray, f"{root} carries other distributions' files: {stray[:5]}"


# ---------------------------------------------------------------- clean installs, for real


def _toolsets(env: CleanEnv, tmp_path: Path) -> list[dict[str, object]]:
    proc = env.janito("toolsets", "--json", cwd=tmp_path, config=tmp_path / "config")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert isinstance(rows, list)
    return rows


def test_core_alone_installs_and_lists_no_plugin_toolset(
    wheels: dict[str, Path], tmp_path: Path
) -> None:
    env = CleanEnv(tmp_path / "venv")
    env.install(str(wheels[CORE.name]))
    (tmp_path / "config").mkdir()
    rows = _toolsets(env, tmp_path)
    ours = {name for d in DISTS for name in d.toolsets}
    assert not {r["name"] for r in rows} & ours, rows
    proc = env.janito("tools", "--json", cwd=tmp_path, config=tmp_path / "config")
    assert proc.returncode == 0, proc.stderr
    assert isinstance(json.loads(proc.stdout), list)


def test_all_wheels_install_together_and_every_toolset_shows(
    wheels: dict[str, Path], tmp_path: Path
) -> None:
    env = CleanEnv(tmp_path / "venv")
    env.install(*(str(w) for w in wheels.values()))
    env.check()
    (tmp_path / "config").mkdir()
    rows = {r["name"]: r for r in _toolsets(env, tmp_path)}
    for dist in DISTS:
        for name in dist.toolsets:
            assert name in rows, f"toolset {name} of {dist.name} is not listed: {sorted(rows)}"
            assert rows[name]["distribution"] == dist.name
            assert rows[name]["version"] == dist.version
            assert not rows[name].get("error"), rows[name]
    every = [arg for name in sorted(rows) for arg in ("-t", name)]
    proc = env.janito("tools", "--json", *every, cwd=tmp_path, config=tmp_path / "config")
    assert proc.returncode == 0, proc.stderr
    # A toolset may report its own state (kind "toolset": say, nothing configured yet);
    # an import failure, a name clash or a raising hook is a packaging fault.
    errors = [r for r in json.loads(proc.stdout)
              if r.get("status") == "error" and r.get("kind") != "toolset"]
    assert not errors, f"toolsets failing to load once installed: {errors}"


def test_repository_layout_is_what_the_noxfile_expects() -> None:
    assert (REPO / "noxfile.py").is_file()
    for dist in DISTS[1:]:
        assert dist.path.parent == REPO / "plugins"
        assert dist.name == f"janito-{dist.path.name.removeprefix('janito-')}"
        assert dist.path.name == dist.name, f"plugins/{dist.path.name} holds {dist.name}"
