"""Helpers for the janito-skills tests: real skill folders and a report collector."""

from __future__ import annotations

from pathlib import Path

from janito_core import Registry, hookimpl
from janito_core.reporter import ReportEvent


def write_skill(
    parent: Path,
    folder: str,
    name: str | None = None,
    description: str = "Does things. Use when things need doing.",
    body: str = "# Instructions\n\nDo the thing.\n",
    files: dict[str, str | bytes] | None = None,
    front_matter: str | None = None,
) -> Path:
    """Write ``parent/folder/SKILL.md`` (and resource files); return the skill folder."""
    skill = parent / folder
    skill.mkdir(parents=True, exist_ok=True)
    if front_matter is None:
        front_matter = f"name: {name or folder}\ndescription: {description}\n"
    (skill / "SKILL.md").write_text(f"---\n{front_matter}---\n{body}", encoding="utf-8")
    for relative, content in (files or {}).items():
        target = skill / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    return skill


def write_raw(parent: Path, folder: str, content: bytes | str) -> Path:
    """A skill folder whose SKILL.md holds exactly ``content``; returns the SKILL.md path."""
    skill = parent / folder
    skill.mkdir(parents=True, exist_ok=True)
    path = skill / "SKILL.md"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


class Reports:
    """A ``janito_report`` plugin that keeps every event."""

    def __init__(self) -> None:
        self.events: list[ReportEvent] = []

    @hookimpl
    def janito_report(self, event: ReportEvent) -> None:
        self.events.append(event)

    def texts(self, kind: str | None = None) -> list[str]:
        return [e.message for e in self.events if kind is None or e.kind == kind]

    def attach(self, registry: Registry) -> Reports:
        assert registry.plugins.register(self, "test.reports", None) is None
        return self
