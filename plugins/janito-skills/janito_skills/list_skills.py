"""ListSkills: the skills available here, where each comes from, and which are shadowed."""

from __future__ import annotations

from typing import Literal

from janito_core import BaseTool, Failure, tool

from ._index import PRECEDENCE, DiagnosticRow, NotRequired, SkillRow, Source, TypedDict, discover


class Place(TypedDict):
    """Where a skill was found.

    Attributes:
        source: Where it comes from.
        path: Its folder.
    """

    source: Source
    path: str


class ShadowedSkill(TypedDict):
    """A skill hidden by an earlier skill of the same name.

    Attributes:
        name: The name both declare.
        source: Where the hidden one comes from.
        path: The hidden one's folder.
        shadowed_by: The skill LoadSkill loads under that name.
    """

    name: str
    source: Source
    path: str
    shadowed_by: Place


class SkillListing(TypedDict):
    """What ListSkills answers.

    Attributes:
        count: The skills offered.
        skills: The skills offered, in order of precedence.
        shadowed: Skills hidden by an earlier skill of the same name.
        diagnostics: SKILL.md files and sources that cannot be used as they are.
        precedence: Which source wins a name.
        untrusted: Skills of this project held back until the user trusts it.
        note: Why some skills are not offered.
    """

    success: Literal[True]
    count: int
    skills: list[SkillRow]
    shadowed: list[ShadowedSkill]
    diagnostics: list[DiagnosticRow]
    precedence: str
    untrusted: NotRequired[int]
    note: NotRequired[str]


@tool(permissions="r")
class ListSkills(BaseTool):
    """List the available skills (name, description, source, path); load one with LoadSkill.

    Skills come from the project (.janito/skills, .agents/skills, .claude/skills, once the
    user trusts it), the user (janito's configuration folder, ~/.agents/skills,
    ~/.claude/skills) and installed skill packs, in that order of precedence: a skill whose
    name is taken by an earlier source is reported under ``shadowed``. SKILL.md files that
    cannot be used are reported under ``diagnostics``.
    """

    def run(self) -> SkillListing | Failure:
        """List every skill by reading only the front matter of each SKILL.md."""
        root = self.workspace.root
        index = discover(root, report=True)
        skills = [skill.as_row(root) for skill in index.skills.values()]
        shadowed: list[ShadowedSkill] = [
            {
                "name": hidden.name,
                "source": hidden.source,
                "path": hidden.as_row(root)["path"],
                "shadowed_by": {"source": winner.source, "path": winner.as_row(root)["path"]},
            }
            for hidden, winner in index.shadowed
        ]
        result: SkillListing = {
            "success": True,
            "count": len(skills),
            "skills": skills,
            "shadowed": shadowed,
            "diagnostics": [d.as_dict(root) for d in index.diagnostics],
            "precedence": PRECEDENCE,
        }
        if index.untrusted:
            result["untrusted"] = len(index.untrusted)
            result["note"] = (
                f"{len(index.untrusted)} skill{'s' if len(index.untrusted) != 1 else ''} of "
                "this project are not offered: a project's skills are offered once the user "
                "trusts its folder (janito skills trust).")
        return result


def main(argv: list[str] | None = None) -> int:
    """Run ListSkills from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(ListSkills, argv)


if __name__ == "__main__":
    main()
