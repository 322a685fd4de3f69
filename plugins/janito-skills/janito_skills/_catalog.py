"""What a model sees of the skills before its first call: the list in LoadSkill's description.

Clients of the Agent Skills format put each skill's name and description where the model
reads them at the start (the format's "catalog"). Here that place is LoadSkill's
description, with its ``name`` parameter (and ReadSkillResource's ``skill_name``) limited
to the names available, so a model neither needs a ListSkills call first nor invents a
name. The registry asks for the schema each time it hands it out (``refine_schema``), so a
skill added, removed or trusted shows in the next listing of the tools.
"""

from __future__ import annotations

from typing import Any

#: Skills listed in the description at most (each takes one line; the rest are named by
#: ListSkills).
MAX_LISTED = 100
#: Characters of a description shown in the list (the first sentence, or this many).
MAX_LINE = 200


def one_line(description: str) -> str:
    """The first sentence of ``description``, at most :data:`MAX_LINE` characters."""
    text = " ".join(description.split())
    end = text.find(". ")
    if 0 < end < MAX_LINE:
        return text[:end + 1]
    return text if len(text) <= MAX_LINE else text[:MAX_LINE - 1].rstrip() + "…"


def refine(schema: Any, registry: Any, parameter: str, listing: bool) -> Any:
    """``schema`` with ``parameter`` limited to the skills available in ``registry``'s
    workspace and, with ``listing``, those skills named in the description."""
    from ._index import discover

    index = discover(registry.workspace)
    names = list(index.skills)[:MAX_LISTED]
    description = schema.description
    if listing:
        if names:
            lines = [f"- {name}: {one_line(index.skills[name].description)}" for name in names]
            more = len(index.skills) - len(names)
            if more:
                lines.append(f"- ... and {more} more (ListSkills lists them all)")
            description += ("\n\nAvailable skills (load the one that fits the task before "
                            "starting it, then follow its instructions):\n" + "\n".join(lines))
        else:
            description += "\n\nNo skills are available here now."
        if index.untrusted:
            description += (f"\n({len(index.untrusted)} skills of this project are not "
                            "offered until the user trusts it with `janito skills trust`.)")
    if not names:
        return schema._replace(description=description)
    return schema._replace(
        description=description,
        parameters=_with_enum(schema.parameters, parameter, names),
        strict_parameters=None if schema.strict_parameters is None
        else _with_enum(schema.strict_parameters, parameter, names),
    )


def _with_enum(parameters: dict[str, Any], name: str, values: list[str]) -> dict[str, Any]:
    properties = dict(parameters.get("properties") or {})
    if name in properties:
        properties[name] = {**properties[name], "enum": values}
    return {**parameters, "properties": properties}
