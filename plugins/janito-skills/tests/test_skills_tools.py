"""The three tools, called as a model calls them (through dispatch), on real folders."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import pytest
from skills_helpers import Reports, write_raw, write_skill

SECRET = "top-secret-content-outside-the-skill"


@pytest.fixture
def loaded(janito: Any, project: Path, user_skills: Path) -> Any:
    write_skill(
        project / ".janito" / "skills", "pdf",
        description="Fill PDF forms. Use when a PDF form is mentioned.",
        body="# PDF forms\n\nRead references/forms.md first.\n",
        files={
            "references/forms.md": "How to fill forms.\n",
            "scripts/fill.py": "print('fill')\n",
            "assets/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe",
            ".git/config": "hidden",
            "__pycache__/x.pyc": b"\x00",
        },
    )
    write_skill(user_skills, "pdf", description="The user's pdf skill.")
    write_skill(user_skills, "notes", description="Take notes.", body="Write notes.\n")
    write_raw(project / ".agents" / "skills", "broken", "---\nname: broken\n")
    janito.load("skills", privileges="r")
    janito.reports = Reports().attach(janito.registry)
    return janito


def test_toolset_loads_three_read_only_tools(janito: Any) -> None:
    registry = janito.load("skills", privileges="r")
    assert registry.get_all_tool_permissions() == {
        "ListSkills": "r", "LoadSkill": "r", "ReadSkillResource": "r"}
    assert registry.load_errors == []
    denied = janito.load("skills", privileges="")
    assert denied.names() == []
    assert set(denied.skipped()) == {"ListSkills", "LoadSkill", "ReadSkillResource"}


def test_schemas_describe_every_parameter(janito: Any) -> None:
    registry = janito.load("skills", privileges="r")
    schema = registry.get_function_schema("ReadSkillResource")["function"]
    properties = schema["parameters"]["properties"]
    assert set(properties) == {"skill_name", "resource_path", "max_bytes"}
    assert all(p.get("description") for p in properties.values())
    assert schema["parameters"]["required"] == ["skill_name", "resource_path"]
    assert registry.get_function_schema("ListSkills")["function"]["parameters"]["properties"] == {}


def test_list_skills(loaded: Any, project: Path, user_skills: Path) -> None:
    result = loaded.call("ListSkills")
    assert result["success"] is True
    json.dumps(result)
    assert result["count"] == 2
    assert result["skills"] == [
        {"name": "notes", "description": "Take notes.", "source": "user",
         "origin": "user config folder", "path": str(user_skills / "notes")},
        {"name": "pdf", "description": "Fill PDF forms. Use when a PDF form is mentioned.",
         "source": "project", "origin": ".janito/skills", "path": ".janito/skills/pdf"},
    ]
    assert result["shadowed"] == [{
        "name": "pdf", "source": "user", "path": str(user_skills / "pdf"),
        "shadowed_by": {"source": "project", "path": ".janito/skills/pdf"},
    }]
    assert result["diagnostics"] == [{
        "level": "error", "path": ".agents/skills/broken/SKILL.md", "source": "project",
        "message": "the front matter is never closed: no '---' line follows the opening one",
    }]
    assert result["precedence"].startswith("project")


def test_list_skills_reports_what_is_loaded(loaded: Any) -> None:
    loaded.call("ListSkills")
    info = loaded.reports.texts("info")
    assert info[0] == "Skills: 2 skills available (1 project, 1 user), 1 shadowed, " \
                      "1 unusable SKILL.md file"
    assert any("shadowed by .janito/skills/pdf (project)" in t for t in info)
    assert loaded.reports.texts("error") == [
        "Skill not loaded: .agents/skills/broken/SKILL.md: the front matter is never closed: "
        "no '---' line follows the opening one"]


def test_load_skill(loaded: Any) -> None:
    result = loaded.call("LoadSkill", name="pdf")
    assert result["success"] is True
    assert result["instructions"] == "# PDF forms\n\nRead references/forms.md first.\n"
    assert result["resources"] == ["assets/logo.png", "references/forms.md", "scripts/fill.py"]
    assert result["resources_truncated"] is False
    assert (result["source"], result["path"]) == ("project", ".janito/skills/pdf")
    assert result["front_matter"]["name"] == "pdf"
    assert "ReadSkillResource" in result["hint"]
    assert loaded.reports.texts("info") == [
        "Loaded skill 'pdf' (project) from .janito/skills/pdf with 3 resource files"]


def test_load_skill_from_a_json_string_as_a_model_sends_it(loaded: Any) -> None:
    result = loaded.call("LoadSkill", '{"name": "notes"}')
    assert (result["success"], result["instructions"], result["resources"]) == (
        True, "Write notes.\n", [])
    assert "hint" not in result


def test_load_skill_unknown_and_broken(loaded: Any) -> None:
    result = loaded.call("LoadSkill", name="pfd")
    assert result["success"] is False
    assert result["error_type"] == "not_found"
    assert result["suggestions"] == ["pdf"]
    assert result["available"] == ["notes", "pdf"]
    broken = loaded.call("LoadSkill", name="broken")
    assert broken["error_type"] == "invalid_skill"
    assert broken["path"] == ".agents/skills/broken/SKILL.md"
    assert "never closed" in broken["error"]
    missing = loaded.call("LoadSkill", {})
    assert missing["error_type"] == "invalid_arguments"


def test_load_skill_lists_links_inside_but_not_links_out(loaded: Any, project: Path,
                                                         tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text(SECRET)
    skill = project / ".janito" / "skills" / "pdf"
    os.symlink(outside, skill / "references" / "escape.md")
    os.symlink(tmp_path, skill / "escape-dir")
    os.symlink(skill / "references" / "forms.md", skill / "forms-link.md")
    result = loaded.call("LoadSkill", name="pdf")
    assert result["resources"] == [
        "forms-link.md", "assets/logo.png", "references/forms.md", "scripts/fill.py"]


def test_many_resources_are_listed_up_to_a_bound(janito: Any, project: Path) -> None:
    files = {f"data/{n:04}.txt": "x" for n in range(510)}
    write_skill(project / ".janito" / "skills", "many", files=files)
    janito.load("skills", privileges="r")
    result = janito.call("LoadSkill", name="many")
    assert len(result["resources"]) == 500
    assert result["resources"][0] == "data/0000.txt"
    assert result["resources_truncated"] is True


def test_read_resource(loaded: Any) -> None:
    result = loaded.call("ReadSkillResource", skill_name="pdf",
                         resource_path="references/forms.md")
    assert result == {
        "success": True, "skill_name": "pdf", "resource_path": "references/forms.md",
        "path": ".janito/skills/pdf/references/forms.md", "encoding": "utf-8",
        "content": "How to fill forms.\n", "size": 19, "truncated": False,
    }
    same = loaded.call("ReadSkillResource", skill_name="pdf",
                       resource_path="./references//forms.md")
    assert same["content"] == "How to fill forms.\n"
    skill_md = loaded.call("ReadSkillResource", skill_name="pdf", resource_path="SKILL.md")
    assert skill_md["content"].startswith("---\nname: pdf\n")


def test_read_resource_binary_and_truncated(loaded: Any, project: Path) -> None:
    png = loaded.call("ReadSkillResource", skill_name="pdf", resource_path="assets/logo.png")
    assert png["encoding"] == "base64"
    assert base64.b64decode(png["content"]) == (
        project / ".janito/skills/pdf/assets/logo.png").read_bytes()
    part = loaded.call("ReadSkillResource", skill_name="pdf",
                       resource_path="references/forms.md", max_bytes=4)
    assert (part["content"], part["truncated"], part["size"]) == ("How ", True, 19)
    (project / ".janito/skills/pdf/accents.md").write_text("déjà vu", encoding="utf-8")
    cut = loaded.call("ReadSkillResource", skill_name="pdf", resource_path="accents.md",
                      max_bytes=2)
    assert (cut["content"], cut["encoding"], cut["truncated"]) == ("d", "utf-8", True)


@pytest.mark.parametrize("max_bytes", [0, -1, 5_000_001])
def test_read_resource_bad_max_bytes(loaded: Any, max_bytes: int) -> None:
    result = loaded.call("ReadSkillResource", skill_name="pdf",
                         resource_path="references/forms.md", max_bytes=max_bytes)
    assert result["error_type"] == "invalid_arguments"


def test_read_resource_missing_and_folder(loaded: Any) -> None:
    missing = loaded.call("ReadSkillResource", skill_name="pdf", resource_path="nope.md")
    assert (missing["success"], missing["error_type"]) == (False, "not_found")
    folder = loaded.call("ReadSkillResource", skill_name="pdf", resource_path="references")
    assert folder["error_type"] == "is_directory"
    unknown = loaded.call("ReadSkillResource", skill_name="nope", resource_path="x.md")
    assert unknown["error_type"] == "not_found"
    assert unknown["resource_path"] == "x.md"


# -- confinement: each way out is refused ---------------------------------------------


def _refused(result: dict[str, Any]) -> None:
    assert result["success"] is False, result
    assert result["error_type"] == "outside_skill", result
    assert SECRET not in json.dumps(result)
    assert "content" not in result


@pytest.fixture
def secret(project: Path) -> Path:
    """A file beside the skill folders, and one outside the workspace."""
    inside_project = project / "secret.txt"
    inside_project.write_text(SECRET)
    return inside_project


@pytest.mark.parametrize("resource_path", [
    "../notes/SKILL.md",
    "../../../secret.txt",
    "references/../../../../secret.txt",
    "..",
    "references/..",
    "..\\..\\..\\secret.txt",
])
def test_dot_dot_is_refused(loaded: Any, secret: Path, resource_path: str) -> None:
    result = loaded.call("ReadSkillResource", skill_name="pdf", resource_path=resource_path)
    _refused(result)
    assert "'..'" in result["error"]


def test_absolute_paths_are_refused(loaded: Any, secret: Path, project: Path) -> None:
    for resource_path in (str(secret), "/etc/passwd", "\\etc\\passwd", "C:\\Windows\\win.ini",
                          str(project / ".janito/skills/pdf/references/forms.md")):
        result = loaded.call("ReadSkillResource", skill_name="pdf", resource_path=resource_path)
        _refused(result)
        assert "absolute paths are refused" in result["error"]


def test_symlinks_out_are_refused(loaded: Any, secret: Path, project: Path,
                                  tmp_path: Path) -> None:
    skill = project / ".janito" / "skills" / "pdf"
    os.symlink(secret, skill / "link-to-secret.txt")
    os.symlink(secret.parent, skill / "link-to-project")
    os.symlink("../../../secret.txt", skill / "references" / "relative-link.txt")
    os.symlink("/", skill / "root")
    for resource_path in ("link-to-secret.txt", "link-to-project/secret.txt",
                          "references/relative-link.txt", "root/etc/passwd"):
        result = loaded.call("ReadSkillResource", skill_name="pdf", resource_path=resource_path)
        _refused(result)
        assert "symbolic link" in result["error"]


def test_symlink_inside_the_skill_is_followed(loaded: Any, project: Path) -> None:
    skill = project / ".janito" / "skills" / "pdf"
    os.symlink("references/forms.md", skill / "forms-link.md")
    os.symlink("references", skill / "refs")
    for resource_path in ("forms-link.md", "refs/forms.md"):
        result = loaded.call("ReadSkillResource", skill_name="pdf", resource_path=resource_path)
        assert result["content"] == "How to fill forms.\n"
        assert result["path"] == ".janito/skills/pdf/references/forms.md"


def test_a_symlinked_skill_folder_confines_to_its_target(janito: Any, project: Path,
                                                         tmp_path: Path) -> None:
    target = write_skill(project / "store", "linked", files={"a.md": "A"})
    (project / "store" / "neighbour.txt").write_text(SECRET)
    os.symlink("../neighbour.txt", target / "next-door.txt")  # inside the project, not the skill
    skills = project / ".janito" / "skills"
    skills.mkdir(parents=True)
    os.symlink(target, skills / "linked")
    janito.load("skills", privileges="r")
    assert janito.call("ReadSkillResource", skill_name="linked", resource_path="a.md")[
        "content"] == "A"
    _refused(janito.call("ReadSkillResource", skill_name="linked",
                         resource_path="../neighbour.txt"))
    _refused(janito.call("ReadSkillResource", skill_name="linked",
                         resource_path="next-door.txt"))
    assert janito.call("LoadSkill", name="linked")["resources"] == ["a.md"]


def test_a_skill_folder_linked_out_of_the_project_is_refused(janito: Any, project: Path,
                                                            tmp_path: Path) -> None:
    target = write_skill(tmp_path / "store", "linked", body=SECRET, files={"a.md": SECRET})
    skills = project / ".janito" / "skills"
    skills.mkdir(parents=True)
    os.symlink(target, skills / "linked")
    janito.load("skills", privileges="r")
    loaded = janito.call("LoadSkill", name="linked")
    assert (loaded["success"], loaded["error_type"]) == (False, "invalid_skill")
    assert "outside the workspace" in loaded["error"] and SECRET not in json.dumps(loaded)
    read = janito.call("ReadSkillResource", skill_name="linked", resource_path="a.md")
    assert read["success"] is False and SECRET not in json.dumps(read)
    assert janito.call("ListSkills")["count"] == 0


def test_a_fifo_is_refused_without_blocking(loaded: Any, project: Path) -> None:
    os.mkfifo(project / ".janito" / "skills" / "pdf" / "pipe")
    result = loaded.call("ReadSkillResource", skill_name="pdf", resource_path="pipe")
    assert (result["success"], result["error_type"]) == (False, "not_a_file")
    assert "pipe" not in loaded.call("LoadSkill", name="pdf")["resources"]


def test_nul_and_empty_paths(loaded: Any) -> None:
    for resource_path in ("refs\x00.md", "", "   "):
        result = loaded.call("ReadSkillResource", skill_name="pdf", resource_path=resource_path)
        assert result["success"] is False
        assert result["error_type"] == "invalid_arguments"
