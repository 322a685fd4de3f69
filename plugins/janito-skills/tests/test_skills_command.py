"""The hooks: ``janito skills`` registered on a real argparse parser, and the load report."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from janito_skills import _plugin
from skills_helpers import Reports, write_raw, write_skill

from janito_core import Registry, Workspace


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="janito")
    sub = parser.add_subparsers(dest="command")
    _plugin.janito_register_commands(sub)
    return parser.parse_args(list(argv))


@pytest.fixture
def skills(project: Path, user_skills: Path) -> Path:
    write_skill(project / ".janito" / "skills", "alpha", description="First skill.")
    write_skill(user_skills, "alpha", description="User alpha.")
    write_skill(user_skills, "beta", description="Second skill.")
    write_raw(project / ".janito" / "skills", "bad", "no front matter\n")
    return project


def test_hook_registers_the_skills_subcommand(skills: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    args = parse("skills", "--workspace", str(skills))
    assert args.handler is _plugin.skills_command
    assert args.handler(args) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "SOURCE", "PATH", "DESCRIPTION"]
    assert lines[1].split() == ["alpha", "project", ".janito/skills/alpha", "First", "skill."]
    assert lines[2].split()[:2] == ["beta", "user"]
    assert lines[3].startswith("alpha") and "(shadowed by project .janito/skills/alpha)" in lines[3]
    assert lines[4] == "2 skills available (1 project, 1 user), 1 shadowed, " \
                       "1 unusable SKILL.md file"
    assert ".janito/skills/bad/SKILL.md: the file does not start with a '---' line" in err


def test_json_and_strict(skills: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = parse("skills", "--json", "--strict", "--workspace", str(skills))
    assert args.handler(args) == 1
    rows = json.loads(capsys.readouterr().out)
    assert [(r["name"], r["status"]) for r in rows] == [
        ("alpha", "active"), ("beta", "active"), ("alpha", "shadowed"), (None, "error")]
    assert rows[3]["path"] == ".janito/skills/bad/SKILL.md"
    assert rows[3]["reason"].startswith("the file does not start")
    assert set(rows[0]) >= {"name", "description", "source", "origin", "path", "status"}


def test_no_skills_and_bad_workspace(project: Path, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    args = parse("skills", "--workspace", str(project))
    assert args.handler(args) == 0
    seen = capsys.readouterr()
    assert seen.out == "No skills found.\n"  # once, not again as the summary
    assert "skills found" not in seen.err.lower()
    args = parse("skills", "--workspace", str(tmp_path / "missing"))
    assert args.handler(args) == 2
    assert "is not a folder" in capsys.readouterr().err


def test_loading_the_toolset_reports_what_it_offers(skills: Path) -> None:
    registry = Registry(workspace=Workspace(skills), autoload=(), allowed=None)
    registry.toolsets()  # discovery first, so the entry-point plugins join the manager
    reports = Reports().attach(registry)
    assert registry.add_toolset("skills") == ["ListSkills", "LoadSkill", "ReadSkillResource"]
    assert reports.texts("info")[0] == (
        "Skills: 2 skills available (1 project, 1 user), 1 shadowed, 1 unusable SKILL.md file")
    assert [t for t in reports.texts("error") if ".janito/skills/bad/SKILL.md" in t]
    assert registry.load_errors == []


def test_plugin_is_advertised_and_light() -> None:
    import importlib_metadata

    points = {(ep.group, ep.name): ep.value
              for ep in importlib_metadata.distribution("janito-skills").entry_points}
    assert points[("janito.plugins", "skills")] == "janito_skills._plugin"
    assert points[("janito.toolsets", "skills")] == "janito_skills"
