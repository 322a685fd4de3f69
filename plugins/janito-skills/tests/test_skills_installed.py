"""A real skill-pack distribution: built as a wheel, installed, found, never imported.

The pack ``acme-skills`` is built with hatchling (the PEP 517 backend its authors would
use) and installed with ``uv pip install --target`` (offline: it has no dependencies);
where uv is missing, the wheel is unpacked, which is what installing a pure wheel does.
Its package raises on import, so finding its skills proves nothing imports it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from janito_skills._index import discover
from skills_helpers import write_skill

PYPROJECT = """\
[build-system]
requires = ["hatchling>=1.21"]
build-backend = "hatchling.build"

[project]
name = "acme-skills"
version = "1.2.0"
description = "Skills for acme work"
requires-python = ">=3.10"

[project.entry-points."janito.skills"]
acme = "acme_skills"
nested = "acme_pack.inner"
ghost = "acme_missing_package"
module = "acme_single"
object = "acme_skills:thing"

[tool.hatch.build.targets.wheel]
packages = ["acme_skills", "acme_pack"]

[tool.hatch.build.targets.wheel.force-include]
"acme_single.py" = "acme_single.py"
"""


def build_pack(root: Path) -> Path:
    """Write the acme-skills project in ``root`` and build its wheel; return the wheel."""
    (root / "pyproject.toml").write_text(PYPROJECT)
    package = root / "acme_skills"
    package.mkdir()
    (package / "__init__.py").write_text('raise RuntimeError("acme_skills must not be imported")\n')
    write_skill(package, "pdf-forms", description="Fill acme PDF forms.",
                body="# Acme forms\n", files={"references/guide.md": "Acme guide.\n"})
    write_skill(package, "shared", description="The acme version of shared.")
    write_raw_front = package / "broken"
    write_raw_front.mkdir()
    (write_raw_front / "SKILL.md").write_text("---\ndescription: no name here\n---\n")
    inner = root / "acme_pack" / "inner"
    inner.mkdir(parents=True)
    (root / "acme_pack" / "__init__.py").write_text('raise RuntimeError("imported")\n')
    (inner / "__init__.py").write_text('raise RuntimeError("imported")\n')
    write_skill(inner, "inner-skill", description="A skill in a sub-package.")
    (root / "acme_single.py").write_text("VALUE = 1\n")
    dist = root / "dist"
    dist.mkdir()
    code = "import sys, hatchling.build as b; print(b.build_wheel(sys.argv[1]))"
    done = subprocess.run([sys.executable, "-c", code, str(dist)], cwd=root,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return dist / done.stdout.strip().splitlines()[-1]


def install(wheel: Path, target: Path) -> str:
    """Install ``wheel`` into folder ``target``; return how."""
    uv = shutil.which(os.environ.get("UV", "uv"))
    if uv is not None:
        done = subprocess.run(
            [uv, "pip", "install", "--offline", "--no-deps", "--quiet",
             "--python", sys.executable, "--target", str(target), str(wheel)],
            capture_output=True, text=True, timeout=120, check=False,
        )
        if done.returncode == 0:
            return "uv"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target)
    return "unpacked"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder where acme-skills is installed, to put on sys.path."""
    root = tmp_path_factory.mktemp("acme-skills-src")
    wheel = build_pack(root)
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert "acme_skills/pdf-forms/SKILL.md" in names
    assert "acme_skills/pdf-forms/references/guide.md" in names
    target = tmp_path_factory.mktemp("site")
    install(wheel, target)
    assert (target / "acme_skills" / "pdf-forms" / "SKILL.md").is_file()
    assert list(target.glob("acme_skills-1.2.0.dist-info/entry_points.txt"))
    return target


@pytest.fixture
def on_path(site: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.syspath_prepend(str(site))
    yield site
    for name in [m for m in sys.modules if m.startswith(("acme_skills", "acme_pack"))]:
        del sys.modules[name]


def test_installed_pack_is_found_without_import(on_path: Path, project: Path) -> None:
    index = discover(str(project), user=False)
    skill = index.skills["pdf-forms"]
    assert (skill.source, skill.distribution) == ("installed", "acme-skills")
    assert skill.origin == "acme-skills 1.2.0 (entry point 'acme')"
    assert skill.folder == str(on_path / "acme_skills" / "pdf-forms")
    assert index.skills["inner-skill"].origin == "acme-skills 1.2.0 (entry point 'nested')"
    assert not any(m.startswith(("acme_skills", "acme_pack")) for m in sys.modules)


def test_installed_pack_problems_are_diagnostics(on_path: Path, project: Path) -> None:
    index = discover(str(project), user=False)
    errors = {d.path: d.message for d in index.errors()}
    assert errors == {
        str(on_path / "acme_skills" / "broken" / "SKILL.md"): "the front matter has no 'name'",
        "janito.skills:ghost": "skill pack 'ghost' of acme-skills cannot be used: "
                               "package 'acme_missing_package' is not installed",
        "janito.skills:module": "skill pack 'module' of acme-skills cannot be used: "
                                "'acme_single' is a module, not a package folder holding "
                                "skill folders",
        "janito.skills:object": "skill pack 'object' of acme-skills cannot be used: the entry "
                                "point value 'acme_skills:thing' must be a dotted package name "
                                "such as 'acme_skills'",
    }
    assert all(d.distribution == "acme-skills" for d in index.errors())


def test_installed_loses_to_user_and_project(on_path: Path, project: Path,
                                             user_skills: Path) -> None:
    write_skill(user_skills, "pdf-forms", description="The user's pdf-forms.")
    write_skill(project / ".agents" / "skills", "shared", description="The project's shared.")
    index = discover(str(project))
    assert index.skills["pdf-forms"].source == "user"
    assert index.skills["shared"].source == "project"
    hidden = {(h.name, h.source, w.source) for h, w in index.shadowed}
    assert hidden == {("pdf-forms", "installed", "user"), ("shared", "installed", "project")}


def test_tools_read_an_installed_skill(on_path: Path, janito: Any) -> None:
    janito.load("skills", privileges="r")
    loaded = janito.call("LoadSkill", name="pdf-forms")
    assert loaded["source"] == "installed"
    assert loaded["resources"] == ["references/guide.md"]
    assert loaded["origin"].startswith("acme-skills 1.2.0")
    guide = janito.call("ReadSkillResource", skill_name="pdf-forms",
                        resource_path="references/guide.md")
    assert guide["content"] == "Acme guide.\n"
    outside = janito.call("ReadSkillResource", skill_name="pdf-forms",
                          resource_path="../__init__.py")
    assert outside["error_type"] == "outside_skill"
    assert "acme_skills" not in sys.modules


def _env(site: Path, config: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    env["JANITO_CONFIG_DIR"] = str(config)
    env["NO_COLOR"] = "1"
    env.pop("JANITO_TOOLSETS", None)
    env.pop("JANITO_PLUGINS", None)
    return env


def test_list_skills_harness_in_a_fresh_process(site: Path, project: Path,
                                                janito_isolated: Path) -> None:
    write_skill(project / ".janito" / "skills", "local")
    done = subprocess.run(
        [sys.executable, "-m", "janito_skills.list_skills", "--json",
         "--workspace", str(project)],
        capture_output=True, text=True, timeout=60, env=_env(site, janito_isolated), check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert {(s["name"], s["source"]) for s in result["skills"]} >= {
        ("local", "project"), ("pdf-forms", "installed"), ("inner-skill", "installed")}
    assert "Skills: " in done.stderr
    assert "acme_skills/broken/SKILL.md: the front matter has no 'name'" in done.stderr


def _janito() -> str | None:
    candidate = Path(sys.executable).with_name("janito")
    return str(candidate) if candidate.exists() else shutil.which("janito")


@pytest.mark.skipif(_janito() is None, reason="the janito command is not installed")
def test_janito_skills_command_sees_the_pack(site: Path, project: Path,
                                             janito_isolated: Path) -> None:
    write_skill(project / ".janito" / "skills", "shared")
    done = subprocess.run(
        [_janito(), "skills", "--json", "--workspace", str(project)],
        capture_output=True, text=True, timeout=60, env=_env(site, janito_isolated), check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    by_key = {(r["name"], r["status"]): r for r in rows}
    assert by_key[("shared", "active")]["source"] == "project"
    assert by_key[("shared", "shadowed")]["distribution"] == "acme-skills"
    assert by_key[("shared", "shadowed")]["shadowed_by"] == {
        "source": "project", "path": ".janito/skills/shared"}
    assert by_key[("pdf-forms", "active")]["source"] == "installed"
    errors = [r for r in rows if r["status"] == "error"]
    assert len(errors) == 4 and all(r["name"] is None for r in errors)
    assert "Skill not loaded:" in done.stderr

    strict = subprocess.run(
        [_janito(), "skills", "--strict", "--workspace", str(project)],
        capture_output=True, text=True, timeout=60, env=_env(site, janito_isolated), check=False,
    )
    assert strict.returncode == 1
    header, *lines = strict.stdout.splitlines()
    assert header.split() == ["NAME", "SOURCE", "PATH", "DESCRIPTION"]
    assert any(line.startswith("shared") and "(shadowed by project .janito/skills/shared)"
               in line for line in lines)
    assert lines[-1] == "3 skills available (1 project, 2 installed), 1 shadowed, " \
                        "4 unusable SKILL.md files"
