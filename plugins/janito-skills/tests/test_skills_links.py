"""Links in skill folders: followed while they stay in the skill's folder, refused when they
lead out of it (the SKILL.md too), for project, user and installed skills alike; and a
folder swapped for a link while the tools run leads nowhere outside."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from janito_skills._index import discover
from skills_helpers import write_skill

from janito_core.testing import FolderSwapper

SECRET = "top-secret-content-outside-the-skill"
SKILL_TEXT = f"---\nname: demo\ndescription: Outside.\n---\n{SECRET}\n"


def _no_secret(result: dict[str, Any]) -> None:
    assert SECRET not in json.dumps(result), result


@pytest.fixture
def loaded(janito: Any) -> Any:
    janito.load("skills", privileges="r")
    return janito


def _link_skill_file(skill: Path, target: Path | str) -> None:
    (skill / "SKILL.md").unlink()
    os.symlink(target, skill / "SKILL.md")


@pytest.mark.parametrize("where", ["workspace", "outside"])
def test_a_skill_md_linked_out_of_its_folder_is_refused(loaded: Any, project: Path,
                                                        tmp_path: Path, where: str) -> None:
    """Issue 16: LoadSkill followed a SKILL.md that is a link to a file outside the skill
    folder. Out of the folder is refused, whether the target is in the project or not."""
    base = project if where == "workspace" else tmp_path
    (base / "elsewhere.md").write_text(SKILL_TEXT, encoding="utf-8")
    skill = write_skill(project / ".janito" / "skills", "demo")
    _link_skill_file(skill, base / "elsewhere.md")
    listed = loaded.call("ListSkills")
    _no_secret(listed)
    assert listed["count"] == 0
    (problem,) = listed["diagnostics"]
    assert problem["path"] == ".janito/skills/demo/SKILL.md"
    assert "symbolic link leading outside the skill's folder" in problem["message"]
    result = loaded.call("LoadSkill", name="demo")
    _no_secret(result)
    assert (result["success"], result["error_type"]) == (False, "invalid_skill")
    assert "outside the skill's folder" in result["error"]
    resource = loaded.call("ReadSkillResource", skill_name="demo", resource_path="SKILL.md")
    _no_secret(resource)
    assert resource["success"] is False


def test_a_skill_md_linked_inside_its_folder_is_followed(loaded: Any, project: Path) -> None:
    skill = write_skill(project / ".janito" / "skills", "demo", body="Inside body.\n",
                        files={"docs/real.md": ""})
    os.replace(skill / "SKILL.md", skill / "docs" / "real.md")
    os.symlink("docs/real.md", skill / "SKILL.md")
    result = loaded.call("LoadSkill", name="demo")
    assert result["success"] is True, result
    assert result["instructions"] == "Inside body.\n"
    assert result["resources"] == ["docs/real.md"]


def test_a_skill_md_link_loop_is_a_diagnostic(project: Path) -> None:
    skill = write_skill(project / ".janito" / "skills", "demo")
    (skill / "SKILL.md").unlink()
    os.symlink("SKILL.md", skill / "SKILL.md")
    index = discover(str(project), user=False, installed=False)
    (problem,) = index.diagnostics
    assert "loop of symbolic links" in problem.message and problem.skill == "demo"


def test_user_skills_follow_the_same_rule(loaded: Any, user_skills: Path,
                                          tmp_path: Path) -> None:
    """A user's skill folder may itself be a link (the configuration is the user's), but
    links in it that lead out of it are refused as in a project skill."""
    (tmp_path / "secret.md").write_text(SKILL_TEXT, encoding="utf-8")
    (tmp_path / "secret.txt").write_text(SECRET, encoding="utf-8")
    stored = write_skill(tmp_path / "dotfiles", "kept", files={"a.md": "A"})
    os.symlink(stored, user_skills / "kept")
    os.symlink(tmp_path / "secret.txt", stored / "leak.txt")
    os.symlink("../../secret.txt", stored / "leak-relative.txt")
    linked = write_skill(user_skills, "demo")
    _link_skill_file(linked, tmp_path / "secret.md")

    assert loaded.call("ReadSkillResource", skill_name="kept", resource_path="a.md")[
        "content"] == "A"
    for resource in ("leak.txt", "leak-relative.txt"):
        result = loaded.call("ReadSkillResource", skill_name="kept", resource_path=resource)
        _no_secret(result)
        assert result["error_type"] == "outside_skill", result
    assert loaded.call("LoadSkill", name="kept")["resources"] == ["a.md"]
    demo = loaded.call("LoadSkill", name="demo")
    _no_secret(demo)
    assert demo["error_type"] == "invalid_skill"


def test_installed_skill_resources_stay_in_the_skill_folder(loaded: Any, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    from janito_skills import _index

    pack = tmp_path / "site" / "acme_skills"
    skill = write_skill(pack, "pack-skill", files={"guide.md": "Guide.\n"})
    (pack / "sibling.txt").write_text(SECRET, encoding="utf-8")
    os.symlink("../sibling.txt", skill / "sibling.txt")
    root = _index.SkillRoot("installed", str(pack), "acme-skills 1.0", "acme-skills")
    monkeypatch.setattr(_index, "installed_roots", lambda diagnostics: [root])
    assert loaded.call("ReadSkillResource", skill_name="pack-skill",
                       resource_path="guide.md")["content"] == "Guide.\n"
    result = loaded.call("ReadSkillResource", skill_name="pack-skill",
                         resource_path="sibling.txt")
    _no_secret(result)
    assert result["error_type"] == "outside_skill"
    assert loaded.call("LoadSkill", name="pack-skill")["resources"] == ["guide.md"]


# -- races: a folder swapped for a link to outside while the tools run ------------------


ROUNDS = 300


def test_a_resource_folder_swapped_for_a_link_out_is_never_read_through(
        loaded: Any, project: Path, tmp_path: Path) -> None:
    skill = write_skill(project / ".janito" / "skills", "demo",
                        files={"references/forms.md": "inside\n"})
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "forms.md").write_text(SECRET, encoding="utf-8")
    outcomes: dict[str, set[str]] = {state: set() for state in FolderSwapper.STATES}
    with FolderSwapper(skill / "references", outside) as swapper:
        for state in swapper.rounds(ROUNDS):
            result = loaded.call("ReadSkillResource", skill_name="demo",
                                 resource_path="references/forms.md")
            _no_secret(result)
            outcomes[state].add("read" if result["success"] else result["error_type"])
            if result["success"]:
                assert result["content"] == "inside\n"
    assert swapper.errors == []
    assert outcomes["folder"] == {"read"} and "read" not in outcomes["link"], outcomes


def test_a_skill_folder_swapped_for_a_link_out_is_never_read_through(
        loaded: Any, project: Path, tmp_path: Path) -> None:
    skill = write_skill(project / ".janito" / "skills", "demo", body="Inside.\n",
                        files={"a.md": "inside\n"})
    outside = tmp_path / "outside-demo"
    outside.mkdir()
    (outside / "SKILL.md").write_text(SKILL_TEXT, encoding="utf-8")
    (outside / "a.md").write_text(SECRET, encoding="utf-8")
    (outside / f"{SECRET}.md").write_text(SECRET, encoding="utf-8")
    with FolderSwapper(skill, outside) as swapper:
        for round_, _state in enumerate(swapper.rounds(ROUNDS * 2 // 3)):
            if round_ % 2:
                result = loaded.call("LoadSkill", name="demo")
            else:
                result = loaded.call("ReadSkillResource", skill_name="demo", resource_path="a.md")
            _no_secret(result)
    assert swapper.swaps > 0 and swapper.errors == []


def test_a_dangling_skill_md_link_is_a_diagnostic(project: Path) -> None:
    skill = write_skill(project / ".janito" / "skills", "demo")
    _link_skill_file(skill, "nowhere.md")
    index = discover(str(project), user=False, installed=False)
    (problem,) = index.diagnostics
    assert (problem.message, problem.skill) == ("SKILL.md must be a regular file", "demo")
