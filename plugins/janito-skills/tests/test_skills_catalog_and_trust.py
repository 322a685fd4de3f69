"""What the Agent Skills format and its clients expect: the catalog in LoadSkill's
description, discovery in .agents and .claude folders, trust before a project's skills are
offered, the optional front-matter fields."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest
from janito_skills import _plugin
from janito_skills._index import allowed_tools, discover
from skills_helpers import write_skill


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="janito")
    sub = parser.add_subparsers(dest="command")
    _plugin.janito_register_commands(sub)
    return parser.parse_args(list(argv))


def janito_skills(*argv: str) -> int:
    args = parse("skills", *argv)
    return int(args.handler(args))


# -- discovery: folders, order, shadowing --------------------------------------------------


def test_project_and_user_folders_in_their_documented_order(
        project: Path, user_skills: Path, home: Path) -> None:
    for folder, origin in ((".janito/skills", "janito"), (".agents/skills", "agents"),
                           (".claude/skills", "claude")):
        write_skill(project / folder, "shared", description=f"Project {origin}.")
        write_skill(project / folder, f"only-{origin}", description=f"Only in {folder}.")
    for base, origin in ((user_skills, "config"), (home / ".agents/skills", "home-agents"),
                         (home / ".claude/skills", "home-claude")):
        write_skill(base, "mine", description=f"User {origin}.")
        write_skill(base, f"user-{origin}", description=f"From {origin}.")
    index = discover(str(project), installed=False)
    assert index.skills["shared"].description == "Project janito."
    assert index.skills["mine"].description == "User config."
    assert {"only-janito", "only-agents", "only-claude", "user-config", "user-home-agents",
            "user-home-claude"} <= set(index.skills)
    assert index.skills["only-claude"].origin == ".claude/skills"
    assert index.skills["user-home-claude"].origin == "~/.claude/skills"
    assert sorted(h.description for h, _ in index.shadowed) == [
        "Project agents.", "Project claude.", "User home-agents.", "User home-claude."]


def test_a_project_that_is_the_home_folder_is_read_once_as_the_user_s(
        janito: Any, home: Path) -> None:
    write_skill(home / ".agents/skills", "at-home", description="In the home folder.")
    index = discover(str(home), installed=False)
    assert index.skills["at-home"].source == "user" and index.untrusted == []
    assert [s.name for s in index.skills.values()].count("at-home") == 1 and not index.shadowed


# -- trust -------------------------------------------------------------------------------


def test_a_project_s_skills_wait_for_trust(untrusted_project: Path, user_skills: Path,
                                           janito: Any, capsys: pytest.CaptureFixture[str]
                                           ) -> None:
    write_skill(untrusted_project / ".agents/skills", "deploy", description="Deploys things.")
    write_skill(untrusted_project / ".claude/skills", "notes", description="Project notes.")
    write_skill(user_skills, "notes", description="The user's notes.")
    janito.load("skills", privileges="r")

    listing = janito.call("ListSkills")
    assert [s["name"] for s in listing["skills"]] == ["notes"]
    assert listing["skills"][0]["description"] == "The user's notes."  # not shadowed
    assert listing["untrusted"] == 2 and "janito skills trust" in listing["note"]
    refused = janito.call("LoadSkill", name="deploy")
    assert refused["error_type"] == "not_trusted" and "janito skills trust" in refused["error"]
    assert janito.call("ReadSkillResource", skill_name="deploy",
                       resource_path="SKILL.md")["error_type"] == "not_trusted"
    description = janito.registry.schema("LoadSkill").description
    assert "deploy" not in description and "2 skills of this project are not offered" in description

    assert janito_skills("--workspace", str(untrusted_project)) == 0
    table = capsys.readouterr().out
    assert "deploy" in table and "not offered until this project is trusted" in table
    assert janito_skills("--workspace", str(untrusted_project), "--json") == 0
    rows = json.loads(capsys.readouterr().out)
    statuses = {(r["name"], r["status"]) for r in rows if r["name"]}
    assert statuses == {("notes", "active"), ("notes", "untrusted"), ("deploy", "untrusted")}

    assert janito_skills("trust", str(untrusted_project)) == 0
    assert "Trusted" in capsys.readouterr().out
    loaded = janito.call("LoadSkill", name="deploy")
    assert loaded["success"] is True and loaded["source"] == "project"
    assert janito.call("LoadSkill", name="notes")["description"] == "Project notes."
    assert janito_skills("trust", str(untrusted_project)) == 0
    assert "already trusted" in capsys.readouterr().out

    assert janito_skills("untrust", str(untrusted_project)) == 0
    assert janito.call("LoadSkill", name="deploy")["error_type"] == "not_trusted"


def test_trusting_a_folder_trusts_the_folders_below(untrusted_project: Path, janito: Any,
                                                     tmp_path: Path) -> None:
    from janito_skills._trust import is_trusted, trust, trust_file

    inner = untrusted_project / "services" / "api"
    inner.mkdir(parents=True)
    assert not is_trusted(inner)
    trust(untrusted_project)
    assert is_trusted(inner) and is_trusted(untrusted_project)
    assert not is_trusted(untrusted_project.parent)
    assert not is_trusted(str(untrusted_project) + "-sibling")
    assert oct(trust_file().stat().st_mode & 0o777) == "0o600"
    trust_file().write_text("not json")
    assert not is_trusted(untrusted_project)  # an unreadable file trusts nothing


# -- the catalog in LoadSkill's description ----------------------------------------------


def test_load_skill_lists_the_available_skills_and_follows_changes(
        janito: Any, project: Path, user_skills: Path) -> None:
    write_skill(project / ".janito/skills", "pdf-forms",
                description="Fill PDF forms. Use when a PDF form is mentioned.")
    write_skill(user_skills, "release", description="Cut a release of the package.")
    registry = janito.load("skills", privileges="r")
    schema = registry.schema("LoadSkill")
    assert schema.description.startswith("Load a skill by name")
    assert "- pdf-forms: Fill PDF forms.\n- release: Cut a release of the package." in \
        schema.description
    assert schema.parameters["properties"]["name"]["enum"] == ["pdf-forms", "release"]
    assert schema.strict_parameters["properties"]["name"]["enum"] == ["pdf-forms", "release"]
    assert registry.schema("ReadSkillResource").parameters["properties"]["skill_name"][
        "enum"] == ["pdf-forms", "release"]
    function = registry.get_function_schema("LoadSkill")["function"]
    assert "pdf-forms" in function["description"]

    write_skill(user_skills, "triage", description="Triage bug reports.")
    refreshed = registry.schema("LoadSkill")
    assert "- triage: Triage bug reports." in refreshed.description
    assert refreshed.parameters["properties"]["name"]["enum"][-1] == "triage"
    # dispatch still checks names itself (the enum is what the model is offered)
    assert janito.call("LoadSkill", name="nope")["error_type"] == "not_found"


def test_no_skills_means_no_enum(janito: Any, project: Path) -> None:
    registry = janito.load("skills", privileges="r")
    schema = registry.schema("LoadSkill")
    assert "No skills are available here now." in schema.description
    assert "enum" not in schema.parameters["properties"]["name"]


def test_the_list_is_bounded(janito: Any, project: Path) -> None:
    for n in range(105):
        write_skill(project / ".janito/skills", f"skill-{n:03}",
                    description="A long description. " * 30)
    schema = janito.load("skills", privileges="r").schema("LoadSkill")
    lines = [line for line in schema.description.splitlines() if line.startswith("- ")]
    assert len(lines) == 101 and lines[-1] == "- ... and 5 more (ListSkills lists them all)"
    assert lines[0] == "- skill-000: A long description."
    assert len(schema.parameters["properties"]["name"]["enum"]) == 100


# -- optional front-matter fields --------------------------------------------------------


def test_optional_fields_are_checked_with_warnings(project: Path) -> None:
    skills = project / ".janito/skills"
    write_skill(skills, "long-compat", front_matter=(
        "name: long-compat\ndescription: x.\ncompatibility: " + "y" * 501 + "\n"))
    write_skill(skills, "bad-fields", front_matter=(
        "name: bad-fields\ndescription: x.\nlicense: 3\nmetadata:\n  version: 1\n"
        "allowed-tools: {a: b}\ncompatibility: ''\n"))
    write_skill(skills, "good", front_matter=(
        "name: good\ndescription: x.\nlicense: MIT\ncompatibility: Needs git and network.\n"
        "metadata:\n  author: acme\n  version: '1.0'\nallowed-tools: Read Bash(git add:*)\n"))
    index = discover(str(project), user=False, installed=False)
    assert set(index.skills) == {"long-compat", "bad-fields", "good"}  # warnings only
    warnings = {d.skill: [] for d in index.diagnostics}
    for d in index.diagnostics:
        warnings[d.skill].append(d.message)
        assert d.level == "warning"
    assert warnings["long-compat"] == ["'compatibility' is longer than 500 characters"]
    assert sorted(warnings["bad-fields"]) == [
        "'allowed-tools' should be a space-separated string of tool names",
        "'compatibility' should be a non-empty string",
        "'license' should be a string (a license name or a file of the skill)",
        "'metadata' should map strings to strings"]
    assert "good" not in warnings
    assert index.skills["good"].allowed_tools == ["Read", "Bash(git add:*)"]


@pytest.mark.parametrize(("value", "tools"), [
    ("Read Grep Glob", ["Read", "Grep", "Glob"]),
    ("Read, Grep, Bash(git status:*)", ["Read", "Grep", "Bash(git status:*)"]),
    (["Read", "Bash(npm run test:*)", 3], ["Read", "Bash(npm run test:*)"]),
    ("", []), (None, []), (7, []),
])
def test_allowed_tools_forms(value: Any, tools: list[str]) -> None:
    assert allowed_tools(value) == tools


def test_allowed_tools_are_shown_to_the_model(janito: Any, project: Path) -> None:
    write_skill(project / ".janito/skills", "git-flow", front_matter=(
        "name: git-flow\ndescription: Branch and merge.\nallowed-tools: Bash(git:*) Read\n"))
    janito.load("skills", privileges="r")
    loaded = janito.call("LoadSkill", name="git-flow")
    assert loaded["allowed_tools"] == ["Bash(git:*)", "Read"]
    assert "does not grant or pre-approve" in loaded["allowed_tools_note"]
    row = janito.call("ListSkills")["skills"][0]
    assert row["allowed_tools"] == ["Bash(git:*)", "Read"]
