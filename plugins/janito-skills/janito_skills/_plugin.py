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
            "List the skills found in the project (.janito/skills, .agents/skills, "
            ".claude/skills), the user's (janito's configuration folder, ~/.agents/skills, "
            "~/.claude/skills) and installed skill packs (janito.skills entry points), in "
            "that order of precedence. A project's skills are offered to a model only once "
            "its folder is trusted (janito skills trust). Unusable SKILL.md files are "
            "reported on stderr."
        ),
    )
    parser.add_argument("--json", action="store_true",
                        help="one JSON object per skill, shadowed skill and problem")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when any SKILL.md cannot be used")
    parser.add_argument("--workspace", metavar="DIR", default=None,
                        help="the project folder (default: the current directory)")
    parser.set_defaults(handler=skills_command)
    actions = parser.add_subparsers(dest="skills_action", metavar="{trust,untrust}")
    for action, text in (
            ("trust", "offer the skills of a project folder (and the folders below it) to "
                      "models; run it once per cloned repository whose skills you have read"),
            ("untrust", "stop offering the skills of a project folder")):
        sub = actions.add_parser(action, help=text, description=text[0].upper() + text[1:] + ".")
        sub.add_argument("folder", nargs="?", default=None,
                         help="the project folder (default: --workspace, else the current "
                              "directory)")
        sub.set_defaults(handler=trust_command)


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
        table = render_table(index)
        if table:
            print(table)
            print(summary(index))
        else:  # said once: the summary is the whole answer
            text = summary(index)
            print(text[0].upper() + text[1:] + ".")
        report_diagnostics(index)
    return 1 if getattr(args, "strict", False) and index.errors() else 0


def trust_command(args: argparse.Namespace) -> int:
    """``janito skills trust|untrust [FOLDER]``."""
    import os
    import sys

    from ._trust import trust, trust_file, untrust

    folder = getattr(args, "folder", None) or getattr(args, "workspace", None) or os.getcwd()
    if not os.path.isdir(folder):
        print(f"error: {folder!r} is not a folder", file=sys.stderr)
        return 2
    real = os.path.realpath(folder)
    try:
        if args.skills_action == "trust":
            changed = trust(real)
            print(f"Trusted {real}: its skills are offered" if changed
                  else f"{real} was already trusted")
        else:
            changed = untrust(real)
            print(f"No longer trusted: {real}" if changed
                  else f"{real} was not trusted (a folder above it may be)")
    except OSError as exc:
        print(f"error: cannot write {trust_file()}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    return 0


def render_table(index: Any) -> str:
    """Aligned columns NAME, SOURCE, PATH, DESCRIPTION; shadowed skills marked as such
    ("" when there is nothing to show).

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
    for waiting in index.untrusted:
        rows.append((waiting.name, "project", display(waiting.folder, root),
                     "(not offered until this project is trusted: janito skills trust)"))
    if not rows:
        return ""
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
