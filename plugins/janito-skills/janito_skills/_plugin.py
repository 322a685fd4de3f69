"""Hooks of janito-skills (entry point ``janito.plugins``: ``skills``).

- ``janito skills [--json] [--strict] [--workspace DIR]`` lists the skills for people.

This module is imported whenever janito loads its hook plugins, so it imports nothing
heavy at module level.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from janito_core import hookimpl

if TYPE_CHECKING:
    import argparse

@hookimpl
def janito_register_commands(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "skills",
        help="list the Agent Skills available here (project, user, installed packs)",
        description=(
            "List the skills found in the project (.janito/skills, .agents/skills), the user's "
            "janito configuration folder and installed skill packs (janito.skills entry "
            "points), in that order of precedence. Unusable SKILL.md files are reported on "
            "stderr."
        ),
    )
    parser.add_argument("--json", action="store_true",
                        help="one JSON object per skill, shadowed skill and problem")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when any SKILL.md cannot be used")
    parser.add_argument("--workspace", metavar="DIR", default=None,
                        help="the project folder (default: the current directory)")
    parser.set_defaults(handler=skills_command)


def skills_command(args: argparse.Namespace) -> int:
    """``janito skills``: the table (or JSON) on stdout, problems on stderr."""
    import json
    import os
    import sys

    from ._index import discover, report_diagnostics, summary

    folder = getattr(args, "workspace", None) or os.getcwd()
    if not os.path.isdir(folder):
        print(f"error: --workspace {folder!r} is not a folder", file=sys.stderr)
        return 2
    root = os.path.realpath(folder)
    index = discover(root)
    if getattr(args, "json", False):
        print(json.dumps(index.rows(), ensure_ascii=False, indent=2))
        report_diagnostics(index)
    else:
        print(render_table(index))
        print(summary(index))
        report_diagnostics(index)
    return 1 if getattr(args, "strict", False) and index.errors() else 0


def render_table(index: Any) -> str:
    """Aligned columns NAME, SOURCE, PATH, DESCRIPTION; shadowed skills marked as such.

    On a terminal, descriptions are cut to the width of the window; piped, they are whole.
    """
    import shutil
    import sys

    from ._index import display

    root = index.workspace_root
    rows: list[tuple[str, str, str, str]] = [
        (skill.name, skill.source, display(skill.folder, root), skill.description)
        for skill in index.skills.values()
    ]
    for hidden, winner in index.shadowed:
        rows.append((hidden.name, hidden.source, display(hidden.folder, root),
                     f"(shadowed by {winner.source} {display(winner.folder, root)})"))
    if not rows:
        return "No skills found."
    header = ("NAME", "SOURCE", "PATH", "DESCRIPTION")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(3)]
    try:
        terminal = sys.stdout.isatty()
    except (AttributeError, ValueError):
        terminal = False
    room = max(20, shutil.get_terminal_size().columns - sum(widths) - 6) if terminal else 0
    lines = []
    for row in [header, *rows]:
        description = row[3] if not room or len(row[3]) <= room else row[3][: room - 1] + "…"
        cells = [row[i].ljust(widths[i]) for i in range(3)]
        lines.append(f"{cells[0]}  {cells[1]}  {cells[2]}  {description}".rstrip())
    return "\n".join(lines)
