"""Finding skills: sources, precedence, shadowing and diagnostics, with real folders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from janito_skills._index import discover, package_folders, summary
from skills_helpers import write_raw, write_skill


def test_project_user_precedence_and_shadowing(project: Path, user_skills: Path) -> None:
    write_skill(project / ".janito" / "skills", "shared", description="From .janito.")
    write_skill(project / ".agents" / "skills", "shared", description="From .agents.")
    write_skill(project / ".agents" / "skills", "agents-only")
    write_skill(user_skills, "shared", description="From the user.")
    write_skill(user_skills, "user-only")

    index = discover(str(project), installed=False)

    assert list(index.skills) == ["agents-only", "shared", "user-only"]
    shared = index.skills["shared"]
    assert (shared.source, shared.origin, shared.description) == (
        "project", ".janito/skills", "From .janito.")
    assert index.skills["user-only"].source == "user"
    hidden = [(h.origin, w.origin) for h, w in index.shadowed]
    assert hidden == [(".agents/skills", ".janito/skills"), ("user config folder", ".janito/skills")]
    assert index.diagnostics == []
    rows = index.rows()
    shadowed_rows = [r for r in rows if r["status"] == "shadowed"]
    assert {r["path"] for r in shadowed_rows} == {
        ".agents/skills/shared", str(user_skills / "shared")}
    assert all(r["shadowed_by"] == {"source": "project", "path": ".janito/skills/shared"}
               for r in shadowed_rows)
    assert summary(index) == "3 skills available (2 project, 1 user), 2 shadowed"


def test_same_name_in_one_folder_first_folder_wins(project: Path) -> None:
    skills = project / ".janito" / "skills"
    write_skill(skills, "b-second", name="dup", description="second")
    write_skill(skills, "a-first", name="dup", description="first")
    index = discover(str(project), user=False, installed=False)
    assert index.skills["dup"].description == "first"
    assert [h.description for h, _ in index.shadowed] == ["second"]


def test_no_sources_at_all(project: Path) -> None:
    index = discover(str(project), installed=False)
    assert index.skills == {} and index.diagnostics == []
    assert summary(index) == "no skills found"


MALFORMED = {
    "no-front-matter": ("# Just markdown\n", "does not start with a '---' line"),
    "unclosed": ("---\nname: unclosed\ndescription: x\n", "never closed"),
    "bad-yaml": ("---\nname: bad-yaml\ndescription: Use when: x\n---\n", "not valid YAML"),
    "a-list": ("---\n- name\n---\n", "must be a mapping"),
    "no-name": ("---\ndescription: nameless\n---\n", "has no 'name'"),
    "no-description": ("---\nname: no-description\n---\n", "has no 'description'"),
    "number-name": ("---\nname: 12\ndescription: x\n---\n", "the number 12 (quote it)"),
    "bool-description": ("---\nname: bool-description\ndescription: yes\n---\n",
                         "the boolean true (quote it)"),
    "empty-description": ("---\nname: empty-description\ndescription: ''\n---\n",
                          "non-empty string"),
    "empty": ("", "the file is empty"),
}


def test_each_malformed_skill_is_a_diagnostic_naming_its_file(project: Path) -> None:
    skills = project / ".janito" / "skills"
    write_skill(skills, "good")
    for folder, (content, _) in MALFORMED.items():
        write_raw(skills, folder, content)
    (skills / "binary").mkdir()
    (skills / "binary" / "SKILL.md").write_bytes(b"---\nname: \xff\n---\n")

    index = discover(str(project), user=False, installed=False)

    assert list(index.skills) == ["good"]
    by_folder = {Path(d.path).parent.name: d for d in index.diagnostics}
    assert set(by_folder) == {*MALFORMED, "binary"}
    for folder, (_, expected) in MALFORMED.items():
        diagnostic = by_folder[folder]
        assert diagnostic.level == "error"
        assert diagnostic.path == str(skills / folder / "SKILL.md")
        assert expected in diagnostic.message, (folder, diagnostic.message)
        assert diagnostic.text(str(project)).startswith(f".janito/skills/{folder}/SKILL.md: ")
    assert "not valid UTF-8" in by_folder["binary"].message
    assert summary(index) == "1 skill available (1 project), 11 unusable SKILL.md files"
    assert index.problem_for("bad-yaml") is by_folder["bad-yaml"]


def test_doubtful_skills_load_with_warnings(project: Path) -> None:
    skills = project / ".janito" / "skills"
    write_skill(skills, "folder-name", name="other-name")
    write_skill(skills, "Upper", name="Upper")
    write_skill(skills, "long", description="x" * 1100)
    index = discover(str(project), user=False, installed=False)
    assert set(index.skills) == {"other-name", "Upper", "long"}
    assert index.errors() == []
    messages = {Path(d.path).parent.name: d.message for d in index.diagnostics}
    assert "differs from its folder name 'folder-name'" in messages["folder-name"]
    assert "lowercase letters" in messages["Upper"]
    assert "longer than 1024" in messages["long"]
    assert index.skills["Upper"].as_row()["warnings"]


def test_folders_that_are_not_skills(project: Path) -> None:
    skills = project / ".janito" / "skills"
    (skills / "no-skill-file").mkdir(parents=True)
    (skills / "no-skill-file" / "README.md").write_text("x")
    (skills / "lowercase").mkdir()
    (skills / "lowercase" / "skill.md").write_text("---\nname: lowercase\ndescription: x\n---\n")
    (skills / "dir-skill" / "SKILL.md").mkdir(parents=True)
    write_skill(skills, ".hidden")
    write_skill(skills, "__pycache__")
    (skills / "loose-file.md").write_text("x")
    index = discover(str(project), user=False, installed=False)
    assert index.skills == {}
    messages = {Path(d.path).parent.name: d.message for d in index.diagnostics}
    assert messages == {
        "lowercase": "the file must be named exactly 'SKILL.md'",
        "dir-skill": "SKILL.md must be a regular file",
    }


def test_a_skills_path_that_is_a_file(project: Path) -> None:
    (project / ".janito").mkdir()
    (project / ".janito" / "skills").write_text("not a folder")
    index = discover(str(project), user=False, installed=False)
    assert [d.message for d in index.diagnostics] == ["a skills folder was expected here"]


def test_symlinked_skill_folder(project: Path, tmp_path: Path) -> None:
    """A project skill folder may be a link to a folder elsewhere in the project; one
    leading out of the project is refused with a diagnostic, as any path out is."""
    inside = write_skill(project / "shared-skills", "linked")
    elsewhere = write_skill(tmp_path / "shared-skills", "out")
    skills = project / ".janito" / "skills"
    skills.mkdir(parents=True)
    os.symlink(inside, skills / "linked")
    os.symlink(elsewhere, skills / "out")
    index = discover(str(project), user=False, installed=False)
    assert list(index.skills) == ["linked"]
    assert index.skills["linked"].as_row(str(project))["path"] == ".janito/skills/linked"
    (problem,) = index.diagnostics
    assert (problem.level, problem.skill) == ("error", "out")
    assert problem.as_dict(str(project))["path"] == ".janito/skills/out"
    assert "leading outside the workspace" in problem.message


def test_package_folders_refuses_bad_values() -> None:
    with pytest.raises(LookupError, match="dotted package name"):
        package_folders("pkg:attr")
    with pytest.raises(LookupError, match="not installed"):
        package_folders("janito_skills_no_such_package_here")
    with pytest.raises(LookupError, match="is a module, not a package"):
        package_folders("janito_skills._index")
    with pytest.raises(LookupError, match="is a module, not a package"):
        package_folders("janito_skills._index.deeper")
    assert package_folders("janito_skills") == [
        os.path.dirname(os.path.abspath(__import__("janito_skills").__file__))]
