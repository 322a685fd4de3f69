"""LoadSkill: a skill's instructions and the list of its resource files."""

from __future__ import annotations

from typing import Any

from janito_core import BaseTool, tool

from ._frontmatter import SkillFileError, read_body
from ._index import discover, display, missing_skill
from ._resources import list_resources


@tool(permissions="r")
class LoadSkill(BaseTool):
    """Load a skill by name: its Markdown instructions and the list of its resource files."""

    def run(self, name: str) -> dict[str, Any]:
        """Return the instructions of skill ``name`` (the body of its SKILL.md).

        Args:
            name: The skill's name, as ListSkills shows it.
        """
        from janito_core.dispatch import failure
        from janito_core.reporter import report_info

        root = self.workspace.root
        index = discover(root)
        skill = index.get(name)
        if skill is None:
            return missing_skill(index, name)
        try:
            instructions, truncated = read_body(skill.skill_file)
        except SkillFileError as exc:
            return failure(
                f"Skill {name!r} cannot be loaded: {display(skill.skill_file, root)}: {exc}.",
                "invalid_skill", name=name, path=display(skill.skill_file, root),
            )
        resources, more = list_resources(skill.folder)
        report_info(f"Loaded skill {name!r} ({skill.source}) from {display(skill.folder, root)}"
                    f" with {len(resources)} resource file{'' if len(resources) == 1 else 's'}")
        result: dict[str, Any] = {
            "success": True,
            "name": skill.name,
            "description": skill.description,
            "source": skill.source,
            "origin": skill.origin,
            "path": display(skill.folder, root),
            "instructions": instructions,
            "instructions_truncated": truncated,
            "resources": resources,
            "resources_truncated": more,
            "front_matter": skill.front_matter,
        }
        if resources:
            result["hint"] = (
                "Read a resource with ReadSkillResource(skill_name, resource_path), "
                "resource_path being one of 'resources'."
            )
        return result


def main(argv: list[str] | None = None) -> int:
    """Run LoadSkill from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(LoadSkill, argv)


if __name__ == "__main__":
    main()
