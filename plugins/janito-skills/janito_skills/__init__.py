"""janito-skills: the "skills" toolset of janito (loaded on demand).

A skill is a folder holding a ``SKILL.md`` (YAML front matter with ``name`` and
``description``, then Markdown instructions) and any resource files beside it. Skills
come from the project, the user's configuration folder and installed skill packs
(distributions advertising a ``janito.skills`` entry point); see ``_index`` for the
precedence rule.
"""

from __future__ import annotations

from typing import Any

from janito_core import hookimpl

__version__ = "0.1.0"


@hookimpl
def janito_toolset_loaded(registry: Any, toolset: str, tools: list[str]) -> None:
    """Report what the skills toolset offers when it loads.

    Defined in the toolset's own package, so it is registered only when "skills" loads
    and costs nothing to a janito that does not load it.
    """
    if toolset != "skills" or not tools:
        return
    from ._index import discover

    discover(registry.workspace, report=True)
