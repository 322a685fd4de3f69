"""ListSkills: the skills available here, where each comes from, and which are shadowed."""

from __future__ import annotations

from typing import Any

from janito_core import BaseTool, tool

from ._index import PRECEDENCE, discover


@tool(permissions="r")
class ListSkills(BaseTool):
    """List the available skills (name, description, source, path); load one with LoadSkill.

    Skills come from the project (.janito/skills, .agents/skills, .claude/skills, once the
    user trusts it), the user (janito's configuration folder, ~/.agents/skills,
    ~/.claude/skills) and installed skill packs, in that order of precedence: a skill whose
    name is taken by an earlier source is reported under ``shadowed``. SKILL.md files that
    cannot be used are reported under ``diagnostics``.
    """

    def run(self) -> dict[str, Any]:
        """List every skill by reading only the front matter of each SKILL.md."""
        root = self.workspace.root
        index = discover(root, report=True)
        skills = [skill.as_row(root) for skill in index.skills.values()]
        shadowed = [
            {
                "name": hidden.name,
                "source": hidden.source,
                "path": hidden.as_row(root)["path"],
                "shadowed_by": {"source": winner.source, "path": winner.as_row(root)["path"]},
            }
            for hidden, winner in index.shadowed
        ]
        result: dict[str, Any] = {
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
