"""LoadSkill: a skill's instructions and the list of its resource files."""

from __future__ import annotations

from typing import Any, Literal

from janito_core import BaseTool, Failure, WorkspaceError, tool

from ._frontmatter import SkillFileError, open_skill_file, read_body
from ._index import NotRequired, Source, TypedDict, discover, display, missing_skill
from ._resources import list_resources


class LoadedSkill(TypedDict):
    """What LoadSkill answers: the skill, its instructions and its resource files.

    Attributes:
        name: The skill's name.
        description: What the skill is for and when to use it.
        source: Where it comes from.
        origin: The folder or skill pack it was found in.
        path: The skill's folder.
        instructions: The body of its SKILL.md (Markdown), to follow.
        instructions_truncated: Whether the instructions were cut at their size limit.
        resources: Its other files, relative to its folder, for ReadSkillResource.
        resources_truncated: Whether more files exist than were listed.
        front_matter: Its SKILL.md front matter as written (YAML as JSON).
        allowed_tools: The tools the skill says it expects to use.
        allowed_tools_note: What allowed_tools means (nothing is granted).
        hint: How to read a resource.
    """

    success: Literal[True]
    name: str
    description: str
    source: Source
    origin: str
    path: str
    instructions: str
    instructions_truncated: bool
    resources: list[str]
    resources_truncated: bool
    front_matter: dict[str, Any]
    allowed_tools: NotRequired[list[str]]
    allowed_tools_note: NotRequired[str]
    hint: NotRequired[str]


@tool(permissions="r")
class LoadSkill(BaseTool):
    """Load a skill by name: its Markdown instructions and the list of its resource files."""

    @classmethod
    def refine_schema(cls, schema: Any, registry: Any) -> Any:
        """The skills available in the registry's workspace, listed in the description."""
        from ._catalog import refine

        return refine(schema, registry, "name", listing=True)

    def run(self, name: str) -> LoadedSkill | Failure:
        """Return the instructions of skill ``name`` (the body of its SKILL.md).

        Args:
            name: The skill's name, as ListSkills shows it.
        """
        from janito_core.dispatch import failure
        from janito_core.reporter import report_info

        root = self.workspace.root
        index = discover(self.workspace)
        skill = index.get(name)
        if skill is None:
            return missing_skill(index, name)
        shown = display(skill.skill_file, root)
        try:
            folder = skill.open_folder()
        except (OSError, WorkspaceError) as exc:
            reason = exc.reason if isinstance(exc, WorkspaceError) else exc.strerror or exc
            return failure(f"Skill {name!r} cannot be loaded: its folder cannot be opened "
                           f"({reason}).", "invalid_skill", name=name, path=shown)
        with folder:
            try:
                instructions, truncated = read_body(open_skill_file(folder))
            except SkillFileError as exc:
                return failure(f"Skill {name!r} cannot be loaded: {shown}: {exc}.",
                               "invalid_skill", name=name, path=shown)
            resources, more = list_resources(folder)
        report_info(f"Loaded skill {name!r} ({skill.source}) from {display(skill.folder, root)}"
                    f" with {len(resources)} resource file{'' if len(resources) == 1 else 's'}")
        result: LoadedSkill = {
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
        if skill.allowed_tools:
            result["allowed_tools"] = list(skill.allowed_tools)
            result["allowed_tools_note"] = (
                "The skill names the tools it expects to use (its allowed-tools); janito does "
                "not grant or pre-approve them: each call still needs the user's privileges.")
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
