"""janito-skills: the "skills" toolset of janito (loaded on demand).

A skill is a folder holding a ``SKILL.md`` (YAML front matter with ``name`` and
``description``, then Markdown instructions) and any resource files beside it. Skills
come from the project, the user's configuration folder and installed skill packs
(distributions advertising a ``janito.skills`` entry point); see ``_index`` for the
precedence rule.
"""

from __future__ import annotations

__version__ = "0.1.0"
